"""The scene catalogue of the RedMax reference code (``testRedMax(itype, sceneID)``).

The reference code is that of the RedMax supplemental material (Wang et al. 2019).

The reference implementation ships 37 preset scenes, from a two-link chain (-1) to a car
with friction (33) and a planar free body (35). Their data (every body, joint, spring,
constraint, time span and step) was dumped from the reference code into
``redmax_edu/data/redmax_scenes.json``, a verbatim copy of
``shared/reference/redmax_scenes/scenes.json``. This module turns those numbers into
:class:`~redmax_edu.model.Model` objects in SI units:

* :func:`catalogue` lists all 37 scenes, and says for each whether this release can build
  it and, if not, what it needs (constraints, prescribed motion, friction ...);
* :func:`scene` builds one as a :class:`Scene`: the model, initial state, time span, step
  size, applied torques and the integrators the reference runs it with.

Conventions of the data (its ``conventions`` block) and how they are read here:

* units are cm, g, s; every number is converted with ``redmax_edu.units.CGS_TO_SI``
  according to what it measures (a joint coordinate is an angle, a length or a spline
  parameter; a joint stiffness is a torque per radian or a force per metre ...);
* ``E_pj0`` (a joint in its parent joint's frame at ``q = 0``) is ``Body.T_parent_joint``,
  ``E_ji`` (the body's centre-of-mass frame in its joint frame) is ``Body.T_joint_body``;
* the initial state is each joint's own ``q0``/``qdot0`` in scene order (the data's ``y0``
  lists the same numbers in the reference's reversed internal order, so it is not used);
* body viscous damping ``-d phi`` mixes units (``d`` is g cm^2/s on the angular part and
  g/s on the linear part), so it becomes a :class:`~redmax_edu.maximal.forces.BodyDamping`
  force with one SI coefficient for each part.

Taught in book/02_reduced/gallery.
"""

import json
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources

import numpy as np

from .constraints import (
    CoordinateCoupling,
    FloorContact,
    JointLimit,
    Loop,
    NodeAttachment,
    PrescribedBody,
    PrescribedJoint,
    PrescribedJointVelocity,
)
from .deformable import DeformableSpring
from .joints import JOINT_TYPES
from .kinematics import forward_kinematics
from .maximal.forces import Attachment, BodyDamping, LinearSpringDamper, PointForce, PointSpring, Spring
from .model import Body, Model
from .units import CGS_TO_SI

__all__ = ["CatalogueEntry", "Scene", "PiecewiseConstant", "Sigmoid", "BodyTwistSchedule", "catalogue",
           "scene", "reference_data", "reference_setup", "SCENE_IDS", "DATA_FILE", "STIFFNESS_CHOICES",
           "ATTACHMENT_CHOICES", "ReferencePointForce", "ReferencePointSpring", "hanging_chain",
           "floating_chain"]

#: The data file inside the package.
DATA_FILE = "data/redmax_scenes.json"

#: Which reference setup holds the data of each integrator of :func:`redmax_edu.integrators.simulate`:
#: type 1 (recursive hybrid dynamics + ode45), type 2 (RedMax + ode45), type 3 (linearly implicit Euler).
_SETUP_OF = {"rk45_recursive": "itype1", "rk45": "itype2", "euler": "itype3"}

#: How :func:`scene` attaches the ends of scene 12's mass-spring chains: ``"exact"`` (the attached
#: node moves with its body point, Eq. 2.94-2.97) or ``"constraint"`` (every node is a
#: coordinate and constraints hold the ends, as the reference code does).
ATTACHMENT_CHOICES = ("exact", "constraint")

#: How :func:`scene` can build the stiffness matrices of the reference's point forces and point
#: springs: ``"exact"`` (the derivatives, this library's default) or ``"reference"`` (the
#: reference code's approximations, see :func:`scene`).
STIFFNESS_CHOICES = ("exact", "reference")

#: Factors of the cgs build (no conversion), for tests that the physics does not depend on units.
_NO_CONVERSION = dict.fromkeys(CGS_TO_SI, 1.0)

# --- the reference classes, read ---------------------------------------------------------------

#: What each coordinate of a reference joint measures.
_DOF_UNITS = {
    "redmax.JointFixed": (),
    "redmax.JointRevolute": ("angle",),
    "redmax.JointPrismatic": ("length",),
    "redmax.JointPlanar": ("length", "length"),
    "redmax.JointTranslational": ("length",) * 3,
    "redmax.JointUniversal": ("angle",) * 2,
    "redmax.JointSphericalExp": ("angle",) * 3,
    "redmax.JointFree3D": ("length",) * 3 + ("angle",) * 3,
    "redmax.JointFree": ("angle",) * 3 + ("length",) * 3,
    "redmax.JointFree2D": ("length", "length", "angle"),
    "redmax.JointSplineCurve": ("parameter",),
    "redmax.JointSplineSurface": ("parameter",) * 2,
}



def _coordinate_scale(unit, u):
    """SI value of one cgs unit of a coordinate that measures ``unit``."""
    return u["length"] if unit == "length" else 1.0


def _force_scale(unit, u):
    """SI value of one cgs unit of the generalised force that does work on such a coordinate."""
    return {"angle": u["torque"], "parameter": u["energy"], "length": u["force"]}[unit]

#: The reference's constraint classes that :func:`scene` builds (ConstraintAttachSpring: scene 12,
#: with ``attachment="constraint"``; ConstraintNull: none).
_CONSTRAINT_CLASSES = ("redmax.ConstraintNull", "redmax.ConstraintLoop", "redmax.ConstraintJointLimit",
                       "redmax.ConstraintMultQ", "redmax.ConstraintPrescJoint", "redmax.ConstraintPrescBody",
                       "redmax.ConstraintPrescJointM", "redmax.ConstraintFloor",
                       "redmax.ConstraintAttachSpring")

#: Why the reference disables its ode45 path for some scenes it can build.
_ODE_DISABLED = {
    3: "the reference disables ode45 here: its ode45 path does not reparameterise the exponential "
       "coordinates, which leave their chart within the run",
    24: "the reference disables ode45 here: the spring (k = 1e6 dyn) makes the problem stiff",
    6: "the reference disables ode45 here: its joint limit is solved at the velocity level only",
    13: "the reference's recursive hybrid dynamics cannot prescribe a body's twist (a maximal constraint)",
    20: "the reference's recursive hybrid dynamics cannot prescribe a body's twist (a maximal constraint)",
}

#: Where this library's scene differs, on purpose, from the reference code's.
_NOTES = {
    0: "The data gives the fixed joints a spurious coordinate q = 0; fixed joints have none here.",
    10: "The reference writes a (0, 0, 100) wrench in its scene function that is overwritten before use; "
        "it is left out. The constant point force has the potential energy -F . x here (the reference "
        "books none for it), so H differs from the reference CSV by the work of that force. "
        "Linearly implicit Euler (springs and dampers only, Eq. 2.86) uses the exact stiffness matrix of "
        "the point force here (Eq. 1.32, not symmetric); the reference code computes it and then sets it "
        "to zero, so the force is explicit in its Euler runs. The two choices move the Euler run's joint "
        "angles apart by up to about 0.15 rad over the 2 s at the reference step, a gap that halves with "
        "the step (both are first order); RK45 uses no stiffness matrix and is the same under both. "
        "scene(10, stiffness='reference') builds the reference's choice.",
    23: "Linearly implicit Euler (springs and dampers only, Eq. 2.86) uses the exact stiffness matrices of "
        "the point springs, which are not symmetric (the spring force turns with neither body); the "
        "reference code uses their symmetric parts (K + K^T)/2. The two choices move the Euler run's joint "
        "angles apart by up to about 0.015 rad over the 2 s at the reference step, a gap that halves with "
        "the step (both are first order); RK45 uses no stiffness matrix and is the same under both. "
        "scene(23, stiffness='reference') builds the reference's choice.",
    24: "The spring-damper uses the physical damping sign, f = (k (l - L) + d ldot) / L (the reference "
        "subtracts d ldot / L), and its energy k (l - L)^2 / (2 L) (the reference books "
        "k ((l - L)/L)^2 / 2).",
    25: "The composite body's mass, inertia and frame are the reference's (cross-checked against "
        "redmax_edu.inertia.composite in the tests).",
    12: "The chains' end nodes are attached exactly (an attached node moves with its body point and is "
        "not a coordinate, Eq. 2.94-2.97), where the reference keeps every node as a coordinate and holds "
        "the ends by Baumgarte-stabilised constraints (ConstraintAttachSpring): q has the 2 joint angles "
        "and the 3 coordinates of the one free node instead of the reference's 17 numbers. "
        "scene(12, attachment='constraint') builds the reference's way (17 coordinates, 4 node attachments).",
    26: "The mesh body's mass properties are the reference's mesh integration of cuboid.obj, a 1 x 2 x 3 cm "
        "box (cross-checked against redmax_edu.inertia.mesh of box_mesh in the tests).",
}

_LOOP = ("The loop closure's two rows measure the gap between the two points in the first body's "
         "frame (Loop.hinge), where the reference projects it on world directions (Eq. 2.102); the "
         "rows agree wherever the loop is closed, and these are the exact derivative of their error.")
_VELOCITY_LEVEL = ("Prescribed motion at the velocity level asks for G qdot1 = w + h dw/dt - gamma g, "
                   "with the position error g at the start of the step (the writeup's Eq. 2.114 with a "
                   "Baumgarte term); the reference asks for the velocity at the end of the step, which "
                   "lags the ramp by a step.")
_FRICTION = ("Friction by bilateral staggered projections (redmax_edu.contact) with this library's contact "
             "patterns around each joint, the reactions of Eq. 2.124 with the h Jdot qdot term the printed "
             "formula lacks, the end velocity without Eq. 2.127's second J^T f_alpha, bounds mu |alpha| for "
             "the signed joint impulses, and a friction stage that sees the constraints' response, "
             "accelerated (Anderson); the reference code's stopping rule and patterns differ, so its "
             "trajectories do too.")
_NOTES.update({
    4: _LOOP, 8: _LOOP, 15: _LOOP,
    6: ("At the velocity level a limit that still holds keeps the step from crossing it "
        "(C qdot1 >= -c/h), so the joint stops on its bound; the reference adds the limit's row only "
        "once it is passed and pushes the joint back with gamma c: it overshoots by up to a step."),
    9: _VELOCITY_LEVEL + " The sigmoid starts 4.3 mrad above q = 0 and jumps by as much when it is "
       "held at t1 (as in the reference); Baumgarte's terms close both gaps.",
    13: "The prescribed twist's rate (for RK45) includes the rotation of the world-frame velocity into the "
        "turning body frame, d(R^T v)/dt = -[omega] R^T v + R^T dv/dt.",
    20: _VELOCITY_LEVEL,
    27: _FRICTION, 28: _FRICTION, 29: _FRICTION, 31: _FRICTION,
    30: _LOOP + " " + _FRICTION + " The closing hinge takes friction too (ClosureFriction).",
    32: _LOOP + " The crank's speed is prescribed through a maximal constraint between its two bodies, "
        "whose reduced row is exactly the crank's coordinate (PrescribedJointVelocity).",
    33: _LOOP + " " + _FRICTION,
})


@lru_cache(maxsize=1)
def reference_data():
    """The reference scene data (the parsed JSON file shipped with the package), a dict.

    Keys: ``conventions`` (how to read it), ``scenes`` (by id as a string, "-1" to "35"),
    ``matlab_diff_scenes_BDF1_setup``. Treat it as read-only.
    """
    text = resources.files("redmax_edu").joinpath(DATA_FILE).read_text(encoding="utf-8")
    return json.loads(text)


#: The ids of the reference scenes, in the catalogue's order.
SCENE_IDS = tuple(sorted(int(k) for k in reference_data()["scenes"]))


def _check_id(scene_id):
    if isinstance(scene_id, bool) or not isinstance(scene_id, (int, np.integer)) or scene_id not in SCENE_IDS:
        raise ValueError(f"argument 'scene_id' must be one of the reference scene ids "
                         f"{SCENE_IDS[0]}..{SCENE_IDS[-1]}, got {scene_id!r}")
    return int(scene_id)


def reference_setup(scene_id, integrator="euler"):
    """The raw reference data of one scene as set up for ``integrator`` ("rk45" or "euler"), a dict.

    Lengths in cm, masses in g; see ``reference_data()["conventions"]``.
    """
    scene_id = _check_id(scene_id)
    if integrator not in _SETUP_OF:
        raise ValueError(f"argument 'integrator' must be one of {', '.join(_SETUP_OF)}, got {integrator!r}")
    return reference_data()["scenes"][str(scene_id)]["setups"][_SETUP_OF[integrator]]


def _classes(items):
    return [item["class"] for item in items]


def _unsupported_reason(scene_id):
    """Why this release cannot build the scene, or None."""
    setup = reference_setup(scene_id)
    reasons = []
    unknown = sorted(set(_classes(setup["constraints"])) - set(_CONSTRAINT_CLASSES))
    if unknown:
        reasons.append(f"needs the constraint type(s) {', '.join(unknown)}")
    known = {"redmax.DeformableNull", "redmax.DeformableSpring"}
    unknown = sorted(set(_classes(setup["deformables"])) - known)
    if unknown:
        reasons.append(f"needs the deformable type(s) {', '.join(unknown)}")
    missing = sorted({_joint_type(j) for j in setup["joints"]} - set(JOINT_TYPES))
    if missing:
        reasons.append(f"needs the joint type(s) {', '.join(missing)}, not registered in redmax_edu.joints")
    return "; ".join(reasons) or None


# --- the catalogue ------------------------------------------------------------------------------

@dataclass(frozen=True)
class CatalogueEntry:
    """One reference scene in the catalogue.

    Attributes
    ----------
    id : int
    name : str
    summary : str
        What the scene shows, from the reference data.
    features : tuple of str
    supported : bool
        Whether :func:`scene` can build it in this release.
    reason : str or None
        What it needs, when it is not supported.
    """

    id: int
    name: str
    summary: str
    features: tuple
    supported: bool
    reason: str | None


def catalogue():
    """All 37 reference scenes, in id order, as :class:`CatalogueEntry` objects.

    Examples
    --------
    >>> entries = catalogue()
    >>> len(entries), entries[0].id, entries[-1].id
    (37, -1, 35)
    >>> entry = {e.id: e for e in entries}[27]
    >>> entry.name, entry.supported, entry.reason
    ('Internal friction revolute', True, None)
    """
    out = []
    for sid in SCENE_IDS:
        raw = reference_data()["scenes"][str(sid)]
        reason = _unsupported_reason(sid)
        out.append(CatalogueEntry(sid, raw["name"], raw["summary"], tuple(raw["features"]),
                                  reason is None, reason))
    return out


# --- scene-specific forces ------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class PiecewiseConstant:
    """A piecewise-constant function of time: ``values[k]`` for ``breaks[k-1] <= t < breaks[k]``.

    Parameters
    ----------
    breaks : array_like, shape (m,)
        Increasing switch times.
    values : array_like, shape (m + 1, nq)

    Examples
    --------
    >>> tau = PiecewiseConstant([1.0], [[0.0], [2.0]])
    >>> tau(0.5), tau(1.0)
    (array([0.]), array([2.]))
    """

    breaks: np.ndarray
    values: np.ndarray

    def __post_init__(self):
        b = np.asarray(self.breaks, dtype=float)
        v = np.asarray(self.values, dtype=float)
        if b.ndim != 1 or np.any(np.diff(b) <= 0):
            raise ValueError(f"argument 'breaks' must be an increasing 1-D array, got {b.tolist()}")
        if v.ndim != 2 or len(v) != len(b) + 1:
            raise ValueError(f"argument 'values' must have shape ({len(b) + 1}, nq), got {v.shape}")
        object.__setattr__(self, "breaks", b)
        object.__setattr__(self, "values", v)

    def __call__(self, t):
        return self.values[int(np.searchsorted(self.breaks, t, side="right"))].copy()


@dataclass(frozen=True)
class Sigmoid:
    """The reference's smooth ramp of a prescribed joint: ``q(t) = b / (1 + exp(-a s))``,
    ``s = 2 ((t - t0) / (t1 - t0) - 1/2)``, held at ``q = b`` (at rest) from ``t1`` on.

    Called with ``t`` it returns ``(q, qdot, qddot)`` as one-element arrays (a
    :class:`~redmax_edu.constraints.PrescribedJoint` motion). The ramp reaches only
    ``b / (1 + exp(-a))`` at ``t1``, so the hold makes ``q`` jump there by
    ``b exp(-a) / (1 + exp(-a))`` (4.3 mrad for scene 9), as in the reference.

    Examples
    --------
    >>> ramp = Sigmoid(a=7.0, b=1.5 * np.pi, t0=0.0, t1=7.0)
    >>> q, qdot, qddot = ramp(3.5)
    >>> round(float(q[0]), 6), round(float(qdot[0]), 6)  # halfway: b/2 at the top rate a b / (2 (t1 - t0))
    (2.356194, 2.356194)
    """

    a: float
    b: float
    t0: float
    t1: float

    def __call__(self, t):
        if t >= self.t1:
            return np.array([self.b]), np.zeros(1), np.zeros(1)
        k = 2.0 / (self.t1 - self.t0)                           # ds/dt
        e = np.exp(-self.a * (k * (t - self.t0) - 1.0))
        sig = 1.0 / (1.0 + e)
        dsig = sig * (1.0 - sig)                                # d sig / d(a s)
        q = self.b * sig
        qdot = self.b * dsig * self.a * k
        qddot = self.b * dsig * (1.0 - 2.0 * sig) * (self.a * k) ** 2
        return np.array([q]), np.array([qdot]), np.array([qddot])


@dataclass(frozen=True)
class BodyTwistSchedule:
    """The reference's prescribed body motion (scenes 13 and 20): the body's angular velocity
    about its own y axis and its linear velocity in world x and z, piecewise linear in time.

    ``omega_y(t)`` (rad/s, body frame) and ``v(t)`` (world frame, ``scale`` m/s per reference
    cm/s) follow the schedule of the reference's scene function: ramps over 0-2 s, 2-4 s, 4-6 s
    and 6-8 s, at rest afterwards. Called as ``(t, E, phi) -> (w, wdot)`` it returns the wanted
    ``(omega_y, nu_x, nu_z)`` of the body twist, with ``nu = R^T v`` rotated into the body
    frame, and their rates, ``d(R^T v)/dt = -[omega] R^T v + R^T dv/dt`` (a
    :class:`~redmax_edu.constraints.PrescribedBody` target).
    """

    scale: float = 0.01

    def world(self, t):
        """``(omega_y, domega_y/dt, v (3,), dv/dt (3,))`` at time t."""
        zero, x = np.zeros(3), np.array([self.scale, 0.0, 0.0])
        if t < 2.0:
            return -t, -1.0, zero, zero
        if t < 4.0:
            return t - 4.0, 1.0, zero, zero
        if t < 6.0:
            return t - 4.0, 1.0, -2.0 * (t - 4.0) * x, -2.0 * x
        if t < 8.0:
            return -(t - 8.0), -1.0, 2.0 * (t - 8.0) * x, 2.0 * x
        return 0.0, 0.0, zero, zero

    def __call__(self, t, E, phi):
        w_y, dw_y, v, dv = self.world(t)
        R = E[:3, :3]
        nu = R.T @ v
        dnu = -np.cross(phi[:3], nu) + R.T @ dv
        return np.array([w_y, nu[0], nu[2]]), np.array([dw_y, dnu[0], dnu[2]])


class ReferencePointForce(PointForce):
    """A :class:`~redmax_edu.maximal.forces.PointForce` with the reference code's stiffness: none.

    The reference's ``SpringPointDirection`` computes the stiffness matrix of its constant
    world force and then sets it to zero, so linearly implicit Euler (springs and dampers
    only, Eq. 2.86) treats the force explicitly. Force and energy are the exact ones.

    Examples
    --------
    >>> f = ReferencePointForce(0, [0.1, 0.0, 0.0], [0.0, 0.0, 1.0], k=2.0)
    >>> terms = f.evaluate(np.eye(4)[None], np.zeros((1, 6)))
    >>> terms.f[1], bool(np.any(terms.K))
    (np.float64(-0.2), False)
    """

    def evaluate(self, E, phi):
        terms = super().evaluate(E, phi)
        terms.K = np.zeros_like(terms.K)
        return terms


class ReferencePointSpring(PointSpring):
    """A :class:`~redmax_edu.maximal.forces.PointSpring` with the reference code's stiffness:
    the symmetric part ``(K + K^T) / 2`` of the exact one.

    The exact stiffness of a zero-rest-length spring between two body points is not
    symmetric (the force rotates with neither body); the reference's ``SpringPointPoint``
    symmetrises it. Force, damping and energy are the exact ones.
    """

    def evaluate(self, E, phi):
        terms = super().evaluate(E, phi)
        terms.K = 0.5 * (terms.K + terms.K.T)
        return terms


# --- building a scene -------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Scene:
    """A reference scene built in SI units.

    Attributes
    ----------
    id : int
    name : str
    model : Model
    q0, qdot0 : ndarray, shape (nq,)
        The initial state (each joint's own ``q0``, ``qdot0``, converted).
    t_span : (float, float)
        The reference time span (s).
    h : float
        The reference step of linearly implicit Euler (``hEuler``, s).
    tau : callable or None
        Applied joint forces ``t -> (nq,)`` (SI), if the scene has them.
    integrators : tuple of str
        The methods of :func:`redmax_edu.integrators.simulate` the reference runs this scene
        with: ``"rk45_recursive"`` (its type 1, recursive dynamics and ode45), ``"rk45"``
        (type 2, RedMax and ode45) and/or ``"euler"`` (type 3).
    units : tuple of str, length nq
        What each coordinate measures: ``"angle"`` (rad), ``"length"`` (m) or ``"parameter"``
        (a spline parameter).
    conservative : bool
        True when nothing dissipates or does work on the system (no damping, no damper
        springs, no applied torques, no prescribed motion, no limits, contacts or friction):
        the exact motion conserves ``T + V``.
    description : str
        The reference summary, and any deliberate difference from the reference code.
    features : tuple of str
    coordinate_scale : ndarray, shape (nq,)
        SI value of one reference (cgs) unit of each coordinate: 0.01 for lengths, else 1.
    spans : dict
        The reference time span of each integrator in :attr:`integrators` (they differ only
        for scene 30, whose Euler run is shorter).
    baumgarte : (alpha, beta, gamma)
        The reference's stabilisation gains for the scene's constraints (1/s).
    """

    id: int
    name: str
    model: Model
    q0: np.ndarray
    qdot0: np.ndarray
    t_span: tuple
    h: float
    tau: object
    integrators: tuple
    units: tuple
    conservative: bool
    description: str
    features: tuple = field(default=())
    coordinate_scale: np.ndarray = field(default=None, repr=False)
    spans: dict = field(default=None, repr=False)
    baumgarte: tuple = (5.0, 5.0, 5.0)

    def rk45_atol(self, atol=1e-6):
        """``atol`` (2 nq,) for RK45 that matches the reference's ``AbsTol`` on cgs numbers.

        The reference's absolute tolerance 1e-6 applies to centimetres and radians; in metres
        the same accuracy is ``1e-8`` on length coordinates (and their rates).
        """
        scale = self.coordinate_scale
        return np.concatenate([scale, scale]) * atol

    def simulate(self, method=None, t_span=None, **options):
        """Run the scene with :func:`redmax_edu.integrators.simulate`; returns a Trajectory.

        ``method`` defaults to the first of :attr:`integrators`; ``t_span`` to the reference
        span of that method. For ``"euler"`` the step is :attr:`h`, for the RK45 methods the
        absolute tolerance is :meth:`rk45_atol`, and the constraints use :attr:`baumgarte`,
        unless ``options`` say otherwise.
        """
        from .integrators import simulate

        method = self.integrators[0] if method is None else method
        if method in _SETUP_OF and method not in self.integrators:
            raise ValueError(f"scene {self.id} ({self.name}): argument 'method' {method!r} is not available: "
                             f"{_ODE_DISABLED.get(self.id, 'the reference does not run it')}; "
                             f"use one of {', '.join(self.integrators)}")
        if method == "euler":
            options.setdefault("h", self.h)
        else:
            options.setdefault("atol", self.rk45_atol())
        options.setdefault("baumgarte", self.baumgarte)
        span = self.spans.get(method, self.t_span) if t_span is None else t_span
        # friction is a velocity-level method (BISP, §2.11): the reference's ode45 runs drop it
        model = self.model if method == "euler" else self.model.with_friction(())
        return simulate(model, self.q0, self.qdot0, span, method, tau=self.tau, **options)

    def __repr__(self):
        return (f"Scene({self.id}, {self.name!r}, {self.model!r}, t_span={self.t_span}, h={self.h}, "
                f"integrators={self.integrators})")


def _matrix(value, where, name, u):
    """A reference 4x4 (row-major, cm) as an SI transform; empty means identity."""
    if value is None or (isinstance(value, list) and not value):
        return np.eye(4)
    E = np.array(value, dtype=float)
    if E.shape != (4, 4):
        raise ValueError(f"{where}: field '{name}' must be 4x4, got shape {E.shape}")
    E[:3, 3] *= u["length"]
    return E


def _per_dof(value, ndof):
    a = np.atleast_1d(np.asarray(value, dtype=float))
    return np.full(ndof, float(a[0])) if a.size == 1 and ndof != 1 else a


def _joint_type(jdata):
    cls = jdata["class"]
    return {"redmax.JointFixed": "fixed", "redmax.JointRevolute": "revolute",
            "redmax.JointPrismatic": "prismatic", "redmax.JointPlanar": "planar",
            "redmax.JointTranslational": "translational", "redmax.JointUniversal": "universal",
            "redmax.JointSphericalExp": "spherical_exp", "redmax.JointFree3D": "free3d_exp",
            "redmax.JointFree": "free3d_exp", "redmax.JointFree2D": "free2d",
            "redmax.JointComposite": "composite", "redmax.JointSplineCurve": "spline_curve",
            "redmax.JointSplineSurface": "spline_surface"}.get(cls, cls)


def _dof_units(jdata):
    if jdata["class"] == "redmax.JointComposite":
        return _dof_units(jdata["joint1"]) + _dof_units(jdata["joint2"])
    return _DOF_UNITS[jdata["class"]]


def _joint_spec(jdata, where, u):
    """The scene-format spec (SI) of a reference joint."""
    kind = _joint_type(jdata)
    spec = {"type": kind}
    if kind in ("revolute", "prismatic"):
        spec["axis"] = jdata["axis"]
    elif kind == "planar":
        spec["plane"] = [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]  # translation in the joint's x-y plane
    elif kind == "free3d_exp" and jdata["class"] == "redmax.JointFree":
        spec["order"] = "rotate_first"
    elif kind == "composite":
        spec["joints"] = [_joint_spec(jdata[key], f"{where}, {key}", u) for key in ("joint1", "joint2")]
    elif kind == "spline_curve":
        spec["control_frames"] = [_matrix(C, where, "controlFrames", u).tolist()
                                  for C in jdata["controlFrames"]]
    elif kind == "spline_surface":
        values = np.array(jdata["controlValues"], dtype=float)  # (4, 4, 6): x, y, z, then angles
        values[..., :3] *= u["length"]
        spec["control_values"] = values.tolist()
    elif kind not in ("fixed", "translational", "universal", "spherical_exp", "free3d_exp", "free2d"):
        raise ValueError(f"{where}: reference joint class {jdata['class']!r} has no counterpart here")
    return spec


def _shape(bdata, u):
    """How to draw a reference body, in SI, in its body frame."""
    cls, cm = bdata["class"], u["length"]
    if cls == "redmax.BodyCuboid":
        return {"type": "cuboid", "sides": (np.array(bdata["sides"], float) * cm).tolist()}
    if cls == "redmax.BodyCylinder":
        return {"type": "cylinder", "radius": bdata["radius"] * cm, "height": bdata["height"] * cm}
    if cls == "redmax.BodySphere":
        return {"type": "sphere", "radius": bdata["radius"] * cm}
    if cls == "redmax.BodyComposite":
        parts = []
        for part in bdata["parts"]:
            shape = _shape(part, u)
            shape["E"] = _matrix(part["E_cb"], bdata["name"], "E_cb", u).tolist()  # part frame in body frame
            parts.append(shape)
        return {"type": "composite", "parts": parts}
    if cls == "redmax.BodyMeshObj" and bdata["filename"] == "cuboid.obj":
        E_io = np.linalg.inv(_matrix(bdata["E_oi"], bdata["name"], "E_oi", u))  # mesh frame in body frame
        return {"type": "cuboid", "sides": [cm, 2 * cm, 3 * cm], "E": E_io.tolist(), "source": "cuboid.obj"}
    return {"type": "mesh", "source": bdata.get("filename")}


#: Constraints that do work (prescribed motion) or take energy out (velocity-level stops and
#: contacts are perfectly inelastic).
_NONCONSERVATIVE = ("redmax.ConstraintPrescJoint", "redmax.ConstraintPrescBody",
                    "redmax.ConstraintPrescJointM", "redmax.ConstraintJointLimit", "redmax.ConstraintFloor")


def _conserves_energy(setup, has_tau):
    damped = any(b["damping"] for b in setup["bodies"]) or any(np.any(j["Dr"]) for j in setup["joints"])
    damped = damped or any(d.get("damping", 0) for d in setup["deformables"])
    dampers = any(s["class"] == "redmax.SpringDamper" and s["d"] for s in setup["springs"])
    driven = any(c["class"] in _NONCONSERVATIVE for c in setup["constraints"])
    return not (damped or dampers or has_tau or driven or setup["fric"])


def _scene5_torque(u):
    """Scene 5's piecewise-constant joint torques (the reference's sceneFcn05), in N m."""
    values = np.array([[0.0, 0.0, 100.0], [0.0, 100.0, -100.0], [100.0, -100.0, 0.0]])
    return PiecewiseConstant([3.0, 6.0], values * u["torque"])


def _springs(setup, E_wi, sid, u, stiffness="exact"):
    """Model forces for the reference springs; E_wi (SI) are the initial body poses.

    ``stiffness="reference"`` gives point forces and point springs the reference code's
    approximate stiffness matrices (:class:`ReferencePointForce`, :class:`ReferencePointSpring`).
    """
    exact = stiffness == "exact"
    point_force, point_spring = (PointForce, PointSpring) if exact else (ReferencePointForce,
                                                                         ReferencePointSpring)
    forces = []
    for k, s in enumerate(setup["springs"]):
        cls = s["class"]
        where = f"scene {sid}, springs[{k}]"
        if cls == "redmax.SpringNull":
            continue
        if cls == "redmax.SpringPointDirection":
            forces.append(point_force(s["body"] - 1, np.array(s["x_i"], float) * u["length"], s["d_w"],
                                     k=s["stiffness"] * u["force"]))
        elif cls == "redmax.SpringPointPoint":
            a = Attachment(s["body1"] - 1, np.array(s["x_1"], float) * u["length"])
            b = Attachment(s["body2"] - 1, np.array(s["x_2"], float) * u["length"])
            forces.append(point_spring(a, b, s["stiffness"] * u["stiffness"]))
        elif cls == "redmax.SpringDamper":
            points = [Attachment(s["body1"] - 1, np.array(s["x_1"], float) * u["length"]),
                      Attachment(s["body2"] - 1, np.array(s["x_2"], float) * u["length"])]
            x = [(E_wi[p.body] @ np.append(p.r, 1.0))[:3] if p.body >= 0 else p.r for p in points]
            L = s["L"] * u["length"] or float(np.linalg.norm(x[1] - x[0]))  # 0 means the initial length
            # f = k (l - L)/L + d ldot/L: k and d are a force and a force times a time
            law = LinearSpringDamper(s["k"] * u["force"], s["d"] * u["force"], L)
            forces.append(Spring(points, law))
        else:
            raise ValueError(f"{where}: reference spring class {cls!r} has no counterpart here")
    return forces


def _deformables(setup, u, attachment="exact"):
    """The reference's mass-spring chains (DeformableSpring), with their free nodes' coordinates.

    With ``attachment="constraint"`` no node is attached (every node is a coordinate) and
    :func:`_constraints` holds the end nodes with :class:`~redmax_edu.constraints.NodeAttachment`.
    """
    chains = []
    for k, d in enumerate(setup["deformables"]):
        if d["class"] != "redmax.DeformableSpring":
            continue
        ends = {}
        if attachment == "exact":
            for key, body, r in (("first", d["body0"], d["r0"]), ("last", d["body1"], d["r1"])):
                ends[key] = Attachment(int(body) - 1, np.array(r, float) * u["length"])  # body 0: the world
        # segment energy K eps^2 / 2 with a dimensionless strain: K is an energy
        chains.append(DeformableSpring(np.array(d["x0"], float) * u["length"], d["K"] * u["energy"],
                                       d["mass"] * u["mass"], damping=d["damping"] * u["energy"],
                                       rest_lengths=np.atleast_1d(np.array(d["L"], float)) * u["length"],
                                       name=f"spring{k + 1}", **ends))
    return chains


def _constraints(sid, setup, model, u, attachment):
    """The reference's constraints as :mod:`redmax_edu.constraints` objects, in SI."""
    out = []
    for c in setup["constraints"]:
        cls, name = c["class"], c["name"]
        if cls == "redmax.ConstraintLoop":
            out.append(Loop.hinge(model, c["bodyA"] - 1, np.array(c["xA"], float) * u["length"],
                                  c["bodyB"] - 1, np.array(c["xB"], float) * u["length"], name=name))
        elif cls == "redmax.ConstraintJointLimit":
            out.append(JointLimit(c["joint"] - 1, c["ql"], c["qu"], name=name))
        elif cls == "redmax.ConstraintMultQ":  # qB = factor qA (revolute joints: angles)
            out.append(CoordinateCoupling(c["jointA"] - 1, c["jointB"] - 1, ratio=c["factor"], name=name))
        elif cls == "redmax.ConstraintPrescJoint":
            out.append(PrescribedJoint(c["joint"] - 1, _PRESCRIBED_JOINTS[(sid, c["joint"])],
                                       name=name))
        elif cls == "redmax.ConstraintPrescBody":
            out.append(PrescribedBody(c["body"] - 1, [r - 1 for r in c["prows"]],
                                      BodyTwistSchedule(u["length"]), name=name))
        elif cls == "redmax.ConstraintPrescJointM":
            speed = _PRESCRIBED_SPEEDS[sid]
            out.append(PrescribedJointVelocity(c["joint"] - 1, lambda t, v=speed: (v, 0.0), name=name))
        elif cls == "redmax.ConstraintFloor":
            body = model.bodies[c["body"] - 1]
            radius = body.shape["radius"] if body.shape and body.shape.get("type") == "sphere" else 0.0
            out.append(FloorContact(c["body"] - 1, radius=radius, plane=_matrix(c["E"], name, "E", u),
                                    mu=setup["mu"][1], name=name))
    if attachment == "constraint":
        for k, d in enumerate(setup["deformables"]):
            if d["class"] != "redmax.DeformableSpring":
                continue
            last = len(d["x0"]) - 1
            for node, body, r in ((0, d["body0"], d["r0"]), (last, d["body1"], d["r1"])):
                out.append(NodeAttachment(k, node, int(body) - 1, np.array(r, float) * u["length"],
                                          name=f"spring{k + 1}-node{node}"))
    return out


def _friction(setup, model, u):
    """Joint and closure friction of a frictional reference scene (its ``mu[0]``; floor contacts carry
    ``mu[1]`` themselves), with the joints' contact geometry from the data (§2.11)."""
    from .contact import ClosureFriction, Cylinder, JointFriction

    mu = setup["mu"][0]
    out = [JointFriction.from_reference(j, i, mu, u["length"]) for i, j in enumerate(setup["joints"])
           if int(j["ndof"]) and any(key in j for key in ("radius", "sides"))]
    loops = {c["name"]: c for c in setup["constraints"] if c["class"] == "redmax.ConstraintLoop"}
    for k, c in enumerate(model.constraints):
        if c.name in loops:  # a closing hinge: its cylinder is the closure's radius and height
            radius, height = (loops[c.name][key] * u["length"] for key in ("radius", "height"))
            out.append(ClosureFriction(k, mu, Cylinder(radius, height)))
    return out


#: The prescribed joint motions of the reference's scene functions, by (scene id, joint number).
_PRESCRIBED_JOINTS = {
    (9, 1): Sigmoid(a=7.0, b=1.5 * np.pi, t0=0.0, t1=7.0),
    (20, 3): Sigmoid(a=7.0, b=0.5 * np.pi, t0=0.0, t1=10.0),
}

#: The crank speeds (rad/s) of the scenes that prescribe a joint velocity through a maximal
#: constraint (scene 32 and the friction car, 33).
_PRESCRIBED_SPEEDS = {32: -4.0 * np.pi, 33: 4.0 * np.pi}


@cache
def _build(sid, si=True, stiffness="exact", attachment="exact"):
    """Scene ``sid`` in SI units (or, with ``si=False``, in the reference's cgs numbers)."""
    u = CGS_TO_SI if si else _NO_CONVERSION
    reason = _unsupported_reason(sid)
    raw = reference_data()["scenes"][str(sid)]
    if reason is not None:
        raise ValueError(f"scene {sid} ({raw['name']}) is not supported in this release: {reason}")
    setup = reference_setup(sid, "euler")
    bodies, q0, qdot0, units, scales, damping_forces = [], [], [], [], [], []
    for i, (bdata, jdata) in enumerate(zip(setup["bodies"], setup["joints"], strict=True)):
        where = f"scene {sid}, body {bdata['name']!r}"
        ndof = int(jdata["ndof"])
        ju = _dof_units(jdata)
        coord = np.array([_coordinate_scale(unit, u) for unit in ju])
        force = np.array([_force_scale(unit, u) for unit in ju])
        extra = {}
        if ndof:
            q0.append(_per_dof(jdata["q0"], ndof) * coord)
            qdot0.append(_per_dof(jdata["qdot0"], ndof) * coord)
            units.extend(ju)
            scales.extend(coord)
            # joint spring about the initial coordinates (qInit): torque per rad or force per metre
            extra = dict(stiffness=_per_dof(jdata["Kr"], ndof) * force / coord,
                         damping=_per_dof(jdata["Dr"], ndof) * force / coord,
                         q_rest=_per_dof(jdata["qInit"], ndof) * coord)
        I_i = np.array(bdata["I_i"], dtype=float)
        if bdata["damping"]:
            d = float(bdata["damping"])
            damping_forces.append(BodyDamping(i, d * u["torque"], linear=d * u["force"] / u["length"]))
        bodies.append(Body(name=bdata["name"], parent=int(jdata["parent"]) - 1,
                           joint=JOINT_TYPES[_joint_type(jdata)].from_spec(_joint_spec(jdata, where, u),
                                                                           f"{where}, joint"),
                           T_parent_joint=_matrix(jdata["E_pj0"], where, "E_pj0", u),
                           T_joint_body=_matrix(bdata["E_ji"], where, "E_ji", u),
                           mass=I_i[3] * u["mass"], inertia=I_i[:3] * u["inertia"],
                           shape=_shape(bdata, u), **extra))
    gravity = np.array(setup["grav"], dtype=float) * u["acceleration"]
    chains = _deformables(setup, u, attachment)
    for chain in chains:  # the free nodes' coordinates follow the joints' (Eq. 2.96-2.97)
        q0.append(chain.initial_coordinates())
        qdot0.append(np.zeros(3 * chain.nfree))
        units.extend(["length"] * 3 * chain.nfree)
        scales.extend([u["length"]] * 3 * chain.nfree)
    q0 = np.concatenate(q0) if q0 else np.zeros(0)
    qdot0 = np.concatenate(qdot0) if qdot0 else np.zeros(0)
    model = Model(bodies, gravity, deformables=chains)
    forces = _springs(setup, forward_kinematics(model, q0).E_wi, sid, u, stiffness) + damping_forces
    if forces:
        model = model.with_forces(forces)
    constraints = _constraints(sid, setup, model, u, attachment)
    if constraints:
        model = model.with_constraints(constraints)
    if setup["fric"]:
        model = model.with_friction(_friction(setup, model, u))
    tau = _scene5_torque(u) if sid == 5 else None
    from .integrators import METHODS

    integrators = tuple(m for m, key in _SETUP_OF.items() if m in METHODS
                        and raw["setups"][key]["tspan"][1] > raw["setups"][key]["tspan"][0])
    spans = {m: tuple(float(t) for t in raw["setups"][_SETUP_OF[m]]["tspan"]) for m in integrators}
    t_span = tuple(float(t) for t in setup["tspan"])
    description = raw["summary"] + (f" Here: {_NOTES[sid]}" if sid in _NOTES else "")
    for a in (q0, qdot0):
        a.setflags(write=False)
    return Scene(id=sid, name=raw["name"], model=model, q0=q0, qdot0=qdot0, t_span=t_span,
                 h=float(setup["hEuler"]), tau=tau, integrators=integrators, units=tuple(units),
                 conservative=_conserves_energy(setup, tau is not None), description=description,
                 features=tuple(raw["features"]), coordinate_scale=np.array(scales), spans=spans,
                 baumgarte=tuple(float(b) for b in setup["baumgarte"]))


def scene(scene_id, stiffness="exact", attachment="exact"):
    """Build reference scene ``scene_id`` in SI units; returns a :class:`Scene`.

    Parameters
    ----------
    scene_id : int
    stiffness : {"exact", "reference"}
        The stiffness matrices of the point forces and point springs (scenes 10 and 23),
        which only linearly implicit Euler (springs and dampers only, Eq. 2.86) uses.
        ``"exact"``: their derivatives. ``"reference"``: the reference code's choice, none
        for a constant point force and the symmetric part for a point spring
        (:class:`ReferencePointForce`, :class:`ReferencePointSpring`); use it to compare
        Euler runs with the reference code's. RK45 and every other scene are unaffected.
    attachment : {"exact", "constraint"}
        How scene 12's mass-spring chains hold on to their ends: ``"exact"`` (the end node
        moves with its body point and is not a coordinate, Eq. 2.94-2.97) or
        ``"constraint"`` (every node is a coordinate and :class:`~redmax_edu.constraints.NodeAttachment`
        constraints, stabilised like the others, hold the ends: the reference code's way).
        Every other scene is unaffected.

    Raises
    ------
    ValueError
        If the id is unknown, or the scene needs a feature this release lacks (the message
        says which; :func:`catalogue` lists them all).

    Examples
    --------
    >>> s = scene(-1)
    >>> s.name, s.model.nq, s.t_span, s.h, s.integrators
    ('Simpler serial chain', 2, (0.0, 2.0), 0.01, ('rk45_recursive', 'rk45', 'euler'))
    >>> np.round(s.q0, 6), s.model.bodies[0].mass, s.model.bodies[0].shape
    (array([1.570796, 0.785398]), 0.01, {'type': 'cuboid', 'sides': [0.1, 0.01, 0.01]})
    >>> scene(4).model.constraints  # doctest: +ELLIPSIS
    (Loop(loop closure 'body3-body4'),)
    >>> scene(27).model.friction  # doctest: +ELLIPSIS
    (JointFriction(body=0, mu=0.6, geometry=Cylinder(radius=0.005, height=0.01)), JointFriction(...))

    Taught in book/02_reduced/gallery.
    """
    if not isinstance(stiffness, str) or stiffness not in STIFFNESS_CHOICES:
        raise ValueError(f"argument 'stiffness' must be one of {', '.join(STIFFNESS_CHOICES)}, "
                         f"got {stiffness!r}")
    if not isinstance(attachment, str) or attachment not in ATTACHMENT_CHOICES:
        raise ValueError(f"argument 'attachment' must be one of {', '.join(ATTACHMENT_CHOICES)}, "
                         f"got {attachment!r}")
    return _build(_check_id(scene_id), stiffness=stiffness, attachment=attachment)


def hanging_chain(n, length=0.2, mass=0.5, damping=0.0):
    """A planar chain of ``n`` uniform rods on hinges about y, hanging from the world: a scene of our own.

    Not one of the reference catalogue's: the chain the §3.4 claims and benchmark time
    (a 10-body chain over 100 BDF2 steps). Rod i is ``length`` long (m), 2 cm thick, of ``mass``
    kg, its hinge at the end of rod i - 1; at ``q = 0`` the chain hangs straight down. With
    ``damping`` (N m s/rad) on every hinge; without, the chain conserves its energy.

    Returns
    -------
    Model
        n bodies, nq = n.

    Examples
    --------
    >>> chain = hanging_chain(10)
    >>> chain.nq, chain.bodies[3].parent, round(float(chain.bodies[0].mass), 3)
    (10, 2, 0.5)

    Taught in book/03_differentiable/04_implicit_integrators.
    """
    from .inertia import cuboid
    from .joints import Revolute

    T_pj, T_jb = np.eye(4), np.eye(4)
    T_pj[2, 3], T_jb[2, 3] = -length, -length / 2
    inertia = cuboid([0.02, 0.02, length], mass=mass).inertia
    return Model([Body(f"rod{i}", i - 1, Revolute([0, 1, 0]), np.eye(4) if i == 0 else T_pj, T_jb, mass,
                       inertia, damping=damping) for i in range(n)])


def floating_chain(n, length=0.2, mass=0.5, thickness=0.08, stiffness=0.5):
    """A chain of ``n`` boxes floating in space, hinged about z with joint springs: a scene of our own.

    The first box has a free joint (``Free3DEuler("ZYX")``: position, then yaw, pitch, roll);
    each next box a hinge about z at the far end of the one before, with a spring of
    ``stiffness`` (N m/rad) towards ``q = 0``, where the chain lies straight along +x. There is
    no gravity: no force from outside acts, so the chain's linear and angular momentum are
    constant and so is its energy. The conservative scene of the variational-integrator chapter.

    Parameters
    ----------
    n : int
        Number of boxes (nq = 6 + (n - 1)).
    length, thickness : float
        Sides of each box (m): ``length x thickness x thickness``.
    mass : float
        Of each box (kg).
    stiffness : float
        Of every hinge's spring (N m/rad).

    Returns
    -------
    Model

    Examples
    --------
    >>> chain = floating_chain(3)
    >>> chain.nq, chain.bodies[2].parent, chain.gravity.tolist()
    (8, 1, [0.0, 0.0, 0.0])

    Taught in book/05_variational/01_what_is_preserved.
    """
    from .inertia import cuboid
    from .joints import Free3DEuler, Revolute

    T_pj, T_jb = np.eye(4), np.eye(4)
    T_pj[0, 3], T_jb[0, 3] = length, length / 2
    inertia = cuboid([length, thickness, thickness], mass=mass).inertia
    bodies = [Body("box0", -1, Free3DEuler("ZYX"), np.eye(4), T_jb, mass, inertia)]
    bodies += [Body(f"box{i}", i - 1, Revolute([0, 0, 1]), T_pj, T_jb, mass, inertia, stiffness=stiffness)
               for i in range(1, n)]
    return Model(bodies, gravity=[0.0, 0.0, 0.0])
