"""The slide explorer of §2.11: a friction coefficient and a slope in, stick and slip out.

A 1 kg block rides a prismatic joint tilted by ``theta`` (the slide points up the slope), its
joint friction the box pattern of :class:`redmax_edu.friction.patterns.JointFriction`. Launched up the
slope at ``v0``, it slows down, stops, and then either sticks (``mu >= tan theta``) or slides
back down. BISP (:func:`redmax_edu.viz.friction.frictional_steps`) gives the motion and the
friction force ``sum(beta) / h``; :func:`coulomb_slide` gives Coulomb's answer to compare.
One set of runs (:func:`slide_runs`) feeds the static figure (:func:`slide_figure`), the
kernel-free plotly player with one frame per (mu, theta) (:func:`slide_player`) and the live
ipywidgets version (:func:`slide_widget`).

Taught in book/02_reduced/11_friction.
"""

from dataclasses import dataclass, field

import numpy as np

from .._validate import as_scalar
from ..friction.patterns import Box, JointFriction
from ..joints import Prismatic
from ..lie import exp_so3
from ..model import Body, Model
from .friction import frictional_steps

__all__ = ["MUS", "ANGLES", "FIRST", "G", "slide_model", "coulomb_slide", "SlideRun", "SlideRuns",
           "slide_runs", "slide_figure", "slide_player", "slide_widget"]

#: The friction coefficients and slopes (degrees) of the precomputed grid.
MUS = (0.2, 0.4, 0.6, 0.8)
ANGLES = (15.0, 25.0, 35.0, 45.0)
#: The setting the static figure, the player and the widget open with.
FIRST = (0.4, 15.0)
#: Gravity (m/s^2) of the slide (the model's default).
G = 9.81


def slide_model(theta_deg, mu, *, mass=1.0, side=0.1):
    """A block of ``mass`` (kg) on a slide tilted ``theta_deg`` up, with joint friction ``mu``.

    The prismatic joint's axis is the joint frame's x, which points up the slope; its
    geometry is a cube of ``side`` (m) centred on the block, so the weight's normal part
    presses evenly on the slide (no binding).

    Examples
    --------
    >>> slide_model(30.0, 0.5).friction
    (JointFriction(body=0, mu=0.5, geometry=Box(sides=(0.1, 0.1, 0.1))),)
    """
    theta = np.radians(as_scalar(theta_deg, "theta_deg", minimum=0.0))
    if not theta < np.pi / 2:
        raise ValueError(f"argument 'theta_deg' must be below 90 degrees, got {theta_deg}")
    tilt = np.eye(4)
    tilt[:3, :3] = exp_so3([0.0, -theta, 0.0])           # x = (cos, 0, sin): up the slope
    inertia = mass * side ** 2 / 6 * np.eye(3)
    block = Body("block", -1, Prismatic([1.0, 0.0, 0.0]), tilt, np.eye(4), mass, inertia)
    return Model([block], gravity=(0.0, 0.0, -G),
                 friction=[JointFriction(0, mu, Box((side, side, side)))])


def coulomb_slide(mu, theta_deg, v0, t, *, mass=1.0):
    """Coulomb's answer for a block launched up a slope at ``v0`` (m/s): velocity and friction force.

    Up the slope it decelerates at ``g (sin + mu cos)`` until it stops at ``t1``; then it
    sticks if ``mu >= tan theta`` (the friction holds ``m g sin theta``), else slides down at
    ``g (sin - mu cos)``. Forces along the slide, positive up the slope.

    Returns
    -------
    v, friction : ndarray, shape of ``t``

    Examples
    --------
    >>> v, f = coulomb_slide(0.8, 30.0, 1.0, [0.0, 1.0])  # mu > tan 30 deg: it stops and sticks
    >>> np.round(v, 4), np.round(f, 4)
    (array([1., 0.]), array([-6.7966,  4.905 ]))
    """
    t = np.asarray(t, dtype=float)
    theta = np.radians(theta_deg)
    s, c = np.sin(theta), np.cos(theta)
    up = G * (s + mu * c)
    t1 = v0 / up
    sticks = mu * c >= s
    down = 0.0 if sticks else G * (s - mu * c)
    v = np.where(t <= t1, v0 - up * t, -down * (t - t1))
    hold = mass * G * s if sticks else mass * mu * G * c   # after the stop, both point up the slope
    friction = np.where(t < t1, -mass * mu * G * c, hold)
    return v + 0.0, friction


@dataclass(frozen=True)
class SlideRun:
    """One BISP run of the slide: times ``t`` (s), velocity ``v`` up the slope (m/s) at those
    times, and per step the friction force ``friction`` and its bound ``bound`` (N, along the
    slide, positive up; ``bound = mu`` times the normal load) and the staggered ``iterations``."""

    mu: float
    theta: float
    t: np.ndarray
    v: np.ndarray
    friction: np.ndarray
    bound: np.ndarray
    iterations: np.ndarray


@dataclass
class SlideRuns:
    """Runs ``runs[(mu, theta)]`` of the slide, all launched at ``v0`` for ``t_end`` s with step ``h``."""

    v0: float
    t_end: float
    h: float
    runs: dict = field(default_factory=dict)

    def get(self, mu, theta):
        """The run at ``(mu, theta)``, simulated (and kept) if new."""
        key = (float(mu), float(theta))
        if key not in self.runs:
            model = slide_model(key[1], key[0])
            steps = int(round(self.t_end / self.h))
            run = frictional_steps(model, [0.0], [self.v0], self.h, steps)
            friction = np.array([info.beta.sum() for info in run.infos]) / self.h
            bound = np.array([info.bound.sum() for info in run.infos]) / self.h
            self.runs[key] = SlideRun(key[0], key[1], run.t, run.qdot[:, 0], friction, bound, run.iterations)
        return self.runs[key]


def slide_runs(mus=MUS, angles=ANGLES, *, v0=2.0, t_end=1.0, h=0.01):
    """Run the slide for every ``(mu, theta)`` of the grid; returns SlideRuns.

    Examples
    --------
    >>> runs = slide_runs((0.5,), (20.0, 40.0), t_end=0.05)
    >>> sorted(runs.runs)
    [(0.5, 20.0), (0.5, 40.0)]
    """
    v0 = as_scalar(v0, "v0")
    t_end = as_scalar(t_end, "t_end", minimum=0.0, strict=True)
    h = as_scalar(h, "h", minimum=0.0, strict=True)
    if abs(t_end / h - round(t_end / h)) > 1e-9:
        raise ValueError(f"argument 'h': {h} does not divide t_end = {t_end} into whole steps")
    out = SlideRuns(v0, t_end, h)
    for mu in mus:
        for theta in angles:
            out.get(mu, theta)
    return out


def _panel_title(run):
    verdict = "sticks" if run.mu >= np.tan(np.radians(run.theta)) else "slides back"
    return f"mu = {run.mu:g}, slope {run.theta:g} deg: {verdict}"


def slide_figure(runs, settings, *, height=4.6):
    """Static layer: one column per ``(mu, theta)``, velocity on top, friction force below.

    BISP's values (solid) against Coulomb's answer (dashed, :func:`coulomb_slide`); below, the
    bound ``mu N`` and its negative (dotted) and the pull of gravity along the slide,
    ``m g sin theta`` (grey). Returns the matplotlib figure.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(settings), figsize=(3.6 * len(settings), height), sharex=True,
                             squeeze=False)
    for col, (mu, theta) in enumerate(settings):
        run = runs.get(mu, theta)
        v, f = coulomb_slide(mu, theta, runs.v0, run.t)
        top, bottom = axes[0, col], axes[1, col]
        top.plot(run.t, run.v, color="C0", label="BISP")
        top.plot(run.t, v, color="k", linestyle="--", linewidth=1, label="Coulomb")
        top.set_title(_panel_title(run), fontsize=9)
        t_step = run.t[1:]
        bottom.plot(t_step, run.friction, color="C3", label="friction (BISP)")
        bottom.plot(t_step, f[1:], color="k", linestyle="--", linewidth=1, label="Coulomb")
        bottom.plot(t_step, run.bound, color="C3", linestyle=":", linewidth=1, label="bound mu N")
        bottom.plot(t_step, -run.bound, color="C3", linestyle=":", linewidth=1)
        bottom.axhline(G * np.sin(np.radians(theta)), color="0.6", linewidth=1, label="m g sin(theta)")
        bottom.set_xlabel("t (s)")
    axes[0, 0].set_ylabel("velocity up the slope (m/s)")
    axes[1, 0].set_ylabel("friction force (N)")
    axes[0, 0].legend(fontsize=7, loc="upper right")
    axes[1, 0].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def slide_player(runs, mus=MUS, angles=ANGLES, *, first=FIRST, points=50, height=420):
    """Kernel-free layer: a plotly figure with one frame per ``(mu, theta)`` and a slider over them.

    Left the velocity up the slope, right the friction force with its bounds, BISP solid and
    Coulomb dashed, on axes shared by all frames, each curve at about ``points`` samples. The
    slider opens at ``first``.
    """
    from plotly.subplots import make_subplots

    from .interactive import plotly_objects

    go = plotly_objects()
    keys = [(float(m), float(a)) for m in mus for a in angles]
    first = (float(first[0]), float(first[1]))
    if first not in keys:
        raise ValueError(f"argument 'first' {first} is not on the grid of mus and angles")

    def curves(key):
        run = runs.get(*key)
        v, f = coulomb_slide(key[0], key[1], runs.v0, run.t)
        every = slice(None, None, stride)
        return [np.round(y[every], 3) for y in (run.v, v, run.friction, f[1:], run.bound, -run.bound)]

    run0 = runs.get(*first)
    stride = max(1, len(run0.t) // points)
    t, ts = np.round(run0.t[::stride], 3), np.round(run0.t[1:][::stride], 3)
    styles = [dict(name="velocity", line=dict(color="#1f77b4")),
              dict(name="Coulomb", line=dict(color="black", dash="dash", width=1)),
              dict(name="friction", line=dict(color="#d62728")),
              dict(showlegend=False, line=dict(color="black", dash="dash", width=1)),
              dict(name="bound", line=dict(color="#d62728", dash="dot", width=1)),
              dict(showlegend=False, line=dict(color="#d62728", dash="dot", width=1))]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("velocity up the slope (m/s)", "friction force (N)"))
    for k, (y, style) in enumerate(zip(curves(first), styles, strict=True)):
        col = 1 if k < 2 else 2
        fig.add_trace(go.Scatter(x=t if col == 1 else ts, y=y, mode="lines", **style), row=1, col=col)
    # a frame changes only the curves' values: the times and styles stay those of the traces
    fig.frames = [go.Frame(data=[go.Scatter(y=y) for y in curves(key)], traces=list(range(6)), name=str(k))
                  for k, key in enumerate(keys)]
    v_lo = min(runs.get(*key).v.min() for key in keys)
    f_hi = max(runs.get(*key).bound.max() for key in keys)
    steps = [dict(method="animate", label=f"{m:g}, {a:g}\u00b0",
                  args=[[str(k)], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                       transition=dict(duration=0))])
             for k, (m, a) in enumerate(keys)]
    fig.update_xaxes(title_text="t (s)", range=[0.0, runs.t_end])
    fig.update_layout(
        height=height, margin=dict(l=50, r=20, t=100, b=10),
        yaxis=dict(range=[1.1 * v_lo - 0.1, 1.1 * runs.v0]), yaxis2=dict(range=[-1.15 * f_hi, 1.15 * f_hi]),
        legend=dict(orientation="h", x=0.0, y=1.3, yanchor="bottom"),
        sliders=[dict(active=keys.index(first), steps=steps, currentvalue=dict(prefix="mu, slope: "),
                      x=0.02, len=0.96, y=-0.15, yanchor="top", pad=dict(t=30))],
    )
    return fig


def slide_widget(runs, mu=FIRST[0], theta=FIRST[1]):
    """Live layer (Jupyter, Voila): sliders for ``mu`` and the slope, the figure redrawn on change.

    Starts at ``(mu, theta)``, the first panel of the page's static figure; settings off the
    grid are simulated when chosen (a tenth of a second each).
    """
    import ipywidgets as W
    import matplotlib.pyplot as plt

    controls = dict(
        mu=W.FloatSlider(value=mu, min=0.0, max=1.2, step=0.05, description="mu", continuous_update=False),
        theta=W.FloatSlider(value=theta, min=0.0, max=60.0, step=2.5, description="slope (deg)",
                            continuous_update=False),
    )

    def show(mu, theta):
        slide_figure(runs, [(round(mu, 4), round(theta, 4))], height=4.6)
        plt.show()

    out = W.interactive_output(show, controls)
    return W.VBox([W.HBox(list(controls.values())), out])
