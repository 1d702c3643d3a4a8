"""The explorers of §2.8: closed loops posed by their constraints, and their drift in time.

**Crank explorer** (a crank angle in; the pose, the coupler curve and the other joint angles
out). A closed loop's coordinates are not independent: once the crank angle is chosen, the
others must make the loop-closure errors ``g(q)`` vanish. :func:`close_loop` finds them by
Newton's method on the library's own constraint rows (for every position constraint
``G = dg/dq``, so a Newton step is a least-squares solve with ``G``'s free columns), and
:func:`crank_sweep` follows the linkage round a turn of the crank by continuation, each
pose starting from the last, so that it stays on one assembly branch. One sweep feeds the
static figure (:func:`crank_figure`), the kernel-free plotly player with one frame per
sampled crank angle (:func:`crank_player`) and the live ipywidgets version
(:func:`crank_widget`).

**Drift explorer** (a Baumgarte gain in; the largest constraint error over time out, under
RK45 and linearly implicit Euler). :func:`drift_runs` simulates a constrained model once per
gain with each integrator; :func:`drift_figure`, :func:`drift_player` and
:func:`drift_widget` are its three layers, as in Part 1's
:mod:`redmax_edu.viz.baumgarte_explorer`.

Taught in book/02_reduced/08_constraints.
"""

from dataclasses import dataclass, field

import numpy as np

from .._validate import as_count, as_index, as_real, as_scalar
from ..constrained import assemble_constraints, constraint_errors
from ..constraints import check_baumgarte
from ..integrators import simulate
from ..jacobian import fill_jacobian
from ..kinematics import forward_kinematics
from ..model import check_model
from .reduced import model_scene
from .scene import MAX_POINTS, Marker, Path, cube_bounds

__all__ = ["close_loop", "closure_velocity", "CrankSweep", "crank_sweep", "linkage_scene", "crank_figure",
           "crank_player", "crank_widget", "constraint_drift", "DriftRuns", "drift_runs", "drift_figure",
           "drift_player", "drift_widget", "DRIFT_GAINS"]

#: Baumgarte gains (1/s) of the drift explorer's grid: none, gentle, the reference's 5, and
#: stiffer ones. RK45 uses ``alpha = beta = gain``, linearly implicit Euler ``gamma = gain``.
DRIFT_GAINS = (0.0, 1.0, 5.0, 10.0, 30.0, 100.0)


def _coordinates(model, indices, name):
    out = []
    for k in np.atleast_1d(indices).tolist():
        k = as_index(k, name)
        if k >= model.nq:
            raise ValueError(f"argument '{name}': coordinate {k} does not exist (the model has {model.nq})")
        out.append(k)
    return sorted(set(out))


def _position_rows(model, q, t):
    """``(G, g, w)`` of the model's equality constraints that have a position error, at ``q``."""
    zero = np.zeros(model.nq)
    kin = forward_kinematics(model, q, zero)
    J = fill_jacobian(model, kin)
    rows = assemble_constraints(model, q, zero, kin, J, np.zeros_like(J), t)
    keep = np.zeros(len(rows.error), dtype=bool)
    for c, block in zip(model.constraints, rows.blocks, strict=True):
        keep[block] = c.positional and not c.inequality
    return rows.G[keep], rows.error[keep], rows.w[keep]


def close_loop(model, q, driven=(), *, t=0.0, tol=1e-12, max_iter=50):
    """Coordinates near ``q`` that satisfy the model's position constraints, ``driven`` ones held.

    Newton's method on the errors ``g(q)`` of every equality constraint with a position error
    (loop closures, couplings, prescribed joints at time ``t``): with ``G = dg/dq`` from the
    constraints' own rows, each step solves ``G_free dq_free = -g`` in the least-squares sense
    over the coordinates not in ``driven``. Joint limits and velocity-only constraints are
    left out.

    Parameters
    ----------
    model : Model
    q : array_like, shape (nq,)
        The starting guess; its ``driven`` entries are kept.
    driven : sequence of int
        Indices into ``q`` that stay fixed (the crank angle).
    t : float
        Time, for prescribed motions.
    tol : float
        Largest position error accepted (m or rad).
    max_iter : int

    Returns
    -------
    ndarray, shape (nq,)

    Raises
    ------
    ValueError
        If the errors do not fall below ``tol``: no closed pose near ``q`` has these driven
        coordinates (out of reach, or the guess is on no branch).

    Examples
    --------
    A two-link arm whose tip must touch the world point (1, 0, -1): with the shoulder at
    -90 degrees (the upper link horizontal) the elbow must bend by 90 degrees.

    >>> from redmax_edu.constraints import Loop
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -0.5                      # each link's centre, 0.5 m below its hinge
    >>> top = np.eye(4); top[2, 3] = -1.0                  # the elbow, 1 m below the shoulder
    >>> link = dict(joint=Revolute([0, 1, 0]), T_joint_body=T, mass=1.0, inertia=0.01 * np.eye(3))
    >>> arm = Model([Body("upper", -1, T_parent_joint=np.eye(4), **link),
    ...              Body("lower", 0, T_parent_joint=top, **link)],
    ...             constraints=[Loop(1, [0, 0, -0.5], -1, [1.0, 0.0, -1.0], axis=[0, 1, 0])])
    >>> q = close_loop(arm, [-np.pi / 2, 1.0], driven=[0])
    >>> np.round(np.degrees(q), 6) + 0.0
    array([-90.,  90.])
    """
    model = check_model(model)
    q = np.array(model.check_state(q), dtype=float)
    fixed = _coordinates(model, driven, "driven")
    free = [k for k in range(model.nq) if k not in fixed]
    tol = as_scalar(tol, "tol", minimum=0.0, strict=True)
    max_iter = as_count(max_iter, "max_iter", "Newton steps", 10_000)
    t = as_scalar(t, "t")
    error = 0.0
    for _ in range(max_iter + 1):
        G, g, _ = _position_rows(model, q, t)
        error = float(np.abs(g).max()) if len(g) else 0.0
        if error <= tol:
            return q
        if not free:
            break
        q[free] += np.linalg.lstsq(G[:, free], -g, rcond=None)[0]
        if not np.isfinite(q).all():
            break
    held = ", ".join(f"q[{k}] = {q[k]:.6g}" for k in fixed) or "nothing held"
    raise ValueError(f"close_loop: the position error is still {error:.1e} after {max_iter} Newton steps "
                     f"({held}); no closed pose near the guess has these driven coordinates (out of "
                     "reach?), or the guess 'q' is too far from one")


def closure_velocity(model, q, driven, rates, *, t=0.0):
    """Velocities ``qdot`` (nq,) with the ``driven`` coordinates at ``rates`` that the constraints allow.

    Solves ``G qdot = w`` over the other coordinates (least squares), with the rows of the
    position constraints as in :func:`close_loop`: the consistent initial velocity of a
    closed loop, given its crank rate.

    Examples
    --------
    >>> from redmax_edu.constraints import CoordinateCoupling
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> link = dict(joint=Revolute([0, 1, 0]), T_parent_joint=np.eye(4), T_joint_body=np.eye(4),
    ...             mass=1.0, inertia=np.eye(3))
    >>> gears = Model([Body("a", -1, **link), Body("b", -1, **link)],
    ...               constraints=[CoordinateCoupling(0, 1, ratio=-2.0)])
    >>> closure_velocity(gears, [0.0, 0.0], [0], [1.5])
    array([ 1.5, -3. ])
    """
    model = check_model(model)
    q = model.check_state(q)
    fixed = _coordinates(model, driven, "driven")
    rates = as_real(rates, (len(fixed),), "rates")
    G, _, w = _position_rows(model, q, as_scalar(t, "t"))
    qdot = np.zeros(model.nq)
    qdot[fixed] = rates
    free = [k for k in range(model.nq) if k not in fixed]
    if len(G) and free:
        qdot[free] = np.linalg.lstsq(G[:, free], w - G[:, fixed] @ rates, rcond=None)[0]
    return qdot


# --- the crank explorer --------------------------------------------------------------------------

@dataclass(frozen=True)
class CrankSweep:
    """A closed linkage posed at a sequence of crank angles (made by :func:`crank_sweep`).

    Attributes
    ----------
    model : Model
    crank : int
        The index in ``q`` of the driven coordinate.
    angles : ndarray
        The crank angles (rad), increasing: shape (m,).
    q : ndarray
        The closed pose at each angle: shape (m, nq).
    coupler : tuple or None
        ``(body, point)``: a body index and a point (3,) in its frame whose path is traced.
    curve : ndarray or None
        That point's world positions (the coupler curve): shape (m, 3).
    bounds : ndarray
        One box around every pose and the curve: shape (3, 2).
    """

    model: object
    crank: int
    angles: np.ndarray
    q: np.ndarray
    coupler: tuple | None
    curve: np.ndarray | None
    bounds: np.ndarray = field(repr=False)

    def pose(self, angle):
        """The closed pose at crank ``angle`` (rad), by Newton from the nearest sampled pose."""
        angle = as_scalar(angle, "angle")
        k = int(np.argmin(np.abs(self.angles - angle)))
        guess = self.q[k].copy()
        guess[self.crank] = angle
        return close_loop(self.model, guess, [self.crank])

    def coupler_point(self, q, with_centre=False):
        """The world position of the traced point at pose ``q``, shape (3,) (None without a coupler).

        With ``with_centre``, shape (2, 3): the centre of its body, then the point (the pin
        that carries it, as drawn).
        """
        if self.coupler is None:
            return None
        body, r = self.coupler
        E = forward_kinematics(self.model, q).E_wi[body]
        point = E[:3, :3] @ r + E[:3, 3]
        return np.array([E[:3, 3], point]) if with_centre else point

    def others(self):
        """Indices of the coordinates other than the crank, with a name for each (its body's)."""
        names = []
        for k in range(self.model.nq):
            if k == self.crank:
                continue
            body = next(i for i, s in enumerate(self.model.dofs) if s.start <= k < s.stop)
            names.append((k, self.model.names[body]))
        return names


def crank_sweep(model, q0, crank, *, angles=None, samples=73, coupler=None):
    """Pose a closed linkage at a sequence of crank angles by continuation; returns a :class:`CrankSweep`.

    Parameters
    ----------
    model : Model
        With position constraints (a loop closure) that leave one degree of freedom.
    q0 : array_like, shape (nq,)
        A closed pose, or a guess near one; it picks the assembly branch.
    crank : int
        Index in ``q`` of the driven coordinate.
    angles : array_like, shape (N,), optional
        Increasing crank angles (rad); by default a full turn from ``q0[crank]`` in
        ``samples`` steps, both ends included.
    samples : int
    coupler : tuple, optional
        ``(body, point)``: a body index and a point (3,) in its frame, the point whose path
        (the coupler curve) is traced.

    Examples
    --------
    Three 1 m links hanging from the world origin, the last one's tip pinned to the world
    point (1, 0, 0): a parallelogram (a four-bar whose ground is the world), so the middle
    link stays level while the first one turns.

    >>> from redmax_edu.constraints import Loop
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -0.5                      # each link's centre, 0.5 m below its hinge
    >>> top = np.eye(4); top[2, 3] = -1.0                  # the next hinge, 1 m below
    >>> link = dict(joint=Revolute([0, 1, 0]), T_joint_body=T, mass=1.0, inertia=0.01 * np.eye(3))
    >>> chain = Model([Body("crank", -1, T_parent_joint=np.eye(4), **link),
    ...                Body("coupler", 0, T_parent_joint=top, **link),
    ...                Body("rocker", 1, T_parent_joint=top, **link)],
    ...               constraints=[Loop(2, [0, 0, -0.5], -1, [1.0, 0.0, 0.0], axis=[0, 1, 0])])
    >>> sweep = crank_sweep(chain, [0.0, -np.pi / 2, -np.pi / 2], 0, angles=np.linspace(0.0, 0.6, 4),
    ...                     coupler=(1, [0.0, 0.0, 0.0]))
    >>> sweep.q.shape, sweep.curve.shape
    ((4, 3), (4, 3))
    >>> np.round(sweep.q[:, 0] + sweep.q[:, 1], 6) + 0.0  # the coupler's angle to the world: constant
    array([-1.570796, -1.570796, -1.570796, -1.570796])
    """
    model = check_model(model)
    crank = _coordinates(model, crank, "crank")[0]
    q = np.array(model.check_state(q0), dtype=float)
    if angles is None:
        n = as_count(samples, "samples", "crank angles", MAX_POINTS, minimum=2)
        angles = q[crank] + np.linspace(0.0, 2 * np.pi, n)
    angles = as_real(angles, None, "angles").reshape(-1)
    if angles.size < 1 or np.any(np.diff(angles) <= 0):
        raise ValueError("argument 'angles' must be a non-empty increasing sequence of crank angles")
    as_count(angles.size, "angles", "crank angles", MAX_POINTS)
    if coupler is not None:
        body, point = coupler
        body = as_index(body, "coupler")
        if body >= model.n:
            raise ValueError(f"argument 'coupler': body {body} does not exist (the model has {model.n})")
        coupler = (body, as_real(point, (3,), "coupler point"))
    poses = []
    for angle in angles:
        q[crank] = angle
        q = close_loop(model, q, [crank])
        poses.append(q.copy())
    poses = np.array(poses)
    sweep = CrankSweep(model, crank, angles, poses, coupler, None, np.zeros((3, 2)))
    curve = None if coupler is None else np.array([sweep.coupler_point(p) for p in poses])
    points = [np.concatenate([forward_kinematics(model, p).E_wj[:, :3, 3] for p in poses])]
    if curve is not None:
        points.append(curve)
    scale = float(np.ptp(np.concatenate(points), axis=0).max())
    bounds = cube_bounds(np.concatenate(points), margin=0.15 * scale)
    return CrankSweep(model, crank, angles, poses, coupler, curve, bounds)


def _deg(x):
    return float(np.degrees(x))


def linkage_scene(sweep, angle):
    """The linkage at crank ``angle`` (rad): its bodies, the coupler curve, the traced point.

    A :func:`redmax_edu.viz.reduced.model_scene` without frames, with the whole coupler curve
    (dashed) and a marker on the point, in the sweep's box; the notes give the crank angle
    and every other joint angle in degrees.
    """
    q = sweep.pose(angle)
    notes = [f"crank {_deg(q[sweep.crank]):.0f} deg"]
    notes += [f"{name} joint {_deg(q[k]):.1f} deg" for k, name in sweep.others()]
    extra = []
    if sweep.curve is not None:
        pin = sweep.coupler_point(q, with_centre=True)
        extra = [Path(sweep.curve, "coupler curve", color="#2ca02c", width=1.2, dashed=True),
                 Path(pin, "", color="#2ca02c", width=1.5), Marker(pin[1], "P", color="#2ca02c")]
    return model_scene(sweep.model, q, joint_frames=False, world_frame=False, bounds=sweep.bounds,
                       extra=extra, notes=notes, title=notes[0])


def _angle_panel(sweep, ax, angles):
    for k, name in sweep.others():
        ax.plot(np.degrees(sweep.angles), np.degrees(sweep.q[:, k]), label=f"{name} joint")
    for a in angles:
        ax.axvline(_deg(a), color="gray", linewidth=0.8, linestyle=":")
    ax.set(xlabel="crank angle (deg)", ylabel="joint angle (deg)", title="the other joint angles")
    ax.legend(fontsize=7)


def crank_figure(sweep, angles, *, panel_size=2.8):
    """Static layer: the linkage at each crank angle in ``angles`` (rad) and the other joint angles.

    The poses are drawn in the xz plane, two to a row, each titled with its notes (the crank
    angle and every other joint angle); a last panel on the right, as tall as the poses,
    shows the other joint angles over the whole sweep, with dotted lines at the angles
    drawn. Returns the figure.
    """
    import matplotlib.pyplot as plt

    from .planar import draw_scene_planar

    angles = np.atleast_1d(as_real(angles, None, "angles")).reshape(-1)
    cols = min(len(angles), 2)
    rows = -(-len(angles) // cols)
    fig = plt.figure(figsize=(panel_size * (cols + 1.5), (panel_size + 0.7) * rows))
    grid = fig.add_gridspec(rows, cols + 1, width_ratios=[1.0] * cols + [1.5])
    for k, angle in enumerate(angles):
        scene = linkage_scene(sweep, angle)
        ax = fig.add_subplot(grid[k // cols, k % cols])
        draw_scene_planar(scene, ax, plane="xz", show_notes=False, title="\n".join(scene.notes))
        ax.title.set_fontsize(8)
    _angle_panel(sweep, fig.add_subplot(grid[:, cols]), angles)
    fig.tight_layout()
    return fig


def _xz(points):
    """Float32 x and z of world points (N, 3): what the plotly layer draws in the xz plane."""
    points = np.asarray(points, dtype=float)
    return np.float32(points[:, 0]), np.float32(points[:, 2])


def _xz_segments(points):
    """A NaN-separated polyline (N, 3) projected on the xz plane, as its distinct segments.

    A bar's box seen along y draws each outline edge twice (front and back face) and its
    depth edges as points; keeping each segment once makes a frame of the player a third
    of the size.
    """
    seen, out = set(), []
    for a, b in zip(points[:-1], points[1:], strict=True):
        if np.isnan(a).any() or np.isnan(b).any():
            continue
        p, q = tuple(np.round(a[[0, 2]], 9)), tuple(np.round(b[[0, 2]], 9))
        if p == q or (p, q) in seen or (q, p) in seen:
            continue
        seen.add((p, q))
        out += [a, b, np.full(3, np.nan)]
    return np.array(out) if out else np.full((1, 3), np.nan)


def crank_player(sweep, *, height=420):
    """Kernel-free layer: a plotly figure with one frame per sampled crank angle and a slider.

    Left the linkage and its coupler curve in the xz plane (the polylines of
    :func:`linkage_scene`'s bodies, each distinct projected segment once), right the other
    joint angles over the sweep with a marker at the current crank angle. Bodies that do
    not move over the sweep are drawn once, outside the frames. Frame 0 is the sweep's
    first angle.
    """
    from plotly.subplots import make_subplots

    from .interactive import plotly_objects
    from .player import scene_polylines

    go = plotly_objects()
    others = sweep.others()
    colors = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd")

    def bodies(k):
        scene = model_scene(sweep.model, sweep.q[k], joint_frames=False, world_frame=False,
                            bounds=sweep.bounds, deformables=False, springs=False)
        return [(_xz_segments(pts), style["color"]) for pts, style in scene_polylines(scene)]

    shapes = [bodies(k) for k in range(len(sweep.angles))]
    moves = [not all(np.array_equal(s[b][0], shapes[0][b][0], equal_nan=True) for s in shapes)
             for b in range(len(shapes[0]))]

    def moving(k):
        """The frame's data: x and y only (the style stays that of the first frame's traces)."""
        out = [go.Scatter(x=_xz(pts)[0], y=_xz(pts)[1]) for (pts, _), m in zip(shapes[k], moves, strict=True)
               if m]
        if sweep.curve is not None:
            x, z = _xz(sweep.coupler_point(sweep.q[k], with_centre=True))
            out.append(go.Scatter(x=x, y=z))
        deg = np.float32(np.degrees(sweep.q[k]))
        return out + [go.Scatter(x=[deg[sweep.crank]], y=[deg[j]]) for j, _ in others]

    fig = make_subplots(rows=1, cols=2, column_widths=[0.5, 0.5],
                        subplot_titles=("linkage and coupler curve (xz plane)", "the other joint angles"))
    for (pts, color), m in zip(shapes[0], moves, strict=True):
        if not m:  # drawn once
            x, z = _xz(pts)
            fig.add_trace(go.Scatter(x=x, y=z, mode="lines", line=dict(color=color, width=3),
                                     showlegend=False, hoverinfo="skip"), row=1, col=1)
    if sweep.curve is not None:
        x, z = _xz(sweep.curve)
        fig.add_trace(go.Scatter(x=x, y=z, mode="lines", line=dict(color="#2ca02c", dash="dash", width=1.5),
                                 name="coupler curve", showlegend=False), row=1, col=1)
    crank_deg = np.float32(np.degrees(sweep.angles))
    for n, (j, name) in enumerate(others):
        fig.add_trace(go.Scatter(x=crank_deg, y=np.float32(np.degrees(sweep.q[:, j])), mode="lines",
                                 line=dict(color=colors[n % len(colors)]), name=f"{name} joint"),
                      row=1, col=2)
    start = len(fig.data)
    first, k = moving(0), 0
    for (_, color), m in zip(shapes[0], moves, strict=True):
        if m:
            fig.add_trace(first[k].update(mode="lines", line=dict(color=color, width=3), showlegend=False,
                                          hoverinfo="skip"), row=1, col=1)
            k += 1
    if sweep.curve is not None:
        fig.add_trace(first[k].update(mode="lines+markers", marker=dict(color="#2ca02c", size=[0, 9]),
                                      name="P", line=dict(color="#2ca02c", width=1.5), showlegend=False),
                      row=1, col=1)
        k += 1
    for n, trace in enumerate(first[k:]):
        fig.add_trace(trace.update(mode="markers", marker=dict(color=colors[n % len(colors)], size=9),
                                   showlegend=False), row=1, col=2)
    traces = list(range(start, len(fig.data)))
    fig.frames = [go.Frame(data=moving(k), traces=traces, name=str(k)) for k in range(len(sweep.angles))]
    steps = [dict(method="animate", label=f"{a:.0f}",
                  args=[[str(k)], dict(mode="immediate", frame=dict(duration=0, redraw=False),
                                       transition=dict(duration=0))])
             for k, a in enumerate(crank_deg)]
    b = sweep.bounds
    fig.update_xaxes(range=list(b[0]), title_text="x (m)", scaleanchor="y", row=1, col=1)
    fig.update_yaxes(range=list(b[2]), title_text="z (m)", row=1, col=1)
    fig.update_xaxes(title_text="crank angle (deg)", row=1, col=2)
    fig.update_yaxes(title_text="joint angle (deg)", row=1, col=2)
    fig.update_layout(height=height, margin=dict(l=50, r=10, t=40, b=10),
                      legend=dict(x=1.0, xanchor="right", y=1.0, font=dict(size=10)),
                      sliders=[dict(active=0, steps=steps, currentvalue=dict(prefix="crank angle (deg): "),
                                    x=0.0, len=1.0, y=-0.15, yanchor="top", pad=dict(t=30))])
    return fig


def crank_widget(sweep, angle=None):
    """Live layer (Jupyter, Voila): a crank-angle slider (degrees) and :func:`crank_figure` at that angle.

    Starts at ``angle`` (rad; default the sweep's first angle, the first panel of the static
    figure); any angle is posed by Newton from the nearest sampled pose.
    """
    import ipywidgets as W
    import matplotlib.pyplot as plt

    start = sweep.angles[0] if angle is None else as_scalar(angle, "angle")
    lo, hi = np.degrees(sweep.angles[[0, -1]])
    slider = W.FloatSlider(value=round(_deg(start), 1), min=float(np.floor(lo)), max=float(np.ceil(hi)),
                           step=1.0, description="crank (deg)", continuous_update=False)

    def show(degrees):
        crank_figure(sweep, [np.radians(degrees)])
        plt.show()

    return W.VBox([slider, W.interactive_output(show, dict(degrees=slider))])


# --- the drift explorer ---------------------------------------------------------------------------

def constraint_drift(model, t, q):
    """The largest position error of the model's equality constraints at each sample, shape (N,).

    ``t`` (N,) and ``q`` (N, nq) are a motion (a Trajectory's); prescribed motions are
    compared with their value at each ``t``. Inequalities and velocity-only constraints have no
    drift to measure and are left out.
    """
    model = check_model(model)
    keep = [k for k, c in enumerate(model.constraints) if c.positional and not c.inequality]
    if not keep:
        raise ValueError("argument 'model' has no equality constraint with a position error: nothing drifts")
    out = []
    for tk, qk in zip(np.asarray(t, float), np.asarray(q, float), strict=True):
        errors = constraint_errors(model, qk, tk)
        out.append(max(float(np.abs(errors[k]).max()) for k in keep))
    return np.array(out)


@dataclass
class DriftRuns:
    """Runs of one constrained model under RK45 and linearly implicit Euler, per Baumgarte gain.

    ``rk45[gain]`` uses ``alpha = beta = gain``, ``euler[gain]`` ``gamma = gain``; ``drift`` holds
    :func:`constraint_drift` of each, keyed ``(method, gain)``. :meth:`get` simulates a new gain.
    """

    model: object
    q0: np.ndarray
    qdot0: np.ndarray
    t_span: tuple
    h: float
    sample_dt: float
    rk45: dict = field(default_factory=dict)
    euler: dict = field(default_factory=dict)
    drift: dict = field(default_factory=dict)

    def get(self, gain):
        """``(rk45 run, euler run)`` with Baumgarte gain ``gain`` (1/s), simulated (and kept) if new."""
        gain = float(check_baumgarte([gain, gain, gain])[0])
        if gain not in self.rk45:
            self.rk45[gain] = simulate(self.model, self.q0, self.qdot0, self.t_span, "rk45",
                                       sample_dt=self.sample_dt, baumgarte=(gain, gain, 0.0))
            self.euler[gain] = simulate(self.model, self.q0, self.qdot0, self.t_span, "euler", h=self.h,
                                        sample_dt=self.sample_dt, baumgarte=(0.0, 0.0, gain))
            for method, run in (("rk45", self.rk45[gain]), ("euler", self.euler[gain])):
                self.drift[method, gain] = constraint_drift(self.model, run.t, run.q)
        return self.rk45[gain], self.euler[gain]


def drift_runs(model, q0, qdot0, t_span, *, h=0.01, sample_dt=None, gains=DRIFT_GAINS):
    """Simulate a constrained model once per gain with each integrator; returns :class:`DriftRuns`.

    RK45 runs at its default tolerances; Euler with step ``h``. Both are sampled every
    ``sample_dt`` (default ``h``).
    """
    model = check_model(model)
    constraint_drift(model, [0.0], [model.check_state(q0)])  # refuses a model with nothing to drift
    out = DriftRuns(model, np.asarray(q0, float), np.asarray(qdot0, float), tuple(t_span), float(h),
                    float(h if sample_dt is None else sample_dt))
    for gain in gains:
        out.get(gain)
    return out


_METHODS = (("rk45", "RK45", "alpha = beta"), ("euler", "lin. implicit Euler", "gamma"))


def drift_figure(runs, gains, *, height=4.2, floor=1e-16, ylabel="largest constraint error"):
    """Static layer: one column per gain, RK45's drift on top and Euler's below, one log scale.

    Drift below ``floor`` (exact zeros included) is drawn at the floor; ``ylabel`` names the
    error and its unit. Returns the figure.
    """
    import matplotlib.pyplot as plt

    gains = [float(g) for g in gains]
    fig, axes = plt.subplots(2, len(gains), figsize=(3.2 * len(gains) + 0.6, height), sharex=True,
                             sharey=True, squeeze=False)
    for col, gain in enumerate(gains):
        pair = runs.get(gain)
        for row, ((method, label, name), run) in enumerate(zip(_METHODS, pair, strict=True)):
            ax = axes[row, col]
            ax.semilogy(run.t, np.maximum(runs.drift[method, gain], floor), color=f"C{3 * row}")
            ax.set_title(f"{label}, {name} = {gain:g}", fontsize=9)
        axes[1, col].set_xlabel("t (s)")
    top = max(float(runs.drift[m, g].max()) for m, *_ in _METHODS for g in gains)
    axes[0, 0].set_ylim(floor / 10, max(10 * top, floor))
    for row in range(2):
        axes[row, 0].set_ylabel(ylabel)
    fig.tight_layout()
    return fig


def drift_player(runs, gains=DRIFT_GAINS, *, height=380):
    """Kernel-free layer: one frame per gain (slider), RK45's drift left and Euler's right, log axes."""
    from .baumgarte_explorer import gain_player

    def curves(gain):
        rk, eu = runs.get(gain)
        return ((rk.t, runs.drift["rk45", float(gain)]), (eu.t, runs.drift["euler", float(gain)]))

    return gain_player(curves, [float(g) for g in gains],
                       ("RK45 (alpha = beta = gain)", "lin. implicit Euler (gamma = gain)"),
                       prefix="Baumgarte gain (1/s): ", height=height)


def drift_widget(runs, gain=0.0, **figure_options):
    """Live layer (Jupyter, Voila): a gain slider and :func:`drift_figure` at that gain.

    Starts at ``gain``, the first column of the page's static figure; gains off the grid are
    simulated when chosen. ``figure_options`` go to :func:`drift_figure` (e.g. ``ylabel``).
    """
    import ipywidgets as W
    import matplotlib.pyplot as plt

    choices = sorted({*DRIFT_GAINS, 2.0, 3.0, 20.0, 50.0, float(gain)})
    slider = W.SelectionSlider(options=choices, value=float(gain), description="gain (1/s)",
                               continuous_update=False)

    def show(gain):
        drift_figure(runs, [gain], **figure_options)
        plt.show()

    return W.VBox([slider, W.interactive_output(show, dict(gain=slider))])

