"""The scene gallery's plumbing: run a reference scene with each integrator type the reference
runs it with, measure how its energy moves and how far its constraints drift, plot that, and
animate the motion.

The measures are the ones the claims tests use (``tests/claims/test_ch2_scenes.py``):

* the **energy scale** of a run is the energy that moves around in it, the larger of
  ``max T`` and ``max |V - V(0)|``;
* the **drift** is the largest change of ``H = T + V - V(0)`` over the run, relative to that
  scale (zero for an exact conservative motion);
* the **net change** is ``H`` at the end, relative to the same scale (its sign says whether
  the integrator ended with more or less energy than it started with);
* the **agreement** of two runs of one scene (types 1 and 2: one ODE, two algorithms) is the
  larger of their largest difference in ``H``, relative to the energy scale, and in the
  bodies' positions, relative to the extent of the motion;
* the **constraint error** of a run is, at each sample, the largest position error of the
  scene's equality constraints and the largest violation of its inequalities, grouped by
  the constraint's kind and unit (:func:`position_errors`).

Taught in book/02_reduced/gallery (the scene gallery).
"""

import hashlib
import json
from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np

from .. import scenes
from ..constrained import constraint_errors
from ..constraints import CoordinateCoupling, FloorContact, JointLimit, PrescribedJoint
from .player import PLANES, scene_polylines
from .scene import Path, union_bounds

__all__ = ["METHOD_LABELS", "TYPES", "ROUNDOFF", "TYPES_AGREE", "run", "energy_scale", "drift", "net_change",
           "agreement", "measure_text", "verdict", "error_units", "position_errors", "constraint_work",
           "drift_verdict",
           "friction_text", "verdict_is_portable", "wrap", "motion_plane", "plot_energies", "figure_png",
           "animate", "vector_player", "show_scenes", "verdict_table", "summary"]

#: Relative energy changes below this are round-off (or RK45 integrating a polynomial motion
#: exactly): the pages print the bound, never their digits, which differ from computer to computer.
#: Constraint errors below it (in metres or radians) print as the same bound.
ROUNDOFF = 1e-9

#: Types 1 and 2 integrate the same ODE with the same solver and tolerances, by two algorithms
#: (recursive and dense): their runs differ only by round-off, which piles up over a run (up to
#: about 1e-10 relative in the catalogue, measured). The pages print their agreement as this
#: bound, far above that and far below any integration error.
TYPES_AGREE = 1e-8

#: How the pages name the integrators of :func:`redmax_edu.integrators.simulate`, in the
#: reference's order of types.
METHOD_LABELS = {"rk45_recursive": "RK45, recursive (type 1)", "rk45": "RK45, RedMax (type 2)",
                 "euler": "linearly implicit Euler (type 3)"}
#: The reference's number of each integrator type.
TYPES = {"rk45_recursive": 1, "rk45": 2, "euler": 3}
_SHORT = {"rk45_recursive": "RK45 type 1", "rk45": "RK45", "euler": "Euler"}
_PANEL = {"rk45_recursive": "RK45, recursive", "rk45": "RK45, RedMax", "euler": "Euler"}
_METHOD_COLORS = {"rk45_recursive": "#9467bd", "rk45": "#2ca02c", "euler": "#d62728"}
_METHOD_LINES = {"rk45_recursive": ((0, (3, 2)), 1.2), "rk45": ("-", 1.8), "euler": ("-", 1.5)}
_METHOD_Z = {"rk45_recursive": 3, "rk45": 2, "euler": 2}  # type 1 dashed on top of type 2
_ENERGY_STYLES = (("T", "kinetic T", "#1f77b4", 1.2), ("V", "V - V(0)", "#ff7f0e", 1.2),
                  ("H", "H = T + V - V(0)", "black", 2.0))
#: Units of the energy axes, the largest that keeps the plotted numbers above 1.
_ENERGY_UNITS = ((1.0, "J"), (1e-3, "mJ"), (1e-6, "\u00b5J"), (1e-9, "nJ"))
_UNIT_NAMES = {"length": "m", "angle": "rad", "parameter": "1"}


def _as_scene(item):
    """A Scene from a scene id or a Scene."""
    return item if isinstance(item, scenes.Scene) else scenes.scene(item)


def _entries(items):
    """``(key, item)`` pairs of a list of scene ids, or of a mapping ``label -> id or Scene``."""
    return list(items.items()) if isinstance(items, Mapping) else [(item, item) for item in items]


def run(scene, t_span=None, **options):
    """Simulate a reference scene once with each integrator type the reference runs it with.

    Parameters
    ----------
    scene : int or Scene
        A reference scene id, or a scene built by :func:`redmax_edu.scenes.scene` (for
        example scene 12 with ``attachment="constraint"``).
    t_span : (float, float), optional
        Default: the scene's reference span of each type (scene 30's Euler run is shorter).
    **options
        Passed to :meth:`redmax_edu.scenes.Scene.simulate` (for example ``h`` for Euler).

    Returns
    -------
    dict of str to Trajectory
        Keyed by method, in the order of :data:`METHOD_LABELS` (types 1, 2, 3), for the types
        the reference runs the scene with.
    """
    s = _as_scene(scene)
    return {m: s.simulate(m, t_span=t_span, **options) for m in METHOD_LABELS if m in s.integrators}


def energy_scale(tr):
    """The energy that moves around in a run: ``max(max T, max |V - V(0)|)`` (J)."""
    return float(max(tr.T.max(), np.abs(tr.V - tr.V[0]).max()))


def drift(tr):
    """The largest change of ``H`` over the run, relative to :func:`energy_scale`."""
    return float(np.abs(tr.H - tr.H[0]).max() / energy_scale(tr))


def net_change(tr):
    """``H`` at the end minus at the start, relative to :func:`energy_scale` (signed)."""
    return float((tr.H[-1] - tr.H[0]) / energy_scale(tr))


def agreement(a, b):
    """How far apart two runs of one scene on the same sample times are (0 when identical).

    The larger of ``max |H_a - H_b|`` relative to :func:`energy_scale` of ``b`` and the
    largest distance between a body's positions in the two runs, relative to the extent of
    ``b``'s motion (the largest side of the box around every body position of the run).

    Parameters
    ----------
    a, b : Trajectory
        Sampled at the same times (the RK45 types sample on one grid).

    Returns
    -------
    float
    """
    if a.t.shape != b.t.shape or not np.allclose(a.t, b.t, rtol=0.0, atol=1e-12):
        raise ValueError("arguments 'a' and 'b' must be sampled at the same times, got "
                         f"{len(a.t)} and {len(b.t)} samples")
    x_a, x_b = a.E_wi[..., :3, 3], b.E_wi[..., :3, 3]
    extent = float(np.ptp(x_b.reshape(-1, 3), axis=0).max()) or 1.0
    return float(max(np.abs(a.H - b.H).max() / energy_scale(b),
                     np.linalg.norm(x_a - x_b, axis=-1).max() / extent))


def measure_text(x, *, percent=False, signed=False):
    """A drift or net change (a fraction of the energy scale) as the pages print it.

    Two significant digits (``9.0e-04``, ``0.26``; with ``percent``, ``-26%``), far above
    the round-off of the runs; a value of magnitude below :data:`ROUNDOFF` prints as that
    bound (``"below 1e-09"``), since its digits and sign are round-off.

    Examples
    --------
    >>> measure_text(0.2612), measure_text(9.04e-4), measure_text(-0.0045, percent=True, signed=True)
    ('0.26', '9.0e-04', '-0.45%')
    >>> measure_text(-5.3e-16, percent=True, signed=True), measure_text(-0.9996, percent=True, signed=True)
    ('below 1e-09', '-100%')
    """
    x = float(x)
    if abs(x) < ROUNDOFF:
        return f"below {ROUNDOFF:.0e}"
    sign = "+" if signed else ""
    if percent:  # two digits up to 99%, then whole percents (not 1e+02%)
        return f"{100 * x:{sign}.2g}%" if abs(100 * x) < 99.5 else f"{100 * x:{sign}.0f}%"
    if abs(x) < 0.01:
        return f"{x:{sign}.1e}"
    return f"{x:{sign}#.2g}" if abs(x) < 10 else f"{x:{sign}.0f}"


def _labelled(texts):
    """``(label, text)`` pairs of per-method texts; types 1 and 2 as one pair when they print alike."""
    both = "rk45_recursive" in texts and "rk45" in texts
    same = both and texts["rk45_recursive"] == texts["rk45"]
    out = []
    for method, text in texts.items():
        if same and method == "rk45_recursive":
            continue  # printed once, with type 2
        if same:
            label = "RK45 (types 1, 2)" if method == "rk45" else _SHORT[method]
        else:
            label = f"RK45 type {TYPES[method]}" if both and method != "euler" else _SHORT[method]
        out.append((label, text))
    return out


def _agreement_text(x):
    if x < TYPES_AGREE:
        return f"types 1 and 2 agree to {TYPES_AGREE:.0e}"
    return f"types 1 and 2 differ by {measure_text(x)}"


def _verdict(runs, f=1.0):
    """The verdict with every measure scaled by ``f`` (1 for the page; see verdict_is_portable)."""
    texts = {}
    for method, tr in runs.items():
        net = measure_text(f * net_change(tr), percent=True, signed=True)
        which = "|net|" if net.startswith("below") else "net"
        texts[method] = f"drift {measure_text(f * drift(tr))}, {which} {net}"
    parts = [f"{label} {text}" for label, text in _labelled(texts)]
    if "rk45_recursive" in runs and "rk45" in runs:
        parts.append(_agreement_text(f * agreement(runs["rk45_recursive"], runs["rk45"])))
    return "; ".join(parts)


def verdict(runs):
    """One line that sums up the energy of each run, relative to its energy scale, e.g.
    ``"RK45 (types 1, 2) drift 9.0e-04, net -0.045%; Euler drift 0.26, net -26%; types 1 and 2
    agree to 1e-08"``.

    Types 1 and 2 print once when their measures print alike (they agree far below the
    printed digits), with their :func:`agreement` as the bound :data:`TYPES_AGREE`. Measures
    at round-off level print as a bound (:func:`measure_text`), e.g.
    ``"RK45 drift below 1e-09, |net| below 1e-09"``: the energy error of an exact integration.
    """
    return _verdict(runs)


# --- constraints -------------------------------------------------------------------------------

def error_units(scene):
    """The unit of each constraint's position error, in ``scene.model.constraints`` order.

    ``"m"`` for the constraints between points in space (loop closures, floor contacts, node
    attachments), the unit of the joint coordinate for the constraints on coordinates
    (couplings, limits, prescribed joints: ``"rad"`` for an angle, ``"m"`` for a length,
    ``"1"`` for a spline parameter), and None for a constraint on velocities only (a
    prescribed twist or joint velocity), which has no position to drift.
    """
    model = scene.model

    def unit(k):
        return _UNIT_NAMES[scene.units[k]]

    out = []
    for c in model.constraints:
        if not c.positional:
            out.append(None)
        elif isinstance(c, CoordinateCoupling):
            out.append(unit(model.dofs[c.b].start + c.dof_b))
        elif isinstance(c, JointLimit):
            out.append(unit(model.dofs[c.body].start + c.dof))
        elif isinstance(c, PrescribedJoint):
            out.append(unit(int(c.columns(model)[0])))
        else:
            out.append("m")
    return out


def position_errors(scene, tr):
    """The constraint error of a run of ``scene``: per group of its constraints, at every sample.

    Constraints are grouped by kind and unit (:func:`error_units`); an equality group gives
    the largest ``|g|`` of its constraints (the drift from ``g = 0``), an inequality group the
    largest violation ``max(0, -c)`` (zero while every ``c >= 0`` holds). Constraints on
    velocities only have no position error and no group.

    Parameters
    ----------
    scene : Scene
    tr : Trajectory
        A run of ``scene``.

    Returns
    -------
    dict of str to ndarray
        Label (e.g. ``"loop closure (m)"``, ``"joint limit violation (rad)"``) to an array of
        shape (nt,), in the order the groups first appear in ``scene.model.constraints``.
    """
    labels = [None if unit is None else f"{c.kind}{' violation' if c.inequality else ''} ({unit})"
              for c, unit in zip(scene.model.constraints, error_units(scene), strict=True)]
    out = {label: np.zeros(len(tr.t)) for label in labels if label is not None}
    if not out:
        return {}
    for k, (model, q, t) in enumerate(zip(tr.models, tr.q, tr.t, strict=True)):
        for c, label, err in zip(model.constraints, labels, constraint_errors(model, q, t), strict=True):
            if label is None or not len(err):
                continue
            value = max(0.0, -float(err.min())) if c.inequality else float(np.abs(err).max())
            out[label][k] = max(out[label][k], value)
    return out


def constraint_work(scene, tr):
    """The work the constraint forces have done on the system since the start of a run (J), at every sample.

    The constraint forces are ``G^T lambda`` of :func:`redmax_edu.dynamics.constrained_dynamics`
    at each sample (with the scene's applied torques and Baumgarte gains), their power
    ``(G^T lambda) . qdot`` is integrated over the samples by the trapezoidal rule. A
    prescribed joint or body does work; an ideal loop or coupling does none, except through
    Baumgarte's pull on its drift. Only for the acceleration-level types (RK45, types 1 and 2):
    a velocity-level Euler step has impulses, not forces.

    Parameters
    ----------
    scene : Scene
    tr : Trajectory
        A run of ``scene`` with ``"rk45"`` or ``"rk45_recursive"``.

    Returns
    -------
    ndarray, shape (nt,)
        Zero at the first sample.
    """
    from ..dynamics import constrained_dynamics

    if tr.method == "euler":
        raise ValueError("argument 'tr': the constraint work needs a run of an acceleration-level type "
                         "('rk45' or 'rk45_recursive'), got an 'euler' run")
    power = np.zeros(len(tr.t))
    for k, (model, q, qdot, t) in enumerate(zip(tr.models, tr.q, tr.qdot, tr.t, strict=True)):
        tau = None if scene.tau is None else scene.tau(t)
        sol = constrained_dynamics(model, q, qdot, tau, t=t, baumgarte=scene.baumgarte)
        power[k] = sum(sol.generalized_force(i) for i in range(len(model.constraints))) @ qdot
    return np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * np.diff(tr.t))])


def _drift_verdict(errors, f=1.0):
    labels = list(dict.fromkeys(label for per_run in errors.values() for label in per_run))
    parts = []
    for label in labels:
        texts = {m: measure_text(f * e[label].max()) for m, e in errors.items() if label in e}
        parts.append(f"{label} " + ", ".join(f"{who} {text}" for who, text in _labelled(texts)))
    return "; ".join(parts)


def drift_verdict(errors):
    """One line of the largest constraint error of each run over the whole run, per group, e.g.
    ``"loop closure (m) RK45 (types 1, 2) 3.3e-08, Euler 9.1e-06"``.

    ``errors`` maps each method to :func:`position_errors` of its run. Errors below
    :data:`ROUNDOFF` print as that bound. Empty when no constraint has a position error.
    """
    return _drift_verdict(errors)


def friction_text(runs):
    """The friction iterations of the runs that have them, e.g. ``"Euler: 3 to 7 friction
    iterations per step, 5 on average"`` (staggered projections, §2.11); empty without friction."""
    parts = []
    for method, tr in runs.items():
        it = tr.friction_iterations
        if it is not None and len(it):
            spread = f"{int(it.min())} to {int(it.max())}" if it.min() < it.max() else f"{int(it.min())}"
            parts.append(f"{_SHORT[method]}: {spread} friction iterations per step, "
                         f"{np.mean(it):.0f} on average")
    return "; ".join(parts)


def verdict_is_portable(runs, rel=1e-6, errors=None):
    """True when :func:`verdict` (and :func:`drift_verdict` of ``errors``, when given) print the
    same line for every measure changed by a factor ``1 +- rel``: no printed digit sits at a
    rounding boundary that round-off (another CPU, another BLAS) could push across.
    ``rel = 1e-6`` is many orders above the differences between computers (about 1e-12
    relative after a few seconds of simulation).
    """
    factors = (1 - rel, 1.0, 1 + rel)
    ok = len({_verdict(runs, f) for f in factors}) == 1
    if errors:
        ok = ok and len({_drift_verdict(errors, f) for f in factors}) == 1
    return ok


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


def _panel(ax, title):
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("t (s)", fontsize=8)
    ax.tick_params(labelsize=7)


def _sci(ax):
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 3))
    ax.yaxis.get_offset_text().set_fontsize(7)


def plot_energies(runs, *, errors=None, title="", figsize=None, dpi=None):
    """Energy plots of the runs of one scene, with its constraint error and friction iterations.

    One panel per run with T, V - V(0) and H over time on a shared energy axis; a panel that
    zooms on ``H - H(0)`` of every run, relative to its energy scale (where a drift of 1e-3
    and one of 0.3 both show; type 1 dashed over type 2); with ``errors``, one panel per unit
    with each run's constraint error on a log scale (errors below :data:`ROUNDOFF` drawn at
    it); and, when a run has friction, its friction iterations per step. Three panels a row
    (two when there are four).

    Parameters
    ----------
    runs : dict of str to Trajectory
        As returned by :func:`run`.
    errors : dict of str to dict, optional
        Each method's :func:`position_errors`.
    title : str
    figsize : tuple of float, optional
        Default 2.7 inches wide per column, 2.4 high per row.
    dpi : float, optional
        Default: matplotlib's.

    Returns
    -------
    matplotlib.figure.Figure
    """
    units = list(dict.fromkeys(label.rsplit("(", 1)[1].rstrip(")") for e in (errors or {}).values()
                               for label in e))
    friction = {m: tr for m, tr in runs.items() if tr.friction_iterations is not None}
    count = len(runs) + 1 + len(units) + bool(friction)
    ncols = 2 if count == 4 else min(3, count)
    nrows = -(-count // ncols)
    fig = plt.figure(figsize=figsize or (2.7 * ncols, 2.3 * nrows + (0.9 if title else 0.6)), dpi=dpi)
    grid = fig.add_gridspec(nrows, ncols, wspace=0.38, hspace=0.6)
    cells = iter((r, c) for r in range(nrows) for c in range(ncols))
    first = None
    largest = max(float(np.abs(np.concatenate([tr.T, tr.V - tr.V[0], tr.H])).max()) for tr in runs.values())
    factor, unit = next(((f, u) for f, u in _ENERGY_UNITS if largest >= f), _ENERGY_UNITS[-1])
    for method, tr in runs.items():
        ax = fig.add_subplot(grid[next(cells)], sharey=first)
        first = first or ax
        for key, label, color, width in _ENERGY_STYLES:
            y = {"T": tr.T, "V": tr.V - tr.V[0], "H": tr.H}[key]
            ax.plot(tr.t, y / factor, color=color, linewidth=width, label=label)
        step = f", h = {tr.h:g} s" if tr.h else ""
        _panel(ax, f"type {TYPES[method]}: {_PANEL[method]}{step}")
    first.set_ylabel(f"energy ({unit})", fontsize=8)
    zoom = fig.add_subplot(grid[next(cells)])
    for method, tr in runs.items():
        style, width = _METHOD_LINES[method]
        zoom.plot(tr.t, (tr.H - tr.H[0]) / energy_scale(tr), color=_METHOD_COLORS[method], linestyle=style,
                  linewidth=width, zorder=_METHOD_Z[method],
                  label=f"type {TYPES[method]} ({measure_text(drift(tr))})")
    zoom.axhline(0.0, color="#999999", linewidth=0.8)
    _panel(zoom, "H - H(0) / energy scale")
    _sci(zoom)
    zoom.legend(fontsize=6, loc="best", title="run (drift)", title_fontsize=6)
    markers = ("-", ":", "--", "-.")
    for unit in units:
        ax = fig.add_subplot(grid[next(cells)])
        for method, per_run in errors.items():
            mine = [label for label in per_run if label.endswith(f"({unit})")]
            for k, label in enumerate(mine):
                style, width = _METHOD_LINES[method] if k == 0 else (markers[k % 4], 1.2)
                ax.semilogy(runs[method].t, np.maximum(per_run[label], ROUNDOFF),
                            color=_METHOD_COLORS[method], linestyle=style, linewidth=width,
                            zorder=_METHOD_Z[method],
                            label=f"type {TYPES[method]}, {label.rsplit(' (', 1)[0]}")
        top = max(max(e.max() for per_run in errors.values() for label, e in per_run.items()
                      if label.endswith(f"({unit})")), ROUNDOFF)
        ax.set_ylim(ROUNDOFF / 3, max(30 * top, 100 * ROUNDOFF))
        ax.set_ylabel(f"largest error, floored at {ROUNDOFF:.0e}", fontsize=7)
        _panel(ax, f"constraint error ({unit})")
        ax.legend(fontsize=6, loc="upper right")
    if friction:
        ax = fig.add_subplot(grid[next(cells)])
        for method, tr in friction.items():
            ax.step(tr.t[0] + tr.h * np.arange(1, len(tr.friction_iterations) + 1), tr.friction_iterations,
                    where="pre", color=_METHOD_COLORS[method], linewidth=1.0)
        _panel(ax, "friction iterations per step")
    # inches from the top: the title, the energy legend under it, then the panels' titles
    height = fig.get_figheight()
    legend_at = 0.3 if title else 0.05
    handles, labels = first.get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=3, fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, 1.0 - legend_at / height))
    fig.subplots_adjust(left=0.6 / fig.get_figwidth(), right=0.98, bottom=0.4 / height,
                        top=1.0 - (legend_at + 0.55) / height)
    if title:
        fig.suptitle(title, fontsize=10, y=1.0 - 0.06 / height, va="top")
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


def wrap(line, width=78):
    """A verdict line broken at its ``"; "`` separators into lines of at most ``width``
    characters, the continuation lines indented (the pages' outputs fit the column); a part
    too long for one line is broken at its spaces.

    Examples
    --------
    >>> print(wrap("scene 1: RK45 drift 0.1; Euler drift 0.2; types 1 and 2 agree to 1e-08", 42))
    scene 1: RK45 drift 0.1; Euler drift 0.2;
        types 1 and 2 agree to 1e-08
    >>> print(wrap("  coupling (rad) RK45 below 1e-09, Euler below 1e-09", 36))
      coupling (rad) RK45 below 1e-09,
        Euler below 1e-09
    """
    import textwrap

    parts = line.split("; ")
    lines = [parts[0]]
    for part in parts[1:]:
        if len(lines[-1]) + 3 + len(part) <= width:  # room for "; " and a closing ";"
            lines[-1] += "; " + part
        else:
            lines[-1] += ";"
            lines.append("    " + part)
    indent = " " * (len(line) - len(line.lstrip()))
    return "\n".join(textwrap.fill(text, width, initial_indent="", subsequent_indent=indent + "    ",
                                   break_on_hyphens=False, break_long_words=False, drop_whitespace=True)
                     if len(text) > width else text for text in lines)


def figure_png(fig, dpi=80):
    """A figure as a light PNG (bytes): rendered at ``dpi`` and reduced to a palette of 256
    colours, a third of the full-colour file for line plots, with no visible change."""
    import io

    from PIL import Image

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    buffer.seek(0)
    light = io.BytesIO()
    Image.open(buffer).convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE).save(
        light, format="png", optimize=True)
    return light.getvalue()


def _floors(model, bounds):
    """A square on each floor-contact plane of ``model``, as wide as the drawing box (world points)."""
    items, seen = [], set()
    width = float(np.ptp(bounds, axis=1).max())
    centre = np.asarray(bounds, dtype=float).mean(axis=1)
    for c in model.constraints:
        if not isinstance(c, FloorContact):
            continue
        key = tuple(np.round(c.plane.ravel(), 9))
        if key in seen:
            continue
        seen.add(key)
        o, u, v, n = c.plane[:3, 3], c.plane[:3, 0], c.plane[:3, 1], c.normal
        middle = centre - ((centre - o) @ n) * n
        square = ((-1, -1), (1, -1), (1, 1), (-1, 1), (-1, -1))
        corners = [middle + 0.5 * width * (a * u + b * v) for a, b in square]
        items.append(Path(np.array(corners), "floor", color="#8c564b", width=1.0))
    return items


def animate(scene, tr, *, max_frames=48, size=260, elev=20, azim=-60):
    """A light HTML player of one run of a scene: its bodies' shapes, springs, deformables and
    the floor of its floor contacts.

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
                               joint_frames=False, world_frame=True, frame_scale=0.1 * width,
                               extra=_floors(scene.model, bare[0].bounds))
    span = float(tr.t[-1] - tr.t[0])
    interval = int(max(20, round(1000 * span / max(len(frames) - 1, 1))))
    return vector_player(frames, plane=plane, elev=elev, azim=azim, size=size, interval=interval,
                         label=f"scene {scene.id}")


def show_scenes(scene_ids, *, runs_of=None, frames=48, size=260, dpi=80):
    """Show each scene of a list: a heading, a player of its motion, its verdicts (energy,
    constraint error, friction iterations) and its figure (the gallery pages' display cell).

    The player shows the type 2 run (RK45, RedMax) where the reference runs the scene with
    it, else the Euler run. Needs IPython.

    Parameters
    ----------
    scene_ids : sequence of int, or mapping of str to (int or Scene)
        Scene ids, or labels of scenes (ids or built scenes, such as scene 12 attached by
        constraints).
    runs_of : callable, optional
        ``scene_id or Scene -> dict of runs``; default :func:`run` at the reference span.
    frames : int
        Frames per player.
    size : int
        Player canvas, pixels.
    dpi : float
        Of the energy figures (shown as :func:`figure_png`).

    Returns
    -------
    dict
        The runs, by scene id or label (for further checks on the page).
    """
    from IPython.display import HTML, Image, display

    runs_of = run if runs_of is None else runs_of
    out = {}
    for key, item in _entries(scene_ids):
        s = _as_scene(item)
        runs = out[key] = runs_of(item)
        errors = {m: position_errors(s, tr) for m, tr in runs.items()} if s.model.constraints else None
        shown = "rk45" if "rk45" in runs else next(iter(runs))
        display(HTML(f"<h4>Scene {key}: {s.name}</h4>"))
        display(HTML(animate(s, runs[shown], max_frames=frames, size=size)))
        print(wrap(f"scene {key}: {verdict(runs)}"))
        if errors is not None:
            print(wrap(f"  constraint error: {drift_verdict(errors) or 'none positional (velocities only)'}"))
        if friction_text(runs):
            print(wrap(f"  {friction_text(runs)}"))
        fig = plot_energies(runs, errors=errors, title=f"scene {key} ({METHOD_LABELS[shown]} in the player)")
        display(Image(data=figure_png(fig, dpi=dpi)))
        plt.close(fig)
    return out


def verdict_table(scene_ids, runs_of=None):
    """The verdicts of a list of scenes, one line each (a page's closing table), as a string.

    ``scene_ids`` and ``runs_of`` as in :func:`show_scenes` (``runs_of`` is called with each
    id or Scene; the dict of runs :func:`show_scenes` returned, ``.get``, serves for ids).
    """
    runs_of = run if runs_of is None else runs_of
    return "\n".join(wrap(f"scene {str(key):>3s}: {verdict(runs_of(item))}")
                     for key, item in _entries(scene_ids))


def summary(scene_ids, runs_of=None):
    """The measured outcome per scene and integrator type, as rows of a table.

    Parameters
    ----------
    scene_ids : sequence of int, or mapping of str to (int or Scene)
    runs_of : callable, optional
        ``scene_id or Scene -> dict of runs``; default :func:`run` at the reference span.

    Returns
    -------
    list of dict
        Keys ``id`` (the id or label), ``name``, one per method of :data:`METHOD_LABELS`
        (a ``(drift, net_change)`` pair, or None when the reference does not run the scene
        with that type), ``agreement`` (of types 1 and 2, or None) and ``errors`` (for a
        scene with constraints: each group of :func:`position_errors` to the largest error
        of each run over the run; else None).
    """
    runs_of = run if runs_of is None else runs_of
    rows = []
    for key, item in _entries(scene_ids):
        s = _as_scene(item)
        runs = runs_of(item)
        row = {"id": key, "name": s.name}
        for method in METHOD_LABELS:
            row[method] = (drift(runs[method]), net_change(runs[method])) if method in runs else None
        both = "rk45_recursive" in runs and "rk45" in runs
        row["agreement"] = agreement(runs["rk45_recursive"], runs["rk45"]) if both else None
        row["errors"] = None
        if s.model.constraints:
            row["errors"] = {}
            for method, tr in runs.items():
                for label, e in position_errors(s, tr).items():
                    row["errors"].setdefault(label, {})[method] = float(e.max())
        rows.append(row)
    return rows
