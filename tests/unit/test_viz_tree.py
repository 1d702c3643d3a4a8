"""The tree drawings of the O(n) algorithms (redmax_edu.viz.tree): layout, traversal orders, labels."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from redmax_edu.joints import Revolute
from redmax_edu.model import Body, Model
from redmax_edu.viz.tree import (
    Sweep,
    draw_traversal,
    traversal_figure,
    traversal_order,
    traversal_player,
    tree_layout,
    tree_parents,
)

#: A torso (1) with a head (2) and two two-link arms (3-4, 5-6), and a second tree of one body.
PARENTS = (-1, 0, 0, 2, 0, 4, -1)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _model(parents):
    below = np.eye(4)
    below[2, 3] = -0.5
    return Model([Body(f"b{i}", p, Revolute([0, 1, 0]), np.eye(4), below, 1.0, 0.01 * np.eye(3))
                  for i, p in enumerate(parents)])


def _texts(ax):
    return [t.get_text() for t in ax.texts]


def test_a_model_and_its_parent_list_give_the_same_tree():
    model = _model(PARENTS)
    assert tree_parents(model) == tree_parents(list(PARENTS)) == PARENTS
    np.testing.assert_array_equal(tree_layout(model), tree_layout(PARENTS))


@pytest.mark.parametrize("parents", [PARENTS, (-1, 0, 1, 2, 3), (-1, 0, 0, 1, 1, 2, 2), (-1,)])
def test_the_layout_puts_children_one_row_below_and_parents_between_them(parents):
    xy = tree_layout(parents)
    for i, p in enumerate(parents):
        if p >= 0:
            assert xy[i, 1] == xy[p, 1] - 1.0
            kids = [c for c, q in enumerate(parents) if q == p]
            assert min(xy[kids, 0]) <= xy[p, 0] <= max(xy[kids, 0])
        else:
            assert xy[i, 1] == 0.0
    leaves = [i for i in range(len(parents)) if i not in parents]
    assert len({xy[i, 0] for i in leaves}) == len(leaves)      # no two leaves on one spot


def test_a_chain_is_drawn_as_a_vertical_line():
    xy = tree_layout([-1, 0, 1, 2])
    np.testing.assert_array_equal(xy[:, 0], 0.0)
    np.testing.assert_array_equal(xy[:, 1], [0, -1, -2, -3])


def test_forward_visits_parents_first_and_backward_children_first():
    forward, backward = traversal_order(PARENTS, "forward"), traversal_order(PARENTS, "backward")
    assert sorted(forward) == sorted(backward) == list(range(len(PARENTS)))
    for i, p in enumerate(PARENTS):
        if p >= 0:
            assert forward.index(p) < forward.index(i)
            assert backward.index(i) < backward.index(p)


def test_the_finished_sweep_labels_every_body_and_every_joint():
    sweep = Sweep("backward", "Alg. 6", node=r"$x_{i}$", edge=r"$\alpha_{i}$")
    texts = _texts(draw_traversal(PARENTS, sweep))
    joints = [i for i, p in enumerate(PARENTS) if p >= 0]
    assert sorted(t for t in texts if "alpha" in t) == sorted(rf"$\alpha_{{{i + 1}}}$" for i in joints)
    assert sum("x_" in t for t in texts) == len(PARENTS)
    # rank in the visit order: the last body is visited first
    assert "#1" in texts and f"#{len(PARENTS)}" in texts


def test_two_digit_numbers_keep_their_subscript_braces_and_plain_text_has_none():
    chain = [-1] + list(range(11))
    sweep = Sweep("forward", node=r"$y_{i}$ of body {i}")
    texts = _texts(draw_traversal(chain, sweep, first=1))
    assert "$y_{12}$ of body 12" in texts


def test_a_sweep_in_progress_labels_only_the_bodies_already_visited():
    sweep = Sweep("forward", node=r"$y_{i}$", edge=r"$y_{p}$")
    ax = draw_traversal(PARENTS, sweep, visited=3)
    texts = _texts(ax)
    # bodies 1-3 are done (their y beside them, y_1 on the edges 1-2 and 1-3); body 4 is being
    # visited and reads y_3 from its parent; bodies 5-7 show nothing yet
    nodes = ["$y_{1}$", "$y_{2}$", "$y_{3}$"]
    edges = ["$y_{1}$", "$y_{1}$", "$y_{3}$"]
    assert sorted(t for t in texts if t.startswith("$y_")) == sorted(nodes + edges)
    with pytest.raises(ValueError, match="'visited'"):
        draw_traversal(PARENTS, sweep, visited=len(PARENTS) + 1)


def test_a_figure_has_one_panel_per_sweep_and_a_player_one_frame_per_visit():
    sweeps = [Sweep("forward", "Alg. 5", line=r"$y_{i} = A y_{p} + A S x_{i}$",
                    root_line=r"$y_{i} = A S x_{i}$"),
              Sweep("backward", "Alg. 6", line=r"$\alpha_{i}$ handed to {p}")]
    fig = traversal_figure(PARENTS, sweeps, names=[f"b{i}" for i in range(len(PARENTS))])
    assert [ax.get_title() for ax in fig.axes] == ["Alg. 5", "Alg. 6"]
    grid = traversal_figure(PARENTS, sweeps * 2 + sweeps[:1], ncols=2)      # 5 panels, 2 to a row
    assert len(grid.axes) == 5 and grid.get_size_inches()[1] == pytest.approx(3 * 3.4)
    with pytest.raises(ValueError, match="'ncols'"):
        traversal_figure(PARENTS, sweeps, ncols=0)
    html = traversal_player([-1, 0, 0], sweeps, dpi=30, figsize=(2.0, 1.6))
    assert html.count("data:image/png") == 3 * len(sweeps)
    assert "https://" not in html and "http://" not in html


@pytest.mark.parametrize(("parents", "words"), [
    ([-1, 1], "does not come before"),
    ([0], "does not come before"),
    ([-1, -2], ">= -1"),
    ([], "empty"),
    ([-1, 0.5], "integer"),
    (3, "list of parent"),
])
def test_a_bad_tree_is_named(parents, words):
    with pytest.raises(ValueError, match=f"'parents'.*{words}|{words}.*"):
        tree_parents(parents)


def test_bad_sweeps_and_names_are_named():
    with pytest.raises(ValueError, match="'direction'"):
        Sweep("sideways")
    with pytest.raises(ValueError, match="'direction'"):
        traversal_order(PARENTS, "up")
    with pytest.raises(ValueError, match="'sweep'"):
        draw_traversal(PARENTS, "forward")
    with pytest.raises(ValueError, match="'names'"):
        draw_traversal(PARENTS, Sweep("forward"), names=["a", "b"])
    with pytest.raises(ValueError, match="'sweeps'"):
        traversal_figure(PARENTS, [])
    with pytest.raises(ValueError, match="'node'"):
        Sweep("forward", node=3)
