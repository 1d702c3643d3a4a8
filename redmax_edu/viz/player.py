"""Light animation players: a sequence of scenes drawn by moving artists, not by redrawing.

:func:`redmax_edu.viz.animate.animation_html` clears and redraws a whole 3D axes for every
frame, ticks and panes included, which is the right thing for a few frames with labelled
axes. A gallery page with twenty motions needs something lighter: :func:`light_player`
creates each line once and only moves it, hides the ticks (their layout is most of the cost
of a frame, and their text most of its bytes), and can flatten a planar motion onto its
plane. Same result, a scrubbable ``to_jshtml`` player that needs no kernel, at about a
fifth of the time and size.

Used by :func:`redmax_edu.viz.reduced.trajectory_animation` (``plane=...`` or ``axes=False``).
"""

import matplotlib.pyplot as plt
import numpy as np

from .animate import offline_player_html
from .scene import AXIS_COLORS, Arrow, Frame, Marker, Path, union_bounds

__all__ = ["PLANES", "light_player", "scene_polylines"]

#: The coordinate planes a planar motion can be flattened onto: the two world axes kept.
PLANES = {"xy": (0, 1), "xz": (0, 2), "yz": (1, 2)}


def scene_polylines(scene):
    """Every item of a scene as polylines with their style, in item order.

    Frames become their three axes (one line each, no arrow head), arrows a segment,
    markers a single point. The count and order depend only on the items' types, so the
    polylines of a sequence of scenes made by one function correspond one to one.

    Returns
    -------
    list of (points, style)
        ``points`` shape (N, 3); ``style`` a dict of matplotlib ``plot`` options.
    """
    out = []
    for item in scene.items:
        if isinstance(item, Path):
            style = {"color": item.color, "linewidth": item.width, "alpha": item.alpha,
                     "linestyle": "--" if item.dashed else "-"}
            out.append((np.asarray(item.points, dtype=float), style))
        elif isinstance(item, Frame):
            R, p = item.E[:3, :3], item.E[:3, 3]
            for k in range(3):
                out.append((np.array([p, p + item.scale * R[:, k]]),
                            {"color": AXIS_COLORS[k], "alpha": item.alpha, "linewidth": 1.5}))
        elif isinstance(item, Arrow):
            o = np.asarray(item.origin, dtype=float)
            out.append((np.array([o, o + np.asarray(item.vector, dtype=float)]),
                        {"color": item.color, "linewidth": 2.0}))
        elif isinstance(item, Marker):
            out.append((np.asarray(item.position, dtype=float).reshape(1, 3),
                        {"color": item.color, "marker": "o", "markersize": 3.5, "linestyle": ""}))
        else:
            raise ValueError(f"cannot draw scene item of type {type(item).__name__}")
    return out


def _floor(bounds):
    """The outline and centre lines of the bottom face of a 3D box, as one NaN-separated polyline."""
    (x0, x1), (y0, y1), (z0, _) = bounds
    xm, ym = 0.5 * (x0 + x1), 0.5 * (y0 + y1)
    gap = [np.nan] * 3
    return np.array([[x0, y0, z0], [x1, y0, z0], [x1, y1, z0], [x0, y1, z0], [x0, y0, z0], gap,
                     [xm, y0, z0], [xm, y1, z0], gap, [x0, ym, z0], [x1, ym, z0]])


def light_player(scenes, *, plane=None, axes=False, interval=60, figsize=(3.4, 3.4), dpi=72,
                 elev=20, azim=-60, title=""):
    """An HTML player (``FuncAnimation.to_jshtml``) of ``scenes`` that moves its lines.

    Parameters
    ----------
    scenes : sequence of Scene
        Made by one function, so that their items correspond (same types, same order).
    plane : {None, "xy", "xz", "yz"}
        None: a 3D view from ``elev``, ``azim``. A plane: the scenes projected on it, for a
        motion that stays in that plane.
    axes : bool
        Show ticks and, in 3D, the grey panes. Off by default: without them a frame draws
        several times faster and its image is half the size. The width of the box is then
        written in a corner instead, and a 3D view gets the outline of its floor.
    interval : int
        Milliseconds per frame.
    figsize : tuple of float
    dpi : int
    elev, azim : float
        The 3D view angles (unused with ``plane``).
    title : str

    Returns
    -------
    str
        HTML with the frames inline (PNG); display it with ``IPython.display.HTML``.

    Examples
    --------
    >>> from redmax_edu.viz.scene import Scene
    >>> box = np.array([[-1.0, 1.0]] * 3)
    >>> scenes = [Scene((Path(np.array([[0, 0, 0], [np.cos(a), 0, np.sin(a)]]), "rod"),), box)
    ...           for a in np.linspace(0, 1, 3)]
    >>> html = light_player(scenes, plane="xz")
    >>> html.count("data:image/png"), "cdnjs" in html
    (3, False)
    """
    from matplotlib.animation import FuncAnimation

    if not scenes:
        raise ValueError("argument 'scenes' must hold at least one scene")
    if plane is not None and plane not in PLANES:
        raise ValueError(f"argument 'plane' must be None or one of {sorted(PLANES)}, got {plane!r}")
    polylines = [scene_polylines(s) for s in scenes]
    if len({len(p) for p in polylines}) != 1:
        raise ValueError("argument 'scenes': the scenes have different items; make them with one function")
    bounds = union_bounds(scenes)
    fig = plt.figure(figsize=figsize, dpi=dpi)
    if plane is None:
        ax = fig.add_axes((0.0, 0.0, 1.0, 0.94), projection="3d")
        ax.set(xlim=bounds[0], ylim=bounds[1], zlim=bounds[2])
        ax.set_box_aspect((1, 1, 1))
        ax.view_init(elev=elev, azim=azim)
        if axes:
            ax.set(xlabel="x", ylabel="y", zlabel="z")
            ax.locator_params(nbins=4)
            ax.tick_params(labelsize=7)
        else:
            ax.set_axis_off()
            floor = _floor(bounds)
            ax.plot(*floor.T, color="#cccccc", linewidth=0.8)
        lines = [ax.plot(*pts.T, **style)[0] for pts, style in polylines[0]]
        note = ax.text2D(0.02, 0.98, "", transform=ax.transAxes, va="top", fontsize=8,
                         family="monospace")
    else:
        a, b = PLANES[plane]
        ax = fig.add_axes((0.04, 0.04, 0.92, 0.88))
        ax.set(xlim=bounds[a], ylim=bounds[b], aspect="equal")
        ax.grid(False)
        if axes:
            ax.set(xlabel=plane[0], ylabel=plane[1])
            ax.tick_params(labelsize=7)
        else:
            ax.set_xticks([])
            ax.set_yticks([])
        lines = [ax.plot(pts[:, a], pts[:, b], **style)[0] for pts, style in polylines[0]]
        note = ax.text(0.02, 0.98, "", transform=ax.transAxes, va="top", fontsize=8,
                       family="monospace")
    if not axes:
        width = bounds[0, 1] - bounds[0, 0]
        where = f"{plane} plane, " if plane else ""
        put = ax.text2D if plane is None else ax.text
        put(0.98, 0.02, f"{where}box {width:.2g} m wide", transform=ax.transAxes, ha="right",
            va="bottom", fontsize=7, color="#666666")
    if title:
        fig.suptitle(title, fontsize=9, y=0.99)

    def draw(k):
        for line, (pts, _) in zip(lines, polylines[k], strict=True):
            if plane is None:
                line.set_data_3d(pts[:, 0], pts[:, 1], pts[:, 2])
            else:
                line.set_data(pts[:, a], pts[:, b])
        note.set_text("\n".join(scenes[k].notes))
        return []

    draw(0)
    animation = FuncAnimation(fig, draw, frames=len(scenes), interval=interval, blit=False)
    return offline_player_html(animation, fig, dpi)
