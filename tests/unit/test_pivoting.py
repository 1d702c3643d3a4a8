"""Mixed LCP to LCP, principal pivoting on demand (redmax_edu.maximal.pivoting, ArtiSynth notes §0.7-0.8)."""

import itertools

import numpy as np
import pytest

from redmax_edu.maximal.pivoting import lemke, mixed_lcp_to_lcp, principal_pivoting, solve_mixed_lcp
from redmax_edu.maximal.random_problems import random_friction_cone_lcp


def random_problem(rng, m=10, p=3, k=5):
    B = rng.standard_normal((m, m))
    M = B @ B.T + m * np.eye(m)
    return (M, 5 * rng.standard_normal(m), rng.standard_normal((p, m)), rng.standard_normal(p),
            rng.standard_normal((k, m)), rng.standard_normal(k))


def brute_force_lcp(L, q):
    """Every support set in turn: the unique solution of a positive definite LCP."""
    k = len(q)
    for size in range(k + 1):
        for alpha in itertools.combinations(range(k), size):
            a = list(alpha)
            z = np.zeros(k)
            if a:
                z[a] = np.linalg.solve(L[np.ix_(a, a)], -q[a])
            w = L @ z + q
            if (z >= -1e-12).all() and (w >= -1e-12).all():
                return z
    raise AssertionError("no solution")


def test_pivoting_finds_the_solution_of_random_positive_definite_lcps(rng):
    for _ in range(30):
        k = rng.integers(1, 7)
        B = rng.standard_normal((k, k))
        L, q = B @ B.T + 0.1 * np.eye(k), rng.standard_normal(k)
        sol = principal_pivoting(L, q)
        np.testing.assert_allclose(sol.z, brute_force_lcp(L, q), atol=1e-10)
        np.testing.assert_allclose(sol.w, L @ sol.z + q, atol=1e-10)
        assert (sol.z >= 0).all() and (sol.w >= -1e-12).all() and abs(sol.z @ sol.w) < 1e-10


def test_reduced_lcp_is_the_projected_matrix_and_recovers_the_mixed_unknowns(rng):
    """L = N M^-1 P_f N^T with P_f = I - G^T (G M^-1 G^T)^-1 G M^-1 (notes §0.5), symmetric."""
    M, f, G, g, N, n = random_problem(rng)
    L, q, recover = mixed_lcp_to_lcp(M, f, G, g, N, n)
    Minv = np.linalg.inv(M)
    Pf = np.eye(len(M)) - G.T @ np.linalg.solve(G @ Minv @ G.T, G @ Minv)
    np.testing.assert_allclose(L, N @ Minv @ Pf @ N.T, atol=1e-12)
    np.testing.assert_allclose(L, L.T, atol=1e-13)
    z = np.abs(rng.standard_normal(len(n)))
    x, lam = recover(z)
    np.testing.assert_allclose(M @ x - G.T @ lam - N.T @ z, f, atol=1e-11)
    np.testing.assert_allclose(G @ x, g, atol=1e-12)
    np.testing.assert_allclose(N @ x - n, L @ z + q, atol=1e-12)


def test_on_demand_and_dense_agree_and_on_demand_never_solves_more(rng):
    for _ in range(20):
        problem = random_problem(rng, m=14, p=2, k=8)
        lazy = solve_mixed_lcp(*problem)
        dense = solve_mixed_lcp(*problem, on_demand=False)
        np.testing.assert_allclose(lazy.x, dense.x, atol=1e-12)
        np.testing.assert_allclose(lazy.z, dense.z, atol=1e-12)
        assert dense.solves == 1 + 8
        assert lazy.solves == 1 + lazy.columns <= dense.solves
        L, q, _ = mixed_lcp_to_lcp(*problem)
        np.testing.assert_allclose(lazy.z, brute_force_lcp(L, q), atol=1e-9)


def test_no_constraints_of_one_kind():
    sol = solve_mixed_lcp(np.eye(2), [-1.0, 0.5], None, None, np.eye(2), [0.0, 0.0])
    np.testing.assert_allclose(sol.x, [0, 0.5])
    assert sol.lam.shape == (0,)
    sol = solve_mixed_lcp(np.eye(2), [-1.0, 0.5], [[0.0, 1.0]], [0.0], np.zeros((0, 2)), np.zeros(0))
    np.testing.assert_allclose(sol.x, [-1.0, 0.0])
    np.testing.assert_allclose(sol.lam, [-0.5])


@pytest.mark.parametrize(("call", "words"), [
    (lambda: solve_mixed_lcp(np.eye(2), [1.0, 0.0, 0.0], None, None, np.eye(2), [0.0, 0.0]), "arguments M"),
    (lambda: solve_mixed_lcp(np.eye(2), [1.0, 0.0], None, None, np.eye(3), [0.0, 0.0]), "arguments N"),
    (lambda: solve_mixed_lcp(np.eye(2), [1.0, 0.0], [[1.0, 0.0], [2.0, 0.0]], [0.0, 0.0], np.eye(2),
                             [0.0, 0.0]), "singular"),
    (lambda: principal_pivoting([[-1.0]], [-1.0]), "did not finish"),
    (lambda: principal_pivoting(np.eye(2), [[1.0, 2.0]]), "argument 'q'"),
    (lambda: principal_pivoting(np.eye(3), [1.0, 2.0]), "argument 'L'"),
    (lambda: mixed_lcp_to_lcp(np.eye(1), [np.nan], None, None, np.eye(1), [0.0]), "argument 'f'"),
])
def test_bad_input_gets_a_value_error_naming_it(call, words):
    with pytest.raises(ValueError) as err:
        call()
    assert words in str(err.value)


# --- Lemke's method (for the friction-cone LCP of notes §0.10) -------------------------------------


def complementarity_defect(L, q, z):
    w = L @ z + q
    return max(-z.min(initial=0.0), -w.min(initial=0.0), abs(z @ w))


def test_lemke_agrees_with_principal_pivoting_on_positive_definite_lcps(rng):
    for _ in range(100):
        k = int(rng.integers(1, 10))
        B = rng.standard_normal((k, k))
        L, q = B @ B.T + 0.1 * np.eye(k), rng.standard_normal(k)
        np.testing.assert_allclose(lemke(L, q).z, principal_pivoting(L, q).z, atol=1e-10)


def test_lemke_solves_friction_cone_lcps_that_principal_pivoting_cannot(rng):
    failures = 0
    for _ in range(100):
        L, q = random_friction_cone_lcp(rng, int(rng.integers(1, 4)), int(rng.integers(3, 9)))
        sol = lemke(L, q)
        assert complementarity_defect(L, q, sol.z) < 1e-9
        assert np.allclose(sol.w, L @ sol.z + q)
        try:
            failures += complementarity_defect(L, q, principal_pivoting(L, q, max_pivots=200).z) > 1e-8
        except (ValueError, np.linalg.LinAlgError):
            failures += 1
    assert failures > 50  # zero diagonal blocks: not a P-matrix


def test_the_complementarity_check_catches_a_wrong_answer(rng):
    """Mutant: the active impulses nudged by 1e-3."""
    L, q = random_friction_cone_lcp(rng, 2, 4)
    z = lemke(L, q).z
    assert complementarity_defect(L, q, z) < 1e-10
    assert complementarity_defect(L, q, z + 1e-3 * (z > 0)) > 1e-6


def test_lemke_reports_a_ray_and_bad_input():
    with pytest.raises(ValueError, match="ended on a ray"):
        lemke([[-1.0]], [-1.0])  # w = -z - 1 >= 0 has no solution with z >= 0
    with pytest.raises(ValueError, match="did not finish in 1 pivots"):
        lemke([[2.0, 1.0], [1.0, 2.0]], [-1.0, -1.0], max_pivots=1)
    with pytest.raises(ValueError, match="argument 'L'"):
        lemke(np.eye(3), np.ones(2))
    with pytest.raises(ValueError, match="argument 'q'"):
        lemke(np.eye(2), np.ones((2, 1)))
    assert lemke(np.eye(2), [1.0, 0.0]).pivots == 0
