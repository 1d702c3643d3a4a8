"""The RedMax equations of motion in reduced coordinates (§2.3, §2.5, §2.6).

Newton-Euler for all bodies at once, ``M_m qddot_m = f_m`` (Eq. 1.21), becomes, through
``phi = J qdot`` and ``phidot = J qddot + Jdot qdot`` (Eq. 2.1-2.2),

    (J^T M_m J) qddot = J^T (f_m - M_m Jdot qdot) + tau_joint + tau        (Eq. 2.19, 2.80)

with the reduced mass matrix ``M_r = J^T M_m J``, the quadratic velocity vector
``-J^T M_m Jdot qdot``, the joint springs and dampers of §2.5, ``tau_joint = -K (q - q_rest)
- D qdot``, and applied joint torques ``tau``. ``f_m`` holds, per body, the Coriolis wrench
``ad(phi)^T M phi``, gravity ``(0; m R^T g)``, viscous body damping ``-d phi`` and the
model's extra maximal forces (springs, applied forces).

Deformable bodies (§2.7, :mod:`redmax_edu.deformable`) extend the same equations to
Eq. (2.99): with ``model.deformables`` the state ``q`` is ``(q_r, x_f)`` (joint coordinates,
then free node positions; ``model.nq`` in all), each node contributes ``m J_n^T J_n`` to the
mass matrix and ``J_n^T (m g + f_spring - m Jdot_n qdot)`` to the force, and every function
below takes and returns arrays of length ``model.nq`` as before.

Every function takes the model and state arrays and returns arrays: no hidden state.

Taught in book/02_reduced/03_redmax_dynamics and 05_stiffness_damping.
"""

import weakref
from dataclasses import dataclass

import numpy as np

from ._validate import as_array, as_scalar
from .constrained import ConstrainedSolution, assemble_constraints, solve_constrained
from .constraints import DEFAULT_BAUMGARTE, check_baumgarte
from .deformable import node_jacobians
from .jacobian import fill_jacobian, jacobian
from .kinematics import forward_kinematics, forward_kinematics_unchecked
from .lie import ad_unchecked
from .model import check_model
from .singularity import solve_mass_system

__all__ = [
    "MaximalForces", "maximal_forces", "mass_matrix", "joint_forces", "quadratic_velocity_vector",
    "reduced_forces", "forward_dynamics", "inverse_dynamics", "kinetic_energy",
    "potential_energy", "energies", "linearly_implicit_euler_step", "constrained_dynamics",
]


_LINEAR_TERMS = weakref.WeakKeyDictionary()


def _linear_terms(model):
    """The constant matrices of the model's linear forces, computed once per (immutable) model:
    ``-diag(d)`` of the body damping (6n, 6n) and ``diag(K_r)``, ``diag(D_r)`` of the joint
    springs and dampers (nq, nq), all read-only."""
    terms = _LINEAR_TERMS.get(model)
    if terms is None:
        terms = (-np.diag(np.repeat(model.body_damping, 6)), np.diag(model.stiffness), np.diag(model.damping))
        for a in terms:
            a.setflags(write=False)
        _LINEAR_TERMS[model] = terms
    return terms


def _block_mass(model, J):
    """``J^T M_m J`` without forming the block-diagonal ``M_m``: J is (6n, k)."""
    Jb = J.reshape(model.n, 6, -1)
    return J.T @ (model.spatial_inertias @ Jb).reshape(6 * model.n, -1)


def mass_matrix(model, q):
    """The reduced mass matrix ``M_r = J^T M_m J`` (Eq. 2.19), shape (nq, nq), symmetric positive definite.

    With deformables, ``J_MR^T M_M J_MR`` of Eq. (2.99): the nodes add ``sum m J_n^T J_n``.

    Examples
    --------
    For one hinge, ``M_r`` is the moment of inertia about the hinge, ``I + m L^2``.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> mass_matrix(pendulum, [0.3])
    array([[2.01]])
    """
    if not check_model(model).deformables:
        return _block_mass(model, jacobian(model, q))
    q = model.check_state(q)
    kin = forward_kinematics(model, q)
    J = fill_jacobian(model, kin)
    nodes = node_jacobians(model, q, np.zeros(model.nq), kin.E_wi, np.zeros((model.n, 6)), J)
    return _block_mass(model, J) + _node_mass(model, nodes)


def _node_mass(model, nodes):
    """``sum_nodes m J_n^T J_n`` (Eq. 2.98-2.99), shape (nq, nq)."""
    M = np.zeros((model.nq, model.nq))
    for spring, kin in zip(model.deformables, nodes, strict=True):
        Jn = kin.J.reshape(-1, model.nq)
        M += spring.node_mass * (Jn.T @ Jn)
    return M


def _node_forces(model, nodes, derivatives=False):
    """``sum_nodes J_n^T (m g + f_spring - m Jdot_n qdot)`` (nq,), and with ``derivatives``
    also ``J_n^T K_s J_n`` and ``J_n^T D_s J_n`` (nq, nq), the springs' stiffness and damping
    mapped like the maximal ``K``, ``D`` (the change of ``J_n`` with q is neglected)."""
    f = np.zeros(model.nq)
    K, D = np.zeros((model.nq, model.nq)), np.zeros((model.nq, model.nq))
    for spring, kin in zip(model.deformables, nodes, strict=True):
        terms = spring.elastic(kin.x, kin.v, derivatives)
        Jn = kin.J.reshape(-1, model.nq)
        f_nodes = terms.f + spring.node_mass * (model.gravity[None] - kin.Jdot_qdot)   # Eq. (2.91), (2.93)
        f += Jn.T @ f_nodes.ravel()
        if derivatives:
            K += Jn.T @ terms.K @ Jn
            D += Jn.T @ terms.D @ Jn
    return (f, K, D) if derivatives else f


@dataclass(frozen=True)
class MaximalForces:
    """The maximal force ``f`` (6n,) and its derivatives ``K = df/dq``, ``D = df/dphi`` (6n, 6n).

    ``K`` and ``D`` follow the conventions of :mod:`redmax_edu.maximal.forces` (body poses
    perturbed along their own twists). They cover the model's extra forces and the body
    damping; gravity and the Coriolis wrench stay explicit in the integrators.
    """

    f: np.ndarray
    K: np.ndarray
    D: np.ndarray


def maximal_forces(model, E, phi, derivatives=False):
    """The maximal wrenches ``f_m`` of Eq. (2.19) at poses ``E`` (n, 4, 4) and twists ``phi`` (n, 6).

    Returns ``f_m`` (6n,) in body coordinates, or a :class:`MaximalForces` with ``K`` and ``D``
    when ``derivatives`` is true.

    Examples
    --------
    Hanging at rest, the only wrench is the bob's weight, in body coordinates.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> from redmax_edu.kinematics import body_poses
    >>> maximal_forces(pendulum, body_poses(pendulum, [0.0]), np.zeros((1, 6)))
    array([  0.  ,   0.  ,   0.  ,   0.  ,   0.  , -19.62])
    """
    check_model(model)
    E, phi = as_array(E, (model.n, 4, 4), "E"), as_array(phi, (model.n, 6), "phi")
    return maximal_forces_unchecked(model, E, phi, derivatives)


def maximal_forces_unchecked(model, E, phi, derivatives=False):
    """:func:`maximal_forces` of checked arrays."""
    M = model.spatial_inertias
    Mphi = (M @ phi[:, :, None])[:, :, 0]
    f = np.einsum("nji,nj->ni", ad_unchecked(phi), Mphi)          # Coriolis, Eq. (1.21)
    R = E[:, :3, :3]
    masses = model.spatial_inertias[:, 3, 3]
    f[:, 3:] += masses[:, None] * (np.swapaxes(R, 1, 2) @ model.gravity)
    f -= model.body_damping[:, None] * phi
    f = f.ravel()
    if not (derivatives or model.forces):
        return f
    if not derivatives:                          # the explicit integrators need no K or D
        for force in model.forces:
            f = f + force.wrench(E, phi)
        return f
    n6 = 6 * model.n
    K, D = np.zeros((n6, n6)), _linear_terms(model)[0].copy()
    for force in model.forces:
        terms = force.evaluate(E, phi)
        f = f + terms.f
        K += terms.K
        D += terms.D
    return MaximalForces(f, K, D) if derivatives else f


def joint_forces(model, q, qdot):
    """Joint spring and damper torques of §2.5, ``-K (q - q_rest) - D qdot`` (Eq. 2.79, 2.81), shape (nq,).

    Examples
    --------
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> sprung = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3),
    ...                      stiffness=5.0, damping=0.5)])
    >>> joint_forces(sprung, np.array([0.2]), np.array([1.0]))  # -5 * 0.2 - 0.5 * 1
    array([-1.5])
    """
    return joint_forces_unchecked(model, *check_model(model).check_state(q, qdot))


def joint_forces_unchecked(model, q, qdot):
    """:func:`joint_forces` of a checked state."""
    return -model.stiffness * (q - model.q_rest) - model.damping * qdot


def _state(model, q, qdot):
    """The forward sweep of a checked state and the Jacobians filled from it (Alg. 1-2)."""
    kin = forward_kinematics_unchecked(model, q, qdot)
    J, Jdot = fill_jacobian(model, kin, with_derivative=True)
    return kin, J, Jdot, kin.phi


@dataclass(frozen=True)
class Assembly:
    """``M_r`` and ``f_r`` (without ``tau``) at one state, with ``df/dq`` and ``df/dqdot`` if asked.

    Also the checked state and the forward sweep it was assembled from (``kin``, ``J``,
    ``Jdot``), which the constraint rows of §2.8 reuse, and the maximal forces ``f_m`` (a
    :class:`MaximalForces` with ``K_m``, ``D_m`` when derivatives were asked), which BISP's joint
    reactions of §2.11 need.
    """

    M: np.ndarray
    f: np.ndarray
    q: np.ndarray
    qdot: np.ndarray
    kin: object
    J: np.ndarray
    Jdot: np.ndarray
    dfdq: np.ndarray | None = None
    dfdv: np.ndarray | None = None
    forces: object = None


def _assemble(model, q, qdot, derivatives=False):
    """Eq. (2.19) (Eq. 2.99 with deformables) at one state, checked here (see :func:`assemble_unchecked`)."""
    return assemble_unchecked(model, *check_model(model).check_state(q, qdot), derivatives)


def assemble_unchecked(model, q, qdot, derivatives=False):
    """Eq. (2.19) (Eq. 2.99 with deformables) at a checked state: the shared core of this module.

    The public functions check their arguments once and call this (the integrators call it at
    every step through :func:`forward_dynamics_unchecked` and :func:`euler_step_unchecked`).
    """
    kin, J, Jdot, phi = _state(model, q, qdot)
    terms = maximal_forces_unchecked(model, kin.E_wi, phi, derivatives=derivatives)
    f_m = terms.f if derivatives else terms
    M = _block_mass(model, J)
    f = J.T @ f_m - _qvv(model, J, Jdot, qdot) + joint_forces_unchecked(model, q, qdot)
    dfdq = dfdv = None
    if derivatives:
        _, K_joint, D_joint = _linear_terms(model)
        dfdv = J.T @ terms.D @ J - D_joint
        dfdq = J.T @ terms.K @ J - K_joint
    if model.deformables:
        nodes = node_jacobians(model, q, qdot, kin.E_wi, phi, J, Jdot)
        M = M + _node_mass(model, nodes)
        if derivatives:
            f_n, K_n, D_n = _node_forces(model, nodes, derivatives=True)
            dfdq, dfdv = dfdq + K_n, dfdv + D_n
        else:
            f_n = _node_forces(model, nodes)
        f = f + f_n
    _check_finite_terms(model, q, qdot, M, f)
    return Assembly(M, f, q, qdot, kin, J, Jdot, dfdq, dfdv, terms)


def _check_finite_terms(model, q, qdot, M, f):
    """Refuse a state whose finite coordinates or velocities overflow ``M_r`` or ``f_r``."""
    if np.isfinite(M).all() and np.isfinite(f).all():
        return
    which = "the mass matrix M_r" if not np.isfinite(M).all() else "the reduced force f_r"
    k = int(np.argmax(np.maximum(np.abs(q), np.abs(qdot))))
    raise ValueError(f"{which} is not finite at this state: the forces overflow (the largest entry is "
                     f"q[{k}] = {q[k]:.3g} or qdot[{k}] = {qdot[k]:.3g}); use a state of realistic size")


def quadratic_velocity_vector(model, q, qdot):
    """``-J^T M_m Jdot qdot`` (Eq. 2.19), shape (nq,): what the change of coordinates adds to the force.

    With deformables, ``-J_MR^T M_M Jdot_MR qdot`` (Eq. 2.99): attached nodes add ``-m J_n^T Jdot_n qdot``.

    Examples
    --------
    A single hinge has a constant mass matrix, so nothing is added:

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> quadratic_velocity_vector(pendulum, [0.3], [2.0]) + 0.0
    array([0.])
    """
    q, qdot = check_model(model).check_state(q, qdot)
    kin, J, Jdot, phi = _state(model, q, qdot)
    out = -_qvv(model, J, Jdot, qdot)
    if model.deformables:
        for spring, nodes in zip(model.deformables, node_jacobians(model, q, qdot, kin.E_wi, phi, J, Jdot),
                                 strict=True):
            out -= spring.node_mass * nodes.J.reshape(-1, model.nq).T @ nodes.Jdot_qdot.ravel()
    return out


def _qvv(model, J, Jdot, qdot):
    a = (Jdot @ qdot).reshape(model.n, 6)
    return J.T @ (model.spatial_inertias @ a[:, :, None]).ravel()


def check_tau(model, tau):
    """Applied joint forces ``tau`` as an array of shape (nq,), zero when None; a bad one names 'tau'."""
    return np.zeros(model.nq) if tau is None else as_array(tau, (model.nq,), "tau")


def reduced_forces(model, q, qdot, tau=None):
    """The reduced force ``f_r = J^T (f_m - M_m Jdot qdot) + tau_joint + tau`` (Eq. 2.19, 2.80), shape (nq,).

    Without joint springs, dampers and torques, ``-f_r`` is what Pinocchio calls the
    nonlinear effects (its ``nle``). With deformables, ``f_R`` of Eq. (2.99).

    Examples
    --------
    Held horizontal, gravity pulls with the torque ``-m g L``:

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> reduced_forces(pendulum, [np.pi / 2], [0.0])
    array([-19.62])
    """
    return _assemble(model, q, qdot).f + check_tau(model, tau)


def forward_dynamics(model, q, qdot, tau=None, *, t=0.0, baumgarte=DEFAULT_BAUMGARTE):
    """Accelerations ``qddot`` (nq,) from ``M_r qddot = f_r`` (Eq. 2.19; Eq. 2.99 with deformables).

    The same equations written out as Eq. (2.87) and (3.1); with deformables the nodes' masses
    and forces join the bodies' as the blocks of Eq. (2.98).

    ``tau`` (nq,) are applied joint forces (torques for revolute joints), default zero; with
    deformables its node entries are world forces on the free nodes. A model with
    constraints (§2.8-2.9) is solved by :func:`constrained_dynamics` at time ``t`` with the
    Baumgarte gains ``baumgarte = (alpha, beta, gamma)`` (only alpha and beta are used here).

    Examples
    --------
    Released horizontal: ``qddot = -m g L / (I + m L^2)``.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> forward_dynamics(pendulum, [np.pi / 2], [0.0])
    array([-9.76119403])
    """
    q, qdot = check_model(model).check_state(q, qdot)
    return forward_dynamics_unchecked(model, q, qdot, check_tau(model, tau), as_scalar(t, "t"),
                                      check_baumgarte(baumgarte))


def forward_dynamics_unchecked(model, q, qdot, tau=None, t=0.0, baumgarte=DEFAULT_BAUMGARTE):
    """:func:`forward_dynamics` of a checked state, ``tau`` (an (nq,) array or None), time and gains."""
    if model.constraints:
        return constrained_dynamics_unchecked(model, q, qdot, tau, t, baumgarte).x
    terms = assemble_unchecked(model, q, qdot)
    f = terms.f if tau is None else terms.f + tau
    # numpy's LU solve: for the small dense M_r it costs less than scipy's Cholesky wrappers
    return solve_mass_system(model, q, terms.M, f)


def constrained_dynamics(model, q, qdot, tau=None, *, t=0.0, baumgarte=DEFAULT_BAUMGARTE):
    """Accelerations and constraint forces of a model with constraints (§2.8-2.9, Eq. 2.105-2.113).

    Solves ``M_r qddot = f_r + tau + G^T lambda`` with every equality row and every active
    inequality row of :func:`redmax_edu.constrained.assemble_constraints` at time ``t``,
    stabilised by Baumgarte's terms (§1.12):
    ``G qddot = dw/dt - Gdot qdot - 2 alpha (G qdot - w) - beta^2 g`` (``>=`` for inequalities,
    which then make it the QP of Eq. 2.112). A prescribed joint is one such equality, and
    its multiplier is the joint force the motion needs: hybrid dynamics (Eq. 2.113).

    Parameters
    ----------
    model : Model
    q, qdot : array_like (nq,)
    tau : array_like (nq,), optional
    t : float
        Time, for prescribed motion.
    baumgarte : (alpha, beta, gamma)
        Stabilisation gains (1/s); gamma is the velocity level's and is not used here.

    Returns
    -------
    ConstrainedSolution
        ``x`` is ``qddot``; ``generalized_force(k)`` is constraint k's force.

    Examples
    --------
    Two hinges whose angles must stay equal move as one (a rigid pendulum of both links):

    >>> from redmax_edu.constraints import CoordinateCoupling
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -0.5
    >>> link = dict(joint=Revolute([0, 1, 0]), T_joint_body=T, mass=1.0, inertia=0.01 * np.eye(3))
    >>> top = np.eye(4); top[2, 3] = -1.0
    >>> model = Model([Body("a", -1, T_parent_joint=np.eye(4), **link),
    ...                Body("b", 0, T_parent_joint=top, **link)], constraints=[CoordinateCoupling(0, 1)])
    >>> sol = constrained_dynamics(model, [0.3, 0.3], [0.0, 0.0])
    >>> bool(np.isclose(sol.x[0], sol.x[1]))
    True


    Taught in book/02_reduced/08_constraints and 09_hybrid_dynamics.
    """
    q, qdot = check_model(model).check_state(q, qdot)
    t, baumgarte = as_scalar(t, "t"), check_baumgarte(baumgarte)
    return constrained_dynamics_unchecked(model, q, qdot, check_tau(model, tau), t, baumgarte)


def constrained_dynamics_unchecked(model, q, qdot, tau, t, baumgarte):
    """:func:`constrained_dynamics` of a checked state, ``tau`` (an (nq,) array or None), time and gains."""
    alpha, beta, _ = baumgarte
    terms = assemble_unchecked(model, q, qdot)
    rows = assemble_constraints(model, q, qdot, terms.kin, terms.J, terms.Jdot, t)
    f = terms.f if tau is None else terms.f + tau
    x, lam = solve_constrained(model, q, terms.M, f, rows, rows.acceleration_rhs(qdot, alpha, beta),
                                "the KKT matrix of M_r and the constraint rows (Eq. 2.110)", rows.active)
    return ConstrainedSolution(x, lam, rows)


def inverse_dynamics(model, q, qdot, qddot):
    """The joint forces ``tau`` (nq,) that produce ``qddot``: ``tau = M_r qddot - f_r`` (Eq. 2.19).

    Examples
    --------
    The torque that holds the pendulum horizontal:

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> inverse_dynamics(pendulum, [np.pi / 2], [0.0], [0.0])
    array([19.62])
    """
    qddot = as_array(qddot, (model.nq,), "qddot")
    terms = _assemble(model, q, qdot)
    return terms.M @ qddot - terms.f


def energies_unchecked(model, q, qdot, kin):
    """``(T, V)`` from one forward sweep ``kin`` at ``(q, qdot)``: the shared core of the energies."""
    phi = kin.phi
    T = 0.5 * float(np.einsum("ni,nij,nj->", phi, model.spatial_inertias, phi))
    E = kin.E_wi
    V = -float(model.spatial_inertias[:, 3, 3] @ (E[:, :3, 3] @ model.gravity))
    V += 0.5 * float(model.stiffness @ (q - model.q_rest) ** 2)
    if model.deformables:
        nodes = node_jacobians(model, q, qdot, E, phi, fill_jacobian(model, kin))
        for spring, n in zip(model.deformables, nodes, strict=True):
            T += 0.5 * spring.node_mass * float(np.sum(n.v ** 2))
            V += spring.elastic(n.x, n.v, derivatives=False).energy
            V -= spring.node_mass * float(np.sum(n.x @ model.gravity))
    V += sum(float(force.potential_energy(E)) for force in model.forces)
    return T, V


def kinetic_energy(model, q, qdot):
    """``T = 1/2 sum_i phi_i^T M_i phi_i`` = ``1/2 qdot^T M_r qdot``.

    With deformables, plus ``m |xdot|^2 / 2`` per node (Eq. 2.91).

    Examples
    --------
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> kinetic_energy(pendulum, [0.3], [1.0])  # (I + m L^2) qdot^2 / 2
    1.005
    """
    return energies(model, q, qdot)[0]


def potential_energy(model, q):
    """Gravity ``-sum_i m_i g . p_i``, the joint springs ``1/2 K |q - q_rest|^2`` and the model's forces.

    With deformables, also each node's ``-m g . x`` (Eq. 2.91) and each segment's ``K eps^2 / 2`` (Eq. 2.92).

    Examples
    --------
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> potential_energy(pendulum, [0.0])  # m g z with z = -1 m
    -19.62
    """
    return energies(model, q, np.zeros(model.nq))[1]


def energies(model, q, qdot):
    """``(T, V)``: kinetic and potential energy (Eq. 2.91 with deformables), from one forward sweep.

    Examples
    --------
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> T_kin, V = energies(pendulum, [np.pi / 2], [2.0])
    >>> round(T_kin, 12), round(V, 12) + 0.0
    (4.02, 0.0)
    """
    q, qdot = check_model(model).check_state(q, qdot)
    return energies_unchecked(model, q, qdot, forward_kinematics_unchecked(model, q, qdot))


def euler_system(model, terms, h, tau):
    """``A qdot1 = b`` of Eq. (2.86) from an assembly with derivatives: ``A = M_r - h df/dqdot - h^2 df/dq``,
    ``b = M_r qdot0 + h (f_r + tau - df/dqdot qdot0)``."""
    A = terms.M - h * terms.dfdv - h * h * terms.dfdq
    f = terms.f if tau is None else terms.f + tau
    return A, terms.M @ terms.qdot + h * (f - terms.dfdv @ terms.qdot)


def linearly_implicit_euler_step(model, q, qdot, h, tau=None, *, t=0.0, baumgarte=DEFAULT_BAUMGARTE):
    """One step of linearly implicit Euler, springs and dampers only, at the velocity level (Eq. 2.84-2.86).

    Only the spring and damper forces (joint and maximal) are linearised (Eq. 2.82-2.83 for the
    joint springs); gravity and the quadratic velocity vector are taken at the start of the step,
    so that without springs and dampers this is the Euler step of Eq. (2.20)-(2.21). Part 1's
    ``maximal.simulate(method="implicit")`` linearises every force instead.

    The forces at the end of the step are linearised about the start,
    ``f(q1, qdot1) ~ f0 + (df/dq) h qdot1 + (df/dqdot)(qdot1 - qdot0)``, with
    ``df/dq = J^T K_m J - K_r`` and ``df/dqdot = J^T D_m J - D_r`` (joint springs ``K_r``,
    dampers ``D_r``, maximal ``K_m``, ``D_m`` of the model's forces and body damping). This gives

        (M_r - h J^T D_m J - h^2 J^T K_m J + h D_r + h^2 K_r) qdot1
            = M_r qdot0 + h (f_r - (J^T D_m J - D_r) qdot0),

    in which a linear damper drops out of the right-hand side (Eq. 2.83); then
    ``q1 = q0 + h qdot1``. Returns ``(q1, qdot1)``. With deformables the springs' node
    stiffness ``K_s`` and damping ``D_s`` enter the same way, as ``J_n^T K_s J_n`` and ``J_n^T D_s J_n``.

    With constraints (§2.8-2.9) the same matrix becomes the top-left block of the KKT system
    of Eq. (2.106)-(2.108) and (2.114): the rows at the start of the step, at time ``t``, with
    ``G qdot1 = w + h dw/dt - gamma g`` (velocity-level Baumgarte with
    ``gamma = baumgarte[2]``; ``>=`` for inequalities, which make it a QP when one of them
    must push; see :meth:`redmax_edu.constrained.ConstraintRows.velocity_rhs`).

    Examples
    --------
    One 10 ms step from rest at 0.5 rad: the bob starts to swing back.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> linearly_implicit_euler_step(pendulum, [0.5], [0.0], 0.01)
    (array([0.49953202]), array([-0.04679766]))
    """
    h = as_scalar(h, "h", minimum=0.0, strict=True)
    q, qdot = check_model(model).check_state(q, qdot)
    return euler_step_unchecked(model, q, qdot, h, check_tau(model, tau), as_scalar(t, "t"),
                                check_baumgarte(baumgarte))


def euler_step_unchecked(model, q, qdot, h, tau=None, t=0.0, baumgarte=DEFAULT_BAUMGARTE):
    """:func:`linearly_implicit_euler_step` of a checked state, step, ``tau`` (an (nq,) array or None),
    time and gains."""
    terms = assemble_unchecked(model, q, qdot, derivatives=True)
    A, b = euler_system(model, terms, h, tau)
    what = f"the matrix M_r - h df/dqdot - h^2 df/dq of the step h = {h:g}"
    if model.constraints:
        rows = assemble_constraints(model, q, qdot, terms.kin, terms.J, terms.Jdot, t)
        qdot1, _ = solve_constrained(model, q, A, b, rows, rows.velocity_rhs(h, baumgarte[2]),
                                      f"the KKT matrix of {what[4:]} and the constraint rows (Eq. 2.106)",
                                      np.ones(len(rows.G), dtype=bool))
    else:
        qdot1 = solve_mass_system(model, q, A, b, what)
    q1 = q + h * qdot1
    if not np.isfinite(q1).all():
        raise ValueError(f"the step h = {h:g} overflowed the coordinates (q + h qdot is not finite); "
                         "use a smaller step 'h'")
    return q1, qdot1
