"""Unit tests of the joint explorer (redmax_edu.viz.joint_explorer and its live widget).

The picture claims two things a test can check: the child frame is drawn at ``Q(q)``, and
each column of ``S`` is drawn as the screw of the twist the child gets from that
coordinate alone, which the finite differences of ``Q`` give independently.
"""

import numpy as np
import pytest

from redmax_edu.checks import numerical_derivative
from redmax_edu.lie import inv_se3, screw, unbrac
from redmax_edu.viz.interactive import scene_player
from redmax_edu.viz.joint_explorer import JOINT_PRESETS, joint_presets, joint_scene, joint_sweep
from redmax_edu.viz.scene import Arrow, Frame, Path

PRESETS = joint_presets()



def test_every_preset_is_a_valid_spec_of_a_known_joint_type():
    # presets of joint types the library does not know yet are skipped, never wrong
    assert {"revolute", "prismatic", "planar", "translational"} <= set(PRESETS)
    for name, (joint, q0, q1) in PRESETS.items():
        assert joint.kind == JOINT_PRESETS[name][0]["type"]
        assert q0.shape == q1.shape == (joint.ndof,)


@pytest.mark.parametrize("name", list(PRESETS))
def test_child_frame_is_drawn_at_Q_of_q(name):
    joint, q0, _ = PRESETS[name]
    scene = joint_scene(joint, q0)
    child = next(item for item in scene.items if isinstance(item, Frame) and item.label == "child Q(q)")
    np.testing.assert_allclose(child.E, joint.Q(q0), atol=1e-12)


@pytest.mark.parametrize("name", list(PRESETS))
def test_columns_of_S_are_drawn_as_the_screws_of_finite_differences_of_Q(name):
    joint, q0, _ = PRESETS[name]
    scene = joint_scene(joint, q0)
    Q = joint.Q(q0)
    dQ = numerical_derivative(joint.Q, q0)  # (4, 4, ndof), central differences
    for k in range(joint.ndof):
        twist = unbrac(inv_se3(Q) @ dQ[:, :, k])
        item = next(i for i in scene.items if i.label == f"S column {k + 1}")
        point, direction, pitch = screw(twist)
        if isinstance(item, Arrow):       # a pure translation, drawn from the child origin
            assert np.isinf(pitch)
            got = item.vector / np.linalg.norm(item.vector)
            np.testing.assert_allclose(got, Q[:3, :3] @ direction, atol=1e-6)
        else:                             # a rotation: the axis line through the screw's point
            assert isinstance(item, Path)
            a, b = item.points
            drawn = (b - a) / np.linalg.norm(b - a)
            np.testing.assert_allclose(drawn, Q[:3, :3] @ direction, atol=1e-6)
            on_axis = Q[:3, :3] @ point + Q[:3, 3] - a
            assert np.linalg.norm(np.cross(on_axis, drawn)) < 1e-6


def test_the_check_catches_a_column_drawn_from_a_wrong_S():
    joint, q0, _ = PRESETS["revolute"]
    Q = joint.Q(q0)
    wrong = -joint.S(q0)[:, 0]  # a flipped sign: the screw direction flips
    _, direction, _ = screw(wrong)
    twist = unbrac(inv_se3(Q) @ numerical_derivative(joint.Q, q0)[:, :, 0])
    assert not np.allclose(direction, screw(twist)[1], atol=1e-6)


def test_sweep_scenes_share_items_and_play_in_plotly():
    joint, q0, q1 = PRESETS["planar"]
    scenes, labels = joint_sweep(joint, q0, q1, steps=5)
    assert len(scenes) == len(labels) == 5
    signatures = {tuple((type(i).__name__, i.label) for i in s.items) for s in scenes}
    assert len(signatures) == 1
    np.testing.assert_allclose(scenes[-1].items[1].E, joint.Q(q1))
    fig = scene_player(scenes, labels)
    assert len(fig.frames) == 5


def test_joint_scene_rejects_coordinates_of_the_wrong_length():
    joint = PRESETS["revolute"][0]
    with pytest.raises(ValueError, match="q of revolute joint"):
        joint_scene(joint, [0.1, 0.2])


def test_joint_explorer_starts_at_the_preset_and_disables_unused_sliders():
    import ipywidgets as W

    from redmax_edu.viz.widgets import joint_explorer

    box = joint_explorer("planar")
    sliders = {w.description: w for row in box.children for w in getattr(row, "children", ())
               if isinstance(w, W.FloatSlider)}
    joint, q0, _ = PRESETS["planar"]
    assert [sliders[f"q{k + 1}"].value for k in range(2)] == list(q0)
    assert [sliders[f"q{k + 1}"].disabled for k in range(6)] == [False, False] + [True] * 4
    box.children[0].value = "revolute"          # switching type resets the sliders
    assert sliders["q1"].value == PRESETS["revolute"][1][0] and sliders["q2"].disabled
    with pytest.raises(ValueError, match="kind"):
        joint_explorer("hinge")
