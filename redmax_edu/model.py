"""Articulated models in reduced coordinates: bodies, their joints, and the tree (Part 2 intro).

A :class:`Model` is an immutable, validated tree of :class:`Body` objects. Each body hangs
from its parent through its joint: the joint frame sits at ``T_parent_joint`` in the parent
*joint's* frame when ``q = 0`` (the writeup's J-bar, Eq. 2.23), moves by the joint transform
``Q(q)``, and carries the body frame at the constant offset ``T_joint_body``. Parents come
before children (the writeup's convention "the parent index is smaller"), so one forward
sweep visits every parent first. The generalised coordinates ``q`` are the joints'
coordinates concatenated in body order; ``model.dofs[i]`` is body i's slice of them. A model
may also carry deformable bodies (§2.7, :mod:`redmax_edu.deformable`): their free nodes'
positions follow the joint coordinates in ``q`` (``model.nr`` joint coordinates, ``model.nq``
in all; ``model.deformable_dofs[d]`` is deformable d's slice).

:func:`model_from_dict` reads the JSON scene format "redmax_edu-peers/1" of ARCHITECTURE.md
(the format of the reference vectors in ``shared/reference/pinocchio``). Every malformed
spec raises a ``ValueError`` that names the body and the field at fault.

Taught in book/02_reduced/01_reduced_coordinates.
"""

from dataclasses import dataclass, field, fields, replace

import numpy as np

from ._validate import ArgumentTypeError, as_index, as_instance, as_real, as_sequence, as_transform
from .constraints import Constraint
from .deformable import DeformableSpring
from .friction.patterns import ClosureFriction, JointFriction
from .inertia import MassProperties
from .joints import Joint, joint_from_spec
from .joints.base import check_keys
from .maximal.forces import Force
from .units import GRAVITY

__all__ = ["Body", "Model", "model_from_dict", "check_model", "check_shape", "SCENE_FORMAT", "SHAPES"]

#: The ``format`` tag of the JSON scene format.
SCENE_FORMAT = "redmax_edu-peers/1"

#: ``check_state(q)`` checks q alone; ``check_state(q, None)`` is a missing velocity.
_NO_QDOT = object()


#: The shapes a body may be drawn as: each type's required sizes (positive lengths; a cuboid's
#: ``sides`` three of them). Any shape may add ``"E"``, its frame in the body frame (4x4), and
#: ``"source"`` (where it came from); a ``"composite"`` is the union of its ``"parts"``, and a
#: ``"mesh"`` (a reference scene's mesh file, ``"source"``) is drawn as a stick.
SHAPES = {"cuboid": ("sides",), "cylinder": ("radius", "height"), "capsule": ("radius", "length"),
          "sphere": ("radius",), "composite": ("parts",), "mesh": ()}


def check_shape(shape, where):
    """Raise ValueError, naming ``where`` and the field, unless ``shape`` is one of :data:`SHAPES`.

    >>> check_shape({"type": "cuboid", "side": [1, 1, 1]}, "body 'box': field 'shape'")
    Traceback (most recent call last):
    ...
    ValueError: body 'box': field 'shape': a cuboid has the fields sides (and optionally E, source); got side
    """
    if not isinstance(shape, dict):
        raise ValueError(f"{where} must be a dict such as {{'type': 'cuboid', 'sides': [x, y, z]}}, "
                         f"got {type(shape).__name__}")
    kind = shape.get("type")
    if kind not in SHAPES:
        raise ValueError(f"{where}: unknown type {kind!r}; known types: {', '.join(SHAPES)}")
    required = SHAPES[kind]
    if set(required) - shape.keys() or shape.keys() - {"type", "E", "source", *required}:
        raise ValueError(f"{where}: a {kind} has the fields {', '.join(required) or 'type only'} (and "
                         f"optionally E, source); got {', '.join(sorted(shape.keys() - {'type'})) or 'none'}")
    if "E" in shape:
        _field(where, "E", lambda: as_transform(shape["E"], "E", real=True))
    if kind == "composite":
        if not isinstance(shape["parts"], list | tuple) or not shape["parts"]:
            raise ValueError(f"{where}: field 'parts' must be a non-empty list of shapes")
        for k, part in enumerate(shape["parts"]):
            check_shape(part, f"{where}: part {k}")
        return
    for name in required:
        size = _field(where, name, lambda n=name: as_real(shape[n], (3,) if n == "sides" else (), n))
        if not np.all(size > 0):
            raise ValueError(f"{where}: field '{name}' must be positive, got {np.asarray(size).tolist()}")


def _field(where, name, convert):
    """Run ``convert()``; re-raise its ValueError prefixed with the body and the field."""
    try:
        return convert()
    except ValueError as err:
        msg = str(err).replace("argument ", "")
        raise ValueError(f"{where}: field '{name}': {msg}") from None


def _per_dof(value, ndof, where, name):
    """A joint parameter given as a scalar or one value per coordinate, as an (ndof,) array."""
    a = _field(where, name, lambda: as_real(value, None, name))
    if a.ndim == 0:
        return np.full(ndof, float(a))
    if a.shape != (ndof,):
        raise ValueError(f"{where}: field '{name}' must be a scalar or have shape ({ndof},), "
                         f"got {a.shape}")
    return a


@dataclass(frozen=True, eq=False)
class Body:
    """One rigid body and the joint that connects it to its parent.

    Parameters
    ----------
    name : str
    parent : int
        Index of the parent body, -1 for the world.
    joint : Joint
    T_parent_joint : array_like, shape (4, 4)
        The joint frame in the parent joint's frame at ``q = 0`` (for a root: in the world).
    T_joint_body : array_like, shape (4, 4)
        The body frame (at the centre of mass) in the joint frame.
    mass : float
    inertia : array_like, shape (3, 3)
        Rotational inertia about the centre of mass in body axes (symmetric positive definite;
        diagonal when the body frame is on the principal axes, as RedMax assumes).
    stiffness, damping : float or array_like, shape (joint.ndof,)
        Joint stiffness ``K`` and damping ``D`` of §2.5: torques ``-K (q - q_rest)`` and ``-D qdot``.
    q_rest : array_like, shape (joint.ndof,)
        Rest coordinates of the joint spring (default 0).
    body_damping : float
        Viscous damping of the body's own twist, ``-d phi`` (a maximal force, §1.9).
    shape : dict, optional
        How to draw the body, e.g. ``{"type": "cuboid", "sides": [10, 1, 1]}``; not used by
        the dynamics. Its ``type`` and sizes are checked (:data:`SHAPES`): a misspelt field
        would otherwise draw the body as a stick without a word.
    """

    name: str
    parent: int
    joint: Joint
    T_parent_joint: np.ndarray
    T_joint_body: np.ndarray
    mass: float
    inertia: np.ndarray
    stiffness: np.ndarray | float = 0.0
    damping: np.ndarray | float = 0.0
    q_rest: np.ndarray | None = None
    body_damping: float = 0.0
    shape: dict | None = field(default=None)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"body {self.name!r}: field 'name' must be a non-empty string")
        where = f"body {self.name!r}"
        if not isinstance(self.parent, (int, np.integer)) or isinstance(self.parent, bool):
            raise ValueError(f"{where}: field 'parent' must be an integer (-1 for the world), "
                             f"got {self.parent!r}")
        if not isinstance(self.joint, Joint):
            raise ValueError(f"{where}: field 'joint' must be a Joint, got {type(self.joint).__name__}")
        set_ = object.__setattr__
        set_(self, "parent", int(self.parent))
        for name in ("T_parent_joint", "T_joint_body"):
            value = getattr(self, name)
            set_(self, name, _field(where, name, lambda v=value, n=name: as_transform(v, n, real=True)))
        mass = _field(where, "mass", lambda: as_real(self.mass, (), "mass"))
        if not mass > 0:
            raise ValueError(f"{where}: field 'mass' must be positive, got {float(mass)}")
        set_(self, "mass", float(mass))
        inertia = _field(where, "inertia", lambda: as_real(self.inertia, ((3, 3), (3,)), "inertia"))
        if inertia.shape == (3,):
            inertia = np.diag(inertia)
        # the rigid-body checks of §1.7 (symmetric, positive definite, triangle inequality)
        inertia = _field(where, "inertia", lambda: MassProperties(mass, np.zeros(3), inertia).inertia)
        set_(self, "inertia", inertia)
        n = self.joint.ndof
        for name in ("stiffness", "damping"):
            value = _per_dof(getattr(self, name), n, where, name)
            if (value < 0).any():
                raise ValueError(f"{where}: field '{name}' must be non-negative, got {value.tolist()}")
            set_(self, name, value)
        set_(self, "q_rest", np.zeros(n) if self.q_rest is None
             else _per_dof(self.q_rest, n, where, "q_rest"))
        if self.shape is not None:
            check_shape(self.shape, f"{where}: field 'shape'")
        d = _field(where, "body_damping", lambda: as_real(self.body_damping, (), "body_damping"))
        if d < 0:
            raise ValueError(f"{where}: field 'body_damping' must be non-negative, got {float(d)}")
        set_(self, "body_damping", float(d))

    @property
    def spatial_inertia(self):
        """``M_i = [[I, 0], [0, m 1]]`` (6x6) at the centre of mass, Eq. (1.24)."""
        M = np.zeros((6, 6))
        M[:3, :3] = self.inertia
        M[3:, 3:] = self.mass * np.eye(3)
        return M

    def to_dict(self):
        """The body in the scene format."""
        joint = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.joint.spec().items()}
        joint["T_parent_joint"] = self.T_parent_joint.tolist()
        if self.stiffness.any():
            joint["stiffness"] = self.stiffness.tolist()
        if self.damping.any():
            joint["damping"] = self.damping.tolist()
        if self.q_rest.any():
            joint["rest"] = self.q_rest.tolist()
        out = {"name": self.name, "parent": self.parent, "joint": joint,
               "T_joint_body": self.T_joint_body.tolist(), "mass": self.mass,
               "inertia": self.inertia.tolist()}
        if self.body_damping:
            out["damping"] = self.body_damping
        if self.shape is not None:
            out["shape"] = self.shape
        return out


#: The fields of a :class:`Body`, which :meth:`Model.with_body` may replace.
_BODY_ATTRIBUTES = tuple(f.name for f in fields(Body))


class Model:
    """An immutable tree of bodies with its generalised coordinates.

    Parameters
    ----------
    bodies : sequence of Body
        Parents before children; names unique.
    gravity : array_like, shape (3,)
        Default ``(0, 0, -9.81)`` m/s^2.
    forces : sequence of :class:`redmax_edu.maximal.forces.Force`
        Extra maximal-coordinate forces (springs, applied forces) acting on these bodies by
        index; their wrenches enter the reduced force through ``J^T`` (Eq. 2.19).
    deformables : sequence of :class:`redmax_edu.deformable.DeformableSpring`
        Mass-spring chains whose ends may be attached to these bodies (§2.7). Their free
        nodes become coordinates after the joints' (Eq. 2.96).
    constraints : sequence of :class:`redmax_edu.constraints.Constraint`
        Loop closures, couplings, limits, prescribed motion and contacts (§2.8-2.9), each
        checked against the model here (a constraint naming a body or coordinate the model
        lacks is a ValueError naming the constraint).
    friction : sequence of JointFriction and ClosureFriction
        Coulomb friction inside joints and loop-closing hinges (§2.11), at most one per joint
        (:class:`redmax_edu.friction.patterns.JointFriction`,
        :class:`redmax_edu.friction.patterns.ClosureFriction`).
        Only linearly implicit Euler simulates it (by bilateral staggered projections). A floor
        contact's friction is its own ``mu``.

    Attributes
    ----------
    n : int
        Number of bodies.
    nr : int
        Number of joint coordinates (the sum of the joints' ``ndof``).
    nq : int
        Number of generalised coordinates: ``nr`` plus 3 per free deformable node. Without
        deformables ``nq == nr``. Rigid-body arrays indexed by coordinate (``ancestors``, the
        columns of ``J_mr``) have ``nq`` columns, zero in the node columns.
    dofs : tuple of slice
        ``q[model.dofs[i]]`` are body i's joint coordinates.
    deformable_dofs : tuple of slice
        ``q[model.deformable_dofs[d]]`` are deformable d's free node positions (3 per node).
    parents : tuple of int
    ancestors : ndarray, shape (n, nq), bool
        ``ancestors[i, k]`` is True when coordinate k belongs to a joint on the path from the
        root to body i (body i's own included): the sparsity of ``J_mr`` (Eq. 2.13).

    Examples
    --------
    >>> from redmax_edu.joints import Revolute
    >>> link = dict(joint=Revolute([0, 1, 0]), T_parent_joint=np.eye(4),
    ...             T_joint_body=np.eye(4), mass=1.0, inertia=np.eye(3))
    >>> model = Model([Body("upper", -1, **link), Body("lower", 0, **link)])
    >>> model.nq, model.dofs[1], model.ancestors.astype(int).tolist()
    (2, slice(1, 2, None), [[1, 0], [1, 1]])
    """

    def __init__(self, bodies, gravity=GRAVITY, forces=(), deformables=(), constraints=(), friction=()):
        bodies = as_sequence(bodies, "bodies", "Body")
        forces = as_sequence(forces, "forces", "Force")
        deformables = as_sequence(deformables, "deformables", "DeformableSpring")
        constraints = as_sequence(constraints, "constraints", "Constraint")
        friction = as_sequence(friction, "friction", "JointFriction")
        if not bodies:
            raise ValueError("a model needs at least one body")
        names = set()
        for i, b in enumerate(bodies):
            if not isinstance(b, Body):
                raise ValueError(f"bodies[{i}] must be a Body, got {type(b).__name__}")
            if b.name in names:
                raise ValueError(f"body {b.name!r} (index {i}): field 'name' repeats an earlier body's name")
            names.add(b.name)
            if b.parent == i:
                raise ValueError(f"body {b.name!r} (index {i}): field 'parent' refers to the body itself")
            if not -1 <= b.parent < i:
                allowed = "-1 (the world)" if i == 0 else f"an index from -1 to {i - 1}"
                raise ValueError(f"body {b.name!r} (index {i}): field 'parent' is {b.parent}, but parents "
                                 f"must come before their children, so it must be {allowed}; "
                                 "reorder the bodies or break the cycle")
        self.bodies = bodies
        self.gravity = as_real(gravity, (3,), "gravity")
        self.forces = tuple(forces)
        for k, force in enumerate(self.forces):
            if not isinstance(force, Force):
                raise ArgumentTypeError(f"argument 'forces': forces[{k}] must be a Force of "
                                        f"redmax_edu.maximal.forces, got {type(force).__name__}")
            force.check_bodies(len(bodies))
        self.n = len(bodies)
        self.names = tuple(b.name for b in bodies)
        #: Bodies whose joint has more coordinates than the six directions of motion (a composite
        #: of too many parts): their coordinates are dependent and ``M_r`` is singular everywhere.
        self.overfull_joints = tuple(b.name for b in bodies if b.joint.ndof > 6)
        self.parents = tuple(b.parent for b in bodies)
        starts = np.cumsum([0] + [b.joint.ndof for b in bodies])
        self.nr = int(starts[-1])
        self.dofs = tuple(slice(int(a), int(b)) for a, b in zip(starts[:-1], starts[1:], strict=True))
        self.deformables = tuple(deformables)
        for d, spring in enumerate(self.deformables):
            if not isinstance(spring, DeformableSpring):
                raise ValueError(f"deformables[{d}] must be a DeformableSpring, got {type(spring).__name__}")
            spring.check_bodies(len(bodies))
        ends = np.cumsum([self.nr] + [3 * spring.nfree for spring in self.deformables])
        self.nq = int(ends[-1])
        self.deformable_dofs = tuple(slice(int(a), int(b)) for a, b in zip(ends[:-1], ends[1:], strict=True))
        anc = np.zeros((self.n, self.nq), dtype=bool)
        for i, b in enumerate(bodies):
            if b.parent >= 0:
                anc[i] = anc[b.parent]
            anc[i, self.dofs[i]] = True
        self.ancestors = anc
        self.ancestors.setflags(write=False)
        self.spatial_inertias = np.array([b.spatial_inertia for b in bodies])
        self.spatial_inertias.setflags(write=False)
        self.T_parent_joint = np.array([b.T_parent_joint for b in bodies])
        self.T_joint_body = np.array([b.T_joint_body for b in bodies])
        nodes = [np.zeros(self.nq - self.nr)]  # joint springs act on joint coordinates only
        self.stiffness = np.concatenate([b.stiffness for b in bodies] + nodes)
        self.damping = np.concatenate([b.damping for b in bodies] + nodes)
        self.q_rest = np.concatenate([b.q_rest for b in bodies] + nodes)
        self.body_damping = np.array([b.body_damping for b in bodies])
        for a in (self.T_parent_joint, self.T_joint_body, self.stiffness, self.damping, self.q_rest,
                  self.body_damping):
            a.setflags(write=False)
        for k, c in enumerate(constraints):
            if not isinstance(c, Constraint):
                raise ArgumentTypeError(f"argument 'constraints': constraints[{k}] must be a Constraint of "
                                        f"redmax_edu.constraints, got {type(c).__name__}")
            c.check(self)
        self.constraints = tuple(constraints)
        self.friction = _checked_friction(self, friction)

    def __repr__(self):
        extra = f", deformables={len(self.deformables)}" if self.deformables else ""
        extra += f", constraints={len(self.constraints)}" if self.constraints else ""
        extra += f", friction={len(self.friction)}" if self.friction else ""
        return f"Model({self.n} bodies, nq={self.nq}, joints={[b.joint.kind for b in self.bodies]}{extra})"

    def index(self, name):
        """The index of the body called ``name``."""
        try:
            return self.names.index(name)
        except ValueError:
            raise ValueError(f"no body named {name!r}; bodies: {', '.join(self.names)}") from None

    def body_index(self, i, name="i", world=False):
        """Body ``i`` as an index: an int from 0 (from -1, the world, if ``world``) to ``n - 1``, or a
        body's name; anything else is a ValueError naming argument ``name`` and the bodies there are."""
        if isinstance(i, str):
            return self.index(i)
        i = as_index(i, name, minimum=-1 if world else 0)
        if i >= self.n:
            raise ValueError(f"argument '{name}': there is no body {i}; the model has bodies 0..{self.n - 1} "
                             f"({', '.join(self.names)})" + (" and -1 for the world" if world else ""))
        return i

    def children(self, i):
        """Indices of the bodies whose parent is body ``i`` (an index, -1 for the world, or a name)."""
        i = self.body_index(i, world=True)
        return tuple(k for k, p in enumerate(self.parents) if p == i)

    def check_state(self, q, qdot=_NO_QDOT):
        """Return ``q`` (and ``qdot``, if passed) as float arrays of shape (nq,), or raise ValueError."""
        q = as_real(q, (self.nq,), "q")
        return q if qdot is _NO_QDOT else (q, as_real(qdot, (self.nq,), "qdot"))

    def coordinates(self, q_joints=None):
        """A full coordinate vector (nq,): joint coordinates (nr,), default zero, then every
        deformable's free nodes at their starting positions."""
        q_joints = np.zeros(self.nr) if q_joints is None else as_real(q_joints, (self.nr,), "q_joints")
        return np.concatenate([q_joints] + [s.initial_coordinates() for s in self.deformables])

    def with_body(self, i, **changes):
        """A copy of the model with body ``i``'s fields replaced (e.g. a joint in a new chart); ``i``
        is an index or a name, and a field :class:`Body` does not have is refused by name."""
        i = self.body_index(i)
        check_keys(changes, _BODY_ATTRIBUTES, f"body {self.names[i]!r}")
        bodies = list(self.bodies)
        bodies[i] = replace(bodies[i], **changes)
        return Model(bodies, self.gravity, self.forces, self.deformables, self.constraints, self.friction)

    def with_forces(self, forces):
        """A copy of the model with another list of maximal forces."""
        return Model(self.bodies, self.gravity, forces, self.deformables, self.constraints, self.friction)

    def with_deformables(self, deformables):
        """A copy of the model with another list of deformable bodies (§2.7)."""
        return Model(self.bodies, self.gravity, self.forces, deformables, self.constraints, self.friction)

    def with_constraints(self, constraints):
        """A copy of the model with another list of constraints (§2.8-2.9); its friction is kept
        only if it has none on loop closures (whose indices would no longer match)."""
        friction = self.friction if not any(isinstance(f, ClosureFriction) for f in self.friction) else ()
        return Model(self.bodies, self.gravity, self.forces, self.deformables, constraints, friction)

    def with_friction(self, friction):
        """A copy of the model with another list of joint and closure frictions (§2.11)."""
        return Model(self.bodies, self.gravity, self.forces, self.deformables, self.constraints, friction)

    @property
    def has_friction(self):
        """True when stepping needs bilateral staggered projections (§2.11), that is with joint or
        closure friction, or a floor contact with ``mu > 0``."""
        return bool(self.friction) or any(getattr(c, "mu", 0.0) > 0 for c in self.constraints)

    def reparameterize(self, q, qdot):
        """Let every joint leave a singular chart: returns ``(model, q, qdot)`` (§2.4.5, §2.4.8).

        The returned coordinates describe the same poses and body twists; the model changes
        only if a joint changed chart. A joint spring ``-K (q - q_rest)`` on coordinates that
        change is refused (a ValueError naming the body): in the new coordinates the same K and
        q_rest are another potential, so the energy would jump at the switch.
        """
        return self.reparameterize_unchecked(*self.check_state(q, qdot))

    def reparameterize_unchecked(self, q, qdot):
        """:meth:`reparameterize` of a checked state (float arrays of shape (nq,)): the integrators
        call it before every step."""
        q, qdot, model = q.copy(), qdot.copy(), self
        for i, b in enumerate(self.bodies):
            if not b.joint.has_charts:
                continue
            s = self.dofs[i]
            before = q[s].copy()
            joint, q[s], qdot[s] = b.joint._reparameterize(q[s], qdot[s])
            sprung = (self.stiffness[s] != 0) & (q[s] != before)
            if sprung.any():
                raise ValueError(
                    f"body {b.name!r}: its {b.joint.kind} joint leaves a singular chart here (§2.4.5, "
                    f"§2.4.8), but coordinates {np.flatnonzero(sprung).tolist()} of the joint carry a joint "
                    "spring: -K (q - q_rest) in the new coordinates is another potential, and the energy "
                    "would jump at the switch. Put the spring on a joint without charts, use a FrameSpring "
                    "(redmax_edu.maximal.forces) for a rotational spring, or simulate with "
                    "reparameterize=False away from the singularity")
            if joint is not b.joint:
                model = model.with_body(i, joint=joint)
        return model, q, qdot

    def to_dict(self):
        """The model in the JSON scene format (forces are not part of it; deformables are)."""
        out = {"format": SCENE_FORMAT, "gravity": self.gravity.tolist(),
               "bodies": [b.to_dict() for b in self.bodies]}
        if self.deformables:
            out["deformables"] = [s.to_dict() for s in self.deformables]
        return out


def _checked_friction(model, friction):
    """The frictions as a tuple, each checked against the model, at most one per joint or closure."""
    if not friction:
        return ()
    seen = set()
    for k, f in enumerate(friction):
        if not isinstance(f, (JointFriction, ClosureFriction)):
            raise ArgumentTypeError(f"argument 'friction': friction[{k}] must be a JointFriction or "
                                    "ClosureFriction of redmax_edu.friction.patterns, "
                                    f"got {type(f).__name__}")
        f.check(model)
        key = (type(f), f.body if isinstance(f, JointFriction) else f.constraint)
        if key in seen:
            raise ValueError(f"{f.label(model)}: given twice in argument 'friction'")
        seen.add(key)
    return tuple(friction)


def check_model(model, name="model"):
    """Return ``model`` if it is a :class:`Model`; otherwise a TypeError (also a ValueError) naming it."""
    return as_instance(model, Model, name)


_BODY_FIELDS = ("name", "parent", "joint", "T_joint_body", "mass", "inertia")
#: Every key a body of the scene format may carry (an unknown one is refused, not ignored).
_BODY_KEYS = _BODY_FIELDS + ("T_parent_joint", "damping", "shape")
#: Every top-level key of the scene format.
_SCENE_KEYS = ("format", "gravity", "bodies", "deformables")


def model_from_dict(spec, forces=()):
    """Build a :class:`Model` from the JSON scene format "redmax_edu-peers/1".

    ``spec = {"gravity": [gx, gy, gz], "bodies": [{"name", "parent", "joint": {"type", ...,
    "T_parent_joint"}, "T_joint_body", "mass", "inertia"}, ...]}``. A joint may also carry
    ``stiffness``, ``damping`` and ``rest`` (§2.5); a body ``damping`` (viscous) and ``shape``.
    Every error names the body and the field.

    >>> spec = {"bodies": [{"name": "arm", "parent": -1, "joint": {"type": "revolute"},
    ...                     "T_joint_body": np.eye(4).tolist(), "mass": 1, "inertia": np.eye(3).tolist()}]}
    >>> model_from_dict(spec)
    Traceback (most recent call last):
    ...
    ValueError: body 'arm', joint: missing field 'axis'
    """
    if not isinstance(spec, dict):
        raise ValueError(f"a scene spec must be a dict, got {type(spec).__name__}")
    check_keys(spec, _SCENE_KEYS, "scene")
    fmt = spec.get("format", SCENE_FORMAT)
    if fmt != SCENE_FORMAT:
        raise ValueError(f"field 'format' must be {SCENE_FORMAT!r}, got {fmt!r}")
    gravity = _field("scene", "gravity", lambda: as_real(spec.get("gravity", GRAVITY), (3,), "gravity"))
    raw = spec.get("bodies")
    if not isinstance(raw, list) or not raw:
        raise ValueError("scene: field 'bodies' must be a non-empty list")
    bodies = []
    for i, b in enumerate(raw):
        label = f"bodies[{i}]"
        if not isinstance(b, dict):
            raise ValueError(f"{label}: must be a dict, got {type(b).__name__}")
        where = f"body {b['name']!r}" if isinstance(b.get("name"), str) else label
        check_keys(b, _BODY_KEYS, where)
        for key in _BODY_FIELDS:
            if key not in b:
                raise ValueError(f"{where}: missing field '{key}'")
        jspec = b["joint"]
        joint = joint_from_spec(jspec, f"{where}, joint")
        if "T_parent_joint" in b and "T_parent_joint" in jspec:
            raise ValueError(f"{where}: field 'T_parent_joint' is given twice (in the body and in its joint)")
        T_pj = b.get("T_parent_joint", jspec.get("T_parent_joint", np.eye(4)))
        extra = {}
        for key, name in (("stiffness", "stiffness"), ("damping", "damping"), ("rest", "q_rest")):
            if key in jspec:
                extra[name] = jspec[key]
        if "damping" in b:
            extra["body_damping"] = b["damping"]
        bodies.append(Body(name=b["name"], parent=b["parent"], joint=joint,
                           T_parent_joint=T_pj,
                           T_joint_body=b["T_joint_body"], mass=b["mass"], inertia=b["inertia"],
                           shape=b.get("shape"), **extra))
    raw = spec.get("deformables", [])
    if not isinstance(raw, list):
        raise ValueError(f"scene: field 'deformables' must be a list, got {type(raw).__name__}")
    deformables = [DeformableSpring.from_dict(d, k) for k, d in enumerate(raw)]
    return Model(bodies, gravity, forces, deformables)
