"""The Jacobian ``J_mr`` from reduced to maximal velocities and its time derivative (§2.1-2.2).

``J_mr`` (6n x nq) maps the joint velocities to the stacked body twists, ``phi = J_mr qdot``
(Eq. 2.1, 2.13). Row block i is body i, column block k is joint k. Algorithm 1 fills it in
one forward sweep: the diagonal block is ``Ad(E_i_j) S_i`` and every block to its left is the
parent's block premultiplied by ``Ad(E_i_p)`` (Eq. 2.14). Algorithm 2 differentiates the same
sweep in time (Eq. 2.16-2.18) to get ``Jdot_mr``, which the quadratic velocity vector of the
RedMax equations needs (Eq. 2.19).

Taught in book/02_reduced/02_jacobian.
"""

import numpy as np

from .kinematics import forward_kinematics, joint_twist_adjoints
from .lie import ad_unchecked, adjoint_unchecked, inv_se3_unchecked

__all__ = ["jacobian", "jacobian_and_derivative"]


def _fill(model, q, qdot):
    """Algorithms 1 and 2 in one sweep; ``qdot=None`` skips the time derivative."""
    want_dot = qdot is not None
    kin = forward_kinematics(model, q, qdot)
    A_ij = joint_twist_adjoints(model)
    E_iw = inv_se3_unchecked(kin.E_wi)
    n, nq = model.n, model.nq
    J = np.zeros((n, 6, model.nq))
    Jdot = np.zeros((n, 6, nq)) if want_dot else None
    phi = np.zeros((n, 6))
    for i, body in enumerate(model.bodies):
        s = model.dofs[i]
        J[i, :, s] = A_ij[i] @ kin.S[i]                          # diagonal block, Alg. 1 line 3
        p = body.parent
        if p >= 0:
            A_ip = adjoint_unchecked(E_iw[i] @ kin.E_wi[p])      # parent body -> body i
            J[i] += A_ip @ J[p]                                  # every ancestor column at once
        if want_dot:
            phi[i] = J[i] @ qdot
            Jdot[i, :, s] = A_ij[i] @ kin.Sdot[i]                # Eq. (2.16)
            if p >= 0:
                # d/dt Ad(E_i_p) = -ad(phi_i) Ad(E_i_p) + Ad(E_i_p) ad(phi_p)   (Eq. 2.18)
                A_ip_dot = -ad_unchecked(phi[i]) @ A_ip + A_ip @ ad_unchecked(phi[p])
                Jdot[i] += A_ip_dot @ J[p] + A_ip @ Jdot[p]      # Eq. (2.17)
    J = J.reshape(6 * n, nq)
    return (J, None) if not want_dot else (J, Jdot.reshape(6 * n, nq))


def jacobian(model, q):
    """``J_mr`` at ``q`` by Algorithm 1: shape (6n, nq), body twists ``phi = J_mr @ qdot``.

    Examples
    --------
    A revolute joint about z at the world origin, with the body 1 m along x: spinning at
    1 rad/s gives the body angular velocity (0, 0, 1) and, in body axes, the velocity (0, 1, 0).

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[0, 3] = 1.0
    >>> model = Model([Body("arm", -1, Revolute([0, 0, 1]), np.eye(4), T, 1.0, np.eye(3))])
    >>> jacobian(model, [0.0]).ravel()
    array([0., 0., 1., 0., 1., 0.])
    """
    return _fill(model, model.check_state(q), None)[0]


def jacobian_and_derivative(model, q, qdot):
    """``(J_mr, Jdot_mr)`` by Algorithm 2, each of shape (6n, nq)."""
    q, qdot = model.check_state(q, qdot)
    return _fill(model, q, qdot)
