"""The scene gallery's plumbing: run a reference scene with each of its integrators, measure
how its energy moves, plot that, and animate the motion.

The measures are the ones the claims tests use (``tests/claims/test_ch2_scenes.py``):

* the **energy scale** of a run is the energy that moves around in it, the larger of
  ``max T`` and ``max |V - V(0)|``;
* the **drift** is the largest change of ``H = T + V - V(0)`` over the run, relative to that
  scale (zero for an exact conservative motion);
* the **net change** is ``H`` at the end, relative to the same scale (its sign says whether
  the integrator ended with more or less energy than it started with).

Taught in book/02_reduced/gallery (the scene gallery).
"""

import hashlib
import json

import matplotlib.pyplot as plt
import numpy as np

from .. import scenes
from .player import PLANES, scene_polylines
from .scene import union_bounds

__all__ = ["METHOD_LABELS", "ROUNDOFF", "run", "energy_scale", "drift", "net_change", "measure_text",
           "verdict", "verdict_is_portable", "motion_plane", "plot_energies", "animate", "vector_player",
           "show_scenes", "verdict_table", "summary"]

#: Relative energy changes below this are round-off (or RK45 integrating a polynomial motion
#: exactly): the pages print the bound, never their digits, which differ from computer to computer.
ROUNDOFF = 1e-9

#: How the pages name the integrators of :func:`redmax_edu.integrators.simulate` they show.
METHOD_LABELS = {"rk45": "RK45", "euler": "linearly implicit Euler"}
_SHORT = {"rk45": "RK45", "euler": "Euler"}
_METHOD_COLORS = {"rk45": "#2ca02c", "euler": "#d62728"}
_ENERGY_STYLES = (("T", "kinetic T", "#1f77b4", 1.2), ("V", "V - V(0)", "#ff7f0e", 1.2),
                  ("H", "H = T + V - V(0)", "black", 2.0))


def run(scene_id, t_span=None, **options):
    """Simulate reference scene ``scene_id`` once with each integrator the reference runs it with.

    Parameters
    ----------
    scene_id : int
    t_span : (float, float), optional
        Default: the scene's reference span.
    **options
        Passed to :meth:`redmax_edu.scenes.Scene.simulate` (for example ``h`` for Euler).

    Returns
    -------
    dict of str to Trajectory
        Keyed by method, for the methods of :data:`METHOD_LABELS` the reference runs the scene
        with (``"rk45"`` first when the scene has it, then ``"euler"``).
    """
    s = scenes.scene(scene_id)
    return {m: s.simulate(m, t_span=t_span, **options) for m in s.integrators if m in METHOD_LABELS}


def energy_scale(tr):
    """The energy that moves around in a run: ``max(max T, max |V - V(0)|)`` (J)."""
    return float(max(tr.T.max(), np.abs(tr.V - tr.V[0]).max()))


def drift(tr):
    """The largest change of ``H`` over the run, relative to :func:`energy_scale`."""
    return float(np.abs(tr.H - tr.H[0]).max() / energy_scale(tr))


def net_change(tr):
    """``H`` at the end minus at the start, relative to :func:`energy_scale` (signed)."""
    return float((tr.H[-1] - tr.H[0]) / energy_scale(tr))


def measure_text(x, *, percent=False, signed=False):
    """A drift or net change (a fraction of the energy scale) as the pages print it.

    Two significant digits (``9.0e-04``, ``0.26``; with ``percent``, ``-26%``), far above
    the round-off of the runs; a value of magnitude below :data:`ROUNDOFF` prints as that
    bound (``"below 1e-09"``), since its digits and sign are round-off.

    Examples
    --------
    >>> measure_text(0.2612), measure_text(9.04e-4), measure_text(-0.0045, percent=True, signed=True)
    ('0.26', '9.0e-04', '-0.45%')
    >>> measure_text(-5.3e-16, percent=True, signed=True)
    'below 1e-09'
    """
    x = float(x)
    if abs(x) < ROUNDOFF:
        return f"below {ROUNDOFF:.0e}"
    sign = "+" if signed else ""
    if percent:
        return f"{100 * x:{sign}.2g}%"
    if abs(x) < 0.01:
        return f"{x:{sign}.1e}"
    return f"{x:{sign}#.2g}" if abs(x) < 10 else f"{x:{sign}.0f}"


def _verdict_of(method, d, c):
    net = measure_text(c, percent=True, signed=True)
    return f"{_SHORT[method]} drift {measure_text(d)}, {'|net|' if net.startswith('below') else 'net'} {net}"


def verdict(runs):
    """One line that sums up the energy of each run, relative to its energy scale, e.g.
    ``"RK45 drift 9.0e-04, net -0.045%; Euler drift 0.26, net -26%"``.

    Measures at round-off level print as a bound (:func:`measure_text`), e.g.
    ``"RK45 drift below 1e-09, |net| below 1e-09"``: the energy error of an exact integration.
    """
    return "; ".join(_verdict_of(m, drift(tr), net_change(tr)) for m, tr in runs.items())


def verdict_is_portable(runs, rel=1e-6):
    """True when :func:`verdict` prints the same line for every measure changed by a factor
    ``1 +- rel``: no printed digit sits at a rounding boundary that round-off (another CPU,
    another BLAS) could push across. ``rel = 1e-6`` is many orders above the differences
    between computers (about 1e-12 relative after a few seconds of simulation).
    """
    measures = [(m, drift(tr), net_change(tr)) for m, tr in runs.items()]
    texts = {"; ".join(_verdict_of(m, d * f, c * f) for m, d, c in measures)
             for f in (1 - rel, 1.0, 1 + rel)}
    return len(texts) == 1


def motion_plane(scene_list, rtol=1e-9):
    """The coordinate plane a drawn motion stays in, or None for a motion in 3D.

    A motion is planar in, say, ``"xz"`` when every drawn point keeps its own y coordinate
    in every scene (the bodies may be thick in y; they must not move in y). When two planes
    qualify (a motion along a line), the first of ``"xz"``, ``"yz"``, ``"xy"`` is chosen.

    Parameters
    ----------
    scene_list : sequence of Scene
        Made by one function (:func:`redmax_edu.viz.reduced.trajectory_scenes`).
    rtol : float
        Allowed movement out of the plane, relative to the size of the drawing box.
    """
    points = np.array([np.concatenate([p for p, _ in scene_polylines(s)]) for s in scene_list])
    size = float(np.ptp(scene_list[0].bounds, axis=1).max())
    moved = np.nanmax(np.abs(points - points[:1]), axis=(0, 1))
    for plane in ("xz", "yz", "xy"):
        normal = ({0, 1, 2} - set(PLANES[plane])).pop()
        if moved[normal] <= rtol * size:
            return plane
    return None


def plot_energies(runs, *, title="", figsize=None, dpi=None):
    """Energy plots of the runs of one scene: T, V - V(0) and H over time, one panel per run
    on a shared energy axis, and a last panel that zooms on ``H - H(0)`` of every run,
    relative to its energy scale (where a drift of 1e-3 and one of 0.3 both show).

    Parameters
    ----------
    runs : dict of str to Trajectory
        As returned by :func:`run`.
    title : str
    figsize : tuple of float, optional
        Default 2.6 inches wide per panel, 2.3 high.
    dpi : float, optional
        Default: matplotlib's.

    Returns
    -------
    matplotlib.figure.Figure
    """
    n = len(runs)
    fig = plt.figure(figsize=figsize or (2.6 * (n + 1), 2.3), dpi=dpi)
    grid = fig.add_gridspec(1, n + 1, wspace=0.35)
    first = None
    for k, (method, tr) in enumerate(runs.items()):
        ax = fig.add_subplot(grid[0, k], sharey=first)
        first = first or ax
        for key, label, color, width in _ENERGY_STYLES:
            y = {"T": tr.T, "V": tr.V - tr.V[0], "H": tr.H}[key]
            ax.plot(tr.t, y, color=color, linewidth=width, label=label)
        step = f", h = {tr.h:g} s" if tr.h else ""
        ax.set_title(f"{_SHORT[method]}{step}", fontsize=9)
        ax.set_xlabel("t (s)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 3))
        ax.yaxis.get_offset_text().set_fontsize(7)
    first.set_ylabel("energy (J)", fontsize=8)
    zoom = fig.add_subplot(grid[0, n])
    for method, tr in runs.items():
        zoom.plot(tr.t, (tr.H - tr.H[0]) / energy_scale(tr), color=_METHOD_COLORS[method],
                  linewidth=1.5, label=f"{_SHORT[method]} (drift {measure_text(drift(tr))})")
    zoom.axhline(0.0, color="#999999", linewidth=0.8)
    zoom.set_title("H - H(0), zoomed", fontsize=9)
    zoom.set_ylabel("/ energy scale", fontsize=8)
    zoom.set_xlabel("t (s)", fontsize=8)
    zoom.tick_params(labelsize=7)
    zoom.ticklabel_format(axis="y", style="sci", scilimits=(-2, 3))
    zoom.yaxis.get_offset_text().set_fontsize(7)
    zoom.legend(fontsize=7, loc="best")
    handles, labels = first.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.subplots_adjust(left=0.07 if n > 1 else 0.1, right=0.98, bottom=0.3, top=0.76 if title else 0.82)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def _view_axes(plane, elev, azim):
    """The world directions of a drawing's right and up (2, 3): a coordinate plane, or the
    orthographic 3D view of matplotlib's ``view_init(elev, azim)``."""
    if plane is not None:
        a, b = PLANES[plane]
        return np.eye(3)[[a, b]]
    e, a = np.radians(elev), np.radians(azim)
    return np.array([[-np.sin(a), np.cos(a), 0.0],
                     [-np.sin(e) * np.cos(a), -np.sin(e) * np.sin(a), np.cos(e)]])


def _floor_outline(bounds):
    (x0, x1), (y0, y1), (z0, _) = bounds
    return np.array([[x0, y0, z0], [x1, y0, z0], [x1, y1, z0], [x0, y1, z0], [x0, y0, z0]])


_PLAYER_SCRIPT = """(function(){var D=%s,c=document.getElementById(D.id+"-c"),x=c.getContext("2d"),
s=document.getElementById(D.id+"-s"),b=document.getElementById(D.id+"-b"),n=document.getElementById(D.id+"-n"),
k=0,timer=null;function poly(p){x.beginPath();var m=true;for(var i=0;i<p.length;i+=2){if(p[i]===null){m=true;
continue;}if(m){x.moveTo(p[i],p[i+1]);m=false;}else{x.lineTo(p[i],p[i+1]);}}x.stroke();}
function draw(){x.clearRect(0,0,c.width,c.height);x.globalAlpha=1;x.setLineDash([]);x.strokeStyle="#cccccc";
x.lineWidth=0.8;D.fixed.forEach(poly);D.styles.forEach(function(st,j){var p=D.frames[k][j];
x.globalAlpha=st[3];x.strokeStyle=st[0];x.fillStyle=st[0];x.lineWidth=st[1];x.setLineDash(st[2]?[4,3]:[]);if(st[4]){
for(var i=0;i<p.length;i+=2){if(p[i]!==null){x.beginPath();x.arc(p[i],p[i+1],2,0,6.2832);x.fill();}}}
else{poly(p);}});n.textContent=D.notes[k];s.value=k;}
s.oninput=function(){k=+s.value;draw();};b.onclick=function(){if(timer){clearInterval(timer);timer=null;
b.textContent="\u25B6";}else{b.textContent="\u275A\u275A";timer=setInterval(function(){k=(k+1)%%D.frames.length;
draw();},D.interval);}};draw();})();"""


def vector_player(scene_list, *, plane=None, elev=20, azim=-60, size=260, interval=None, label=""):
    """A light HTML player of a sequence of scenes, drawn as lines on a canvas by a few lines of
    JavaScript: play/pause button and slider, no kernel, no image per frame.

    Each frame stores only the projected points of its polylines (whole pixels), so a
    player of 48 frames weighs a few tens of kilobytes where one PNG per frame weighs
    hundreds. Lines only: no shading, no depth order (enough for bars, boxes and springs).

    Parameters
    ----------
    scene_list : sequence of Scene
        Made by one function, so that their items correspond (same types, same order).
    plane : {None, "xy", "xz", "yz"}
        Draw flat on that coordinate plane; None: an orthographic 3D view from ``elev``,
        ``azim`` (degrees, as matplotlib's ``view_init``) with the floor of the box outlined.
    size : int
        Width and height of the canvas, pixels.
    interval : int, optional
        Milliseconds per frame (default 60; :func:`animate` passes real time).
    label : str
        Text under the canvas (the box width and the view are added).

    Returns
    -------
    str
        HTML with one ``<canvas>`` and an inline script; display it with ``IPython.display.HTML``.

    Examples
    --------
    >>> from redmax_edu.viz.scene import Path, Scene
    >>> box = np.array([[-1.0, 1.0]] * 3)
    >>> frames = [Scene((Path(np.array([[0, 0, 0], [np.cos(a), 0, np.sin(a)]]), "rod"),), box)
    ...           for a in np.linspace(0, 1, 3)]
    >>> html = vector_player(frames, plane="xz")
    >>> "<canvas" in html, "data:image" in html, "cdn" in html
    (True, False, False)
    """
    if not scene_list:
        raise ValueError("argument 'scene_list' must hold at least one scene")
    if plane is not None and plane not in PLANES:
        raise ValueError(f"argument 'plane' must be None or one of {sorted(PLANES)}, got {plane!r}")
    size = int(size)
    if not 50 <= size <= 2000:
        raise ValueError(f"argument 'size' must be between 50 and 2000 pixels, got {size}")
    polylines = [scene_polylines(sc) for sc in scene_list]
    if len({len(p) for p in polylines}) != 1:
        raise ValueError("argument 'scene_list': the scenes have different items; "
                         "make them with one function")
    bounds = union_bounds(scene_list)
    view = _view_axes(plane, elev, azim)
    corners = np.array([[x, y, z] for x in bounds[0] for y in bounds[1] for z in bounds[2]]) @ view.T
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    scale = 0.92 * size / float(max(hi - lo))
    centre = 0.5 * (lo + hi)

    def pixels(points):
        uv = (np.asarray(points, dtype=float) @ view.T - centre) * scale
        flat = []
        for u, v in uv:
            if np.isnan(u) or np.isnan(v):
                flat += [None, None]
            else:
                flat += [int(round(0.5 * size + u)), int(round(0.5 * size - v))]
        return flat

    styles = []
    for _, st in polylines[0]:
        marker = bool(st.get("marker"))
        styles.append([st.get("color", "black"), float(st.get("linewidth", 1.0)),
                       st.get("linestyle") == "--", float(st.get("alpha") or 1.0), marker])
    frames = [[pixels(pts) for pts, _ in frame] for frame in polylines]
    fixed = [] if plane is not None else [pixels(_floor_outline(bounds))]
    width = float(bounds[0, 1] - bounds[0, 0])
    where = f"{plane} plane" if plane else "3D view"
    text = ", ".join(t for t in (label, f"{where}, box {width:.2g} m wide") if t)
    data = {"frames": frames, "styles": styles, "fixed": fixed,
            "notes": [" ".join(sc.notes) for sc in scene_list], "interval": int(interval or 60)}
    payload = json.dumps(data, separators=(",", ":"))
    uid = "rmxp-" + hashlib.sha1(payload.encode()).hexdigest()[:12]
    data["id"] = uid
    payload = json.dumps(data, separators=(",", ":"))
    return (f'<div style="display:inline-block;font:12px monospace;color:#444">'
            f'<canvas id="{uid}-c" width="{size}" height="{size}" style="border:1px solid #ddd"></canvas><br>'
            f'<button id="{uid}-b" style="width:3em">&#9654;</button> '
            f'<input id="{uid}-s" type="range" min="0" max="{len(frames) - 1}" value="0" '
            f'style="width:{size - 110}px;vertical-align:middle"> <span id="{uid}-n"></span>'
            f'<div style="color:#777">{text}</div></div>'
            f"<script>{_PLAYER_SCRIPT % payload}</script>")


def animate(scene, tr, *, max_frames=48, size=260, elev=20, azim=-60):
    """A light HTML player of one run of a scene: its bodies' shapes, springs, deformables.

    Planar motions are drawn flat on their plane (:func:`motion_plane`), others in an
    orthographic 3D view; the box is fixed for the whole run. ``tr`` is a Trajectory of
    ``scene``. The player is a :func:`vector_player` (lines on a canvas, real time).
    """
    from .reduced import trajectory_scenes

    bare = trajectory_scenes(scene.model, tr.t, tr.q, max_frames=max_frames, models=tr.models,
                             joint_frames=False, world_frame=False)
    plane = motion_plane(bare)
    # the world frame's axes a tenth of the box: a scene's own length scale can be far off
    # (a lone body whose frames all coincide has none)
    width = float(np.ptp(bare[0].bounds, axis=1).max())
    frames = trajectory_scenes(scene.model, tr.t, tr.q, max_frames=max_frames, models=tr.models,
                               joint_frames=False, world_frame=True, frame_scale=0.1 * width)
    span = float(tr.t[-1] - tr.t[0])
    interval = int(max(20, round(1000 * span / max(len(frames) - 1, 1))))
    return vector_player(frames, plane=plane, elev=elev, azim=azim, size=size, interval=interval,
                         label=f"scene {scene.id}")


def show_scenes(scene_ids, *, runs_of=None, frames=48, size=260, dpi=80):
    """Show each scene of a list: a heading, a player of its motion, its verdict and its
    energy figure (the gallery pages' one display cell).

    The player shows the RK45 run where the reference runs the scene with RK45, else the
    Euler run. Needs IPython.

    Parameters
    ----------
    scene_ids : sequence of int
    runs_of : callable ``scene_id -> dict of runs``, optional
        Default :func:`run` at the reference span.
    frames : int
        Frames per player.
    size : int
        Player canvas, pixels.
    dpi : float
        Of the energy figures.

    Returns
    -------
    dict of int to dict of runs
        The runs, by scene id (for further checks on the page).
    """
    from IPython.display import HTML, display

    runs_of = run if runs_of is None else runs_of
    out = {}
    for sid in scene_ids:
        s = scenes.scene(sid)
        runs = out[sid] = runs_of(sid)
        shown = "rk45" if "rk45" in runs else next(iter(runs))
        display(HTML(f"<h4>Scene {sid}: {s.name}</h4>"))
        display(HTML(animate(s, runs[shown], max_frames=frames, size=size)))
        print(f"scene {sid}: {verdict(runs)}")
        fig = plot_energies(runs, title=f"scene {sid} ({METHOD_LABELS[shown]} in the player)", dpi=dpi)
        display(fig)
        plt.close(fig)
    return out


def verdict_table(scene_ids, runs_of=None):
    """The verdicts of a list of scenes, one line each (a page's closing table), as a string."""
    runs_of = run if runs_of is None else runs_of
    return "\n".join(f"scene {sid:3d}: {verdict(runs_of(sid))}" for sid in scene_ids)


def summary(scene_ids, runs_of=None):
    """The measured outcome per scene and integrator, as rows of a table.

    Parameters
    ----------
    scene_ids : sequence of int
    runs_of : callable ``scene_id -> dict of runs``, optional
        Default :func:`run` at the reference span.

    Returns
    -------
    list of dict
        Keys ``id``, ``name``, ``rk45`` and ``euler`` (each a ``(drift, net_change)`` pair or
        None when the scene does not run with that integrator).
    """
    runs_of = run if runs_of is None else runs_of
    rows = []
    for sid in scene_ids:
        runs = runs_of(sid)
        row = {"id": sid, "name": scenes.scene(sid).name}
        for method in METHOD_LABELS:
            row[method] = (drift(runs[method]), net_change(runs[method])) if method in runs else None
        rows.append(row)
    return rows
