"""The integrator explorer of §1.8: a method and a step size in, the energy and the motion out.

One set of precomputed runs (:func:`integrator_runs`) feeds all three layers of the explorer:
the static matplotlib figure (:func:`integrator_figure`), the kernel-free plotly player with
one frame per (method, step) pair (:func:`integrator_player`), and the live ipywidgets version
(:func:`integrator_widget`), which also simulates step sizes off the grid.

Taught in book/01_maximal/08_integration.
"""

from dataclasses import dataclass, field

import numpy as np

from .._validate import as_count
from ..maximal.simulate import METHODS, simulate, simulate_rk45
from .scene import MAX_POINTS

__all__ = ["METHOD_LABELS", "STEP_SIZES", "IntegratorRuns", "integrator_runs", "chain_integrator_runs",
           "integrator_figure", "integrator_player", "integrator_widget"]

#: How the page names each method of ``maximal.simulate`` (Part 1's linearly implicit Euler
#: linearises every force, Coriolis and gravity included).
METHOD_LABELS = {
    "explicit": "explicit Euler",
    "symplectic": "symplectic Euler",
    "implicit": "linearly implicit Euler (every force linearised)",
}

#: The step sizes (s) of the precomputed grid.
STEP_SIZES = (0.04, 0.02, 0.01, 0.005)


@dataclass
class IntegratorRuns:
    """Fixed-step runs ``runs[(method, h)]`` (a Trajectory) and an RK45 ``reference``.

    The defaults describe Part 1's rigid bodies. Another system plugs in through
    ``simulator(method, h)`` (returning a run with ``t``, ``energy`` and ``height``) and its own
    ``methods``, ``labels`` and ``steps`` (the appendix's particle chain does).
    """

    system: object
    E0: np.ndarray
    phi0: np.ndarray
    t_end: float
    reference: object
    runs: dict = field(default_factory=dict)
    simulator: object = None
    methods: tuple = METHODS
    labels: dict = field(default_factory=lambda: dict(METHOD_LABELS))
    steps: tuple = STEP_SIZES
    extra_steps: tuple = (0.0025, 0.015, 0.03)
    height_label: str = "height of the centre (m)"

    def get(self, method, h):
        """The run of ``method`` at step ``h``, simulated (and kept) if it is not on the grid yet."""
        key = (method, float(h))
        if key not in self.runs:
            if method not in self.methods:
                raise ValueError(f"argument 'method' must be one of {self.methods}, got {method!r}")
            if self.simulator is not None:
                self.runs[key] = self.simulator(method, float(h))
            else:
                self.runs[key] = simulate(self.system, self.E0, self.phi0, float(h),
                                          int(round(self.t_end / h)), method=method)
        return self.runs[key]

    def height(self, run):
        """The height curve of a run: body 0's centre, or the run's own ``height``."""
        return run.E[:, 0, 2, 3] if self.simulator is None else run.height


def integrator_runs(system, E0, phi0, t_end, *, methods=METHODS, steps=STEP_SIZES, samples=501):
    """Simulate ``system`` from ``(E0, phi0)`` for ``t_end`` seconds with every method and step.

    Parameters
    ----------
    system : System
        Unconstrained (the RK45 reference handles no joints or contacts).
    E0, phi0 : array_like, shapes (n, 4, 4) and (n, 6)
    t_end : float
        Seconds; every step in ``steps`` must divide it into a whole number of steps.
    methods : sequence of str
        Methods of :func:`redmax_edu.maximal.simulate.simulate`.
    steps : sequence of float
    samples : int
        Times at which the RK45 reference is stored.

    Returns
    -------
    IntegratorRuns

    Examples
    --------
    >>> from redmax_edu.maximal.body import RigidBody
    >>> from redmax_edu.maximal.system import System
    >>> system = System([RigidBody("ball", 1.0, [0.1, 0.1, 0.1])])
    >>> runs = integrator_runs(system, *system.rest_state(), 0.1, steps=(0.05,), samples=3)
    >>> sorted(runs.runs)
    [('explicit', 0.05), ('implicit', 0.05), ('symplectic', 0.05)]
    """
    if not (np.isfinite(t_end) and t_end > 0):
        raise ValueError(f"argument 't_end' must be positive, got {t_end}")
    for h in steps:
        if not (h > 0 and abs(t_end / h - round(t_end / h)) < 1e-9):
            raise ValueError(f"argument 'steps': {h} does not divide t_end = {t_end} into whole steps")
    out = IntegratorRuns(system, np.asarray(E0, float), np.asarray(phi0, float), float(t_end),
                         simulate_rk45(system, E0, phi0, t_end, samples=samples), methods=tuple(methods),
                         steps=tuple(steps))
    for method in methods:
        for h in steps:
            out.get(method, h)
    return out


def chain_integrator_runs(chain, x0, v0, t_end, steps, *, reference_step=None):
    """The explorer's runs for a particle chain and the four integrators of the ArtiSynth notes.

    Every (method, h) pair of :data:`redmax_edu.particles.METHODS` and ``steps`` is simulated
    with :func:`redmax_edu.particles.simulate_chain`; a run that diverges is kept up to the
    step before (``stop_on_divergence``), so the explorer shows its energy exploding. The
    reference is a trapezoidal run at ``reference_step`` (default: the smallest step / 8).

    Parameters
    ----------
    chain : ParticleChain
    x0, v0 : array_like, shape (k, 3)
    t_end : float
        Seconds; every step must divide it into whole steps.
    steps : sequence of float
    reference_step : float, optional

    Returns
    -------
    IntegratorRuns

    Examples
    --------
    >>> from redmax_edu.deformable import DeformableSpring
    >>> from redmax_edu.particles import ParticleChain
    >>> pair = ParticleChain(DeformableSpring([[0, 0, 1.0], [1, 0, 1.0]], stiffness=10.0, mass=2.0))
    >>> runs = chain_integrator_runs(pair, pair.spring.nodes, np.zeros((2, 3)), 0.1, (0.05,))
    >>> len(runs.runs), runs.labels["bridson_marino"]
    (4, 'Bridson-Marino')
    """
    from ..particles import METHOD_LABELS as CHAIN_LABELS
    from ..particles import METHODS as CHAIN_METHODS
    from ..particles import simulate_chain

    if not (np.isfinite(t_end) and t_end > 0):
        raise ValueError(f"argument 't_end' must be positive, got {t_end}")
    for h in steps:
        if not (h > 0 and abs(t_end / h - round(t_end / h)) < 1e-9):
            raise ValueError(f"argument 'steps': {h} does not divide t_end = {t_end} into whole steps")
    h_ref = min(steps) / 8 if reference_step is None else float(reference_step)

    def run(method, h):
        return simulate_chain(chain, x0, v0, h, int(round(t_end / h)), method, stop_on_divergence=True)

    out = IntegratorRuns(chain, np.asarray(x0, float), np.asarray(v0, float), float(t_end),
                         run("trapezoidal", h_ref), simulator=run, methods=CHAIN_METHODS,
                         labels=dict(CHAIN_LABELS), steps=tuple(float(h) for h in steps), extra_steps=(),
                         height_label="height of the centre of mass (m)")
    for method in CHAIN_METHODS:
        for h in steps:
            out.get(method, h)
    return out


def _series(runs, run, stride=1):
    """Times, energy change (J) and height (m) of a run, every ``stride``-th sample."""
    return (run.t[::stride], (run.energy - runs.reference.energy[0])[::stride], runs.height(run)[::stride])


def integrator_figure(runs, settings, *, height=4.4):
    """Static layer: one column per ``(method, h)`` setting, energy change on top, height below.

    Every panel also shows the RK45 reference (grey, dashed). Returns the matplotlib figure.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(settings), figsize=(3.3 * len(settings), height), sharex=True,
                             squeeze=False)
    ref_t, ref_e, ref_z = _series(runs, runs.reference)
    reference_label = "RK45 reference" if runs.simulator is None else "reference"
    for col, (method, h) in enumerate(settings):
        t, e, z = _series(runs, runs.get(method, h))
        top, bottom = axes[0, col], axes[1, col]
        top.plot(ref_t, ref_e, color="0.6", linestyle="--", linewidth=1)
        top.plot(t, e, color="C0")
        top.set_title(f"{runs.labels[method].split(' (')[0]}, h = {h:g} s", fontsize=9)
        bottom.plot(ref_t, ref_z, color="0.6", linestyle="--", linewidth=1, label=reference_label)
        bottom.plot(t, z, color="C1", label="this method")
        bottom.set_xlabel("t (s)")
    axes[0, 0].set_ylabel("energy change (J)")
    axes[1, 0].set_ylabel(runs.height_label)
    axes[1, 0].legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    return fig


def _padded(lo, hi):
    pad = 0.08 * max(hi - lo, 1e-3)
    return [float(lo - pad), float(hi + pad)]


def integrator_player(runs, *, methods=None, steps=None, points=200, height=460):
    """Kernel-free layer: a plotly figure with one frame per (method, h) and a slider over them.

    The first frame is ``(methods[0], steps[0])``. Each frame holds at most about ``points``
    samples per curve and sets the vertical ranges to its own data, so every position of the
    slider redraws both panels.
    """
    from plotly.subplots import make_subplots

    from .interactive import _go

    go = _go()
    points = as_count(points, "points", "samples per curve", MAX_POINTS)
    methods = runs.methods if methods is None else methods
    steps = runs.steps if steps is None else steps
    keys = [(m, float(h)) for m in methods for h in steps]
    ref_t, ref_e, ref_z = _series(runs, runs.reference)

    def data(key):
        run = runs.get(*key)
        t, e, z = _series(runs, run, max(1, len(run.t) // points))
        return (go.Scatter(x=np.round(t, 4), y=np.round(e, 4), mode="lines", name="energy change",
                           line=dict(color="#1f77b4")),
                go.Scatter(x=np.round(t, 4), y=np.round(z, 4), mode="lines", name="height",
                           line=dict(color="#ff7f0e")), e, z)

    def ranges(e, z):
        return dict(yaxis=dict(range=_padded(min(e.min(), ref_e.min()), max(e.max(), ref_e.max()))),
                    yaxis2=dict(range=_padded(min(z.min(), ref_z.min()), max(z.max(), ref_z.max()))))

    stride = max(1, len(ref_t) // points)
    reference = dict(mode="lines", line=dict(color="gray", dash="dash", width=1))
    fig = make_subplots(rows=1, cols=2, subplot_titles=("energy change (J)", runs.height_label))
    frames = []
    for k, key in enumerate(keys):
        e_trace, z_trace, e, z = data(key)
        frames.append(go.Frame(data=[e_trace, z_trace], traces=[0, 1], name=str(k), layout=ranges(e, z)))
    first_e, first_z, e, z = data(keys[0])
    fig.add_trace(first_e, row=1, col=1)
    fig.add_trace(first_z, row=1, col=2)
    fig.add_trace(go.Scatter(x=np.round(ref_t[::stride], 4), y=np.round(ref_e[::stride], 4),
                             name="RK45 reference" if runs.simulator is None else "reference", **reference),
                  row=1, col=1)
    fig.add_trace(go.Scatter(x=np.round(ref_t[::stride], 4), y=np.round(ref_z[::stride], 4),
                             showlegend=False, **reference), row=1, col=2)
    fig.frames = frames
    steps_ = [dict(method="animate", label=f"{m}, h = {h:g}",
                   args=[[str(k)], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                        transition=dict(duration=0))])
              for k, (m, h) in enumerate(keys)]
    fig.update_layout(
        height=height, margin=dict(l=50, r=10, t=80, b=10), **ranges(e, z),
        legend=dict(orientation="h", x=0.0, y=1.25, yanchor="bottom"),
        sliders=[dict(active=0, steps=steps_, currentvalue=dict(prefix="method, step (s): "),
                      x=0.0, len=1.0, y=-0.12, yanchor="top", pad=dict(t=30))],
    )
    fig.update_xaxes(title_text="t (s)")
    return fig


def integrator_widget(runs, *, method="explicit", h=0.01):
    """Live layer (Jupyter, Voila): a method menu and a step slider, redrawn on every change.

    Starts at ``(method, h)``, the first panel of the page's static figure. Steps off the
    precomputed grid are simulated when chosen.
    """
    import ipywidgets as W
    import matplotlib.pyplot as plt

    choices = sorted({*runs.steps, *runs.extra_steps, float(h)})
    controls = dict(
        method=W.Dropdown(options=[(runs.labels[m], m) for m in runs.methods], value=method,
                          description="method"),
        h=W.SelectionSlider(options=choices, value=float(h), description="h (s)", continuous_update=False),
    )

    def show(method, h):
        try:
            integrator_figure(runs, [(method, h)], height=4.4)
        except ValueError as err:  # a diverged run: say so instead of drawing
            print(err)
            return
        plt.show()

    out = W.interactive_output(show, controls)
    return W.VBox([W.HBox(list(controls.values())), out])
