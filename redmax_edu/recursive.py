"""Recursive (O(n)) dynamics of a tree in reduced coordinates (§2.12-2.13 of the writeup).

Two sweeps over the tree replace the dense matrices of Eq. (2.19): a forward sweep from the
root gives every body's twist and acceleration, a backward sweep from the leaves gathers the
wrench each joint transmits. Everything here is written in RedMax's body frames and with its
joints: each joint provides ``S`` (6, ndof) and ``Sdot``, whatever its type, and
``Ad(E_i_j) S_i`` is its Jacobian seen from its body's frame.

- :func:`recursive_inverse_dynamics`: the recursive Newton-Euler algorithm of Liu and Jain's
  tutorial (the companion text of the book): forces from accelerations.
- :func:`recursive_hybrid_dynamics` (Algorithm 9, Kim and Pollard's recursive hybrid
  dynamics): accelerations from forces, except on prescribed joints, whose accelerations are
  given and whose torques come out; :func:`recursive_forward_dynamics` is the case with no
  prescribed joint (the articulated-body algorithm).
- :func:`inverse_inertia` (Algorithm 10): ``M_r^{-1} x`` by the same sweeps with the forces
  left out, after a preprocessing sweep that depends on ``q`` only.
- :func:`recursive_constrained_dynamics` (§2.12, Eq. 2.128-2.134): a model's constraints
  (loops, couplings, limits, contacts, prescribed motion) without ``M_r`` or ``J``: prescribed
  joints by Algorithm 9 itself, the other rows by the dual problem, whose Delassus operator
  ``G M_r^-1 G^T`` Algorithms 6 and 10 build one row at a time in O(n);
  :func:`recursive_forward_dynamics` uses it for a model with constraints, and so does
  ``simulate(method="rk45_recursive")``.

Taught in book/02_reduced/12_recursive_dynamics (the inverse-dynamics sweeps also in
book/04_companions/01_lagrangian_arm).
"""

import weakref
from dataclasses import dataclass

import numpy as np

from ._validate import as_array, as_columns, as_index, as_scalar
from .constrained import (
    NO_QP_SOLUTION,
    ConstrainedSolution,
    assemble_constraints,
    check_constraint_set,
    inequality_qp,
    violates,
)
from .constraints import DEFAULT_BAUMGARTE, PrescribedJoint, check_baumgarte
from .dynamics import (
    check_tau,
    joint_forces,
    joint_forces_unchecked,
    maximal_forces,
    maximal_forces_unchecked,
)
from .kinematics import forward_kinematics, forward_kinematics_unchecked, joint_twist_adjoints, tree_constants
from .lie import ad_unchecked
from .model import check_model
from .singularity import SingularMassMatrixError, explain_singular, singular_joints

__all__ = ["body_accelerations", "recursive_inverse_dynamics", "recursive_hybrid_dynamics",
           "recursive_forward_dynamics", "recursive_constrained_dynamics", "InverseInertia",
           "inverse_inertia", "inverse_inertia_product"]


def body_accelerations(model, q, qdot, qddot):
    """Body accelerations ``phidot_i`` (n, 6) by one forward sweep from the root, in O(n).

    With ``psi_i = Ad(E_i_j) S_i qdot_i`` the twist of body ``i`` relative to its parent,
    ``phi_i = Ad(E_i_p) phi_p + psi_i`` (Eq. 2.10) and, since ``d/dt Ad(E_i_p) = -ad(psi_i) Ad(E_i_p)``::

        phidot_i = Ad(E_i_p) phidot_p - ad(psi_i) Ad(E_i_p) phi_p + Ad(E_i_j) (S_i qddot_i + Sdot_i qdot_i).

    The result equals ``J qddot + Jdot qdot`` (Eq. 2.2) without forming either matrix.

    Returns
    -------
    phidot : ndarray, shape (n, 6)
        Body accelerations in body coordinates, angular part first.
    kin : Kinematics
        The forward sweep they were computed from (frames, ``S``, ``Sdot``, twists ``kin.phi``).
    """
    model = check_model(model)
    q, qdot = model.check_state(q, qdot)
    qddot = as_array(qddot, (model.nq,), "qddot")
    kin = forward_kinematics(model, q, qdot)
    A_ij = joint_twist_adjoints(model)
    phidot = np.zeros((model.n, 6))
    for i, (p, s) in enumerate(zip(model.parents, model.dofs, strict=True)):
        psi = A_ij[i] @ (kin.S[i] @ qdot[s])
        phidot[i] = A_ij[i] @ (kin.S[i] @ qddot[s] + kin.Sdot[i] @ qdot[s])
        if p >= 0:
            carried = kin.A_ip[i] @ kin.phi[p]
            phidot[i] += kin.A_ip[i] @ phidot[p] - ad_unchecked(psi) @ carried
    return phidot, kin


def recursive_inverse_dynamics(model, q, qdot, qddot):
    """The joint forces ``tau`` (nq,) with ``M_r qddot = f_r + tau``, by two sweeps in O(n).

    The forward sweep (:func:`body_accelerations`) gives each body's acceleration; each body
    then needs the net wrench ``M_i phidot_i - f_i`` (``f_i`` its maximal forces: gravity, the
    Coriolis wrench, springs, ...). The backward sweep adds every child's wrench, carried into
    the parent's frame by ``Ad(E_c_p)^T``, and each joint takes its share along its columns::

        W_i = M_i phidot_i - f_i + sum_c Ad(E_c_i)^T W_c,     tau_i = (Ad(E_i_j) S_i)^T W_i - f_joint,i

    where ``f_joint`` holds the joint springs and dampers (Eq. 2.79-2.80). It equals the dense
    :func:`redmax_edu.dynamics.inverse_dynamics` (``J^T (M phidot - f_m)`` gathered body by body).
    Models with deformable bodies are refused: their nodes do not belong to the tree.

    Examples
    --------
    The torque that holds a 2 kg bob 1 m out horizontally is its weight times the arm:

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> recursive_inverse_dynamics(pendulum, [np.pi / 2], [0.0], [0.0])
    array([19.62])
    """
    _check_rigid(model, "recursive_inverse_dynamics", "inverse_dynamics")
    phidot, kin = body_accelerations(model, q, qdot, qddot)
    q, qdot = model.check_state(q, qdot)
    f_m = maximal_forces(model, kin.E_wi, kin.phi).reshape(model.n, 6)
    W = (model.spatial_inertias @ phidot[:, :, None])[:, :, 0] - f_m
    A_ij = joint_twist_adjoints(model)
    f_joint = joint_forces(model, q, qdot)
    tau = np.empty(model.nq)
    for i in reversed(range(model.n)):
        s, p = model.dofs[i], model.parents[i]
        tau[s] = (A_ij[i] @ kin.S[i]).T @ W[i] - f_joint[s]
        if p >= 0:
            W[p] += kin.A_ip[i].T @ W[i]
    return tau


def _check_rigid(model, name, dense):
    """Refuse a model with deformable bodies: their nodes do not belong to the tree."""
    if check_model(model).deformables:
        raise ValueError(f"argument 'model' has deformable bodies, which {name} does not handle: "
                         f"use redmax_edu.dynamics.{dense}")
    return model


@dataclass(frozen=True)
class _Articulated:
    """What Algorithm 9's backward traversal learns from ``q`` alone (lines 7, 12-14), per body i.

    ``S[i]`` is joint i's ``S`` seen from its body's frame, ``Ad(E_i_j) S_i`` (6, ndof_i);
    ``M_hat[i]`` (6, 6) body i's inertia plus what its children's joints pass on; ``Psi[i] =
    (S_i^T M_hat_i S_i + P_r_i)^-1``, ``U[i] = M_hat_i S_i Psi_i`` and ``SM[i] = S_i^T M_hat_i``
    (None for a prescribed joint); ``A_ip`` the adjoints ``Ad(E_i_p)`` (n, 6, 6).
    """

    A_ip: np.ndarray
    S: list
    M_hat: np.ndarray
    Psi: list
    U: list
    SM: list


def _articulated_inertias(model, q, kin, prescribed=(), P_m=None, P_r=None):
    """The inertia half of Algorithm 9's backward traversal (lines 7, 12-14; Alg. 10, lines 2-12).

    It depends on ``q`` only (``q`` serves the error message), so Algorithm 10 does it once for
    many right-hand sides. ``P_m`` (n, 6, 6) and ``P_r`` (an ndof x ndof matrix per joint) are
    the preconditioner terms of Algorithm 10, in body frames. Returns an :class:`_Articulated`.

    Here and in :func:`_hybrid_sweeps` the products of small matrices are written ``X.dot(Y)``:
    for 6x6 operands numpy's ``@`` costs two to three times as much, in loops that are all
    call overhead.
    """
    n, A_ip = model.n, kin.A_ip
    S = [A.dot(S_j) for A, S_j in zip(tree_constants(model).A_ij, kin.S, strict=True)]
    M_hat = model.spatial_inertias.copy()
    if P_m is not None:
        M_hat += P_m                                           # Alg. 10, lines 7 and 9
    Psi, U, SM = [None] * n, [None] * n, [None] * n
    for i in reversed(range(n)):                               # backward traversal
        p = model.parents[i]
        if i in prescribed:
            Pi = M_hat[i]                                      # a prescribed joint passes all of M_hat on
        else:
            SM[i] = S[i].T.dot(M_hat[i])
            D = SM[i].dot(S[i]) if P_r is None else SM[i].dot(S[i]) + P_r[i]
            try:
                Psi[i] = _small_inverse(D)                     # line 12
            except np.linalg.LinAlgError:
                raise _singular(model, q, i) from None
            if p < 0:                                          # a root passes nothing on (U, Pi unused)
                continue
            U[i] = M_hat[i].dot(S[i]).dot(Psi[i])
            Pi = M_hat[i] - U[i].dot(SM[i])                    # line 14
        if p >= 0:
            M_hat[p] += A_ip[i].T.dot(Pi).dot(A_ip[i])         # line 7, for the parent
    return _Articulated(A_ip, S, M_hat, Psi, U, SM)


def _small_inverse(D):
    """``D^-1`` of an ndof x ndof matrix; 1x1 by a division, which costs a quarter of LAPACK's call."""
    if D.shape == (1, 1) and D[0, 0] != 0.0:
        return 1.0 / D
    return np.linalg.inv(D)                                    # raises LinAlgError when singular


def _singular(model, q, i):
    """The error for a joint whose articulated inertia ``S^T M_hat S`` cannot be inverted."""
    name, joint = model.names[i], model.bodies[i].joint
    why = dict(singular_joints(model, q)).get(name)
    if why is None:  # the joint is fine: what it carries has no inertia along its motion
        why = ("moves a subtree without inertia along its motion (S^T M_hat S cannot be inverted): "
               "give the bodies it carries a mass and inertia")
    return SingularMassMatrixError(f"the reduced mass matrix M_r is singular: the {joint.kind} joint of "
                                   f"body {name!r} {why}")


def _hybrid_sweeps(model, art, eta, f, tau, qddot, prescribed=()):
    """The force half of Algorithm 9's backward traversal (lines 8, 10, 15) and its second forward one.

    ``art`` is the inertia half (:func:`_articulated_inertias`). Arrays may carry k right-hand
    sides in a last axis: ``eta``, ``f`` (n, 6[, k]), ``tau``, ``qddot`` (nq[, k]). ``f`` holds
    each body's maximal wrench (Coriolis, gravity, external), ``tau`` the joint forces;
    ``qddot`` holds the accelerations of the ``prescribed`` joints and receives the others;
    ``tau`` receives the prescribed joints' ``S^T F`` (line 22).

    The loops carry ``bias_i = B_hat_i + M_hat_i eta_i``, the wrench body i's subtree needs when
    neither its parent nor joint i accelerates. With ``u_i = tau_i - S_i^T bias_i``, lines 15
    and 24 read ``beta_i = bias_i + M_hat_i S_i Psi_i u_i`` and
    ``qddot_i = Psi_i (u_i - S_i^T M_hat_i Ad(E_i_p) Vdot_p)``.
    """
    A_ip, S, M_hat, Psi, U, SM = art.A_ip, art.S, art.M_hat, art.Psi, art.U, art.SM
    n, parents, dofs = model.n, model.parents, model.dofs
    # line 8 (-f: -ad(V)^T M V - F_ext), + M_hat eta
    bias = (M_hat @ eta.reshape(n, 6, -1)).reshape(eta.shape) - f
    u = np.empty_like(tau)
    for i in reversed(range(n)):                               # backward traversal
        s, p = dofs[i], parents[i]
        if i in prescribed:
            if p >= 0:
                bias[p] += A_ip[i].T.dot(bias[i] + M_hat[i].dot(S[i].dot(qddot[s])))   # lines 8, 10
        else:
            u[s] = tau[s] - S[i].T.dot(bias[i])                # what is left to accelerate joint i
            if p >= 0:
                bias[p] += A_ip[i].T.dot(bias[i] + U[i].dot(u[s]))                      # lines 8, 15
    Vdot = np.zeros((n + 1,) + eta.shape[1:])                  # Vdot[-1]: the world, at rest
    carries = set(parents)                                     # the bodies whose Vdot a child needs
    for i, p in enumerate(parents):                            # line 18: forward traversal
        s = dofs[i]
        a = A_ip[i].dot(Vdot[p])
        if i in prescribed:
            Vdot[i] = a + S[i].dot(qddot[s]) + eta[i]                                 # line 20
            tau[s] = S[i].T.dot(M_hat[i].dot(Vdot[i] - eta[i]) + bias[i])            # lines 21-22
        else:
            qddot[s] = Psi[i].dot(u[s] - SM[i].dot(a))                                # line 24
            if i in carries:
                Vdot[i] = a + S[i].dot(qddot[s]) + eta[i]                             # line 25
    return qddot, tau


def _prescribed_indices(model, prescribed):
    """``{body index: key}`` for the keys of ``prescribed`` (body indices or names), checked."""
    if prescribed is None:
        return {}
    if not isinstance(prescribed, dict):
        raise ValueError("argument 'prescribed' must be a dict {body index or name: accelerations of its "
                         f"joint}}, got {type(prescribed).__name__}")
    out = {}
    for key in prescribed:
        i = model.index(key) if isinstance(key, str) else as_index(key, "prescribed")
        if i >= model.n:
            raise ValueError(f"argument 'prescribed': body index {i} does not exist (the model has "
                             f"{model.n} bodies)")
        if i in out:
            raise ValueError(f"argument 'prescribed' names body {model.names[i]!r} twice "
                             f"({out[i]!r} and {key!r})")
        out[i] = key
    return out


def recursive_hybrid_dynamics(model, q, qdot, tau=None, prescribed=None):
    """Accelerations of the free joints and torques of the prescribed ones, by Algorithm 9 in O(n).

    The hybrid problem of §2.9 (Eq. 2.113) without its dense matrices: the joints in
    ``prescribed`` follow the given accelerations, the others obey ``M_r qddot = f_r + tau``
    (Eq. 2.19) under the torques the prescribed joints need to do so.

    Written in body frames: body i's twist ``V_i = phi_i`` (line 3), its joint's Jacobian seen
    from the body, ``Ad(E_i_j) S_i`` (written ``S_i`` below, likewise ``Sdot_i``), the velocity
    product ``eta_i = ad(V_i) S_i qdot_i + Sdot_i qdot_i`` (line 4; so that
    ``phidot_i = Ad(E_i_p) phidot_p + S_i qddot_i + eta_i``). The backward traversal
    gathers the articulated inertia ``M_hat_i`` and bias wrench ``B_hat_i`` of each subtree,
    starting from ``M_i`` and ``-f_i`` (``f_i`` body i's maximal wrench: the Coriolis wrench
    ``ad(V_i)^T M_i V_i``, gravity, body damping and the model's forces, as in
    :func:`redmax_edu.dynamics.maximal_forces`); a free joint passes on what its motion cannot
    absorb (``Pi_i``, ``beta_i``), a prescribed one passes on everything. The second forward
    traversal solves each free joint's ``ndof x ndof`` system (line 24) from the root out.

    Parameters
    ----------
    model : Model
        Without deformable bodies or constraints (a ValueError names the argument otherwise;
        :func:`recursive_constrained_dynamics` takes constraints, and prescribes joints by
        :class:`redmax_edu.constraints.PrescribedJoint`).
    q, qdot : array_like, shape (nq,)
    tau : array_like, shape (nq,), optional
        Applied joint forces, default zero; the joint springs and dampers of §2.5 are added.
        Entries of prescribed joints do not change the motion.
    prescribed : dict, optional
        ``{body index or name: accelerations (ndof,) of that body's joint}``.

    Returns
    -------
    qddot : ndarray, shape (nq,)
        Equal to the given accelerations on the prescribed joints.
    torques : dict
        ``{key of prescribed: (ndof,)}``: the joint force each prescribed joint must apply
        beside its springs and dampers (``S^T F``, line 22, minus them); equal to
        :func:`redmax_edu.dynamics.inverse_dynamics` of the resulting ``qddot`` on that joint.
        The multiplier of Eq. (2.113) is this minus the given ``tau``.

    Examples
    --------
    A two-link arm whose shoulder is driven at 1 rad/s^2, from rest and hanging straight: the
    elbow is thrown back, and the shoulder needs the torque of dense inverse dynamics.

    >>> from redmax_edu.dynamics import inverse_dynamics
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> hinge = dict(joint=Revolute([0, 1, 0]), T_joint_body=T, mass=1.0, inertia=0.1 * np.eye(3))
    >>> arm = Model([Body("upper", -1, T_parent_joint=np.eye(4), **hinge),
    ...              Body("lower", 0, T_parent_joint=T, **hinge)])
    >>> qddot, torques = recursive_hybrid_dynamics(arm, [0.0, 0.0], [0.0, 0.0], prescribed={"upper": [1.0]})
    >>> qddot.round(6), torques["upper"].round(6)
    (array([ 1.      , -1.909091]), array([1.190909]))
    >>> bool(np.isclose(inverse_dynamics(arm, [0.0, 0.0], [0.0, 0.0], qddot)[0], torques["upper"][0]))
    True
    """
    _check_rigid(model, "recursive_hybrid_dynamics", "forward_dynamics")
    if model.constraints:
        raise ValueError("argument 'model' has constraints, which recursive_hybrid_dynamics does not take "
                         "into account: use recursive_constrained_dynamics (with PrescribedJoint "
                         "constraints for the prescribed joints)")
    q, qdot = model.check_state(q, qdot)
    tau = None if tau is None else as_array(tau, (model.nq,), "tau", real=True)
    chosen = _prescribed_indices(model, prescribed)
    qddot = np.zeros(model.nq)
    for i, key in chosen.items():
        qddot[model.dofs[i]] = as_array(prescribed[key], (model.bodies[i].joint.ndof,),
                                        f"prescribed[{key!r}]", real=True)
    qddot, needed = _hybrid(model, q, qdot, tau, forward_kinematics_unchecked(model, q, qdot), qddot, chosen)
    return qddot, {key: needed[model.dofs[i]] for i, key in chosen.items()}


def _hybrid(model, q, qdot, tau, kin, qddot, prescribed=()):
    """Algorithm 9 at a checked state, after its first forward traversal ``kin`` (lines 1-3).

    ``tau`` (nq,) or None are the applied joint forces (the joint springs and dampers of §2.5
    are added here); ``qddot`` (nq,) holds the accelerations of the joints of the bodies in
    ``prescribed`` and receives the others. Returns ``qddot`` and the joint forces ``needed``
    (nq,) whose entries on the prescribed joints are what those joints must apply beside their
    springs and dampers (line 22; the other entries are the applied forces).
    """
    art = _articulated_inertias(model, q, kin, prescribed)
    return _hybrid_forces(model, q, qdot, tau, kin, art, _velocity_products(model, kin, art, qdot), qddot,
                          prescribed)


def _hybrid_forces(model, q, qdot, tau, kin, art, eta, qddot, prescribed):
    """The force half of :func:`_hybrid`, given the articulated inertias ``art`` and velocity
    products ``eta`` (which depend on the state only, not on the forces or prescribed values)."""
    f = maximal_forces_unchecked(model, kin.E_wi, kin.phi).reshape(model.n, 6)
    f_joint = joint_forces_unchecked(model, q, qdot)
    applied = f_joint.copy() if tau is None else tau + f_joint
    qddot, out = _hybrid_sweeps(model, art, eta, f, applied, qddot, prescribed)
    return qddot, out - f_joint


def _bias_accelerations(model, kin, eta):
    """``Jdot qdot`` (n, 6): the body accelerations of Alg. 9's forward sweep with ``qddot = 0``,
    ``a_i = Ad(E_i_p) a_p + eta_i`` (the rows' velocity products need it, Eq. 2.128)."""
    a = eta.copy()
    for i, p in enumerate(model.parents):
        if p >= 0:
            a[i] += kin.A_ip[i].dot(a[p])
    return a


def _velocity_products(model, kin, art, qdot):
    """``eta_i = ad(V_i) S_i qdot_i + Sdot_i qdot_i`` (Alg. 9, line 4), in body frames, shape (n, 6).

    With it ``phidot_i = Ad(E_i_p) phidot_p + S_i qddot_i + eta_i``: summed from the root with
    ``qddot = 0``, the etas give ``Jdot qdot``.
    """
    tree = tree_constants(model)
    if tree.has_parents:
        S_qdot = np.array([S_i.dot(qdot[s]) for S_i, s in zip(art.S, model.dofs, strict=True)])
    else:                                                      # roots alone: S_i qdot_i is the twist V_i
        S_qdot = kin.phi
    Sdot_qdot = np.array([Sd.dot(qdot[s]) for Sd, s in zip(kin.Sdot, model.dofs, strict=True)])[:, :, None]
    return (ad_unchecked(kin.phi) @ S_qdot[:, :, None] + tree.A_ij @ Sdot_qdot)[:, :, 0]


def recursive_forward_dynamics(model, q, qdot, tau=None, *, t=0.0, baumgarte=None):
    """Accelerations ``qddot`` (nq,) from ``M_r qddot = f_r + tau`` (Eq. 2.19) by Algorithm 9 in O(n).

    :func:`recursive_hybrid_dynamics` with no prescribed joint (Featherstone's articulated-body
    algorithm, in RedMax's body frames); equal to :func:`redmax_edu.dynamics.forward_dynamics`.
    A model with constraints is solved by :func:`recursive_constrained_dynamics` at time ``t``
    with the Baumgarte gains ``baumgarte = (alpha, beta, gamma)`` (alpha and beta are used;
    default :data:`redmax_edu.constraints.DEFAULT_BAUMGARTE`).

    Examples
    --------
    Released horizontal: ``qddot = -m g L / (I + m L^2)``, as the dense path gives.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> recursive_forward_dynamics(pendulum, [np.pi / 2], [0.0])
    array([-9.76119403])
    """
    _check_rigid(model, "recursive_forward_dynamics", "forward_dynamics")
    q, qdot = model.check_state(q, qdot)
    gains = DEFAULT_BAUMGARTE if baumgarte is None else check_baumgarte(baumgarte)
    return recursive_forward_dynamics_unchecked(model, q, qdot, check_tau(model, tau), as_scalar(t, "t"),
                                                gains)


def recursive_forward_dynamics_unchecked(model, q, qdot, tau=None, t=0.0, baumgarte=DEFAULT_BAUMGARTE):
    """:func:`recursive_forward_dynamics` of a rigid model at a checked state, ``tau`` (an (nq,)
    array or None), time and gains: the core that ``simulate(method="rk45_recursive")`` calls."""
    if model.constraints:
        return _recursive_constrained_dynamics(model, q, qdot, tau, t, baumgarte).x
    return _hybrid(model, q, qdot, tau, forward_kinematics_unchecked(model, q, qdot), np.zeros(model.nq))[0]


def recursive_constrained_dynamics(model, q, qdot, tau=None, *, t=0.0, baumgarte=DEFAULT_BAUMGARTE):
    """Accelerations and constraint forces of a model with constraints, in O(n) per constraint row (§2.12).

    The same solution as :func:`redmax_edu.dynamics.constrained_dynamics` (the rows of
    :func:`redmax_edu.constrained.assemble_constraints` at time ``t``, Baumgarte's terms
    with the gains ``alpha``, ``beta`` of ``baumgarte``), reached without ``M_r`` or ``J``
    (Eq. 2.128-2.134):

    1. Every :class:`redmax_edu.constraints.PrescribedJoint` that prescribes a whole joint
       becomes a prescribed joint of Algorithm 9, with the stabilised acceleration of its
       rows, ``qddot_p - 2 alpha (qdot - qdot_p) - beta^2 (q - q_p)``: Algorithm 9 gives the
       accelerations ``qddot*`` of the others without the remaining constraints, and the
       torques the prescribed joints need.
    2. The other rows ``Gbar`` that enter the solve (every equality, every active inequality)
       are mapped to reduced rows without ``J`` (Eq. 2.128): ``Gbar^T = G_r^T + J^T G_m^T`` by
       Algorithm 6, and the velocity products ``G_m Jdot qdot`` from Algorithm 9's own
       ``eta`` (``Jdot qdot`` is the body accelerations at ``qddot = 0``). Algorithm 10 (the
       sweeps of Algorithm 9 without forces and velocity products, with the same prescribed
       joints held still) gives ``Y = M^-1 Gbar^T``, one column per row, and the Delassus
       operator ``D = Gbar Y`` (Eq. 2.130). Here ``M^-1`` is the inverse of the free joints'
       block of ``M_r``: a force on a prescribed joint does not move it.
    3. The multipliers solve the dual problem ``D lambda = rhs - Gbar qddot*`` (Eq. 2.130,
       with the library's sign, ``M_r qddot = f_r + tau + Gbar^T lambda``), ``rhs`` the rows'
       right-hand side (:meth:`~redmax_edu.constrained.ConstraintRows.acceleration_rhs`). If
       an active inequality then fails, the dual QP of Eq. (2.134), minimise
       ``lambda^T D lambda / 2 - lambda^T (rhs - Gbar qddot*)`` with ``lambda >= 0`` on the
       inequality rows (pushing; Eq. 2.134's ``lambda_C <= 0`` is for the opposite sign of
       Eq. 2.129), solved like the dense path's primal QP (qpsolvers with quadprog). Contacts
       may repeat each other's rows (four points of one body on a floor) and an active
       limit may repeat the equalities, which leaves ``D`` only semidefinite and quadprog
       refuses it: the QP is solved by proximal steps, each with ``D + 1e-6 diag(D)`` and
       pulled towards the last multipliers, which converge to a solution of the QP itself
       (to round-off in a few steps). A row that only moves prescribed joints cannot push;
       if it is violated, there is no solution, as in the dense QP.
    4. ``qddot = qddot* + Y lambda``: Algorithm 9 rerun with the constraint forces
       ``f_con = Gbar^T lambda`` (Eq. 2.131), by linearity; the prescribed joints' torques
       change likewise, and the part of them beyond the applied ``tau`` and ``f_con`` is
       their multiplier (Eq. 2.113).

    Parameters
    ----------
    model : Model
        Without deformable bodies.
    q, qdot : array_like (nq,)
    tau : array_like (nq,), optional
    t : float
        Time, for prescribed motion.
    baumgarte : (alpha, beta, gamma)
        Stabilisation gains (1/s); gamma is the velocity level's and is not used here.

    Returns
    -------
    redmax_edu.constrained.ConstrainedSolution
        ``x`` is ``qddot``, ``lam`` one multiplier per row of ``rows`` (zero for an inactive
        inequality), ``generalized_force(k)`` constraint k's force; a prescribed joint's is
        the torque its motion needs.

    Examples
    --------
    Two hinges whose angles must stay equal move as one, as the dense KKT solve finds:

    >>> from redmax_edu.constraints import CoordinateCoupling
    >>> from redmax_edu.dynamics import constrained_dynamics
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -0.5
    >>> link = dict(joint=Revolute([0, 1, 0]), T_joint_body=T, mass=1.0, inertia=0.01 * np.eye(3))
    >>> top = np.eye(4); top[2, 3] = -1.0
    >>> model = Model([Body("a", -1, T_parent_joint=np.eye(4), **link),
    ...                Body("b", 0, T_parent_joint=top, **link)], constraints=[CoordinateCoupling(0, 1)])
    >>> sol = recursive_constrained_dynamics(model, [0.3, 0.3], [0.0, 0.0])
    >>> bool(np.isclose(sol.x[0], sol.x[1]))
    True
    >>> dense = constrained_dynamics(model, [0.3, 0.3], [0.0, 0.0])
    >>> bool(np.allclose(sol.x, dense.x, atol=1e-12) and np.allclose(sol.lam, dense.lam, atol=1e-12))
    True
    """
    _check_rigid(model, "recursive_constrained_dynamics", "constrained_dynamics")
    q, qdot = model.check_state(q, qdot)
    return _recursive_constrained_dynamics(model, q, qdot, check_tau(model, tau), as_scalar(t, "t"),
                                           check_baumgarte(baumgarte))


_NATIVE = weakref.WeakKeyDictionary()

#: The dual QP's proximal weight (relative to the Delassus diagonal) and its most steps.
_PROXIMAL, _PROXIMAL_STEPS = 1e-6, 8


def _native_prescriptions(model):
    """The prescribed joints that Algorithm 9 takes natively, cached per (immutable) model:
    ``{body index: (constraint index, coordinates)}`` for each :class:`PrescribedJoint` that
    prescribes all of its joint's coordinates (the first such one per joint; a repeated one
    stays a row, and the solve then names it as redundant)."""
    native = _NATIVE.get(model)
    if native is None:
        native = {}
        for k, c in enumerate(model.constraints):
            if isinstance(c, PrescribedJoint) and c.body not in native:
                cols = c.columns(model)
                if len(cols) == model.bodies[c.body].joint.ndof:
                    native[c.body] = (k, cols)
        _NATIVE[model] = native
    return native


def _recursive_constrained_dynamics(model, q, qdot, tau, t, baumgarte):
    """:func:`recursive_constrained_dynamics` of a checked state, ``tau`` (an (nq,) array or None),
    time and gains."""
    alpha, beta, _ = baumgarte
    native = _native_prescriptions(model)
    kin = forward_kinematics_unchecked(model, q, qdot)
    art = _articulated_inertias(model, q, kin, native)
    eta = _velocity_products(model, kin, art, qdot)
    # the rows: G_m J by Alg. 6, without J; Jdot qdot from Alg. 9's velocity products
    Jdot_qdot = _bias_accelerations(model, kin, eta)
    rows = assemble_constraints(model, q, qdot, kin, None, None, t, Jdot_qdot=Jdot_qdot)
    rhs = rows.acceleration_rhs(qdot, alpha, beta)
    solved = rows.active.copy()                                # the rows of the dual problem
    qddot = np.zeros(model.nq)
    for k, cols in native.values():                            # the stabilised prescribed accelerations
        block = rows.blocks[k]
        qddot[cols] = rhs[block]
        solved[block] = False
    qddot, needed = _hybrid_forces(model, q, qdot, tau, kin, art, eta, qddot, native)
    lam = np.zeros(len(rhs))
    sel = np.flatnonzero(solved)
    f_con = np.zeros(model.nq)
    if len(sel):
        G = rows.G[sel]
        zero = np.zeros((model.n, 6, len(sel)))
        # Alg. 10 on the columns of Gbar^T: Y = M^-1 Gbar^T, and the prescribed joints' answer to them
        Y, response = _hybrid_sweeps(model, art, zero, zero, G.T.copy(), np.zeros(G.T.shape), native)
        lam[sel] = _dual_multipliers(model, q, rows, sel, G, Y, qddot, rhs[sel])
        qddot = qddot + Y @ lam[sel]                          # Eq. (2.131), through Alg. 9 by linearity
        needed = needed + response @ lam[sel]
        f_con = G.T @ lam[sel]
    for k, cols in native.values():                            # what the prescription adds (Eq. 2.113)
        lam[rows.blocks[k]] = needed[cols] - f_con[cols] - (0.0 if tau is None else tau[cols])
    return ConstrainedSolution(qddot, lam, rows)


def _dual_multipliers(model, q, rows, sel, G, Y, qddot, rhs):
    """The multipliers of the rows ``sel`` (reduced rows ``G``, ``Y = M^-1 G^T``, right-hand
    side ``rhs``) from the unconstrained accelerations ``qddot``: Eq. (2.130) on the equality
    rows, then, if an active inequality fails, the dual QP of Eq. (2.134)."""
    D = G @ Y                                                  # the Delassus operator
    b = rhs - G @ qddot
    ineq = rows.inequality[sel]
    eq = ~ineq
    lam = np.zeros(len(sel))
    if eq.any():
        try:
            lam[eq] = np.linalg.solve(D[np.ix_(eq, eq)], b[eq])
        except np.linalg.LinAlgError:
            check_constraint_set(model, rows, ~rows.inequality)   # names a redundant constraint, if one is
            raise SingularMassMatrixError(explain_singular(
                model, q, "the Delassus operator G M_r^-1 G^T of the constraint rows (Eq. 2.130)")) from None
    if not ineq.any() or not violates(G[ineq], qddot + Y @ lam, rhs[ineq]):
        return lam
    # An inequality that cannot act (its row only moves prescribed joints) takes no part: the
    # solution must satisfy it as it is. Repeated contact rows leave D only semidefinite, which
    # quadprog refuses: proximal steps, each a QP with D + eps W (W = diag D) pulled towards the
    # last multipliers, converge to a solution of the QP itself (to round-off in a few steps).
    d = np.diag(D)
    live = eq | (d > 1e-12 * d.max())
    if (live & ineq).any():
        P, r, W = D[np.ix_(live, live)], b[live], _PROXIMAL * d[live]
        C, none = np.eye(live.sum())[ineq[live]], np.zeros((0, live.sum()))
        x = lam[live]
        for _ in range(_PROXIMAL_STEPS):
            x_old = x
            x, _, _ = inequality_qp(P + np.diag(W), r + W * x_old, none, np.zeros(0), C, np.zeros(len(C)))
            if np.abs(W * (x - x_old)).max() <= 1e-14 * (1.0 + np.abs(r).max()):
                break
        lam[live] = x
    residual = G @ (qddot + Y @ lam) - rhs
    scale = 1e-9 * (1.0 + np.abs(rhs))
    if np.any(np.abs(residual[eq]) > scale[eq]) or np.any(residual[ineq] < -scale[ineq]):
        raise ValueError(NO_QP_SOLUTION)
    return lam


class InverseInertia:
    """``M_r^{-1}`` (or the inverse of Algorithm 10's preconditioner) at one ``q``, as an operator.

    Holds the preprocessing of Algorithm 10 (lines 1-12: the articulated inertias, O(n));
    ``inv @ x`` then costs O(n) per right-hand side (lines 14-22): it is Algorithm 9 run with
    ``x`` as the joint forces and the force and momentum terms removed (§2.12-2.13). Make one
    with :func:`inverse_inertia`.
    """

    def __init__(self, model, articulated):
        self.model, self._articulated = model, articulated

    def __matmul__(self, x):
        """``M_r^{-1} x`` for ``x`` of shape (nq,) or (nq, k) (k right-hand sides at once)."""
        x = as_columns(x, self.model.nq, "x")
        zero = np.zeros((self.model.n, 6) + x.shape[1:])          # no velocity products, no forces
        y, _ = _hybrid_sweeps(self.model, self._articulated, zero, zero, x.copy(), np.zeros_like(x))
        return y


def inverse_inertia(model, q, qdot=None, h=None):
    """Algorithm 10's preprocessing at ``q``: an :class:`InverseInertia` with ``inv @ x = M_r^{-1} x``.

    With a step ``h``, ``inv @ x`` is instead the preconditioner of the linearly implicit Euler
    step (Eq. 2.86, :func:`redmax_edu.dynamics.linearly_implicit_euler_step`),

        (M_r - h df/dqdot - h^2 df/dq)^{-1} x,    df/dqdot = J^T D_m J - D_r,   df/dq = J^T K_m J - K_r,

    where the joint dampers ``D_r`` and springs ``K_r`` enter fully (Alg. 10, line 6) but of the
    maximal ``D_m = df_m/dphi`` and ``K_m = df_m/dq`` only the 6x6 blocks of each body on its
    own (line 7): a force coupling two bodies (a spring between them) would couple two
    branches of the tree, which the recursion cannot express. With body damping and forces
    acting on one body each, it is the exact matrix of the step. (Alg. 10 writes the reduced
    terms as ``h D_r - h^2 K_r``, in the sign convention of Eq. 2.86; with the positive
    stiffness ``K_r`` of Eq. 2.85 it is ``+ h^2 K_r``, as in Eq. 2.84 and here.)

    Parameters
    ----------
    model : Model
        Without deformable bodies.
    q : array_like, shape (nq,)
    qdot : array_like, shape (nq,), optional
        Needed with ``h``: ``D_m`` and ``K_m`` are taken at ``(q, qdot)``.
    h : float, optional
        The step size (> 0) of the preconditioner; without it, ``M_r^{-1}``.

    Returns
    -------
    InverseInertia

    Examples
    --------
    For one hinge, ``M_r`` is ``I + m L^2 = 2.01``; a damper of 0.5 adds ``h D = 0.005`` at 10 ms.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3),
    ...                        damping=0.5)])
    >>> inverse_inertia(pendulum, [0.3]) @ [2.01]
    array([1.])
    >>> inverse_inertia(pendulum, [0.3], [0.0], h=0.01) @ [2.015]
    array([1.])
    """
    _check_rigid(model, "inverse_inertia", "mass_matrix")
    P_m = P_r = None
    if h is None:
        q = model.check_state(q)
        kin = forward_kinematics(model, q)
    else:
        h = as_scalar(h, "h", minimum=0.0, strict=True)
        if qdot is None:
            raise ValueError("argument 'qdot' is needed with 'h': the maximal damping and stiffness of "
                             "the preconditioner are taken at (q, qdot)")
        q, qdot = model.check_state(q, qdot)
        kin = forward_kinematics(model, q, qdot)
        terms = maximal_forces(model, kin.E_wi, kin.phi, derivatives=True)
        own = np.arange(model.n)                                  # each body's own 6x6 block
        P_m = -(h * terms.D + h * h * terms.K).reshape(model.n, 6, model.n, 6)[own, :, own, :]   # line 7
        P_r = [np.diag(h * model.damping[s] + h * h * model.stiffness[s]) for s in model.dofs]  # line 6
    return InverseInertia(model, _articulated_inertias(model, q, kin, P_m=P_m, P_r=P_r))


def inverse_inertia_product(model, q, x, qdot=None, h=None):
    """``M_r^{-1} x`` by Algorithm 10 (``x`` of shape (nq,) or (nq, k)); ``inverse_inertia(...) @ x``.

    See :func:`inverse_inertia` for ``qdot`` and ``h`` (the preconditioner form). To apply the
    same inverse to many vectors, keep the :class:`InverseInertia` instead.

    Examples
    --------
    Identity columns give the whole inverse, here of a single hinge:

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> inverse_inertia_product(pendulum, [0.3], np.eye(1)).round(6)
    array([[0.497512]])
    """
    return inverse_inertia(model, q, qdot, h) @ x
