"""Unit tests of redmax_edu.maximal.solve: the KKT system, the contact QP, the LCP and Gauss-Seidel.

Reference solutions are computed here by other routes: the null-space method (scipy's
null_space) for equality constraints, and, for inequality-constrained QPs, trying every active
set (exact for the handful of constraints used here: the unique minimiser of a strictly convex
QP is the one active set whose equality-constrained solution is feasible with non-negative
multipliers).
"""

import itertools

import numpy as np
import pytest
from scipy.linalg import null_space

from redmax_edu.lie import exp_se3
from redmax_edu.maximal.body import RigidBody
from redmax_edu.maximal.constraints import GroundContact, Joint
from redmax_edu.maximal.random_problems import random_kkt
from redmax_edu.maximal.solve import (
    check_independent_rows,
    constraint_projections,
    contact_qp,
    kkt_solve,
    pgs_contact,
    projected_gauss_seidel,
    qp_to_lcp,
)

DIM = 12  # two bodies' worth of maximal coordinates


def random_spd(rng, n=DIM):
    B = rng.standard_normal((n, n))
    return B @ B.T / n + np.eye(n)  # eigenvalues in about [1, 5]: well conditioned


def qp_by_active_sets(Q, c, A, b, Aeq=None, beq=None):
    """Minimise x^T Q x / 2 + c^T x subject to A x >= b and Aeq x = beq, by enumerating active sets."""
    n = len(c)
    Aeq = np.zeros((0, n)) if Aeq is None else Aeq
    beq = np.zeros(0) if beq is None else beq
    for active in itertools.product([False, True], repeat=len(b)):
        active = np.array(active, dtype=bool)
        C = np.vstack([Aeq, A[active]])
        K = np.block([[Q, -C.T], [C, np.zeros((len(C), len(C)))]])
        sol = np.linalg.solve(K, np.concatenate([-c, beq, b[active]]))
        x, lam = sol[:n], sol[n + len(Aeq):]
        if np.all(A @ x >= b - 1e-12) and np.all(lam >= -1e-12):
            return x
    raise AssertionError("no active set is optimal: the QP is infeasible")


# --- KKT system -------------------------------------------------------------------------------------


def equality_problem(rng, k=4):
    return random_spd(rng), rng.standard_normal(DIM), rng.standard_normal((k, DIM)), rng.standard_normal(k)


def test_kkt_solve_satisfies_both_block_equations(rng):
    A, b, G, r = equality_problem(rng)
    sol = kkt_solve(A, b, G, r)
    # residuals of a solve with condition number ~1e2 on O(1) data: ~1e-14
    np.testing.assert_allclose(A @ sol.phi, b + G.T @ sol.lam_G, rtol=0, atol=1e-12)
    np.testing.assert_allclose(G @ sol.phi, r, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sol.impulse, G.T @ sol.lam_G, rtol=0, atol=1e-14)


def test_kkt_solve_matches_the_null_space_method(rng):
    A, b, G, r = equality_problem(rng)
    phi_p = np.linalg.lstsq(G, r, rcond=None)[0]  # any particular solution of G phi = r
    Z = null_space(G)  # the motions the constraints allow
    y = np.linalg.solve(Z.T @ A @ Z, Z.T @ (b - A @ phi_p))  # minimise over phi_p + Z y
    expected = phi_p + Z @ y
    sol = kkt_solve(A, b, G, r)
    np.testing.assert_allclose(sol.phi, expected, rtol=0, atol=1e-12)
    # and the multipliers are the impulses that bend the unconstrained solution onto the constraints
    lam = np.linalg.lstsq(G.T, A @ expected - b, rcond=None)[0]
    np.testing.assert_allclose(sol.lam_G, lam, rtol=0, atol=1e-11)


def test_soft_constraints_tend_to_the_rigid_solution_as_compliance_vanishes(rng):
    A, b, G, r = equality_problem(rng)
    rigid = kkt_solve(A, b, G, r).phi
    errors = []
    for c in [1e-2, 1e-4, 1e-6, 1e-8]:
        soft = kkt_solve(A, b, G, r, compliance=np.full(len(r), c))
        # the soft constraint row: G phi + C lam = r
        np.testing.assert_allclose(G @ soft.phi + c * soft.lam_G, r, rtol=0, atol=1e-12)
        errors.append(np.linalg.norm(soft.phi - rigid))
    errors = np.array(errors)
    assert errors[0] > 1e-4  # a compliance of 1e-2 visibly softens the joint
    # the gap is O(compliance): a factor ~100 per factor 100, down to round-off
    np.testing.assert_allclose(errors[1:3] / errors[:2], 1e-2, rtol=0.2)
    assert errors[-1] < 1e-8


# --- independent rows ------------------------------------------------------------------------------


def test_check_independent_rows_passes_independent_rows(rng):
    G = rng.standard_normal((5, DIM))
    assert check_independent_rows(G, ["joint 'a'"] * 3 + ["joint 'b'"] * 2) is None
    assert check_independent_rows(np.zeros((0, DIM)), []) is None


def test_check_independent_rows_names_the_owner_of_a_duplicated_row(rng):
    g = rng.standard_normal((3, DIM))
    G = np.vstack([g, g[1]])
    owners = ["joint 'a'", "joint 'a'", "joint 'b'", "joint 'c'"]
    with pytest.raises(ValueError, match=r"joint 'c' is redundant.*\(joint 'a', joint 'b'\)"):
        check_independent_rows(G, owners)


def test_check_independent_rows_names_the_owner_of_a_combination_of_earlier_rows(rng):
    g = rng.standard_normal((3, DIM))
    G = np.vstack([g, 0.3 * g[0] - 2.0 * g[2], rng.standard_normal(DIM)])
    with pytest.raises(ValueError, match="joint 'b' is redundant"):
        check_independent_rows(G, ["joint 'a'"] * 3 + ["joint 'b'", "joint 'c'"])


def test_two_hinges_on_the_same_axis_are_redundant(rng):
    E = np.stack([exp_se3(rng.standard_normal(6))])
    frame = exp_se3(rng.standard_normal(6))
    hinges = [Joint.at("revolute", 0, -1, frame, E, name=name) for name in ("first", "second")]
    G = np.vstack([j.jacobian(E) for j in hinges])
    with pytest.raises(ValueError, match="joint 'second' is redundant"):
        check_independent_rows(G, [j.label for j in hinges for _ in j.rows])
    check_independent_rows(hinges[0].jacobian(E), [hinges[0].label] * 5)  # one alone is fine


# --- contact QP -------------------------------------------------------------------------------------


def contact_problem(rng, k=4):
    return random_spd(rng), rng.standard_normal(DIM), rng.standard_normal((k, DIM)), rng.standard_normal(k)


def test_contact_qp_without_friction_satisfies_the_kkt_conditions(rng):
    for _ in range(3):
        A, b, N, r = contact_problem(rng)
        sol = contact_qp(A, b, N=N, r_N=r)
        gap = N @ sol.phi - r
        # Clarabel's interior point stops at ~1e-8 relative: feasibility and complementarity to 1e-7
        assert np.all(sol.alpha >= -1e-9)
        assert np.all(gap >= -1e-7)
        assert np.abs(sol.alpha * gap).max() < 1e-7
        # phi is computed from the impulses: exact up to the round-off of one solve
        np.testing.assert_allclose(A @ sol.phi, b + N.T @ sol.alpha, rtol=0, atol=1e-12)
        assert np.any(sol.alpha > 1e-3)  # some contact is active, so the test has teeth


def test_contact_qp_without_friction_matches_the_primal_qp(rng):
    for _ in range(3):
        A, b, N, r = contact_problem(rng)
        expected = qp_by_active_sets(A, -b, N, r)
        # the primal minimiser is unique; the interior point reaches it to ~1e-8
        np.testing.assert_allclose(contact_qp(A, b, N=N, r_N=r).phi, expected, rtol=0, atol=1e-6)


def test_contact_qp_with_joints_matches_the_primal_qp(rng):
    A, b, N, r = contact_problem(rng, k=3)
    G, r_G = rng.standard_normal((2, DIM)), rng.standard_normal(2)
    expected = qp_by_active_sets(A, -b, N, r, G, r_G)
    sol = contact_qp(A, b, G, r_G, N, r)
    np.testing.assert_allclose(sol.phi, expected, rtol=0, atol=1e-6)
    np.testing.assert_allclose(G @ sol.phi, r_G, rtol=0, atol=1e-7)
    assert sol.lam_G.shape == (2,) and sol.alpha.shape == (3,)


def test_contact_qp_without_constraints_is_the_unconstrained_solve(rng):
    A, b = random_spd(rng), rng.standard_normal(DIM)
    np.testing.assert_allclose(contact_qp(A, b).phi, np.linalg.solve(A, b), rtol=0, atol=1e-14)


def test_contact_qp_with_friction_keeps_impulses_in_the_pyramid(rng):
    for _ in range(3):
        A, b, N, r = contact_problem(rng, k=3)
        T = rng.standard_normal((12, DIM))
        mu = np.array([0.2, 0.5, 1.0])
        sol = contact_qp(A, b, N=N, r_N=r, T=T, mu=mu)
        assert sol.beta.shape == (12,)
        # interior point: bounds hold to its tolerance, ~1e-9 on O(1) impulses
        assert np.all(sol.alpha >= -1e-9) and np.all(sol.beta >= -1e-9)
        assert np.all(mu * sol.alpha - sol.beta.reshape(3, 4).sum(axis=1) >= -1e-9)
        np.testing.assert_allclose(sol.impulse, N.T @ sol.alpha + T.T @ sol.beta, rtol=0, atol=1e-12)


def resting_box_problem(push, mu=0.5, h=0.01, g=9.81):
    """One step of a box resting on z = 0 with a horizontal world force `push` at its centre."""
    half = np.array([0.2, 0.15, 0.1])
    box = RigidBody("box", 2.0, [0.05, 0.08, 0.1], half_sizes=half)
    E = np.eye(4)
    E[2, 3] = half[2]
    contact = GroundContact(0, box.corners(), mu=mu)
    N, T, d = contact.rows(E[None])
    assert len(N) == 4 and np.allclose(d, 0.0)  # the four bottom corners touch
    wrench = np.concatenate([np.zeros(3), [0.0, 0.0, -box.mass * g] + np.asarray(push)])
    return box.M, h * wrench, N, np.zeros(len(N)), T, np.full(len(N), mu)


def test_a_box_at_rest_on_flat_ground_stays_at_rest_under_a_push_below_friction(rng):
    for direction in (np.array([1.0, 0, 0]), np.array([0.6, -0.8, 0])):
        # the pyramid bounds |beta_x| + |beta_y| by mu alpha: keep the push inside it
        push = 0.5 * 0.5 * 2.0 * 9.81 * direction / np.abs(direction).sum()
        A, b, N, r, T, mu = resting_box_problem(push)
        sol = contact_qp(A, b, N=N, r_N=r, T=T, mu=mu)
        # twists are the QP's primal residuals: interior-point tolerance, ~1e-9 m/s
        assert np.abs(sol.phi).max() < 1e-7
        assert sol.alpha.sum() == pytest.approx(0.01 * 2.0 * 9.81, rel=1e-6)  # the impulse of the weight


def test_a_box_pushed_beyond_friction_slides_with_coulomb_friction_under_pgs():
    push = 1.5 * 0.5 * 2.0 * 9.81 * np.array([1.0, 0, 0])
    A, b, N, r, T, mu = resting_box_problem(push)
    T2 = np.vstack([T[4 * i: 4 * i + 2] for i in range(4)])  # +x and +y rows of each pyramid
    sol = pgs_contact(A, b, N, r, T2, mu)
    # the excess force 0.5 mu m g over one step: 0.5 * 0.5 * 9.81 * 0.01 = 0.0245250 m/s
    assert sol.phi[3] == pytest.approx(0.5 * 0.5 * 9.81 * 0.01, rel=1e-9)  # Gauss-Seidel tol 1e-12
    np.testing.assert_allclose(np.delete(sol.phi, 3), 0.0, atol=1e-10)


def test_a_box_pushed_beyond_friction_slides_and_lifts_off_under_the_single_qp():
    """Anitescu and Hart's convex QP (Eq. 1.103) relaxes Coulomb friction: a sliding contact
    separates at the normal speed mu |v_t|, and so carries a larger normal impulse than the weight."""
    push = 1.5 * 0.5 * 2.0 * 9.81 * np.array([1.0, 0, 0])
    A, b, N, r, T, mu = resting_box_problem(push)
    sol = contact_qp(A, b, N=N, r_N=r, T=T, mu=mu)
    slide = sol.phi[3]
    assert slide > 0.01  # it slides ...
    # ... and every contact point rises at mu times its sliding speed (interior point: ~1e-8)
    np.testing.assert_allclose(N @ sol.phi, 0.5 * slide, rtol=1e-6)
    assert sol.alpha.sum() > 0.01 * 2.0 * 9.81 * 1.05


# --- LCP and projected Gauss-Seidel -----------------------------------------------------------------


def test_qp_to_lcp_and_projected_gauss_seidel_solve_a_strictly_convex_qp(rng):
    for _ in range(3):
        Q, c = random_spd(rng, 6), rng.standard_normal(6)
        Aineq, b = rng.standard_normal((3, 6)), rng.standard_normal(3)
        M, q, recover = qp_to_lcp(Q, c, Aineq, b)
        z, sweeps = projected_gauss_seidel(M, q, iterations=10000, tol=1e-14)
        assert sweeps < 10000  # converged
        w = M @ z + q
        assert np.all(z >= 0) and np.all(w >= -1e-12) and abs(z @ w) < 1e-12
        # Gauss-Seidel to a step of 1e-14 on a well-conditioned 3x3 LCP: x to ~1e-12
        np.testing.assert_allclose(recover(z), qp_by_active_sets(Q, c, Aineq, b), rtol=0, atol=1e-10)


@pytest.mark.parametrize(("M", "q", "expected"), [
    ([[2.0, 1.0], [1.0, 2.0]], [-1.0, 1.0], [0.5, 0.0]),
    ([[2.0, 1.0], [1.0, 2.0]], [-3.0, -3.0], [1.0, 1.0]),
    ([[2.0, 1.0], [1.0, 2.0]], [1.0, 2.0], [0.0, 0.0]),
    ([[4.0]], [-2.0], [0.5]),
    ([[3.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 3.0]], [-4.0, 5.0, -3.0], [4.0 / 3.0, 0.0, 1.0]),
], ids=["one active", "both active", "none active", "scalar", "tridiagonal"])
def test_projected_gauss_seidel_solves_small_lcps_with_known_answers(M, q, expected):
    M, q = np.array(M), np.array(q)
    z, sweeps = projected_gauss_seidel(M, q)
    np.testing.assert_allclose(z, expected, rtol=0, atol=1e-12)  # converged to its tol 1e-12
    w = M @ z + q
    assert np.all(w >= -1e-12) and abs(z @ w) < 1e-11


def test_projected_gauss_seidel_clamps_to_box_bounds():
    z, _ = projected_gauss_seidel(np.eye(2), np.array([-5.0, 5.0]), lower=[-1.0, -1.0], upper=[1.0, 1.0])
    np.testing.assert_array_equal(z, [1.0, -1.0])
    z, _ = projected_gauss_seidel(np.eye(2), np.array([-0.5, 0.25]), lower=[-1.0, -1.0], upper=[1.0, 1.0])
    np.testing.assert_allclose(z, [0.5, -0.25], rtol=0, atol=1e-15)  # interior: w = 0


def test_projected_gauss_seidel_stops_at_the_iteration_limit():
    M = np.array([[1.0, 0.99], [0.99, 1.0]])  # slow: spectral radius of the sweep ~0.98
    z, sweeps = projected_gauss_seidel(M, np.array([-1.0, -1.0]), iterations=3)
    assert sweeps == 3
    assert np.abs(M @ z - 1.0).max() > 1e-3  # not yet converged


def test_pgs_contact_without_friction_agrees_with_contact_qp(rng):
    for _ in range(3):
        A, b, N, r = contact_problem(rng)
        pgs = pgs_contact(A, b, N, r)
        qp = contact_qp(A, b, N=N, r_N=r)
        assert pgs.iterations < 1000  # converged before the limit
        # both at their tolerances (Gauss-Seidel 1e-12 steps, interior point ~1e-8)
        np.testing.assert_allclose(pgs.phi, qp.phi, rtol=0, atol=1e-6)
        np.testing.assert_allclose(pgs.alpha, qp.alpha, rtol=0, atol=1e-6)


def test_pgs_contact_box_friction_stays_within_mu_alpha(rng):
    A, b, N, r = contact_problem(rng, k=3)
    T2 = rng.standard_normal((6, DIM))
    mu = np.array([0.2, 0.5, 1.0])
    sol = pgs_contact(A, b, N, r, T2, mu)
    assert sol.beta.shape == (6,)
    assert np.all(sol.alpha >= 0)
    assert np.all(np.abs(sol.beta.reshape(3, 2)) <= mu[:, None] * sol.alpha[:, None] + 1e-15)
    np.testing.assert_allclose(A @ sol.phi, b + N.T @ sol.alpha + T2.T @ sol.beta, rtol=0, atol=1e-10)


# --- The general KKT solve and the constraint projections (ArtiSynth notes §0.5-0.6) ---------------


def dense_kkt(M, b, G, r, C=None):
    k = len(G)
    K = np.block([[M, -G.T], [G, np.diag(np.zeros(k) if C is None else C)]])
    return np.linalg.solve(K, np.concatenate([b, r]))


def kkt_gap(sol, M, b, G, r, C=None):
    """How far a ConstraintSolution is from the dense solve of the same KKT system (relative)."""
    ref = dense_kkt(M, b, G, r, C)
    return np.abs(np.concatenate([sol.phi, sol.lam_G]) - ref).max() / max(1.0, np.abs(ref).max())


@pytest.mark.parametrize("method", ["full", "schur"])
def test_kkt_routes_agree_with_the_dense_solve_and_the_qp(rng, method):
    for _ in range(20):
        M, b, G, r = random_kkt(rng)
        C = rng.uniform(0.0, 0.1, len(G))
        assert kkt_gap(kkt_solve(M, b, G, r, method=method), M, b, G, r) < 1e-12
        assert kkt_gap(kkt_solve(M, b, G, r, C, method=method), M, b, G, r, C) < 1e-12
        qp = contact_qp(M, b, G, r)  # minimise phi^T M phi / 2 - b^T phi subject to G phi = r
        np.testing.assert_allclose(kkt_solve(M, b, G, r, method=method).phi, qp.phi, atol=1e-6)


def test_the_kkt_check_catches_a_wrong_schur_complement(rng):
    """Mutant: the Schur route with lam = S^-1 (r + G M^-1 b) (a sign slip) fails the dense check."""
    M, b, G, r = random_kkt(rng)
    Minv = np.linalg.inv(M)
    lam = np.linalg.solve(G @ Minv @ G.T, r + G @ Minv @ b)
    wrong = kkt_solve(M, b, G, r)
    wrong.phi, wrong.lam_G = Minv @ (b + G.T @ lam), lam
    assert kkt_gap(wrong, M, b, G, r) > 1e-3


def test_semidefinite_mass_needs_the_full_factorisation(rng):
    """A singular M that the constraints make definite: the full solve works, the Schur route says why
    it cannot."""
    for _ in range(10):
        M, b, G, r = random_kkt(rng, semidefinite=True)
        assert np.linalg.matrix_rank(M) == len(M) - 2
        assert kkt_gap(kkt_solve(M, b, G, r), M, b, G, r) < 1e-10
        with pytest.raises(ValueError, match="argument 'A' is singular: the Schur"):
            kkt_solve(M, b, G, r, method="schur")
    M, b, G, r = random_kkt(rng, semidefinite=True)
    with pytest.raises(ValueError, match="argument 'A' is singular on the motions"):
        kkt_solve(M, b, G[:0], r[:0])  # no constraints to hold the massless directions


@pytest.mark.parametrize("method", ["full", "schur"])
def test_dependent_rows_are_named_consistent_or_not(rng, method):
    M, b, G, r = random_kkt(rng)
    G = np.vstack([G, 0.7 * G[0] + 1.3 * G[1]])
    consistent = np.append(r, 0.7 * r[0] + 1.3 * r[1])
    with pytest.raises(ValueError, match=r"argument 'G' has dependent rows \(rank 4 of 5\), and 'r' is cons"):
        kkt_solve(M, b, G, consistent, method=method)
    with pytest.raises(ValueError, match="'r' is inconsistent with them: no velocity satisfies"):
        kkt_solve(M, b, G, consistent + np.eye(5)[4], method=method)
    soft = kkt_solve(M, b, G, consistent, np.full(5, 1e-3), method=method)  # compliance: no longer singular
    assert kkt_gap(soft, M, b, G, consistent, np.full(5, 1e-3)) < 1e-9


@pytest.mark.parametrize(("args", "name"), [
    ((np.eye(3), np.ones(2), np.ones((1, 2)), np.zeros(1)), "A"),
    ((np.eye(2), np.ones(2), np.ones((1, 3)), np.zeros(1)), "G"),
    ((np.eye(2), np.ones(2), np.ones(2), np.zeros(1)), "G"),
    ((np.eye(2), np.ones(2), np.ones((1, 2)), np.zeros(2)), "r"),
])
def test_kkt_shape_mismatch_names_the_argument(args, name):
    with pytest.raises(ValueError, match=f"argument '{name}' has the wrong shape"):
        kkt_solve(*args)
    with pytest.raises(ValueError, match="argument 'method'"):
        kkt_solve(np.eye(2), np.ones(2), np.ones((1, 2)), np.zeros(1), method="cholesky")


def projection_defects(P_f, P_v, M, G, x):
    """The properties of §0.5 as numbers that vanish for the true projections (relative to their scale)."""
    nearest = contact_qp(M, M @ x, G, np.zeros(len(G))).phi  # min (y - x)^T M (y - x) / 2 with G y = 0
    return {
        "idempotent": np.abs(P_v @ P_v - P_v).max() + np.abs(P_f @ P_f - P_f).max(),
        "transpose": np.abs(P_v - P_f.T).max(),
        "constraints hold": np.abs(G @ P_v @ x).max() / np.abs(x).max(),
        "M-orthogonal": np.abs(M @ P_v - (M @ P_v).T).max() / np.abs(M).max(),
        "nearest in kinetic energy": np.abs(P_v @ x - nearest).max() / np.abs(x).max(),
    }


def test_projections_have_the_properties_of_section_0_5(rng):
    for _ in range(10):
        M, _, G, _ = random_kkt(rng)
        P_f, P_v = constraint_projections(M, G)
        defects = projection_defects(P_f, P_v, M, G, rng.standard_normal(len(M)))
        assert max(v for k, v in defects.items() if k != "nearest in kinetic energy") < 1e-12, defects
        assert defects["nearest in kinetic energy"] < 1e-6  # the QP solver's tolerance
        # the KKT inverse in blocks (end of §0.5)
        Minv = np.linalg.inv(M)
        Sinv = np.linalg.inv(G @ Minv @ G.T)
        blocks = np.block([[Minv @ P_f, Minv @ G.T @ Sinv], [-Sinv @ G @ Minv, Sinv]])
        K = np.block([[M, -G.T], [G, np.zeros((len(G), len(G)))]])
        assert np.abs(blocks @ K - np.eye(len(K))).max() < 1e-10


def test_the_projection_checks_catch_the_euclidean_projection(rng):
    """Mutant: projecting in the identity metric (P = I - G^+ G) keeps G P x = 0 and idempotence but is not
    M-orthogonal, not the kinetic-energy nearest velocity and not P_f^T."""
    M, _, G, _ = random_kkt(rng)
    P_wrong = np.eye(len(M)) - np.linalg.pinv(G) @ G
    defects = projection_defects(P_wrong, P_wrong, M, G, rng.standard_normal(len(M)))
    assert defects["idempotent"] < 1e-12 and defects["constraints hold"] < 1e-12
    assert defects["M-orthogonal"] > 1e-3 and defects["nearest in kinetic energy"] > 1e-3
    assert np.abs(P_wrong - constraint_projections(M, G)[1]).max() > 1e-3


def test_projections_refuse_bad_input():
    with pytest.raises(ValueError, match="argument 'M' is not positive definite"):
        constraint_projections(np.diag([1.0, 0.0]), [[1.0, 0.0]])
    with pytest.raises(ValueError, match="argument 'G' must have shape"):
        constraint_projections(np.eye(2), [[1.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="argument 'M' must be a square"):
        constraint_projections(np.ones((2, 3)), [[1.0, 0.0]])
    with pytest.raises(ValueError, match="argument 'G' has dependent rows"):
        constraint_projections(np.eye(2), [[1.0, 0.0], [2.0, 0.0]])
    P_f, P_v = constraint_projections(np.eye(2), np.zeros((0, 2)))
    assert np.array_equal(P_f, np.eye(2)) and np.array_equal(P_v, np.eye(2))
