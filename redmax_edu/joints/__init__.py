"""Joints of reduced coordinates (§2.4 of the writeup and the RedMax supplemental).

Every joint has ``ndof`` coordinates and the three functions ``Q(q)``, ``S(q)``,
``Sdot(q, qdot)`` of Eq. (2.24); :func:`joint_from_spec` builds one from the scene format.

=================  ====  ========================================================  ===============
type               ndof  spec keys                                                 class
=================  ====  ========================================================  ===============
fixed              0                                                               Fixed
revolute           1     axis (3,)                                                 Revolute
prismatic          1     axis (3,)                                                 Prismatic
planar             2     plane (3, 2)                                              Planar
translational      3                                                               Translational
universal          2                                                               Universal
spherical_euler    3     chart ("XYZ" default; any of the 12)                      SphericalEuler
spherical_exp      3                                                               SphericalExp
free2d             3                                                               Free2D
free3d_euler       6     chart                                                     Free3DEuler
free3d_exp         6     order ("translate_first" default, or "rotate_first")      Free3DExp
composite          sum   joints (list of sub-specs, not fixed/composite)           Composite
spline_curve       1     control_frames (n >= 4, 4, 4)                             SplineCurve
spline_surface     2     control_values (4, 4, 6)                                  SplineSurface
=================  ====  ========================================================  ===============

Taught in book/02_reduced/04_joints (the interface and simple joints), 04b_euler_joints,
04c_exponential_joints and 04d_composite_spline_joints.
"""

from .base import COMMON_JOINT_KEYS, Joint, build_joint
from .basic import Fixed, Planar, Prismatic, Revolute, Translational
from .composite import Composite, Free2D, Free3DEuler, Free3DExp
from .euler import SphericalEuler, Universal
from .exponential import SphericalExp
from .spline import SplineCurve, SplineSurface

__all__ = ["Joint", "Fixed", "Revolute", "Prismatic", "Planar", "Translational", "Universal",
           "SphericalEuler", "SphericalExp", "Composite", "Free2D", "Free3DEuler", "Free3DExp",
           "SplineCurve", "SplineSurface", "JOINT_TYPES", "joint_from_spec"]

#: The joint classes by their ``type`` in the scene format.
JOINT_TYPES = {cls.kind: cls for cls in (Fixed, Revolute, Prismatic, Planar, Translational, Universal,
                                         SphericalEuler, SphericalExp, Free2D, Free3DEuler, Free3DExp,
                                         Composite, SplineCurve, SplineSurface)}


def joint_from_spec(spec, where="joint", common=COMMON_JOINT_KEYS):
    """Build a joint from its scene-format dict, e.g. ``{"type": "revolute", "axis": [0, 0, 1]}``.

    ``where`` names the joint in error messages (the model passes ``"body 'arm', joint"``).
    Keys other than ``common`` (the model's spring fields) and the joint type's own are refused.

    >>> joint_from_spec({"type": "prismatic", "axis": [0, 2, 0]}).axis
    array([0., 1., 0.])
    >>> joint_from_spec({"type": "hinge"}, "body 'arm', joint")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: body 'arm', joint: unknown joint type 'hinge'; known types: ...
    """
    return build_joint(spec, where, JOINT_TYPES, common)
