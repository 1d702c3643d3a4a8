"""Solving for constrained velocities: the KKT system, the contact QP, and Gauss-Seidel (§1.10-1.13).

Every solver here finds the new velocities ``Phi`` of one time step from a linear system
``A Phi = b`` (``A`` is the mass matrix, or its implicit-Euler modification, and ``b`` the
momentum plus impulses of the forces) together with constraints:

* equality rows ``G Phi = r_G`` (joints, Eq. 1.84),
* inequality rows ``N Phi >= r_N`` (contacts, Eq. 1.91),
* friction impulses in a pyramid bounded by the normal impulses (Eq. 1.100-1.103).

Constraint impulses enter as ``A Phi = b + C^T lambda`` with ``C`` the stacked rows, so a
positive contact multiplier pushes bodies apart. (The writeup writes Eq. 1.88 with the
opposite sign of lambda; only the sign of the multipliers differs.)

Taught in book/01_maximal/10_joints, 11_contact and 12_solvers, and book/appendix/engineer_kkt.
"""

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from .._validate import as_index, as_real, as_scalar, check_count

__all__ = ["ConstraintSolution", "kkt_solve", "constraint_projections", "check_independent_rows",
           "nonsingular_lu", "lu_solve", "contact_qp",
           "qp_to_lcp", "projected_gauss_seidel", "pgs_contact"]

#: Most Gauss-Seidel sweeps one call may ask for (each sweep visits every row).
MAX_SWEEPS = 10_000_000


def _iterations(iterations, tol):
    """The sweep budget and tolerance of a Gauss-Seidel solve, checked (a bool or 1e12 is refused)."""
    n = check_count(as_index(iterations, "iterations", minimum=1), MAX_SWEEPS, "sweeps", "iterations")
    return n, as_scalar(tol, "tol", minimum=0.0)


@dataclass
class ConstraintSolution:
    """New velocities and the multipliers that produced them.

    ``phi`` (6n,); ``lam_G`` per equality row; ``alpha`` per contact (normal impulse);
    ``beta`` friction impulses (four pyramid directions per contact, or two signed
    tangent components for Gauss-Seidel); ``impulse = C^T lambda`` (6n,), the generalised
    impulse of all constraints together.
    """

    phi: np.ndarray
    impulse: np.ndarray
    lam_G: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    iterations: int = 0


def check_independent_rows(G, owners, tol=1e-10):
    """Raise ValueError if a row of ``G`` depends on the rows before it, naming its owner.

    A rank-deficient set of hard constraints (for example two hinges on the same axis, or a
    weld on top of a hinge) makes the KKT matrix singular. ``owners[k]`` is the label of
    the constraint that row k belongs to.

    Examples
    --------
    >>> G = np.array([[1.0, 0], [2.0, 0]])
    >>> check_independent_rows(G, ["joint 'a'", "joint 'b'"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: joint 'b' is redundant: its constraint rows depend on those ... (joint 'a'); ...
    """
    if len(G) == 0:
        return
    s = np.linalg.svd(G, compute_uv=False)
    if np.sum(s > tol * max(1.0, s[0])) == len(G):  # full row rank: the usual case
        return
    rank = 0
    for k in range(len(G)):
        sub = G[: k + 1]
        s = np.linalg.svd(sub, compute_uv=False)
        new_rank = int(np.sum(s > tol * max(1.0, s[0])))
        if new_rank == rank:
            before = ", ".join(dict.fromkeys(owners[:k]))
            raise ValueError(f"{owners[k]} is redundant: its constraint rows depend on those of the "
                             f"constraints before it ({before}); remove it or make it soft")
        rank = new_rank


def nonsingular_lu(K):
    """LU factors of a real ``K`` and whether every pivot is above round-off (1e-13 of the largest entry).

    The factors of ``scipy.linalg.lu_factor``, straight from LAPACK's ``getrf``: without
    lu_factor's warning for an exactly singular ``K``, which the caller reports in the
    reader's terms, and without its checks, which cost more than the factoring of a small
    matrix. Solve with :func:`lu_solve`.

    Examples
    --------
    >>> lu, ok = nonsingular_lu(np.array([[2.0, 0.0], [0.0, 4.0]]))
    >>> ok, lu_solve(lu, np.array([2.0, 2.0]))
    (True, array([1. , 0.5]))
    >>> nonsingular_lu(np.ones((2, 2)))[1]
    False
    """
    if not K.size:  # LAPACK refuses an empty matrix
        return (np.zeros((0, 0)), np.zeros(0, dtype=np.int32)), True
    lu, piv, _ = scipy.linalg.lapack.dgetrf(K)
    return (lu, piv), bool(np.all(np.abs(np.diag(lu)) > 1e-13 * max(1.0, np.abs(K).max(initial=0.0))))


def lu_solve(lu, b):
    """``K^-1 b`` from the factors of :func:`nonsingular_lu` (``b`` of shape (m,) or (m, k)): LAPACK's
    ``getrs``, as ``scipy.linalg.lu_solve`` without its checks."""
    return scipy.linalg.lapack.dgetrs(*lu, b)[0] if len(b) else np.zeros(np.shape(b))


def _singular_kkt(G, r, what):
    """The ValueError for a singular KKT system: dependent rows of ``G`` (consistent or not), else ``A``."""
    s = np.linalg.svd(G, compute_uv=False)
    rank = int(np.sum(s > 1e-10 * max(1.0, s.max(initial=0.0))))
    if rank < len(G):
        residual = r - G @ np.linalg.lstsq(G, r, rcond=None)[0]
        consistent = np.abs(residual).max() <= 1e-10 * max(1.0, np.abs(r).max())
        why = ("and 'r' is consistent with them, so the multipliers are not unique: remove the redundant "
               "rows or make them soft" if consistent else
               "and 'r' is inconsistent with them: no velocity satisfies G Phi = r")
        return ValueError(f"argument 'G' has dependent rows (rank {rank} of {len(G)}), {why} "
                          "(see check_independent_rows)")
    return ValueError(f"argument 'A' is singular {what}: a coordinate without mass (or with negative "
                      "stiffness) that no constraint holds")


def kkt_solve(A, b, G, r, compliance=None, method="full"):
    """Solve the KKT system of Eq. (1.88): ``A Phi = b + G^T lam`` with ``G Phi + C lam = r``.

    ``C`` is a diagonal of constraint compliances (soft constraints, ArtiSynth notes §0.11);
    zero for rigid rows, which is the KKT system of the writeup (and Eq. 0.3 of the notes,
    with ``v = Phi``, ``g = r``): its solution minimises ``1/2 Phi^T A Phi - Phi^T b`` subject to
    ``G Phi = r`` (Eq. 1.86-1.87), and its two block rows are those of Eq. (1.89) with ``lam`` of
    the opposite sign.

    Two routes give the same answer (ArtiSynth notes §0.6):

    * ``method="full"`` factors the whole matrix ``[[A, -G^T], [G, C]]``. It needs only that
      matrix to be invertible: ``A`` may be singular (a massless coordinate) as long as it is
      positive definite on the motions the constraints allow.
    * ``method="schur"`` eliminates ``Phi``: ``lam = S^-1 (r - G A^-1 b)`` with the Schur
      complement ``S = G A^-1 G^T + C``, then ``Phi = A^-1 (b + G^T lam)``. It needs ``A``
      itself invertible, and solves with ``A`` once per constraint row.

    Parameters
    ----------
    A : ndarray, shape (6n, 6n)
    b : ndarray, shape (6n,)
    G : ndarray, shape (k, 6n)
    r : ndarray, shape (k,)
    compliance : ndarray, shape (k,), optional
    method : {"full", "schur"}

    Returns
    -------
    ConstraintSolution

    Raises
    ------
    ValueError
        For mismatched shapes; when rows of ``G`` are dependent (saying whether ``r`` is
        consistent with them); when ``A`` is singular on the allowed motions (or at all, for
        ``method="schur"``).

    Examples
    --------
    A unit mass pushed along x but constrained to move along y only:

    >>> sol = kkt_solve(np.eye(2), np.array([1.0, 0.5]), np.array([[1.0, 0.0]]), np.zeros(1))
    >>> sol.phi, sol.lam_G
    (array([0. , 0.5]), array([-1.]))

    Taught in book/01_maximal/10_joints and book/appendix/engineer_kkt.
    """
    A, b = as_real(A, None, "A"), as_real(b, None, "b")
    G, r = as_real(G, None, "G"), as_real(r, None, "r")
    n6 = len(b) if b.ndim == 1 else -1
    for name, bad in (("A", A.shape != (n6, n6)), ("G", G.ndim != 2 or G.shape[1:] != (n6,)),
                      ("r", r.shape != (len(G),))):
        if bad:
            raise ValueError(f"argument '{name}' has the wrong shape: A {A.shape}, b {b.shape}, G {G.shape}, "
                             f"r {r.shape} must have shapes (m, m), (m,), (k, m) and (k,)")
    if method not in ("full", "schur"):
        raise ValueError(f"argument 'method' must be 'full' or 'schur', got {method!r}")
    k = len(G)
    C = np.zeros(k) if compliance is None else as_real(compliance, (k,), "compliance")
    if method == "full":
        K = np.zeros((n6 + k, n6 + k))  # [[A, -G^T], [G, diag(C)]], filled without np.block's overhead
        K[:n6, :n6], K[:n6, n6:], K[n6:, :n6] = A, -G.T, G
        K[n6:, n6:][np.diag_indices(k)] = C
        lu, ok = nonsingular_lu(K)
        if not ok:
            raise _singular_kkt(G[C == 0], r[C == 0], "on the motions the constraints allow")
        x = lu_solve(lu, np.concatenate([b, r]))
        phi, lam = x[:n6], x[n6:]
    else:
        lu, ok = nonsingular_lu(A)
        if not ok:
            raise ValueError("argument 'A' is singular: the Schur-complement route needs A^-1 "
                             "(use method='full', which needs A invertible only on the allowed motions)")
        Ainv_b, lam = lu_solve(lu, b), np.zeros(0)
        if k:
            Ainv_Gt = lu_solve(lu, G.T)
            lu_S, ok = nonsingular_lu(G @ Ainv_Gt + np.diag(C))
            if not ok:
                raise _singular_kkt(G[C == 0], r[C == 0], "")
            lam = lu_solve(lu_S, r - G @ Ainv_b)
        phi = Ainv_b + (Ainv_Gt @ lam if k else 0.0)
    return ConstraintSolution(phi, G.T @ lam, lam, np.zeros(0), np.zeros(0))


def constraint_projections(M, G):
    """The force and velocity projections of constraint rows ``G`` (ArtiSynth notes §0.5).

    With ``S = G M^-1 G^T``:

    * ``P_f = I - G^T S^-1 G M^-1`` removes from a force the part the constraints cancel:
      ``f = P_f f_x`` is the net force once the constraint forces ``G^T lam`` keeping
      ``G a = 0`` are added;
    * ``P_v = I - M^-1 G^T S^-1 G = P_f^T`` maps a velocity to the nearest one in the kinetic
      metric that satisfies ``G v = 0`` (the impulse ``M^-1 G^T lam`` that does it).

    Both are idempotent; ``P_v`` is orthogonal in the metric of ``M`` (``M P_v`` is symmetric).

    Parameters
    ----------
    M : array_like, shape (m, m)
        Symmetric positive definite mass matrix.
    G : array_like, shape (k, m)
        Independent constraint rows.

    Returns
    -------
    P_f, P_v : ndarray, shape (m, m)

    Examples
    --------
    A unit mass in the plane constrained to move along y: the x component is removed.

    >>> P_f, P_v = constraint_projections(np.eye(2), [[1.0, 0.0]])
    >>> P_v @ [3.0, 4.0]
    array([0., 4.])

    Taught in book/appendix/engineer_kkt.
    """
    M = as_real(M, None, "M")
    m = len(M) if M.ndim == 2 else -1
    if M.shape != (m, m):
        raise ValueError(f"argument 'M' must be a square matrix, got shape {M.shape}")
    G = as_real(G, None, "G")
    if G.ndim != 2 or G.shape[1] != m:
        raise ValueError(f"argument 'G' must have shape (k, {m}), got {G.shape}")
    try:
        factor = scipy.linalg.cho_factor(_sym(M))
    except np.linalg.LinAlgError:
        raise ValueError("argument 'M' is not positive definite: the projections need M^-1") from None
    if not len(G):
        return np.eye(m), np.eye(m)
    Minv_Gt = scipy.linalg.cho_solve(factor, G.T)
    lu, ok = nonsingular_lu(G @ Minv_Gt)
    if not ok:
        raise _singular_kkt(G, np.zeros(len(G)), "")
    P_v = np.eye(m) - Minv_Gt @ lu_solve(lu, G)
    return P_v.T.copy(), P_v


def _sym(A):
    return 0.5 * (A + A.T)


def contact_qp(A, b, G=None, r_G=None, N=None, r_N=None, T=None, mu=None):
    """Velocities with joints, contacts and pyramid friction from one convex QP (Eq. 1.94-1.103).

    The primal problem minimises ``Phi^T A Phi / 2 - Phi^T b`` subject to ``G Phi = r_G``
    and ``N Phi >= r_N`` (Eq. 1.95). Friction makes it a problem in the impulses instead
    (Anitescu and Hart's single QP, Eq. 1.103): with ``C = [G; N; T]`` and
    ``lam = (lam_G, alpha, beta)``,

        minimise    lam^T (C A^-1 C^T) lam / 2 + lam^T (C A^-1 b - r)
        subject to  alpha >= 0, beta >= 0, mu alpha_i - sum of contact i's beta >= 0,

    and then ``Phi = A^-1 (b + C^T lam)``. Without friction this is exactly the dual of
    the primal problem. Solved with the interior-point solver Clarabel through qpsolvers.

    Parameters
    ----------
    A : ndarray, shape (6n, 6n)
        Symmetric positive definite (its symmetric part is used).
    b : ndarray, shape (6n,)
    G, r_G : equality rows (k_G, 6n) and right-hand sides, optional
    N, r_N : contact normal rows (k, 6n) and right-hand sides, optional
    T : ndarray, shape (4 k, 6n), optional
        Friction pyramid rows, four per contact.
    mu : array_like, shape (k,), optional
        Friction coefficient per contact.

    Returns
    -------
    ConstraintSolution

    Examples
    --------
    A unit mass falling onto the floor: the contact removes the downward velocity.

    >>> sol = contact_qp(np.eye(1), np.array([-2.0]), N=np.eye(1), r_N=np.zeros(1))
    >>> bool(abs(sol.phi[0]) < 1e-8), bool(abs(sol.alpha[0] - 2.0) < 1e-6)
    (True, True)
    """
    import qpsolvers
    from scipy import sparse

    A = _sym(A)
    dim = len(b)
    G = np.zeros((0, dim)) if G is None else G
    r_G = np.zeros(0) if r_G is None else r_G
    N = np.zeros((0, dim)) if N is None else N
    r_N = np.zeros(0) if r_N is None else r_N
    T = np.zeros((0, dim)) if T is None else T
    kG, kN, kT = len(G), len(N), len(T)
    C = np.vstack([G, N, T])
    r = np.concatenate([r_G, r_N, np.zeros(kT)])
    if len(C) == 0:
        phi = np.linalg.solve(A, b)
        return ConstraintSolution(phi, np.zeros(dim), np.zeros(0), np.zeros(0), np.zeros(0))
    Ainv_Ct = np.linalg.solve(A, C.T)
    P = C @ Ainv_Ct
    P = _sym(P) + 1e-12 * np.trace(P) / len(P) * np.eye(len(P))  # numerically PSD
    q = Ainv_Ct.T @ b - r
    lb = np.concatenate([np.full(kG, -np.inf), np.zeros(kN + kT)])
    Gin, hin = None, None
    if kT:
        mu = np.broadcast_to(np.asarray(mu, dtype=float), (kN,))
        Gin = np.zeros((kN, len(C)))
        for i in range(kN):  # -mu alpha_i + sum beta_i <= 0
            Gin[i, kG + i] = -mu[i]
            Gin[i, kG + kN + 4 * i: kG + kN + 4 * i + 4] = 1.0
        hin = np.zeros(kN)
    lam = qpsolvers.solve_qp(sparse.csc_matrix(P), q, G=None if Gin is None else sparse.csc_matrix(Gin),
                             h=hin, lb=lb, solver="clarabel")
    if lam is None:
        raise ValueError("the contact QP has no solution: the constraints are inconsistent")
    impulse = C.T @ lam
    phi = np.linalg.solve(A, b + impulse)
    return ConstraintSolution(phi, impulse, lam[:kG], lam[kG: kG + kN], lam[kG + kN:])


def qp_to_lcp(Q, c, Aineq, b):
    """The LCP equivalent to a QP (ArtiSynth notes §0.3).

    ``minimise x^T Q x / 2 + c^T x subject to Aineq x >= b`` with Q symmetric positive
    definite has the same solution as the LCP ``w = M z + q, 0 <= z, w >= 0, z^T w = 0``
    with ``M = Aineq Q^-1 Aineq^T`` and ``q = -b - Aineq Q^-1 c``; then
    ``x = Q^-1 (Aineq^T z - c)``.

    Returns
    -------
    M : ndarray, shape (k, k)
    q : ndarray, shape (k,)
    recover : callable
        ``recover(z)`` returns x.

    Examples
    --------
    Minimise ``x^2/2 + x`` subject to ``x >= 0``: the LCP's solution ``z = 1`` gives ``x = 0``.

    >>> M, q, recover = qp_to_lcp(np.eye(1), np.array([1.0]), np.eye(1), np.zeros(1))
    >>> M, q, recover(np.array([1.0]))
    (array([[1.]]), array([-1.]), array([0.]))
    """
    Qinv_At = np.linalg.solve(Q, Aineq.T)
    M = Aineq @ Qinv_At
    q = -b - Qinv_At.T @ c

    def recover(z):
        return np.linalg.solve(Q, Aineq.T @ z - c)

    return M, q, recover


def projected_gauss_seidel(M, q, lower=None, upper=None, z0=None, iterations=500, tol=1e-12):
    """Projected Gauss-Seidel for the (box) LCP ``w = M z + q`` (ArtiSynth notes §0.15).

    Each sweep solves row i for ``z_i`` with the other entries fixed and clamps it to
    ``[lower_i, upper_i]`` (default ``[0, inf)``: the standard LCP). Converges for
    symmetric positive definite M.

    Returns
    -------
    z : ndarray, shape (k,)
    sweeps : int
        Sweeps used (it stops when no entry moves by more than ``tol``).

    Examples
    --------
    >>> z, sweeps = projected_gauss_seidel(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, 1.0]))
    >>> z
    array([0.5, 0. ])
    """
    iterations, tol = _iterations(iterations, tol)
    k = len(q)
    lower = np.zeros(k) if lower is None else np.asarray(lower, dtype=float)
    upper = np.full(k, np.inf) if upper is None else np.asarray(upper, dtype=float)
    z = np.zeros(k) if z0 is None else np.array(z0, dtype=float)
    rows = list(M)  # the per-row scalars as Python floats: a sweep is scalar work
    diagonal, q, lower, upper = (np.asarray(x, dtype=float).tolist()
                                 for x in (np.diagonal(M), q, lower, upper))
    for sweep in range(1, iterations + 1):
        change = 0.0
        for i, row in enumerate(rows):
            old = float(z[i])
            new = min(max(old - (float(row @ z) + q[i]) / diagonal[i], lower[i]), upper[i])  # clipped
            change = max(change, abs(new - old))
            z[i] = new
        if change <= tol:
            return z, sweep
    return z, iterations


def pgs_contact(A, b, N, r_N, T2=None, mu=None, iterations=1000, tol=1e-12):
    """Contact and box friction by Gauss-Seidel on impulses (ArtiSynth notes §0.15-0.16).

    Loops over contacts: the normal impulse solves its own row and is clamped at zero;
    then each of the two tangent impulses solves its row and is clamped to
    ``[-mu alpha, mu alpha]`` with the current normal impulse. This is the iterative
    solver of many game engines; here it is taught and compared with :func:`contact_qp`.

    Parameters
    ----------
    A, b : as for contact_qp
    N, r_N : contact normal rows (k, 6n) and right-hand sides
    T2 : ndarray, shape (2 k, 6n), optional
        Two orthogonal tangent rows per contact.
    mu : array_like, shape (k,), optional

    Returns
    -------
    ConstraintSolution
        ``beta`` holds the signed tangent impulses, two per contact.
    """
    A = _sym(A)
    Ainv = np.linalg.inv(A)
    iterations, tol = _iterations(iterations, tol)
    k = len(N)
    T2 = np.zeros((0, len(b))) if T2 is None else T2
    mu = np.broadcast_to(np.asarray(0.0 if mu is None else mu, dtype=float), (k,))
    phi = Ainv @ b
    wN = np.einsum("ij,jk,ik->i", N, Ainv, N)
    wT = np.einsum("ij,jk,ik->i", T2, Ainv, T2)
    # each row with the velocity change per unit impulse along it; the impulses and the per-row
    # constants as Python floats: the sweeps are scalar work
    rows_N = [(row, Ainv @ row) for row in N]
    rows_T = [(row, Ainv @ row) for row in T2]
    alpha, beta = [0.0] * k, [0.0] * len(T2)
    r_N, wN, wT, mu = (np.asarray(x, dtype=float).tolist() for x in (r_N, wN, wT, mu))
    sweeps = 0
    while sweeps < iterations:
        sweeps += 1
        change = 0.0
        for i, (row, dphi) in enumerate(rows_N):
            new = max(0.0, alpha[i] + (r_N[i] - float(row @ phi)) / wN[i])
            if new != alpha[i]:
                phi += dphi * (new - alpha[i])
                change = max(change, abs(new - alpha[i]))
                alpha[i] = new
            for t in range(2 * i, 2 * i + 2 if len(T2) else 2 * i):
                row, dphi = rows_T[t]
                bound = mu[i] * alpha[i]
                new = min(max(beta[t] - float(row @ phi) / wT[t], -bound), bound)  # clipped to the box
                if new != beta[t]:
                    phi += dphi * (new - beta[t])
                    change = max(change, abs(new - beta[t]))
                    beta[t] = new
        if change <= tol:
            break
    alpha, beta = np.array(alpha), np.array(beta)
    impulse = N.T @ alpha + (T2.T @ beta if len(T2) else 0.0)
    return ConstraintSolution(phi, impulse, np.zeros(0), alpha, beta, iterations=sweeps)
