"""The discrete Euler-Lagrange equations of one step: their residual and Jacobian (dense or by sweeps).

:func:`~redmax_edu.variational.del_residual` evaluates the equations in position-momentum form at given
control points,
with the discrete forcing of joint forces, either assembled densely (with the Jacobian, from
``M``, ``dM/dq`` and the Hessians) or by world-frame sweeps in O(n) (no matrix; the Newton
direction is then the O(n) elimination of :mod:`redmax_edu.variational.direction`). The model
check refuses joints the recursions do not cover; the momentum, energy and momentum map of a
state are here too.

Taught in book/05_variational/01_what_is_preserved.
"""

from dataclasses import dataclass

import numpy as np

from .._validate import as_callable, as_real
from ..derivatives import dynamics_derivatives_unchecked
from ..dynamics import energies_unchecked, mass_matrix
from ..kinematics import forward_kinematics_unchecked
from ..lie import ad_unchecked
from ..model import check_model
from ..singularity import SingularMassMatrixError, explain_singular, solve_mass_system
from .quadrature import Quadrature, lobatto
from .sweeps import (
    coordinate_order,
    kinetic_hessian,
    potential_gradient,
    potential_hessian,
    spatial,
    sweeps,
)

__all__ = ["DEL_METHODS", "DELResidual", "del_residual", "dense_residual", "recursive_residual",
           "node_forces", "check_variational_model", "mass", "discrete_momentum", "velocity", "energy",
           "momentum_map"]


#: Relative tolerance of the product-of-exponentials test on a joint's ``dS/dq``.
_POE_TOL = 1e-8


def _poe_defect(joint, q):
    """How far ``dS/dq`` of a joint is from the product-of-exponentials rule (relative), at q."""
    k = joint.ndof
    if k == 0:
        return 0.0
    S = np.asarray(joint.S(q), dtype=float)
    dS = np.asarray(joint.dS_dq(q), dtype=float)          # [:, e, d] = dS_e / dq_d
    want = np.zeros_like(dS)
    ad = ad_unchecked(S.T)                                # ad(S_e), (k, 6, 6)
    for e in range(k):
        for d in range(e + 1, k):                         # a later coordinate moves the earlier axes
            want[:, e, d] = ad[e] @ S[:, d]
    return float(np.abs(dS - want).max() / max(1.0, np.abs(S).max()))


def check_variational_model(model):
    """Refuse what the variational integrators of this module do not cover, naming it.

    Parameters
    ----------
    model : Model
        Each joint's motion subspace is tested at a fixed generic state (the property belongs to
        the joint type, not to the state).

    Raises
    ------
    ValueError
        Naming the body and joint type whose motion subspace is not a product of exponentials
        (with what to use instead), or the force, deformable, constraint or friction present.

    Examples
    --------
    >>> from redmax_edu.joints import SphericalExp
    >>> from redmax_edu.model import Body, Model
    >>> ball = Model([Body("ball", -1, SphericalExp(), np.eye(4), np.eye(4), 1.0, np.eye(3))])
    >>> check_variational_model(ball)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: body 'ball': the spherical_exp joint is not a product of exponentials ...

    Taught in book/05_variational/.
    """
    check_model(model)
    what = "the variational integrators (redmax_edu.variational)"
    if model.constraints:
        raise ValueError(f"argument 'model' has constraints: {what} handle unconstrained trees only; "
                         "use method='bdf2'")
    if model.deformables:
        raise ValueError(f"argument 'model' has deformable bodies: {what} do not include them; use "
                         "method='bdf2'")
    if model.forces:
        names = ", ".join(type(f).__name__ for f in model.forces)
        raise ValueError(f"argument 'model' has extra forces ({names}): {what} take gravity, joint "
                         "springs, joint dampers and joint forces tau only; use method='bdf2'")
    if np.any(model.body_damping):
        i = int(np.flatnonzero(model.body_damping)[0])
        raise ValueError(f"body {model.names[i]!r}: body damping is not a force {what} include; use "
                         "joint damping or method='bdf2'")
    if getattr(model, "friction", ()):
        raise ValueError(f"argument 'model' has joint friction: {what} do not include it; use "
                         "method='euler'")
    q = 0.3 + 0.1 * np.arange(model.nq) % 0.7          # generic: away from every chart singularity
    for i, body in enumerate(model.bodies):
        if _poe_defect(body.joint, q[model.dofs[i]]) > _POE_TOL:
            raise ValueError(
                f"body {body.name!r}: the {body.joint.kind} joint is not a product of exponentials "
                "in its coordinates (its motion subspace S(q) varies otherwise), which the "
                "recursions of Fan, Schultz and Murphey's appendix assume; use an Euler-angle joint "
                "(spherical_euler, free3d_euler) instead, or method='bdf2'")


@dataclass(frozen=True, eq=False)
class Point:
    """What the DEL need at one control point ``(q, qdot)``."""

    M: np.ndarray         # (nq, nq)
    p: np.ndarray         # M qdot
    Pq: np.ndarray        # dp/dq (nq, nq)
    Lq: np.ndarray        # dL/dq + Q (the forcing per unit time), (nq,)
    Lqq: np.ndarray       # d(dL/dq)/dq (nq, nq)
    Lqv: np.ndarray       # d(dL/dq + Q)/dqdot (nq, nq)


def point_terms(model, q, v, tau):
    """The terms of one control point of a checked state; ``tau`` (nq,) or None."""
    d = dynamics_derivatives_unchecked(model, q, v)
    sp = spatial(model, q, v)
    Pq = np.einsum("jki,k->ji", d.dM_dq, v)
    Tq = 0.5 * np.einsum("jki,j,k->i", d.dM_dq, v, v)
    Lq = Tq - potential_gradient(sp) - model.stiffness * (q - model.q_rest) - model.damping * v
    if tau is not None:
        Lq = Lq + tau
    before = coordinate_order(model)
    Lqq = kinetic_hessian(sp, before) - potential_hessian(sp, model.gravity, before)
    Lqq -= np.diag(model.stiffness)
    return Point(d.M, d.M @ v, Pq, Lq, Lqq, Pq.T - np.diag(model.damping))


@dataclass(frozen=True, eq=False)
class DELResidual:
    """The DEL of one step at given control points (the docstring of :mod:`redmax_edu.variational`).

    Attributes
    ----------
    model : Model
    quadrature : Quadrature
    h : float
        Step (s).
    q, qdot : ndarray, shape (s + 1, nq)
        The control points (row 0 is ``q_k``) and the interpolated velocities there.
    r : ndarray, shape (s, nq)
        ``r^(k,a)``, a = 0 .. s-1 (momentum units, N m s or N s).
    p_next : ndarray, shape (nq,)
        ``p_(k+1) = D_s L_d + Q^(k,s)``.
    jacobian : ndarray, shape (s nq, s nq), or None
        ``d r / d q^(k,1..s)``, row block a, column block g - 1 (``method="dense"`` only).
    scale : float
        ``max_i M_ii(q_k)``: ``|r|_inf / scale`` is the residual as a velocity error.
    method : str
        ``"dense"`` (assembled from ``M``, ``dM/dq`` and the Hessians) or ``"recursive"`` (the
        O(n) sweeps; :func:`~redmax_edu.variational.newton_direction` then runs the O(n) elimination).
    sweeps : internal
        For ``"recursive"``: the world-frame quantities at the s + 1 control points, which the
        O(n) Newton direction reads (None for ``"dense"``).
    """

    model: object
    quadrature: Quadrature
    h: float
    q: np.ndarray
    qdot: np.ndarray
    r: np.ndarray
    p_next: np.ndarray
    jacobian: np.ndarray | None
    scale: float
    method: str
    sweeps: object = None

    @property
    def scaled(self):
        """``|r|_inf / max_i M_ii(q_k)``: the residual as a velocity error (rad/s or m/s)."""
        return float(np.abs(self.r).max(initial=0.0) / self.scale)


def dense_residual(model, quad, q0, p0, X, h, taus):
    """The dense :func:`del_residual` of checked arguments; ``taus`` a list of s+1 (nq,) arrays or Nones."""
    s, nq = quad.s, model.nq
    Q = np.concatenate([q0[None], X])
    V = quad.B @ Q / h
    pts = [point_terms(model, Q[a], V[a], taus[a]) for a in range(s + 1)]
    r = np.empty((s + 1, nq))
    for a in range(s + 1):
        r[a] = sum(quad.A[b, a] * pts[b].p for b in range(s + 1)) + h * quad.w[a] * pts[a].Lq
    r[0] += p0
    J = np.zeros((s, nq, s, nq))
    for a in range(s):
        for g in range(1, s + 1):
            blk = quad.A[g, a] * pts[g].Pq + h * quad.w[a] * quad.B[a, g] / h * pts[a].Lqv
            blk = blk + sum(quad.A[b, a] * quad.B[b, g] / h * pts[b].M for b in range(s + 1))
            if g == a:
                blk = blk + h * quad.w[a] * pts[a].Lqq
            J[a, :, g - 1, :] = blk
    scale = float(np.max(np.abs(np.diag(pts[0].M))))
    return DELResidual(model, quad, h, Q, V, r[:s], r[s], J.reshape(s * nq, s * nq), scale, "dense")


def recursive_residual(model, quad, q0, p0, X, h, taus, pose0=None, scale=None):
    """The O(n) :func:`del_residual` (Fan, Schultz and Murphey's D.3, reconstructed): sweeps only, no matrix.

    ``pose0`` (the :class:`~redmax_edu.variational.sweeps.Pose` of ``q0``) and ``scale`` (``max_i
    M_ii(q0)``), when known: they
    are the same for every Newton iterate of a step.
    """
    s = quad.s
    Q = np.concatenate([q0[None], X])
    V = quad.B @ Q / h
    sp = sweeps(model, Q, V, pose0)                           # every array (s + 1, ...)
    mu = sp.mu[:, sp.body]                                     # mu_b of each coordinate's body
    p = np.einsum("adi,adi->ad", sp.S, mu)                     # Sbar_d . mu_b
    f = np.einsum("adi,adi->ad", mu, sp.c)                     # dT/dq
    f += np.einsum("adi,adi->ad", sp.S, sp.G[:, sp.body])      # -dV/dq
    f -= model.stiffness * (Q - model.q_rest) + model.damping * V
    if taus[0] is not None:
        f = f + np.array(taus)
    r = quad.A.T @ p + h * quad.w[:, None] * f
    r[0] += p0
    if scale is None:
        S0 = sp.S[0]
        scale = float(np.max(np.einsum("di,di->d", (sp.MA[0, sp.body] @ S0[..., None])[..., 0], S0)))  # M_ii
    return DELResidual(model, quad, h, Q, V, r[:s], r[s], None, scale, "recursive", sp)


def node_forces(tau, quad, t, h, nq):
    """``tau`` at the s+1 quadrature points of a step starting at t."""
    if tau is None:
        return [None] * (quad.s + 1)
    if callable(tau):
        return [as_real(tau(t + c * h), (nq,), "tau(t)") for c in quad.c]
    return [tau] * (quad.s + 1)


#: How :func:`~redmax_edu.variational.del_residual` evaluates the DEL.
DEL_METHODS = ("dense", "recursive")


def del_residual(model, q0, p0, control, h, s=1, tau=None, t=0.0, method="dense"):
    """The DEL residual of one step and the next momentum, with the dense Jacobian or the O(n) sweeps.

    Parameters
    ----------
    model : Model
        Covered by :func:`check_variational_model`.
    q0, p0 : array_like, shape (nq,)
        ``q_k`` and the discrete momentum ``p_k``.
    control : array_like, shape (s, nq)
        The control points ``q^(k,1)``, ..., ``q^(k,s) = q_(k+1)``.
    h : float
        Step (s).
    s : int
        Number of control points after ``q_k`` (Lobatto rule with s + 1 nodes).
    tau : array_like (nq,) or callable ``t -> (nq,)``, optional
        Applied joint forces, evaluated at the quadrature points ``t + c_a h``.
    t : float
        Time of ``q_k`` (s).
    method : {"dense", "recursive"}
        ``"dense"``: the residual from ``M``, ``dM/dq`` and the assembled Jacobian.
        ``"recursive"``: the residual by O(n) world-frame sweeps (no Jacobian; the Newton
        direction is then the O(n) elimination of :func:`~redmax_edu.variational.newton_direction`).

    Returns
    -------
    DELResidual

    Examples
    --------
    A free prismatic body (no gravity): the DEL give ``p_k = m (q1 - q0) / h = p_(k+1)``.

    >>> from redmax_edu.joints import Prismatic
    >>> from redmax_edu.model import Body, Model
    >>> slider = Model([Body("slider", -1, Prismatic([1, 0, 0]), np.eye(4), np.eye(4), 2.0, np.eye(3))],
    ...                gravity=[0, 0, 0])
    >>> res = del_residual(slider, [0.0], [2.0], [[0.1]], 0.1)
    >>> np.round(res.r, 12) + 0.0, res.p_next
    (array([[0.]]), array([2.]))

    Taught in book/05_variational/.
    """
    quad = lobatto(s)
    if method not in DEL_METHODS:
        raise ValueError(f"argument 'method' must be one of {DEL_METHODS}, got {method!r}")
    check_variational_model(model)
    nq = model.nq
    q0 = as_real(q0, (nq,), "q0")
    p0 = as_real(p0, (nq,), "p0")
    X = as_real(control, (quad.s, nq), "control")
    h = float(as_real(h, (), "h"))
    if not h > 0:
        raise ValueError(f"argument 'h' must be positive, got {h:g}")
    if callable(tau):
        as_callable(tau, "tau", ("t",))
    elif tau is not None:
        tau = as_real(tau, (nq,), "tau")
    evaluate = dense_residual if method == "dense" else recursive_residual
    return evaluate(model, quad, q0, p0, X, h, node_forces(tau, quad, float(t), h, nq))


def mass(model, q):
    return mass_matrix(model, q)


def discrete_momentum(model, q, qdot):
    """The momentum ``p = M(q) qdot`` (nq,) a run starts from (the Legendre transform).

    Examples
    --------
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> bob = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> discrete_momentum(bob, [0.3], [1.0])  # (I + m L^2) qdot
    array([2.01])

    Taught in book/05_variational/.
    """
    check_model(model)
    q, qdot = model.check_state(q, qdot)
    return mass(model, q) @ qdot


def velocity(model, q, p):
    """The velocity ``M(q)^-1 p`` (nq,) at a step boundary.

    Taught in book/05_variational/.
    """
    check_model(model)
    q = model.check_state(q)
    p = as_real(p, (model.nq,), "p")
    return solve_mass_system(model, q, mass(model, q), p)


def energy(model, q, p):
    """Total energy ``T + V`` (J) at ``(q, M^-1 p)``: kinetic, gravity and joint springs.

    Examples
    --------
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> bob = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> round(energy(bob, [0.0], [2.01]), 12)  # p^2 / (2 (I + m L^2)) - m g L
    -18.615

    Taught in book/05_variational/.
    """
    v = velocity(model, q, p)
    q = model.check_state(q)
    T, V = energies_unchecked(model, q, v, forward_kinematics_unchecked(model, q, v))
    return T + V


def momentum_map(model, q, p):
    """The world-frame spatial momentum (6,) of a tree from its discrete momentum ``p``.

    ``(angular about the world origin; linear)``, defined by ``xi . h = p . dq(xi)`` for every
    rigid motion ``xi`` of the whole tree, i.e. ``h = Sbar_root^-T p_root``. Requires a single
    root whose joint has 6 coordinates (e.g. free3d_euler). Without gravity, joint forces on
    the root, or a root spring, the DEL conserve its linear part and its angular part about the
    root chart's first axis to round-off (discrete Noether theorem; see the docstring of
    :mod:`redmax_edu.variational` for why not the other two).

    Examples
    --------
    >>> from redmax_edu.joints import Free3DEuler
    >>> from redmax_edu.model import Body, Model
    >>> box = Body("box", -1, Free3DEuler(), np.eye(4), np.eye(4), 2.0, np.eye(3))
    >>> free = Model([box], gravity=[0, 0, 0])
    >>> q, qdot = np.zeros(6), np.array([1.0, 0, 0, 0, 0, 0])
    >>> np.round(momentum_map(free, q, discrete_momentum(free, q, qdot)), 12) + 0.0
    array([0., 0., 0., 2., 0., 0.])

    Taught in book/05_variational/.
    """
    check_model(model)
    q = model.check_state(q)
    p = as_real(p, (model.nq,), "p")
    roots = [i for i, par in enumerate(model.parents) if par < 0]
    if len(roots) != 1 or model.bodies[roots[0]].joint.ndof != 6:
        raise ValueError("argument 'model': momentum_map needs a single root body whose joint has 6 "
                         "coordinates (e.g. free3d_euler)")
    s = model.dofs[roots[0]]
    sp = spatial(model, q, np.zeros(model.nq))
    try:
        return np.linalg.solve(sp.S[s], p[s])             # Sbar_root^T h = p_root
    except np.linalg.LinAlgError:
        raise SingularMassMatrixError(explain_singular(model, q, "the root's motion subspace")) from None
