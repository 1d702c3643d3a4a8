"""Matplotlib rendering of :class:`~redmax_edu.viz.scene.Scene` objects: the static figures."""

import matplotlib.pyplot as plt
import numpy as np

from .scene import AXIS_COLORS, Arrow, Frame, Marker, Path


def draw_scene(scene, ax=None, *, title=None, show_notes=True):
    """Draw a scene on a 3D matplotlib axes and return the axes.

    A new figure is made when ``ax`` is None. ``title`` replaces the scene's own title; the
    scene's notes are printed under the axes.
    """
    if ax is None:
        fig = plt.figure(figsize=(6, 6.2))
        ax = fig.add_axes((0.05, 0.25, 0.9, 0.72), projection="3d")
    for item in scene.items:
        if isinstance(item, Frame):
            R, p = item.E[:3, :3], item.E[:3, 3]
            for k in range(3):
                u = item.scale * R[:, k]
                ax.quiver(*p, *u, color=AXIS_COLORS[k], alpha=item.alpha, arrow_length_ratio=0.15,
                          linewidth=1.5)
            ax.text(*(p - 0.12 * item.scale * R.sum(axis=1)), item.label, fontsize=8, alpha=item.alpha)
        elif isinstance(item, Path):
            pts = np.asarray(item.points)
            ax.plot(pts[:, 0], pts[:, 1], pts[:, 2], color=item.color, linewidth=item.width,
                    linestyle="--" if item.dashed else "-", alpha=item.alpha, label=item.label)
        elif isinstance(item, Arrow):
            ax.quiver(*item.origin, *item.vector, color=item.color, arrow_length_ratio=0.2, linewidth=2,
                      label=item.label)
        elif isinstance(item, Marker):
            ax.scatter(*item.position, color=item.color, s=25, depthshade=False)
            ax.text(*item.position, "  " + item.label, fontsize=8, color=item.color)
        else:
            raise ValueError(f"cannot draw scene item of type {type(item).__name__}")
    b = scene.bounds
    ax.set(xlim=b[0], ylim=b[1], zlim=b[2], xlabel="x", ylabel="y", zlabel="z")
    ax.set_box_aspect((1, 1, 1))
    ax.locator_params(nbins=4)
    ax.tick_params(labelsize=7)
    ax.set_title(scene.title if title is None else title, fontsize=10)
    if show_notes and scene.notes:
        ax.text2D(0.02, -0.08, "\n".join(scene.notes), transform=ax.transAxes, va="top", fontsize=7.5,
                  family="monospace")
    return ax


def draw_panels(scenes, titles=None, *, ncols=3, panel_size=4.2):
    """Several scenes side by side: the static figure of an explorer. Returns the figure.

    The scenes' notes are not drawn (at this size they would be unreadable); print them
    under the figure instead, e.g. ``print(scene.notes)``.

    Parameters
    ----------
    scenes : sequence of Scene
    titles : sequence of str, optional
        Panel titles; by default each scene's own title.
    ncols : int
    panel_size : float
        Width and height of one 3D panel, in inches.

    Returns
    -------
    matplotlib.figure.Figure
    """
    titles = [None] * len(scenes) if titles is None else list(titles)
    ncols = min(ncols, len(scenes))
    nrows = -(-len(scenes) // ncols)
    fig = plt.figure(figsize=(panel_size * ncols, panel_size * nrows))
    for k, (scene, title) in enumerate(zip(scenes, titles, strict=True)):
        draw_scene(scene, fig.add_subplot(nrows, ncols, k + 1, projection="3d"), title=title,
                   show_notes=False)
    fig.subplots_adjust(left=0.02, right=0.98, bottom=0.05, top=0.93, wspace=0.08)
    return fig
