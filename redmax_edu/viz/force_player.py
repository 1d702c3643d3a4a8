"""Kernel-free layer of the force explorer (§1.9): a plotly figure with one frame per force.

The live version is :func:`redmax_edu.viz.widgets.force_explorer` (it also runs the
finite-difference checks); the static figure of the page draws three of the forces with
:func:`redmax_edu.viz.plots.plot_force_terms`. This player shows every force's ``f``,
``K`` and ``D`` and swaps them as its slider moves, with no kernel.

Taught in book/01_maximal/09_forces.
"""

import numpy as np

__all__ = ["force_terms_player"]


def _symmetric(M):
    scale = float(np.abs(M).max())
    return (-scale, scale) if scale > 0 else (-1.0, 1.0)


def force_terms_player(examples, *, height=380):
    """A plotly figure: ``f`` as bars, ``K`` and ``D`` as heat maps, one frame per force.

    Parameters
    ----------
    examples : dict of str to (Force, E, phi)
        Each force with the state (poses (n, 4, 4), twists (n, 6)) to evaluate it at.
    height : int
        Pixels.

    Returns
    -------
    plotly.graph_objects.Figure
        Starts at the first force; each heat map's colour scale is symmetric about zero and
        set by that matrix's largest entry, as in the static figure.
    """
    from plotly.subplots import make_subplots

    from .interactive import plotly_objects

    go = plotly_objects()
    if not examples:
        raise ValueError("argument 'examples' must hold at least one force")
    names = list(examples)

    def traces(name):
        force, E, phi = examples[name]
        terms = force.evaluate(E, phi)
        f = np.round(terms.f, 6) + 0.0
        out = [go.Bar(x=np.arange(len(f)), y=f, marker_color="#1f77b4", name="f")]
        for M, show_scale in ((terms.K, False), (terms.D, True)):
            lo, hi = _symmetric(M)
            out.append(go.Heatmap(z=np.round(M, 6) + 0.0, zmin=lo, zmax=hi, colorscale="RdBu",
                                  reversescale=True, showscale=show_scale,
                                  colorbar=dict(len=0.8, thickness=10)))
        return out

    fig = make_subplots(rows=1, cols=3, subplot_titles=("f", "K = df/dq", "D = df/dphi"),
                        column_widths=[0.3, 0.35, 0.35])
    for col, trace in enumerate(traces(names[0]), start=1):
        fig.add_trace(trace, row=1, col=col)
    def f_range(name):
        force, E, phi = examples[name]
        lo, hi = _symmetric(force.evaluate(E, phi).f)
        return dict(yaxis=dict(range=[1.1 * lo, 1.1 * hi]))

    fig.frames = [go.Frame(data=traces(name), traces=[0, 1, 2], name=str(k), layout=f_range(name))
                  for k, name in enumerate(names)]
    fig.update_layout(**f_range(names[0]))
    steps = [dict(method="animate", label=name,
                  args=[[str(k)], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                       transition=dict(duration=0))])
             for k, name in enumerate(names)]
    for axis in ("yaxis2", "yaxis3"):
        fig.layout[axis].update(autorange="reversed", showticklabels=False)
    fig.update_layout(height=height, margin=dict(l=40, r=10, t=40, b=10), showlegend=False,
                      xaxis_title="maximal coordinate",
                      xaxis2=dict(showticklabels=False), xaxis3=dict(showticklabels=False),
                      sliders=[dict(active=0, steps=steps, currentvalue=dict(prefix="force: "),
                                    x=0.0, len=1.0, y=-0.2, yanchor="top", pad=dict(t=30))])
    return fig
