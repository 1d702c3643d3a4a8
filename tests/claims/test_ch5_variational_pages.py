"""Claims of the pages of book/05_variational (seed 003: variational integrators).

Library-level claims live in tests/claims/test_ch5_variational.py and the unit tests, and are not
repeated here: the observed orders 2, 4, 6 of the three-rod step sweep that 5.1 shows (the same
scene, sweeps and tolerance), the DEL Jacobian against central differences (5.1's check cell),
and the recursive residual, Newton direction and runs equal to the dense ones (5.2's check
cells: tests/unit/test_variational.py, on random trees with every covered joint).

5.1 What a variational integrator preserves (book/05_variational/01_what_is_preserved):

* The Lobatto nodes: s = 2 is Simpson's rule (weights 1/6, 2/3, 1/6); s = 3 has its two
  interior nodes at 1/2 -+ sqrt(5)/10.
* The floating chain (scenes.floating_chain(3), the page's state), 50 steps of 40 ms, Newton to
  1e-13: VI2 and VI4 keep the linear momentum and the angular momentum about z to 1e-12
  (measured about 3e-13); the angular momentum about x and y moves, by more than 1e-12 and less
  than 1e-3 N m s (measured 2e-4 for VI2, 3e-5 for VI4: VI4 keeps it better); BDF1, BDF2,
  SDIRK2 and RK45 (steps of at most h) at the same step move the conserved components by more
  than 1e-5.
* The pendulum (hanging_chain(1, length=0.5)) from 1 rad, h = 50 ms, 10^4 steps: VI2's energy
  error in the last thousand steps is within 1 % of that in the first thousand (measured equal
  to 3e-6 relative), and it stays between 1 % and 2 % of the energy above rest (0.56 J;
  measured 1.7 %). BDF1 loses more than 99 % of it within the first thousand steps, BDF2 more
  than 80 % (measured 87 %); SDIRK2 loses 2 % to 3.5 % of it per thousand steps over the first
  two thousand (measured 2.6 %, 2.6 %); RK45's error after two thousand steps is twice that after one
  thousand (within 10 %) and below a tenth of VI2's band. Over the first thousand steps VI4's
  energy band is about a thousand times narrower than VI2's (300 to 3000; measured 1000).
* The step sweep: VI6 at 25 ms is more accurate than VI2 at 2.5 ms.

5.2 The Newton direction in O(n) (book/05_variational/02_newton_direction): the stored run of
benchmarks/variational.py it plots has O(n) exponents at most 1.2 (chain and binary tree).

5.3 Explorer (book/05_variational/03_explorer): the floating chain for 10 s at h = 40 ms with the
default Newton tolerance: VI2 keeps the linear momentum to 1e-8 N s and takes 3 to 6 Newton
iterations per step; BDF1, BDF2, SDIRK2 and RK45 change it by more than 1e-6 N s.
"""

from functools import cache

import numpy as np
import pytest

from redmax_edu.integrators import simulate
from redmax_edu.scenes import floating_chain, hanging_chain
from redmax_edu.variational import discrete_momentum, lobatto, momentum_map
from redmax_edu.viz.integrator_explorer import momentum_change, variational_integrator_runs

CHAIN = floating_chain(3)
Q0 = np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.6, -0.4]
QDOT0 = np.r_[0.1, 0.0, 0.05, 1.0, 0.05, 0.1, 1.0, -2.0]
EXACT = [2, 3, 4, 5]                 # angular about z; linear x, y, z

ROD = hanging_chain(1, length=0.5)
H, N = 0.05, 10_000
ABOVE_REST = ROD.bodies[0].mass * -ROD.gravity[2] * 0.25 * (1 - np.cos(1.0))


def test_lobatto_nodes_and_weights_of_the_page():
    np.testing.assert_allclose(lobatto(2).w, [1 / 6, 2 / 3, 1 / 6], atol=1e-14)
    np.testing.assert_allclose(lobatto(3).c[1:3], [0.5 - np.sqrt(5) / 10, 0.5 + np.sqrt(5) / 10], atol=1e-14)


@cache
def momentum_changes(method):
    extra = dict(max_step=0.04) if method == "rk45" else dict(newton_tol=1e-13)
    run = simulate(CHAIN, Q0, QDOT0, (0.0, 2.0), method, h=0.04, **extra)
    world = np.array([momentum_map(CHAIN, q, discrete_momentum(CHAIN, q, v))
                      for q, v in zip(run.q, run.qdot, strict=True)])
    return np.abs(world - world[0]).max(axis=0)


@pytest.mark.parametrize("method", ["vi2", "vi4"])
def test_variational_schemes_keep_the_symmetric_momenta_to_round_off(method):
    change = momentum_changes(method)
    assert change[EXACT].max() < 1e-12
    assert 1e-12 < change[:2].max() < 1e-3


def test_vi4_keeps_the_nonsymmetric_angular_momentum_better_than_vi2():
    assert momentum_changes("vi4")[:2].max() < momentum_changes("vi2")[:2].max()


def test_the_other_integrators_move_the_conserved_momenta():
    assert min(momentum_changes(m)[EXACT].max() for m in ("bdf1", "bdf2", "sdirk2", "rk45")) > 1e-5


@cache
def pendulum(method, steps):
    extra = dict(max_step=H) if method == "rk45" else {}
    return simulate(ROD, [1.0], [0.0], (0.0, steps * H), method, h=H, **extra).H


def test_vi2_energy_error_is_bounded_without_drift_over_ten_thousand_steps():
    e = np.abs(pendulum("vi2", N))
    first, last = e[:N // 10].max(), e[-(N // 10):].max()
    assert last <= 1.01 * first
    assert 0.01 * ABOVE_REST < e.max() < 0.02 * ABOVE_REST
    assert round(ABOVE_REST, 2) == 0.56


def test_bdf1_and_bdf2_damp_the_pendulum():
    assert -pendulum("bdf1", 1000)[1000] > 0.99 * ABOVE_REST
    assert -pendulum("bdf2", 1000)[1000] > 0.8 * ABOVE_REST


def test_sdirk2_loses_energy_steadily():
    loss = -pendulum("sdirk2", 2000)
    assert 0.02 * ABOVE_REST < loss[1000] < 0.035 * ABOVE_REST
    assert 0.02 * ABOVE_REST < loss[2000] - loss[1000] < 0.035 * ABOVE_REST


def test_rk45_error_grows_in_proportion_to_time_but_starts_below_vi2s_band():
    e = np.abs(pendulum("rk45", 2000))
    assert abs(e.max() / e[:1001].max() - 2) < 0.2
    vi2_first = np.abs(pendulum("vi2", N)[:N // 10]).max()
    assert e.max() < 0.1 * vi2_first


def test_vi4_band_is_about_a_thousand_times_narrower_than_vi2s():
    ratio = np.abs(pendulum("vi4", 1000)).max() / np.abs(pendulum("vi2", N)[:1001]).max()
    assert 1 / 3000 < ratio < 1 / 300


def test_vi6_at_25_ms_beats_vi2_at_2_5_ms():
    rods, start = hanging_chain(3, length=1.0), np.array([0.5, -0.3, 0.2])
    reference = simulate(rods, start, np.zeros(3), (0.0, 0.5), rtol=1e-12, atol=1e-13, sample_dt=0.5)

    def error(scheme, h):
        r = simulate(rods, start, np.zeros(3), (0.0, 0.5), scheme, h=h, sample_dt=0.5, newton_tol=1e-13)
        return np.abs(np.r_[r.q[-1] - reference.q[-1], r.qdot[-1] - reference.qdot[-1]]).max()

    assert error("vi6", 0.025) < error("vi2", 0.0025)


def test_explorer_page_momentum_and_newton_iterations():
    methods = ("vi2", "bdf1", "bdf2", "sdirk2", "rk45")
    grid = variational_integrator_runs(CHAIN, Q0, QDOT0, 10.0, methods=methods, steps=(0.04,), samples=51)
    linear = {m: momentum_change(grid, grid.get(m, 0.04))[1].max() for m in methods}
    assert linear["vi2"] < 1e-8
    assert min(linear[m] for m in ("bdf1", "bdf2", "sdirk2", "rk45")) > 1e-6
    iterations = grid.get("vi2", 0.04).variational.iterations
    assert 3 <= iterations.min() and iterations.max() <= 6


def test_the_stored_benchmark_run_of_5_2_grows_linearly():
    """5.2 plots one stored run of benchmarks/variational.py: the O(n) exponents are at most 1.2."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "book/05_variational/benchmark_variational.txt").read_text()
    fitted = re.findall(r"n = 16\.\.128: dense ([\d.]+), O\(n\) ([\d.]+)", text)
    assert len(fitted) == 2                                   # the chain and the binary tree
    assert all(float(linear) <= 1.2 < float(dense) for dense, linear in fitted)
