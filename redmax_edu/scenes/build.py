"""Reference scenes as models in SI units: :func:`scene` builds a :class:`Scene` from the data.

Conventions of the data (its ``conventions`` block, :func:`redmax_edu.scenes.reference.reference_data`)
and how they are read here:

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

from dataclasses import dataclass, field
from functools import cache

import numpy as np

from ..constraints import (
    CoordinateCoupling,
    FloorContact,
    JointLimit,
    Loop,
    NodeAttachment,
    PrescribedBody,
    PrescribedJoint,
    PrescribedJointVelocity,
)
from ..deformable import DeformableSpring
from ..friction.patterns import ClosureFriction, Cylinder, JointFriction
from ..integrators import METHODS, simulate
from ..joints import JOINT_TYPES
from ..kinematics import forward_kinematics
from ..maximal.forces import Attachment, BodyDamping, LinearSpringDamper, PointForce, PointSpring, Spring
from ..model import Body, Model
from ..units import CGS_TO_SI
from .forces import BodyTwistSchedule, PiecewiseConstant, ReferencePointForce, ReferencePointSpring, Sigmoid
from .reference import (
    NOTES,
    ODE_DISABLED,
    SETUP_OF,
    check_scene_id,
    dof_units,
    joint_type,
    reference_data,
    reference_setup,
    unsupported_reason,
)

__all__ = ["Scene", "scene", "STIFFNESS_CHOICES", "ATTACHMENT_CHOICES"]

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

def _coordinate_scale(unit, u):
    """SI value of one cgs unit of a coordinate that measures ``unit``."""
    return u["length"] if unit == "length" else 1.0


def _force_scale(unit, u):
    """SI value of one cgs unit of the generalised force that does work on such a coordinate."""
    return {"angle": u["torque"], "parameter": u["energy"], "length": u["force"]}[unit]

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
        method = self.integrators[0] if method is None else method
        if method in SETUP_OF and method not in self.integrators:
            raise ValueError(f"scene {self.id} ({self.name}): argument 'method' {method!r} is not available: "
                             f"{ODE_DISABLED.get(self.id, 'the reference does not run it')}; "
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

def _joint_spec(jdata, where, u):
    """The scene-format spec (SI) of a reference joint."""
    kind = joint_type(jdata)
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
    reason = unsupported_reason(sid)
    raw = reference_data()["scenes"][str(sid)]
    if reason is not None:
        raise ValueError(f"scene {sid} ({raw['name']}) is not supported in this release: {reason}")
    setup = reference_setup(sid, "euler")
    bodies, q0, qdot0, units, scales, damping_forces = [], [], [], [], [], []
    for i, (bdata, jdata) in enumerate(zip(setup["bodies"], setup["joints"], strict=True)):
        where = f"scene {sid}, body {bdata['name']!r}"
        ndof = int(jdata["ndof"])
        ju = dof_units(jdata)
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
                           joint=JOINT_TYPES[joint_type(jdata)].from_spec(_joint_spec(jdata, where, u),
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
    integrators = tuple(m for m, key in SETUP_OF.items() if m in METHODS
                        and raw["setups"][key]["tspan"][1] > raw["setups"][key]["tspan"][0])
    spans = {m: tuple(float(t) for t in raw["setups"][SETUP_OF[m]]["tspan"]) for m in integrators}
    t_span = tuple(float(t) for t in setup["tspan"])
    description = raw["summary"] + (f" Here: {NOTES[sid]}" if sid in NOTES else "")
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
    return _build(check_scene_id(scene_id), stiffness=stiffness, attachment=attachment)
