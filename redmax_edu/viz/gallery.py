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

import matplotlib.pyplot as plt
import numpy as np

from .. import scenes
from .player import PLANES, scene_polylines
from .reduced import trajectory_animation, trajectory_scenes

__all__ = ["METHOD_LABELS", "run", "energy_scale", "drift", "net_change", "verdict", "motion_plane",
           "plot_energies", "animate", "summary"]

#: How the pages name the integrators of :func:`redmax_edu.integrators.simulate`.
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
        Keyed by method (``"rk45"`` first when the scene has it, then ``"euler"``).
    """
    s = scenes.scene(scene_id)
    return {m: s.simulate(m, t_span=t_span, **options) for m in s.integrators}


def energy_scale(tr):
    """The energy that moves around in a run: ``max(max T, max |V - V(0)|)`` (J)."""
    return float(max(tr.T.max(), np.abs(tr.V - tr.V[0]).max()))


def drift(tr):
    """The largest change of ``H`` over the run, relative to :func:`energy_scale`."""
    return float(np.abs(tr.H - tr.H[0]).max() / energy_scale(tr))


def net_change(tr):
    """``H`` at the end minus at the start, relative to :func:`energy_scale` (signed)."""
    return float((tr.H[-1] - tr.H[0]) / energy_scale(tr))


def verdict(runs):
    """One line that sums up the energy of each run, relative to its energy scale, e.g.
    ``"RK45 drift 9.0e-04, net -0.045%; Euler drift 0.26, net -26%"``.
    """
    parts = []
    for method, tr in runs.items():
        d, c = drift(tr), net_change(tr)
        text = f"{_SHORT[method]} drift {d:.1e}" if d < 0.01 else f"{_SHORT[method]} drift {d:.2g}"
        parts.append(f"{text}, net {100 * c:+.2g}%")
    return "; ".join(parts)


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


def plot_energies(runs, *, title="", figsize=None):
    """Energy plots of the runs of one scene: T, V - V(0) and H over time, one panel per run
    on a shared energy axis, and a last panel that zooms on ``H - H(0)`` of every run,
    relative to its energy scale (where a drift of 1e-3 and one of 0.3 both show).

    Parameters
    ----------
    runs : dict of str to Trajectory
        As returned by :func:`run`.
    title : str
    figsize : tuple of float, optional
        Default 3 inches wide per panel, 2.7 high.

    Returns
    -------
    matplotlib.figure.Figure
    """
    n = len(runs)
    fig = plt.figure(figsize=figsize or (3.0 * (n + 1), 2.7))
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
                  linewidth=1.5, label=f"{_SHORT[method]} (drift {drift(tr):.1e})")
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
    fig.subplots_adjust(left=0.07 if n > 1 else 0.1, right=0.98, bottom=0.3, top=0.82)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def animate(scene, tr, *, max_frames=48, figsize=(3.4, 3.4), dpi=72, elev=20, azim=-60):
    """A light HTML player of one run of a scene: its bodies' shapes, springs, deformables.

    Planar motions are drawn flat on their plane (:func:`motion_plane`), others in 3D; the
    box is fixed for the whole run. ``tr`` is a Trajectory of ``scene``.
    """
    bare = trajectory_scenes(scene.model, tr.t, tr.q, max_frames=max_frames, models=tr.models,
                             joint_frames=False, world_frame=False)
    plane = motion_plane(bare)
    # the world frame's axes a tenth of the box: a scene's own length scale can be far off
    # (a lone body whose frames all coincide has none)
    width = float(np.ptp(bare[0].bounds, axis=1).max())
    options = dict(joint_frames=False, world_frame=True, frame_scale=0.1 * width)
    return trajectory_animation(scene.model, tr.t, tr.q, max_frames=max_frames, models=tr.models,
                                plane=plane, axes=False, figsize=figsize, dpi=dpi, elev=elev,
                                azim=azim, **options)


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
