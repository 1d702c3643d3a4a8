"""The integrator explorer of §1.8, §3.4 and Chapter 5: method, step and horizon in; energy and motion out.

One set of precomputed runs feeds all three layers of the explorer: the static matplotlib
figure (:func:`integrator_figure`), the kernel-free plotly player with one frame per (method,
step) pair (:func:`integrator_player`), and the live ipywidgets version
(:func:`integrator_widget`), which also simulates step sizes off the grid. The runs are those of
Part 1's maximal-coordinate integrators (:func:`integrator_runs`), or those of a reduced model
with RK45, linearly implicit Euler and the implicit schemes BDF1, SDIRK2 and BDF2
(:func:`reduced_integrator_runs`), for which every layer adds the Newton iterations per step,
or those of a floating tree with the variational integrators VI2, VI4, VI6 next to BDF1, BDF2,
SDIRK2 and RK45 at the same step (:func:`variational_integrator_runs`), for which the motion
panel becomes the change of the tree's linear and angular momentum. Every layer can show the
runs up to a shorter horizon than they were computed for (a fixed-step run cut at a horizon is
the run to that horizon).

Taught in book/01_maximal/08_integration.
"""

from dataclasses import dataclass, field

import numpy as np

from .._validate import as_count
from ..maximal.simulate import METHODS, simulate, simulate_rk45
from .scene import MAX_POINTS

__all__ = ["METHOD_LABELS", "STEP_SIZES", "REDUCED_METHOD_LABELS", "REDUCED_STEP_SIZES",
           "VARIATIONAL_METHOD_LABELS", "VARIATIONAL_STEP_SIZES", "IntegratorRuns", "integrator_runs",
           "reduced_integrator_runs", "variational_integrator_runs", "chain_integrator_runs",
           "momentum_change", "integrator_figure", "integrator_player", "integrator_widget"]

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

#: How Chapter 5 names the methods it compares; its RK45 takes steps of at most ``h`` (default
#: tolerances), so that every method works at the same step.
VARIATIONAL_METHOD_LABELS = {
    "vi2": "VI2 (variational, trapezoidal, Newton)",
    "vi4": "VI4 (variational, Lobatto s = 2, Newton)",
    "vi6": "VI6 (variational, Lobatto s = 3, Newton)",
    "bdf1": "BDF1 (Newton)",
    "bdf2": "BDF2 (Newton)",
    "sdirk2": "SDIRK2 (Newton)",
    "rk45": "RK45 (steps of at most h)",
}

#: The step sizes (s) of the variational grid.
VARIATIONAL_STEP_SIZES = (0.04, 0.02)


@dataclass
class IntegratorRuns:
    """Fixed-step runs ``runs[(method, h)]`` and an RK45 ``reference``.

    ``E0``, ``phi0`` are the initial state: body poses and twists for Part 1's ``system``, or
    ``q0``, ``qdot0`` of a reduced model, whose runs ``simulator(method, h)`` makes. With
    ``momentum`` the explorer shows the change of the world-frame momentum of the model (a
    tree with a free root) instead of a height.
    """

    system: object
    E0: np.ndarray
    phi0: np.ndarray
    t_end: float
    reference: object
    runs: dict = field(default_factory=dict)
    labels: dict = field(default_factory=lambda: dict(METHOD_LABELS))
    simulator: object = None
    steps: tuple = None
    momentum: bool = False

    @property
    def reduced(self):
        """Whether the runs are of a reduced model (with Newton iterations to show)."""
        return self.simulator is not None and not self.chain

    @property
    def chain(self):
        """Whether the runs are of a particle chain (runs with their own ``height``)."""
        return hasattr(self.reference, "height")

    def get(self, method, h):
        """The run of ``method`` at step ``h``, simulated (and kept) if it is not on the grid yet."""
        key = (method, float(h))
        if key not in self.runs:
            if method not in self.labels:
                raise ValueError(f"argument 'method' must be one of {tuple(self.labels)}, got {method!r}")
            if self.simulator is not None:
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
    return _model_runs(model, q0, qdot0, t_end, methods, steps, samples, REDUCED_METHOD_LABELS)


def variational_integrator_runs(model, q0, qdot0, t_end, *, methods=tuple(VARIATIONAL_METHOD_LABELS),
                                steps=VARIATIONAL_STEP_SIZES, samples=501):
    """Chapter 5's runs: the variational integrators and the writeup's at equal steps, with momentum.

    As :func:`reduced_integrator_runs`, with the methods of :data:`VARIATIONAL_METHOD_LABELS`:
    ``"vi2"``, ``"vi4"``, ``"vi6"`` (:mod:`redmax_edu.variational`), BDF1, BDF2, SDIRK2, and RK45
    with steps of at most ``h`` at its default tolerances. ``model`` must be a tree whose single
    root has a 6-coordinate joint (:func:`redmax_edu.variational.momentum_map`): every layer
    shows the change of its world-frame linear and angular momentum.

    Parameters
    ----------
    model : Model
    q0, qdot0 : array_like, shape (nq,)
    t_end : float
        Seconds; every step must divide it into whole steps.
    methods : sequence of str
    steps : sequence of float
    samples : int
        Times at which the reference (RK45 at rtol 1e-10) is stored.

    Returns
    -------
    IntegratorRuns

    Examples
    --------
    >>> from redmax_edu.scenes import floating_chain
    >>> runs = variational_integrator_runs(floating_chain(2), np.zeros(7), np.r_[0, 0, 0, 1.0, 0, 0, 0.5],
    ...                                    0.1, methods=("vi2",), steps=(0.05,), samples=3)
    >>> runs.momentum, runs.get("vi2", 0.05).variational.iterations.shape
    (True, (2,))

    Taught in book/05_variational/03_explorer.
    """
    return _model_runs(model, q0, qdot0, t_end, methods, steps, samples, VARIATIONAL_METHOD_LABELS,
                       momentum=True)


def _model_runs(model, q0, qdot0, t_end, methods, steps, samples, labels, momentum=False):
    """The runs of a reduced model (RK45 capped at ``h`` when ``momentum``, Chapter 5's comparison)."""
    from ..integrators import simulate as simulate_reduced

    _check_grid(t_end, steps)
    reference = simulate_reduced(model, q0, qdot0, (0.0, t_end), rtol=1e-10, atol=1e-10,
                                 sample_dt=t_end / (samples - 1))

    def simulator(method, h):
        capped = dict(max_step=h) if momentum and method == "rk45" else {}
        return simulate_reduced(model, q0, qdot0, (0.0, t_end), method, h=h, **capped)

    out = IntegratorRuns(model, np.asarray(q0, float), np.asarray(qdot0, float), float(t_end), reference,
                         labels=dict(labels), simulator=simulator, momentum=momentum)
    if momentum:
        momentum_change(out, reference)          # a clear error now if the model has no free root
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

    Taught in book/appendix/engineer_integrators.
    """
    from ..particles import METHOD_LABELS as CHAIN_LABELS
    from ..particles import simulate_chain

    _check_grid(t_end, steps)
    h_ref = min(steps) / 8 if reference_step is None else float(reference_step)

    def run(method, h):
        return simulate_chain(chain, x0, v0, h, int(round(t_end / h)), method, stop_on_divergence=True)

    out = IntegratorRuns(chain, np.asarray(x0, float), np.asarray(v0, float), float(t_end),
                         run("trapezoidal", h_ref), labels=dict(CHAIN_LABELS), simulator=run,
                         steps=tuple(float(h) for h in steps))
    for method in CHAIN_LABELS:
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
    """Times, energy change (J) and centre height (m) of body 0 (Part 1), of the last body
    (a reduced model) or of a particle chain's centre of mass, every ``stride``-th sample."""
    if hasattr(run, "height"):
        return run.t[::stride], (run.energy - reference.energy[0])[::stride], run.height[::stride]
    if hasattr(run, "energy"):
        return (run.t[::stride], (run.energy - reference.energy[0])[::stride], run.E[::stride, 0, 2, 3])
    energy = run.T + run.V - reference.T[0] - reference.V[0]
    return run.t[::stride], energy[::stride], run.E_wi[::stride, -1, 2, 3]


def momentum_change(runs, run, stride=1):
    """The change of a run's world-frame momentum, for the runs of :func:`variational_integrator_runs`.

    Parameters
    ----------
    runs : IntegratorRuns
        With ``momentum`` (a model whose single root has a 6-coordinate joint).
    run : Trajectory
        One of its runs (or its reference).
    stride : int
        Every ``stride``-th sample.

    Returns
    -------
    angular, linear : ndarray, shape (samples,)
        Norms of the change of the angular momentum about the world origin (N m s) and of the
        linear momentum (N s) since the reference's first sample.

    Taught in book/05_variational/03_explorer.
    """
    from ..variational import discrete_momentum, momentum_map

    def world(q, qdot):
        return momentum_map(runs.system, q, discrete_momentum(runs.system, q, qdot))

    start = world(runs.reference.q[0], runs.reference.qdot[0])
    samples = zip(run.q[::stride], run.qdot[::stride], strict=True)
    change = np.array([world(q, qdot) for q, qdot in samples]) - start
    return np.linalg.norm(change[:, :3], axis=1), np.linalg.norm(change[:, 3:], axis=1)


def _newton(run):
    """End times of the steps and Newton iterations per step, or None for a method without Newton."""
    solver = getattr(run, "implicit", None) or getattr(run, "variational", None)
    if solver is None:
        return None
    return run.h * np.arange(1, len(solver.iterations) + 1) + run.t[0], solver.iterations


def _height_label(runs):
    if runs.momentum:
        return "momentum change"
    if runs.chain:
        return "height of the centre of mass (m)"
    return "last body's height (m)" if runs.reduced else "height of the centre (m)"


def _reference_label(runs):
    return "reference (trapezoidal, small step)" if runs.chain else "RK45 reference"


def _upto(horizon, t, *series):
    """The samples of ``t`` (and of every series) up to ``horizon`` seconds (all if None)."""
    keep = slice(None) if horizon is None else t <= horizon + 1e-9
    return (t[keep], *(x[keep] for x in series))


#: Momentum changes below this are drawn at it on the log axes (N m s, N s).
MOMENTUM_FLOOR = 1e-16


def integrator_figure(runs, settings, *, height=4.4, horizon=None):
    """Static layer: one column per ``(method, h)`` setting, energy change on top, height below.

    Every panel also shows the RK45 reference (grey, dashed). For a reduced model a third row
    shows the Newton iterations of every step. With ``runs.momentum`` the second row shows the
    change of the world-frame angular and linear momentum instead (log axis). ``horizon``
    (s) shows the runs up to that time only. Returns the matplotlib figure.
    """
    import matplotlib.pyplot as plt

    rows = 3 if runs.reduced else 2
    fig, axes = plt.subplots(rows, len(settings), figsize=(3.3 * len(settings), height * rows / 2),
                             sharex=True, squeeze=False)
    ref_t, ref_e, ref_z = _upto(horizon, *_series(runs.reference, runs.reference))
    for col, (method, h) in enumerate(settings):
        run = runs.get(method, h)
        t, e, z = _series(run, runs.reference)
        top, bottom = axes[0, col], axes[1, col]
        top.plot(ref_t, ref_e, color="0.6", linestyle="--", linewidth=1)
        top.plot(*_upto(horizon, t, e), color="C0")
        top.set_title(f"{runs.labels[method].split(' (')[0]}, h = {h:g} s", fontsize=9)
        if runs.momentum:
            t_, angular, linear = _upto(horizon, t, *momentum_change(runs, run))
            bottom.semilogy(t_, np.maximum(angular, MOMENTUM_FLOOR), color="C1", label="angular (N m s)")
            bottom.semilogy(t_, np.maximum(linear, MOMENTUM_FLOOR), color="C4", label="linear (N s)")
            bottom.set_ylim(MOMENTUM_FLOOR / 10, 1.0)
        else:
            bottom.plot(ref_t, ref_z, color="0.6", linestyle="--", linewidth=1, label=_reference_label(runs))
            bottom.plot(*_upto(horizon, t, z), color="C1", label="this method")
        if runs.reduced:
            newton = _newton(run)
            if newton is None:
                axes[2, col].text(0.5, 0.5, "no Newton solve", ha="center", va="center",
                                  transform=axes[2, col].transAxes, fontsize=9, color="0.4")
            else:
                newton = _upto(horizon, *newton)
                axes[2, col].step(*newton, where="post", color="C2")
                axes[2, col].set_ylim(0, max(5, int(newton[1].max(initial=0)) + 1))
        axes[-1, col].set_xlabel("t (s)")
    axes[0, 0].set_ylabel("energy change (J)")
    axes[1, 0].set_ylabel(_height_label(runs))
    if runs.reduced:
        axes[2, 0].set_ylabel("Newton iterations")
    axes[1, 0].legend(fontsize=8, loc="lower left" if not runs.momentum else "upper left")
    fig.tight_layout()
    return fig


def _significant(x, digits=3):
    """``x`` (positive) rounded to ``digits`` significant digits: short numbers in the page."""
    scale = 10.0 ** (np.floor(np.log10(x)) - digits + 1)
    return np.round(x / scale) * scale


def _padded(lo, hi):
    pad = 0.08 * max(hi - lo, 1e-3)
    return [float(lo - pad), float(hi + pad)]


def integrator_player(runs, *, methods=None, steps=None, points=200, height=460, horizons=None):
    """Kernel-free layer: a plotly figure with one frame per (method, h) and a slider over them.

    The first frame is ``(methods[0], steps[0])`` (default: every method simulated so far, and
    the grid :data:`STEP_SIZES`, :data:`REDUCED_STEP_SIZES` or :data:`VARIATIONAL_STEP_SIZES`).
    Each frame holds at most about ``points`` samples per curve and sets the vertical ranges to
    its own data, so every position of the slider redraws every panel; a reduced model's runs
    add a third panel, the Newton iterations per step (empty for RK45 and linearly implicit
    Euler). With ``runs.momentum``
    the second panel shows the change of the angular and linear momentum (log axis) instead of
    a height. ``horizons`` (s), if given, adds one button per horizon, below the slider, that
    shows the runs up to it (the time axes' range).
    """
    if methods is None:   # the methods simulated so far, in the order of the labels
        methods = tuple(m for m in runs.labels if any(key[0] == m for key in runs.runs))
    if steps is None:
        steps = runs.steps or (VARIATIONAL_STEP_SIZES if runs.momentum
                               else REDUCED_STEP_SIZES if runs.reduced else STEP_SIZES)
    from plotly.subplots import make_subplots

    from .interactive import plotly_objects

    go = plotly_objects()
    points = as_count(points, "points", "samples per curve", MAX_POINTS)
    keys = [(m, float(h)) for m in methods for h in steps]
    ref_t, ref_e, ref_z = _series(runs.reference, runs.reference)

    def data(key):
        run = runs.get(*key)
        stride = max(1, len(run.t) // points)
        t, e, z = _series(run, runs.reference, stride)
        energy = go.Scatter(x=np.round(t, 4), y=np.round(e, 4), mode="lines", name="energy change",
                            line=dict(color="#1f77b4"))
        if not runs.momentum:
            return [energy, go.Scatter(x=np.round(t, 4), y=np.round(z, 4), mode="lines", name="height",
                                       line=dict(color="#ff7f0e"))], e, z
        changes = momentum_change(runs, run, stride)
        angular, linear = (_significant(np.maximum(x, MOMENTUM_FLOOR)) for x in changes)
        log = [np.log10(angular), np.log10(linear)]   # the log axis' range is in decades
        return ([energy, go.Scatter(x=np.round(t, 4), y=angular, mode="lines", name="angular momentum change",
                                    line=dict(color="#ff7f0e")),
                 go.Scatter(x=np.round(t, 4), y=linear, mode="lines", name="linear momentum change",
                            line=dict(color="#9467bd"))], e, np.concatenate(log))

    def ranges(e, z):
        out = dict(yaxis=dict(range=_padded(min(e.min(), ref_e.min()), max(e.max(), ref_e.max()))))
        if runs.momentum:
            out["yaxis2"] = dict(range=[float(np.floor(z.min())) - 0.5, float(np.ceil(z.max())) + 0.5])
        else:
            out["yaxis2"] = dict(range=_padded(min(z.min(), ref_z.min()), max(z.max(), ref_z.max())))
        return out

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
    if runs.momentum:
        titles = ("energy change (J)", "momentum change (N m s, N s)", *titles[2:])
    fig = make_subplots(rows=1, cols=len(titles), subplot_titles=titles)
    # traces: 0 energy, 1 height or angular momentum, 2 energy reference, 3 height reference or
    # linear momentum, 4 Newton iterations; the frames replace 0, 1 (3) and 4
    moving = [0, 1, 3] if runs.momentum else [0, 1]
    frames = []
    for k, key in enumerate(keys):
        traces, e, z = data(key)
        if runs.reduced:
            n_trace, n_range = newton(key)
            frames.append(go.Frame(data=[*traces, n_trace], traces=[*moving, 4], name=str(k),
                                   layout={**ranges(e, z), **n_range}))
        else:
            frames.append(go.Frame(data=traces, traces=moving, name=str(k), layout=ranges(e, z)))
    first, e, z = data(keys[0])
    fig.add_trace(first[0], row=1, col=1)
    fig.add_trace(first[1], row=1, col=2)
    fig.add_trace(go.Scatter(x=np.round(ref_t[::stride], 4), y=np.round(ref_e[::stride], 4),
                             name=_reference_label(runs), **reference), row=1, col=1)
    if runs.momentum:
        fig.add_trace(first[2], row=1, col=2)
        fig.update_yaxes(type="log", row=1, col=2)
    else:
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
    menus = []
    if horizons:
        axes = [f"xaxis{'' if c == 1 else c}.range" for c in range(1, len(titles) + 1)]
        menus = [dict(type="buttons", direction="right", x=0.0, xanchor="left", y=-0.62, yanchor="top",
                      showactive=True, pad=dict(r=0, t=0),
                      buttons=[dict(method="relayout", label=f"horizon {float(hz):g} s",
                                    args=[{axis: [0.0, float(hz)] for axis in axes}]) for hz in horizons])]
    fig.update_layout(
        height=height + (90 if menus else 0), margin=dict(l=50, r=10, t=80, b=100 if menus else 10),
        **ranges(e, z), **extra,
        legend=dict(orientation="h", x=0.0, y=1.25, yanchor="bottom"), updatemenus=menus,
        sliders=[dict(active=0, steps=steps_, currentvalue=dict(prefix="method, step (s): "),
                      x=0.0, len=1.0, y=-0.12, yanchor="top", pad=dict(t=30))],
    )
    fig.update_xaxes(title_text="t (s)")
    return fig


def integrator_widget(runs, *, method="explicit", h=0.01, horizons=None, height=4.4):
    """Live layer (Jupyter, Voila): a method menu and a step slider, redrawn on every change.

    Starts at ``(method, h)``, the first panel of the page's static figure. Steps off the
    precomputed grid are simulated when chosen. ``horizons`` (s), if given, adds a horizon
    slider (starting at the longest): the runs are shown up to it. ``height`` is that of
    :func:`integrator_figure` (inches per two rows).
    """
    import ipywidgets as W
    import matplotlib.pyplot as plt

    if runs.chain:   # the grid's steps: others may not divide the span or may diverge
        choices = sorted({h_ for _, h_ in runs.runs} | {float(h)})
    elif runs.reduced:   # steps that divide the span
        choices = sorted({h_ for _, h_ in runs.runs} | {runs.t_end / k for k in (50, 200, 400)} | {float(h)})
    else:
        choices = sorted({*STEP_SIZES, 0.0025, 0.015, 0.03, float(h)})
    controls = dict(
        method=W.Dropdown(options=[(label, m) for m, label in runs.labels.items()], value=method,
                          description="method"),
        h=W.SelectionSlider(options=choices, value=float(h), description="h (s)", continuous_update=False),
    )
    if horizons:
        options = sorted(float(x) for x in horizons)
        controls["horizon"] = W.SelectionSlider(options=options, value=options[-1], description="horizon (s)",
                                                continuous_update=False)

    def show(method, h, horizon=None):
        try:
            integrator_figure(runs, [(method, h)], height=height, horizon=horizon)
        except ValueError as err:  # a diverged run: say so instead of drawing
            print(err)
            return
        plt.show()

    out = W.interactive_output(show, controls)
    return W.VBox([W.HBox(list(controls.values())), out])
