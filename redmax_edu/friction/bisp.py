"""Bilateral staggered projections, Algorithm 8 of §2.11: Coulomb friction inside the joints.

Bilateral staggered projections (:func:`bisp_step`) apply the same idea to the joints of a
reduced-coordinate model. A joint never comes apart, so its "contact" stage needs no QP: the reduced step
itself gives the motion, and the joint reaction that produces it is read off by comparing body
accelerations with body forces (Eq. 2.122-2.124). A backward sweep splits that reaction joint by joint
(Alg. 8, lines 11-13), and a small regularised least-squares problem per joint turns each reaction into
impulses at a few contact points placed around the joint (Eq. 2.125): the ends of a cylinder for a hinge,
a sphere for a ball joint, a box for a slider (:class:`~redmax_edu.friction.patterns.JointFriction`). The
friction stage then bounds the sliding impulses at those points. External constraints (loop closures,
floor contacts with their own friction) enter as rows
(:class:`~redmax_edu.friction.external.ExternalConstraints`, Eq. 2.126-2.127).

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
  the contact stage (the step's matrix with the equality rows and the contacts that push) to the friction
  impulses (:class:`~redmax_edu.friction.staggered.ContactStage`). Every choice has the same fixed point
  (at it ``W beta + c`` is the contact stage's own sliding velocity), but with this one each friction
  solve predicts the next contact stage exactly as long as the normal impulses keep their values. BISP's
  rows are reduced, ``T_r = T_m J = T_j S`` (the sliding speeds of the joints' contact points). The free
  bodies' ``T_m M_m^-1 T_m^T`` overestimates the articulated mobility 250 to 1400 times at scene 27's root
  hinge, so each friction solve corrects far too little; the step's own matrix without the constraints,
  ``T_r A^-1 T_r^T``, does not see that a loop closure, a prescribed crank or the floor pushes back: with
  it scene 30's four-bar takes 10.8 iterations per step on average and 6 of its 200 steps stop at the
  budget of 100, against 4.9 and at most 7.
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

import numpy as np

from .._validate import as_index, as_real, as_scalar
from ..constrained import check_constraint_set, solve_rows
from ..constraints import DEFAULT_BAUMGARTE, check_baumgarte
from ..dynamics import assemble_unchecked, check_tau, euler_system
from ..lie import adjoint_unchecked, inv_se3_unchecked
from ..model import check_model
from ..singularity import solve_mass_system
from .external import ExternalConstraints, external_rows
from .patterns import ClosureFriction, JointContacts, JointFriction
from .staggered import ContactStage, norm_minv

__all__ = ["BISPInfo", "bisp_step", "frictional_euler_step", "frictional_euler_step_unchecked", "REG"]


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
        Per :class:`~redmax_edu.friction.patterns.JointFriction`, then per
        :class:`~redmax_edu.friction.external.LoopFriction`, the normal impulses of its
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
    ``M_m^-1`` (6n, 6n), the joints' :class:`_JointConstants` by ``(friction, h, reg)`` and the empty
    :class:`~redmax_edu.friction.external.ExternalConstraints`, cached while the (immutable) model
    lives."""
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
      of the external contacts (:func:`~redmax_edu.friction.staggered.friction_qp`), with bounds
      ``mu |alpha|`` (``mu lambda`` for external contacts), Anderson-accelerated from one iteration to the
      next, and as its matrix the rows' mobility under the step's constraints, ``W = T_r dqdot_con/dbeta``
      (see the module notes); ``f_beta = T_m^T beta / h``.

    The contact stage is the step's exact KKT solve, or QP when a contact pushes; while the same contacts
    push it is linear in ``beta`` and costs a matrix-vector product
    (:class:`~redmax_edu.friction.staggered.ContactStage`). The end velocity is the last contact stage
    (Eq. 2.127 without the ``J^T f_alpha`` that the reduced equations already hold; see the module notes);
    ``q1 = q + h qdot1``. With ``mu = 0`` this is :func:`redmax_edu.dynamics.linearly_implicit_euler_step`
    exactly.

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

    >>> from redmax_edu.friction.patterns import Box
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
    terms = assemble_unchecked(model, q, qdot, derivatives=True)
    return _bisp(model, terms, h, check_tau(model, tau), joints, ext, beta, tol, max_iterations, reg)


def _bisp(model, terms, h, tau, joints, ext, beta, tol, max_iterations, reg, redundant=None):
    """:func:`bisp_step` from the step's assembly ``terms`` and the joints' constants; ``redundant()``
    names a redundant constraint when the KKT matrix is singular (see
    :func:`redmax_edu.constrained.solve_rows`)."""
    q, qdot, kin, J, n = terms.q, terms.qdot, terms.kin, terms.J, model.n
    A, b = euler_system(model, terms, h, tau)
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
            return solve_rows(model, q, A, rhs, G, ext.g, C, ext.c,
                               f"the KKT matrix of {what[4:]} and the constraint rows (Eq. 2.106)", redundant)
    else:
        def solve(rhs):
            return solve_mass_system(model, q, A, rhs, what), np.zeros(0), np.zeros(0)
    stage = ContactStage(solve, A, b, T_r, G, C, ext.c)
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
        converged = norm_minv(Minv, f_c - f_c0) <= tol * norm_minv(Minv, f_c)
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
    """``friction`` as a tuple of checked :class:`~redmax_edu.friction.patterns.JointFriction`, at most one
    per body."""
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



def frictional_euler_step(model, q, qdot, h, tau=None, *, t=0.0, baumgarte=DEFAULT_BAUMGARTE, beta=None,
                          tol=1e-6, max_iterations=100):
    """One linearly implicit Euler step of a model with friction (``model.friction``), by BISP.

    The model's :class:`~redmax_edu.friction.patterns.JointFriction` and
    :class:`~redmax_edu.friction.patterns.ClosureFriction` and its constraints
    (:func:`~redmax_edu.friction.external.external_constraints`, with Baumgarte's ``gamma = baumgarte[2]``,
    floor contacts with
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
    model = check_model(model)
    q, qdot = model.check_state(q, qdot)
    h = as_scalar(h, "h", minimum=0.0, strict=True)
    t = as_scalar(t, "t")
    tol = as_scalar(tol, "tol", minimum=0.0)
    max_iterations = as_index(max_iterations, "max_iterations", minimum=1)
    tau, baumgarte = check_tau(model, tau), check_baumgarte(baumgarte)
    return frictional_euler_step_unchecked(model, q, qdot, h, tau, t, baumgarte, beta, tol, max_iterations)


def frictional_euler_step_unchecked(model, q, qdot, h, tau, t, baumgarte, beta=None, tol=1e-6,
                                    max_iterations=100):
    """:func:`frictional_euler_step` of a checked state, step, ``tau`` (an (nq,) array or None), time,
    gains and tolerances: one assembly, the constraint rows from it, and BISP."""
    _refuse_deformables(model, "frictional_euler_step")
    terms = assemble_unchecked(model, q, qdot, derivatives=True)
    joints = _joint_constants(model, tuple(f for f in model.friction if isinstance(f, JointFriction)), h, REG)
    ext, redundant = _model_constants(model)["free"], None
    if model.constraints:
        loops = {f.constraint: (f.mu, f.geometry) for f in model.friction if isinstance(f, ClosureFriction)}
        ext, rows = external_rows(model, q, qdot, terms.kin, terms.J, terms.Jdot, h, t, baumgarte[2], loops)

        def redundant():
            check_constraint_set(model, rows, ~rows.inequality)
    beta = None if beta is None else as_real(beta, (_friction_rows(joints, ext),), "beta")
    return _bisp(model, terms, h, tau, joints, ext, beta, tol, max_iterations, REG, redundant)

