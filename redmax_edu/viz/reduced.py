"""Pictures of articulated models in reduced coordinates: a :class:`~redmax_edu.model.Model` at ``q``.

:func:`model_scene` turns a model and its coordinates into a renderer-independent
:class:`~redmax_edu.viz.scene.Scene`: every body as its shape (``Body.shape``, when set) or
as a stick through its joint, its centre of mass and its children's joints, with the joint
frames (and optionally the body frames) on top, and every deformable body of §2.7 (a
:class:`~redmax_edu.deformable.DeformableSpring`) as a polyline through its nodes with a marker
on each node. The items come in the same order for every
``q``, so a sequence of scenes animates (:func:`trajectory_animation`, an HTML player that
needs no kernel) or plays in plotly (:func:`redmax_edu.viz.interactive.scene_player`).

Used by every page of book/02_reduced to draw its models.
"""

import numpy as np

from .._validate import as_count
from ..jacobian import node_kinematics
from ..kinematics import forward_kinematics
from ..maximal.forces import Attachment
from .animate import animation_html
from .player import light_player
from .scene import MAX_FRAMES, Frame, Marker, Path, Scene, box_edges, cube_bounds, union_bounds
from .shapes import capsule_wireframe, cylinder_wireframe

__all__ = ["LINK_COLORS", "SPRING_COLORS", "model_scene", "deformable_points", "spring_points",
           "draw_model_planar", "model_length_scale", "body_strokes", "trajectory_scenes",
           "trajectory_animation"]

_GAP = np.full((1, 3), np.nan)

#: Colours of the bodies, chosen apart from the red, green and blue of the frame axes.
LINK_COLORS = ("#444444", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#e377c2", "#bcbd22")

#: Colours of the deformable bodies (mass-spring chains), apart from the links' and the axes'.
SPRING_COLORS = ("#1b9e77", "#e7298a", "#66a61e", "#e6ab02", "#a6761d")


def deformable_points(model, q):
    """World positions of every deformable's nodes at ``q``: a list of (k, 3) arrays.

    Free nodes come from ``q``, attached ones from their body points (or world points), as
    :func:`redmax_edu.jacobian.node_kinematics` computes them. Empty for a model without
    deformables.
    """
    if not model.deformables:
        return []
    return [nodes.x for nodes in node_kinematics(model, q)]


def spring_points(model, E_wi):
    """World points of every spring of ``model.forces`` that joins attached points.

    Parameters
    ----------
    model : Model
    E_wi : ndarray, shape (n, 4, 4)
        Body poses.

    Returns
    -------
    list of (ndarray (m, 3), str)
        The points each spring runs through, in order, and a label (its class name and index
        in ``model.forces``); empty when no force has ``points``.
    """
    out = []
    for k, force in enumerate(model.forces):
        attachments = getattr(force, "points", None)
        if not attachments or not all(isinstance(p, Attachment) for p in attachments):
            continue
        x = np.array([p.r if p.body < 0 else E_wi[p.body, :3, :3] @ p.r + E_wi[p.body, :3, 3]
                      for p in attachments])
        out.append((x, f"{type(force).__name__}{k}"))
    return out


def model_length_scale(model):
    """A typical length of the model: the median nonzero joint-to-joint or joint-to-body offset.

    Used to size the drawn frames; 1.0 for a model whose frames all coincide.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -0.5
    >>> model_length_scale(Model([Body("rod", -1, Revolute([0, 1, 0]), np.eye(4), T, 1.0, np.eye(3))]))
    0.5
    """
    offsets = np.concatenate([np.linalg.norm(model.T_parent_joint[:, :3, 3], axis=1),
                              np.linalg.norm(model.T_joint_body[:, :3, 3], axis=1)])
    offsets = offsets[offsets > 1e-12]
    return float(np.median(offsets)) if offsets.size else 1.0


def _shape_points(shape, E):
    """The wireframe of ``Body.shape`` at pose ``E``, or None for an unknown or missing shape.

    A shape may carry its own frame in the body frame (``"E"``, 4x4, e.g. a mesh's frame), and
    a ``"composite"`` shape is the union of its ``"parts"``, each a shape with its ``"E"``.
    """
    if not isinstance(shape, dict):
        return None
    if "E" in shape:
        E = E @ np.asarray(shape["E"], dtype=float)
    kind = shape.get("type")
    if kind == "composite" and shape.get("parts"):
        parts = [_shape_points(part, E) for part in shape["parts"]]
        if any(p is None for p in parts):
            return None
        return np.concatenate([np.vstack([p, _GAP]) for p in parts])[:-1]
    if kind == "cuboid" and "sides" in shape:
        return box_edges(E, 0.5 * np.asarray(shape["sides"], dtype=float))
    if kind == "cylinder" and {"radius", "height"} <= shape.keys():
        return cylinder_wireframe(E, shape["radius"], shape["height"])
    if kind == "capsule" and {"radius", "length"} <= shape.keys():
        return capsule_wireframe(E, shape["radius"], shape["length"])
    if kind == "sphere" and "radius" in shape:
        return capsule_wireframe(E, shape["radius"], 0.0)
    return None


def body_strokes(model, kin, i):
    """The polyline drawn for body ``i`` given a :class:`~redmax_edu.kinematics.Kinematics`.

    Its shape's wireframe when ``Body.shape`` is a known shape (cuboid ``sides``, cylinder
    ``radius``/``height``, capsule ``radius``/``length``, sphere ``radius``). Otherwise a
    stick: from where the joint attaches to the parent (this stroke has length only for
    sliding joints), to the joint, to the centre of mass, and on to each child's attachment
    point; a body without children is drawn as a rod through its centre of mass, as long
    again beyond it as the joint is before it.

    Returns
    -------
    ndarray, shape (N, 3)
        World points; strokes separated by NaN rows.
    """
    E_wi = kin.E_wi[i]
    shaped = _shape_points(model.bodies[i].shape, E_wi)
    if shaped is not None:
        return shaped
    p = model.parents[i]
    E_attach = model.T_parent_joint[i] if p < 0 else kin.E_wj[p] @ model.T_parent_joint[i]
    joint, com = kin.E_wj[i][:3, 3], E_wi[:3, 3]
    strokes = [np.array([E_attach[:3, 3], joint, com])]
    children = model.children(i)
    for c in children:
        strokes.append(np.array([com, (kin.E_wj[i] @ model.T_parent_joint[c])[:3, 3]]))
    if not children:
        strokes.append(np.array([com, 2 * com - joint]))
    return np.concatenate([np.vstack([s, _GAP]) for s in strokes])


def model_scene(model, q, *, title="", notes=(), joint_frames=True, body_frames=False,
                world_frame=True, frame_scale=None, bounds=None, extra=(), deformables=True,
                springs=True):
    """A scene of ``model`` at coordinates ``q``: bodies, joint frames, body frames, deformables.

    Parameters
    ----------
    model : Model
    q : array_like, shape (model.nq,)
    title : str
    notes : sequence of str
        Text shown with the scene (under a static figure, in a corner of an animation).
    joint_frames, body_frames, world_frame : bool
        Which frames to draw: the joints' (labelled J1, J2, ... as in the writeup, where the
        world is 0), the bodies' at their centres of mass (B1, B2, ...), the world's (0).
    frame_scale : float, optional
        Length of the drawn axes; by default half of :func:`model_length_scale`.
    bounds : array_like, shape (3, 2), optional
        The box to draw in; by default a cube around everything drawn.
    extra : sequence of scene items
        Drawn last (a path traced by a point, an arrow, ...).
    deformables : bool
        Draw each deformable body (``model.deformables``) as a polyline through its nodes,
        labelled with its name and coloured from SPRING_COLORS, and a marker on every node.
    springs : bool
        Draw each spring of ``model.forces`` that joins points (``PointSpring``, ``Spring``:
        anything with ``points``, a sequence of Attachment) as a dashed grey line through them.

    Returns
    -------
    Scene
        Items in a fixed order for every ``q``: world frame, then per body its drawing, joint
        frame and body frame, then per deformable its polyline and node markers, then per
        spring its line, then ``extra``.

    Examples
    --------
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -0.5
    >>> model = Model([Body("rod", -1, Revolute([0, 1, 0]), np.eye(4), T, 1.0, np.eye(3))])
    >>> [item.label for item in model_scene(model, [0.3], body_frames=True).items]
    ['0', 'rod', 'J1', 'B1']
    """
    q = model.check_state(q)
    kin = forward_kinematics(model, q)
    scale = 0.5 * model_length_scale(model) if frame_scale is None else float(frame_scale)
    items, points = [], [np.zeros((1, 3))]
    if world_frame:
        items.append(Frame(np.eye(4), "0", scale=scale, alpha=0.6))
    for i, body in enumerate(model.bodies):
        pts = body_strokes(model, kin, i)
        items.append(Path(pts, body.name, color=LINK_COLORS[i % len(LINK_COLORS)], width=2.5))
        points.append(pts[~np.isnan(pts[:, 0])])
        if joint_frames:
            items.append(Frame(kin.E_wj[i], f"J{i + 1}", scale=scale, alpha=0.9))
        if body_frames:
            items.append(Frame(kin.E_wi[i], f"B{i + 1}", scale=0.7 * scale, alpha=0.7))
    if deformables:
        for d, x in enumerate(deformable_points(model, q)):
            color = SPRING_COLORS[d % len(SPRING_COLORS)]
            items.append(Path(x, model.deformables[d].name, color=color, width=1.5))
            items += [Marker(p, "", color=color) for p in x]
            points.append(x)
    if springs:
        for x, label in spring_points(model, kin.E_wi):
            items.append(Path(x, label, color="#7f7f7f", width=1.2, dashed=True))
            points.append(x)
    items += list(extra)
    if bounds is None:
        bounds = cube_bounds(np.concatenate(points), margin=scale)
    return Scene(tuple(items), np.asarray(bounds, dtype=float), title=title, notes=tuple(notes))


_PLANES = {"xy": (0, 1), "xz": (0, 2), "yz": (1, 2)}


def draw_model_planar(model, q, ax=None, *, plane="xz", color=None, label=None, **plot_options):
    """Draw ``model`` at ``q`` on 2D matplotlib axes, projected on a coordinate plane.

    For planar mechanisms a flat drawing reads better than a 3D view. Each body is drawn
    as in :func:`body_strokes` (its stick or shape), projected on ``plane``; then each
    deformable body as a line through its nodes with a dot on every node (one line per
    deformable, after the bodies' lines).

    Parameters
    ----------
    model : Model
    q : array_like, shape (model.nq,)
    ax : matplotlib Axes, optional
        A new figure's axes when None.
    plane : {"xz", "xy", "yz"}
    color : str, optional
        One colour for the whole model; by default each body gets its own (LINK_COLORS) and
        each deformable its own (SPRING_COLORS).
    label : str, optional
        Legend label (given to the first body only).
    **plot_options
        Passed to ``ax.plot`` (linewidth, linestyle, alpha, ...).

    Returns
    -------
    matplotlib Axes
        With equal aspect ratio.
    """
    import matplotlib.pyplot as plt

    if plane not in _PLANES:
        raise ValueError(f"argument 'plane' must be one of {sorted(_PLANES)}, got {plane!r}")
    a, b = _PLANES[plane]
    if ax is None:
        ax = plt.figure(figsize=(4, 4)).add_subplot()
    kin = forward_kinematics(model, model.check_state(q))
    plot_options.setdefault("linewidth", 2.5)
    for i in range(model.n):
        pts = body_strokes(model, kin, i)
        c = LINK_COLORS[i % len(LINK_COLORS)] if color is None else color
        ax.plot(pts[:, a], pts[:, b], color=c, label=label if i == 0 else None, **plot_options)
    spring_options = {**plot_options, "linewidth": 0.6 * plot_options["linewidth"]}
    for d, x in enumerate(deformable_points(model, q)):
        c = SPRING_COLORS[d % len(SPRING_COLORS)] if color is None else color
        ax.plot(x[:, a], x[:, b], color=c, marker="o", markersize=4, **spring_options)
    ax.set_aspect("equal")
    ax.set(xlabel=plane[0], ylabel=plane[1])
    return ax


def trajectory_scenes(model, t, q, *, max_frames=60, models=None, **scene_options):
    """Scenes of a motion ``(t, q)``, at most ``max_frames`` of them, evenly spaced in sample index.

    Parameters
    ----------
    model : Model
    t : array_like, shape (N,)
        Sample times.
    q : array_like, shape (N, model.nq)
        Coordinates at those times (a Trajectory's ``q``, or ``solve_ivp``'s ``y[:nq].T``).
    max_frames : int
    models : sequence of Model, length N, optional
        The model each sample is expressed in (a Trajectory's ``models``: they differ after a
        joint switched chart); by default ``model`` for every sample.
    **scene_options
        Passed to :func:`model_scene`; ``bounds`` defaults to one box around the whole motion.

    Returns
    -------
    list of Scene
        Each with the note ``"t = ... s"``.
    """
    t = np.asarray(t, dtype=float)
    q = np.asarray(q, dtype=float)
    if q.ndim != 2 or q.shape != (len(t), model.nq):
        raise ValueError(f"argument 'q' must have shape ({len(t)}, {model.nq}), got {q.shape}")
    max_frames = as_count(max_frames, "max_frames", "frames", MAX_FRAMES)
    if models is not None and len(models) != len(t):
        raise ValueError(f"argument 'models' must hold one model per sample ({len(t)}), got {len(models)}")
    picks = np.unique(np.round(np.linspace(0, len(t) - 1, min(max_frames, len(t)))).astype(int))
    scenes = [model_scene(model if models is None else models[k], q[k], notes=[f"t = {t[k]:.2f} s"],
                          **scene_options) for k in picks]
    if "bounds" not in scene_options:
        box = union_bounds(scenes)
        scenes = [Scene(s.items, box, s.title, s.notes) for s in scenes]
    return scenes


def trajectory_animation(model, t, q, *, max_frames=60, interval=None, elev=20, azim=-60,
                         figsize=(4.6, 4.6), plane=None, axes=True, dpi=72, models=None,
                         **scene_options):
    """An HTML player of the motion ``(t, q)`` (``FuncAnimation.to_jshtml``, no kernel needed).

    ``interval`` (ms per frame) defaults to real time. For a motion in the xz plane,
    ``elev=0, azim=-90`` looks at it face on, and ``plane="xz"`` draws it flat (like
    :func:`draw_model_planar`). ``axes=False`` hides ticks and panes: a frame then draws
    several times faster and weighs about half (:func:`redmax_edu.viz.player.light_player`,
    also used whenever ``plane`` is given). ``models`` as in :func:`trajectory_scenes`.
    Other options go to :func:`model_scene`. Display the result with ``IPython.display.HTML``.
    """
    scenes = trajectory_scenes(model, t, q, max_frames=max_frames, models=models, **scene_options)
    if interval is None:
        span = float(np.asarray(t)[-1] - np.asarray(t)[0])
        interval = int(max(20, round(1000 * span / max(len(scenes) - 1, 1))))
    if plane is None and axes:
        return animation_html(scenes, interval=interval, figsize=figsize, dpi=dpi, elev=elev, azim=azim)
    return light_player(scenes, plane=plane, axes=axes, interval=interval, figsize=figsize, dpi=dpi,
                        elev=elev, azim=azim)
