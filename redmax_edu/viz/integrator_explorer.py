"""The integrator explorer of §1.8 and §3.4: a method and a step size in, the energy and the motion out.

One set of precomputed runs feeds all three layers of the explorer: the static matplotlib
figure (:func:`integrator_figure`), the kernel-free plotly player with one frame per (method,
step) pair (:func:`integrator_player`), and the live ipywidgets version
(:func:`integrator_widget`), which also simulates step sizes off the grid. The runs are those of
Part 1's maximal-coordinate integrators (:func:`integrator_runs`), or those of a reduced model
with RK45, linearly implicit Euler and the implicit schemes BDF1, SDIRK2 and BDF2
(:func:`reduced_integrator_runs`), for which every layer adds the Newton iterations per step.

Taught in book/01_maximal/08_integration.
"""

from dataclasses import dataclass, field

import numpy as np

from .._validate import as_count
from ..maximal.simulate import METHODS, simulate, simulate_rk45
from .scene import MAX_POINTS

__all__ = ["METHOD_LABELS", "STEP_SIZES", "REDUCED_METHOD_LABELS", "REDUCED_STEP_SIZES", "IntegratorRuns",
           "integrator_runs", "reduced_integrator_runs", "integrator_figure", "integrator_player",
           "integrator_widget"]

#: How the page names each method of ``maximal.simulate`` (Part 1's linearly implicit Euler
#: linearises every force, Coriolis and gravity included).
METHOD_LABELS = {
    "explicit": "explicit Euler",
    "symplectic": "symplectic Euler",
    "implicit": "linearly implicit Euler (every force linearised)",
}

#: The step sizes (s) of the precomputed grid.
STEP_SIZES = (0.04, 0.02, 0.01, 0.005)

#: How the §3.4 page names the methods of :func:`redmax_edu.integrators.simulate` it compares.
REDUCED_METHOD_LABELS = {
    "rk45": "RK45 (adaptive, reference tolerances)",
    "euler": "linearly implicit Euler (springs and dampers)",
    "bdf1": "BDF1 (Newton)",
    "sdirk2": "SDIRK2 (Newton)",
    "bdf2": "BDF2 (Newton)",
}

#: The step sizes (s) of the reduced grid.
REDUCED_STEP_SIZES = (0.04, 0.02, 0.01)


@dataclass
class IntegratorRuns:
    """Fixed-step runs ``runs[(method, h)]`` and an RK45 ``reference``.

    ``E0``, ``phi0`` are the initial state: body poses and twists for Part 1's ``system``, or
    ``q0``, ``qdot0`` of a reduced model, whose runs ``simulator(method, h)`` makes.
    """

    system: object
    E0: np.ndarray
    phi0: np.ndarray
    t_end: float
    reference: object
    runs: dict = field(default_factory=dict)
    labels: dict = field(default_factory=lambda: dict(METHOD_LABELS))
    simulator: object = None

    @property
    def reduced(self):
        """Whether the runs are of a reduced model (with Newton iterations to show)."""
        return self.simulator is not None

    def get(self, method, h):
        """The run of ``method`` at step ``h``, simulated (and kept) if it is not on the grid yet."""
        key = (method, float(h))
        if key not in self.runs:
            if method not in self.labels:
                raise ValueError(f"argument 'method' must be one of {tuple(self.labels)}, got {method!r}")
            if self.reduced:
                self.runs[key] = self.simulator(method, float(h))
            else:
                self.runs[key] = simulate(self.system, self.E0, self.phi0, float(h),
                                          int(round(self.t_end / h)), method=method)
        return self.runs[key]


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
    _check_grid(t_end, steps)
    out = IntegratorRuns(system, np.asarray(E0, float), np.asarray(phi0, float), float(t_end),
                         simulate_rk45(system, E0, phi0, t_end, samples=samples))
    for method in methods:
        for h in steps:
            out.get(method, h)
    return out


def reduced_integrator_runs(model, q0, qdot0, t_end, *, methods=tuple(REDUCED_METHOD_LABELS),
                            steps=REDUCED_STEP_SIZES, samples=501):
    """Simulate a reduced ``model`` from ``(q0, qdot0)`` for ``t_end`` seconds with every method and step.

    The methods are those of :func:`redmax_edu.integrators.simulate` (``"rk45"`` adapts its own
    steps and samples every ``h``); the reference is RK45 at rtol 1e-10, sampled at ``samples``
    times. Returns an :class:`IntegratorRuns` whose runs are Trajectories.

    Examples
    --------
    >>> from redmax_edu.scenes import hanging_chain
    >>> runs = reduced_integrator_runs(hanging_chain(2), [0.5, 0.0], [0.0, 0.0], 0.1, methods=("bdf2",),
    ...                                steps=(0.05,), samples=3)
    >>> sorted(runs.runs), runs.get("bdf2", 0.05).implicit.iterations.shape
    ([('bdf2', 0.05)], (2,))

    Taught in book/01_maximal/08_integration (Part 1's runs).
    """
    from ..integrators import simulate as simulate_reduced

    _check_grid(t_end, steps)
    reference = simulate_reduced(model, q0, qdot0, (0.0, t_end), rtol=1e-10, atol=1e-10,
                                 sample_dt=t_end / (samples - 1))

    def simulator(method, h):
        return simulate_reduced(model, q0, qdot0, (0.0, t_end), method, h=h)

    out = IntegratorRuns(model, np.asarray(q0, float), np.asarray(qdot0, float), float(t_end), reference,
                         labels=dict(REDUCED_METHOD_LABELS),
                         simulator=simulator)
    for method in methods:
        for h in steps:
            out.get(method, h)
    return out


def _check_grid(t_end, steps):
    if not (np.isfinite(t_end) and t_end > 0):
        raise ValueError(f"argument 't_end' must be positive, got {t_end}")
    for h in steps:
        if not (h > 0 and abs(t_end / h - round(t_end / h)) < 1e-9):
            raise ValueError(f"argument 'steps': {h} does not divide t_end = {t_end} into whole steps")


def _series(run, reference, stride=1):
    """Times, energy change (J) and centre height (m) of body 0 (Part 1) or of the last body
    (a reduced model), every ``stride``-th sample."""
    if hasattr(run, "energy"):
        return (run.t[::stride], (run.energy - reference.energy[0])[::stride], run.E[::stride, 0, 2, 3])
    energy = run.T + run.V - reference.T[0] - reference.V[0]
    return run.t[::stride], energy[::stride], run.E_wi[::stride, -1, 2, 3]


def _newton(run):
    """End times of the steps and Newton iterations per step, or None for a method without Newton."""
    implicit = getattr(run, "implicit", None)
    if implicit is None:
        return None
    return run.h * np.arange(1, len(implicit.iterations) + 1) + run.t[0], implicit.iterations


def _height_label(runs):
    return "last body's height (m)" if runs.reduced else "height of the centre (m)"


def integrator_figure(runs, settings, *, height=4.4):
    """Static layer: one column per ``(method, h)`` setting, energy change on top, height below.

    Every panel also shows the RK45 reference (grey, dashed). For a reduced model a third row
    shows the Newton iterations of every step. Returns the matplotlib figure.
    """
    import matplotlib.pyplot as plt

    rows = 3 if runs.reduced else 2
    fig, axes = plt.subplots(rows, len(settings), figsize=(3.3 * len(settings), height * rows / 2),
                             sharex=True, squeeze=False)
    ref_t, ref_e, ref_z = _series(runs.reference, runs.reference)
    for col, (method, h) in enumerate(settings):
        t, e, z = _series(runs.get(method, h), runs.reference)
        top, bottom = axes[0, col], axes[1, col]
        top.plot(ref_t, ref_e, color="0.6", linestyle="--", linewidth=1)
        top.plot(t, e, color="C0")
        top.set_title(f"{runs.labels[method].split(' (')[0]}, h = {h:g} s", fontsize=9)
        bottom.plot(ref_t, ref_z, color="0.6", linestyle="--", linewidth=1, label="RK45 reference")
        bottom.plot(t, z, color="C1", label="this method")
        if runs.reduced:
            newton = _newton(runs.get(method, h))
            if newton is None:
                axes[2, col].text(0.5, 0.5, "no Newton solve", ha="center", va="center",
                                  transform=axes[2, col].transAxes, fontsize=9, color="0.4")
            else:
                axes[2, col].step(*newton, where="post", color="C2")
                axes[2, col].set_ylim(0, max(5, int(newton[1].max()) + 1))
        axes[-1, col].set_xlabel("t (s)")
    axes[0, 0].set_ylabel("energy change (J)")
    axes[1, 0].set_ylabel(_height_label(runs))
    if runs.reduced:
        axes[2, 0].set_ylabel("Newton iterations")
    axes[1, 0].legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    return fig


def _padded(lo, hi):
    pad = 0.08 * max(hi - lo, 1e-3)
    return [float(lo - pad), float(hi + pad)]


def integrator_player(runs, *, methods=None, steps=None, points=200, height=460):
    """Kernel-free layer: a plotly figure with one frame per (method, h) and a slider over them.

    The first frame is ``(methods[0], steps[0])`` (default: every method of the runs, and the
    grid :data:`STEP_SIZES` or :data:`REDUCED_STEP_SIZES`). Each frame holds at most about
    ``points`` samples per curve and sets the vertical ranges to its own data, so every position
    of the slider redraws every panel; a reduced model's runs add a third panel, the Newton
    iterations per step (empty for RK45 and linearly implicit Euler).
    """
    methods = tuple(runs.labels) if methods is None else methods
    steps = (REDUCED_STEP_SIZES if runs.reduced else STEP_SIZES) if steps is None else steps
    from plotly.subplots import make_subplots

    from .interactive import _go

    go = _go()
    points = as_count(points, "points", "samples per curve", MAX_POINTS)
    keys = [(m, float(h)) for m in methods for h in steps]
    ref_t, ref_e, ref_z = _series(runs.reference, runs.reference)

    def data(key):
        run = runs.get(*key)
        t, e, z = _series(run, runs.reference, max(1, len(run.t) // points))
        return (go.Scatter(x=np.round(t, 4), y=np.round(e, 4), mode="lines", name="energy change",
                           line=dict(color="#1f77b4")),
                go.Scatter(x=np.round(t, 4), y=np.round(z, 4), mode="lines", name="height",
                           line=dict(color="#ff7f0e")), e, z)

    def ranges(e, z):
        return dict(yaxis=dict(range=_padded(min(e.min(), ref_e.min()), max(e.max(), ref_e.max()))),
                    yaxis2=dict(range=_padded(min(z.min(), ref_z.min()), max(z.max(), ref_z.max()))))

    def newton(key):
        found = _newton(runs.get(*key))
        t, n = (np.zeros(0), np.zeros(0, int)) if found is None else found
        if len(t) > points:   # the most iterations of each run of steps, so no spike is lost
            starts = np.arange(0, len(t), -(-len(t) // points))
            t, n = t[starts], np.maximum.reduceat(n, starts)
        trace = go.Scatter(x=np.round(t, 4), y=n, mode="lines", line=dict(color="#2ca02c", shape="hv"),
                           name="Newton iterations")
        return trace, dict(yaxis3=dict(range=[0, max(5, int(n.max(initial=0)) + 1)]))

    stride = max(1, len(ref_t) // points)
    reference = dict(mode="lines", line=dict(color="gray", dash="dash", width=1))
    titles = ("energy change (J)", _height_label(runs), "Newton iterations / step")[:3 if runs.reduced else 2]
    fig = make_subplots(rows=1, cols=len(titles), subplot_titles=titles)
    frames = []
    for k, key in enumerate(keys):
        e_trace, z_trace, e, z = data(key)
        if runs.reduced:
            n_trace, n_range = newton(key)
            frames.append(go.Frame(data=[e_trace, z_trace, n_trace], traces=[0, 1, 4], name=str(k),
                                   layout={**ranges(e, z), **n_range}))
        else:
            frames.append(go.Frame(data=[e_trace, z_trace], traces=[0, 1], name=str(k), layout=ranges(e, z)))
    first_e, first_z, e, z = data(keys[0])
    fig.add_trace(first_e, row=1, col=1)
    fig.add_trace(first_z, row=1, col=2)
    fig.add_trace(go.Scatter(x=np.round(ref_t[::stride], 4), y=np.round(ref_e[::stride], 4),
                             name="RK45 reference", **reference), row=1, col=1)
    fig.add_trace(go.Scatter(x=np.round(ref_t[::stride], 4), y=np.round(ref_z[::stride], 4),
                             showlegend=False, **reference), row=1, col=2)
    extra = {}
    if runs.reduced:
        n_trace, extra = newton(keys[0])
        fig.add_trace(n_trace, row=1, col=3)
    fig.frames = frames
    steps_ = [dict(method="animate", label=f"{m}, h = {h:g}",
                   args=[[str(k)], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                        transition=dict(duration=0))])
              for k, (m, h) in enumerate(keys)]
    fig.update_layout(
        height=height, margin=dict(l=50, r=10, t=80, b=10), **ranges(e, z), **extra,
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

    if runs.reduced:   # steps that divide the span
        choices = sorted({h_ for _, h_ in runs.runs} | {runs.t_end / k for k in (50, 200, 400)} | {float(h)})
    else:
        choices = sorted({*STEP_SIZES, 0.0025, 0.015, 0.03, float(h)})
    controls = dict(
        method=W.Dropdown(options=[(label, m) for m, label in runs.labels.items()], value=method,
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
