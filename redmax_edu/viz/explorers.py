"""The scenes of the book's explorers, computed from the library's Lie-group functions.

Each function here is the single source of a picture: the static figure, the kernel-free
plotly player and the live widget of an explorer all call it.
"""

import numpy as np

from .._validate import as_array, as_count, as_transform
from ..lie import adjoint, exp_se3, inv_se3, material_jacobian, screw
from .scene import MAX_POINTS, Arrow, Frame, Marker, Path, Scene, box_edges, cube_bounds, fmt

#: Twists of the twist explorer's static figure and presets: a pure rotation, a pure
#: translation, and a general screw. The widget starts at the first one.
TWIST_PRESETS = {
    "pure rotation": np.array([0.0, 0.0, 2.0, 0.0, 0.0, 0.0]),
    "pure translation": np.array([0.0, 0.0, 0.0, 1.0, 0.5, 0.8]),
    "screw": np.array([0.0, 0.0, 2.5, 0.0, 1.2, 0.6]),
}


#: Half sizes of the box drawn for a moving body.
BODY_HALF_SIZES = (0.4, 0.25, 0.1)


def _axis_segment(point, direction, samples):
    """The part of the line ``point + s direction`` alongside ``samples`` (N, 3), with a margin."""
    s = (np.asarray(samples) - point) @ direction
    return np.array([point + (s.min() - 0.5) * direction, point + (s.max() + 0.5) * direction])


def twist_scene(phi, t=1.0, *, E0=None, r=(0.8, 0.0, 0.0), t_max=1.0, samples=61, velocity_scale=0.3):
    """A frame carried by the constant body twist ``phi``: ``E(t) = E0 exp(t [phi])`` (Eq. 1.8, 1.10).

    Draws the starting frame, the frame at time ``t``, the screw axis of ``phi``, the path of
    the body point ``r`` over ``[0, t_max]`` (the part already travelled in bold), and that
    point's world velocity ``R(t) Gamma(r) phi`` (Eq. 1.12) as an arrow.

    Parameters
    ----------
    phi : array_like, shape (6,)
        Body twist ``(omega, nu)`` in the coordinates of ``E0``; not zero.
    t : float
        Time at which the moving frame is drawn, ``0 <= t <= t_max``.
    E0 : array_like, shape (4, 4), optional
        Starting pose (identity by default).
    r : array_like, shape (3,)
        The tracked point, in body coordinates.
    t_max : float
        End of the drawn path; the scene's bounds cover all of it, so scenes for different
        ``t`` share one box.
    samples : int
        Points on the full path.
    velocity_scale : float
        The velocity arrow is drawn as the displacement over this many seconds.

    Returns
    -------
    Scene

    Examples
    --------
    >>> scene = twist_scene([0, 0, 1, 0, 0, 0.2], t=0.5)
    >>> [item.label for item in scene.items][:3]
    ['E(0)', 'E(t)', 'body']
    """
    phi = as_array(phi, (6,), "phi")
    E0 = np.eye(4) if E0 is None else as_transform(E0, "E0")
    r = as_array(r, (3,), "r")
    if not 0.0 <= t <= t_max:
        raise ValueError(f"argument 't' must lie in [0, t_max] = [0, {t_max}], got {t}")
    point, direction, pitch = screw(phi)  # in E0's coordinates
    axis_point, axis_dir = E0[:3, :3] @ point + E0[:3, 3], E0[:3, :3] @ direction

    def pose(s):
        return E0 @ exp_se3(s * phi)

    def world_point(s):
        return (pose(s) @ np.append(r, 1.0))[:3]

    times = np.linspace(0.0, t_max, as_count(samples, "samples", "path points", MAX_POINTS))
    path = np.array([world_point(s) for s in times])
    done = np.array([world_point(s) for s in times[times <= t]] + [world_point(t)])
    E_t = pose(t)
    x_t = world_point(t)
    v = material_jacobian(E_t, r) @ phi
    origins = np.array([pose(s)[:3, 3] for s in times])
    axis = _axis_segment(axis_point, axis_dir, np.concatenate([path, origins]))
    items = (
        Frame(E0, "E(0)", alpha=0.35),
        Frame(E_t, "E(t)"),
        Path(box_edges(E_t, BODY_HALF_SIZES), "body", color="#7f7f7f", width=1.0),
        Path(axis, "screw axis", color="gray", dashed=True),
        Path(path, "path of r", color="#9467bd", width=1.0, alpha=0.4),
        Path(done, "travelled", color="#9467bd", width=2.5),
        Marker(x_t, "r"),
        Arrow(x_t, velocity_scale * v, "velocity of r", color="#ff7f0e"),
    )
    pitch_text = "inf (pure translation)" if np.isinf(pitch) else f"{pitch:.3f} per rad"
    notes = (f"omega = {fmt(phi[:3])}", f"nu    = {fmt(phi[3:])}", f"pitch = {pitch_text}",
             f"t = {t:.2f}   |v(r)| = {np.linalg.norm(v):.3f}")
    bounds = cube_bounds(np.concatenate([path, origins, axis, [np.zeros(3)], [x_t + velocity_scale * v]]))
    return Scene(items, bounds, title="exp(t[phi]) carries the frame along its screw", notes=notes)


#: The motion of the adjoint explorer: body i at a fixed pose, moving with a fixed body twist,
#: pushed by a fixed force; only the observer frame b changes.
ADJOINT_SETUP = {
    "E_w_i": exp_se3([0.3, -0.2, 0.5, 1.2, 0.4, 0.3]),
    "phi_i": np.array([0.0, 0.4, 1.0, 0.5, 0.2, 0.3]),
    "r_force": np.array([0.4, 0.3, 0.0]),  # body coordinates
    "f_world": np.array([0.2, 0.6, 0.5]),
}


def observer_pose(s):
    """The observer frame b of the adjoint explorer at slider value ``s`` in [0, 1].

    b swings around the world z axis and tilts as ``s`` grows, so every entry of the
    adjoint changes along the way.
    """
    return exp_se3([0.0, 0.0, 2 * np.pi * s, 0.0, 0.0, 0.0]) @ exp_se3([0.6 * s, 0.0, 0.0, -1.0, 1.0, 0.6])


def adjoint_scene(E_w_b, *, E_w_i=None, phi_i=None, r_force=None, f_world=None):
    """One rigid motion seen from the world frame w and from an observer frame b (Eq. 1.14-1.15).

    Body i moves with body twist ``phi_i``. The same motion has coordinates
    ``phi_w = A_w_i phi_i`` in w and ``phi_b = A_b_i phi_i`` in b; the linear part of each is
    the velocity of the (extended) body point passing through that frame's origin, drawn at
    each origin. A force ``f_world`` pushes at the body point ``r_force``: its wrench has
    coordinates ``w_w`` and ``w_b = A_w_b^T w_w``, and the power ``w . phi`` is the same in
    every frame.

    Parameters
    ----------
    E_w_b : array_like, shape (4, 4)
        Pose of the observer frame b.
    E_w_i, phi_i, r_force, f_world : optional
        Override the motion of ``ADJOINT_SETUP``.

    Returns
    -------
    Scene

    Examples
    --------
    >>> scene = adjoint_scene(observer_pose(0.25))
    >>> scene.notes[-1].startswith("power")
    True
    """
    cfg = dict(ADJOINT_SETUP)
    for key, value in (("E_w_i", E_w_i), ("phi_i", phi_i), ("r_force", r_force), ("f_world", f_world)):
        if value is not None:
            cfg[key] = value
    E_w_b = as_transform(E_w_b, "E_w_b")
    E_w_i = as_transform(cfg["E_w_i"], "E_w_i")
    phi_i = as_array(cfg["phi_i"], (6,), "phi_i")
    r_force = as_array(cfg["r_force"], (3,), "r_force")
    f_world = as_array(cfg["f_world"], (3,), "f_world")

    phi_w = adjoint(E_w_i) @ phi_i
    phi_b = adjoint(inv_se3(E_w_b) @ E_w_i) @ phi_i
    x_force = (E_w_i @ np.append(r_force, 1.0))[:3]
    wrench_w = np.concatenate([np.cross(x_force, f_world), f_world])
    wrench_b = adjoint(E_w_b).T @ wrench_w

    def velocity(x):  # world velocity of the body point at world position x
        return np.cross(phi_w[:3], x) + phi_w[3:]

    hx, hy, hz = BODY_HALF_SIZES
    corners = np.array([[sx * hx, sy * hy, hz] for sx in (-1, 1) for sy in (-1, 1)])
    body_points = (E_w_i[:3, :3] @ corners.T).T + E_w_i[:3, 3]
    point, direction, _ = screw(phi_w)
    axis = _axis_segment(point, direction, np.concatenate([body_points, [np.zeros(3), E_w_b[:3, 3]]]))
    p_b = E_w_b[:3, 3]
    items = (
        Frame(np.eye(4), "w", scale=0.6),
        Frame(E_w_i, "i (body)", scale=0.5),
        Path(box_edges(E_w_i, BODY_HALF_SIZES), "body", color="#7f7f7f", width=1.0),
        Frame(E_w_b, "b (observer)", scale=0.6),
        Path(axis, "screw axis", color="gray", dashed=True),
        *(Arrow(x, 0.5 * velocity(x), "body point velocity" if k == 0 else "", color="#9467bd")
          for k, x in enumerate(body_points)),
        Arrow(np.zeros(3), 0.5 * phi_w[3:], "nu_w at w's origin", color="#ff7f0e"),
        Arrow(p_b, 0.5 * E_w_b[:3, :3] @ phi_b[3:], "nu_b at b's origin (drawn in w)", color="#e377c2"),
        Arrow(x_force, 0.5 * f_world, "force", color="black"),
    )
    notes = (f"phi_i = {fmt(phi_i)}", f"phi_w = A_w_i phi_i = {fmt(phi_w)}",
             f"phi_b = A_b_i phi_i = {fmt(phi_b)}", f"wrench_w = {fmt(wrench_w)}",
             f"wrench_b = A_w_b^T wrench_w = {fmt(wrench_b)}",
             f"power: w_w.phi_w = {wrench_w @ phi_w:.4f}, w_b.phi_b = {wrench_b @ phi_b:.4f}")
    bound_points = [np.zeros(3), p_b, x_force + 0.5 * f_world, *body_points, *axis,
                    *(x + 0.5 * velocity(x) for x in body_points)]
    return Scene(items, cube_bounds(np.array(bound_points)),
                 title="one motion, two frames: the adjoint maps phi_b to phi_w", notes=notes)


def adjoint_figure(s_values=(0.0, 0.5), *, plane="xy"):
    """The static figure of the adjoint explorer: :func:`adjoint_scene` seen from above.

    One panel per observer position ``s`` (see :func:`observer_pose`), each the same scene
    as the explorer's plotly player and widget, projected onto the world ``plane`` ("xy":
    the top view, looking down the world z axis). Returns ``(figure, scenes)``; print the
    scenes' notes under the figure.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, scenes = adjoint_figure((0.0, 0.5))
    >>> len(fig.axes), len(scenes)
    (2, 2)
    >>> plt.close(fig)
    """
    from .planar import draw_panels_planar

    s_values = np.atleast_1d(as_array(s_values, None, "s_values"))
    if s_values.ndim != 1 or s_values.size == 0 or np.iscomplexobj(s_values):
        raise ValueError("argument 's_values' must be a non-empty list of real numbers, "
                         f"got shape {s_values.shape}")
    scenes = [adjoint_scene(observer_pose(s)) for s in s_values]
    fig = draw_panels_planar(scenes, [f"observer at s = {s:g} (top view)" for s in s_values], plane=plane,
                             ncols=len(scenes), panel_size=5.0)
    return fig, scenes
