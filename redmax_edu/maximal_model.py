"""A reduced-coordinate model written in maximal coordinates: free bodies held by joint rows.

The bridge between Part 2 and Part 1 (§2.1, §1.10): the same mechanism, its bodies at the
poses forward kinematics gives and its twists ``phi = J qdot``, simulated by the maximal
machinery of :mod:`redmax_edu.maximal`. It sits above :mod:`redmax_edu.kinematics`, which it
calls, and above :mod:`redmax_edu.maximal`, which knows nothing of reduced coordinates.

Taught in book/appendix/engineer_nonsymmetric.
"""

import numpy as np

from .kinematics import body_twists, forward_kinematics
from .maximal.body import RigidBody
from .maximal.constraints import Joint
from .maximal.system import System

__all__ = ["system_from_model", "z_along"]


#: The reduced-coordinate joints :func:`system_from_model` can write as maximal joint rows.
JOINT_KINDS = {"fixed": "fixed", "revolute": "revolute", "prismatic": "prismatic",
                "spherical_exp": "spherical", "spherical_euler": "spherical"}


def z_along(axis):
    """A rotation whose third column is the unit ``axis``: a joint frame with z along a hinge (Eq. 1.84)."""
    a = axis / np.linalg.norm(axis)
    x = np.cross(np.eye(3)[np.argmin(np.abs(a))], a)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(a, x), a])


def system_from_model(model, q, qdot):
    """The same mechanism in maximal coordinates: free bodies held together by joint rows.

    Each body of a reduced-coordinate :class:`~redmax_edu.model.Model` becomes a
    :class:`~redmax_edu.maximal.body.RigidBody` at its pose for ``q``, each joint a
    :class:`~redmax_edu.maximal.constraints.Joint` at its frame (its axis along the joint frame's
    z, Eq. 1.84), and the model's maximal forces (springs, applied forces) act on the same body
    indices. The state returned is the model's, mapped: ``E`` from forward kinematics and the
    body twists ``phi = J qdot`` (Eq. 2.2).

    Parameters
    ----------
    model : Model
        Fixed, revolute, prismatic and spherical joints only; bodies on their principal axes; no
        joint springs or dampers, constraints, deformables or friction.
    q, qdot : array_like, shape (nq,)

    Returns
    -------
    system : System
    E : ndarray, shape (n, 4, 4)
    phi : ndarray, shape (n, 6)

    Examples
    --------
    A bob on a hinge about y: one body, one revolute joint to the world, at the bob's pose.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> bob = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> system, E, phi = system_from_model(bob, [0.5], [1.0])
    >>> system.joints[0].kind, np.round(E[0, :3, 3], 4), np.round(phi[0], 4)
    ('revolute', array([-0.4794,  0.    , -0.8776]), array([ 0.,  1.,  0., -1.,  0.,  0.]))

    Taught in book/appendix/engineer_nonsymmetric.
    """
    for what in ("constraints", "deformables", "friction"):
        if getattr(model, what):
            raise ValueError(f"argument 'model' has {what}; system_from_model writes joints and forces only")
    if np.any(model.stiffness) or np.any(model.damping):
        raise ValueError("argument 'model' has joint springs or dampers, which have no maximal "
                         "counterpart here")
    kin = forward_kinematics(model, q)
    E, phi = kin.E_wi, body_twists(model, q, qdot)
    bodies, joints = [], []
    for i, body in enumerate(model.bodies):
        J = np.asarray(body.inertia, float)
        if np.abs(J - np.diag(np.diag(J))).max() > 1e-12 * np.abs(J).max():
            raise ValueError(f"body '{body.name}': its inertia is not diagonal; a RigidBody sits on its "
                             "principal axes")
        if body.joint.kind not in JOINT_KINDS:
            raise ValueError(f"body '{body.name}': a {body.joint.kind} joint has no maximal joint rows here; "
                             f"supported: {', '.join(sorted(JOINT_KINDS))}")
        bodies.append(RigidBody(body.name, body.mass, np.diag(J)))
        frame = kin.E_wj[i].copy()
        if hasattr(body.joint, "axis"):
            frame[:3, :3] = frame[:3, :3] @ z_along(np.asarray(body.joint.axis, float))
        joints.append(Joint.at(JOINT_KINDS[body.joint.kind], i, body.parent, frame, E, name=body.name))
    return System(bodies, forces=model.forces, joints=joints, gravity=model.gravity), E, phi
