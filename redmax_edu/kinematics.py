"""Where the joints and bodies are, and how fast they move (Part 2 intro, Eq. 2.5-2.12).

Forward kinematics chains the joint transforms from the root outwards: joint i's frame in
the world is its parent joint's world frame times ``T_parent_joint @ Q_i(q_i)`` (Eq. 2.23),
and body i sits at the constant offset ``T_joint_body`` from its joint. The body twists
``phi_i`` follow from the same sweep (Eq. 2.8-2.12); :mod:`redmax_edu.jacobian` writes that
sweep as the matrix ``J_mr``.

Taught in book/02_reduced/01_reduced_coordinates and 02_jacobian.
"""

from dataclasses import dataclass

import numpy as np

from .lie import adjoint_unchecked, inv_se3_unchecked

__all__ = ["Kinematics", "forward_kinematics", "body_poses", "body_twists", "joint_twist_adjoints"]


@dataclass(frozen=True)
class Kinematics:
    """The result of one forward sweep over the tree, for n bodies.

    Attributes
    ----------
    E_pj : ndarray, shape (n, 4, 4)
        Each joint's frame in its parent joint's frame, ``T_parent_joint @ Q(q)``.
    E_wj : ndarray, shape (n, 4, 4)
        Each joint's frame in the world.
    E_wi : ndarray, shape (n, 4, 4)
        Each body's frame in the world.
    S, Sdot : tuple of ndarray, each (6, ndof_i)
        The joints' Jacobians and their time derivatives (Sdot is zero when no qdot was given).
    """

    E_pj: np.ndarray
    E_wj: np.ndarray
    E_wi: np.ndarray
    S: tuple
    Sdot: tuple


def forward_kinematics(model, q, qdot=None):
    """Joint and body frames of ``model`` at coordinates ``q`` (nq,), plus each joint's S and Sdot.

    ``qdot`` (nq,) is needed only for ``Sdot``; without it ``Sdot`` is zero.

    Returns
    -------
    Kinematics
    """
    q = model.check_state(q) if qdot is None else model.check_state(q, qdot)[0]
    qdot = np.zeros(model.nq) if qdot is None else model.check_state(q, qdot)[1]
    n = model.n
    E_pj = np.empty((n, 4, 4))
    E_wj = np.empty((n, 4, 4))
    S, Sdot = [], []
    for i, body in enumerate(model.bodies):
        s = model.dofs[i]
        Q, Si, Sdi = body.joint._evaluate(q[s], qdot[s])
        E_pj[i] = model.T_parent_joint[i] @ Q
        E_wj[i] = E_pj[i] if body.parent < 0 else E_wj[body.parent] @ E_pj[i]
        S.append(Si)
        Sdot.append(Sdi)
    E_wi = E_wj @ model.T_joint_body
    return Kinematics(E_pj, E_wj, E_wi, tuple(S), tuple(Sdot))


def body_poses(model, q):
    """The world frames of the bodies, ``E_w_i``, shape (n, 4, 4)."""
    return forward_kinematics(model, q).E_wi


def joint_twist_adjoints(model):
    """``Ad(E_i_j)``, shape (n, 6, 6): maps joint-frame twists to body-frame twists (constant)."""
    return adjoint_unchecked(inv_se3_unchecked(model.T_joint_body))


def body_twists(model, q, qdot):
    """Body twists ``phi_i = (omega_i; nu_i)`` in body coordinates, shape (n, 6), by Eq. (2.8)-(2.12).

    One sweep from the root: ``phi_i = Ad(E_i_p) phi_p + Ad(E_i_j) S_i qdot_i``, with the
    world at rest (``phi_0 = 0``). The same numbers as ``jacobian(model, q) @ qdot``, in O(n).
    """
    q, qdot = model.check_state(q, qdot)
    kin = forward_kinematics(model, q)
    A_ij = joint_twist_adjoints(model)
    E_iw = inv_se3_unchecked(kin.E_wi)
    phi = np.zeros((model.n, 6))
    for i, body in enumerate(model.bodies):
        phi[i] = A_ij[i] @ (kin.S[i] @ qdot[model.dofs[i]])
        if body.parent >= 0:
            phi[i] += adjoint_unchecked(E_iw[i] @ kin.E_wi[body.parent]) @ phi[body.parent]
    return phi
