"""Claims of book/appendix/engineer_mixed_lcp (ArtiSynth notes §0.5, §0.7-0.8): the reduced LCP, pivoting
against contact_qp, and columns on demand."""

import numpy as np
import pytest

from redmax_edu.maximal.pivoting import mixed_lcp_to_lcp, principal_pivoting, solve_mixed_lcp
from redmax_edu.maximal.random_problems import random_contact_step
from redmax_edu.maximal.solve import contact_qp


def relative_gap(a, b):
    return np.abs(a - b).max(initial=0.0) / max(1.0, np.abs(b).max(initial=0.0))


def test_projections_and_the_reduced_matrix(rng):
    """'L = N M^-1 P_f N^T', 'symmetric and positive definite', 'P_v = P_f^T', 'G P_v x = 0', to 1e-12."""
    for _ in range(10):
        M, f, G, g, N, n = random_contact_step(rng, 12, 3, 6, 3)
        L, q, _ = mixed_lcp_to_lcp(M, f, G, g, N, n)
        Minv = np.linalg.inv(M)
        S = G @ Minv @ G.T
        P_f = np.eye(12) - G.T @ np.linalg.solve(S, G @ Minv)
        P_v = np.eye(12) - Minv @ G.T @ np.linalg.solve(S, G)
        assert np.abs(L - N @ Minv @ P_f @ N.T).max() < 1e-12
        assert np.abs(L - L.T).max() < 1e-12 and np.linalg.eigvalsh(L).min() > 0
        assert np.abs(P_v - P_f.T).max() < 1e-12
        assert np.abs(G @ P_v @ rng.standard_normal(12)).max() < 1e-12


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_pivoting_agrees_with_contact_qp_on_100_random_problems(seed):
    """'agreed with the QP solver of Part 1 to within 1e-4 relative', with complementarity to 1e-10.
    The largest gap seen over seeds 0-5 is 4e-5 (Clarabel's stopping tolerance, magnified)."""
    rng = np.random.default_rng(seed)
    worst = 0.0
    for m, p, k in [(8, 2, 3), (12, 3, 6), (20, 4, 10), (30, 6, 20)]:
        for _ in range(25):
            problem = random_contact_step(rng, m, p, k, violated=rng.integers(1, k + 1))
            mine, qp = solve_mixed_lcp(*problem), contact_qp(*problem)
            worst = max(worst, relative_gap(mine.x, qp.phi), relative_gap(mine.lam, qp.lam_G),
                        relative_gap(mine.z, qp.alpha))
            assert mine.z.min() >= 0 and mine.w.min() > -1e-10 and abs(mine.z @ mine.w) < 1e-10
            L, q, _ = mixed_lcp_to_lcp(*problem)
            np.testing.assert_allclose(principal_pivoting(L, q).z, mine.z, atol=1e-12)
    assert worst < 1e-4


def test_on_demand_averages_under_7_solves_none_above_16_while_all_columns_cost_k_plus_1():
    """'fewer than 7 solves on average (no problem above 16)' for every k, on several seeds (over
    seeds 0-11 the largest mean was 6.15 and the largest count 13); the dense version always makes
    k + 1 solves and the same pivots."""
    for seed in range(4):
        rng = np.random.default_rng(seed)
        for k in (6, 12, 24, 48):
            solves = []
            for _ in range(20):
                problem = random_contact_step(rng, m=60, p=6, k=k, violated=3)
                a, b = solve_mixed_lcp(*problem), solve_mixed_lcp(*problem, on_demand=False)
                assert np.array_equal(a.z, b.z)
                assert b.solves == k + 1
                solves.append(a.solves)
            assert np.mean(solves) < 7 and max(solves) <= 16
            assert np.mean(solves) >= 4  # one solve for q and one per contact pushed into, at least
