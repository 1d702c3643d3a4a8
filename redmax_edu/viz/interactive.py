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
            config = {**(self.config or {}), **figure_config(fig_dict)}
            html = pio.to_html(fig_dict, config=config, include_plotlyjs=False, include_mathjax=False,
                               full_html=False, auto_play=False, default_width="100%",
                               default_height=525, validate=False,
                               post_script=player_scripts(fig_dict))
            return {"text/html": html}

    renderer = OfflineNotebookRenderer()
    renderer.global_init = os.environ.get(PLOTLY_ENV) != "page"
    pio.renderers["redmax_offline"] = renderer
    pio.renderers.default = "redmax_offline"


#: Run after a player is drawn (``{plot_id}`` is its div): when an animation ends or is
#: paused, each slider is moved to the frame the figure shows. Plotly moves a slider along an
#: animation through a binding that ignores frames while its previous update is pending, so
#: under load a slider could stop at an early frame while the figure went on to the last.
SLIDER_SYNC = """
var gd = document.getElementById('{plot_id}'), shown = null;
gd.on('plotly_animatingframe', function (event) { shown = String(event.name); });
function moveSliders() {
  (gd.layout.sliders || []).forEach(function (slider, s) {
    var k = slider.steps.findIndex(function (step) {
      return step.method === 'animate' && step.args[0] && String(step.args[0][0]) === shown;
    });
    if (shown !== null && k >= 0 && k !== slider.active) {
      var update = {};
      update['sliders[' + s + '].active'] = k;
      Plotly.relayout(gd, update);
    }
  });
}
gd.on('plotly_animated', moveSliders);
gd.on('plotly_animationinterrupted', moveSliders);
"""

#: Run after a grid player is drawn (a figure whose ``layout.meta.grid`` names its frames by
#: row and column, as :func:`redmax_edu.viz.integrator_explorer.integrator_player` makes): a row
#: of buttons (``updatemenus[menu]``) picks the row, a slider (``sliders[slider]``) the column,
#: and the figure animates to the frame of the pair. One slider of short labels then replaces a
#: slider of every pair, whose labels plotly would thin out.
GRID_PLAYER = """
var gd = document.getElementById('{plot_id}'), grid = gd.layout.meta.grid;
var row = gd.layout.updatemenus[grid.menu].active, column = gd.layout.sliders[grid.slider].active;
function showPair() {
  Plotly.animate(gd, [grid.frames[row][column]],
                 {mode: 'immediate', frame: {duration: 0, redraw: true}, transition: {duration: 0}});
}
gd.on('plotly_buttonclicked', function (event) {
  if (event.menu._index === grid.menu) { row = event.active; showPair(); }
});
gd.on('plotly_sliderchange', function (event) {
  if (event.slider._index === grid.slider) { column = event.slider.active; showPair(); }
});
"""


def player_scripts(fig_dict):
    """The scripts a figure's HTML runs after drawing: :data:`SLIDER_SYNC` for a figure with
    frames, and :data:`GRID_PLAYER` for a grid player."""
    scripts = [SLIDER_SYNC] if fig_dict.get("frames") else []
    if "grid" in ((fig_dict.get("layout") or {}).get("meta") or {}):
        scripts.append(GRID_PLAYER)
    return scripts or None


#: The 3-D views keep two buttons of plotly's toolbar: reset the camera, save a picture.
TOOLBAR_3D_REMOVED = ["zoom3d", "pan3d", "orbitRotation", "tableRotation", "resetCameraLastSave3d",
                      "hoverClosest3d", "sendDataToCloud", "sendChartToCloud"]


def figure_config(fig_dict):
    """The plotly config a book figure is shown with.

    A 2-D figure shows no toolbar: it would sit over a subplot title or a legend entry, and on
    a touch screen it stays there; dragging still zooms and a double click resets the axes. A
    3-D view keeps a short toolbar (reset the camera, save a picture) in the band its title
    leaves free (:func:`scene_player`).
    """
    if "scene" in (fig_dict.get("layout") or {}):
        return {"displaylogo": False, "modeBarButtonsToRemove": TOOLBAR_3D_REMOVED}
    return {"displayModeBar": False}


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


#: The 3-D players' look: axes on a light grey box with darker grid lines and edges (plotly's
#: default draws white grid lines on a grey box; without the box they vanish on a white page).
AXIS_STYLE = dict(showbackground=True, backgroundcolor="rgb(244,246,249)", gridcolor="rgb(200,205,214)",
                  showline=True, linecolor="rgb(110,110,110)", zeroline=False, showspikes=False,
                  tickfont=dict(size=10))
NOTE_LINE, LEGEND_ENTRY, TITLE_BAND = 15, 18, 36   # pixels


def _notes_annotation(scene):
    """The scene's notes, in the band above the 3-D view (never over its ticks)."""
    return [dict(text="<br>".join(scene.notes), x=0.0, y=1.0, xref="paper", yref="paper",
                 xanchor="left", yanchor="bottom", showarrow=False, align="left",
                 font=dict(family="monospace", size=11))]


def _band_height(scenes, traces):
    """Pixels above the 3-D view for the notes (left) and the legend (right), side by side."""
    notes = max(len(s.notes) for s in scenes) * NOTE_LINE + 8 if any(s.notes for s in scenes) else 0
    entries = sum(1 for tr in traces if tr.showlegend is not False and tr.name)
    return max(notes, LEGEND_ENTRY * entries + 8 if entries else 0, 10)


def scene_player(scenes, labels, *, slider_label="", title="", height=560):
    """A plotly figure that steps through ``scenes`` with a slider and a play button.

    The title runs along the top; below it, the scenes' notes (left) and the legend (right)
    share a band above the 3-D view, sized to hold both, so that neither covers the view or
    its ticks; the slider and the buttons sit below the view. The axes are drawn on a light
    box, and the camera stands far enough back for the tick labels and axis titles of the
    scenes' bounds to fit in the view.

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
        Pixels of the 3-D view, the band above it and the controls below it together (the
        figure grows by the band, so that the view keeps its size).

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
    band = _band_height(scenes, fig.data)
    fig.update_layout(
        title=dict(text=title, x=0.0, xanchor="left", xref="paper", y=1.0, yref="container",
                   yanchor="top", pad=dict(t=8), font=dict(size=15)),
        height=height + band, margin=dict(l=10, r=10, t=TITLE_BAND + band, b=10),
        annotations=_notes_annotation(scenes[0]),
        legend=dict(x=1.0, xanchor="right", y=1.0, yanchor="bottom", font=dict(size=11),
                    bgcolor="rgba(255,255,255,0)"),
        scene=dict(xaxis=dict(range=list(b[0]), title="x", **AXIS_STYLE),
                   yaxis=dict(range=list(b[1]), title="y", **AXIS_STYLE),
                   zaxis=dict(range=list(b[2]), title="z", **AXIS_STYLE), aspectmode="cube",
                   camera=dict(eye=dict(x=1.4, y=-1.4, z=0.88))),
        sliders=[dict(active=0, steps=steps, currentvalue=dict(prefix=slider_label), x=0.22, len=0.75,
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
