"""Derivatives of the RedMax equations of motion in q and qdot: inertia and forces (§3.3).

The equations of motion (Eq. 3.53),

    M qddot = f + tau,      M = J^T M_m J,      f = f_r + J^T f_m + f_QVV,

depend on q through ``J = J_mr`` and on ``(q, qdot)`` through the forces. With ``dJ/dq`` and
``dJdot/dq`` of Algorithm 11 (:func:`redmax_edu.jacobian.fill_jacobian_derivatives`) the
product rule gives, slice k of each (derivative index last, ``[:, :, k] = d/dq_k``):

* the inertia (Eq. 3.54-3.55): ``dM/dq_k = dJ_k^T M_m J + J^T M_m dJ_k``, and
  ``dM^-1/dq_k = -M^-1 dM/dq_k M^-1``;
* the quadratic velocity vector ``f_QVV = -J^T M_m Jdot qdot`` (Eq. 3.56): column k of
  ``K_QVV`` is ``-dJ_k^T M_m Jdot qdot - J^T M_m dJdot_k qdot``, and ``D_QVV = -J^T M_m
  (dJ/dq (x) qdot) - J^T M_m Jdot``, with ``dJdot/dqdot_k = dJ/dq_k``;
* the maximal velocities, ``dqdot_m/dq = dJ/dq (x) qdot`` (Eq. 3.57): column k is
  ``dJ_k qdot``, an outer product where ``Jdot = sum_k dJ_k qdot_k`` contracts;
* the totals (Eq. 3.58): ``K = df/dq = K_r + J^T K_m J + dJ^T/dq f_m + J^T D_m (dJ/dq (x)
  qdot) + K_QVV`` and ``D = df/dqdot = D_r + J^T D_m J + D_QVV``.

The forces collected are every force the dynamics of :mod:`redmax_edu.dynamics` applies, each
with its analytic ``K`` and ``D``: the joint springs and dampers of §2.5 (``K_r = -diag(k)``,
``D_r = -diag(d)``); per body the Coriolis wrench ``ad(phi)^T M phi`` (Eq. 1.36-1.39, ``D``
only), gravity ``(0; m R^T g)`` (Eq. 1.34-1.35, ``K`` only) and body damping ``-d phi``
(``D = -d``); every extra force of ``model.forces`` (:mod:`redmax_edu.maximal.forces`, each
returning its ``f``, ``K``, ``D``: §1.9); and the deformable chains of §2.7, whose node
positions and velocities are maximal coordinates of their own (``x_a``, with ``xdot_a = J_a
qdot``, Eq. 2.94-2.96): the same equations with ``M_m = m 1``, the spring's node stiffness and
damping as ``K_m`` and ``D_m``, and ``J_a`` differentiated like ``J``. ``K_m`` is the
derivative along the body's own twist (``E_i exp([dq_m])``, the perturbation of Eq. 1.11), so
``dq_m/dq = J``.

From these, the derivatives of forward dynamics, ``qddot = M^-1 (f + tau)``:
``dqddot/dq = M^-1 (K - dM/dq qddot)``, ``dqddot/dqdot = M^-1 D``, ``dqddot/dtau = M^-1``;
and of inverse dynamics, ``tau = M qddot - f``: ``dtau/dq = dM/dq qddot - K``,
``dtau/dqdot = -D``, ``dtau/dqddot = M``.

Not covered: models with constraints (§2.8-2.9), whose derivatives need those of the constraint
rows, are refused; joint friction (§2.11) enters only the staggered Euler steps, not the forward
dynamics differentiated here.

Three points where the writeup's §3.3 (as transcribed) reads differently from what is computed
here, each checked by the tests:

* after Eq. (3.54) each slice is said to be formed from the product ``J M_m dJ/dq_k``, which
  does not conform (``J`` is nm x nr); it is ``J^T M_m dJ/dq_k``, as the writeup's own code has.
* Eq. (3.56) writes ``dJ/dq qdot`` in ``D_QVV`` (and ``dJdot/dq qdot`` in ``K_QVV``) for what
  Eq. (3.57) then calls the outer product ``dJ/dq (x) qdot``; read as a contraction, as Eq.
  (3.57) warns, ``dJ/dq qdot`` is ``Jdot`` and ``D_QVV`` would be ``-2 J^T M_m Jdot``. The
  sentence after it says ``dJ/dqdot = dJ/dq``; the fact used is ``dJdot/dqdot = dJ/dq``.
* ``q_m = J q`` (§3.3, §3.3.1) holds for variations only: the maximal coordinates are poses,
  and a change ``dq`` moves body i along its own twist ``J_i dq``, which is why ``K_m`` enters
  Eq. (3.58) as ``J^T K_m J``.

Writeup §3.3. Taught in book/03_differentiable/03_inertia_force_derivatives.
"""

from dataclasses import dataclass

import numpy as np

from ._validate import as_array
from .deformable import node_jacobians
from .dynamics import MaximalForces, check_tau, joint_forces_unchecked
from .jacobian import fill_jacobian_derivatives
from .kinematics import forward_kinematics_unchecked
from .lie import ad_unchecked, hat_unchecked
from .model import check_model
from .singularity import SingularMassMatrixError, explain_singular

__all__ = [
    "ForceDerivatives", "DynamicsDerivatives", "mass_matrix_derivative",
    "inverse_mass_matrix_derivative", "quadratic_velocity_derivatives", "maximal_velocity_derivative",
    "maximal_force_derivatives", "force_derivatives", "dynamics_derivatives",
    "forward_dynamics_derivatives", "inverse_dynamics_derivatives",
]


@dataclass(frozen=True)
class ForceDerivatives:
    """A reduced force ``f`` (nq,) with ``K = df/dq`` and ``D = df/dqdot`` (nq, nq)."""

    f: np.ndarray
    K: np.ndarray
    D: np.ndarray


@dataclass(frozen=True)
class DynamicsDerivatives:
    """The terms of Eq. (3.53) and their derivatives at one state, and what follows from them.

    Attributes
    ----------
    M : ndarray, shape (nq, nq)
        ``M = J^T M_m J`` (with deformables, plus the nodes' ``m J_a^T J_a``).
    dM_dq : ndarray, shape (nq, nq, nq)
        ``[:, :, k] = dM/dq_k`` (Eq. 3.54).
    f, K, D : ndarray, shapes (nq,), (nq, nq), (nq, nq)
        The total force of Eq. (3.58) without ``tau`` and its derivatives in q and qdot.
    qvv : ForceDerivatives
        ``f_QVV`` with ``K_QVV``, ``D_QVV`` (Eq. 3.56).
    maximal : MaximalForces
        The body wrenches ``f_m`` (6n,) with ``K_m``, ``D_m`` (6n, 6n): every term, gravity and
        the Coriolis wrench included (Eq. 3.58's ``f_m``, ``K_m``, ``D_m``).
    dqdot_m_dq : ndarray, shape (6n, nq)
        ``dJ/dq (x) qdot`` (Eq. 3.57).
    J, Jdot : ndarray, shape (6n, nq)
    dJ_dq, dJdot_dq : ndarray, shape (6n, nq, nq)
        From Algorithm 11.
    """

    M: np.ndarray
    dM_dq: np.ndarray
    f: np.ndarray
    K: np.ndarray
    D: np.ndarray
    qvv: ForceDerivatives
    maximal: MaximalForces
    dqdot_m_dq: np.ndarray
    J: np.ndarray
    Jdot: np.ndarray
    dJ_dq: np.ndarray
    dJdot_dq: np.ndarray


@dataclass(frozen=True)
class _Reduced:
    """One set of maximal coordinates mapped to reduced ones by Eq. (3.54)-(3.58)."""

    M: np.ndarray
    dM: np.ndarray
    f_qvv: np.ndarray
    K_qvv: np.ndarray
    D_qvv: np.ndarray
    f: np.ndarray       # J^T f_m
    K: np.ndarray       # J^T K_m J + dJ^T/dq f_m + J^T D_m (dJ/dq (x) qdot)
    D: np.ndarray       # J^T D_m J
    dqm: np.ndarray     # dJ/dq (x) qdot


def _reduce(MmJ, Mm_a, J, dJ, Jdot, dJd, qdot, f_m, K_m, D_m):
    """Eq. (3.54)-(3.58) for maximal coordinates with Jacobian ``J`` (nm, nq) and inertia ``M_m``.

    ``MmJ = M_m J`` (nm, nq) and ``Mm_a = M_m Jdot qdot`` (nm,) are given rather than ``M_m``
    (block diagonal for bodies, ``m 1`` for nodes); ``dJ``, ``dJd`` are (nm, nq, nq).
    """
    nm, nq = J.shape
    flat = dJ.reshape(nm, nq * nq)                                 # (the contractions as matmuls)
    T = (MmJ.T @ flat).reshape(nq, nq, nq)                         # J^T M_m dJ/dq_k
    dM = T + T.transpose(1, 0, 2)                                  # Eq. (3.54)
    dqm = qdot @ dJ                                                # Eq. (3.57): dJ/dq (x) qdot
    K_qvv = -(Mm_a @ flat).reshape(nq, nq) - MmJ.T @ (qdot @ dJd)  # Eq. (3.56)
    D_qvv = -MmJ.T @ dqm - MmJ.T @ Jdot                            # Eq. (3.56)
    DJ = D_m @ J
    K = J.T @ (K_m @ J) + (f_m @ flat).reshape(nq, nq) + J.T @ (D_m @ dqm)  # Eq. (3.58)
    return _Reduced(J.T @ MmJ, dM, -MmJ.T @ (Jdot @ qdot), K_qvv, D_qvv, J.T @ f_m, K, J.T @ DJ, dqm)


def _block_diagonal(blocks):
    """(n, 6, 6) -> the (6n, 6n) block-diagonal matrix."""
    n = len(blocks)
    out = np.zeros((n, 6, n, 6))
    out[np.arange(n), :, np.arange(n), :] = blocks
    return out.reshape(6 * n, 6 * n)


def _maximal_terms(model, E, phi):
    """Every body wrench of the dynamics with its ``K_m`` and ``D_m``: a :class:`MaximalForces`.

    The same ``f_m`` as :func:`redmax_edu.dynamics.maximal_forces`; the Coriolis wrench and
    gravity, which that function leaves out of ``K`` and ``D``, are differentiated here.
    """
    n6 = 6 * model.n
    M = model.spatial_inertias
    h = (M @ phi[:, :, None])[:, :, 0]                               # momenta (I omega, m nu)
    ad_phi = ad_unchecked(phi)
    weight = M[:, 3, 3, None] * (np.swapaxes(E[:, :3, :3], 1, 2) @ model.gravity)   # R^T m g
    f = np.einsum("nji,nj->ni", ad_phi, h)                           # Coriolis, Eq. (1.21)
    f[:, 3:] += weight                                               # gravity, Eq. (1.34)
    f -= model.body_damping[:, None] * phi                           # body damping, §1.9.1
    K_blocks = np.zeros((model.n, 6, 6))
    K_blocks[:, 3:, :3] = hat_unchecked(weight)                      # Eq. (1.35): R^T turns with the body
    D_blocks = np.swapaxes(ad_phi, 1, 2) @ M                         # Eq. (1.39): ad(phi)^T M ...
    hats = hat_unchecked(h.reshape(model.n, 2, 3))                   # ... + d(ad(phi)^T)/dphi M phi
    D_blocks[:, :3, :3] += hats[:, 0]
    D_blocks[:, :3, 3:] += hats[:, 1]
    D_blocks[:, 3:, :3] += hats[:, 1]
    D_blocks -= model.body_damping[:, None, None] * np.eye(6)
    f, K, D = f.ravel(), _block_diagonal(K_blocks), _block_diagonal(D_blocks)
    for k, force in enumerate(model.forces):
        terms = _force_terms(force, k, E, phi, n6)
        f, K, D = f + terms.f, K + terms.K, D + terms.D
    return MaximalForces(f, K, D)


def _force_terms(force, k, E, phi, n6):
    """``force.evaluate(E, phi)``, refused by name if it does not give ``f``, ``K`` and ``D``."""
    name = f"model.forces[{k}] ({type(force).__name__})"
    try:
        terms = force.evaluate(E, phi)
    except NotImplementedError:
        raise ValueError(f"argument 'model': {name} has no evaluate(E, phi) giving its f, K and D "
                         "(§1.9); its derivatives cannot enter Eq. (3.58)") from None
    for attr, shape in (("f", (n6,)), ("K", (n6, n6)), ("D", (n6, n6))):
        value = getattr(terms, attr, None)
        if value is None or np.shape(value) != shape:
            raise ValueError(f"argument 'model': {name} gives no analytic {attr} of shape {shape} "
                             f"(got {None if value is None else np.shape(value)}); every force of Eq. "
                             "(3.58) needs f, K = df/dq_m and D = df/dphi")
    return terms


def _node_jacobian_derivatives(model, q, qdot, kin, J, Jdot, dJ, dJd):
    """Per deformable: ``(x, v, J_a, Jdot_a, dJ_a/dq, dJdot_a/dq)`` of all its nodes, stacked
    node-major as (3k,), (3k,), (3k, nq), (3k, nq), (3k, nq, nq), (3k, nq, nq).

    A node on body i at ``r`` has ``J_a = R Gamma(r) J_i`` (Eq. 2.94) and ``Jdot_a = R [omega]
    Gamma(r) J_i + R Gamma(r) Jdot_i`` (Eq. 2.95); since ``dR/dq_k = R [a_k]`` with ``a_k`` the
    angular part of column k of ``J_i``, and ``domega/dq_k = (dJ_i/dq_k qdot)_omega = b_k``,

        dJ_a/dq_k    = R [a_k] G J_i + R G dJ_i/dq_k,
        dJdot_a/dq_k = R ([a_k][omega] + [b_k]) G J_i + R [omega] G dJ_i/dq_k
                       + R [a_k] G Jdot_i + R G dJdot_i/dq_k.

    Free nodes have identity rows and world points zero rows; both have zero derivatives.
    """
    n, nq = model.n, model.nq
    Jb, Jdb = J.reshape(n, 6, nq), Jdot.reshape(n, 6, nq)
    dJb, dJdb = dJ.reshape(n, 6, nq, nq), dJd.reshape(n, 6, nq, nq)
    phi = (J @ qdot).reshape(n, 6)
    out = []
    for spring, nodes in zip(model.deformables, node_jacobians(model, q, qdot, kin.E_wi, phi, J),
                             strict=True):
        k = spring.nnodes
        Ja, Jda = nodes.J.copy(), np.zeros((k, 3, nq))
        dJa, dJda = np.zeros((k, 3, nq, nq)), np.zeros((k, 3, nq, nq))
        for a, att in spring.attachments.items():
            i = att.body
            if i < 0:
                continue
            R, G = kin.E_wi[i, :3, :3], spring._gammas[a]
            W = hat_unchecked(phi[i, :3])
            Ak = hat_unchecked(Jb[i, :3].T)                                  # [a_k], (nq, 3, 3)
            Bk = hat_unchecked(np.einsum("ajk,j->ka", dJb[i, :3], qdot))     # [b_k], (nq, 3, 3)
            GJ, GJd = G @ Jb[i], G @ Jdb[i]
            Jda[a] = R @ W @ GJ + R @ GJd
            dJa[a] = (np.einsum("kab,bj->ajk", R @ Ak, GJ)
                      + np.einsum("ab,bjk->ajk", R @ G, dJb[i]))
            dJda[a] = (np.einsum("kab,bj->ajk", R @ (Ak @ W + Bk), GJ)
                       + np.einsum("ab,bjk->ajk", R @ W @ G, dJb[i])
                       + np.einsum("kab,bj->ajk", R @ Ak, GJd)
                       + np.einsum("ab,bjk->ajk", R @ G, dJdb[i]))
        out.append((spring, nodes.x, nodes.v, Ja.reshape(3 * k, nq), Jda.reshape(3 * k, nq),
                    dJa.reshape(3 * k, nq, nq), dJda.reshape(3 * k, nq, nq)))
    return out


def dynamics_derivatives_unchecked(model, q, qdot):
    """Everything of Eq. (3.53)-(3.58) at a checked state: a :class:`DynamicsDerivatives`."""
    if model.constraints:
        kinds = sorted({type(c).__name__ for c in model.constraints})
        raise ValueError(f"argument 'model' has constraints ({', '.join(kinds)}): the derivatives of "
                         "§3.3 are those of the unconstrained equations M qddot = f + tau (Eq. 3.53); "
                         "differentiating constrained dynamics needs the derivatives of the "
                         "constraint rows, which are not implemented")
    kin = forward_kinematics_unchecked(model, q, qdot)
    jd = fill_jacobian_derivatives(model, kin, q, qdot)
    J, Jdot, dJ, dJd = jd.J, jd.Jdot, jd.dJ_dq, jd.dJdot_dq
    n, nq = model.n, model.nq
    Mb = model.spatial_inertias
    MmJ = (Mb @ J.reshape(n, 6, nq)).reshape(6 * n, nq)
    Mm_a = (Mb @ (Jdot @ qdot).reshape(n, 6, 1)).ravel()
    fm = _maximal_terms(model, kin.E_wi, kin.phi)
    r = _reduce(MmJ, Mm_a, J, dJ, Jdot, dJd, qdot, fm.f, fm.K, fm.D)
    M, dM = r.M, r.dM
    f = joint_forces_unchecked(model, q, qdot) + r.f + r.f_qvv                     # Eq. (3.58)
    K = -np.diag(model.stiffness) + r.K + r.K_qvv                         # K_r = -diag(k)
    D = -np.diag(model.damping) + r.D + r.D_qvv                           # D_r = -diag(d)
    qvv = [r.f_qvv, r.K_qvv, r.D_qvv]
    if model.deformables:
        for spring, x, v, Ja, Jda, dJa, dJda in _node_jacobian_derivatives(model, q, qdot, kin, J, Jdot,
                                                                           dJ, dJd):
            m = spring.node_mass
            terms = spring.elastic(x.reshape(-1, 3), v.reshape(-1, 3), derivatives=True)
            F = (terms.f + m * model.gravity).ravel()                      # Eq. (2.91), (2.93)
            a = Jda @ qdot
            rn = _reduce(m * Ja, m * a, Ja, dJa, Jda, dJda, qdot, F, terms.K, terms.D)
            M, dM = M + rn.M, dM + rn.dM
            f, K, D = f + rn.f + rn.f_qvv, K + rn.K + rn.K_qvv, D + rn.D + rn.D_qvv
            qvv = [qvv[0] + rn.f_qvv, qvv[1] + rn.K_qvv, qvv[2] + rn.D_qvv]
    if not (np.isfinite(M).all() and np.isfinite(K).all() and np.isfinite(D).all()):
        raise ValueError("the mass matrix or the force derivatives are not finite at this state: the "
                         "forces overflow; use a state of realistic size ('q', 'qdot')")
    return DynamicsDerivatives(M, dM, f, K, D, ForceDerivatives(*qvv), fm, r.dqm, J, Jdot, dJ, dJd)


def _checked(model, q, qdot=None):
    check_model(model)
    if qdot is None:
        q = model.check_state(q)
        return q, np.zeros(model.nq)
    return model.check_state(q, qdot)


def dynamics_derivatives(model, q, qdot):
    """All terms of Eq. (3.53) and their derivatives at ``(q, qdot)``: a :class:`DynamicsDerivatives`.

    One forward sweep, Algorithm 11, and Eq. (3.54)-(3.58): ``M``, ``dM/dq``, the total force
    ``f`` (without ``tau``) with ``K = df/dq`` and ``D = df/dqdot``, the quadratic velocity
    terms, the maximal forces with their ``K_m``, ``D_m``, and the Jacobians with theirs.

    Parameters
    ----------
    model : Model
        Without constraints (refused: see the module docstring).
    q, qdot : array_like, shape (nq,)

    Returns
    -------
    DynamicsDerivatives

    Raises
    ------
    ValueError
        For a bad state (naming 'q' or 'qdot'), a model with constraints, a force without
        analytic ``K`` or ``D`` (named), or a joint at a singularity of its chart (the body named).

    Examples
    --------
    ``f`` is the reduced force of :func:`redmax_edu.dynamics.reduced_forces`:

    >>> from redmax_edu.dynamics import reduced_forces
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> hinge = dict(joint=Revolute([0, 1, 0]), T_joint_body=T, mass=1.0, inertia=0.1 * np.eye(3))
    >>> arm = Model([Body("upper", -1, T_parent_joint=np.eye(4), **hinge),
    ...              Body("lower", 0, T_parent_joint=T, **hinge)])
    >>> d = dynamics_derivatives(arm, [0.3, 0.5], [1.0, 2.0])
    >>> bool(np.allclose(d.f, reduced_forces(arm, [0.3, 0.5], [1.0, 2.0]))), d.dM_dq.shape
    (True, (2, 2, 2))

    Writeup §3.3. Taught in book/03_differentiable/03_inertia_force_derivatives.
    """
    return dynamics_derivatives_unchecked(model, *_checked(model, q, qdot))


def mass_matrix_derivative(model, q):
    """``dM/dq`` (Eq. 3.54), shape (nq, nq, nq): ``[:, :, k] = dJ_k^T M_m J + J^T M_m dJ_k``.

    Each slice is symmetric, and with deformables includes the nodes' ``m (dJ_a^T J_a + J_a^T dJ_a)``.

    Examples
    --------
    Two hinges: the inertia about the upper hinge depends on the angle of the lower one,
    ``M_11 = const + 2 m_2 l_1 c_2 cos(q2)``, so ``dM_11/dq2 = -2 (1 kg)(1 m)(1.5 m) sin(q2)``:

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> arm = Model([Body("upper", -1, Revolute([0, 1, 0]), np.eye(4), T, 1.0, 0.1 * np.eye(3)),
    ...              Body("lower", 0, Revolute([0, 1, 0]), T, T, 1.0, 0.1 * np.eye(3))])
    >>> dM = mass_matrix_derivative(arm, [0.3, 0.5])
    >>> round(float(dM[0, 0, 1]), 12), round(float(-2 * 1.0 * np.sin(0.5)), 12), float(dM[0, 0, 0])
    (-0.958851077208, -0.958851077208, 0.0)

    Writeup §3.3. Taught in book/03_differentiable/03_inertia_force_derivatives.
    """
    return dynamics_derivatives_unchecked(model, *_checked(model, q)).dM_dq


def inverse_mass_matrix_derivative(model, q):
    """``dM^-1/dq`` (Eq. 3.55), shape (nq, nq, nq): ``[:, :, k] = -M^-1 dM/dq_k M^-1``.

    Examples
    --------
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> arm = Model([Body("upper", -1, Revolute([0, 1, 0]), np.eye(4), T, 1.0, 0.1 * np.eye(3)),
    ...              Body("lower", 0, Revolute([0, 1, 0]), T, T, 1.0, 0.1 * np.eye(3))])
    >>> from redmax_edu.dynamics import mass_matrix
    >>> h, q = 1e-6, np.array([0.3, 0.5])
    >>> M_inv = lambda x: np.linalg.inv(mass_matrix(arm, x))
    >>> fd = (M_inv(q + [0, h]) - M_inv(q - [0, h])) / (2 * h)
    >>> bool(np.allclose(inverse_mass_matrix_derivative(arm, q)[:, :, 1], fd, atol=1e-8))
    True

    Writeup §3.3. Taught in book/03_differentiable/03_inertia_force_derivatives.
    """
    q, qdot = _checked(model, q)
    d = dynamics_derivatives_unchecked(model, q, qdot)
    M_inv = _solve(model, q, d.M, np.eye(model.nq))
    return -np.einsum("ij,jlk,lm->imk", M_inv, d.dM_dq, M_inv)


def quadratic_velocity_derivatives(model, q, qdot):
    """``f_QVV = -J^T M_m Jdot qdot`` with ``K_QVV`` and ``D_QVV`` (Eq. 3.56): a :class:`ForceDerivatives`.

    Shapes (nq,), (nq, nq), (nq, nq). With deformables, the nodes' ``-m J_a^T Jdot_a qdot`` and
    its derivatives are included (as in :func:`redmax_edu.dynamics.quadratic_velocity_vector`).

    Examples
    --------
    ``f_QVV`` is quadratic in qdot, so ``D_QVV qdot = 2 f_QVV`` (Euler's theorem on
    homogeneous functions):

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> arm = Model([Body("upper", -1, Revolute([0, 1, 0]), np.eye(4), T, 1.0, 0.1 * np.eye(3)),
    ...              Body("lower", 0, Revolute([0, 1, 0]), T, T, 1.0, 0.1 * np.eye(3))])
    >>> qvv = quadratic_velocity_derivatives(arm, [0.3, 0.5], [1.0, 2.0])
    >>> bool(np.allclose(qvv.D @ [1.0, 2.0], 2 * qvv.f))
    True

    Writeup §3.3. Taught in book/03_differentiable/03_inertia_force_derivatives.
    """
    return dynamics_derivatives_unchecked(model, *_checked(model, q, qdot)).qvv


def maximal_velocity_derivative(model, q, qdot):
    """``dqdot_m/dq = dJ/dq (x) qdot`` (Eq. 3.57), shape (6n, nq): column k is ``dJ/dq_k qdot``.

    The body twists ``phi = J qdot`` change with q at fixed qdot; this is that change, the
    outer-product counterpart of ``Jdot = sum_k dJ/dq_k qdot_k``.

    Examples
    --------
    >>> from redmax_edu.jacobian import jacobian
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> arm = Model([Body("upper", -1, Revolute([0, 1, 0]), np.eye(4), T, 1.0, 0.1 * np.eye(3)),
    ...              Body("lower", 0, Revolute([0, 1, 0]), T, T, 1.0, 0.1 * np.eye(3))])
    >>> q, qdot, h = np.array([0.3, 0.5]), np.array([1.0, 2.0]), 1e-6
    >>> fd = (jacobian(arm, q + [0, h]) - jacobian(arm, q - [0, h])) @ qdot / (2 * h)
    >>> bool(np.allclose(maximal_velocity_derivative(arm, q, qdot)[:, 1], fd))
    True

    Writeup §3.3. Taught in book/03_differentiable/03_inertia_force_derivatives.
    """
    return dynamics_derivatives_unchecked(model, *_checked(model, q, qdot)).dqdot_m_dq


def maximal_force_derivatives(model, q, qdot):
    """The body wrenches ``f_m`` (6n,) with ``K_m`` and ``D_m`` (6n, 6n) at ``(q, qdot)``.

    Every maximal force of the dynamics: the Coriolis wrench (``D`` of Eq. 1.39), gravity
    (``K`` of Eq. 1.35), body damping and ``model.forces``. ``K_m`` differentiates along each
    body's own twist, ``D_m`` in the body twists. Returns a
    :class:`redmax_edu.dynamics.MaximalForces`.

    Examples
    --------
    A bob held horizontal: its weight in body axes turns with it, so ``K_m`` has the block
    ``[R^T m g]`` (force rows, rotation columns) and ``D_m`` is the Coriolis term (zero at rest).

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> bob = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> fm = maximal_force_derivatives(bob, [0.0], [0.0])
    >>> fm.K[3:, :3] + 0.0
    array([[  0.  ,  19.62,   0.  ],
           [-19.62,   0.  ,   0.  ],
           [  0.  ,   0.  ,   0.  ]])
    >>> bool(np.all(fm.D == 0))
    True

    Writeup §3.3. Taught in book/03_differentiable/03_inertia_force_derivatives.
    """
    q, qdot = _checked(model, q, qdot)
    kin = forward_kinematics_unchecked(model, q, qdot)
    return _maximal_terms(model, kin.E_wi, kin.phi)


def force_derivatives(model, q, qdot):
    """The total force ``f = f_r + J^T f_m + f_QVV`` with ``K = df/dq``, ``D = df/dqdot`` (Eq. 3.58).

    ``f`` (nq,) is :func:`redmax_edu.dynamics.reduced_forces` without ``tau``; ``K``, ``D``
    (nq, nq) collect the joint springs and dampers, every maximal force mapped by ``J`` with
    the change of ``J`` itself (``dJ^T/dq f_m``) and of the body twists (``J^T D_m dqdot_m/dq``),
    the quadratic velocity vector and the deformable chains. Returns a :class:`ForceDerivatives`.

    Examples
    --------
    A pendulum with a joint spring: ``K = -m g L cos(q) - k``, ``D = -d``.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> bob = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3),
    ...                   stiffness=5.0, damping=0.5)])
    >>> fd = force_derivatives(bob, [0.3], [1.0])
    >>> round(float(fd.K[0, 0]), 10), round(float(-2.0 * 9.81 * np.cos(0.3) - 5.0), 10), fd.D
    (-23.7437019166, -23.7437019166, array([[-0.5]]))

    Writeup §3.3. Taught in book/03_differentiable/03_inertia_force_derivatives.
    """
    d = dynamics_derivatives_unchecked(model, *_checked(model, q, qdot))
    return ForceDerivatives(d.f, d.K, d.D)


@dataclass(frozen=True)
class ForwardDynamicsDerivatives:
    """``qddot`` (nq,) and its derivatives (nq, nq) in ``q``, ``qdot`` and ``tau``."""

    qddot: np.ndarray
    dqddot_dq: np.ndarray
    dqddot_dqdot: np.ndarray
    dqddot_dtau: np.ndarray


@dataclass(frozen=True)
class InverseDynamicsDerivatives:
    """``tau`` (nq,) and its derivatives (nq, nq) in ``q``, ``qdot`` and ``qddot``."""

    tau: np.ndarray
    dtau_dq: np.ndarray
    dtau_dqdot: np.ndarray
    dtau_dqddot: np.ndarray


def _solve(model, q, M, b):
    """``M^-1 b``, or a :class:`~redmax_edu.singularity.SingularMassMatrixError` naming the cause."""
    try:
        x = np.linalg.solve(M, b)
    except np.linalg.LinAlgError:
        raise SingularMassMatrixError(explain_singular(model, q, "the reduced mass matrix M_r")) from None
    if model.overfull_joints or not np.isfinite(x).all():
        raise SingularMassMatrixError(explain_singular(model, q, "the reduced mass matrix M_r"))
    return x


def forward_dynamics_derivatives(model, q, qdot, tau=None):
    """``qddot`` of ``M qddot = f + tau`` and its derivatives in q, qdot and tau.

    Differentiating Eq. (3.53) at fixed tau: ``dM/dq_k qddot + M dqddot/dq_k = K[:, k]``, so

        dqddot/dq = M^-1 (K - dM/dq qddot),   dqddot/dqdot = M^-1 D,   dqddot/dtau = M^-1,

    with ``(dM/dq qddot)[:, k] = dM/dq_k qddot`` (Eq. 3.54) and ``K``, ``D`` of Eq. (3.58).

    Parameters
    ----------
    model : Model
        Without constraints.
    q, qdot : array_like, shape (nq,)
    tau : array_like, shape (nq,), optional
        Applied joint forces (default zero), as in :func:`redmax_edu.dynamics.forward_dynamics`.

    Returns
    -------
    ForwardDynamicsDerivatives
        ``qddot`` (nq,), ``dqddot_dq``, ``dqddot_dqdot``, ``dqddot_dtau`` (nq, nq), derivative
        index last (column k is the derivative in coordinate k).

    Examples
    --------
    A pendulum: ``qddot = -m g L sin(q) / (I + m L^2)``, so ``dqddot/dq = -m g L cos(q) / (I + m L^2)``.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> bob = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> d = forward_dynamics_derivatives(bob, [0.3], [1.0])
    >>> round(float(d.dqddot_dq[0, 0]), 12), round(float(-2 * 9.81 * np.cos(0.3) / 2.01), 12)
    (-9.325224834151, -9.325224834151)
    >>> d.dqddot_dtau
    array([[0.49751244]])

    Writeup §3.3. Taught in book/03_differentiable/03_inertia_force_derivatives.
    """
    q, qdot = _checked(model, q, qdot)
    tau = check_tau(model, tau)
    d = dynamics_derivatives_unchecked(model, q, qdot)
    nq = model.nq
    X = _solve(model, q, d.M, np.column_stack([d.f + tau, d.D, np.eye(nq)]))
    qddot, dqddot_dqdot, M_inv = X[:, 0], X[:, 1:1 + nq], X[:, 1 + nq:]
    dqddot_dq = M_inv @ (d.K - np.einsum("ijk,j->ik", d.dM_dq, qddot))
    return ForwardDynamicsDerivatives(qddot, dqddot_dq, dqddot_dqdot, M_inv)


def inverse_dynamics_derivatives(model, q, qdot, qddot):
    """``tau = M qddot - f`` (the inverse of Eq. 3.53) and its derivatives in q, qdot and qddot.

    ``dtau/dq = dM/dq qddot - K``, ``dtau/dqdot = -D``, ``dtau/dqddot = M``.

    Parameters
    ----------
    model : Model
        Without constraints.
    q, qdot, qddot : array_like, shape (nq,)

    Returns
    -------
    InverseDynamicsDerivatives
        ``tau`` (nq,), ``dtau_dq``, ``dtau_dqdot``, ``dtau_dqddot`` (nq, nq).

    Examples
    --------
    Holding a pendulum still at angle q takes ``tau = m g L sin(q)``, so ``dtau/dq = m g L cos(q)``:

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> bob = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> d = inverse_dynamics_derivatives(bob, [0.3], [0.0], [0.0])
    >>> round(float(d.dtau_dq[0, 0]), 12), round(float(2 * 9.81 * np.cos(0.3)), 12)
    (18.743701916644, 18.743701916644)

    Writeup §3.3. Taught in book/03_differentiable/03_inertia_force_derivatives.
    """
    q, qdot = _checked(model, q, qdot)
    qddot = as_array(qddot, (model.nq,), "qddot", real=True)
    d = dynamics_derivatives_unchecked(model, q, qdot)
    tau = d.M @ qddot - d.f
    return InverseDynamicsDerivatives(tau, np.einsum("ijk,j->ik", d.dM_dq, qddot) - d.K, -d.D, d.M)
