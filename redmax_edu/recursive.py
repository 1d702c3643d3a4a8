"""Recursive (O(n)) dynamics of a tree in reduced coordinates (§2.12 of the writeup).

Two sweeps over the tree replace the dense matrices of Eq. (2.19): a forward sweep from the
root gives every body's twist and acceleration, a backward sweep from the leaves gathers the
wrench each joint transmits. This is the recursive Newton-Euler algorithm of Liu and Jain's
tutorial (the companion text of the book), written in RedMax's body frames and with its
joints: each joint provides ``S`` (6, ndof) and ``Sdot``, whatever its type.

The book's page on these sweeps (§2.12) is not written yet; the inverse-dynamics round trip of
book/04_companions/01_lagrangian_arm uses the dense path that this module equals.
"""

import numpy as np

from ._validate import as_array
from .dynamics import joint_forces, maximal_forces
from .kinematics import forward_kinematics, joint_twist_adjoints
from .lie import ad_unchecked
from .model import check_model


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
    model = check_model(model)
    if model.deformables:
        raise ValueError("argument 'model' has deformable bodies, which recursive_inverse_dynamics does "
                         "not handle: use redmax_edu.dynamics.inverse_dynamics")
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
