"""The joint explorer of §2.4: a joint's child frame at ``Q(q)`` and the columns of ``S`` as screws.

:func:`joint_scene` is the single source of the picture: the static figure of the joints
page, its kernel-free plotly player and the live widget all call it. It draws the parent
frame (the joint frame at rest), the child frame ``Q(q)``, a small link carried by the
child frame, the path of a point of that link as each coordinate alone sweeps around
``q`` (which way does ``q_k`` move the child?), and each column of ``S(q)`` as a screw
axis: column k is the twist the child gets from ``qdot_k = 1`` (Eq. 2.31), drawn as its
axis line (rotation) or as an arrow (pure translation). Spline joints also show their
control frames.

Taught in book/02_reduced/04_joints.
"""

import numpy as np

from .._validate import as_count
from ..joints import JOINT_TYPES, joint_from_spec
from ..lie import exp_se3, screw
from .scene import MAX_FRAMES, MAX_POINTS, Arrow, Frame, Path, Scene, box_edges, cube_bounds, fmt

__all__ = ["JOINT_PRESETS", "joint_presets", "joint_scene", "joint_sweep"]

#: Half sizes of the little link carried by the child frame, and where its centre sits.
LINK_HALF_SIZES = (0.3, 0.06, 0.06)
LINK_OFFSET = (0.3, 0.0, 0.0)

#: Colours of the columns of S (and of the matching coordinate sweeps).
COLUMN_COLORS = ("#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#bcbd22")


def _spline_frames():
    """Four control frames of a closed loop (the shape of the reference's spline scene, ~1 m)."""
    frames = []
    for angle, p in ((np.pi, (-1.0, 0, 0)), (np.pi / 2, (0, 0, -0.3)), (0.0, (1.0, 0, 0)),
                     (-np.pi / 2, (0, 0, 0.3))):
        C = exp_se3([0, angle, 0, 0, 0, 0])  # a turn about y ...
        C[:3, 3] = p                         # ... placed at p
        frames.append(C.tolist())
    return frames


def _surface_values():
    """A 4x4 patch of (x, y, z, rx, ry, rz) values: a shallow bowl whose tilt follows the slope."""
    s = np.linspace(-1.0, 1.0, 4)
    values = np.zeros((4, 4, 6))
    for a, y in enumerate(s):        # first index pairs with q2
        for b, x in enumerate(s):    # second index pairs with q1
            values[a, b] = (x, y, 0.25 * (x * x + y * y), -0.3 * y, 0.3 * x, 0.0)
    return values.tolist()


#: One example of every joint type: its scene-format spec, the coordinates the explorer
#: starts at, and the coordinates its sweep ends at (the static figure shows the start).
JOINT_PRESETS = {
    "revolute": ({"type": "revolute", "axis": [0, 0, 1]}, [0.6], [2.4]),
    "prismatic": ({"type": "prismatic", "axis": [1, 0, 0]}, [0.3], [-0.3]),
    "planar": ({"type": "planar", "plane": [[1, 0], [0, 1], [0, 0]]}, [0.3, 0.2], [-0.3, -0.2]),
    "translational": ({"type": "translational"}, [0.3, 0.2, 0.1], [-0.2, -0.3, 0.3]),
    "universal": ({"type": "universal"}, [0.5, 0.4], [-0.6, -0.3]),
    "spherical_euler": ({"type": "spherical_euler", "chart": "XYZ"}, [0.4, 0.5, 0.3], [-0.3, 1.4, 0.5]),
    "spherical_exp": ({"type": "spherical_exp"}, [0.4, 0.5, 0.3], [-1.2, 1.0, 0.8]),
    "free2d": ({"type": "free2d"}, [0.3, 0.2, 0.6], [-0.3, -0.2, 2.0]),
    "free3d_euler": ({"type": "free3d_euler", "chart": "XYZ"}, [0.3, 0.2, 0.1, 0.4, 0.5, 0.3],
                     [-0.2, -0.3, 0.3, -0.3, 1.2, 0.5]),
    "free3d_exp": ({"type": "free3d_exp"}, [0.3, 0.2, 0.1, 0.4, 0.5, 0.3],
                   [-0.2, -0.3, 0.3, -1.0, 0.9, 0.6]),
    "composite": ({"type": "composite", "joints": [{"type": "revolute", "axis": [1, 0, 0]},
                                                    {"type": "prismatic", "axis": [1, 0, 0]}]},
                  [0.4, 0.2], [1.6, -0.3]),
    "spline_curve": ({"type": "spline_curve", "control_frames": _spline_frames()}, [0.3], [3.9]),
    "spline_surface": ({"type": "spline_surface", "control_values": _surface_values()},
                       [0.5, 0.5], [0.1, 0.9]),
}


def joint_presets():
    """The explorer's examples whose joint type the library knows: name -> (joint, q_start, q_end)."""
    out = {}
    for name, (spec, q0, q1) in JOINT_PRESETS.items():
        if spec["type"] in JOINT_TYPES:
            out[name] = (joint_from_spec(spec, f"preset {name!r}"), np.array(q0, float), np.array(q1, float))
    return out


def _column_item(Q, column, label, color, length):
    """Column ``column`` of S (a twist in child coordinates) drawn in the parent frame."""
    if not np.any(np.abs(column) > 1e-12):
        return None
    point, direction, pitch = screw(column)
    R, p = Q[:3, :3], Q[:3, 3]
    if np.isinf(pitch):  # a pure translation: an arrow from the child origin
        return Arrow(p, length * (R @ direction), label, color=color)
    x, d = R @ point + p, R @ direction
    return Path(np.array([x - length * d, x + length * d]), label, color=color, width=2.0, dashed=True)


def joint_scene(joint, q, *, sweep=0.6, samples=25, title=None):
    """The child frame of ``joint`` at ``q`` and the columns of ``S(q)`` drawn as screws.

    Parameters
    ----------
    joint : Joint
    q : array_like, shape (joint.ndof,)
    sweep : float
        Each coordinate alone is swept over ``q_k +- sweep`` to trace the path of the link's
        tip (spline coordinates over ``+- sweep`` too).
    samples : int
        Points per sweep path.
    title : str, optional

    Returns
    -------
    Scene
        Items in the same order for every ``q`` of the same joint, so scenes animate.

    Examples
    --------
    >>> from redmax_edu.joints import Revolute
    >>> scene = joint_scene(Revolute([0, 0, 1]), [0.5])
    >>> [item.label for item in scene.items]
    ['parent (rest)', 'child Q(q)', 'link', 'sweep q1', 'S column 1']
    """
    q = joint._coordinates(q, "q")
    samples = as_count(samples, "samples", "path points", MAX_POINTS)
    Q, S = joint.Q(q), joint.S(q)
    tip = np.append(2 * np.array(LINK_OFFSET), 1.0)
    items = [Frame(np.eye(4), "parent (rest)", scale=0.35, alpha=0.4),
             Frame(Q, "child Q(q)", scale=0.35),
             Path(box_edges(Q @ _offset(LINK_OFFSET), LINK_HALF_SIZES), "link", color="#444444", width=1.5)]
    bound_points = [np.zeros(3), Q[:3, 3], (Q @ tip)[:3]]
    for k in range(joint.ndof):
        path = []
        for s in np.linspace(-sweep, sweep, samples):
            qk = q.copy()
            qk[k] += s
            path.append((joint.Q(qk) @ tip)[:3])
        path = np.array(path)
        bound_points.extend(path)
        items.append(Path(path, f"sweep q{k + 1}", color=COLUMN_COLORS[k % 6], width=1.0, alpha=0.5))
    for k in range(joint.ndof):
        item = _column_item(Q, S[:, k], f"S column {k + 1}", COLUMN_COLORS[k % 6], 0.5)
        if item is not None:
            items.append(item)
    for m, C in enumerate(getattr(joint, "control_frames", ())):
        items.append(Frame(np.asarray(C), f"C{m + 1}", scale=0.15, alpha=0.6))
        bound_points.append(np.asarray(C)[:3, 3])
    notes = [f"q = {fmt(q)}", "S ="] + [f"  {fmt(row)}" for row in S]
    if joint.ndof >= 3 and not S[3:, :].any():          # a pure rotation joint: its singularity
        notes.append(f"det S(1:3, :) = {np.linalg.det(S[:3, :3]):.3f}")
    chart = getattr(joint, "chart", None)
    if chart:
        notes.append(f"chart {chart}")
    return Scene(tuple(items), cube_bounds(np.array(bound_points), margin=0.2),
                 title=title or f"{joint.kind} joint", notes=tuple(notes))


def _offset(p):
    E = np.eye(4)
    E[:3, 3] = p
    return E


def joint_sweep(joint, q_start, q_end, steps=24):
    """Scenes of :func:`joint_scene` along the straight line from ``q_start`` to ``q_end``.

    Returns
    -------
    scenes : list of Scene
    labels : list of str
        The interpolation parameter of each scene, for a player's slider.
    """
    q_start = joint._coordinates(q_start, "q_start")
    q_end = joint._coordinates(q_end, "q_end")
    ts = np.linspace(0.0, 1.0, as_count(steps, "steps", "scenes", MAX_FRAMES))
    scenes = [joint_scene(joint, (1 - t) * q_start + t * q_end) for t in ts]
    return scenes, [f"{t:.2f}" for t in ts]
