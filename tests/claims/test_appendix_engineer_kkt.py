"""Claims of book/appendix/engineer_kkt (ArtiSynth notes §0.5-0.6): the constraint projections, the KKT
inverse in blocks, the Schur and full routes of kkt_solve, a singular M, redundant and inconsistent rows."""

import numpy as np
import pytest
from scipy.linalg import null_space

from redmax_edu.maximal.random_problems import random_kkt
from redmax_edu.maximal.solve import constraint_projections, contact_qp, kkt_solve


def gap(a, b):
    return np.abs(a - b).max() / max(1.0, np.abs(b).max())


@pytest.mark.parametrize("seed", range(5))
def test_projection_properties(seed):
    """'idempotent (to 1e-12)', 'M P_v symmetric (to 1e-12)', 'nearest ... (QP library, to 1e-6)',
    'M^-1 P_f = P_v M^-1 (to 1e-12)', the Euclidean projection idempotent and allowed but not nearest,
    and 'the block formula is K^-1 (to 1e-10)'."""
    rng = np.random.default_rng(seed)
    M, _, G, _ = random_kkt(rng)
    P_f, P_v = constraint_projections(M, G)
    xdot = rng.standard_normal(len(M))
    nearest = contact_qp(M, M @ xdot, G, np.zeros(len(G))).phi
    Minv = np.linalg.inv(M)
    assert max(np.abs(P_v @ P_v - P_v).max(), np.abs(P_f @ P_f - P_f).max()) < 1e-12
    assert np.abs(M @ P_v - (M @ P_v).T).max() < 1e-12 * np.abs(M).max()
    assert np.abs(P_v @ xdot - nearest).max() < 1e-6
    assert np.abs(Minv @ P_f - P_v @ Minv).max() < 1e-12
    euclid = np.eye(len(M)) - np.linalg.pinv(G) @ G
    assert np.abs(euclid @ euclid - euclid).max() < 1e-12 and np.abs(G @ euclid).max() < 1e-12
    assert np.abs(euclid @ xdot - nearest).max() > 1e-3
    S_inv = np.linalg.inv(G @ Minv @ G.T)
    blocks = np.block([[Minv @ P_f, Minv @ G.T @ S_inv], [-S_inv @ G @ Minv, S_inv]])
    K = np.block([[M, -G.T], [G, np.zeros((len(G), len(G)))]])
    assert np.abs(blocks @ K - np.eye(len(K))).max() < 1e-10


@pytest.mark.parametrize("seed", range(3))
def test_both_routes_agree_with_the_dense_solve_the_formula_and_the_qp(seed):
    """'On 40 random problems both agree with a dense solve to 1e-12', 'v = M^-1 (P_f b + G^T S^-1 g)
    (relative 1e-12)', 'with the QP library (relative 1e-6)'."""
    rng = np.random.default_rng(seed)
    worst_dense = worst_qp = worst_formula = 0.0
    for m, k in [(6, 2), (9, 4), (15, 7), (24, 10)]:
        for _ in range(10):
            M, b, G, g = random_kkt(rng, m, k)
            C = rng.uniform(0.0, 0.1, k) * (rng.random() < 0.5)
            dense = np.linalg.solve(np.block([[M, -G.T], [G, np.diag(C)]]), np.concatenate([b, g]))
            for method in ("full", "schur"):
                sol = kkt_solve(M, b, G, g, C, method=method)
                worst_dense = max(worst_dense, gap(np.concatenate([sol.phi, sol.lam_G]), dense))
            if not C.any():
                P_f, _ = constraint_projections(M, G)
                Minv = np.linalg.inv(M)
                formula = Minv @ (P_f @ b + G.T @ np.linalg.solve(G @ Minv @ G.T, g))
                worst_formula = max(worst_formula, gap(formula, sol.phi))
                worst_qp = max(worst_qp, gap(contact_qp(M, b, G, g).phi, sol.phi))
    assert worst_dense < 1e-12 and worst_formula < 1e-12 and worst_qp < 1e-6


@pytest.mark.parametrize("seed", range(3))
def test_singular_mass_full_route_matches_the_null_space_method_and_schur_refuses(seed):
    """'M has rank m - 2', 'on 20 with a massless coordinate the full one agrees with the null-space
    method to 1e-10', 'the Schur route refused all 20'."""
    rng = np.random.default_rng(seed)
    for _ in range(20):
        M, b, G, g = random_kkt(rng, semidefinite=True)
        assert np.linalg.matrix_rank(M) == len(M) - 2
        Z = null_space(G)
        v_p = np.linalg.lstsq(G, g, rcond=None)[0]
        v_ref = v_p + Z @ np.linalg.solve(Z.T @ M @ Z, Z.T @ (b - M @ v_p))
        assert gap(kkt_solve(M, b, G, g).phi, v_ref) < 1e-10
        with pytest.raises(ValueError, match="argument 'A' is singular: the Schur"):
            kkt_solve(M, b, G, g, method="schur")


def test_dependent_rows_a_plain_solve_returns_huge_multipliers_kkt_solve_names_the_case(rng):
    """'it can return multipliers of size 1e16 without complaint'; kkt_solve tells redundant from
    inconsistent; 'made soft (compliance 1e-6), the redundant set moves as the independent rows do
    (to 1e-4)'."""
    M, b, G, g = random_kkt(rng)
    G3 = np.vstack([G, 0.7 * G[0] + 1.3 * G[1]])
    redundant, inconsistent = np.append(g, 0.7 * g[0] + 1.3 * g[1]), np.append(g, 0.0)
    with pytest.raises(ValueError, match="'r' is consistent with them, so the multipliers are not unique"):
        kkt_solve(M, b, G3, redundant)
    with pytest.raises(ValueError, match="'r' is inconsistent with them: no velocity satisfies"):
        kkt_solve(M, b, G3, inconsistent)
    soft = kkt_solve(M, b, G3, redundant, compliance=np.full(5, 1e-6))
    assert gap(soft.phi, kkt_solve(M, b, G, g).phi) < 1e-4
    # the example of the library's own earlier behaviour: a plain solve of such a K does not complain
    G_ex = np.array([[1.0, 0.1, 0.7], [0.3, 0.2, 0.9]])
    G_ex = np.vstack([G_ex, 0.7 * G_ex[0] + 1.3 * G_ex[1]])
    K = np.block([[np.eye(3), -G_ex.T], [G_ex, np.zeros((3, 3))]])
    lam = np.linalg.solve(K, np.concatenate([np.ones(3), [1.0, 1.0, 2.5]]))[3:]
    assert np.abs(lam).max() > 1e15
