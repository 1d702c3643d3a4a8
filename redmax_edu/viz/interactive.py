"""Plotly rendering of scenes: kernel-free views that rotate in 3D and respond to a slider.

In the published (static) book there is no Python kernel, so an ipywidget slider cannot
redraw anything. A plotly figure with precomputed frames can: the browser swaps frames
as the slider moves. :func:`scene_player` builds one from a sequence of scenes made by
the same explorer function.
"""

import os

import numpy as np

from .scene import AXIS_COLORS, Arrow, Frame, Marker, Path, union_bounds


def plotly_objects():
    """``plotly.graph_objects``, imported on first use, or an ImportError saying which extra installs it."""
    try:
        import plotly.graph_objects as go
    except ImportError as exc:  # pragma: no cover - plotly is in the [widgets] extra
        raise ImportError("the kernel-free views need plotly: pip install 'redmax_edu[widgets]'") from exc
    return go


#: Set to "page" when notebooks are executed for the book (tools/refresh_notebooks.py, make
#: test): the built page then supplies plotly.js (book/_ext/book_assets.py), so the stored
#: outputs stay small. Unset (live Jupyter), the library is embedded once per session.
PLOTLY_ENV = "REDMAX_EDU_PLOTLY"


def use_offline_renderer():
    """Make plotly figures display as HTML that loads nothing from the network.

    Plotly's own "notebook" renderer embeds plotly.js once per session but also adds a
    MathJax ``<script>`` from a CDN to every figure; this renderer does not, and it does not
    start animations on load. Under ``REDMAX_EDU_PLOTLY=page`` it does not embed plotly.js
    either: the book's page provides it.
    """
    import plotly.io as pio
    from plotly.io._base_renderers import NotebookRenderer

    class OfflineNotebookRenderer(NotebookRenderer):
        def to_mimebundle(self, fig_dict):
            html = pio.to_html(fig_dict, config=self.config, include_plotlyjs=False, include_mathjax=False,
                               full_html=False, auto_play=False, default_width="100%",
                               default_height=525, validate=False)
            return {"text/html": html}

    renderer = OfflineNotebookRenderer()
    renderer.global_init = os.environ.get(PLOTLY_ENV) != "page"
    pio.renderers["redmax_offline"] = renderer
    pio.renderers.default = "redmax_offline"


def _arrow_points(origin, vector, head=0.18):
    """Shaft and a four-line arrowhead as one polyline (None separates the strokes)."""
    origin, vector = np.asarray(origin, float), np.asarray(vector, float)
    tip = origin + vector
    length = np.linalg.norm(vector)
    pts = [origin, tip]
    if length > 1e-12:
        d = vector / length
        helper = np.eye(3)[np.argmin(np.abs(d))]
        u = np.cross(d, helper)
        u /= np.linalg.norm(u)
        w = np.cross(d, u)
        back = tip - head * length * d
        for side in (u, -u, w, -w):
            pts += [None, tip, back + 0.4 * head * length * side]
    else:
        pts += [None, tip, tip] * 4
    xs, ys, zs = ([None if p is None else p[k] for p in pts] for k in range(3))
    return xs, ys, zs


def scene_traces(scene):
    """The plotly traces of a scene, in item order (a frame gives three traces, one per axis)."""
    go = plotly_objects()
    traces = []
    for item in scene.items:
        if isinstance(item, Frame):
            R, p = item.E[:3, :3], item.E[:3, 3]
            for k in range(3):
                end = p + item.scale * R[:, k]
                traces.append(go.Scatter3d(
                    x=[p[0], end[0]], y=[p[1], end[1]], z=[p[2], end[2]],
                    mode="lines+text" if k == 0 else "lines", text=[item.label, ""] if k == 0 else None,
                    textposition="bottom left", line=dict(color=AXIS_COLORS[k], width=5),
                    opacity=item.alpha, name=f"{item.label} {'xyz'[k]}", showlegend=False,
                    hoverinfo="name"))
        elif isinstance(item, Path):
            pts = np.asarray(item.points, float)
            x, y, z = ([None if np.isnan(v) else v for v in pts[:, k]] for k in range(3))  # gaps
            traces.append(go.Scatter3d(
                x=x, y=y, z=z, mode="lines", name=item.label, opacity=item.alpha,
                line=dict(color=item.color, width=2 * item.width, dash="dash" if item.dashed else "solid")))
        elif isinstance(item, Arrow):
            xs, ys, zs = _arrow_points(item.origin, item.vector)
            traces.append(go.Scatter3d(x=xs, y=ys, z=zs, mode="lines", name=item.label,
                                       showlegend=bool(item.label), line=dict(color=item.color, width=5)))
        elif isinstance(item, Marker):
            traces.append(go.Scatter3d(
                x=[item.position[0]], y=[item.position[1]], z=[item.position[2]], mode="markers+text",
                text=[item.label], textposition="top center", name=item.label, showlegend=False,
                marker=dict(color=item.color, size=4)))
        else:
            raise ValueError(f"cannot draw scene item of type {type(item).__name__}")
    return traces


def _notes_annotation(scene):
    return [dict(text="<br>".join(scene.notes), x=0.0, y=1.0, xref="paper", yref="paper",
                 xanchor="left", yanchor="top", showarrow=False, align="left",
                 font=dict(family="monospace", size=11))]


def scene_player(scenes, labels, *, slider_label="", title="", height=560):
    """A plotly figure that steps through ``scenes`` with a slider and a play button.

    Parameters
    ----------
    scenes : sequence of Scene
        Made by one explorer function, so that their items correspond.
    labels : sequence of str
        The slider label of each scene.
    slider_label : str
        Shown before the current label, e.g. ``"t = "``.
    title : str
    height : int
        Pixels.

    Returns
    -------
    plotly.graph_objects.Figure
        Starts at the first scene.
    """
    go = plotly_objects()
    if len(scenes) != len(labels):
        raise ValueError(f"got {len(scenes)} scenes but {len(labels)} labels")
    b = union_bounds(scenes)
    frames = [go.Frame(data=scene_traces(s), name=str(k), layout=dict(annotations=_notes_annotation(s)))
              for k, s in enumerate(scenes)]
    steps = [dict(method="animate", label=lab,
                  args=[[str(k)], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                       transition=dict(duration=0))])
             for k, lab in enumerate(labels)]
    fig = go.Figure(data=frames[0].data, frames=frames)
    axis = dict(showbackground=False, zeroline=False)
    fig.update_layout(
        title=title, height=height, margin=dict(l=0, r=0, t=40, b=0),
        annotations=_notes_annotation(scenes[0]),
        legend=dict(x=1.0, xanchor="right", y=1.0),
        scene=dict(xaxis=dict(range=list(b[0]), title="x", **axis),
                   yaxis=dict(range=list(b[1]), title="y", **axis),
                   zaxis=dict(range=list(b[2]), title="z", **axis), aspectmode="cube",
                   camera=dict(eye=dict(x=1.1, y=-1.1, z=0.7))),
        sliders=[dict(active=0, steps=steps, currentvalue=dict(prefix=slider_label), x=0.2, len=0.8,
                      y=0.0, yanchor="top", pad=dict(t=10))],
        updatemenus=[dict(type="buttons", direction="right", showactive=False, x=0.0, y=0.0,
                          xanchor="left", yanchor="top", pad=dict(t=20),
                          buttons=[dict(label="Play", method="animate",
                                        args=[None, dict(frame=dict(duration=80, redraw=True),
                                                         fromcurrent=True, transition=dict(duration=0))]),
                                   dict(label="Pause", method="animate",
                                        args=[[None], dict(mode="immediate", frame=dict(duration=0))])])],
    )
    return fig
