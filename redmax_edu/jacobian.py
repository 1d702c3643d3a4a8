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

from .kinematics import _tree, forward_kinematics
from .lie import ad_unchecked

__all__ = ["jacobian", "jacobian_and_derivative", "fill_jacobian"]

_ZERO6 = np.zeros((1, 6, 6))


def fill_jacobian(model, kin, with_derivative=False):
    """Algorithms 1 and 2 from the results of a forward sweep ``kin`` (a :class:`.Kinematics`).

    Returns ``J`` (6n, nq), or ``(J, Jdot)`` when ``with_derivative`` (``kin`` must then
    carry the twists, i.e. come from ``forward_kinematics(model, q, qdot)``).

    Examples
    --------
    The same ``J`` as :func:`jacobian`, from a sweep already made:

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> from redmax_edu.kinematics import forward_kinematics
    >>> kin = forward_kinematics(pendulum, [0.3], [1.0])
    >>> bool(np.array_equal(fill_jacobian(pendulum, kin), jacobian(pendulum, [0.3])))
    True
    """
    n, nq = model.n, model.nq
    tree, A_ip = _tree(model), kin.A_ip
    A_ij = tree.A_ij
    J = np.zeros((n, 6, nq))
    if with_derivative:
        Jdot = np.zeros((n, 6, nq))
        if tree.has_parents:  # (a model of roots alone has no Ad(E_i_p) in J)
            # d/dt Ad(E_i_p) = -ad(phi_i) Ad(E_i_p) + Ad(E_i_p) ad(phi_p)   (Eq. 2.18), all bodies at once
            ad_phi = ad_unchecked(kin.phi)
            ad_parent = np.concatenate([ad_phi, _ZERO6])[tree.parents]  # a root's parent (the world) rests
            A_ip_dot = -ad_phi @ A_ip + A_ip @ ad_parent
    for i, p in enumerate(model.parents):
        s = model.dofs[i]
        J[i, :, s] = A_ij[i] @ kin.S[i]                          # Alg. 1: diagonal block
        if p >= 0:
            J[i] += A_ip[i] @ J[p]                               # Alg. 1: all ancestor blocks at once
        if with_derivative:
            Jdot[i, :, s] = A_ij[i] @ kin.Sdot[i]                # Eq. (2.16)
            if p >= 0:
                Jdot[i] += A_ip_dot[i] @ J[p] + A_ip[i] @ Jdot[p]  # Eq. (2.17)
    J = J.reshape(6 * n, nq)
    return (J, Jdot.reshape(6 * n, nq)) if with_derivative else J


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
    return fill_jacobian(model, forward_kinematics(model, q))


def jacobian_and_derivative(model, q, qdot):
    """``(J_mr, Jdot_mr)`` by Algorithm 2, each of shape (6n, nq).

    Examples
    --------
    One hinge: ``J`` is constant, so ``Jdot`` vanishes.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> J, Jdot = jacobian_and_derivative(pendulum, [0.3], [1.0])
    >>> J.ravel(), Jdot.ravel() + 0.0
    (array([ 0.,  1.,  0., -1.,  0.,  0.]), array([0., 0., 0., 0., 0., 0.]))
    """
    return fill_jacobian(model, forward_kinematics(model, q, qdot), with_derivative=True)
