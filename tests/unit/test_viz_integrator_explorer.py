"""The integrator explorer of §1.8: one set of runs feeding a static figure, a plotly player and a widget."""

import numpy as np
import pytest

from redmax_edu.lie import exp_se3
from redmax_edu.maximal.body import RigidBody
from redmax_edu.maximal.forces import Attachment, PointSpring
from redmax_edu.maximal.system import System
from redmax_edu.viz.integrator_explorer import (
    integrator_figure,
    integrator_player,
    integrator_runs,
)

STEPS = (0.1, 0.05)


@pytest.fixture(scope="module")
def grid():
    box = RigidBody.cuboid("box", [0.4, 0.3, 0.2], mass=1.0)
    system = System([box], forces=[PointSpring(Attachment(0, [0, 0, 0]), Attachment(-1, [0, 0, 0]), 20.0)])
    E0 = exp_se3([0.3, 0.2, 0.1, 0.5, 0.0, -0.8])[None]
    phi0 = np.array([[0.0, 0.0, 1.0, 0.5, 0.0, 0.0]])
    return integrator_runs(system, E0, phi0, 1.0, steps=STEPS, samples=51)


def test_runs_cover_every_method_and_step(grid):
    assert sorted(grid.runs) == sorted((m, h) for m in ("explicit", "symplectic", "implicit") for h in STEPS)
    assert grid.get("symplectic", 0.05).t[-1] == pytest.approx(1.0)


def test_static_figure_has_an_energy_and_a_height_panel_per_setting(grid):
    fig = integrator_figure(grid, [("explicit", 0.1), ("implicit", 0.05)])
    assert len(fig.axes) == 4
    assert "explicit" in fig.axes[0].get_title()


def test_player_has_one_frame_per_setting_and_every_frame_redraws(grid):
    pytest.importorskip("plotly")
    fig = integrator_player(grid, steps=STEPS, points=20)
    assert len(fig.frames) == 6
    # one button per method and one short slider label per step: nothing for plotly to thin out
    assert [b.label for b in fig.layout.updatemenus[0].buttons] == ["explicit Euler", "symplectic Euler",
                                                                   "linearly implicit Euler"]
    assert [s.label for s in fig.layout.sliders[0].steps] == ["0.1", "0.05"]
    assert fig.layout.sliders[0].x + fig.layout.sliders[0].len <= 0.97        # the last label is not clipped
    names = fig.layout.meta["grid"]["frames"]
    assert [len(row) for row in names] == [2, 2, 2]
    assert sorted(sum(names, [])) == sorted(f.name for f in fig.frames)
    energies = [np.array(frame.data[0].y) for frame in fig.frames]
    # every (method, step) shows a different curve, so no choice leaves the figure as it was
    for a in range(len(energies)):
        for b in range(a + 1, len(energies)):
            assert len(energies[a]) != len(energies[b]) or not np.allclose(energies[a], energies[b])
    # the first frame is what the figure shows before anything is chosen
    np.testing.assert_allclose(fig.data[0].y, fig.frames[0].data[0].y)
    assert all(len(frame.data[0].y) <= 2 * 20 + 1 for frame in fig.frames)


def test_player_opens_on_the_setting_it_is_given(grid):
    pytest.importorskip("plotly")
    fig = integrator_player(grid, steps=STEPS, points=20, start=("implicit", 0.05))
    shown = {f.name: f for f in fig.frames}[fig.layout.meta["grid"]["frames"][2][1]]
    np.testing.assert_allclose(fig.data[0].y, shown.data[0].y)
    assert fig.layout.updatemenus[0].active == 2 and fig.layout.sliders[0].active == 1
    with pytest.raises(ValueError, match="argument 'start'"):
        integrator_player(grid, steps=STEPS, start=("implicit", 0.3))


def test_widget_starts_at_the_static_figures_first_panel(grid):
    pytest.importorskip("ipywidgets")
    from redmax_edu.viz.integrator_explorer import integrator_widget

    box = integrator_widget(grid, method="explicit", h=0.1)
    method, h = box.children[0].children
    assert (method.value, h.value) == ("explicit", 0.1)


def test_bad_arguments_are_refused(grid):
    with pytest.raises(ValueError, match="steps"):
        integrator_runs(grid.system, grid.E0, grid.phi0, 1.0, steps=(0.3,))
    with pytest.raises(ValueError, match="t_end"):
        integrator_runs(grid.system, grid.E0, grid.phi0, -1.0)
    with pytest.raises(ValueError, match="method"):
        grid.get("rk4", 0.1)


# --- the reduced runs of §3.4: RK45, linearly implicit Euler, BDF1, SDIRK2, BDF2 -----------------------
@pytest.fixture(scope="module")
def reduced_grid():
    from redmax_edu.scenes import hanging_chain
    from redmax_edu.viz.integrator_explorer import reduced_integrator_runs

    return reduced_integrator_runs(hanging_chain(2), [0.6, -0.2], [0.0, 0.0], 0.4, steps=(0.04, 0.02),
                                   samples=21)


def test_reduced_runs_cover_every_method_and_record_newton_iterations(reduced_grid):
    assert sorted(reduced_grid.runs) == sorted((m, h) for m in ("rk45", "euler", "bdf1", "sdirk2", "bdf2")
                                               for h in (0.04, 0.02))
    assert reduced_grid.reduced and reduced_grid.get("bdf2", 0.02).implicit.iterations.shape == (20,)
    with pytest.raises(ValueError, match="argument 'method'"):
        reduced_grid.get("explicit", 0.02)


def test_reduced_figure_adds_a_newton_row(reduced_grid):
    fig = integrator_figure(reduced_grid, [("rk45", 0.04), ("bdf2", 0.02)])
    assert len(fig.axes) == 6 and "BDF2" in fig.axes[1].get_title()
    assert fig.axes[4].texts and fig.axes[4].texts[0].get_text() == "no Newton solve"   # RK45's column
    assert len(fig.axes[5].lines) == 1                                                  # BDF2's steps


def test_reduced_player_has_a_newton_panel_in_every_frame(reduced_grid):
    pytest.importorskip("plotly")
    fig = integrator_player(reduced_grid, steps=(0.04, 0.02), points=50, start=("bdf2", 0.04))
    # RK45 adapts its own steps: one run, one frame and a button that says so (no two frames alike)
    assert reduced_grid.get("rk45", 0.04) is reduced_grid.get("rk45", 0.02)
    names = fig.layout.meta["grid"]["frames"]
    assert names[0][0] == names[0][1] and len(fig.frames) == 1 + 4 * 2
    assert fig.layout.updatemenus[0].buttons[0].label == "RK45 (its own steps)"
    assert all(list(f.traces) == [0, 1, 4] for f in fig.frames)
    frames = {f.name: f for f in fig.frames}
    bdf2 = frames[names[4][0]]
    assert len(bdf2.data[2].y) == 10 and min(bdf2.data[2].y) >= 1
    assert "yaxis3" in bdf2.layout
    # the Newton panel says why it is empty for RK45 and linearly implicit Euler, and only then
    for row, method in enumerate(reduced_grid.labels):
        note = frames[names[row][0]].layout.annotations[-1]
        assert note.text == "no Newton solve" and note.visible == (method in ("rk45", "euler"))
    np.testing.assert_allclose(fig.data[4].y, bdf2.data[2].y)       # it opens on BDF2's run
    assert fig.layout.annotations[-1].visible is False


def test_the_explorer_takes_a_particle_chain_and_its_four_methods():
    """The appendix's chain through the same three layers: labels, height and diverged runs."""
    from redmax_edu.deformable import DeformableSpring
    from redmax_edu.particles import METHODS, ParticleChain
    from redmax_edu.viz.integrator_explorer import chain_integrator_runs, integrator_widget

    nodes = np.column_stack([np.linspace(0.0, 0.3, 4), np.zeros(4), np.zeros(4)])
    chain = ParticleChain(DeformableSpring(nodes, stiffness=50.0, mass=0.4), pin=nodes[0])
    runs = chain_integrator_runs(chain, nodes, np.zeros((4, 3)), 0.2, (0.02, 0.002))
    assert sorted(runs.runs) == sorted((m, h) for m in METHODS for h in (0.02, 0.002))
    assert len(runs.get("symplectic", 0.02).t) < 11  # diverged and stopped, not raised
    fig = integrator_figure(runs, [(m, 0.002) for m in METHODS])
    assert fig.axes[0].get_title().startswith("symplectic Euler") and "mass" in fig.axes[4].get_ylabel()
    player = integrator_player(runs, points=20, start=("symplectic", 0.002))
    assert len(player.frames) == 8 and player.layout.sliders[0].active == 1
    box = integrator_widget(runs, method="symplectic", h=0.002)
    method, h = box.children[0].children
    assert method.value == "symplectic" and h.value == 0.002 and len(method.options) == 4
    with pytest.raises(ValueError, match="argument 'method'"):
        runs.get("explicit", 0.002)


# --- the variational runs of Chapter 5: VI2/VI4/VI6 next to BDF1, BDF2, SDIRK2, RK45; momentum, horizon ---
@pytest.fixture(scope="module")
def variational_grid():
    from redmax_edu.scenes import floating_chain
    from redmax_edu.viz.integrator_explorer import variational_integrator_runs

    q0, qdot0 = np.r_[0, 0, 0, 0, 0, 0, 0.6], np.r_[0.1, 0, 0.05, 1.0, 0.05, 0.1, 1.0]
    return variational_integrator_runs(floating_chain(2), q0, qdot0, 0.4, methods=("vi2", "bdf1", "rk45"),
                                       steps=(0.04, 0.02), samples=21)


def test_variational_runs_show_momentum_and_newton_iterations(variational_grid):
    from redmax_edu.viz.integrator_explorer import _newton, momentum_change

    assert variational_grid.momentum and variational_grid.reduced
    vi2 = variational_grid.get("vi2", 0.04)
    t, iterations = _newton(vi2)
    assert len(t) == 10 and iterations.min() >= 1
    angular, linear = momentum_change(variational_grid, vi2)
    assert angular.shape == linear.shape == vi2.t.shape and linear[0] < 1e-12
    # RK45 here takes steps of at most h: its samples are every h, like the fixed-step methods
    assert len(variational_grid.get("rk45", 0.04).t) == 11
    fig = integrator_figure(variational_grid, [("vi2", 0.04), ("bdf1", 0.04)], horizon=0.2)
    assert len(fig.axes) == 6 and fig.axes[2].get_yscale() == "log"
    assert max(line.get_xdata().max() for line in fig.axes[0].lines) <= 0.2 + 1e-9


def test_variational_player_updates_both_momentum_curves_and_offers_horizons(variational_grid):
    pytest.importorskip("plotly")
    fig = integrator_player(variational_grid, points=20, horizons=(0.1, 0.4))
    assert len(fig.frames) == 6 and all(tuple(f.traces) == (0, 1, 3, 4) for f in fig.frames)
    assert [s.label for s in fig.layout.sliders[0].steps] == ["0.04", "0.02"]
    # RK45 takes steps of at most h here, so h matters and the button says nothing more
    assert [b.label for b in fig.layout.updatemenus[0].buttons] == ["VI2", "BDF1", "RK45"]
    assert fig.layout.yaxis2.type == "log"
    linear = np.array(fig.frames[0].data[2].y)        # three significant digits: short numbers in the page
    np.testing.assert_allclose(linear, [float(f"{v:.2e}") for v in linear], rtol=1e-12)
    buttons = fig.layout.updatemenus[1].buttons
    assert [b.args[0]["xaxis3.range"] for b in buttons] == [[0.0, 0.1], [0.0, 0.4]]


def test_variational_widget_has_a_horizon_slider(variational_grid):
    pytest.importorskip("ipywidgets")
    from redmax_edu.viz.integrator_explorer import integrator_widget

    box = integrator_widget(variational_grid, method="vi2", h=0.04, horizons=(0.1, 0.4))
    method, h, horizon = box.children[0].children
    assert (method.value, h.value, horizon.value) == ("vi2", 0.04, 0.4)


def test_variational_runs_need_a_free_root():
    from redmax_edu.scenes import hanging_chain
    from redmax_edu.viz.integrator_explorer import variational_integrator_runs

    with pytest.raises(ValueError, match="root"):
        variational_integrator_runs(hanging_chain(2), [0.1, 0.0], [0.0, 0.0], 0.1, methods=(), steps=(0.05,),
                                    samples=3)
