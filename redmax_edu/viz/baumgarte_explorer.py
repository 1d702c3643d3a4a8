"""The Baumgarte explorer of §1.12: a stabilisation gain in, the drift of the joints out.

Drift is measured in two quantities with their own units (:func:`joint_drift`): the gap, in
metres, between the joint frame's origin as carried by each of the two bodies, and the tilt,
in radians, between the axes the joint should keep aligned. One set of runs
(:func:`baumgarte_runs`) feeds the static figure (:func:`baumgarte_figure`), the kernel-free
plotly player with one frame per gain (:func:`baumgarte_player`) and the live ipywidgets
version (:func:`baumgarte_widget`).

Taught in book/01_maximal/10_joints.
"""

from dataclasses import dataclass, field

import numpy as np

from ..maximal.simulate import simulate

__all__ = ["GAINS", "joint_drift", "BaumgarteRuns", "baumgarte_runs", "baumgarte_figure",
           "baumgarte_player", "baumgarte_widget", "gain_player"]

#: Baumgarte gains gamma (1/s) of the precomputed grid.
GAINS = (0.0, 1.0, 3.0, 10.0, 30.0, 100.0)


def _angle_between(u, v):
    """Angle (rad) between unit vectors, rows of ``u`` and ``v``; accurate near zero."""
    return np.arctan2(np.linalg.norm(np.cross(u, v), axis=-1), np.einsum("...i,...i->...", u, v))


def joint_drift(system, E):
    """Largest joint gap (m) and tilt (rad) over the joints of ``system``, for each pose stack.

    The gap is the distance between the joint frame's origin as carried by body ``a`` and
    as carried by body ``b`` (or the world). The tilt is the rotation the joint should not
    allow: the angle between the two copies of the joint's z axis when the joint constrains
    rotations about x and y only (revolute, cylindrical, planar), the full relative rotation
    angle when it constrains all three (fixed, prismatic), and zero when it constrains none
    (spherical).

    Parameters
    ----------
    system : System
    E : array_like, shape (n, 4, 4) or (T, n, 4, 4)

    Returns
    -------
    gap, tilt : float or ndarray, shape (T,)

    Examples
    --------
    >>> from redmax_edu.maximal.body import RigidBody
    >>> from redmax_edu.maximal.constraints import Joint
    >>> from redmax_edu.maximal.system import System
    >>> rod = RigidBody.cuboid("rod", [0.05, 0.05, 1.0], mass=1.0)
    >>> E = np.eye(4)[None]
    >>> system = System([rod], joints=[Joint.at("revolute", 0, -1, np.eye(4), E)])
    >>> moved = E.copy()
    >>> moved[0, 0, 3] = 0.002  # slide the rod 2 mm off its pivot
    >>> [round(float(v), 6) for v in joint_drift(system, moved)]
    [0.002, 0.0]
    """
    E = np.asarray(E, dtype=float)
    single = E.ndim == 3
    E = E[None] if single else E
    if E.ndim != 4 or E.shape[1:] != (system.n, 4, 4):
        raise ValueError(f"argument 'E' must have shape ({system.n}, 4, 4) or (T, {system.n}, 4, 4), "
                         f"got {E.shape}")
    gaps, tilts = [np.zeros(len(E))], [np.zeros(len(E))]
    for joint in system.joints:
        Ea = E[:, joint.a] @ joint.E_a_j
        Eb = np.broadcast_to(joint.E_b_j, Ea.shape) if joint.b < 0 else E[:, joint.b] @ joint.E_b_j
        gaps.append(np.linalg.norm(Ea[:, :3, 3] - Eb[:, :3, 3], axis=1))
        rotations = {r for r in joint.rows if r < 3}
        if rotations == {0, 1, 2}:
            Rrel = np.einsum("tji,tjk->tik", Eb[:, :3, :3], Ea[:, :3, :3])
            tilts.append(np.arccos(np.clip((np.trace(Rrel, axis1=1, axis2=2) - 1) / 2, -1, 1)))
        elif rotations:
            tilts.append(_angle_between(Ea[:, :3, 2], Eb[:, :3, 2]))
    gap, tilt = np.max(gaps, axis=0), np.max(tilts, axis=0)
    return (float(gap[0]), float(tilt[0])) if single else (gap, tilt)


@dataclass
class BaumgarteRuns:
    """Runs ``runs[gain]`` (Trajectory) of one system and their drift ``gap[gain]``, ``tilt[gain]``."""

    system: object
    E0: np.ndarray
    phi0: np.ndarray
    h: float
    steps: int
    runs: dict = field(default_factory=dict)
    gap: dict = field(default_factory=dict)
    tilt: dict = field(default_factory=dict)

    def get(self, gain):
        """The run with Baumgarte gain ``gain`` (1/s), simulated (and kept) if new."""
        gain = float(gain)
        if not (np.isfinite(gain) and gain >= 0):
            raise ValueError(f"argument 'gain' must be a non-negative number, got {gain}")
        if gain not in self.runs:
            run = simulate(self.system, self.E0, self.phi0, self.h, self.steps, baumgarte=gain)
            self.runs[gain] = run
            self.gap[gain], self.tilt[gain] = joint_drift(self.system, run.E)
        return self.runs[gain]


def baumgarte_runs(system, E0, phi0, h, steps, gains=GAINS):
    """Simulate ``system`` (symplectic Euler) once per Baumgarte gain; returns BaumgarteRuns.

    Examples
    --------
    >>> from redmax_edu.maximal.body import RigidBody
    >>> from redmax_edu.maximal.constraints import Joint
    >>> from redmax_edu.maximal.system import System
    >>> rod = RigidBody.cuboid("rod", [0.05, 0.05, 1.0], mass=1.0)
    >>> E = np.eye(4)[None]
    >>> system = System([rod], joints=[Joint.at("revolute", 0, -1, np.eye(4), E)])
    >>> runs = baumgarte_runs(system, E, np.zeros((1, 6)), 0.01, 3, gains=(0.0, 10.0))
    >>> sorted(runs.gap)
    [0.0, 10.0]
    """
    if not system.joints:
        raise ValueError("argument 'system' has no joints: there is nothing to drift")
    out = BaumgarteRuns(system, np.asarray(E0, float), np.asarray(phi0, float), float(h), int(steps))
    for gain in gains:
        out.get(gain)
    return out


def baumgarte_figure(runs, gains, *, height=4.0):
    """Static layer: one column per gain, the joint gap (m) on top and the tilt (rad) below.

    Both rows share one log scale from 1e-17 to 1, so that round-off (drawn at 1e-16 when
    exactly zero) reads as such next to a real drift.

    Returns the matplotlib figure.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(gains), figsize=(3.2 * len(gains), height), sharex=True,
                             sharey=True, squeeze=False)
    for col, gain in enumerate(gains):
        run = runs.get(gain)
        t = run.t[1:]
        top, bottom = axes[0, col], axes[1, col]
        top.semilogy(t, np.maximum(runs.gap[float(gain)][1:], 1e-16), color="C0")
        top.set_title(f"gamma = {gain:g} 1/s", fontsize=9)
        bottom.semilogy(t, np.maximum(runs.tilt[float(gain)][1:], 1e-16), color="C3")
        bottom.set_xlabel("t (s)")
    axes[0, 0].set_ylim(1e-17, 1.0)  # both rows on the same decades; exact zeros sit at 1e-16
    axes[0, 0].set_ylabel("joint gap (m)")
    axes[1, 0].set_ylabel("axis tilt (rad)")
    fig.tight_layout()
    return fig


def gain_player(curves, gains, titles, *, prefix="gain (1/s): ", floor=1e-16, height=380):
    """A plotly figure with one frame per gain and a slider over the gains: drift curves on log axes.

    The kernel-free layer of the drift explorers (this module's, and the reduced-coordinate one
    of :mod:`redmax_edu.viz.linkage`). ``curves(gain)`` returns one ``(t, y)`` pair per panel;
    the panels sit side by side under ``titles``, share one log axis over every frame (values
    below ``floor``, exact zeros included, are drawn at the floor), and frame 0 is ``gains[0]``.
    """
    from plotly.subplots import make_subplots

    from .interactive import plotly_objects

    go = plotly_objects()
    colors = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")

    def data(gain):
        return [go.Scatter(x=np.round(np.asarray(t, float), 4), y=np.float32(np.maximum(y, floor)),
                           mode="lines", name=title, line=dict(color=colors[k % len(colors)]))
                for k, ((t, y), title) in enumerate(zip(curves(gain), titles, strict=True))]

    fig = make_subplots(rows=1, cols=len(titles), subplot_titles=list(titles))
    for k, trace in enumerate(data(gains[0])):
        fig.add_trace(trace, row=1, col=k + 1)
    traces = list(range(len(titles)))
    fig.frames = [go.Frame(data=data(g), traces=traces, name=str(k)) for k, g in enumerate(gains)]
    top = max(float(np.max(y)) for g in gains for _, y in curves(g))
    yrange = [np.log10(floor), np.log10(max(top, floor)) + 0.3]
    steps = [dict(method="animate", label=f"{g:g}",
                  args=[[str(k)], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                       transition=dict(duration=0))])
             for k, g in enumerate(gains)]
    fig.update_yaxes(type="log", range=yrange, exponentformat="power", dtick=3)
    fig.update_xaxes(title_text="t (s)")
    slider = dict(active=0, steps=steps, currentvalue=dict(prefix=prefix),
                  x=0.0, len=1.0, y=-0.15, yanchor="top", pad=dict(t=30))
    fig.update_layout(height=height, margin=dict(l=50, r=10, t=40, b=10), showlegend=False,
                      sliders=[slider])
    return fig


def baumgarte_player(runs, gains=GAINS, *, points=200, height=380):
    """Kernel-free layer: a plotly figure with one frame per gain and a slider over the gains.

    Left the largest joint gap (m), right the largest axis tilt (rad), both on log axes
    shared by all frames. Frame 0 is ``gains[0]``.
    """
    def curves(gain):
        run = runs.get(gain)
        stride = max(1, len(run.t) // points)
        t = run.t[1::stride]
        return ((t, runs.gap[float(gain)][1::stride]), (t, runs.tilt[float(gain)][1::stride]))

    return gain_player(curves, gains, ("largest joint gap (m)", "largest axis tilt (rad)"),
                       prefix="Baumgarte gamma (1/s): ", height=height)


def baumgarte_widget(runs, gain=0.0):
    """Live layer (Jupyter, Voila): a gain slider, the drift figure redrawn on every change.

    Starts at ``gain``, the first panel of the page's static figure; gains off the grid are
    simulated when chosen.
    """
    import ipywidgets as W
    import matplotlib.pyplot as plt

    choices = sorted({*GAINS, 0.3, 50.0, 150.0, 200.0, float(gain)})
    slider = W.SelectionSlider(options=choices, value=float(gain), description="gamma (1/s)",
                               continuous_update=False)

    def show(gain):
        baumgarte_figure(runs, [gain])
        plt.show()

    out = W.interactive_output(show, dict(gain=slider))
    return W.VBox([slider, out])
