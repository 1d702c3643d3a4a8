"""The Baumgarte explorer of §1.12: drift in consistent units, and its three layers from one set of runs."""

import numpy as np
import pytest

from redmax_edu.lie import exp_se3
from redmax_edu.maximal.body import RigidBody
from redmax_edu.maximal.constraints import Joint
from redmax_edu.maximal.system import System
from redmax_edu.viz.baumgarte_explorer import (
    baumgarte_figure,
    baumgarte_player,
    baumgarte_runs,
    joint_drift,
)

HINGE = exp_se3([-np.pi / 2, 0, 0, 0, 0, 0])  # hinge axis along world y


def _pendulum(kind="revolute"):
    rod = RigidBody.cuboid("rod", [0.05, 0.05, 1.0], mass=1.0)
    E = exp_se3([0, 0.8, 0, 0, 0, 0])[None] @ exp_se3([0, 0, 0, 0, 0, -0.5])[None]
    return System([rod], joints=[Joint.at(kind, 0, -1, HINGE, E)]), E


def test_gap_is_metres_and_tilt_is_radians():
    system, E = _pendulum()
    moved = E.copy()
    moved[0, :3, 3] += [0.003, 0.0, 0.004]  # 5 mm off the pivot, no rotation
    gap, tilt = joint_drift(system, moved)
    assert gap == pytest.approx(0.005) and tilt == pytest.approx(0.0, abs=1e-15)
    # turning about the hinge axis itself is allowed: no tilt; about another axis: tilt = angle
    pivot = HINGE[:3, 3]
    for axis, angle in (([0, 1, 0], 0.0), ([1, 0, 0], 0.2)):
        R = exp_se3(np.r_[0.2 * np.array(axis, float), 0, 0, 0])
        turned = R @ E[0]
        turned[:3, 3] = R[:3, :3] @ (E[0, :3, 3] - pivot) + pivot  # about the pivot point
        gap, tilt = joint_drift(system, turned[None])
        assert gap == pytest.approx(0.0, abs=1e-12)
        assert tilt == pytest.approx(angle, abs=1e-12)


def test_fixed_joint_tilt_is_the_full_rotation_angle_and_spherical_has_none():
    for kind, expected in (("fixed", 0.3), ("spherical", 0.0)):
        system, E = _pendulum(kind)
        turned = E.copy()
        turned[0, :3, :3] = exp_se3([0.3, 0, 0, 0, 0, 0])[:3, :3] @ E[0, :3, :3]
        assert joint_drift(system, turned)[1] == pytest.approx(expected, abs=1e-12)


def test_bad_pose_shape_is_refused():
    system, _ = _pendulum()
    with pytest.raises(ValueError, match="argument 'E'"):
        joint_drift(system, np.zeros((2, 4, 4)))


@pytest.fixture(scope="module")
def runs():
    system, E = _pendulum()
    return baumgarte_runs(system, E, np.zeros((1, 6)), 0.01, 50, gains=(0.0, 10.0))


def test_runs_keep_the_drift_of_every_gain(runs):
    assert sorted(runs.gap) == [0.0, 10.0]
    assert runs.gap[0.0].shape == (51,)
    with pytest.raises(ValueError, match="gain"):
        runs.get(-1.0)


def test_no_joints_is_refused():
    rod = RigidBody.cuboid("rod", [0.05, 0.05, 1.0], mass=1.0)
    with pytest.raises(ValueError, match="no joints"):
        baumgarte_runs(System([rod]), np.eye(4)[None], np.zeros((1, 6)), 0.01, 5)


def test_figure_and_player_show_every_gain(runs):
    fig = baumgarte_figure(runs, [0.0, 10.0])
    assert len(fig.axes) == 4
    pytest.importorskip("plotly")
    player = baumgarte_player(runs, gains=(0.0, 10.0), points=10)
    assert len(player.frames) == 2 and len(player.layout.sliders[0].steps) == 2
    np.testing.assert_allclose(player.data[0].y, player.frames[0].data[0].y)


def test_widget_starts_at_the_first_gain(runs):
    pytest.importorskip("ipywidgets")
    from redmax_edu.viz.baumgarte_explorer import baumgarte_widget

    assert baumgarte_widget(runs, gain=0.0).children[0].value == 0.0
