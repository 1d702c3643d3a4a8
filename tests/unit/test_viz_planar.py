"""The planar (projected) drawing of scenes, used by the adjoint explorer's static figure."""

import numpy as np
import pytest

from redmax_edu.viz.explorers import adjoint_figure, adjoint_scene, observer_pose
from redmax_edu.viz.planar import draw_panels_planar, draw_scene_planar
from redmax_edu.viz.scene import Scene


def test_top_view_draws_the_projection_of_every_item():
    scene = adjoint_scene(observer_pose(0.25))
    ax = draw_scene_planar(scene, plane="xy")
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("x", "y")
    np.testing.assert_allclose(ax.get_xlim(), scene.bounds[0])
    np.testing.assert_allclose(ax.get_ylim(), scene.bounds[1])
    body = [line for line in ax.get_lines() if line.get_label() == "body"][0]
    box = [item for item in scene.items if getattr(item, "label", "") == "body"][0]
    np.testing.assert_allclose(body.get_xydata(), np.asarray(box.points)[:, :2])


def test_other_planes_and_bad_planes():
    scene = adjoint_scene(observer_pose(0.0))
    ax = draw_scene_planar(scene, plane="zx")
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("z", "x")
    for bad in ("xyz", "top", 3, None):
        with pytest.raises(ValueError, match="'plane'"):
            draw_scene_planar(scene, plane=bad)
    with pytest.raises(ValueError, match="scene item"):
        draw_scene_planar(Scene(("not an item",), scene.bounds))


def test_adjoint_figure_is_the_library_scene_in_top_view():
    fig, scenes = adjoint_figure((0.0, 0.5))
    assert len(fig.axes) == 2 and len(scenes) == 2
    assert scenes[0].notes == adjoint_scene(observer_pose(0.0)).notes
    fig = draw_panels_planar(scenes * 2, ncols=3)
    assert len(fig.axes) == 4
    for bad in ([], [[0.0, 1.0]], [1j]):
        with pytest.raises(ValueError, match="'s_values'"):
            adjoint_figure(bad)
