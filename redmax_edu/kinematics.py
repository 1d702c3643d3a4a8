"""Where the joints and bodies are, and how fast they move (Part 2 intro, Eq. 2.5-2.12).

Forward kinematics chains the joint transforms from the root outwards: joint i's frame in
the world is its parent joint's world frame times ``T_parent_joint @ Q_i(q_i)`` (Eq. 2.23),
and body i sits at the constant offset ``T_joint_body`` from its joint. The body twists
follow from the same sweep (Eq. 2.8-2.12),

    phi_i = Ad(E_i_p) phi_p + Ad(E_i_j) S_i qdot_i,

with the world at rest. :mod:`redmax_edu.jacobian` writes that sweep as the matrix ``J_mr``.

Taught in book/02_reduced/01_reduced_coordinates and 02_jacobian.
"""

import weakref
from dataclasses import dataclass

import numpy as np

from .lie import adjoint_unchecked, inv_se3_unchecked
from .model import check_model

__all__ = ["Kinematics", "forward_kinematics", "body_poses", "body_twists", "joint_twist_adjoints"]

_EYE4 = np.eye(4)[None]
_TREES = weakref.WeakKeyDictionary()


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
    A_ip : ndarray, shape (n, 6, 6)
        ``Ad(E_i_p)``: maps the parent body's twist into body i's frame (Eq. 2.10); for a
        root, ``Ad(E_i_w)``.
    S, Sdot : tuple of ndarray, each (6, ndof_i)
        The joints' Jacobians and their time derivatives (Sdot is zero when no qdot was given).
    phi : ndarray, shape (n, 6), or None
        The body twists ``(omega; nu)`` in body coordinates, when ``qdot`` was given.
    """

    E_pj: np.ndarray
    E_wj: np.ndarray
    E_wi: np.ndarray
    A_ip: np.ndarray
    S: tuple
    Sdot: tuple
    phi: np.ndarray | None


def joint_twist_adjoints(model):
    """``Ad(E_i_j)``, shape (n, 6, 6): maps joint-frame twists to body-frame twists (constant).

    Examples
    --------
    The bob's frame sits 1 m below its joint frame, so the adjoint has an offset block.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> joint_twist_adjoints(pendulum)[0, 3:, :3] + 0.0
    array([[ 0., -1.,  0.],
           [ 1.,  0.,  0.],
           [ 0.,  0.,  0.]])
    """
    return tree_constants(check_model(model)).A_ij


@dataclass(frozen=True)
class TreeConstants:
    """Constants of a model's tree that every sweep uses, computed once per (immutable) model."""

    A_ij: np.ndarray      # Ad(E_i_j), (n, 6, 6), read-only
    parents: np.ndarray   # the parent indices as an int array (-1 for a root), (n,)
    has_parents: bool     # whether any body hangs from another (else no Ad(E_i_p) enters J)
    zeros: np.ndarray     # a read-only zero velocity, (nq,)
    owners: np.ndarray    # the body of each joint coordinate, (nr,)


def tree_constants(model):
    """The :class:`TreeConstants` of ``model``, cached while the model lives."""
    tree = _TREES.get(model)
    if tree is None:
        A = adjoint_unchecked(inv_se3_unchecked(model.T_joint_body))
        parents, zeros = np.array(model.parents, dtype=int), np.zeros(model.nq)
        owners = np.repeat(np.arange(model.n), [b.joint.ndof for b in model.bodies])
        for a in (A, parents, zeros, owners):
            a.setflags(write=False)
        tree = _TREES[model] = TreeConstants(A, parents, bool((parents >= 0).any()), zeros, owners)
    return tree


def forward_kinematics(model, q, qdot=None):
    """One sweep from the root: frames of joints and bodies at ``q`` (nq,) and, with ``qdot``, twists.

    Returns
    -------
    Kinematics

    Examples
    --------
    A one-link arm: the body sits 1 m along the joint's x axis, which the joint turns about z.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[0, 3] = 1.0
    >>> model = Model([Body("arm", -1, Revolute([0, 0, 1]), np.eye(4), T, 1.0, np.eye(3))])
    >>> kin = forward_kinematics(model, [np.pi / 2], [1.0])
    >>> np.round(kin.E_wi[0, :3, 3], 12), kin.phi[0]
    (array([0., 1., 0.]), array([0., 0., 1., 0., 1., 0.]))
    """
    check_model(model)
    if qdot is None:
        return forward_kinematics_unchecked(model, model.check_state(q))
    return forward_kinematics_unchecked(model, *model.check_state(q, qdot))


def forward_kinematics_unchecked(model, q, qdot=None):
    """:func:`forward_kinematics` of a checked state (float arrays of shape (nq,)).

    The sweep itself: the public functions check their arguments once and call this, and so
    do the integrators at every step. Complex ``q`` and ``qdot`` pass through (every joint is
    analytic in its coordinates), which the complex-step checks of Part 3 use.
    """
    tree = tree_constants(model)
    v = tree.zeros if qdot is None else qdot
    n = model.n
    dtype = np.result_type(q, v)                          # complex q for the complex step (checks.py)
    E_pj = np.empty((n, 4, 4), dtype)
    E_wj = np.empty((n, 4, 4), dtype)
    S, Sdot = [], []
    joint_twists = np.empty((n, 6), dtype)                # S_i qdot_i, in joint coordinates
    for i, (body, s) in enumerate(zip(model.bodies, model.dofs, strict=True)):
        Q, Si, Sdi = body.joint._evaluate(q[s], v[s])
        E_pj[i] = model.T_parent_joint[i] @ Q
        E_wj[i] = E_pj[i] if body.parent < 0 else E_wj[body.parent] @ E_pj[i]
        S.append(Si)
        Sdot.append(Sdi)
        joint_twists[i] = Si @ v[s]
    E_wi = E_wj @ model.T_joint_body
    E_iw = inv_se3_unchecked(E_wi)
    if tree.has_parents:
        E_wp = np.concatenate([E_wi, _EYE4])[tree.parents]  # a root's parent is the world (the appended I)
        A_ip = adjoint_unchecked(E_iw @ E_wp)
    else:                                                 # roots alone: every parent is the world
        A_ip = adjoint_unchecked(E_iw)
    phi = None
    if qdot is not None:                                  # Eq. (2.8)-(2.12)
        phi = (tree.A_ij @ joint_twists[:, :, None])[:, :, 0]
        for i, p in enumerate(model.parents):
            if p >= 0:
                phi[i] += A_ip[i] @ phi[p]
    return Kinematics(E_pj, E_wj, E_wi, A_ip, tuple(S), tuple(Sdot), phi)


def body_poses(model, q):
    """The world frames of the bodies, ``E_w_i``, shape (n, 4, 4): joint transforms chained (Eq. 2.5, 2.23).

    Examples
    --------
    Turned a quarter turn about y, the bob swings out to ``x = -1``.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> np.round(body_poses(pendulum, [np.pi / 2])[0, :3, 3], 12) + 0.0
    array([-1.,  0.,  0.])
    """
    return forward_kinematics(model, q).E_wi


def body_twists(model, q, qdot):
    """Body twists ``phi_i = (omega_i; nu_i)`` in body coordinates, shape (n, 6), by Eq. (2.6)-(2.12).

    The same numbers as ``jacobian(model, q) @ qdot``, in O(n).

    Examples
    --------
    Swinging at 1 rad/s through the bottom, the bob moves along its own -x.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> body_twists(pendulum, [0.0], [1.0])
    array([[ 0.,  1.,  0., -1.,  0.,  0.]])
    """
    return forward_kinematics(model, q, qdot).phi
