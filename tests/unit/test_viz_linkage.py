"""The explorers of §2.8 (redmax_edu.viz.linkage): closing a loop by Newton's method, the crank
sweep and its three layers, and the drift explorer's runs and layers.

The four-bar here is a small crank-rocker (ground 2, crank 0.5, coupler 2, rocker 1.5 m, Grashof:
0.5 + 2 <= 2 + 1.5) with the world as its ground, so every crank angle has a closed pose.
Newton's tolerances: close_loop stops below 1e-12 m; comparisons with plane geometry allow 1e-10
(a few Newton steps' round-off on metre-sized links).
"""

import numpy as np
import pytest

from redmax_edu.constrained import constraint_errors
from redmax_edu.constraints import CoordinateCoupling, Loop
from redmax_edu.joints import Revolute
from redmax_edu.kinematics import forward_kinematics
from redmax_edu.model import Body, Model
from redmax_edu.viz.linkage import (
    close_loop,
    closure_velocity,
    constraint_drift,
    crank_figure,
    crank_player,
    crank_sweep,
    drift_figure,
    drift_player,
    drift_runs,
    linkage_scene,
)

GROUND, CRANK, COUPLER, ROCKER = 2.0, 0.5, 2.0, 1.5


def _bar(name, parent, length, at):
    hinge, centre = np.eye(4), np.eye(4)
    hinge[0, 3] = at
    centre[0, 3] = length / 2
    return Body(name, parent, Revolute([0, -1, 0]), hinge, centre, length,
                length * np.diag([1e-3, length**2 / 12, length**2 / 12]))


def four_bar():
    """Crank hinged at the world origin, rocker's end pinned to the world point (GROUND, 0, 0)."""
    tree = Model([_bar("crank", -1, CRANK, 0.0), _bar("coupler", 0, COUPLER, CRANK),
                  _bar("rocker", 1, ROCKER, COUPLER)])
    return tree.with_constraints([Loop.hinge(tree, 2, [ROCKER / 2, 0, 0], -1, [GROUND, 0, 0])])


def coupler_end_by_circles(theta, up=True):
    """Plane geometry: the coupler's far end, on the circle about the crank's end and the one
    about the ground pin (x, z)."""
    b = CRANK * np.array([np.cos(theta), np.sin(theta)])
    pin = np.array([GROUND, 0.0])
    d = np.linalg.norm(pin - b)
    u = (pin - b) / d
    along = (COUPLER**2 - ROCKER**2 + d**2) / (2 * d)
    across = np.sqrt(COUPLER**2 - along**2)
    return b + along * u + (1 if up else -1) * across * np.array([-u[1], u[0]])


@pytest.fixture(scope="module")
def sweep():
    model = four_bar()
    return crank_sweep(model, [0.0, 1.2, -2.4], 0, samples=25, coupler=(1, [0.0, 0.0, 0.2]))


def test_close_loop_meets_plane_geometry_and_keeps_the_driven_angle():
    model = four_bar()
    q = close_loop(model, [0.7, 1.0, -2.4], driven=[0])
    assert q[0] == 0.7
    assert np.abs(constraint_errors(model, q)[0]).max() < 1e-12
    end = forward_kinematics(model, q).E_wj[2][[0, 2], 3]
    np.testing.assert_allclose(end, coupler_end_by_circles(0.7), atol=1e-10)


def test_close_loop_refuses_an_unreachable_pose_and_bad_indices():
    model = four_bar()
    arm = Model(list(model.bodies[:2]),
                constraints=[Loop(1, [COUPLER / 2, 0, 0], -1, [10.0, 0, 0], axis=[0, -1, 0])])
    with pytest.raises(ValueError, match="close_loop: the position error is still"):
        close_loop(arm, [0.0, 0.0], driven=[0])
    with pytest.raises(ValueError, match="'driven'"):
        close_loop(model, [0.0, 1.0, -2.4], driven=[3])


def test_closure_velocity_satisfies_the_rows_and_keeps_the_rate():
    model = four_bar()
    q = close_loop(model, [0.3, 1.0, -2.4], driven=[0])
    qdot = closure_velocity(model, q, [0], [2.0])
    assert qdot[0] == 2.0
    h = 1e-6  # the loop stays closed to first order along qdot: the gap is O(h^2)
    assert np.abs(constraint_errors(model, q + h * qdot)[0]).max() < 1e-10
    coupled = Model(list(model.bodies), constraints=[CoordinateCoupling(0, 2, ratio=3.0)])
    np.testing.assert_allclose(closure_velocity(coupled, np.zeros(3), [0, 1], [1.0, 0.5]), [1.0, 0.5, 3.0])


def test_sweep_follows_one_branch_round_a_full_turn(sweep):
    assert sweep.q.shape == (25, 3) and sweep.curve.shape == (25, 3)
    np.testing.assert_allclose(sweep.angles[[0, -1]], [0.0, 2 * np.pi])
    ends = np.array([forward_kinematics(sweep.model, q).E_wj[2][[0, 2], 3] for q in sweep.q])
    circles = np.array([coupler_end_by_circles(a) for a in sweep.angles])
    np.testing.assert_allclose(ends, circles, atol=1e-10)
    np.testing.assert_allclose(sweep.curve[-1], sweep.curve[0], atol=1e-10)  # the coupler curve closes
    # off the grid: Newton from the nearest sample lands on the same branch
    end = forward_kinematics(sweep.model, sweep.pose(1.0)).E_wj[2][[0, 2], 3]
    np.testing.assert_allclose(end, coupler_end_by_circles(1.0), atol=1e-10)


def test_sweep_refuses_bad_angles_and_coupler():
    model = four_bar()
    with pytest.raises(ValueError, match="increasing"):
        crank_sweep(model, [0.0, 1.2, -2.4], 0, angles=[0.5, 0.1])
    with pytest.raises(ValueError, match="'coupler'"):
        crank_sweep(model, [0.0, 1.2, -2.4], 0, samples=3, coupler=(5, [0, 0, 0]))


def test_the_three_layers_start_at_the_same_pose(sweep):
    import matplotlib.pyplot as plt

    scene = linkage_scene(sweep, sweep.angles[0])
    assert scene.notes[0] == "crank 0 deg" and len(scene.notes) == 3
    fig = crank_figure(sweep, [0.0, 1.0])
    assert len(fig.axes) == 3
    plt.close(fig)
    pytest.importorskip("plotly")
    player = crank_player(sweep)
    assert len(player.frames) == 25 and len(player.layout.sliders[0].steps) == 25
    moving = player.frames[0].traces
    for k, trace in zip(moving, player.frames[0].data, strict=True):  # frame 0 = the traces shown first
        np.testing.assert_array_equal(np.asarray(player.data[k].x, float), np.asarray(trace.x, float))
    assert len(player.to_json()) < 200_000  # light: a 25-frame player stays far below the page budget
    pytest.importorskip("ipywidgets")
    from redmax_edu.viz.linkage import crank_widget

    assert crank_widget(sweep, angle=np.radians(30)).children[0].value == 30.0


def test_constraint_drift_is_zero_when_closed_and_refuses_a_model_without_position_rows():
    model = four_bar()
    q = close_loop(model, [0.3, 1.0, -2.4], driven=[0])
    assert constraint_drift(model, [0.0], [q])[0] < 1e-12
    with pytest.raises(ValueError, match="nothing drifts"):
        constraint_drift(Model(list(model.bodies)), [0.0], [q])


def test_drift_runs_and_their_layers():
    model = four_bar()
    q = close_loop(model, [np.pi / 2, -1.0, -2.0], driven=[0])
    runs = drift_runs(model, q, np.zeros(3), (0.0, 0.2), h=0.01, gains=(0.0, 10.0))
    assert sorted(runs.rk45) == [0.0, 10.0] and runs.drift["euler", 10.0].shape == (21,)
    assert runs.drift["euler", 0.0][-1] > runs.drift["euler", 10.0][-1]  # the gain pulls the gap back
    with pytest.raises(ValueError, match="baumgarte"):
        runs.get(-1.0)
    import matplotlib.pyplot as plt

    fig = drift_figure(runs, [0.0, 10.0])
    assert len(fig.axes) == 4
    plt.close(fig)
    pytest.importorskip("plotly")
    player = drift_player(runs, gains=(0.0, 10.0))
    assert len(player.frames) == 2
    np.testing.assert_allclose(player.data[1].y, player.frames[0].data[1].y)
