"""The adjoint explorer of §3.5: a step size in; the motion, the adjoint variables and the gradient out.

One set of precomputed runs (:func:`adjoint_runs`) feeds all three layers of the explorer: the
static matplotlib figure (:func:`adjoint_figure`), the kernel-free plotly player with one frame
per step size (:func:`adjoint_player`) and the live ipywidgets version (:func:`adjoint_widget`),
which also simulates step sizes off the grid. For every step ``h`` a run holds

* the forward trajectory ``q(t)`` of an implicit scheme (:func:`redmax_edu.adjoint.simulate_run`);
* the adjoint variables ``z_i`` of every state, which the back-solve produces from the last
  state to the first (:func:`redmax_edu.adjoint.adjoint_gradient`);
* the gradient of the objective in the per-step joint torques, divided by ``h`` (the gradient
  per unit of time, which has a limit as ``h`` shrinks), and central differences of the whole
  simulation at a few steps; and the gradient in the initial positions by both.

(Not to be confused with :func:`redmax_edu.viz.widgets.adjoint_explorer`, which explores the
adjoint ``Ad(E)`` of a rigid transform, §1.5.)

Taught in book/03_differentiable/05_adjoint.
"""

from dataclasses import dataclass, field

import numpy as np

from .._validate import as_count
from .scene import MAX_POINTS

__all__ = ["ADJOINT_STEP_SIZES", "AdjointRun", "AdjointRuns", "adjoint_runs", "adjoint_figure",
           "adjoint_player", "adjoint_widget"]

#: The step sizes (s) of the precomputed grid.
ADJOINT_STEP_SIZES = (0.04, 0.02, 0.01)


@dataclass(frozen=True, eq=False)
class AdjointRun:
    """One step size's forward run, adjoint solve and finite-difference check.

    Attributes
    ----------
    h : float
        Step (s).
    t : ndarray, shape (n_states,)
        Times (s) of every state the run solved for, the SDIRK2 stage of a BDF2 start included.
    q, z : ndarray, shape (n_states, nq)
        Positions (rad or m) and adjoint variables of those states (``z[0]`` is zero: the
        initial state is given, not solved for).
    t_steps : ndarray, shape (m,)
        End times of the m steps.
    dtau : ndarray, shape (m, nq)
        ``dPsi/dtau_k / h``: the gradient in each step's joint torques per second of the step.
    fd_steps : ndarray of int, shape (k,)
        The steps at which central differences were taken.
    fd_dtau : ndarray, shape (k, nq)
        Their ``dPsi/dtau_k / h``.
    dq0, fd_dq0 : ndarray, shape (nq,)
        ``dPsi/dq^(0)`` by the adjoint and by central differences.
    value : float
        The objective.
    """

    h: float
    t: np.ndarray
    q: np.ndarray
    z: np.ndarray
    t_steps: np.ndarray
    dtau: np.ndarray
    fd_steps: np.ndarray
    fd_dtau: np.ndarray
    dq0: np.ndarray
    fd_dq0: np.ndarray
    value: float

    @property
    def gap(self):
        """The largest difference between adjoint and central differences, relative to the largest
        gradient entry compared."""
        adjoint = np.concatenate([self.dtau[self.fd_steps].ravel(), self.dq0])
        fd = np.concatenate([self.fd_dtau.ravel(), self.fd_dq0])
        return float(np.abs(adjoint - fd).max() / np.abs(adjoint).max())


@dataclass
class AdjointRuns:
    """The explorer's runs ``runs[h]`` of one model, start, span and objective."""

    model: object
    q0: np.ndarray
    qdot0: np.ndarray
    t_end: float
    objective: object
    scheme: str = "bdf2"
    fd_points: int = 4
    eps: float = 1e-6
    runs: dict = field(default_factory=dict)

    def get(self, h):
        """The run at step ``h``, simulated (and kept) if it is not on the grid yet."""
        h = float(h)
        if h not in self.runs:
            _check_grid(self.t_end, [h])
            self.runs[h] = self._run(h)
        return self.runs[h]

    def _run(self, h):
        from ..adjoint import adjoint_gradient, run_states, simulate_run

        n = int(round(self.t_end / h))
        nq = self.model.nq
        tau0 = np.zeros((n, nq))

        def simulate(q0, tau):
            return simulate_run(self.model, q0, self.qdot0, h, n, self.scheme, tau, newton_tol=1e-13)

        def psi(q0, tau):
            return self.objective(run_states(simulate(q0, tau))).value

        run = simulate(self.q0, tau0)
        g = adjoint_gradient(run, self.objective)
        e = self.eps
        fd_dq0 = np.array([(psi(self.q0 + e * d, tau0) - psi(self.q0 - e * d, tau0)) / (2 * e)
                           for d in np.eye(nq)])
        fd_steps = np.unique(np.linspace(0, n - 1, self.fd_points).round().astype(int))
        fd_dtau = np.zeros((len(fd_steps), nq))
        for row, k in enumerate(fd_steps):
            for j in range(nq):
                d = np.zeros((n, nq))
                d[k, j] = e / h                   # an impulse of e N m s, whatever the step
                fd_dtau[row, j] = (psi(self.q0, d) - psi(self.q0, -d)) / (2 * e)
        return AdjointRun(h, np.array(run.t), np.array(run.q), g.z, h * np.arange(1, n + 1), g.tau / h,
                          fd_steps, fd_dtau, g.q0, fd_dq0, float(g.value))


def _check_grid(t_end, steps):
    if not (np.isfinite(t_end) and t_end > 0):
        raise ValueError(f"argument 't_end' must be positive, got {t_end}")
    for h in steps:
        if not (h > 0 and abs(t_end / h - round(t_end / h)) < 1e-9):
            raise ValueError(f"argument 'steps': {h} does not divide t_end = {t_end} into whole steps")


def adjoint_runs(model, q0, qdot0, t_end, objective, *, steps=ADJOINT_STEP_SIZES, scheme="bdf2", fd_points=4,
                 eps=1e-6):
    """Forward runs, adjoint solves and central differences of ``objective`` at every step size.

    Parameters
    ----------
    model : Model
        Unconstrained (the adjoint refuses constraints).
    q0, qdot0 : array_like, shape (nq,)
    t_end : float
        Seconds; every step must divide it into whole steps.
    objective : Objective
        Of :mod:`redmax_edu.objectives`.
    steps : sequence of float
    scheme : {"bdf1", "sdirk2", "bdf2"}
    fd_points : int
        Steps (spread over the run) at which the torque gradient is also taken by central
        differences; each costs ``2 nq`` simulations.
    eps : float
        The central differences' step: rad for the initial positions, N m s for the torques (a
        torque of ``eps / h`` over one step, so the change in the objective does not shrink with
        ``h``).

    Returns
    -------
    AdjointRuns

    Examples
    --------
    >>> from redmax_edu.objectives import ComeToRest
    >>> from redmax_edu.scenes import hanging_chain
    >>> runs = adjoint_runs(hanging_chain(1), [0.5], [0.0], 0.1, ComeToRest(), steps=(0.05,), fd_points=2)
    >>> runs.get(0.05).z.shape, bool(runs.get(0.05).gap < 1e-6)
    ((4, 1), True)
    """
    from ..implicit import SCHEMES

    if scheme not in SCHEMES:
        raise ValueError(f"argument 'scheme' must be one of {', '.join(map(repr, SCHEMES))}, got {scheme!r}")
    fd_points = as_count(fd_points, "fd_points", "steps checked by central differences", 1000)
    _check_grid(t_end, steps)
    out = AdjointRuns(model, np.asarray(q0, float), np.asarray(qdot0, float), float(t_end), objective, scheme,
                      fd_points, float(eps))
    for h in steps:
        out.get(h)
    return out


def _labels(runs):
    return [f"q{j + 1}" for j in range(runs.model.nq)]


def adjoint_figure(runs, h, *, height=3.0):
    """Static layer: the motion, the adjoint variables backward in time and the torque gradient at step ``h``.

    Left, ``q(t)``; middle, ``h^2 z(t)`` (``z`` grows as ``1/h^2``, since ``dg/dtau = -c h^2``)
    of every solved state, with the time axis running backward (the back-solve starts at the
    last state); right, ``dPsi/dtau_k / h`` by the adjoint (lines) and by central
    differences (markers). A fourth panel shows, for every step size of the runs, the largest
    gap between the two relative to the gradient. Returns the matplotlib figure.
    """
    import matplotlib.pyplot as plt

    r = runs.get(h)
    fig, axes = plt.subplots(1, 4, figsize=(13.0, height))
    for j, name in enumerate(_labels(runs)):
        axes[0].plot(r.t, r.q[:, j], color=f"C{j}", label=name)
        axes[1].plot(r.t[1:], r.h ** 2 * r.z[1:, j], color=f"C{j}")
        axes[2].plot(r.t_steps, r.dtau[:, j], color=f"C{j}")
        axes[2].plot(r.t_steps[r.fd_steps], r.fd_dtau[:, j], "o", color=f"C{j}", markerfacecolor="none")
    axes[0].set(title=f"forward run, h = {r.h:g} s", xlabel="t (s)", ylabel="q (rad)")
    axes[0].legend(fontsize=8)
    axes[1].set(title="adjoint h^2 z, solved backward", xlabel="t (s), backward", ylabel="h^2 z")
    axes[1].invert_xaxis()
    axes[2].set(title="dPsi/dtau_k / h: adjoint (line), FD (o)", xlabel="t (s)", ylabel="per N m s")
    hs = sorted(runs.runs)
    axes[3].loglog(hs, [max(runs.runs[s].gap, 1e-16) for s in hs], "o-", color="C3")
    axes[3].axhline(1e-6, color="0.5", linestyle="--", linewidth=1)
    axes[3].set(title="adjoint vs FD, relative gap", xlabel="h (s)", ylim=(1e-14, 1e-2))
    axes[3].set_xticks(hs, [f"{s:g}" for s in hs])
    axes[3].minorticks_off()
    for ax in axes[:3]:
        ax.title.set_fontsize(9)
    axes[3].title.set_fontsize(9)
    fig.tight_layout()
    return fig


def adjoint_player(runs, *, steps=None, points=120, height=400):
    """Kernel-free layer: a plotly figure with one frame per step size and a slider over them.

    Three panels, as the first three of :func:`adjoint_figure`: the motion, the adjoint
    variables (time axis reversed) and the torque gradient with its central differences. Each
    curve keeps at most about ``points`` samples.
    """
    from plotly.subplots import make_subplots

    from .interactive import plotly_objects

    go = plotly_objects()
    points = as_count(points, "points", "samples per curve", MAX_POINTS)
    steps = sorted(runs.runs, reverse=True) if steps is None else [float(h) for h in steps]
    nq = runs.model.nq
    names = _labels(runs)
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]

    def traces(h):
        r = runs.get(h)
        s = max(1, len(r.t) // points)
        k = max(1, len(r.t_steps) // points)
        out = []
        for j in range(nq):
            c = dict(color=colors[j % len(colors)])
            out += [go.Scatter(x=np.round(r.t[::s], 4), y=np.round(r.q[::s, j], 4), mode="lines", line=c,
                               name=names[j], legendgroup=names[j]),
                    go.Scatter(x=np.round(r.t[1::s], 4), y=np.round(r.h ** 2 * r.z[1::s, j], 4), mode="lines",
                               line=c, showlegend=False, legendgroup=names[j]),
                    go.Scatter(x=np.round(r.t_steps[::k], 4), y=np.round(r.dtau[::k, j], 4), mode="lines",
                               line=c, showlegend=False, legendgroup=names[j]),
                    go.Scatter(x=np.round(r.t_steps[r.fd_steps], 4), y=np.round(r.fd_dtau[:, j], 4),
                               mode="markers", marker=dict(symbol="circle-open", size=9, **c),
                               name="central differences" if j == 0 else None, showlegend=j == 0)]
        return out

    titles = ("forward run q (rad)", "adjoint h^2 z, solved backward", "dPsi/dtau_k / h, and FD")
    fig = make_subplots(rows=1, cols=3, subplot_titles=titles)
    for n, trace in enumerate(traces(steps[0])):
        fig.add_trace(trace, row=1, col=[1, 2, 3, 3][n % 4])
    fig.frames = [go.Frame(data=traces(h), traces=list(range(4 * nq)), name=str(k))
                  for k, h in enumerate(steps)]
    sliders = [dict(method="animate", label=f"{h:g}",
                    args=[[str(k)], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                         transition=dict(duration=0))]) for k, h in enumerate(steps)]
    fig.update_layout(height=height, margin=dict(l=50, r=10, t=60, b=10),
                      legend=dict(orientation="h", x=0.0, y=1.2, yanchor="bottom"),
                      sliders=[dict(active=0, steps=sliders, currentvalue=dict(prefix="step h (s): "),
                                    x=0.0, len=1.0, y=-0.15, yanchor="top", pad=dict(t=30))])
    fig.update_xaxes(title_text="t (s)")
    fig.update_xaxes(autorange="reversed", title_text="t (s), backward", row=1, col=2)
    return fig


def adjoint_widget(runs, *, h=None):
    """Live layer (Jupyter, Voila): a step slider, the figure of :func:`adjoint_figure` redrawn on change.

    Steps off the precomputed grid (those dividing the span into 10, 20, ..., 200 steps) are
    simulated when chosen; the gap panel grows with every step visited.
    """
    import ipywidgets as W
    import matplotlib.pyplot as plt

    h = max(runs.runs) if h is None else float(h)
    choices = sorted(set(runs.runs) | {runs.t_end / k for k in (10, 25, 50, 100, 200)} | {h})
    slider = W.SelectionSlider(options=[(f"{s:g}", s) for s in choices], value=h, description="h (s)",
                               continuous_update=False)

    def show(h):
        adjoint_figure(runs, h)
        plt.show()

    out = W.interactive_output(show, dict(h=slider))
    return W.VBox([slider, out])
