"""Claims of book/appendix/engineer_attachments (ArtiSynth notes §0.17): the reduced KKT solve equals the
full one, M' = P M P^T, the sizes, and a glued point's spatial inertia and weight."""

import numpy as np
import pytest

from redmax_edu.lie import brac, material_jacobian, random_transform
from redmax_edu.maximal.attachments import attachment_kkt, reduce_attachments

SIZES = [(6, 1, 2), (10, 2, 3), (30, 5, 12), (60, 8, 30)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reduced_equals_full_to_1e_10_and_is_smaller_by_twice_the_attached(seed):
    """'reduced solve = full KKT solve, and M' = P M P^T, to 1e-10 (relative)'; 'smaller by twice the
    number of attached coordinates' (9 -> 5, 15 -> 9, 47 -> 23, 98 -> 38)."""
    rng = np.random.default_rng(seed)
    for n, p, q in SIZES:
        for _ in range(10):
            B = rng.standard_normal((n, n))
            M = B @ B.T + n * np.eye(n)
            attached = np.sort(rng.choice(n, q, replace=False))
            problem = (M, rng.standard_normal(n), rng.standard_normal((p, n)), rng.standard_normal(p),
                       attached, rng.standard_normal((q, n - q)), rng.standard_normal(q),
                       np.abs(rng.standard_normal(p)))
            reduced, full = reduce_attachments(*problem), attachment_kkt(*problem)
            for a, b in zip(reduced.solve(), full, strict=True):
                assert np.abs(a - b).max() < 1e-10 * max(1.0, np.abs(b).max())
            P = np.zeros((n - q, n))
            P[:, reduced.active] = np.eye(n - q)
            P[:, attached] = -problem[5].T
            assert np.abs(P @ M @ P.T - reduced.M).max() < 1e-10 * np.abs(M).max()
            assert (n + p + q) - (len(reduced.M) + len(reduced.G)) == 2 * q
    assert [(n + p + q, n - q + p) for n, p, q in SIZES] == [(9, 5), (15, 9), (47, 23), (98, 38)]


def test_glued_point_adds_its_spatial_inertia_and_its_weight(rng):
    for _ in range(5):
        E, r, m = random_transform(rng), rng.standard_normal(3), rng.uniform(0.1, 2.0)
        M = np.zeros((9, 9))
        M[:6, :6] = np.diag(rng.uniform(0.01, 0.1, 3).tolist() + [1.5] * 3)
        M[6:, 6:] = m * np.eye(3)
        f = np.zeros(9)
        f[6:] = m * np.array([0.0, 0.0, -9.81])
        J = material_jacobian(E, r)
        glued = reduce_attachments(M, f, None, None, [6, 7, 8], -J)
        C = brac(r)
        assert np.abs(glued.M - M[:6, :6] - m * np.block([[-C @ C, C], [-C, np.eye(3)]])).max() < 1e-12
        assert np.abs(glued.f - J.T @ f[6:]).max() < 1e-12
        v = glued.solve()[0]
        assert np.abs(v[6:] - J @ v[:6]).max() < 1e-12


def test_two_masters_chains_and_fictitious_forces(rng):
    """§0.18-0.19 on the page: the coupled mass matrix of a point between two masters (to 1e-14);
    a chain eliminated one at a time equals at once (to 1e-12); the acceleration-level right-hand side
    gives the Coriolis wrench ad(phi)^T M_p phi of the point (to 1e-12)."""
    from redmax_edu.maximal.forces import Coriolis

    for _ in range(5):
        m1, m2, mk, w1, w2 = rng.uniform(0.5, 2.0, 3).tolist() + rng.uniform(0, 1, 2).tolist()
        M3 = np.diag([m1] * 3 + [m2] * 3 + [mk] * 3)
        between = reduce_attachments(M3, np.zeros(9), None, None, [6, 7, 8],
                                     -np.hstack([w1 * np.eye(3), w2 * np.eye(3)]))
        expected = np.block([[(m1 + w1**2 * mk) * np.eye(3), w1 * w2 * mk * np.eye(3)],
                             [w1 * w2 * mk * np.eye(3), (m2 + w2**2 * mk) * np.eye(3)]])
        assert np.abs(between.M - expected).max() < 1e-14

        E, r, m = random_transform(rng), rng.standard_normal(3), rng.uniform(0.1, 2.0)
        J = material_jacobian(E, r)
        M12 = np.zeros((12, 12))
        M12[:6, :6] = np.diag(rng.uniform(0.01, 0.1, 3).tolist() + [1.5] * 3)
        M12[6:9, 6:9], M12[9:, 9:] = 0.3 * np.eye(3), 0.2 * np.eye(3)
        f12 = rng.standard_normal(12)
        first = reduce_attachments(M12, f12, None, None, [9, 10, 11],
                                   np.hstack([np.zeros((3, 6)), -0.5 * np.eye(3)]))
        then = reduce_attachments(first.M, first.f, None, None, [6, 7, 8], -J)
        at_once = reduce_attachments(M12, f12, None, None, list(range(6, 12)), np.vstack([-J, -0.5 * J]))
        assert np.abs(then.M - at_once.M).max() < 1e-12 and np.abs(then.f - at_once.f).max() < 1e-12

        M = np.zeros((9, 9))
        M[:6, :6] = M12[:6, :6]
        M[6:, 6:] = m * np.eye(3)
        phi = rng.standard_normal(6)
        g_b = E[:3, :3] @ np.cross(phi[:3], phi[3:] + np.cross(phi[:3], r))
        moving = reduce_attachments(M, np.zeros(9), None, None, [6, 7, 8], -J, g_b)
        C = brac(r)
        M_point = m * np.block([[-C @ C, C], [-C, np.eye(3)]])
        coriolis = Coriolis(0, M_point).evaluate(E[None], phi[None]).f
        assert np.abs(moving.f - coriolis).max() < 1e-12 * max(1.0, np.abs(coriolis).max())
