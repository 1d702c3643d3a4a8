"""A mixed LCP turned into an LCP, and principal pivoting with its columns made on demand.

ArtiSynth notes §0.7-0.8. One velocity step with joints and contacts is the mixed LCP

    M x - G^T lam - N^T z = f,    G x = g,    w = N x - n >= 0,    0 <= z  perp  w >= 0,

the optimality conditions of the QP that :func:`redmax_edu.maximal.solve.contact_qp` solves
(without friction). Eliminating ``(x, lam)`` through the KKT matrix ``A = [[M, -G^T], [G, 0]]``
leaves an LCP in ``z`` alone, ``w = L z + q`` with ``L = Nbar A^-1 Nbar^T``, ``Nbar = [N, 0]``
(:func:`mixed_lcp_to_lcp`). Murty's least-index principal pivoting solves it
(:func:`principal_pivoting`) and needs only the columns of ``L`` whose ``z`` has entered the
basis, so :func:`solve_mixed_lcp` forms each column when it is first needed: one solve with
``A`` per column instead of one per contact.

Principal pivoting needs a P-matrix. The LCP of Anitescu-Stewart friction (notes §0.10) has
zero diagonal blocks and is only copositive; :func:`lemke` (complementary pivoting with an
artificial variable) solves it.

Taught in book/appendix/engineer_mixed_lcp and book/appendix/engineer_friction_cone.
"""

from dataclasses import dataclass

import numpy as np

from .._validate import as_flag, as_index, as_real, as_scalar
from .solve import lu_solve, nonsingular_lu

__all__ = ["LCPSolution", "mixed_lcp_to_lcp", "principal_pivoting", "lemke", "solve_mixed_lcp"]


@dataclass
class LCPSolution:
    """A solution of ``w = L z + q, 0 <= z perp w >= 0`` and what it cost.

    ``x`` and ``lam`` are the mixed problem's other unknowns (empty for a plain LCP);
    ``pivots`` counts the basis changes, ``columns`` the columns of ``L`` that were formed and
    ``solves`` the solves with the KKT matrix ``A`` (one for ``q``, one per column).
    """

    z: np.ndarray
    w: np.ndarray
    pivots: int
    columns: int
    solves: int = 0
    x: np.ndarray = None
    lam: np.ndarray = None


def _mixed_problem(M, f, G, g, N, n):
    """Checked arrays of the mixed LCP and the LU factors of its KKT matrix A."""
    M, f = as_real(M, None, "M"), as_real(f, None, "f")
    dim = len(f) if f.ndim == 1 else -1
    if M.shape != (dim, dim):
        raise ValueError(f"arguments M {M.shape} and f {f.shape} must have shapes (m, m) and (m,)")
    G = np.zeros((0, dim)) if G is None else as_real(G, None, "G")
    g = np.zeros(len(G)) if g is None else as_real(g, None, "g")
    N, n = as_real(N, None, "N"), as_real(n, None, "n")
    for name, rows, rhs in (("G", G, g), ("N", N, n)):
        if rows.ndim != 2 or rows.shape[1] != dim or rhs.shape != (len(rows),):
            rhs_name = name.lower()
            raise ValueError(f"arguments {name} {rows.shape} and {rhs_name} {rhs.shape} must have shapes "
                             f"(k, {dim}) and (k,)")
    lu, ok = nonsingular_lu(np.block([[M, -G.T], [G, np.zeros((len(G), len(G)))]]))
    if not ok:
        raise ValueError("the KKT matrix [[M, -G^T], [G, 0]] is singular: M is not positive definite "
                         "or two rows of G remove the same motion")
    b = np.concatenate([f, g])
    Nbar = np.hstack([N, np.zeros((len(N), len(G)))])
    return lu, b, Nbar, n, dim


def mixed_lcp_to_lcp(M, f, G, g, N, n):
    """The LCP in ``z`` alone that a mixed LCP reduces to (ArtiSynth notes §0.7).

    With ``A = [[M, -G^T], [G, 0]]``, ``b = (f, g)`` and ``Nbar = [N, 0]``:
    ``(x, lam) = A^-1 (b + Nbar^T z)``, so ``w = N x - n = L z + q`` with
    ``L = Nbar A^-1 Nbar^T`` and ``q = Nbar A^-1 b - n``. Forming ``L`` takes ``k + 1``
    solves with ``A`` (one per row of ``N``, one for ``q``). ``L`` equals
    ``N M^-1 P_f N^T`` with the force projection ``P_f = I - G^T (G M^-1 G^T)^-1 G M^-1``
    (notes §0.5), so it is symmetric and positive semidefinite.

    Parameters
    ----------
    M : array_like, shape (m, m)
        Symmetric positive definite (a mass matrix, or its implicit-Euler modification).
    f : array_like, shape (m,)
    G, g : array_like, shapes (p, m) and (p,), or None
        Equality rows ``G x = g`` (joints).
    N, n : array_like, shapes (k, m) and (k,)
        Inequality rows ``N x >= n`` (contacts).

    Returns
    -------
    L : ndarray, shape (k, k)
    q : ndarray, shape (k,)
    recover : callable
        ``recover(z)`` returns ``(x, lam)``.

    Examples
    --------
    A unit mass pushed down at 2 m/s onto a floor: the LCP is ``w = z - 2``.

    >>> L, q, recover = mixed_lcp_to_lcp(np.eye(1), [-2.0], None, None, np.eye(1), [0.0])
    >>> L, q, recover(np.array([2.0]))[0]
    (array([[1.]]), array([-2.]), array([0.]))

    Taught in book/appendix/engineer_mixed_lcp.
    """
    lu, b, Nbar, n, dim = _mixed_problem(M, f, G, g, N, n)
    y0 = lu_solve(lu, b)
    AinvNt = lu_solve(lu, Nbar.T) if len(Nbar) else np.zeros((len(b), 0))

    def recover(z):
        y = y0 + AinvNt @ as_real(z, (len(n),), "z")
        return y[:dim], y[dim:]

    return Nbar @ AinvNt, Nbar @ y0 - n, recover


def _pivot(column, q, max_pivots, tol):
    """Murty's least-index principal pivoting; ``column(j)`` returns column j of L (cached by the caller).

    The basis ``alpha`` holds the indices whose z may be nonzero (their w is zero). Each
    round solves ``L_aa z_a = -q_a``, sets ``w = q + L[:, a] z_a``, and flips the smallest
    index whose z or w is negative. For a P-matrix (L positive definite) this ends.
    """
    k = len(q)
    alpha = []
    for pivots in range(max_pivots + 1):
        z, w = np.zeros(k), q.copy()
        if alpha:
            cols = np.column_stack([column(j) for j in alpha])
            z[alpha] = np.linalg.solve(cols[alpha], -q[alpha])
            w = q + cols @ z[alpha]
            w[alpha] = 0.0
        bad = [j for j in range(k) if (j in alpha and z[j] < -tol) or (j not in alpha and w[j] < -tol)]
        if not bad:
            return z, w, pivots
        j = bad[0]
        if j in alpha:
            alpha.remove(j)
        else:
            alpha.append(j)
        alpha.sort()
    raise ValueError(f"principal pivoting did not finish in {max_pivots} pivots: the LCP matrix is "
                     "probably not positive definite (dependent contact rows?)")


def _tolerance(q, tol):
    return as_scalar(tol, "tol", minimum=0.0) * max(1.0, np.abs(q).max(initial=0.0))


def principal_pivoting(L, q, max_pivots=None, tol=1e-12):
    """Solve ``w = L z + q, 0 <= z perp w >= 0`` by Murty's least-index principal pivoting.

    Start with no index in the basis (``z = 0, w = q``). While some basic ``z_j`` or nonbasic
    ``w_j`` is negative, move the smallest such index ``j`` into or out of the basis and solve
    for the basic ``z`` again (the pivoted system, notes Eq. 0.4). For a positive definite
    ``L`` this finite method finds the unique solution.

    Parameters
    ----------
    L : array_like, shape (k, k)
        A P-matrix, e.g. symmetric positive definite.
    q : array_like, shape (k,)
    max_pivots : int, optional
        Default ``2**k`` capped at 100000.
    tol : float
        Relative tolerance on the signs of z and w.

    Returns
    -------
    LCPSolution
        ``columns`` counts the distinct columns of L the pivots used.

    Examples
    --------
    >>> sol = principal_pivoting([[2.0, 1.0], [1.0, 2.0]], [-1.0, 1.0])
    >>> sol.z, sol.w, sol.pivots
    (array([0.5, 0. ]), array([0. , 1.5]), 1)

    Taught in book/appendix/engineer_mixed_lcp.
    """
    q = as_real(q, None, "q")
    if q.ndim != 1:
        raise ValueError(f"argument 'q' must be a vector, got shape {q.shape}")
    L = as_real(L, (len(q), len(q)), "L")
    used = set()

    def column(j):
        used.add(j)
        return L[:, j]

    limit = _max_pivots(max_pivots, len(q))
    z, w, pivots = _pivot(column, q, limit, _tolerance(q, tol))
    return LCPSolution(z, w, pivots, len(used))


def lemke(L, q, max_pivots=None, tol=1e-12):
    """Solve ``w = L z + q, 0 <= z perp w >= 0`` by Lemke's complementary pivoting.

    An artificial variable ``z0`` with covering vector ``e = (1, ..., 1)`` makes
    ``w = q + L z + e z0`` feasible at ``z = 0``; it enters the basis in the row of the most
    negative ``q``, and from then on the variable entering is always the complement of the one
    that just left (``z_j`` after ``w_j`` and conversely), the leaving row chosen by the ratio
    test with lexicographic ties (so degenerate problems do not cycle). The method ends when
    ``z0`` leaves (a solution) or when no row limits the entering variable (a ray). Unlike
    :func:`principal_pivoting` it does not need a P-matrix: it solves LCPs with copositive
    matrices such as the friction-cone LCP of the ArtiSynth notes §0.10 (Anitescu and Potra
    showed that this one never ends on a ray).

    Parameters
    ----------
    L : array_like, shape (k, k)
    q : array_like, shape (k,)
    max_pivots : int, optional
        Default ``50 k + 100``.
    tol : float
        Relative tolerance of the ratio test.

    Returns
    -------
    LCPSolution
        ``pivots`` counts the pivots (the entry of ``z0`` included).

    Raises
    ------
    ValueError
        On a ray (no solution found) or when ``max_pivots`` is used up.

    Examples
    --------
    An LCP whose matrix has a zero diagonal (not a P-matrix):

    >>> sol = lemke([[0.0, 1.0], [-1.0, 2.0]], [-1.0, 2.0])
    >>> sol.z, sol.w
    (array([4., 1.]), array([0., 0.]))

    Taught in book/appendix/engineer_friction_cone.
    """
    q = as_real(q, None, "q")
    if q.ndim != 1:
        raise ValueError(f"argument 'q' must be a vector, got shape {q.shape}")
    k = len(q)
    L = as_real(L, (k, k), "L")
    limit = 50 * k + 100 if max_pivots is None else as_index(max_pivots, "max_pivots", minimum=1)
    tol = as_scalar(tol, "tol", minimum=0.0)
    if k == 0 or q.min() >= 0:
        return LCPSolution(np.zeros(k), q.copy(), 0, 0)
    # Tableau of  I w - L z - e z0 = q: columns w (0..k-1), z (k..2k-1), z0 (2k), right-hand side (2k+1).
    T = np.hstack([np.eye(k), -L, -np.ones((k, 1)), q[:, None]])
    basis = list(range(k))
    scale = tol * max(1.0, np.abs(T).max())

    def pivot(row, col):
        T[row] /= T[row, col]
        others = np.arange(k) != row
        T[others] -= np.outer(T[others, col], T[row])
        left = basis[row]
        basis[row] = col
        return left

    row = int(np.argmin(q))
    left = pivot(row, 2 * k)
    for pivots in range(1, limit + 1):
        if left == 2 * k:  # z0 left the basis: a solution
            z = np.zeros(k)
            for r, var in enumerate(basis):
                if k <= var < 2 * k:
                    z[var - k] = max(T[r, -1], 0.0)
            return LCPSolution(z, L @ z + q, pivots, k)
        entering = left + k if left < k else left - k
        d = T[:, entering]
        rows = np.flatnonzero(d > scale)
        if not len(rows):
            raise ValueError("Lemke's method ended on a ray: it found no solution of this LCP (the matrix "
                             "is not copositive-plus, or the LCP has no solution)")
        for col in [2 * k + 1, *range(k)]:  # lexicographic minimum ratio
            ratio = T[rows, col] / d[rows]
            rows = rows[ratio <= ratio.min() + scale]
            if len(rows) == 1:
                break
        left = pivot(int(rows[0]), entering)
    raise ValueError(f"Lemke's method did not finish in {limit} pivots")


def _max_pivots(max_pivots, k):
    if max_pivots is None:
        return min(2**k, 100_000)
    return as_index(max_pivots, "max_pivots", minimum=1)


def solve_mixed_lcp(M, f, G, g, N, n, *, on_demand=True, max_pivots=None, tol=1e-12):
    """Solve the mixed LCP of joints and contacts by pivoting on its reduced LCP (notes §0.7-0.8).

    With ``on_demand=True`` column ``j`` of ``L = Nbar A^-1 Nbar^T`` is formed (one solve with
    ``A``) only when ``z_j`` first enters the basis; with ``on_demand=False`` all ``k`` columns
    are formed first, as :func:`mixed_lcp_to_lcp` does. Both give the same solution; the first
    saves the solves for the contacts that never become active. ``x`` and ``lam`` are then
    ``A^-1 (b + Nbar^T z)``, assembled from the solves already made.

    Parameters
    ----------
    M, f, G, g, N, n
        As in :func:`mixed_lcp_to_lcp`.
    on_demand : bool
    max_pivots : int, optional
    tol : float

    Returns
    -------
    LCPSolution
        With ``x`` (m,), ``lam`` (p,), and ``solves`` the number of solves with ``A``.

    Examples
    --------
    Two contacts on a unit mass in the plane, pushed into the first one only:

    >>> sol = solve_mixed_lcp(np.eye(2), [-1.0, 0.5], None, None, np.eye(2), [0.0, 0.0])
    >>> sol.x, sol.z, sol.solves
    (array([0. , 0.5]), array([1., 0.]), 2)

    Taught in book/appendix/engineer_mixed_lcp.
    """
    lu, b, Nbar, n, dim = _mixed_problem(M, f, G, g, N, n)
    y0 = lu_solve(lu, b)
    q = Nbar @ y0 - n
    solved = {}  # j -> A^-1 Nbar_j^T

    def column(j):
        if j not in solved:
            solved[j] = lu_solve(lu, Nbar[j])
        return Nbar @ solved[j]

    if not as_flag(on_demand, "on_demand"):
        for j in range(len(n)):
            column(j)
    z, w, pivots = _pivot(column, q, _max_pivots(max_pivots, len(n)), _tolerance(q, tol))
    y = y0 + sum((z[j] * solved[j] for j in solved), np.zeros_like(y0))
    return LCPSolution(z, w, pivots, len(solved), 1 + len(solved), y[:dim], y[dim:])
