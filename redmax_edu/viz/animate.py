"""Animations of rigid-body motions as self-contained HTML players (matplotlib's ``to_jshtml``).

A player stores its frames as images inside the page, so it works in the published book
without a kernel: play, pause and scrub. Keep animations short (a few dozen frames):
every frame is an image in the notebook. The frames are stored as palette PNGs of
:data:`FRAME_COLORS` colours, which line drawings on white need, at about a third of the
bytes of matplotlib's full-colour frames.
"""

import base64
import io
import re

import matplotlib.pyplot as plt
import numpy as np

from .draw import draw_scene
from .scene import Frame, Path, Scene, box_edges, cube_bounds, union_bounds

__all__ = ["bodies_scene", "ground_grid", "animation_html", "offline_player_html", "FRAME_COLORS"]

# matplotlib's player draws its buttons with Font Awesome icons loaded from a CDN; the book
# loads nothing from the network, so the buttons get plain-text glyphs instead.
_CDN_STYLESHEET = re.compile(r"<link[^>]*font-awesome[^>]*>", re.S)
_BUTTON_GLYPHS = {
    "fa fa-minus": "&minus;", "fa fa-fast-backward": "|&#9665;", "fa fa-step-backward": "&#9665;|",
    "fa fa-play fa-flip-horizontal": "&#9664;", "fa fa-pause": "||", "fa fa-play": "&#9654;",
    "fa fa-step-forward": "|&#9655;", "fa fa-fast-forward": "&#9655;|", "fa fa-plus": "+",
}

#: colours of a player's frame (a palette PNG); line drawings on white need few
FRAME_COLORS = 64
_PNG_FRAME = re.compile(r"data:image/png;base64,((?:[A-Za-z0-9+/=]|\\\n)+)")

BODY_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def ground_grid(center, half_width, *, normal=(0.0, 0.0, 1.0), point=(0.0, 0.0, 0.0), lines=5):
    """A square grid of lines on a plane, as one Path (NaN-separated strokes).

    The plane passes through ``point`` with unit ``normal``; the grid is centred at the
    projection of ``center`` on it.
    """
    n = np.asarray(normal, float) / np.linalg.norm(normal)
    t1 = np.cross([0.0, 1.0, 0.0], n) if abs(n[1]) < 0.9 else np.cross([1.0, 0.0, 0.0], n)
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(n, t1)
    c = np.asarray(center, float)
    c = c - ((c - np.asarray(point, float)) @ n) * n
    s = np.linspace(-half_width, half_width, lines)
    gap = np.full(3, np.nan)
    pts = []
    for a in s:
        pts += [c + a * t1 - half_width * t2, c + a * t1 + half_width * t2, gap]
        pts += [c + a * t2 - half_width * t1, c + a * t2 + half_width * t1, gap]
    return Path(np.array(pts), "ground", color="#bbbbbb", width=0.8)


def bodies_scene(E, bodies, *, title="", notes=(), extra=(), bounds=None, frame_scale=None):
    """A scene of rigid bodies drawn as their boxes with their body frames.

    Parameters
    ----------
    E : array_like, shape (n, 4, 4)
        Body poses.
    bodies : sequence of RigidBody
        Bodies with ``half_sizes`` (bodies without are drawn as frames only).
    title : str
    notes : sequence of str
    extra : sequence of scene items
        Drawn after the bodies (a ground grid, a path, a spring ...).
    bounds : array_like, shape (3, 2), optional
        The box to draw in; by default a cube around the bodies.
    frame_scale : float, optional
        Length of the drawn frame axes; by default half the largest body size.

    Returns
    -------
    Scene
    """
    E = np.asarray(E, float)
    items, corners = [], [E[:, :3, 3]]
    sizes = [b.half_sizes for b in bodies if b.half_sizes is not None]
    if frame_scale is None:
        frame_scale = max(float(np.max(s)) for s in sizes) if sizes else 0.2
    scale = frame_scale
    for k, (Ek, body) in enumerate(zip(E, bodies, strict=True)):
        if body.half_sizes is not None:
            edges = box_edges(Ek, body.half_sizes)
            items.append(Path(edges, body.name, color=BODY_COLORS[k % len(BODY_COLORS)], width=1.5))
            corners.append(edges[~np.isnan(edges[:, 0])])
        items.append(Frame(Ek, "", scale=scale, alpha=0.8))
    items += list(extra)
    if bounds is None:
        bounds = cube_bounds(np.concatenate(corners), margin=scale)
    bounds = np.asarray(bounds, float)
    return Scene(tuple(items), bounds, title=title, notes=tuple(notes))


def animation_html(scenes, *, interval=60, figsize=(4.6, 4.6), dpi=72, elev=20, azim=-60):
    """An HTML player (``FuncAnimation.to_jshtml``) that shows ``scenes`` one per frame.

    All frames share one box, the union of the scenes' bounds, so the camera stays still.

    Parameters
    ----------
    scenes : sequence of Scene
    interval : int
        Milliseconds per frame.
    figsize : tuple of float
    dpi : int
    elev, azim : float
        The 3D view angles.

    Returns
    -------
    str
        HTML with the frames inline; display it with ``IPython.display.HTML``.
    """
    from matplotlib.animation import FuncAnimation

    bounds = union_bounds(scenes)
    fig = plt.figure(figsize=figsize, dpi=dpi)
    ax = fig.add_subplot(projection="3d")

    def draw(k):
        ax.cla()
        scene = scenes[k]
        draw_scene(Scene(scene.items, bounds, scene.title, scene.notes), ax, show_notes=False)
        ax.view_init(elev=elev, azim=azim)
        if scene.notes:
            ax.text2D(0.02, 0.98, "\n".join(scene.notes), transform=ax.transAxes, va="top",
                      fontsize=8, family="monospace")
        return []

    animation = FuncAnimation(fig, draw, frames=len(scenes), interval=interval, blit=False)
    return offline_player_html(animation, fig, dpi=dpi)


def offline_player_html(animation, fig, dpi=None):
    """``animation.to_jshtml()`` for an offline page: the figure closed, no CDN stylesheet.

    The player's buttons use font-awesome icons from a CDN; they are replaced by plain
    Unicode glyphs so that the page loads nothing from the network. With ``dpi`` the frames
    are saved at that resolution (``to_jshtml`` otherwise uses ``savefig.dpi``). The frames
    are stored as palette PNGs of :data:`FRAME_COLORS` colours.
    """
    with plt.rc_context({} if dpi is None else {"savefig.dpi": dpi}):
        html = animation.to_jshtml(default_mode="loop")
    plt.close(fig)
    html = _CDN_STYLESHEET.sub("", html)
    for icon, glyph in _BUTTON_GLYPHS.items():
        html = html.replace(f'<i class="{icon}"></i>', glyph)
    return _PNG_FRAME.sub(_palette_frame, html)


def _palette_frame(match):
    """One ``data:`` PNG frame of a player again, as a palette PNG when that is smaller."""
    from PIL import Image

    raw = base64.b64decode(match.group(1).replace("\\\n", ""))
    image = Image.open(io.BytesIO(raw)).convert("RGB")
    buffer = io.BytesIO()
    image.quantize(FRAME_COLORS, method=Image.Quantize.MEDIANCUT).save(buffer, "png", optimize=True)
    png = buffer.getvalue() if len(buffer.getvalue()) < len(raw) else raw
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
