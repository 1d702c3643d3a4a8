"""The adjoint explorer of §3.5: one set of runs feeding a static figure, a plotly player and a widget."""

import numpy as np
import pytest

from redmax_edu.objectives import EndEffectorTarget
from redmax_edu.scenes import hanging_chain
from redmax_edu.viz.adjoint_method_explorer import adjoint_figure, adjoint_player, adjoint_runs

STEPS = (0.05, 0.025)


@pytest.fixture(scope="module")
def grid():
    chain = hanging_chain(2, length=0.4, mass=1.0)
    target = EndEffectorTarget("rod1", [0, 0, -0.2], [0.5, 0.0, -0.5], 10.0)
    return adjoint_runs(chain, [1.0, -0.5], [0.0, 0.0], 0.25, target, steps=STEPS, fd_points=3)


def test_runs_cover_every_step_and_the_adjoint_agrees_with_central_differences(grid):
    assert sorted(grid.runs) == sorted(STEPS)
    for h in STEPS:
        r = grid.get(h)
        n = int(round(0.25 / h))
        assert r.dtau.shape == (n, 2) and len(r.fd_steps) == 3 and r.t_steps[-1] == pytest.approx(0.25)
        assert r.z.shape == r.q.shape == (n + 2, 2)      # the SDIRK2 stage is a state of a BDF2 run
        assert np.all(r.z[0] == 0) and np.abs(r.z[-1]).max() > 0
        assert r.gap < 1e-6


def test_the_gap_catches_a_wrong_gradient(grid):
    # a mutant: the adjoint's torque gradient without the 1/h scaling disagrees with the differences
    r = grid.get(0.05)
    wrong = type(r)(**{**r.__dict__, "dtau": r.dtau * r.h})
    assert wrong.gap > 0.5


def test_runs_off_the_grid_are_simulated_and_bad_steps_refused(grid):
    assert 0.0125 not in grid.runs
    assert grid.get(0.0125).gap < 1e-6 and 0.0125 in grid.runs
    del grid.runs[0.0125]
    with pytest.raises(ValueError, match="whole steps"):
        grid.get(0.03)
    with pytest.raises(ValueError, match="scheme"):
        adjoint_runs(grid.model, grid.q0, grid.qdot0, 0.25, grid.objective, steps=STEPS, scheme="rk4")


def test_static_figure_has_four_panels_and_the_adjoint_axis_runs_backward(grid):
    fig = adjoint_figure(grid, 0.025)
    assert len(fig.axes) == 4
    assert "0.025" in fig.axes[0].get_title()
    left, right = fig.axes[1].get_xlim()
    assert left > right


def test_player_has_one_frame_per_step_and_every_frame_redraws(grid):
    pytest.importorskip("plotly")
    fig = adjoint_player(grid, points=20)
    assert len(fig.frames) == 2 and len(fig.layout.sliders[0].steps) == 2
    assert all(len(frame.data) == len(fig.data) == 8 for frame in fig.frames)
    # the first frame is what the figure shows before the slider moves; the frames differ
    np.testing.assert_allclose(fig.data[1].y, fig.frames[0].data[1].y)
    assert len(fig.frames[0].data[2].y) != len(fig.frames[1].data[2].y)
    assert fig.layout.xaxis2.autorange == "reversed"
    # every panel's range holds the curves of every step size: none runs off its panel
    for k, axis in enumerate((fig.layout.yaxis, fig.layout.yaxis2, fig.layout.yaxis3)):
        low, high = axis.range
        for frame in fig.frames:
            for n, trace in enumerate(frame.data):
                if [0, 1, 2, 2][n % 4] == k:
                    assert low <= min(trace.y) and max(trace.y) <= high
    assert fig.layout.sliders[0].x + fig.layout.sliders[0].len <= 0.97     # the last label is not clipped
    assert "^" not in fig.layout.annotations[1].text and "dPsi" not in fig.layout.annotations[2].text


def test_widget_starts_at_the_coarsest_step(grid):
    pytest.importorskip("ipywidgets")
    from redmax_edu.viz.adjoint_method_explorer import adjoint_widget

    box = adjoint_widget(grid)
    assert box.children[0].value == 0.05
