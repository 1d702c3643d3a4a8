"""Coulomb friction by staggered projections and bilateral staggered projections (§2.11, Algorithms 7-8).

Staggered projections split a frictional contact problem into two convex problems that are
solved in turn until they agree: a *contact* problem that finds the normal impulses ``alpha``
with the current friction held fixed (Eq. 2.120), and a *friction* problem that finds the
tangential impulses ``beta``, bounded by ``mu |alpha|``, with the current normal impulses held
fixed (Eq. 2.121). :func:`staggered_projections` is Algorithm 7 on plain arrays (Part 1's
maximal coordinates); :func:`friction_qp` is its friction stage.

Bilateral staggered projections (:func:`bisp_step`) apply the same idea to the joints of a
reduced-coordinate model. A joint never comes apart, so its "contact" stage needs no QP: the
reduced step itself gives the motion, and the joint reaction that produces it is read off by
comparing body accelerations with body forces (Eq. 2.122-2.124). A backward sweep splits that
reaction joint by joint (Alg. 8, lines 11-13), and a small regularised least-squares problem per
joint turns each reaction into impulses at a few contact points placed around the joint
(Eq. 2.125): the ends of a cylinder for a hinge, a sphere for a ball joint, a box for a slider
(:class:`JointFriction`). The friction stage then bounds the sliding impulses at those points.
External constraints (loop closures, floor contacts with their own friction) enter as rows
(:class:`ExternalConstraints`, Eq. 2.126-2.127).

Sign convention: impulses enter as ``A v = b + C^T lambda`` (the library's, as in
:mod:`redmax_edu.maximal.solve`): a positive normal impulse pushes apart and the friction
impulse ``beta`` opposes the sliding velocity (``beta . T v <= 0``). The writeup writes
``f_alpha = -N^T alpha / h`` with the opposite orientation of ``N``; its Eq. (2.125) already
uses ours.

Where this module departs from the writeup's formulas, and why:

* Eq. (2.124) compares ``J qdot_con`` with the unconstrained maximal velocity; the change of
  the body twists over the step is ``J (qdot_con - qdot) + h Jdot qdot`` (Eq. 2.2), so we add
  ``h Jdot qdot``. Without it ``f_alpha`` misses the Coriolis acceleration of relative joint
  motion, and ``J^T f_alpha`` is minus the quadratic velocity vector instead of the joint forces.
* A joint's reaction includes what its actuator (``tau``, joint springs and dampers) transmits
  along the joint's own motion, ``S^T w = tau``. That part does not press the bearing, so it
  is removed (an orthogonal projection in the joint frame) before Eq. (2.125).
* The joint impulses of Eq. (2.125) may be negative (the contacts are bilateral), so the bound
  is ``|beta| <= mu |alpha|``; where one point carries two normals (a hinge's radial and thrust
  contact) the bound is ``mu`` times the magnitude of the point's normal impulse.
* The friction stage's matrix (the ``M^-1`` of Eq. 2.121, which the writeup leaves open for
  BISP) is the friction rows' mobility under the step's constraints, ``W = T dv/dbeta``: the response of
  the contact stage (the step's matrix with the equality rows and the contacts that push) to
  the friction impulses (:class:`_ContactStage`). Every choice has the same fixed point (at it
  ``W beta + c`` is the contact stage's own sliding velocity), but with this one each friction
  solve predicts the next contact stage exactly as long as the normal impulses keep their
  values. BISP's rows are reduced, ``T_r = T_m J = T_j S`` (the sliding speeds of the joints'
  contact points). The free bodies' ``T_m M_m^-1 T_m^T`` overestimates the articulated
  mobility 250 to 1400 times at scene 27's root hinge, so each friction solve corrects far too
  little; the step's own matrix without the constraints, ``T_r A^-1 T_r^T``, does not see that
  a loop closure, a prescribed crank or the floor pushes back: with it scene 30's four-bar
  takes 10.8 iterations per step on average and 6 of its 200 steps stop at the budget of 100,
  against 4.9 and at most 7.
* The friction bounds handed from one staggered iteration to the next are Anderson-accelerated
  (:class:`_Anderson`, memory 2). Where friction raises the loads that bound it (ball joints
  with mu = 5, a crank driving a four-bar on wheels with mu = 0.8 everywhere) the plain
  iteration contracts slowly: scene 28 takes 5.8 iterations per step on average (at most 17)
  plain and 3.5 (at most 9) accelerated; scene 33 takes at most 16. The fixed point is the
  same.
* The end velocity is the reduced solve with the converged friction. Algorithm 8's line 26 and
  Eq. (2.127) add ``J^T f_alpha`` once more, but the reduced equations already contain the
  joints' reactions (``J^T f_alpha`` is the joint forces), which would count them twice.
* With external constraints the writeup takes the unconstrained velocity from a second
  (maximal) QP with the external rows. Its external impulses are not the reduced QP's (free
  bodies need different impulses than an articulated chain), so the difference of the two
  velocities mixes the joints' reactions with the difference of two external impulses. We
  subtract the reduced solve's own external impulse instead, and need no maximal QP.
* The regulariser of Eq. (2.125) and the convergence test are relative (units-free): ``reg``
  times the mean diagonal of ``N M^-1 N^T``, and ``||f - f_0||_{M^-1} <= tol ||f||_{M^-1}``.

Taught in book/02_reduced/11_friction.
"""

import weakref
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

import numpy as np

from ._validate import as_index, as_real, as_scalar
from .constraints import DEFAULT_BAUMGARTE
from .dynamics import _assemble_checked, _euler_system, _inequality_qp, _solve_checked, _solve_rows, _violates
from .kinematics import _forward_kinematics
from .lie import adjoint_unchecked, inv_se3_unchecked
from .maximal.constraints import pyramid_directions
from .model import check_model

__all__ = ["friction_qp", "SPResult", "staggered_projections", "Cylinder", "Sphere", "Box",
           "JointContacts", "JointFriction", "LoopFriction", "ExternalConstraints", "tangent_rows",
           "external_constraints", "BISPInfo", "bisp_step", "ClosureFriction", "frictional_euler_step"]


# --------------------------------------------------------------------------- the friction stage
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
    return _FrictionQP(W)(c, bound)


class _FrictionQP:
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


def _norm_minv(Minv, f):
    """``||f||_{M^-1} = sqrt(f^T M^-1 f)`` for a block-diagonal ``M^-1`` (n, 6, 6) and ``f`` (n, 6)."""
    return float(np.sqrt(np.einsum("ni,nij,nj->", f, Minv, f)))


# --------------------------------------------------------------------------- the contact stage
class _ContactStage:
    """The contact stage of Algorithms 7 and 8 as a function of the friction impulses ``beta``.

    Solves ``A x = b + F^T beta + G^T lam_G + C^T lam_C`` with ``G x = r_G``, ``C x >= r_C`` and
    ``lam_C >= 0`` (Eq. 2.120, 2.126; ``F`` the friction rows, ``F^T beta = h f_beta``).
    ``solve(rhs)`` is the exact solve of the step for the right-hand side ``rhs`` (the KKT
    solve, or the QP when an inequality must push: :func:`redmax_edu.dynamics._solve_rows`).

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
                    and not _violates(C[~pushing], x, self.r_C[~pushing])):
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
        """The friction stage at the solution ``x`` for ``beta``: a :class:`_FrictionQP` of the
        rows' mobility ``W = F dx/dbeta`` (symmetrised), kept while the same contacts push, and the
        sliding velocities without the friction, ``c = F x - W beta``."""
        ref = self._ref
        if "qp" not in ref:
            W = self.F @ self._response()[0]
            ref.update(W=W, qp=_FrictionQP(0.5 * (W + W.T)))
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
    ``W = T dv/dbeta`` (:class:`_ContactStage`), where Eq. (2.121) has ``T M^-1 T^T``: with it the
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
    stage = _ContactStage(lambda rhs: _inequality_qp(M, rhs, no_rows, np.zeros(0), N, r_N),
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


# --------------------------------------------------------------------------- joint contact geometry
class Cylinder(NamedTuple):
    """A hinge's contact geometry: a pin of ``radius`` whose ``height`` runs along the joint axis."""

    radius: float
    height: float


class Sphere(NamedTuple):
    """A ball joint's contact geometry: a ball of ``radius`` about the joint origin."""

    radius: float


class Box(NamedTuple):
    """A slider's contact geometry: a box with ``sides`` (3,) along the joint frame's x, y, z axes."""

    sides: tuple


#: The geometry each joint type takes; other joint types have none.
GEOMETRY_OF_JOINT = {"revolute": Cylinder, "prismatic": Box,
                     "spherical_exp": Sphere, "spherical_euler": Sphere}


@dataclass(frozen=True)
class JointContacts:
    """The implicit contacts of one joint, in its joint frame (the child's side of the joint).

    A row ``(p x d; d)`` gives, for a twist ``(omega; nu)`` of the joint frame, the speed of
    the material point ``p`` along ``d``: ``d . (nu + omega x p)``.

    Attributes
    ----------
    points : ndarray (P, 3)
    normals : ndarray (K, 6)
        Normal rows; ``normals @ S = 0``: they never resist the joint's own motion.
    normal_point : ndarray (K,) int
        The point each normal row belongs to.
    tangents : ndarray (L, 6)
        Tangent rows, along the sliding the joint allows at each point.
    tangent_point : ndarray (L,) int
    """

    points: np.ndarray
    normals: np.ndarray
    normal_point: np.ndarray
    tangents: np.ndarray
    tangent_point: np.ndarray

    def bounds(self, mu, alpha):
        """Each tangent row's friction bound: ``mu`` times the magnitude of its point's normal impulse."""
        magnitude = np.sqrt(np.bincount(self.normal_point, alpha * alpha, minlength=len(self.points)))
        return mu * magnitude[self.tangent_point]


def _rows(points, directions):
    """Point-velocity rows ``(p x d; d)``, shape (k, 6)."""
    return np.hstack([np.cross(points, directions), directions])


def _contacts(points, normals, tangents):
    """:class:`JointContacts` from per-point normal and tangent directions, (P, a, 3) and (P, b, 3)."""
    P, a, b = len(points), normals.shape[1], tangents.shape[1]
    at = np.arange(P)
    return JointContacts(points,
                         _rows(np.repeat(points, a, axis=0), normals.reshape(-1, 3)), np.repeat(at, a),
                         _rows(np.repeat(points, b, axis=0), tangents.reshape(-1, 3)), np.repeat(at, b))


def _cylinder_contacts(axis, radius, height):
    """Four points on each end circle of the pin, each with a radial and a thrust normal and one
    circumferential tangent."""
    e = np.eye(3)[np.argmin(np.abs(axis))]
    u = e - (e @ axis) * axis
    u /= np.linalg.norm(u)
    v = np.cross(axis, u)
    radial = np.array([u, v, -u, -v])
    points, normals, tangents = [], [], []
    for s in (-0.5 * height, 0.5 * height):
        for d in radial:
            points.append(s * axis + radius * d)
            normals.append([d, axis])
            tangents.append([np.cross(axis, d)])
    return _contacts(np.array(points), np.array(normals), np.array(tangents))


def _sphere_contacts(radius):
    """The six points ``+-radius`` along the joint axes, each with its radial normal and two tangents."""
    points, normals, tangents = [], [], []
    for k in range(3):
        for sign in (1.0, -1.0):
            d = sign * np.eye(3)[k]
            points.append(radius * d)
            normals.append([d])
            tangents.append([np.eye(3)[(k + 1) % 3], np.eye(3)[(k + 2) % 3]])
    return _contacts(np.array(points), np.array(normals), np.array(tangents))


def _box_contacts(axis_index, sides):
    """The box's eight corners, each with the two normals across the slide and the slide direction."""
    i, j = (axis_index + 1) % 3, (axis_index + 2) % 3
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    points = 0.5 * signs * np.asarray(sides)
    I = np.eye(3)
    normals = np.broadcast_to([I[i], I[j]], (8, 2, 3))
    tangents = np.broadcast_to([I[axis_index]], (8, 1, 3))
    return _contacts(points, np.array(normals), np.array(tangents))


@cache
def _geometry_contacts(geometry, axis):
    """The contacts of a geometry about a joint ``axis`` (a tuple, None for a ball joint), built once."""
    if isinstance(geometry, Cylinder):
        contacts = _cylinder_contacts(np.array(axis), geometry.radius, geometry.height)
    elif isinstance(geometry, Sphere):
        contacts = _sphere_contacts(geometry.radius)
    else:
        contacts = _box_contacts(int(np.flatnonzero(axis)[0]), geometry.sides)
    for a in vars(contacts).values():
        a.setflags(write=False)
    return contacts


def _checked_geometry(g):
    """``g`` with float lengths, or a ValueError saying what is wrong with it."""
    if isinstance(g, Box):
        g = Box(tuple(as_real(g.sides, (3,), "sides").tolist()))
        lengths = dict(zip(("sides[0]", "sides[1]", "sides[2]"), g.sides, strict=True))
    elif isinstance(g, (Cylinder, Sphere)):
        g = type(g)(*(as_scalar(x, name) for x, name in zip(g, g._fields, strict=True)))
        lengths = g._asdict()
    else:
        raise ValueError(f"unknown geometry {g!r}; use Cylinder(radius, height) for a revolute "
                         "joint, Sphere(radius) for a spherical one, Box(sides) for a prismatic one")
    for name, value in lengths.items():
        if not value > 0:
            raise ValueError(f"the {type(g).__name__.lower()}'s {name} must be positive, got {value:g}")
    return g


@dataclass(frozen=True)
class JointFriction:
    """Coulomb friction inside the joint of body ``body``, with its contact geometry (§2.11).

    BISP places implicit contacts at fixed positions around a joint; their normal impulses come
    from the joint's reaction (Eq. 2.125) and bound the friction at the same points. The points,
    normals and tangents are fixed in the joint frame, which moves with the child body: a
    slider's pads ride with it, and a hinge's pattern turns with its link (so the load along a
    link stays on one direction of the pattern).

    * revolute, :class:`Cylinder` ``(radius r, height l)`` along the axis: four points on each
      end circle (at ``+-l/2`` along the axis, in the radial directions ``+-u``, ``+-v``, with
      ``u`` the joint-frame axis least aligned with the hinge axis, projected), each with a
      radial normal (the bearing) and a thrust normal along the axis, and one circumferential
      tangent. A radial load ``R`` along ``u`` or ``v`` spreads as ``R/4`` over four points and
      resists turning with the torque ``mu r R``, Coulomb's pin friction; between them the
      four-point pattern gives up to ``sqrt(2) mu r R`` (at 45 degrees). A thrust ``F`` gives
      ``mu r F``; a bending moment loads the two ends against each other (a short pin binds more).
    * spherical, :class:`Sphere` ``(radius r)``: six points ``+-r`` along the joint axes with
      radial normals and two tangents each. A load ``F`` along an axis resists rotation about
      the other two axes with ``mu r F`` and spin about its own axis not at all (a point pivot).
    * prismatic, :class:`Box` ``(sides)`` along the joint frame's axes, the slide along one of
      them: the eight corners, each with the two normals across the slide and the slide direction
      as tangent. A load ``F`` across the slide spreads evenly over the corners and gives the
      friction ``mu |F|`` in any direction across the slide, as long as its line of action stays
      within the box; a load a distance ``d > s/2`` along the slide from the box's centre (``s``
      the box's length) tilts it against both walls and the friction grows to ``2 d / s`` times
      that: a cantilevered slider binds (scene 29's blocks hang one box length out: twice).

    The writeup says only that a hinge's cylinder has contact points at its two ends; the number
    of points, the thrust normals, the sphere and box patterns, the frame they move with and the
    per-point bound are this library's choices. Every normal row is orthogonal to the joint's
    motion (``normals @ S = 0``) and together they span the wrenches the joint resists (rank
    ``6 - ndof``).

    Parameters
    ----------
    body : int
        The body whose joint (to its parent) has friction.
    mu : float
        Friction coefficient, >= 0.
    geometry : Cylinder, Sphere or Box
        Lengths in the model's units (metres), all positive.

    Examples
    --------
    >>> JointFriction(1, 0.6, Cylinder(radius=0.005, height=0.01)).mu
    0.6
    >>> JointFriction(1, -0.1, Sphere(0.01))
    Traceback (most recent call last):
    ...
    ValueError: joint friction of body 1: argument 'mu' must be >= 0, got -0.1
    """

    body: int
    mu: float
    geometry: Cylinder | Sphere | Box

    def __post_init__(self):
        object.__setattr__(self, "body", as_index(self.body, "body"))
        label = self.label()
        try:
            object.__setattr__(self, "mu", as_scalar(self.mu, "mu", minimum=0.0))
            object.__setattr__(self, "geometry", _checked_geometry(self.geometry))
        except ValueError as err:
            raise ValueError(f"{label}: {err}") from None

    def label(self, model=None):
        """How error messages name this friction."""
        if model is not None and self.body < model.n:
            return f"joint friction of body {model.names[self.body]!r} (index {self.body})"
        return f"joint friction of body {self.body}"

    def check(self, model):
        """Raise ValueError unless the body exists and its joint takes this geometry."""
        if self.body >= model.n:
            raise ValueError(f"{self.label()}: the model has {model.n} bodies (indices 0 to {model.n - 1})")
        joint = model.bodies[self.body].joint
        wanted = GEOMETRY_OF_JOINT.get(joint.kind)
        if joint.ndof == 0:
            raise ValueError(f"{self.label(model)}: its joint is fixed, so nothing slides in it; "
                             "remove the friction")
        if wanted is None:
            raise ValueError(f"{self.label(model)}: a {joint.kind} joint has no contact geometry; joint "
                             "friction is defined for revolute (Cylinder), prismatic (Box) and spherical "
                             "(Sphere) joints")
        if not isinstance(self.geometry, wanted):
            raise ValueError(f"{self.label(model)}: a {joint.kind} joint takes a {wanted.__name__} geometry, "
                             f"got {type(self.geometry).__name__}")
        if isinstance(self.geometry, Box) and np.count_nonzero(joint.axis) != 1:
            raise ValueError(f"{self.label(model)}: a Box geometry needs the prismatic axis along the joint "
                             f"frame's x, y or z axis, got {joint.axis.tolist()}")

    def contacts(self, joint):
        """The :class:`JointContacts` of this geometry on ``joint`` (checked by :meth:`check`)."""
        axis = getattr(joint, "axis", None)
        return _geometry_contacts(self.geometry, None if axis is None else tuple(axis.tolist()))

    @classmethod
    def from_reference(cls, joint, body, mu, length_scale=1.0):
        """The friction of a joint of the reference scene data (``scenes.json``: ``radius`` and
        ``height`` of a revolute joint, ``radius`` of a spherical one, ``sides`` of a prismatic one);
        ``length_scale`` converts its lengths (0.01 from cm to m)."""
        kind = joint.get("class", "")
        s = as_scalar(length_scale, "length_scale", minimum=0.0, strict=True)
        if kind.endswith("Revolute"):
            return cls(body, mu, Cylinder(s * joint["radius"], s * joint["height"]))
        if kind.endswith("Prismatic"):
            return cls(body, mu, Box(tuple(s * np.asarray(joint["sides"], dtype=float))))
        if kind.endswith(("SphericalExp", "Spherical")):
            return cls(body, mu, Sphere(s * joint["radius"]))
        raise ValueError(f"joint friction of body {body}: the reference joint class {kind!r} has no "
                         "contact geometry")


@dataclass(frozen=True)
class ClosureFriction:
    """Coulomb friction in the hinge that a loop closure forms (constraint ``constraint`` of the model).

    The spec that a model carries (``Model(..., friction=[...])``) for :class:`LoopFriction`,
    which the Euler step builds from it at every state: ``constraint`` indexes
    ``model.constraints`` and must be a :class:`~redmax_edu.constraints.Loop` about a hinge
    axis; ``geometry`` is the hinge's :class:`Cylinder`.

    Examples
    --------
    >>> ClosureFriction(0, 0.3, Cylinder(0.005, 0.005)).label()
    'friction of the closure constraints[0]'
    """

    constraint: int
    mu: float
    geometry: Cylinder

    def __post_init__(self):
        object.__setattr__(self, "constraint", as_index(self.constraint, "constraint"))
        try:
            object.__setattr__(self, "mu", as_scalar(self.mu, "mu", minimum=0.0))
            geometry = _checked_geometry(self.geometry)
        except ValueError as err:
            raise ValueError(f"{self.label()}: {err}") from None
        if not isinstance(geometry, Cylinder):
            raise ValueError(f"{self.label()}: a hinge closure takes a Cylinder geometry, got "
                             f"{type(geometry).__name__}")
        object.__setattr__(self, "geometry", geometry)

    def label(self, model=None):
        """How error messages name this friction."""
        return f"friction of the closure constraints[{self.constraint}]"

    def check(self, model):
        """Raise ValueError unless ``model.constraints[constraint]`` is a loop closure about a hinge axis."""
        from .constraints import Loop

        if self.constraint >= len(model.constraints):
            raise ValueError(f"{self.label()}: the model has {len(model.constraints)} constraints")
        c = model.constraints[self.constraint]
        if not isinstance(c, Loop) or c.axis is None:
            raise ValueError(f"{self.label()}: {c.describe(model)} is not a loop closure about a hinge axis")


def frictional_euler_step(model, q, qdot, h, tau=None, *, t=0.0, baumgarte=DEFAULT_BAUMGARTE, beta=None,
                          tol=1e-6, max_iterations=100):
    """One linearly implicit Euler step of a model with friction (``model.friction``), by BISP.

    The model's :class:`JointFriction` and :class:`ClosureFriction` and its constraints
    (:func:`external_constraints`, with Baumgarte's ``gamma = baumgarte[2]``, floor contacts with
    their own ``mu``) handed to :func:`bisp_step`. ``beta`` warm-starts the friction with the
    previous step's ``info.beta``. Returns ``(q1, qdot1, info)``; what
    :func:`redmax_edu.integrators.simulate` runs at every step of ``method="euler"`` when the
    model has friction (through the same function of a checked state, so that a simulation
    checks its arguments once).

    Examples
    --------
    Scene 27's two bars on tilted hinges, released at rest: the first step's friction.

    >>> from redmax_edu.scenes import scene
    >>> s = scene(27)
    >>> q1, qdot1, info = frictional_euler_step(s.model, s.q0, s.qdot0, s.h)
    >>> info.converged, info.iterations
    (True, 5)
    """
    from .constraints import check_baumgarte
    from .dynamics import _tau

    model = check_model(model)
    q, qdot = model.check_state(q, qdot)
    h = as_scalar(h, "h", minimum=0.0, strict=True)
    t = as_scalar(t, "t")
    tol = as_scalar(tol, "tol", minimum=0.0)
    max_iterations = as_index(max_iterations, "max_iterations", minimum=1)
    tau, baumgarte = _tau(model, tau), check_baumgarte(baumgarte)
    return _frictional_euler_step(model, q, qdot, h, tau, t, baumgarte, beta, tol, max_iterations)


def _frictional_euler_step(model, q, qdot, h, tau, t, baumgarte, beta=None, tol=1e-6, max_iterations=100):
    """:func:`frictional_euler_step` of a checked state, step, ``tau`` (an (nq,) array or None), time,
    gains and tolerances: one assembly, the constraint rows from it, and BISP."""
    from .constraints import check_constraint_set

    _refuse_deformables(model, "frictional_euler_step")
    terms = _assemble_checked(model, q, qdot, derivatives=True)
    joints = _joint_constants(model, tuple(f for f in model.friction if isinstance(f, JointFriction)), h, REG)
    ext, redundant = _model_constants(model)["free"], None
    if model.constraints:
        loops = {f.constraint: (f.mu, f.geometry) for f in model.friction if isinstance(f, ClosureFriction)}
        ext, rows = _external(model, q, qdot, terms.kin, terms.J, terms.Jdot, h, t, baumgarte[2], loops)

        def redundant():
            check_constraint_set(model, rows, ~rows.inequality)
    beta = None if beta is None else as_real(beta, (_friction_rows(joints, ext),), "beta")
    return _bisp(model, terms, h, tau, joints, ext, beta, tol, max_iterations, REG, redundant)


# --------------------------------------------------------------------------- external constraints
@dataclass(frozen=True)
class LoopFriction:
    """Friction at a loop closure that works as a joint, for BISP (Alg. 8, line 15).

    A closure such as a four-bar's last hinge (:class:`redmax_edu.constraints.Loop`) carries
    its reaction through its equality rows, not through a joint of the tree. BISP treats it like
    a joint: its impulse ``G^T lambda`` (rows ``rows`` of :class:`ExternalConstraints`) is
    turned into normal impulses at contact points by Eq. (2.125), here in maximal coordinates,
    and the points' tangent rows take friction bounded by ``mu`` times their load. Build it with
    :meth:`hinge`.

    Attributes
    ----------
    rows : tuple of int
        The closure's rows in ``ExternalConstraints.G``.
    normals, tangents : ndarray (k, 6n), (l, 6n)
        Contact rows on the body twists (relative velocities of the two bodies' points).
    normal_point, tangent_point : ndarray (k,), (l,) int
        The contact point of each row.
    mu : float
    """

    rows: tuple
    normals: np.ndarray
    tangents: np.ndarray
    normal_point: np.ndarray
    tangent_point: np.ndarray
    mu: float

    @classmethod
    def hinge(cls, E, rows, a, point_a, axis, b, mu, geometry):
        """The friction of a hinge closure between body ``a`` and body ``b`` (-1: the world).

        The hinge has the :class:`Cylinder` ``geometry`` of a revolute joint (the same points,
        normals and tangents, see :class:`JointFriction`) about ``axis`` through ``point_a``,
        both in body a's frame (the pattern moves with body a), with the bodies at poses ``E``
        (n, 4, 4).

        Examples
        --------
        >>> E = np.stack([np.eye(4), np.eye(4)])
        >>> loop = LoopFriction.hinge(E, (0, 1), 1, [0.5, 0, 0], [0, 1.0, 0], 0, 0.3, Cylinder(0.01, 0.02))
        >>> loop.normals.shape, loop.tangents.shape
        ((16, 12), (8, 12))
        """
        try:
            mu = as_scalar(mu, "mu", minimum=0.0)
            geometry = _checked_geometry(geometry)
            if not isinstance(geometry, Cylinder):
                raise ValueError(f"a hinge takes a Cylinder geometry, got {type(geometry).__name__}")
        except ValueError as err:
            raise ValueError(f"loop friction between bodies {a} and {b}: {err}") from None
        E, a, b = as_real(E, None, "E"), as_index(a, "a"), as_index(b, "b", minimum=-1)
        if E.ndim != 3 or E.shape[1:] != (4, 4) or max(a, b) >= len(E):
            raise ValueError(f"argument 'E' must have shape (n, 4, 4) with n > {max(a, b)}, got {E.shape}")
        axis = as_real(axis, (3,), "axis")
        if not np.linalg.norm(axis) > 0:
            raise ValueError(f"loop friction between bodies {a} and {b}: argument 'axis' must be nonzero")
        contacts = _geometry_contacts(geometry, tuple((axis / np.linalg.norm(axis)).tolist()))
        E_F_a = np.eye(4)
        E_F_a[:3, 3] = -as_real(point_a, (3,), "point_a")     # the hinge frame F: a's axes at point_a
        A_Fa = adjoint_unchecked(E_F_a)
        blocks = [(a, A_Fa)]
        if b >= 0:
            blocks.append((b, -A_Fa @ adjoint_unchecked(inv_se3_unchecked(E[a]) @ E[b])))
        N, T = np.zeros((len(contacts.normals), 6 * len(E))), np.zeros((len(contacts.tangents), 6 * len(E)))
        for body, A in blocks:
            N[:, 6 * body: 6 * body + 6] = contacts.normals @ A
            T[:, 6 * body: 6 * body + 6] = contacts.tangents @ A
        return cls(tuple(int(r) for r in rows), N, T, contacts.normal_point, contacts.tangent_point, mu)

    def bounds(self, alpha):
        """Each tangent row's bound, ``mu`` times the magnitude of its point's normal impulse."""
        magnitude = np.sqrt(np.bincount(self.normal_point, alpha * alpha))
        return self.mu * magnitude[self.tangent_point]


def _rows_or_empty(x, name, width):
    return np.zeros((0, width)) if x is None else as_real(x, None, name).reshape(-1, width)


@dataclass(frozen=True)
class ExternalConstraints:
    """Constraints beyond the tree's joints for one BISP step, as rows on the body twists (Eq. 2.126-2.127).

    The rows act on the end-of-step twists ``phi_1 = J qdot_1`` (``J`` at the start of the step)
    and become reduced rows through ``J``: loop closures and prescribed motions as equalities
    ``G phi_1 = g``, contacts with the environment as inequalities ``C phi_1 >= c`` (right-hand
    sides with the caller's Baumgarte terms, e.g. ``-gamma * gap``). An inequality row may carry
    Coulomb friction: tangent rows (two per contact, :func:`tangent_rows`) whose impulses are
    bounded by ``mu`` times that row's normal impulse. Optional reduced parts ``G_r``, ``C_r``
    (rows acting on ``qdot`` directly) are added to ``G J`` and ``C J``; their impulses act
    along the joints like a joint force.

    Parameters
    ----------
    n : int
        Number of bodies (the rows have ``6 n`` columns).
    G, g : (kG, 6n), (kG,), optional
        Equality rows and targets.
    C, c : (kC, 6n), (kC,), optional
        Inequality rows and bounds.
    tangents : (kT, 6n), optional
        Friction rows on the twists.
    tangent_of : (kT,) int, optional
        The inequality row (index into ``C``) each tangent row belongs to.
    mu : float or (kC,), optional
        Friction coefficient of each inequality row.
    G_r, C_r : (kG, nq), (kC, nq), optional
        Reduced parts of the rows.
    loops : sequence of LoopFriction, optional
        Friction at closures among the equality rows.
    """

    n: int
    G: np.ndarray | None = None
    g: np.ndarray | None = None
    C: np.ndarray | None = None
    c: np.ndarray | None = None
    tangents: np.ndarray | None = None
    tangent_of: np.ndarray | None = None
    mu: np.ndarray | float = 0.0
    G_r: np.ndarray | None = None
    C_r: np.ndarray | None = None
    loops: tuple = ()

    def __post_init__(self):
        set_ = object.__setattr__
        n6 = 6 * as_index(self.n, "n", minimum=1)
        set_(self, "G", _rows_or_empty(self.G, "G", n6))
        set_(self, "C", _rows_or_empty(self.C, "C", n6))
        set_(self, "tangents", _rows_or_empty(self.tangents, "tangents", n6))
        kG, kC, kT = len(self.G), len(self.C), len(self.tangents)
        set_(self, "g", as_real(np.zeros(kG) if self.g is None else self.g, (kG,), "g"))
        set_(self, "c", as_real(np.zeros(kC) if self.c is None else self.c, (kC,), "c"))
        mu = np.broadcast_to(as_real(self.mu, None, "mu"), (kC,)).copy()
        if (mu < 0).any():
            raise ValueError(f"external constraints: argument 'mu' must be >= 0, got {mu.tolist()}")
        set_(self, "mu", mu)
        of = np.zeros(0, int) if self.tangent_of is None else np.asarray(self.tangent_of)
        if of.shape != (kT,) or of.dtype.kind not in "iu" or (kT and (of.min() < 0 or of.max() >= kC)):
            raise ValueError(f"external constraints: argument 'tangent_of' must hold, for each of the {kT} "
                             f"tangent rows, the index of its inequality row (0 to {kC - 1}), "
                             f"got {of.tolist()}")
        set_(self, "tangent_of", of)
        set_(self, "loops", tuple(self.loops))
        for k, loop in enumerate(self.loops):
            if not isinstance(loop, LoopFriction):
                raise ValueError(f"external constraints: loops[{k}] must be a LoopFriction, got "
                                 f"{type(loop).__name__}")
            if loop.normals.shape[1] != n6 or not all(0 <= r < kG for r in loop.rows):
                raise ValueError(f"external constraints: loops[{k}] must have rows on {n6} twist components "
                                 f"and name rows of G (0 to {kG - 1}), got {list(loop.rows)}")
        for name, k in (("G_r", kG), ("C_r", kC)):
            value = getattr(self, name)
            if value is not None:
                value = as_real(value, None, name)
                if value.ndim != 2 or len(value) != k:
                    raise ValueError(f"external constraints: argument '{name}' must have {k} rows, got "
                                     f"shape {value.shape}")
                set_(self, name, value)

    def check(self, model):
        """Raise ValueError unless the rows fit ``model``."""
        if self.n != model.n:
            raise ValueError(f"external constraints: rows for {self.n} bodies, but the model has {model.n}")
        for name in ("G_r", "C_r"):
            value = getattr(self, name)
            if value is not None and value.shape[1] != model.nq:
                raise ValueError(f"external constraints: argument '{name}' must have {model.nq} columns "
                                 f"(one per coordinate), got {value.shape[1]}")

    def reduced(self, J):
        """The reduced rows ``G J + G_r`` and ``C J + C_r``."""
        G, C = self.G @ J, self.C @ J
        return (G if self.G_r is None else G + self.G_r), (C if self.C_r is None else C + self.C_r)


def tangent_rows(E, body, point, normal):
    """The two friction rows of a contact at ``point`` (body coordinates) of ``body``, shape (2, 6n).

    ``t^T R Gamma(point)`` (Eq. 1.90) for the two tangents ``t1``, ``t2`` of
    :func:`redmax_edu.maximal.constraints.pyramid_directions` of the world ``normal``: the
    world sliding velocities of the material point, given the body twists ``phi``.

    Examples
    --------
    The lowest point of a ball of radius 0.1 m spinning about y at 1 rad/s slides along world x:

    >>> rows = tangent_rows(np.eye(4)[None], 0, [0, 0, -0.1], [0, 0, 1.0])
    >>> rows @ [0, 1.0, 0, 0, 0, 0]
    array([-0.1,  0. ])
    """
    E = as_real(E, None, "E")
    body = as_index(body, "body")
    if E.ndim != 3 or E.shape[1:] != (4, 4) or body >= len(E):
        raise ValueError(f"argument 'E' must have shape (n, 4, 4) with n > {body}, got {E.shape}")
    return _tangent_rows(E, body, as_real(point, (3,), "point"), pyramid_directions(normal)[:2])


def _tangent_rows(E, body, point, directions):
    """:func:`tangent_rows` of checked arrays, with the world tangent ``directions`` (2, 3):
    ``t^T R Gamma(p) = (p x R^T t; R^T t)``."""
    rows = np.zeros((len(directions), 6 * len(E)))
    points = np.broadcast_to(point, directions.shape)
    rows[:, 6 * body: 6 * body + 6] = _rows(points, directions @ E[body, :3, :3])
    return rows


def external_constraints(model, q, qdot, h, *, t=0.0, gamma_=DEFAULT_BAUMGARTE[2], loop_friction=None):
    """The model's constraints (``model.constraints``) as :class:`ExternalConstraints` for a BISP step.

    The rows and right-hand sides of the Euler step (:func:`redmax_edu.constraints.assemble_constraints`
    and :meth:`~redmax_edu.constraints.ConstraintRows.velocity_rhs`, Baumgarte's ``gamma_``), with
    each row's part on the body twists kept apart (:class:`ExternalConstraints` needs it to tell
    the external impulses from the joints' reactions). A
    :class:`redmax_edu.constraints.FloorContact` with ``mu > 0`` brings its two tangent rows at
    the sphere's lowest point (:func:`tangent_rows`); ``loop_friction`` maps the index of a
    :class:`redmax_edu.constraints.Loop` with a hinge ``axis`` to ``(mu, Cylinder)``, the
    friction of that closing hinge (:class:`LoopFriction`).

    Examples
    --------
    A ball resting on the floor: one inequality row, two friction rows.

    >>> from redmax_edu.constraints import FloorContact
    >>> from redmax_edu.joints import Planar
    >>> from redmax_edu.model import Body, Model
    >>> slide = Planar([[1, 0], [0, 0], [0, 1]])
    >>> ball = Model([Body("ball", -1, slide, np.eye(4), np.eye(4), 1.0, np.eye(3))],
    ...              constraints=[FloorContact(0, mu=0.5)])
    >>> ext = external_constraints(ball, [0.0, 0.0], [0.0, 0.0], 0.01)
    >>> ext.C.shape, ext.tangents.shape, ext.mu
    ((1, 6), (2, 6), array([0.5]))
    """
    from .jacobian import fill_jacobian

    model = check_model(model)
    q, qdot = model.check_state(q, qdot)
    kin = _forward_kinematics(model, q, qdot)
    J, Jdot = fill_jacobian(model, kin, with_derivative=True)
    h = as_scalar(h, "h", minimum=0.0, strict=True)
    t, gamma_ = as_scalar(t, "t"), as_scalar(gamma_, "gamma_", minimum=0.0)
    return _external(model, q, qdot, kin, J, Jdot, h, t, gamma_, loop_friction)[0]


def _floor_tangents(model, k):
    """The two world tangents of floor contact ``model.constraints[k]`` (a fixed plane), once per model."""
    floors = _model_constants(model)["floors"]
    if k not in floors:
        floors[k] = pyramid_directions(model.constraints[k].normal)[:2]
    return floors[k]


def _external(model, q, qdot, kin, J, Jdot, h, t, gamma_, loop_friction):
    """:func:`external_constraints` of a checked state with its forward sweep ``kin`` and Jacobians;
    returns the :class:`ExternalConstraints` and the :class:`~redmax_edu.constraints.ConstraintRows`
    they come from."""
    from .constraints import FloorContact, Loop, assemble_constraints

    rows = assemble_constraints(model, q, qdot, kin, J, Jdot, t, twists=True)
    rhs, G_m = rows.velocity_rhs(h, gamma_), rows.G_m        # G_m: each row's part on the twists
    eq, ineq = ~rows.inequality, rows.inequality
    at = np.cumsum(eq) - 1, np.cumsum(ineq) - 1                # a row's index among its kind
    loop_friction = {} if loop_friction is None else dict(loop_friction)
    tangents, tangent_of, loops = [], [], []
    for k, (c, block) in enumerate(zip(model.constraints, rows.blocks, strict=True)):
        if k in loop_friction:
            if not isinstance(c, Loop) or c.axis is None:
                raise ValueError(f"argument 'loop_friction': constraints[{k}] ({c.describe(model)}) is "
                                 "not a loop closure about a hinge axis")
            mu_k, geometry = loop_friction.pop(k)
            own = at[0][block]
            loops.append(LoopFriction.hinge(kin.E_wi, own, c.a, c.point_a, c.axis, c.b, mu_k, geometry))
        if isinstance(c, FloorContact) and c.mu > 0:
            directions = _floor_tangents(model, k)
            tangents.append(_tangent_rows(kin.E_wi, c.body, c.contact_point(kin.E_wi[c.body]), directions))
            tangent_of += [int(at[1][block.start])] * 2
    if loop_friction:
        raise ValueError(f"argument 'loop_friction': constraints {sorted(loop_friction)} do not exist")
    mu = [getattr(c, "mu", 0.0) for c, block in zip(model.constraints, rows.blocks, strict=True)
          for _ in range(block.stop - block.start) if c.inequality]
    G_r = rows.G - G_m @ J                                     # the rows' direct part on qdot
    ext = ExternalConstraints(model.n, G=G_m[eq], g=rhs[eq], G_r=G_r[eq], C=G_m[ineq], c=rhs[ineq],
                              C_r=G_r[ineq], tangents=np.vstack(tangents) if tangents else None,
                              tangent_of=np.array(tangent_of, int) if tangents else None,
                              mu=np.array(mu), loops=loops)
    return ext, rows


# --------------------------------------------------------------------------- Algorithm 8
@dataclass(frozen=True)
class BISPInfo:
    """What one :func:`bisp_step` did.

    Attributes
    ----------
    iterations : int
        Staggered iterations (contact stages) used.
    converged : bool
        Whether the convergence test passed within ``max_iterations``.
    alpha : tuple of ndarray
        Per :class:`JointFriction`, then per :class:`LoopFriction`, the normal impulses of its
        contact rows (Eq. 2.125), signed.
    beta : ndarray (kT,)
        Tangential impulses: the joints' rows in ``friction`` order, the loops', then the
        external contacts'; pass them to the next step as warm start.
    bound : ndarray (kT,)
        The bounds the last friction stage used, ``mu |alpha|`` (``mu lambda`` for external
        contacts), Anderson-extrapolated from the iterations before it.
    sliding : ndarray (kT,)
        The rows' sliding velocities at the end of the step, ``T J qdot1``: zero where a point
        sticks, of the sign opposite to ``beta`` where it slides.
    lam_G, lam_C : ndarray
        Impulses of the external equality and inequality rows.
    reactions : ndarray (n, 6)
        Each joint's reaction wrench on its body, in body coordinates (Alg. 8, line 12),
        including what its actuator transmits; ``f_alpha`` distributed joint by joint.
    f_alpha : ndarray (6n,)
        The joints' reaction forces (Eq. 2.124): per body, the sum of its joints' wrenches.
    f_beta : ndarray (6n,)
        The friction forces ``T_m^T beta / h``.
    """

    iterations: int
    converged: bool
    alpha: tuple
    beta: np.ndarray
    bound: np.ndarray
    sliding: np.ndarray
    lam_G: np.ndarray
    lam_C: np.ndarray
    reactions: np.ndarray
    f_alpha: np.ndarray
    f_beta: np.ndarray


#: Regulariser of Eq. (2.125) of the Euler driver (:func:`frictional_euler_step`), relative.
REG = 1e-9

_CONSTANTS = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class _JointConstants:
    """One joint's part of every BISP step that depends only on the model, ``h`` and ``reg``: its
    contacts, its tangent rows on the body twist (L, 6), and the map ``fit`` (K, 6) from the joint's
    reaction wrench on its body to the normal impulses of Eq. (2.125), without the part along
    the joint's own motion that its actuator transmits."""

    friction: JointFriction
    contacts: JointContacts
    tangents: np.ndarray
    fit: np.ndarray


def _model_constants(model):
    """The inverse spatial inertias (n, 6, 6), the block-diagonal Cholesky factor ``L_m`` of
    ``M_m^-1`` (6n, 6n), the joints' :class:`_JointConstants` by ``(friction, h, reg)``, the
    floor contacts' tangents and the empty :class:`ExternalConstraints`, cached while the
    (immutable) model lives."""
    constants = _CONSTANTS.get(model)
    if constants is None:
        Minv = np.linalg.inv(model.spatial_inertias)
        constants = _CONSTANTS[model] = dict(Minv=Minv, L_m=_block_diag(np.linalg.cholesky(Minv)), joints={},
                                             floors={}, free=ExternalConstraints(model.n))
    return constants


def _joint_constants(model, friction, h, reg):
    """The :class:`_JointConstants` of each of ``friction`` (a tuple of checked JointFriction).

    Everything in them is fixed in the joint frame: the contact pattern moves with the joint,
    and the joints that take friction (revolute, prismatic, spherical) move along a fixed
    subspace of their joint frame (the range of ``S``, read at zero coordinates), so they are
    computed once per model, step and regulariser.
    """
    constants = _model_constants(model)
    key = (friction, h, reg)
    joints = constants["joints"].get(key)
    if joints is None:
        joints = []
        for fr in friction:
            i = fr.body
            joint = model.bodies[i].joint
            contacts = fr.contacts(joint)
            S = joint.S(np.zeros(joint.ndof))
            A_ji = adjoint_unchecked(model.T_joint_body[i])              # body twist -> joint-frame twist
            A_ij = adjoint_unchecked(inv_se3_unchecked(model.T_joint_body[i]))
            L = np.linalg.cholesky(A_ji @ constants["Minv"][i] @ A_ji.T)  # M_j^-1 in the joint frame
            without_actuation = np.eye(6) - S @ np.linalg.pinv(S)        # S^T w = tau does not press
            # a body-frame wrench w_i is w_j = Ad(E_i_j)^T w_i in the joint frame (equal power)
            fit = _impulse_fit(contacts.normals, L, h, reg) @ without_actuation @ A_ij.T
            joints.append(_JointConstants(fr, contacts, contacts.tangents @ A_ji, fit))
        joints = constants["joints"][key] = tuple(joints)
    return joints


def _joint_tangent_rows(model, kin, joints):
    """The joints' tangent rows on ``qdot`` (L, nq), ``T S`` (the sliding speeds of their points),
    and on the body twists (L, 6n), ``T Ad(E_j_i)`` on the body and ``-T Ad(E_j_i) Ad(E_i_p)`` on its
    parent; ``T_m J = T_r``."""
    L = sum(len(j.tangents) for j in joints)
    T_r, T_m = np.zeros((L, model.nq)), np.zeros((L, 6 * model.n))
    start = 0
    for j in joints:
        i = j.friction.body
        rows = slice(start, start + len(j.tangents))
        T_r[rows, model.dofs[i]] = j.contacts.tangents @ kin.S[i]
        T_m[rows, 6 * i: 6 * i + 6] = j.tangents
        p = model.parents[i]
        if p >= 0:
            T_m[rows, 6 * p: 6 * p + 6] = -j.tangents @ kin.A_ip[i]
        start = rows.stop
    return T_r, T_m


def _friction_rows(joints, ext):
    """The number of friction rows of a BISP step: the joints', the loops', the external contacts'."""
    loops = sum(len(loop.tangents) for loop in ext.loops)
    return sum(len(j.tangents) for j in joints) + loops + len(ext.tangents)


def _impulse_fit(N, L, h, reg):
    """Eq. (2.125) as a matrix: ``alpha = fit @ w`` with ``fit = h (N M^-1 N^T + eps I)^-1 N M^-1``.

    With ``M^-1 = L L^T`` and ``B = N L`` this is ``h (B B^T + eps)^-1 B L^T``, evaluated through
    the SVD of ``B``, which stays accurate for a small ``eps = reg * mean(diag(N M^-1 N^T))``.
    """
    U, s, Vt = np.linalg.svd(N @ L, full_matrices=False)
    eps = reg * np.sum(s * s) / len(N)
    return h * (U * (s / (s * s + eps))) @ Vt @ L.T


def _distribute(model, kin, f_alpha):
    """Alg. 8, lines 11-13: each joint's reaction wrench on its body (n, 6), from the leaves in.

    A body's share of ``f_alpha`` is its own joint's wrench minus its children's, which act
    on it with the opposite sign, carried into its frame with ``Ad^T``.
    """
    W = f_alpha.copy()
    for i in reversed(range(model.n)):
        p = model.parents[i]
        if p >= 0:
            W[p] += kin.A_ip[i].T @ W[i]
    return W


def _block_diag(blocks):
    """The block-diagonal matrix (6n, 6n) of ``blocks`` (n, 6, 6)."""
    n = len(blocks)
    out = np.zeros((n, 6, n, 6))
    out[np.arange(n), :, np.arange(n), :] = blocks
    return out.reshape(6 * n, 6 * n)


def _body_accelerations(J, Jdot_qdot, qdot0, qdot1, h):
    """The body accelerations of the step, ``J (qdot1 - qdot0) / h + Jdot qdot0`` (Eq. 2.2)."""
    return J @ (qdot1 - qdot0) / h + Jdot_qdot


class _Anderson:
    """Anderson acceleration of BISP's iteration on the friction bounds (Alg. 8, lines 19-23).

    One staggered iteration maps the bounds ``x`` handed to the friction stage to the bounds
    ``g(x) = mu |alpha|`` that the next contact stage's loads give; Algorithm 8 takes
    ``x <- g(x)``. Where friction raises the loads that bound it (a crank driving a four-bar
    whose every hinge grips, mu = 0.8; ball joints with mu = 5) that iteration contracts by
    only 0.4-0.8 per step. Called with each ``g``, this returns the next ``x``: ``g`` minus the
    combination of the last ``m`` changes of ``g`` that best cancels the residual ``g - x``
    (Walker and Ni's type II, least squares), clipped at zero; the history restarts when the
    residual grows (a contact or a stick-slip change). The fixed point ``g(x) = x`` is unchanged.
    """

    def __init__(self, m=2):
        self.m, self.x, self.G, self.F = m, None, [], []

    def __call__(self, g):
        if self.x is not None:
            f = g - self.x
            if self.F and np.linalg.norm(f) > np.linalg.norm(self.F[-1]):
                self.G, self.F = [], []
            self.G, self.F = (self.G + [g])[-self.m - 1:], (self.F + [f])[-self.m - 1:]
            if len(self.F) > 1:
                dF, dG = np.diff(self.F, axis=0).T, np.diff(self.G, axis=0).T
                g = np.maximum(g - dG @ np.linalg.lstsq(dF, f, rcond=None)[0], 0.0)
        self.x = g
        return g


def _refuse_deformables(model, name):
    if model.deformables:
        raise ValueError(f"argument 'model' has deformable bodies, which {name} does not handle (§2.11 is "
                         "about rigid trees); use redmax_edu.dynamics.linearly_implicit_euler_step")


def bisp_step(model, q, qdot, h, friction, tau=None, external=None, *, beta=None, tol=1e-6,
              max_iterations=100, reg=REG):
    """One linearly implicit Euler step with joint and contact friction by BISP (Algorithm 8).

    The step is Eq. (2.86), ``A qdot1 = b`` with ``A = M_r - h df/dqdot - h^2 df/dq``, plus the
    friction impulses ``beta`` on the tangent rows ``T_r`` (reduced, ``T_r = T_m J``), found by
    alternating two stages until the joints' reactions settle:

    * contact (lines 10-16): the reduced solve with the current friction ``T_r^T beta = h J^T
      f_beta`` (and the external rows, Eq. 2.126) gives ``qdot_con``; the joints' reaction is
      what the bodies' accelerations need beyond their forces (Eq. 2.122-2.124),
      ``f_alpha = M_m (J (qdot_con - qdot) / h + Jdot qdot) - f_m - f_beta - f_ext``,
      with ``f_m`` the maximal forces at the end of the step (linearised as in the step) and
      ``f_ext`` the external impulses over ``h``; a backward sweep splits it into each joint's
      wrench (lines 11-13), and Eq. (2.125) turns each wrench, without the part its actuator
      transmits, into normal impulses ``alpha`` at the joint's contact points (line 15);
    * convergence (line 18): ``||f - f_0||_{M^-1} <= tol ||f||_{M^-1}`` for the constraint
      forces ``f = f_alpha + f_ext``;
    * friction (lines 22-23): the friction QP (Eq. 2.121) on the tangent rows of the joints and
      of the external contacts (:func:`friction_qp`), with bounds ``mu |alpha|`` (``mu lambda``
      for external contacts), Anderson-accelerated from one iteration to the next, and as its
      matrix the rows' mobility under the step's constraints, ``W = T_r dqdot_con/dbeta`` (see
      the module notes); ``f_beta = T_m^T beta / h``.

    The contact stage is the step's exact KKT solve, or QP when a contact pushes; while the same
    contacts push it is linear in ``beta`` and costs a matrix-vector product
    (:class:`_ContactStage`). The end velocity is the last contact stage (Eq. 2.127 without the
    ``J^T f_alpha`` that the reduced equations already hold; see the module notes);
    ``q1 = q + h qdot1``. With ``mu = 0`` this is
    :func:`redmax_edu.dynamics.linearly_implicit_euler_step` exactly.

    Parameters
    ----------
    model : Model
        Rigid bodies only (no deformables).
    q, qdot : array_like (nq,)
    h : float
        Time step.
    friction : sequence of JointFriction
        At most one per body.
    tau : array_like (nq,), optional
        Applied joint forces.
    external : ExternalConstraints, optional
        Loop closures, prescribed motions and contacts with the environment, with friction.
    beta : array_like (kT,), optional
        Warm start: the previous step's ``info.beta`` (the writeup warm-starts with the previous
        friction force, ``f_beta = T_m^T beta / h``).
    tol : float
        Relative tolerance of the convergence test.
    max_iterations : int
    reg : float
        Regulariser of Eq. (2.125) relative to the mean diagonal of ``N M^-1 N^T`` (the reference's
        ``SPreg``, there absolute): it picks the smallest impulses among the many that give the
        same wrench, and biases the loads by about ``reg`` relative.

    Returns
    -------
    q1, qdot1 : ndarray (nq,)
    info : BISPInfo

    Examples
    --------
    A 1 kg block on a 30 degree slide with mu = 0.8 > tan 30 degrees stays put; with mu = 0.3
    it slides with Coulomb's acceleration ``g (sin 30 - 0.3 cos 30) = 2.356 m/s^2``.

    >>> from redmax_edu.joints import Prismatic
    >>> from redmax_edu.lie import exp_so3
    >>> from redmax_edu.model import Body, Model
    >>> tilt = np.eye(4); tilt[:3, :3] = exp_so3([0, np.pi / 6, 0])  # the slide x points downhill
    >>> block = Model([Body("block", -1, Prismatic([1, 0, 0]), tilt, np.eye(4), 1.0, 0.01 * np.eye(3))])
    >>> for mu in (0.8, 0.3):
    ...     slide = JointFriction(0, mu, Box((0.1, 0.1, 0.1)))
    ...     q1, qdot1, info = bisp_step(block, [0.0], [0.0], 0.01, [slide])
    ...     print(round(float(qdot1[0]) / 0.01, 3) + 0.0, info.converged)
    0.0 True
    2.356 True
    """
    from .dynamics import _tau

    model = check_model(model)
    q, qdot = model.check_state(q, qdot)
    h = as_scalar(h, "h", minimum=0.0, strict=True)
    _refuse_deformables(model, "bisp_step")
    friction = _check_friction(model, friction)
    if model.constraints and external is None:
        raise ValueError(f"argument 'model' has {len(model.constraints)} constraints, which bisp_step "
                         "takes as argument 'external' (ExternalConstraints, rows on the body twists)")
    ext = ExternalConstraints(model.n) if external is None else external
    if not isinstance(ext, ExternalConstraints):
        raise ValueError(f"argument 'external' must be an ExternalConstraints, got {type(ext).__name__}")
    ext.check(model)
    tol = as_scalar(tol, "tol", minimum=0.0)
    max_iterations = as_index(max_iterations, "max_iterations", minimum=1)
    reg = as_scalar(reg, "reg", minimum=0.0)
    joints = _joint_constants(model, friction, h, reg)
    beta = None if beta is None else as_real(beta, (_friction_rows(joints, ext),), "beta")
    terms = _assemble_checked(model, q, qdot, derivatives=True)
    return _bisp(model, terms, h, _tau(model, tau), joints, ext, beta, tol, max_iterations, reg)


def _bisp(model, terms, h, tau, joints, ext, beta, tol, max_iterations, reg, redundant=None):
    """:func:`bisp_step` from the step's assembly ``terms`` and the joints' constants; ``redundant()``
    names a redundant constraint when the KKT matrix is singular (see
    :func:`redmax_edu.dynamics._solve_rows`)."""
    q, qdot, kin, J, n = terms.q, terms.qdot, terms.kin, terms.J, model.n
    A, b = _euler_system(model, terms, h, tau)
    constants = _model_constants(model)
    Minv, M_m = constants["Minv"], model.spatial_inertias
    loop_fits = [_impulse_fit(loop.normals, constants["L_m"], h, reg) for loop in ext.loops]
    T_r, T_m = _joint_tangent_rows(model, kin, joints)
    on_twists = np.vstack([loop.tangents for loop in ext.loops] + [ext.tangents])
    T_m = np.vstack([T_m, on_twists])                             # friction rows on the twists
    T_r = np.vstack([T_r, on_twists @ J])                         # and on qdot
    G, C = ext.reduced(J)
    what = f"the matrix M_r - h df/dqdot - h^2 df/dq of the step h = {h:g}"
    if len(G) or len(C):
        def solve(rhs):
            return _solve_rows(model, q, A, rhs, G, ext.g, C, ext.c,
                               f"the KKT matrix of {what[4:]} and the constraint rows (Eq. 2.106)", redundant)
    else:
        def solve(rhs):
            return _solve_checked(model, q, A, rhs, what), np.zeros(0), np.zeros(0)
    stage = _ContactStage(solve, A, b, T_r, G, C, ext.c)
    forces, Jdot_qdot = terms.forces, terms.Jdot @ qdot
    beta = np.zeros(len(T_r)) if beta is None else beta
    f_c0, bound, iteration, accelerate = np.zeros((n, 6)), np.zeros(len(T_r)), 0, _Anderson()
    while True:
        iteration += 1
        # CONTACT: the reduced solve with the current friction (Eq. 2.124, 2.126)
        qdot_con, lam_G, lam_C = stage(beta)
        f_beta = T_m.T @ beta / h
        phi_change = J @ (qdot_con - qdot)
        f_end = forces.f + forces.D @ phi_change + h * forces.K @ (J @ qdot_con)
        f_ext = (ext.G.T @ lam_G + ext.C.T @ lam_C) / h
        a_m = _body_accelerations(J, Jdot_qdot, qdot, qdot_con, h).reshape(n, 6)
        f_alpha = (M_m @ a_m[:, :, None])[:, :, 0] - (f_end + f_beta + f_ext).reshape(n, 6)
        reactions = _distribute(model, kin, f_alpha)                  # lines 11-13
        alpha = tuple(j.fit @ reactions[j.friction.body] for j in joints)  # line 15, Eq. (2.125)
        alpha += tuple(fit @ (ext.G[list(loop.rows)].T @ lam_G[list(loop.rows)]) / h   # and the loops'
                       for fit, loop in zip(loop_fits, ext.loops, strict=True))
        # CONVERGENCE CHECK (line 18)
        f_c = f_alpha + f_ext.reshape(n, 6)
        converged = _norm_minv(Minv, f_c - f_c0) <= tol * _norm_minv(Minv, f_c)
        if converged or iteration == max_iterations:
            break
        f_c0 = f_c
        # FRICTION (lines 22-23): bounds from the normal impulses, the mobility with the constraints
        k = len(joints)
        bounds = [j.contacts.bounds(j.friction.mu, a) for j, a in zip(joints, alpha[:k], strict=True)]
        bounds += [loop.bounds(a) for loop, a in zip(ext.loops, alpha[k:], strict=True)]
        bound = accelerate(np.concatenate(bounds + [ext.mu[ext.tangent_of] * lam_C[ext.tangent_of]]))
        qp, c = stage.friction_problem(qdot_con, beta)
        beta = qp(c, bound)
    q1 = q + h * qdot_con
    info = BISPInfo(iteration, bool(converged), alpha, beta, bound, T_r @ qdot_con, lam_G, lam_C,
                    reactions, f_alpha.ravel(), f_beta)
    return q1, qdot_con, info


def _check_friction(model, friction):
    """``friction`` as a tuple of checked :class:`JointFriction`, at most one per body."""
    if isinstance(friction, JointFriction) or not hasattr(friction, "__iter__"):
        raise ValueError("argument 'friction' must be a list of JointFriction, got "
                         f"{type(friction).__name__}")
    friction = tuple(friction)
    seen = set()
    for k, fr in enumerate(friction):
        if not isinstance(fr, JointFriction):
            raise ValueError(f"argument 'friction': friction[{k}] must be a JointFriction, "
                             f"got {type(fr).__name__}")
        fr.check(model)
        if fr.body in seen:
            raise ValueError(f"{fr.label(model)}: given twice in argument 'friction'")
        seen.add(fr.body)
    return friction
