"""Random constraint and contact problems of the appendix pages, for their checks and tests.

One generator per kind of problem, used by the page that checks a solver on it and by that
page's claims and unit tests, so that the problems a test draws are the ones the page shows.

* :func:`random_kkt`: a mass matrix, constraint rows and right-hand sides (notes §0.5-0.6).
* :func:`random_contact_step`: a velocity step with joint rows and candidate contacts, some of
  them pushed into (notes §0.7-0.8).
* :func:`random_friction_cone_lcp`: an LCP with the Anitescu-Stewart structure (notes §0.10).

Taught in book/appendix/engineer_kkt, engineer_mixed_lcp and engineer_friction_cone.
"""

import numpy as np
from scipy.linalg import null_space

from .pivoting import mixed_lcp_to_lcp

__all__ = ["random_kkt", "random_contact_step", "random_friction_cone_lcp"]


def random_kkt(rng, m=9, k=4, semidefinite=False):
    """A mass matrix ``M`` (m, m), forces ``b`` (m,), ``k`` constraint rows ``G`` and their ``r``.

    With ``semidefinite``, ``M`` has no mass along two directions of ``G``'s row space: it is
    singular, but positive definite on the null space of ``G`` (the constraints hold what has no
    mass), the case of notes §0.6 that only the full factorisation solves.

    Examples
    --------
    >>> M, b, G, r = random_kkt(np.random.default_rng(0), semidefinite=True)
    >>> int(np.linalg.matrix_rank(M)), M.shape, G.shape
    (7, (9, 9), (4, 9))

    Taught in book/appendix/engineer_kkt.
    """
    B = rng.standard_normal((m, m))
    M = B @ B.T + np.eye(m)
    G = rng.standard_normal((k, m))
    if semidefinite:
        U = null_space(np.linalg.svd(G)[2][:2])
        M = U @ (U.T @ M @ U) @ U.T
    return M, rng.standard_normal(m), G, rng.standard_normal(k)


def random_contact_step(rng, m, p, k, violated):
    """A step with ``m`` velocities, ``p`` joint rows and ``k`` candidate contacts.

    Returns ``(M, f, G, g, N, n)`` of the mixed LCP of notes §0.7: ``violated`` of the contacts
    are pushed into at the joint-only solution (``n_i < 0`` there), the others stay apart by
    0.1 to 1.

    Examples
    --------
    >>> M, f, G, g, N, n = random_contact_step(np.random.default_rng(0), 6, 2, 4, violated=1)
    >>> N.shape, G.shape
    ((4, 6), (2, 6))

    Taught in book/appendix/engineer_mixed_lcp.
    """
    B = rng.standard_normal((m, m))
    M = B @ B.T + m * np.eye(m)
    f, G, g = 5 * rng.standard_normal(m), rng.standard_normal((p, m)), rng.standard_normal(p)
    N = rng.standard_normal((k, m))
    x_free = mixed_lcp_to_lcp(M, f, G, g, N, np.zeros(k))[2](np.zeros(k))[0]
    gap = rng.uniform(0.1, 1.0, k)
    gap[rng.choice(k, violated, replace=False)] *= -1
    return M, f, G, g, N, N @ x_free - gap


def random_friction_cone_lcp(rng, contacts, directions, mu=0.5):
    """An LCP ``(L, q)`` with the Anitescu-Stewart structure of notes §0.10.

    Per contact a normal row and ``directions`` tangent rows at equal angles in a random tangent
    plane (so they surround the origin there, as the cone system needs), a random mass matrix,
    and ``L = [[N; D] A^-1 [N; D]^T, (0; E)], [mu, -E^T, 0]]`` with the slack column ``E``.

    Examples
    --------
    >>> L, q = random_friction_cone_lcp(np.random.default_rng(0), contacts=2, directions=4)
    >>> L.shape, bool(np.all(np.diag(L)[-2:] == 0))  # the slacks' zero diagonal block
    ((12, 12), True)

    Taught in book/appendix/engineer_friction_cone.
    """
    m = 3 * contacts
    B = rng.standard_normal((m, m))
    normals = rng.standard_normal((contacts, m))
    angles = 2 * np.pi * np.arange(directions) / directions
    t1, t2 = rng.standard_normal((2, contacts, m))  # each contact's tangent plane
    tangents = np.cos(angles)[None, :, None] * t1[:, None] + np.sin(angles)[None, :, None] * t2[:, None]
    rows = np.vstack([normals, tangents.reshape(-1, m)])
    n = len(rows)
    E = np.kron(np.eye(contacts), np.ones((directions, 1)))
    L = np.zeros((n + contacts, n + contacts))
    L[:n, :n] = rows @ np.linalg.solve(B @ B.T + np.eye(m), rows.T)
    L[contacts:n, n:], L[n:, :contacts], L[n:, contacts:n] = E, mu * np.eye(contacts), -E.T
    return L, np.concatenate([rng.standard_normal(n), np.zeros(contacts)])
