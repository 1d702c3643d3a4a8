"""Claims of book/appendix/engineer_attachments_1d (ArtiSynth notes §0.20-0.21): the per-component
projection after attachments, the prescribed-velocity reduction and its driving force, the sizes, and
the sign slip in the notes' §0.21."""

import numpy as np
import pytest

from redmax_edu.lie import material_jacobian, random_transform
from redmax_edu.maximal.attachments import (
    attachment_kkt,
    prescribed_kkt,
    project_one_dimensional,
    reduce_attachments,
    reduce_prescribed,
)

SIZES = [(8, 1, 2, 2), (14, 3, 4, 3), (40, 6, 12, 8)]


def two_bodies_and_a_rope(rng):
    E = [random_transform(rng), random_transform(rng)]
    r = [0.2 * rng.standard_normal(3), 0.2 * rng.standard_normal(3)]
    M = np.diag(np.concatenate([rng.uniform(0.05, 0.2, 3), [2.0] * 3, rng.uniform(0.05, 0.2, 3), [3.0] * 3,
                                [0.5] * 3, [0.7] * 3]))
    G_ba = np.zeros((6, 12))
    G_ba[:3, :6], G_ba[3:, 6:] = -material_jacobian(E[0], r[0]), -material_jacobian(E[1], r[1])
    n = rng.standard_normal(3)
    G = np.zeros((1, 18))
    G[0, 12:15], G[0, 15:] = -n, n
    return M, G_ba, G, E, r, n


def random_prescribed_problem(rng, n, p, q, k):
    B = rng.standard_normal((n, n))
    M = B @ B.T + n * np.eye(n)
    chosen = rng.choice(n, q + k, replace=False)
    attached, prescribed = np.sort(chosen[:q]), chosen[q:]
    return (M, rng.standard_normal(n), rng.standard_normal((p, n)), rng.standard_normal(p), attached,
            rng.standard_normal((q, n - q)), prescribed, rng.standard_normal(k), rng.standard_normal(q),
            np.abs(rng.standard_normal(p)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_per_component_projection_equals_the_unreduced_solve(seed):
    """'per-component projection = unreduced KKT solve, to 1e-11 (relative)'; 'G' has the piece -/+ n^T R
    Gamma(r) on each body, to 1e-12'; 'w_k = g_k M_k^-1 g_k^T ... to 1e-12 (relative)'."""
    rng = np.random.default_rng(seed)
    for _ in range(20):
        M, G_ba, G, E, r, n = two_bodies_and_a_rope(rng)
        v_a0 = rng.standard_normal(12)
        v0 = np.concatenate([v_a0, -G_ba @ v_a0])
        gamma = rng.standard_normal()
        reduced = reduce_attachments(M, M @ v0, G, [gamma], list(range(12, 18)), G_ba)
        v, w = project_one_dimensional(reduced.M, reduced.G, v_a0, gamma, [range(6), range(6, 12)])
        full = attachment_kkt(M, M @ v0, G, [gamma], list(range(12, 18)), G_ba)[0]
        assert np.abs(v - full[:12]).max() < 1e-11 * max(1.0, np.abs(full).max())
        for k, sign in ((0, -1.0), (1, 1.0)):
            g_k = sign * n @ material_jacobian(E[k], r[k])
            assert np.abs(reduced.G[0, 6 * k: 6 * k + 6] - g_k).max() < 1e-12
            w_k = g_k @ np.linalg.solve(reduced.M[6 * k: 6 * k + 6, 6 * k: 6 * k + 6], g_k)
            assert abs(w[k] - w_k) < 1e-12 * w_k


def test_a_point_between_two_masters_is_refused():
    """'the function refuses rather than return a wrong answer' (the printed ValueError)."""
    M3 = np.diag([1.0] * 3 + [2.0] * 3 + [0.5] * 3)
    between = reduce_attachments(M3, np.zeros(9), None, None, [6, 7, 8],
                                 -np.hstack([0.3 * np.eye(3), 0.7 * np.eye(3)]))
    with pytest.raises(ValueError, match="couples components 0 and 1"):
        project_one_dimensional(between.M, np.ones(6), np.zeros(6), 1.0, [range(3), range(3, 6)])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_prescribed_reduction_equals_the_unreduced_solve_and_the_force_drives_it(seed):
    """'reduced solve = unreduced solve (v, multipliers, driving force), to 1e-10'; 'the driving force,
    applied with nothing prescribed, reproduces the motion, to 1e-10'; 13 -> 5, 24 -> 10, 66 -> 26
    unknowns, two per attached or prescribed coordinate."""
    rng = np.random.default_rng(seed)
    for n, p, q, k in SIZES:
        for _ in range(10):
            problem = random_prescribed_problem(rng, n, p, q, k)
            reduced, full = reduce_prescribed(*problem), prescribed_kkt(*problem)
            for a, b in zip(reduced.solve(), full, strict=True):
                assert np.abs(a - b).max() < 1e-10 * max(1.0, np.abs(b).max())
            M, f, G, g, attached, G_ba, prescribed, v_r, g_b, R = problem
            v, _, _, u = reduced.solve()
            driven = f.copy()
            driven[prescribed] += u
            v_free = attachment_kkt(M, driven, G, g, attached, G_ba, g_b, R)[0]
            assert np.abs(v_free - v).max() < 1e-10 * max(1.0, np.abs(v).max())
            assert (n + p + q + k) - (len(reduced.reduced.M) + p) == 2 * (q + k)
    assert [(n + p + q + k, n - q - k + p) for n, p, q, k in SIZES] == [(13, 5), (24, 10), (66, 26)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_notes_plus_sign_misses_and_the_minus_sign_agrees(seed):
    """'minus sign (Eq. 0.23): the unreduced solve, to 1e-10'; 'plus sign (as printed in §0.21): misses it
    by more than 1% on every problem'; and 'invisible whenever g_b = 0'."""
    rng = np.random.default_rng(seed)
    for _ in range(10):
        problem = random_prescribed_problem(rng, 14, 3, 4, 3)
        M, f, G, g, attached, G_ba, prescribed, v_r, g_b, R = problem
        for rhs, plus_misses in ((g_b, True), (np.zeros_like(g_b), False)):
            case = problem[:8] + (rhs, R)
            good = reduce_prescribed(*case)
            masters = good.outer.active
            free = np.setdiff1d(masters, prescribed)
            G_bA = G_ba[:, np.searchsorted(masters, free)]
            v_full = prescribed_kkt(*case)[0]
            K = np.block([[good.reduced.M, good.reduced.G.T], [good.reduced.G, good.reduced.R]])
            for sign in (-1.0, 1.0):
                term = M[np.ix_(free, attached)] - G_bA.T @ M[np.ix_(attached, attached)]
                slip = (sign + 1.0) * term @ rhs
                y = np.linalg.solve(K, np.concatenate([good.reduced.f + slip, good.reduced.gamma]))
                error = np.abs(y[: len(free)] - v_full[free]).max() / np.abs(v_full).max()
                if sign < 0 or not plus_misses:
                    assert error < 1e-10
                else:
                    assert error > 1e-2
