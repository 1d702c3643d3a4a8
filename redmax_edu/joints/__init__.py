"""Joints of reduced coordinates (§2.4 of the writeup and the RedMax supplemental).

Every joint has ``ndof`` coordinates and the three functions ``Q(q)``, ``S(q)``,
``Sdot(q, qdot)`` of Eq. (2.24); :func:`joint_from_spec` builds one from the scene format.

Taught in book/02_reduced/04_joints.
"""

from .base import Joint
from .basic import Fixed, Planar, Prismatic, Revolute, Translational

__all__ = ["Joint", "Fixed", "Revolute", "Prismatic", "Planar", "Translational",
           "JOINT_TYPES", "joint_from_spec"]

#: The joint classes by their ``type`` in the scene format.
JOINT_TYPES = {cls.kind: cls for cls in (Fixed, Revolute, Prismatic, Planar, Translational)}


def joint_from_spec(spec, where="joint"):
    """Build a joint from its scene-format dict, e.g. ``{"type": "revolute", "axis": [0, 0, 1]}``.

    ``where`` names the joint in error messages (the model passes ``"body 'arm', joint"``).

    >>> joint_from_spec({"type": "prismatic", "axis": [0, 2, 0]}).axis
    array([0., 1., 0.])
    >>> joint_from_spec({"type": "hinge"}, "body 'arm', joint")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: body 'arm', joint: unknown joint type 'hinge'; known types: ...
    """
    if not isinstance(spec, dict):
        raise ValueError(f"{where}: must be a dict with a 'type' field, got {type(spec).__name__}")
    if "type" not in spec:
        raise ValueError(f"{where}: missing field 'type'")
    kind = spec["type"]
    if kind not in JOINT_TYPES:
        raise ValueError(f"{where}: unknown joint type {kind!r}; known types: {', '.join(JOINT_TYPES)}")
    return JOINT_TYPES[kind].from_spec(spec, where)
