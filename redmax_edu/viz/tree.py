"""A model's tree of bodies, drawn with the order in which the O(n) algorithms visit it.

The recursive algorithms of §2.10-2.13 (Jacobian products, Alg. 5-6; recursive hybrid
dynamics, Alg. 9; the inverse inertia, Alg. 10) are sweeps over the tree of bodies that
``model.parents`` describes. A **forward** traversal visits every parent before its
children and hands something down each joint (``y_p`` to the child in Alg. 5); a **backward**
traversal visits every child before its parent and hands something up (``alpha_i`` in
Alg. 6). Because a :class:`~redmax_edu.model.Model` lists parents first, the library's
sweeps simply run through the bodies in index order (forward) or in reverse (backward), and
the drawings here show exactly those orders.

A :class:`Sweep` says what one traversal passes along (templates in which ``{i}`` is the
visited body's number and ``{p}`` its parent's); :func:`traversal_figure` draws one panel
per sweep and :func:`traversal_player` steps through the sweeps one visit per frame, a
kernel-free ``to_jshtml`` player for the published page.

Taught in book/02_reduced/10_jacobian_products and 12_recursive_dynamics.
"""

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np

from .._validate import ArgumentTypeError, as_index, as_sequence
from .animate import offline_player_html

__all__ = ["DIRECTIONS", "Sweep", "tree_parents", "traversal_order", "tree_layout", "draw_traversal",
           "traversal_figure", "traversal_player"]

#: The two kinds of traversal: parents before children, or children before parents.
DIRECTIONS = ("forward", "backward")

#: Node colours: not visited yet, being visited, visited.
_WAITING, _CURRENT, _DONE = "white", "#ff9f1c", "#cfe3f5"
_EDGE = "#1f77b4"
#: Horizontal distance between neighbouring leaves (the rows are one unit apart).
_COLUMN = 1.8


@dataclass(frozen=True)
class Sweep:
    """One traversal of the tree and what it passes along.

    Each text is a template: ``{i}`` becomes the number of the visited body (the child, on an
    edge) and ``{p}`` the number of its parent; the rest is kept as written, so TeX braces
    need no escaping (``r"$y_{i}$"`` reads ``$y_{3}$`` at body 3, ``"body {i}"`` reads ``body 3``).

    Attributes
    ----------
    direction : str
        ``"forward"``: parents before children, the edge arrows point down to the child.
        ``"backward"``: children before parents, the arrows point up to the parent.
    title : str
        The panel's title.
    node : str
        What each body holds after its visit, written beside it (e.g. ``r"$y_{i}$"``).
    edge : str
        What crosses the joint between body ``{i}`` and its parent ``{p}``, written on the edge.
    line : str
        What the visit computes, shown under the player's frame (e.g. an algorithm line).
    root_line : str, optional
        The same for a root (a body without a parent); ``line`` when None.
    """

    direction: str
    title: str = ""
    node: str = ""
    edge: str = ""
    line: str = ""
    root_line: str | None = None

    def __post_init__(self):
        if self.direction not in DIRECTIONS:
            raise ValueError(f"argument 'direction' must be one of {DIRECTIONS}, got {self.direction!r}")
        for name in ("title", "node", "edge", "line"):
            if not isinstance(getattr(self, name), str):
                raise ArgumentTypeError(f"argument '{name}' must be a str, got "
                                        f"{type(getattr(self, name)).__name__}")


def tree_parents(tree):
    """The parent index of each body (``-1`` for a root) of a Model or of a sequence of indices.

    Checks that parents come first (``parents[i] < i``), the order in which a
    :class:`~redmax_edu.model.Model` lists its bodies and its sweeps rely on.

    Examples
    --------
    >>> tree_parents([-1, 0, 0, 1])
    (-1, 0, 0, 1)
    """
    parents = getattr(tree, "parents", tree)
    parents = as_sequence(parents, "parents", "parent indices (-1 for a root)")
    if not parents:
        raise ValueError("argument 'parents' is empty: a tree needs at least one body")
    out = []
    for i, p in enumerate(parents):
        p = as_index(p, "parents", minimum=-1)
        if p >= i:
            raise ValueError(f"argument 'parents': body {i} has parent {p}, which does not come before it; "
                             "list parents first")
        out.append(p)
    return tuple(out)


def traversal_order(tree, direction):
    """The body indices in the order a sweep visits them: index order forward, reverse backward.

    Examples
    --------
    >>> traversal_order([-1, 0, 0, 1], "forward"), traversal_order([-1, 0, 0, 1], "backward")
    ([0, 1, 2, 3], [3, 2, 1, 0])
    """
    n = len(tree_parents(tree))
    if direction not in DIRECTIONS:
        raise ValueError(f"argument 'direction' must be one of {DIRECTIONS}, got {direction!r}")
    return list(range(n)) if direction == "forward" else list(reversed(range(n)))


def tree_layout(tree):
    """Positions (n, 2) for drawing the tree: roots on top, one row per depth, leaves side by side.

    Leaves take consecutive columns in depth-first order (children in index order); a parent
    sits midway between its first and last child, so no two edges cross.

    Examples
    --------
    >>> tree_layout([-1, 0, 0])
    array([[ 0.5,  0. ],
           [ 0. , -1. ],
           [ 1. , -1. ]])
    """
    parents = tree_parents(tree)
    n = len(parents)
    children = [[] for _ in range(n)]
    for i, p in enumerate(parents):
        if p >= 0:
            children[p].append(i)
    xy = np.zeros((n, 2))
    column = 0
    for i in range(n):                                  # depths, parents first
        xy[i, 1] = 0.0 if parents[i] < 0 else xy[parents[i], 1] - 1.0

    def place(i):                                       # leaves left to right, parents between
        nonlocal column
        if not children[i]:
            xy[i, 0] = column
            column += 1
            return
        for c in children[i]:
            place(c)
        xy[i, 0] = 0.5 * (xy[children[i][0], 0] + xy[children[i][-1], 0])

    for root in (i for i in range(n) if parents[i] < 0):
        place(root)
    return xy + 0.0


def _fill(template, i, p=None):
    """``template`` with ``{i}``, ``{p}`` replaced by numbers; inside ``$...$`` the braces stay
    (``$y_{i}$`` at body 12 reads ``$y_{12}$``, a two-digit subscript)."""
    pieces = template.split("$")
    for k, piece in enumerate(pieces):
        for key, number in (("{i}", i), ("{p}", p)):
            if number is not None:
                piece = piece.replace(key, f"{{{number}}}" if k % 2 else str(number))
        pieces[k] = piece
    return "$".join(pieces)


def draw_traversal(tree, sweep, ax=None, *, visited=None, first=1, names=None):
    """Draw the tree with one sweep's order, its arrows and its labels; return the axes.

    Parameters
    ----------
    tree : Model or sequence of int
        The bodies' parents (see :func:`tree_parents`).
    sweep : Sweep
    ax : matplotlib Axes, optional
        A 2D axes; a new figure is made when None.
    visited : int, optional
        Draw the sweep in progress: the first ``visited`` bodies of its order are done, the
        next one is highlighted and the labels of bodies not yet reached are left out. None
        draws the finished sweep.
    first : int
        The number shown for body index 0 (1, as in the writeup, by default).
    names : sequence of str, optional
        Names written under the nodes (e.g. ``model.names``).

    Returns
    -------
    matplotlib.axes.Axes
        Each node shows its number, its name and its rank in the visit order (``#k``, small, to
        its left) and ``sweep.node`` (to its right); each edge an arrow in the direction of the
        data, labelled ``sweep.edge``.

    Examples
    --------
    >>> ax = draw_traversal([-1, 0, 0], Sweep("backward", edge=r"$\\alpha_{i}$"))
    >>> sorted(t.get_text() for t in ax.texts if "alpha" in t.get_text())
    ['$\\\\alpha_{2}$', '$\\\\alpha_{3}$']
    >>> plt.close("all")
    """
    parents = tree_parents(tree)
    if not isinstance(sweep, Sweep):
        raise ArgumentTypeError(f"argument 'sweep' must be a Sweep, got {type(sweep).__name__}")
    n = len(parents)
    order = traversal_order(parents, sweep.direction)
    rank = {i: k for k, i in enumerate(order)}
    if visited is not None:
        visited = as_index(visited, "visited")
        if visited > n:
            raise ValueError(f"argument 'visited' is {visited}, but the tree has {n} bodies")
    done = set(order if visited is None else order[:visited])
    current = None if visited is None or visited == n else order[visited]
    if names is not None:
        names = [str(s) for s in as_sequence(names, "names", "body names")]
        if len(names) != n:
            raise ValueError(f"argument 'names' has {len(names)} names for {n} bodies")
    xy = tree_layout(parents) * (_COLUMN, 1.0)
    if ax is None:
        _, ax = plt.subplots(figsize=(4.2, 3.4))
    down = sweep.direction == "forward"
    for i, p in enumerate(parents):
        if p < 0:
            continue
        start, end = (xy[p], xy[i]) if down else (xy[i], xy[p])
        # forward, body i reads what its parent passes during its visit; backward, it hands its
        # share up at the end of its visit
        carried = i in done or (down and i == current)
        ax.annotate("", xy=end, xytext=start, arrowprops=dict(
            arrowstyle="-|>", color=_EDGE if carried else "0.75", lw=1.6 if carried else 1.0,
            shrinkA=13, shrinkB=13, mutation_scale=12))
        if sweep.edge and carried:
            mid = 0.5 * (xy[i] + xy[p])
            left = xy[i, 0] < xy[p, 0]                  # a label outside the fan of edges
            ax.text(mid[0] + (-0.08 if left else 0.08), mid[1], _fill(sweep.edge, i + first, p + first),
                    fontsize=9, color=_EDGE, ha="right" if left else "left", va="center")
    for i in range(n):
        color = _CURRENT if i == current else (_DONE if i in done else _WAITING)
        x, y = xy[i]
        ax.scatter(x, y, s=420, facecolor=color, edgecolor="black", linewidth=1.0, zorder=3)
        ax.text(x, y, str(i + first), ha="center", va="center", fontsize=10, zorder=4)
        below = f"{names[i]}\n#{rank[i] + 1}" if names is not None else f"#{rank[i] + 1}"
        ax.annotate(below, (x, y), xytext=(-14, 0), textcoords="offset points", fontsize=7, color="0.35",
                    ha="right", va="center", zorder=4)
        if sweep.node and i in done:
            ax.annotate(_fill(sweep.node, i + first), (x, y), xytext=(14, -2), textcoords="offset points",
                        fontsize=9, va="top")
    ax.set_xlim(xy[:, 0].min() - 0.75, xy[:, 0].max() + 0.85)
    ax.set_ylim(xy[:, 1].min() - 0.55, 0.3)
    ax.set_axis_off()
    if sweep.title:
        ax.set_title(sweep.title, fontsize=10)
    return ax


def traversal_figure(tree, sweeps, *, first=1, names=None, panel_size=(3.6, 3.4), ncols=None):
    """One panel per sweep (each :func:`draw_traversal`, finished); return the figure.

    The panels sit side by side, or ``ncols`` to a row (a narrow page keeps them legible).

    Examples
    --------
    >>> fig = traversal_figure([-1, 0, 0, 1], [Sweep("forward", "Alg. 5"), Sweep("backward", "Alg. 6")])
    >>> [ax.get_title() for ax in fig.axes]
    ['Alg. 5', 'Alg. 6']
    >>> plt.close(fig)
    """
    sweeps = as_sequence(sweeps, "sweeps", "Sweep objects")
    if not sweeps:
        raise ValueError("argument 'sweeps' is empty: give at least one Sweep")
    ncols = len(sweeps) if ncols is None else min(as_index(ncols, "ncols", minimum=1), len(sweeps))
    nrows = -(-len(sweeps) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel_size[0] * ncols, panel_size[1] * nrows),
                             squeeze=False)
    for ax, sweep in zip(axes.flat, sweeps, strict=False):  # the grid may have empty slots
        draw_traversal(tree, sweep, ax, first=first, names=names)
    for ax in list(axes.flat)[len(sweeps):]:
        ax.remove()                                    # the empty slots of the last row
    fig.tight_layout()
    return fig


def traversal_player(tree, sweeps, *, first=1, names=None, figsize=(5.6, 3.8), dpi=80, interval=900):
    """A kernel-free HTML player stepping through the sweeps one visit per frame.

    Frame k of a sweep highlights the body visited k-th, shows what the bodies visited before
    it hold and pass on, and writes the sweep's ``line`` for that body under the tree. A tree
    of n bodies and s sweeps gives n s frames.

    Returns
    -------
    str
        HTML (``FuncAnimation.to_jshtml`` without network resources); display it with
        ``IPython.display.HTML``.
    """
    from matplotlib.animation import FuncAnimation

    parents = tree_parents(tree)
    sweeps = as_sequence(sweeps, "sweeps", "Sweep objects")
    if not sweeps:
        raise ValueError("argument 'sweeps' is empty: give at least one Sweep")
    frames = [(s, k) for s in sweeps for k in range(len(parents))]
    fig = plt.figure(figsize=figsize, dpi=dpi)
    ax = fig.add_axes((0.0, 0.14, 1.0, 0.78))

    def draw(frame):
        sweep, k = frames[frame]
        ax.cla()
        draw_traversal(parents, sweep, ax, visited=k, first=first, names=names)
        for text in fig.texts:
            text.remove()
        i = traversal_order(parents, sweep.direction)[k]
        p = parents[i]
        line = sweep.line if p >= 0 or sweep.root_line is None else sweep.root_line
        caption = _fill(line, i + first, p + first if p >= 0 else None)
        fig.text(0.5, 0.04, f"visit {k + 1} of {len(parents)}:  {caption}", ha="center", fontsize=10)
        return []

    animation = FuncAnimation(fig, draw, frames=len(frames), interval=interval, blit=False)
    return offline_player_html(animation, fig, dpi=dpi)
