"""Where a joint's bearings touch: the implicit contacts of BISP and the friction a model carries (§2.11).

Bilateral staggered projections (:mod:`redmax_edu.friction.bisp`) turn a joint's reaction into
normal impulses at a few contact points placed around the joint (Eq. 2.125): the ends of a
cylinder for a hinge, a sphere for a ball joint, a box for a slider (:class:`JointFriction`);
the friction stage then bounds the sliding impulses at those points. A loop closure that works
as a hinge takes the same cylinder (:class:`ClosureFriction`). A model carries these
descriptions (``Model(..., friction=[...])``), so this module sits below :mod:`redmax_edu.model`.

Taught in book/02_reduced/11_friction.
"""

from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

import numpy as np

from .._validate import as_index, as_real, as_scalar
from ..constraints import Loop

__all__ = ["Cylinder", "Sphere", "Box", "GEOMETRY_OF_JOINT", "JointContacts", "JointFriction",
           "ClosureFriction", "point_velocity_rows", "geometry_contacts", "checked_geometry"]


class Cylinder(NamedTuple):
    """A hinge's contact geometry: a pin of ``radius`` whose ``height`` runs along the joint axis."""

    radius: float
    height: float


class Sphere(NamedTuple):
    """A ball joint's contact geometry: a ball of ``radius`` about the joint origin."""

    radius: float


class Box(NamedTuple):
    """A slider's contact geometry: a box with ``sides`` (3,) along the joint frame's x, y, z axes."""

    sides: tuple


#: The geometry each joint type takes; other joint types have none.
GEOMETRY_OF_JOINT = {"revolute": Cylinder, "prismatic": Box,
                     "spherical_exp": Sphere, "spherical_euler": Sphere}


@dataclass(frozen=True)
class JointContacts:
    """The implicit contacts of one joint, in its joint frame (the child's side of the joint).

    A row ``(p x d; d)`` gives, for a twist ``(omega; nu)`` of the joint frame, the speed of
    the material point ``p`` along ``d``: ``d . (nu + omega x p)``.

    Attributes
    ----------
    points : ndarray, shape (npoints, 3)
    normals : ndarray, shape (nnormals, 6)
        Normal rows; ``normals @ S = 0``: they never resist the joint's own motion.
    normal_point : ndarray of int, shape (nnormals,)
        The point each normal row belongs to.
    tangents : ndarray, shape (ntangents, 6)
        Tangent rows, along the sliding the joint allows at each point.
    tangent_point : ndarray of int, shape (ntangents,)
    """

    points: np.ndarray
    normals: np.ndarray
    normal_point: np.ndarray
    tangents: np.ndarray
    tangent_point: np.ndarray

    def bounds(self, mu, alpha):
        """Each tangent row's friction bound: ``mu`` times the magnitude of its point's normal impulse."""
        magnitude = np.sqrt(np.bincount(self.normal_point, alpha * alpha, minlength=len(self.points)))
        return mu * magnitude[self.tangent_point]


def point_velocity_rows(points, directions):
    """Point-velocity rows ``(p x d; d)``, shape (k, 6)."""
    return np.hstack([np.cross(points, directions), directions])


def _contacts(points, normals, tangents):
    """:class:`JointContacts` from per-point normal and tangent directions, (P, a, 3) and (P, b, 3)."""
    P, a, b = len(points), normals.shape[1], tangents.shape[1]
    at = np.arange(P)
    normal_rows = point_velocity_rows(np.repeat(points, a, axis=0), normals.reshape(-1, 3))
    tangent_rows = point_velocity_rows(np.repeat(points, b, axis=0), tangents.reshape(-1, 3))
    return JointContacts(points, normal_rows, np.repeat(at, a), tangent_rows, np.repeat(at, b))


def _cylinder_contacts(axis, radius, height):
    """Four points on each end circle of the pin, each with a radial and a thrust normal and one
    circumferential tangent."""
    e = np.eye(3)[np.argmin(np.abs(axis))]
    u = e - (e @ axis) * axis
    u /= np.linalg.norm(u)
    v = np.cross(axis, u)
    radial = np.array([u, v, -u, -v])
    points, normals, tangents = [], [], []
    for s in (-0.5 * height, 0.5 * height):
        for d in radial:
            points.append(s * axis + radius * d)
            normals.append([d, axis])
            tangents.append([np.cross(axis, d)])
    return _contacts(np.array(points), np.array(normals), np.array(tangents))


def _sphere_contacts(radius):
    """The six points ``+-radius`` along the joint axes, each with its radial normal and two tangents."""
    points, normals, tangents = [], [], []
    for k in range(3):
        for sign in (1.0, -1.0):
            d = sign * np.eye(3)[k]
            points.append(radius * d)
            normals.append([d])
            tangents.append([np.eye(3)[(k + 1) % 3], np.eye(3)[(k + 2) % 3]])
    return _contacts(np.array(points), np.array(normals), np.array(tangents))


def _box_contacts(axis_index, sides):
    """The box's eight corners, each with the two normals across the slide and the slide direction."""
    i, j = (axis_index + 1) % 3, (axis_index + 2) % 3
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    points = 0.5 * signs * np.asarray(sides)
    I = np.eye(3)
    normals = np.broadcast_to([I[i], I[j]], (8, 2, 3))
    tangents = np.broadcast_to([I[axis_index]], (8, 1, 3))
    return _contacts(points, np.array(normals), np.array(tangents))


@cache
def geometry_contacts(geometry, axis):
    """The contacts of a geometry about a joint ``axis`` (a tuple, None for a ball joint), built once."""
    if isinstance(geometry, Cylinder):
        contacts = _cylinder_contacts(np.array(axis), geometry.radius, geometry.height)
    elif isinstance(geometry, Sphere):
        contacts = _sphere_contacts(geometry.radius)
    else:
        contacts = _box_contacts(int(np.flatnonzero(axis)[0]), geometry.sides)
    for a in vars(contacts).values():
        a.setflags(write=False)
    return contacts


def checked_geometry(g):
    """``g`` with float lengths, or a ValueError saying what is wrong with it."""
    if isinstance(g, Box):
        g = Box(tuple(as_real(g.sides, (3,), "sides").tolist()))
        lengths = dict(zip(("sides[0]", "sides[1]", "sides[2]"), g.sides, strict=True))
    elif isinstance(g, (Cylinder, Sphere)):
        g = type(g)(*(as_scalar(x, name) for x, name in zip(g, g._fields, strict=True)))
        lengths = g._asdict()
    else:
        raise ValueError(f"unknown geometry {g!r}; use Cylinder(radius, height) for a revolute "
                         "joint, Sphere(radius) for a spherical one, Box(sides) for a prismatic one")
    for name, value in lengths.items():
        if not value > 0:
            raise ValueError(f"the {type(g).__name__.lower()}'s {name} must be positive, got {value:g}")
    return g


@dataclass(frozen=True)
class JointFriction:
    """Coulomb friction inside the joint of body ``body``, with its contact geometry (§2.11).

    BISP places implicit contacts at fixed positions around a joint; their normal impulses come
    from the joint's reaction (Eq. 2.125) and bound the friction at the same points. The points,
    normals and tangents are fixed in the joint frame, which moves with the child body: a
    slider's pads ride with it, and a hinge's pattern turns with its link (so the load along a
    link stays on one direction of the pattern).

    * revolute, :class:`Cylinder` ``(radius r, height l)`` along the axis: four points on each
      end circle (at ``+-l/2`` along the axis, in the radial directions ``+-u``, ``+-v``, with
      ``u`` the joint-frame axis least aligned with the hinge axis, projected), each with a
      radial normal (the bearing) and a thrust normal along the axis, and one circumferential
      tangent. A radial load ``R`` along ``u`` or ``v`` spreads as ``R/4`` over four points and
      resists turning with the torque ``mu r R``, Coulomb's pin friction; between them the
      four-point pattern gives up to ``sqrt(2) mu r R`` (at 45 degrees). A thrust ``F`` gives
      ``mu r F``; a bending moment loads the two ends against each other (a short pin binds more).
    * spherical, :class:`Sphere` ``(radius r)``: six points ``+-r`` along the joint axes with
      radial normals and two tangents each. A load ``F`` along an axis resists rotation about
      the other two axes with ``mu r F`` and spin about its own axis not at all (a point pivot).
    * prismatic, :class:`Box` ``(sides)`` along the joint frame's axes, the slide along one of
      them: the eight corners, each with the two normals across the slide and the slide direction
      as tangent. A load ``F`` across the slide spreads evenly over the corners and gives the
      friction ``mu |F|`` in any direction across the slide, as long as its line of action stays
      within the box; a load a distance ``d > s/2`` along the slide from the box's centre (``s``
      the box's length) tilts it against both walls and the friction grows to ``2 d / s`` times
      that: a cantilevered slider binds (scene 29's blocks hang one box length out: twice).

    The writeup says only that a hinge's cylinder has contact points at its two ends; the number
    of points, the thrust normals, the sphere and box patterns, the frame they move with and the
    per-point bound are this library's choices. Every normal row is orthogonal to the joint's
    motion (``normals @ S = 0``) and together they span the wrenches the joint resists (rank
    ``6 - ndof``).

    Parameters
    ----------
    body : int
        The body whose joint (to its parent) has friction.
    mu : float
        Friction coefficient, >= 0.
    geometry : Cylinder, Sphere or Box
        Lengths in the model's units (metres), all positive.

    Examples
    --------
    >>> JointFriction(1, 0.6, Cylinder(radius=0.005, height=0.01)).mu
    0.6
    >>> JointFriction(1, -0.1, Sphere(0.01))
    Traceback (most recent call last):
    ...
    ValueError: joint friction of body 1: argument 'mu' must be >= 0, got -0.1
    """

    body: int
    mu: float
    geometry: Cylinder | Sphere | Box

    def __post_init__(self):
        object.__setattr__(self, "body", as_index(self.body, "body"))
        label = self.label()
        try:
            object.__setattr__(self, "mu", as_scalar(self.mu, "mu", minimum=0.0))
            object.__setattr__(self, "geometry", checked_geometry(self.geometry))
        except ValueError as err:
            raise ValueError(f"{label}: {err}") from None

    def label(self, model=None):
        """How error messages name this friction."""
        if model is not None and self.body < model.n:
            return f"joint friction of body {model.names[self.body]!r} (index {self.body})"
        return f"joint friction of body {self.body}"

    def check(self, model):
        """Raise ValueError unless the body exists and its joint takes this geometry."""
        if self.body >= model.n:
            raise ValueError(f"{self.label()}: the model has {model.n} bodies (indices 0 to {model.n - 1})")
        joint = model.bodies[self.body].joint
        wanted = GEOMETRY_OF_JOINT.get(joint.kind)
        if joint.ndof == 0:
            raise ValueError(f"{self.label(model)}: its joint is fixed, so nothing slides in it; "
                             "remove the friction")
        if wanted is None:
            raise ValueError(f"{self.label(model)}: a {joint.kind} joint has no contact geometry; joint "
                             "friction is defined for revolute (Cylinder), prismatic (Box) and spherical "
                             "(Sphere) joints")
        if not isinstance(self.geometry, wanted):
            raise ValueError(f"{self.label(model)}: a {joint.kind} joint takes a {wanted.__name__} geometry, "
                             f"got {type(self.geometry).__name__}")
        if isinstance(self.geometry, Box) and np.count_nonzero(joint.axis) != 1:
            raise ValueError(f"{self.label(model)}: a Box geometry needs the prismatic axis along the joint "
                             f"frame's x, y or z axis, got {joint.axis.tolist()}")

    def contacts(self, joint):
        """The :class:`JointContacts` of this geometry on ``joint`` (checked by :meth:`check`)."""
        axis = getattr(joint, "axis", None)
        return geometry_contacts(self.geometry, None if axis is None else tuple(axis.tolist()))

    @classmethod
    def from_reference(cls, joint, body, mu, length_scale=1.0):
        """The friction of a joint of the reference scene data (``scenes.json``: ``radius`` and
        ``height`` of a revolute joint, ``radius`` of a spherical one, ``sides`` of a prismatic one);
        ``length_scale`` converts its lengths (0.01 from cm to m)."""
        kind = joint.get("class", "")
        s = as_scalar(length_scale, "length_scale", minimum=0.0, strict=True)
        if kind.endswith("Revolute"):
            return cls(body, mu, Cylinder(s * joint["radius"], s * joint["height"]))
        if kind.endswith("Prismatic"):
            return cls(body, mu, Box(tuple(s * np.asarray(joint["sides"], dtype=float))))
        if kind.endswith(("SphericalExp", "Spherical")):
            return cls(body, mu, Sphere(s * joint["radius"]))
        raise ValueError(f"joint friction of body {body}: the reference joint class {kind!r} has no "
                         "contact geometry")


@dataclass(frozen=True)
class ClosureFriction:
    """Coulomb friction in the hinge that a loop closure forms (constraint ``constraint`` of the model).

    The spec that a model carries (``Model(..., friction=[...])``) for
    :class:`~redmax_edu.friction.external.LoopFriction`,
    which the Euler step builds from it at every state: ``constraint`` indexes
    ``model.constraints`` and must be a :class:`~redmax_edu.constraints.Loop` about a hinge
    axis; ``geometry`` is the hinge's :class:`Cylinder`.

    Examples
    --------
    >>> ClosureFriction(0, 0.3, Cylinder(0.005, 0.005)).label()
    'friction of the closure constraints[0]'
    """

    constraint: int
    mu: float
    geometry: Cylinder

    def __post_init__(self):
        object.__setattr__(self, "constraint", as_index(self.constraint, "constraint"))
        try:
            object.__setattr__(self, "mu", as_scalar(self.mu, "mu", minimum=0.0))
            geometry = checked_geometry(self.geometry)
        except ValueError as err:
            raise ValueError(f"{self.label()}: {err}") from None
        if not isinstance(geometry, Cylinder):
            raise ValueError(f"{self.label()}: a hinge closure takes a Cylinder geometry, got "
                             f"{type(geometry).__name__}")
        object.__setattr__(self, "geometry", geometry)

    def label(self, model=None):
        """How error messages name this friction."""
        return f"friction of the closure constraints[{self.constraint}]"

    def check(self, model):
        """Raise ValueError unless ``model.constraints[constraint]`` is a loop closure about a hinge axis."""
        if self.constraint >= len(model.constraints):
            raise ValueError(f"{self.label()}: the model has {len(model.constraints)} constraints")
        c = model.constraints[self.constraint]
        if not isinstance(c, Loop) or c.axis is None:
            raise ValueError(f"{self.label()}: {c.describe(model)} is not a loop closure about a hinge axis")
