"""Line plots of the book: step sweeps of derivative checks, convergence and energy curves."""

import matplotlib.pyplot as plt
import numpy as np

METHOD_STYLES = {"forward": ("#1f77b4", "o"), "central": ("#ff7f0e", "s"), "complex": ("#2ca02c", "^")}


def plot_step_sweeps(sweeps, ax=None, *, title="", eps_line=True):
    """The V-shaped error curves of derivative checks on log-log axes.

    Parameters
    ----------
    sweeps : dict of str to (steps, errors)
        As returned by :func:`redmax_edu.checks.step_sweep`, keyed by method name.
    ax : matplotlib Axes, optional
    title : str
    eps_line : bool
        Draw machine epsilon as a dotted line.

    Returns
    -------
    matplotlib Axes
    """
    if ax is None:
        ax = plt.figure(figsize=(6.4, 4.0)).add_subplot()
    tiny = np.finfo(float).eps / 10  # exact zeros would vanish from a log plot
    for method, (steps, errors) in sweeps.items():
        color, marker = METHOD_STYLES.get(method, ("black", "."))
        ax.loglog(steps, np.maximum(errors, tiny), marker=marker, color=color, label=method)
    if eps_line:
        ax.axhline(np.finfo(float).eps, color="gray", linestyle=":", label="machine epsilon")
    ax.invert_xaxis()
    ax.set(xlabel="step h (decreasing to the right)", ylabel="relative error", title=title)
    ax.legend()
    return ax


def plot_force_terms(terms, axes, *, title=""):
    """Draw a force's ``f`` (bar chart) and its ``K`` and ``D`` matrices (heat maps) on three axes.

    Parameters
    ----------
    terms : ForceTerms
        From ``force.evaluate(E, phi)``.
    axes : sequence of three matplotlib Axes
    title : str
        Prefix of the axes titles.
    """
    ax_f, ax_K, ax_D = axes
    ax_f.bar(np.arange(len(terms.f)), terms.f, color="#1f77b4")
    ax_f.set(title=f"{title} f".strip(), xlabel="maximal coordinate")
    for ax, M, name in ((ax_K, terms.K, "K = df/dq"), (ax_D, terms.D, "D = df/dphi")):
        scale = max(np.abs(M).max(), 1e-300)
        ax.imshow(M, cmap="RdBu_r", vmin=-scale, vmax=scale)
        ax.set(title=f"{title} {name}".strip(), xticks=[], yticks=[])
        ax.grid(False)
    return axes
