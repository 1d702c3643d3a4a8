"""Matplotlib rendering of a :class:`~redmax_edu.viz.scene.Scene` projected onto a plane.

A 3D picture on paper hides depth; when a motion is easier to read from one side, the
static figure of an explorer draws the same scene, made by the same library function,
seen straight along one world axis. The interactive layers keep the 3D view.
"""

import matplotlib.pyplot as plt
import numpy as np

from .scene import AXIS_COLORS, Arrow, Frame, Marker, Path

#: The world axes shown by each projection plane (the third axis points at the viewer).
PLANES = {"xy": (0, 1), "yz": (1, 2), "zx": (2, 0), "xz": (0, 2)}


def _plane_axes(plane):
    if not isinstance(plane, str) or plane not in PLANES:
        raise ValueError(f"argument 'plane' must be one of {sorted(PLANES)}, got {plane!r}")
    return PLANES[plane]


def draw_scene_planar(scene, ax=None, *, plane="xy", title=None, show_notes=True):
    """Draw ``scene`` projected onto a world coordinate plane; return the 2D axes.

    Parameters
    ----------
    scene : Scene
    ax : matplotlib Axes, optional
        A 2D axes; a new figure is made when None.
    plane : {"xy", "yz", "zx", "xz"}
        The two world axes kept, horizontal first ("xy" is the top view).
    title : str, optional
        Replaces the scene's own title.
    show_notes : bool
        Print the scene's notes under the axes.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from redmax_edu.viz.explorers import adjoint_scene, observer_pose
    >>> ax = draw_scene_planar(adjoint_scene(observer_pose(0.0)), plane="xy")
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('x', 'y')
    >>> plt.close("all")
    """
    h, v = _plane_axes(plane)
    if ax is None:
        fig = plt.figure(figsize=(6, 6.2))
        ax = fig.add_axes((0.12, 0.3, 0.84, 0.64))
    arrow = {"angles": "xy", "scale_units": "xy", "scale": 1.0, "width": 0.006}
    for item in scene.items:
        if isinstance(item, Frame):
            R, p = item.E[:3, :3], item.E[:3, 3]
            for k in range(3):
                u = item.scale * R[:, k]
                ax.quiver(p[h], p[v], u[h], u[v], color=AXIS_COLORS[k], alpha=item.alpha, **arrow)
            ax.annotate(item.label, (p[h], p[v]), xytext=(-4, -12), textcoords="offset points",
                        fontsize=8, alpha=item.alpha, ha="right")
        elif isinstance(item, Path):
            pts = np.asarray(item.points)
            ax.plot(pts[:, h], pts[:, v], color=item.color, linewidth=item.width,
                    linestyle="--" if item.dashed else "-", alpha=item.alpha, label=item.label or None)
        elif isinstance(item, Arrow):
            o, u = np.asarray(item.origin), np.asarray(item.vector)
            ax.quiver(o[h], o[v], u[h], u[v], color=item.color, label=item.label or None, **arrow)
        elif isinstance(item, Marker):
            ax.plot(item.position[h], item.position[v], "o", color=item.color, markersize=4)
            ax.annotate(item.label, (item.position[h], item.position[v]), xytext=(4, 4),
                        textcoords="offset points", fontsize=8, color=item.color)
        else:
            raise ValueError(f"cannot draw scene item of type {type(item).__name__}")
    names = "xyz"
    b = scene.bounds
    ax.set(xlim=b[h], ylim=b[v], xlabel=names[h], ylabel=names[v], aspect="equal")
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)
    ax.set_title(scene.title if title is None else title, fontsize=10)
    if show_notes and scene.notes:
        ax.text(0.0, -0.12, "\n".join(scene.notes), transform=ax.transAxes, va="top", fontsize=7.5,
                family="monospace")
    return ax


def draw_panels_planar(scenes, titles=None, *, plane="xy", ncols=3, panel_size=4.2, legend=True):
    """Several scenes side by side, each projected onto ``plane``. Returns the figure.

    The notes are not drawn; print them under the figure. With ``legend`` the labelled
    items of the first scene are listed once, under the panels.

    Examples
    --------
    >>> from redmax_edu.viz.explorers import adjoint_scene, observer_pose
    >>> fig = draw_panels_planar([adjoint_scene(observer_pose(s)) for s in (0.0, 0.5)], ncols=2)
    >>> len(fig.axes)
    2
    >>> plt.close(fig)
    """
    _plane_axes(plane)
    titles = [None] * len(scenes) if titles is None else list(titles)
    ncols = min(ncols, len(scenes))
    nrows = -(-len(scenes) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel_size * ncols, panel_size * nrows + 0.8 * legend),
                             squeeze=False)
    for ax, scene, title in zip(axes.ravel(), scenes, titles, strict=False):
        draw_scene_planar(scene, ax, plane=plane, title=title, show_notes=False)
    for ax in axes.ravel()[len(scenes):]:
        ax.remove()
    if legend:
        handles, labels = axes.ravel()[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncols=min(4, max(1, len(labels))), fontsize=8,
                   frameon=False)
        fig.tight_layout(rect=(0, 0.12 / nrows, 1, 1))
    else:
        fig.tight_layout()
    return fig
