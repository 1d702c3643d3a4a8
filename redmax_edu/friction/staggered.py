"""Staggered projections, Algorithm 7 of §2.11, and the two stages it shares with BISP.

Staggered projections split a frictional contact problem into two convex problems that are
solved in turn until they agree: a *contact* problem that finds the normal impulses ``alpha``
with the current friction held fixed (Eq. 2.120), and a *friction* problem that finds the
tangential impulses ``beta``, bounded by ``mu |alpha|``, with the current normal impulses held
fixed (Eq. 2.121). :func:`staggered_projections` is Algorithm 7 on plain arrays (Part 1's
maximal coordinates); :func:`friction_qp` is its friction stage, and :class:`ContactStage` the
contact stage, linear in the friction while the same contacts push; bilateral staggered
projections (:mod:`redmax_edu.friction.bisp`) use both.

Sign convention: impulses enter as ``A v = b + C^T lambda`` (the library's, as in
:mod:`redmax_edu.maximal.solve`): a positive normal impulse pushes apart and the friction
impulse ``beta`` opposes the sliding velocity (``beta . T v <= 0``). The writeup writes
``f_alpha = -N^T alpha / h`` with the opposite orientation of ``N``.

Taught in book/02_reduced/11_friction.
"""

from dataclasses import dataclass

import numpy as np

from .._validate import as_index, as_real, as_scalar
from ..constrained import inequality_qp, violates

__all__ = ["friction_qp", "FrictionQP", "ContactStage", "SPResult", "staggered_projections", "norm_minv"]


def friction_qp(W, c, bound):
    """The friction problem of Eq. (2.121): ``min beta^T W beta / 2 + c^T beta`` with ``|beta| <= bound``.

    ``W = T A^-1 T^T`` is the mobility of the tangent rows ``T`` and ``c = T v`` their sliding
    velocities without this friction; at the solution every row either sticks (``W beta + c = 0``) or slides
    with ``beta`` at its bound and of the sign that opposes the sliding (Coulomb's law per row,
    the writeup's four-sided cone for two tangent rows per contact).

    Rows that move together (parallel in the metric of ``W``, such as the eight points of a
    hinge, which all slide with the hinge's turning) act as one row whose bound is the sum of
    theirs; their common impulse is split in proportion to their bounds, so that every point
    uses the same fraction of its own bound (any split gives the same motion; this one puts
    no spurious moment on the joint), and the group's sliding speed is its rows' speeds
    weighted by that split (the objective restricted to such impulses; the rows' speeds differ
    where a constraint's own target, a Baumgarte correction, moves them apart).

    The remaining box QP is solved by quadprog (Goldfarb and Idnani's dual active-set method,
    a few tens of microseconds for these few rows). ``W`` is only positive semidefinite when
    there are more rows than motions (the hinges of a four-bar all turn with its one degree of
    freedom), so quadprog gets ``W`` shifted by ``1e-12`` times its mean diagonal; its answer
    is then made exact: the bounds it found active are met exactly, and the rows it left
    inside their bounds (the sticking ones) are solved from ``W beta + c = 0`` by least
    squares (the smallest such impulses), kept if they stay within their bounds.

    A row that friction cannot move (zero diagonal of ``W``) keeps its speed ``c``: Coulomb's
    law puts it at its bound against that speed, or at zero where the speed is round-off
    (below ``1e-9`` of the problem's largest speed, ``|c|`` or ``W_ii bound_i``). Such rows
    arise when constraints drive a joint (a prescribed crank keeps turning whatever its
    friction) or lock it.

    Parameters
    ----------
    W : ndarray, shape (k, k)
        Symmetric positive semidefinite.
    c : ndarray, shape (k,)
    bound : ndarray, shape (k,)
        Non-negative bounds ``mu |alpha|``.

    Returns
    -------
    ndarray, shape (k,)

    Examples
    --------
    A unit mass sliding at 2 m/s with a bound of 0.5 N s keeps sliding, at 1.5 m/s; two
    rows on the same motion with bounds 0.5 and 1.0 stop it and share the impulse 1 : 2;
    a row that cannot move but slides at 3 m/s meets its whole bound:

    >>> beta = friction_qp(np.eye(1), np.array([2.0]), np.array([0.5]))
    >>> beta, 2.0 + beta
    (array([-0.5]), array([1.5]))
    >>> friction_qp(np.ones((2, 2)), np.array([1.2, 1.2]), np.array([0.5, 1.0]))
    array([-0.4, -0.8])
    >>> friction_qp(np.diag([1.0, 0.0]), np.array([0.2, 3.0]), np.array([0.5, 0.5]))
    array([-0.2, -0.5])
    """
    return FrictionQP(W)(c, bound)


class FrictionQP:
    """:func:`friction_qp` for one mobility ``W`` and several ``(c, bound)``: the rows that can move,
    their groups of parallel rows and the groups' (shifted) matrix are found once (the friction
    stages of one step share ``W`` while the same contacts push)."""

    def __init__(self, W):
        d = np.diag(W)
        self.diag = d
        movable = d > 1e-12 * d.max(initial=0.0)
        self.rows, self.fixed = np.flatnonzero(movable), np.flatnonzero(~movable)
        Wm = W[np.ix_(self.rows, self.rows)]
        group, scale = _parallel_rows(Wm)
        first = np.unique(group)                                     # one row per group
        self.index = np.searchsorted(first, group)                   # each row's group
        self.sign, self.size = np.sign(scale), np.abs(scale)
        self.Wg = Wm[np.ix_(first, first)]
        self.k = k = len(first)
        self.P = self.Wg + 1e-12 * np.trace(self.Wg) / max(k, 1) * np.eye(k)
        self.box = np.hstack([np.eye(k), -np.eye(k)])                # -total <= gamma <= total

    def __call__(self, c, bound):
        beta = np.zeros(len(c))
        if len(self.fixed):
            speed = max(np.abs(c).max(initial=0.0), (self.diag * bound).max(initial=0.0))
            f = self.fixed[np.abs(c[self.fixed]) > 1e-9 * speed]
            beta[f] = -np.sign(c[f]) * bound[f]
        b = bound[self.rows]
        total = np.bincount(self.index, self.size * b, minlength=self.k)   # a group's bound
        # the groups' sliding speeds: each row's, weighted as the group's impulse is split
        cg = np.bincount(self.index, self.sign * b * c[self.rows], minlength=self.k)
        live = total > 0
        if not live.any():
            return beta
        if live.all():
            gamma_ = self._box_qp(self.Wg, self.P, self.box, cg / total, total)
        else:
            at = np.flatnonzero(live)
            sub, box = np.ix_(at, at), np.hstack([np.eye(len(at)), -np.eye(len(at))])
            gamma_ = np.zeros(self.k)
            gamma_[at] = self._box_qp(self.Wg[sub], self.P[sub], box, cg[at] / total[at], total[at])
        share = np.divide(gamma_, total, out=np.zeros(self.k), where=live)  # the fraction of each bound
        beta[self.rows] = self.sign * b * share[self.index]
        return beta

    @staticmethod
    def _box_qp(W, P, box, c, total):
        """``min gamma^T W gamma / 2 + c^T gamma`` with ``|gamma| <= total``, exactly (:func:`friction_qp`);
        ``P`` is ``W`` shifted, ``box`` the bounds' rows."""
        import quadprog

        k = len(c)
        if k == 1:                                                   # one group: in closed form
            return np.clip(-c / W[0], -total, total)
        gamma_, _, _, _, _, active = quadprog.solve_qp(P, -c, box, np.concatenate([-total, -total]))
        # quadprog's active bounds hold exactly (its primal, with W nearly singular, only to ~1e-11
        # relative); the groups it leaves inside their bounds stick: solve them exactly
        active = active[active > 0] - 1
        gamma_ = np.clip(gamma_, -total, total)
        gamma_[active % k] = np.where(active < k, -1.0, 1.0) * total[active % k]
        free = np.ones(k, dtype=bool)
        free[active % k] = False
        if free.any():
            rhs = -(c[free] + W[np.ix_(free, ~free)] @ gamma_[~free])
            exact = np.linalg.lstsq(W[np.ix_(free, free)], rhs, rcond=None)[0]
            if (np.abs(exact) <= total[free]).all():
                gamma_[free] = exact
        return gamma_


def _parallel_rows(W, tol=1e-9):
    """Each row of a mobility ``W``: the first row it is parallel to, and the factor ``t_j = s_j t_first``.

    Rows ``t_i``, ``t_j`` are parallel in the metric of ``W`` when ``W_ij^2 = W_ii W_jj``.
    """
    d = np.diag(W)
    dd = np.outer(d, d)
    if not len(d):
        return np.zeros(0, dtype=int), np.zeros(0)
    group = np.argmax(np.abs(W * W - dd) <= tol * dd, axis=1)      # the first row parallel to each
    return group, W[np.arange(len(W)), group] / d[group]


def norm_minv(Minv, f):
    """``||f||_{M^-1} = sqrt(f^T M^-1 f)`` for a block-diagonal ``M^-1`` (n, 6, 6) and ``f`` (n, 6)."""
    return float(np.sqrt(np.einsum("ni,nij,nj->", f, Minv, f)))


# --------------------------------------------------------------------------- the contact stage
class ContactStage:
    """The contact stage of Algorithms 7 and 8 as a function of the friction impulses ``beta``.

    Solves ``A x = b + F^T beta + G^T lam_G + C^T lam_C`` with ``G x = r_G``, ``C x >= r_C`` and
    ``lam_C >= 0`` (Eq. 2.120, 2.126; ``F`` the friction rows, ``F^T beta = h f_beta``).
    ``solve(rhs)`` is the exact solve of the step for the right-hand side ``rhs`` (the KKT
    solve, or the QP when an inequality must push: :func:`redmax_edu.constrained.solve_rows`).

    While the same inequality rows push, the solution is linear in ``beta``: the KKT system of
    the equalities and the pushing rows (independent: quadprog keeps an independent active
    set), solved once for the friction rows' impulses ``F^T`` as right-hand sides, gives
    ``dx/dbeta`` and ``dlam/dbeta``. A call checks that the pushing rows still push and the
    others still hold (with the step's own tolerance); otherwise ``solve`` solves it anew and
    its pushing rows start a new response. Within a step the contact stage therefore costs a
    matrix-vector product, and its impulses change continuously with ``beta`` (a QP re-solved at
    every iteration may split the load of redundant contacts, four wheels on a floor,
    differently each time, and with it their friction bounds).

    :meth:`friction_problem` gives the friction stage: Eq. (2.121) with the matrix
    ``W = F dx/dbeta`` (the constraints' response included) and the sliding velocities without
    friction ``c``.
    """

    def __init__(self, solve, A, b, F, G, C, r_C):
        self._solve, self.A, self.b, self.F, self.G, self.C, self.r_C = solve, A, b, F, G, C, r_C
        self._ref = None        # beta, x, lam_G, lam_C, pushing, and once needed the response

    def __call__(self, beta):
        """``x, lam_G, lam_C`` at the friction impulses ``beta``."""
        ref = self._ref
        if ref is not None:
            if np.array_equal(beta, ref["beta"]):
                return ref["x"], ref["lam_G"], ref["lam_C"]
            X, L_G, L_C = self._response()
            d = beta - ref["beta"]
            x, lam_G, lam_C = ref["x"] + X @ d, ref["lam_G"] + L_G @ d, ref["lam_C"] + L_C @ d
            pushing, C = ref["pushing"], self.C
            if ((lam_C[pushing] >= -1e-10 * np.abs(ref["lam_C"]).max(initial=0.0)).all()
                    and not violates(C[~pushing], x, self.r_C[~pushing])):
                return x, lam_G, np.maximum(lam_C, 0.0)
        x, lam_G, lam_C = self._solve(self.b + self.F.T @ beta if beta.any() else self.b)
        self._ref = dict(beta=beta.copy(), x=x, lam_G=lam_G, lam_C=lam_C, pushing=lam_C > 0)
        return x, lam_G, lam_C

    def _response(self):
        """``dx/dbeta``, ``dlam_G/dbeta``, ``dlam_C/dbeta`` with the current pushing rows."""
        ref = self._ref
        if "X" not in ref:
            pushing = np.flatnonzero(ref["pushing"])
            rows = np.vstack([self.G, self.C[pushing]])
            nx, k, kF = len(self.b), len(rows), len(self.F)
            # the matrix of the solve that found the pushing rows: the QP sees A's symmetric part
            A = self.A if not len(pushing) else 0.5 * (self.A + self.A.T)
            K = np.block([[A, -rows.T], [rows, np.zeros((k, k))]])
            R = np.linalg.solve(K, np.vstack([self.F.T, np.zeros((k, kF))]))
            L_C = np.zeros((len(self.C), kF))
            L_C[pushing] = R[nx + len(self.G):]
            ref.update(X=R[:nx], L_G=R[nx:nx + len(self.G)], L_C=L_C)
        return ref["X"], ref["L_G"], ref["L_C"]

    def friction_problem(self, x, beta):
        """The friction stage at the solution ``x`` for ``beta``: a :class:`FrictionQP` of the
        rows' mobility ``W = F dx/dbeta`` (symmetrised), kept while the same contacts push, and the
        sliding velocities without the friction, ``c = F x - W beta``."""
        ref = self._ref
        if "qp" not in ref:
            W = self.F @ self._response()[0]
            ref.update(W=W, qp=FrictionQP(0.5 * (W + W.T)))
        return ref["qp"], self.F @ x - ref["W"] @ beta


# --------------------------------------------------------------------------- Algorithm 7
@dataclass(frozen=True)
class SPResult:
    """The outcome of :func:`staggered_projections`.

    Attributes
    ----------
    v : ndarray (d,)
        End-of-step velocity.
    alpha : ndarray (k,)
        Normal impulses (>= 0), one per contact.
    beta : ndarray (2k,)
        Tangential impulses, two per contact, each within ``mu alpha``.
    f_alpha, f_beta : ndarray (d,)
        The contact and friction forces ``N^T alpha / h`` and ``T^T beta / h``.
    iterations : int
    converged : bool
    """

    v: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    f_alpha: np.ndarray
    f_beta: np.ndarray
    iterations: int
    converged: bool


def staggered_projections(M, v_prev, f, h, N, T, mu, *, r_N=None, beta=None, tol=1e-6,
                          max_iterations=100):
    """One velocity-level step with contact and Coulomb friction by staggered projections (Algorithm 7).

    With ``v_unc = v_prev + h M^-1 f``, alternate

    * the contact QP (Eq. 2.120): normal impulses ``alpha >= 0`` with ``N v >= r_N`` and the
      current friction force ``f_beta = T^T beta / h`` applied, solved in its primal form
      (Eq. 1.94) by the active-set QP of the library's Euler step, exact;
      ``f_alpha = N^T alpha / h``;
    * the convergence check ``||f_alpha - f_alpha^0||_{M^-1} <= tol ||f_alpha||_{M^-1}``;
    * the friction QP (Eq. 2.121) on the sliding velocities without friction, with
      ``|beta| <= mu alpha`` (:func:`friction_qp`);

    and end with ``v = v_prev + h M^-1 (f + f_alpha + f_beta)`` (line 22), the last contact
    solve's velocity. Friction is the writeup's four-sided cone: two signed tangent rows per
    contact, each bounded by ``mu alpha`` (so a slide along a diagonal meets up to sqrt(2) times
    Coulomb's friction).

    The friction QP's matrix is the tangent rows' mobility with the pushing contacts' response,
    ``W = T dv/dbeta`` (:class:`ContactStage`), where Eq. (2.121) has ``T M^-1 T^T``: with it the
    friction stage predicts the next contact stage's sliding exactly while the normal impulses
    keep their values. The fixed point, and so the answer, is the same (at it ``W beta + c`` is
    the contact stage's own sliding velocity for either matrix); the free bodies' ``M^-1``
    ignores that a contact pushes back against the friction's tilt, so its iteration takes longer.

    Parameters
    ----------
    M : ndarray (d, d)
        Mass matrix (or the step's matrix), symmetric positive definite.
    v_prev, f : ndarray (d,)
        Velocity at the start of the step and force.
    h : float
        Time step.
    N : ndarray (k, d)
        Contact normal rows.
    T : ndarray (2k, d)
        Tangent rows, rows ``2i`` and ``2i+1`` for contact ``i``.
    mu : float or array_like (k,)
        Friction coefficients.
    r_N : ndarray (k,), optional
        Right-hand side of ``N v >= r_N`` (Baumgarte's ``-gamma * gap``); default zero.
    beta : ndarray (2k,), optional
        Warm start: the friction impulses of the previous step (the writeup suggests its
        friction force ``f_beta = T^T beta / h``).
    tol : float
        Relative tolerance of the convergence check.
    max_iterations : int

    Returns
    -------
    SPResult

    Examples
    --------
    A 1 kg point on a frictional floor (mu = 0.5), pushed along x by 10 N while gravity pulls
    it down: friction takes 0.5 * 9.81 N off the push.

    >>> out = staggered_projections(np.eye(3), np.zeros(3), np.array([10.0, 0.0, -9.81]), 0.01,
    ...                             N=np.array([[0, 0, 1.0]]), T=np.array([[1.0, 0, 0], [0, 1.0, 0]]), mu=0.5)
    >>> np.round(out.v / 0.01, 6) + 0.0, out.converged
    (array([5.095, 0.   , 0.   ]), True)
    """
    M, v_prev, f = as_real(M, None, "M"), as_real(v_prev, None, "v_prev"), as_real(f, None, "f")
    h = as_scalar(h, "h", minimum=0.0, strict=True)
    d = len(v_prev)
    if M.shape != (d, d) or f.shape != (d,):
        raise ValueError(f"arguments 'M' {M.shape}, 'v_prev' {v_prev.shape} and 'f' {f.shape} must have "
                         "shapes (d, d), (d,) and (d,)")
    N = as_real(N, None, "N").reshape(-1, d)
    k = len(N)
    T = as_real(T, (2 * k, d), "T")
    mu = np.broadcast_to(as_real(mu, None, "mu"), (k,))
    if (mu < 0).any():
        raise ValueError(f"argument 'mu' must be >= 0, got {mu.tolist()}")
    r_N = np.zeros(k) if r_N is None else as_real(r_N, (k,), "r_N")
    beta = np.zeros(2 * k) if beta is None else as_real(beta, (2 * k,), "beta")
    tol = as_scalar(tol, "tol", minimum=0.0)
    max_iterations = as_index(max_iterations, "max_iterations", minimum=1)
    Minv = np.linalg.inv(0.5 * (M + M.T))
    v_unc = v_prev + h * Minv @ f                                     # Alg. 7, line 8
    no_rows = np.zeros((0, d))
    stage = ContactStage(lambda rhs: inequality_qp(M, rhs, no_rows, np.zeros(0), N, r_N),
                          M, M @ v_unc, T, no_rows, N, r_N)
    f_alpha0, iteration = np.zeros(d), 0
    while True:
        iteration += 1
        v, _, alpha = stage(beta)                                     # with f_beta = T^T beta / h
        f_alpha = N.T @ alpha / h                                     # lines 11-12, Eq. (2.120)
        change = np.sqrt((f_alpha - f_alpha0) @ Minv @ (f_alpha - f_alpha0))
        converged = change <= tol * np.sqrt(f_alpha @ Minv @ f_alpha)  # line 14
        if converged or iteration == max_iterations:
            break
        f_alpha0 = f_alpha
        bound = np.repeat(mu * alpha, 2)                              # line 19, Eq. (2.121)
        qp, c = stage.friction_problem(v, beta)
        beta = qp(c, bound)                                           # line 20
    return SPResult(v, alpha, beta, f_alpha, T.T @ beta / h, iteration, bool(converged))
