"""Malformed input thrown at the public entry points (issue 9, section 4), property-based.

Every call must end in one of two ways: a ValueError or TypeError whose message names the
argument (or the body, joint or field) at fault, or a finite result. Never another
exception type, never NaN or inf, never a hang (each example has a deadline). The examples
are derandomized and bounded, so the file is deterministic and runs in well under a minute.

Run with ``-s`` to print how many malformed inputs were tried and how each class ended.
"""

import collections
import copy
import dataclasses
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from redmax_edu import inertia, lie
from redmax_edu.checks import numerical_derivative
from redmax_edu.constraints import PrescribedBody, PrescribedJoint, PrescribedJointVelocity
from redmax_edu.dynamics import (
    energies,
    forward_dynamics,
    inverse_dynamics,
    linearly_implicit_euler_step,
    mass_matrix,
    reduced_forces,
)
from redmax_edu.integrators import simulate
from redmax_edu.joints import (
    JOINT_TYPES,
    Composite,
    Revolute,
    SphericalEuler,
    SphericalExp,
    SplineCurve,
    SplineSurface,
    joint_from_spec,
)
from redmax_edu.kinematics import forward_kinematics
from redmax_edu.maximal import forces as mforces
from redmax_edu.maximal.body import RigidBody, kinetic_energy, newton_euler_acceleration, spatial_momentum
from redmax_edu.maximal.constraints import GroundContact, Joint
from redmax_edu.maximal.simulate import simulate as msimulate
from redmax_edu.maximal.simulate import simulate_rk45 as msimulate_rk45
from redmax_edu.maximal.simulate import step
from redmax_edu.maximal.system import System
from redmax_edu.model import Body, Model, model_from_dict
from redmax_edu.quaternion import integrate_orientation
from redmax_edu.scenes import BodyTwistSchedule, PiecewiseConstant, Sigmoid
from redmax_edu.simulation import SimulationError

# Hypothesis caches what it learns (constants mined from the source) in a .hypothesis folder;
# keep it out of the repository (the examples do not depend on it: derandomize=True).
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "redmax_edu_hypothesis")

SETTINGS = settings(derandomize=True, max_examples=150, deadline=2000, database=None,
                    suppress_health_check=list(HealthCheck))

#: outcome counts per class of entry point: {"lie": Counter(refused=..., finite=...)}
OUTCOMES = collections.defaultdict(collections.Counter)


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    total = collections.Counter()
    for cls, counts in sorted(OUTCOMES.items()):
        total.update(counts)
        print(f"\nmalformed input, {cls}: {dict(counts)}", end="")
    print(f"\nmalformed input, all: {dict(total)} ({sum(total.values())} calls)")


# --- the two allowed endings -----------------------------------------------------------------

def _finite(x, depth=0):
    """Whether every number reachable from ``x`` (arrays, tuples, dataclasses) is finite."""
    if depth > 4 or x is None or isinstance(x, (str, bool)):
        return True
    if isinstance(x, (int, np.integer)):
        return True
    if isinstance(x, (float, complex, np.number)):
        return bool(np.isfinite(x))
    if isinstance(x, np.ndarray):
        return x.dtype.kind not in "fc" or bool(np.isfinite(x).all())
    if isinstance(x, (tuple, list)):
        return all(_finite(v, depth + 1) for v in x)
    if dataclasses.is_dataclass(x):
        return all(_finite(getattr(x, f.name), depth + 1) for f in dataclasses.fields(x))
    return True


def ends_well(cls, call, *names):
    """Run ``call``: a ValueError/TypeError naming one of ``names``, or a finite result."""
    try:
        with np.errstate(all="ignore"):
            out = call()
    except (ValueError, TypeError) as err:
        msg = str(err)
        assert any(n in msg for n in names), f"message names none of {names}: {msg}"
        OUTCOMES[cls]["refused"] += 1
        return
    assert _finite(out), f"a non-finite result from {names}: {out!r}"
    OUTCOMES[cls]["finite"] += 1


# --- malformed values ------------------------------------------------------------------------

BAD_SCALARS = st.sampled_from([np.nan, np.inf, -np.inf, 1e200, -1e300, 1e101, True, False, 1 + 2j,
                               10**400, "1.0", None, b"x", object()])


def bad_array(shape):
    """Arrays of ``shape`` with one poisoned entry, arrays of the wrong shape, and non-arrays."""
    size = int(np.prod(shape)) if shape else 1
    good = st.lists(st.floats(-10, 10), min_size=size, max_size=size).map(
        lambda v: np.array(v).reshape(shape))

    def poison(args):
        a, k, bad = args
        if isinstance(bad, (bool, complex, str, bytes, type(None), int)) or not isinstance(bad, float):
            out = a.astype(object)
        else:
            out = a.copy()
        out.flat[k % size] = bad
        return out.tolist()

    poisoned = st.tuples(good, st.integers(0, max(size - 1, 0)), BAD_SCALARS).map(poison) if size else \
        st.just([None])
    wrong_shape = st.sampled_from([(), (size + 1,), (2, 2, 2), (0,), (1, size)]).map(np.ones)
    other = st.sampled_from([None, "abc", {"a": 1}, [1, [2, 3]], np.ones(shape, dtype=bool),
                             np.ones(shape, dtype=complex) * 1j, np.full(shape, 1e99) if shape else 1e99,
                             np.ones(shape, dtype=object), [[]], ()])
    return st.one_of(poisoned, wrong_shape, other, BAD_SCALARS)


# --- lie.py ----------------------------------------------------------------------------------

LIE = [
    ("brac", lie.brac, (3,)), ("unbrac", lie.unbrac, (3, 3)), ("exp_so3", lie.exp_so3, (3,)),
    ("log_so3", lie.log_so3, (3, 3)), ("exp_se3", lie.exp_se3, (6,)), ("log_se3", lie.log_se3, (4, 4)),
    ("inv_se3", lie.inv_se3, (4, 4)), ("adjoint", lie.adjoint, (4, 4)), ("ad", lie.ad, (6,)),
    ("gamma", lie.gamma, (3,)), ("left_jacobian_so3", lie.left_jacobian_so3, (3,)),
    ("right_jacobian_inverse_so3", lie.right_jacobian_inverse_so3, (3,)), ("screw", lie.screw, (6,)),
]


@pytest.mark.parametrize("name,fn,shape", LIE, ids=[n for n, _, _ in LIE])
def test_lie_functions_refuse_or_stay_finite(name, fn, shape):
    @SETTINGS
    @given(bad_array(shape))
    def check(x):
        ends_well("lie", lambda: fn(x), "argument")

    check()


@SETTINGS
@given(bad_array((4, 4)), bad_array((6,)))
def test_lie_two_argument_functions(E, phi):
    ends_well("lie", lambda: lie.adjoint_dot(E, np.zeros(6)), "argument 'E'")
    ends_well("lie", lambda: lie.adjoint_dot(np.eye(4), phi), "argument 'phi'")
    ends_well("lie", lambda: lie.material_jacobian(E, np.zeros(3)), "argument 'E'")


@SETTINGS
@given(st.floats(-1e99, 1e99), st.sampled_from([0, 1, 2]))
def test_lie_huge_finite_rotation_vectors(scale, axis):
    w = np.zeros(3)
    w[axis] = scale
    for fn in (lie.exp_so3, lie.left_jacobian_so3, lie.right_jacobian_inverse_so3):
        ends_well("lie", lambda fn=fn: fn(w), "argument")


# --- joints ----------------------------------------------------------------------------------

def _plane_patch():
    """Spline surface data whose x grows with q1 and y with q2 (all-zero data is refused)."""
    values = np.zeros((4, 4, 6))
    values[:, :, 0], values[:, :, 1] = np.arange(4.0), np.arange(4.0)[:, None]
    return values


def _joints():
    out = []
    for kind, cls in JOINT_TYPES.items():
        if kind == "composite":
            subs = [{"type": "revolute", "axis": [1, 0, 0]}, {"type": "spherical_exp"}]
            out.append(joint_from_spec({"type": "composite", "joints": subs}))
        elif kind == "spline_curve":
            frames = [np.eye(4) for _ in range(4)]
            for k, F in enumerate(frames):
                F[0, 3] = k
            out.append(cls(frames))
        elif kind == "spline_surface":
            out.append(cls(_plane_patch()))
        else:
            out.append(cls())
    return out


JOINTS = _joints()


@pytest.mark.parametrize("joint", JOINTS, ids=[j.kind for j in JOINTS])
def test_joint_Q_S_Sdot_refuse_or_stay_finite(joint):
    n = joint.ndof

    @SETTINGS
    @given(bad_array((n,)))
    def check(q):
        ends_well("joints", lambda: joint.Q(q), "argument 'q")
        ends_well("joints", lambda: joint.S(q), "argument 'q")
        ends_well("joints", lambda: joint.Sdot(np.zeros(n), q), "argument 'qdot")
        ends_well("joints", lambda: joint.reparameterize(q, np.zeros(n)), "argument 'q")

    check()


@pytest.mark.parametrize("joint", JOINTS, ids=[j.kind for j in JOINTS])
def test_joint_derivatives_refuse_or_stay_finite(joint):
    """§3.2: the six derivative methods, with malformed q or qdot (a chart's singularity included)."""
    n = joint.ndof
    ok = np.full(n, 0.7)

    @SETTINGS
    @given(bad_array((n,)))
    def check(x):
        for name in ("dQ_dq", "dA_dq", "dS_dq"):
            ends_well("joints", lambda name=name: getattr(joint, name)(x), "argument 'q")
        for name in ("dSdot_dq", "dSdot_dqdot", "dAdot_dq"):
            ends_well("joints", lambda name=name: getattr(joint, name)(x, ok), "argument 'q")
            ends_well("joints", lambda name=name: getattr(joint, name)(ok, x), "argument 'qdot")

    check()


@SETTINGS
@given(st.floats(0, 1e99), st.floats(-1e3, 1e3))
def test_exponential_reparameterize_never_hangs(norm, rate):
    q = np.array([norm, 0.0, 0.0])
    ends_well("joints", lambda: SphericalExp().reparameterize(q, [0.0, 0.0, rate]), "argument 'q'")


@SETTINGS
@given(st.sampled_from(sorted(JOINT_TYPES)), st.sampled_from(["axis", "plane", "chart", "order", "joints",
                                                               "control_frames", "control_values"]),
       st.one_of(bad_array((3,)), bad_array((3, 2)), BAD_SCALARS))
def test_joint_specs_refuse_bad_fields(kind, key, value):
    spec = {"type": kind, key: value}
    ends_well("joints", lambda: joint_from_spec(spec, "body 'x', joint"), "body 'x', joint")


def test_joint_axes_of_huge_magnitude_are_normalised():
    for axis in ([1e99, 0, 0], [1e99, 1e99, 0], [1e99, 3e98, -1e99]):
        a = Revolute(axis).axis
        assert np.isfinite(a).all() and abs(np.linalg.norm(a) - 1) < 1e-12
    OUTCOMES["joints"]["finite"] += 3
    for axis in ([1e200, 0, 0], [0, 0, 0], [1e-90, 0, 0], [1j, 0, 0], [True, 0, 0]):
        with pytest.raises(ValueError, match="axis"):
            Revolute(axis)
        OUTCOMES["joints"]["refused"] += 1


# --- model.py: the scene format --------------------------------------------------------------

def _spec():
    T = np.eye(4)
    T[2, 3] = -0.5
    body = {"name": "arm", "parent": -1, "joint": {"type": "revolute", "axis": [0, 1, 0]},
            "T_joint_body": T.tolist(), "mass": 1.0, "inertia": (0.1 * np.eye(3)).tolist()}
    child = copy.deepcopy(body)
    child.update(name="hand", parent=0)
    child["joint"] = {"type": "spherical_euler", "chart": "XYZ", "T_parent_joint": T.tolist(),
                      "stiffness": 1.0, "damping": 0.1}
    return {"format": "redmax_edu-peers/1", "gravity": [0, 0, -9.81], "bodies": [body, child]}


BODY_KEYS = ["name", "parent", "joint", "T_joint_body", "mass", "inertia", "T_parent_joint", "damping",
             "shape"]
JOINT_KEYS = ["type", "axis", "chart", "stiffness", "damping", "rest", "T_parent_joint"]


@SETTINGS
@given(st.integers(0, 1), st.sampled_from(BODY_KEYS),
       st.one_of(bad_array((4, 4)), bad_array((3, 3)), bad_array(())))
def test_model_from_dict_bad_body_fields(i, key, value):
    spec = _spec()
    spec["bodies"][i][key] = value
    name = spec["bodies"][i]["name"] if key != "name" else ""
    ends_well("model_from_dict", lambda: model_from_dict(spec), f"body {name!r}" if name else "bodies[",
              "body ", "field")


@SETTINGS
@given(st.integers(0, 1), st.sampled_from(JOINT_KEYS), st.one_of(bad_array((3,)), bad_array(())))
def test_model_from_dict_bad_joint_fields(i, key, value):
    spec = _spec()
    spec["bodies"][i]["joint"][key] = value
    ends_well("model_from_dict", lambda: model_from_dict(spec), f"body '{spec['bodies'][i]['name']}'")


@SETTINGS
@given(st.sampled_from(["scene", "body", "joint"]),
       st.sampled_from(["stifness", "mas", "gravty", "Axis", "inertia ", "dampng", "T_parent_join",
                        "q_rest"]))
def test_model_from_dict_refuses_unknown_keys(where, key):
    spec = _spec()
    target = {"scene": spec, "body": spec["bodies"][1], "joint": spec["bodies"][1]["joint"]}[where]
    target[key] = 1.0
    with pytest.raises(ValueError, match=f"unknown field '{key}'") as err:
        model_from_dict(spec)
    assert where == "scene" or "body 'hand'" in str(err.value)
    OUTCOMES["model_from_dict"]["refused"] += 1


def test_model_from_dict_suggests_the_closest_key():
    spec = _spec()
    spec["bodies"][1]["joint"]["stifness"] = 3.0
    with pytest.raises(ValueError,
                       match="body 'hand', joint: unknown field 'stifness'; did you mean 'stiffness'"):
        model_from_dict(spec)
    OUTCOMES["model_from_dict"]["refused"] += 1


# --- dynamics and integrators ----------------------------------------------------------------

MODEL = model_from_dict(_spec())
NQ = MODEL.nq


@SETTINGS
@given(bad_array((NQ,)))
def test_dynamics_refuse_or_stay_finite(x):
    z = np.zeros(NQ)
    ends_well("dynamics", lambda: mass_matrix(MODEL, x), "argument 'q'")
    ends_well("dynamics", lambda: forward_dynamics(MODEL, x, z), "argument 'q'", "M_r", "f_r")
    ends_well("dynamics", lambda: forward_dynamics(MODEL, z, x), "argument 'qdot'", "M_r", "f_r")
    ends_well("dynamics", lambda: forward_dynamics(MODEL, z, z, x), "argument 'tau'")
    ends_well("dynamics", lambda: reduced_forces(MODEL, z, x), "argument 'qdot'", "f_r")
    ends_well("dynamics", lambda: inverse_dynamics(MODEL, z, z, x), "argument 'qddot'")
    ends_well("dynamics", lambda: energies(MODEL, x, z), "argument 'q'", "energ")
    ends_well("dynamics", lambda: forward_kinematics(MODEL, x, z), "argument 'q'")
    ends_well("dynamics", lambda: linearly_implicit_euler_step(MODEL, z, x, 0.01), "argument 'qdot'", "M_r",
              "f_r", "step")


@SETTINGS
@given(st.floats(-1e99, 1e99), st.floats(-1e99, 1e99), st.integers(0, NQ - 1))
def test_dynamics_huge_finite_states(a, b, k):
    q, qdot = np.zeros(NQ), np.zeros(NQ)
    q[k], qdot[(k + 1) % NQ] = a, b
    ends_well("dynamics", lambda: forward_dynamics(MODEL, q, qdot), "M_r", "f_r", "argument")
    ends_well("dynamics", lambda: energies(MODEL, q, qdot), "energ", "argument", "M_r", "f_r")


@SETTINGS
@given(st.one_of(BAD_SCALARS, st.sampled_from([1e-300, 0.0, -0.01, 1e-12])))
def test_linearly_implicit_euler_step_sizes(h):
    z = np.zeros(NQ)
    ends_well("dynamics", lambda: linearly_implicit_euler_step(MODEL, z, z, h), "argument 'h'", "step")


@pytest.mark.parametrize("model", [None, "model", [1, 2], {"bodies": []}, 3.0])
def test_dynamics_refuse_a_non_model(model):
    for fn in (lambda: mass_matrix(model, [0.0]), lambda: forward_dynamics(model, [0.0], [0.0]),
               lambda: forward_kinematics(model, [0.0]), lambda: simulate(model, [0.0], [0.0], (0, 1))):
        with pytest.raises((ValueError, TypeError), match="model"):
            fn()
        OUTCOMES["dynamics"]["refused"] += 1


def test_gimbal_lock_names_the_joint_and_the_remedy():
    T = np.eye(4)
    ball = Model([Body("ball", -1, SphericalEuler("XYZ"), np.eye(4), T, 1.0, np.eye(3))])
    with pytest.raises(ValueError,
                       match="body 'ball' is at gimbal lock of its Euler chart 'XYZ'.*reparameterize"):
        forward_dynamics(ball, [0.0, np.pi / 2, 0.0], np.zeros(3))
    shell = Model([Body("ball", -1, SphericalExp(), np.eye(4), T, 1.0, np.eye(3))])
    with pytest.raises(ValueError, match="body 'ball' is on a singular shell.*2 pi"):
        forward_dynamics(shell, [0.0, 0.0, 2 * np.pi], np.zeros(3))
    with pytest.raises(ValueError, match="t = 0 s.*gimbal lock"):
        simulate(ball, [0.0, np.pi / 2, 0.0], np.zeros(3), (0, 0.1), reparameterize=False)
    OUTCOMES["dynamics"]["refused"] += 3


SIM_ARGS = {"t_span": bad_array((2,)), "h": BAD_SCALARS, "sample_dt": BAD_SCALARS, "rtol": BAD_SCALARS,
            "atol": BAD_SCALARS, "max_step": BAD_SCALARS, "max_steps": BAD_SCALARS,
            "method": st.sampled_from(["RK45", "implicit", None, 3, "euler "])}


@settings(SETTINGS, max_examples=120)
@given(st.sampled_from(sorted(SIM_ARGS)).flatmap(lambda k: st.tuples(st.just(k), SIM_ARGS[k])),
       st.sampled_from(["rk45", "euler"]))
def test_simulate_refuses_bad_arguments(arg, method):
    key, value = arg
    kwargs = {"t_span": (0.0, 0.05), "method": method, "h": 0.01, key: value}
    ends_well("integrators", lambda: simulate(MODEL, np.zeros(NQ), np.zeros(NQ), **kwargs),
              f"argument '{key}'", "argument 'h'", "argument 'sample_dt'", "argument 't_span'")


@pytest.mark.parametrize("kwargs", [
    {"t_span": (0, 1e12)}, {"t_span": (0, 1e12), "sample_dt": 1e-9},
    {"t_span": (0, 1), "method": "euler", "h": 1e-300}, {"t_span": (0, 1), "method": "euler", "h": 1e-12},
    {"t_span": (-1e99, 1e99)}, {"t_span": (0, 1), "max_steps": 10**12},
], ids=["1e12 s", "1e-9 samples", "h=1e-300", "h=1e-12", "huge span", "max_steps"])
def test_simulate_refuses_huge_counts_before_allocating(kwargs):
    with pytest.raises(ValueError, match="limit of|max_steps|exceeds"):
        simulate(MODEL, np.zeros(NQ), np.zeros(NQ), **kwargs)
    OUTCOMES["integrators"]["refused"] += 1


# --- maximal coordinates ---------------------------------------------------------------------

BALL = RigidBody("ball", 1.0, [0.4, 0.4, 0.4], [0.1, 0.1, 0.1])
SYSTEM = System([BALL, RigidBody("box", 2.0, [0.5, 0.6, 0.7])],
                joints=[Joint("spherical", 0, 1, np.eye(4), np.eye(4), name="socket")])


@SETTINGS
@given(st.sampled_from(["name", "mass", "moments", "half_sizes"]), st.one_of(bad_array((3,)), BAD_SCALARS))
def test_rigid_body_refuses_bad_fields(key, value):
    args = {"name": "brick", "mass": 1.0, "moments": [1.0, 1.0, 1.0], "half_sizes": None, key: value}
    ends_well("maximal", lambda: RigidBody(**args), key, "body 'brick'")


@SETTINGS
@given(st.sampled_from(["bodies", "forces", "joints", "contacts", "gravity"]),
       st.one_of(bad_array((3,)), BAD_SCALARS, st.sampled_from([BALL, [BALL, BALL], [[BALL]], ["force"],
                                                                 [mforces.Gravity(5, 1.0)], "joint"])))
def test_system_refuses_bad_parts(key, value):
    args = {"bodies": [BALL], key: value}
    ends_well("maximal", lambda: System(**args), key, "body", "unique", "refers")


@SETTINGS
@given(bad_array((2, 4, 4)), bad_array((2, 6)), st.one_of(BAD_SCALARS, st.just(0.01)))
def test_step_refuses_bad_states(E, phi, h):
    E0, phi0 = SYSTEM.rest_state()
    ends_well("maximal", lambda: step(SYSTEM, E, phi0, 0.01), "argument 'E'", "arguments 'E'", "body 'ball'",
              "body 'box'", "state must have")
    ends_well("maximal", lambda: step(SYSTEM, E0, phi, 0.01), "argument 'phi'", "body 'ball'", "body 'box'",
              "state must have", "diverged", "and 'phi'")
    ends_well("maximal", lambda: step(SYSTEM, E0, phi0, h), "argument 'h'")
    ends_well("maximal", lambda: msimulate(SYSTEM, E0, phi0, 0.01, h), "argument 'steps'")


def test_system_refuses_a_pose_with_a_bad_last_row():
    E, phi = SYSTEM.rest_state()
    E[1, 3] = [0.0, 0.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="body 'box'.*last row"):
        SYSTEM.check_state(E, phi)
    with pytest.raises((ValueError, TypeError), match="argument 'system'"):
        step([BALL], E, phi, 0.01)
    OUTCOMES["maximal"]["refused"] += 2


FORCES = {
    "Gravity": lambda v: mforces.Gravity(0, v),
    "Gravity.g": lambda v: mforces.Gravity(0, 1.0, v),
    "PointForce.r": lambda v: mforces.PointForce(0, v, [0, 0, 1.0]),
    "PointForce.k": lambda v: mforces.PointForce(0, [0, 0, 0.0], [0, 0, 1.0], v),
    "BodyDamping": lambda v: mforces.BodyDamping(0, v),
    "BodyDamping.body": lambda v: mforces.BodyDamping(v, 1.0),
    "Coriolis": lambda v: mforces.Coriolis(0, v),
    "PointSpring": lambda v: mforces.PointSpring(v, mforces.Attachment(0), 1.0),
    "PointSpring.k": lambda v: mforces.PointSpring(mforces.Attachment(-1), mforces.Attachment(0), v),
    "LinearSpringDamper": lambda v: mforces.LinearSpringDamper(1.0, 0.0, v),
    "Spring": lambda v: mforces.Spring(v, mforces.LinearSpringDamper(1.0)),
    "Spring.law": lambda v: mforces.Spring([mforces.Attachment(-1), mforces.Attachment(0)], v),
    "GroundPenalty": lambda v: mforces.GroundPenalty(0, v, 1e3),
    "GroundPenalty.kn": lambda v: mforces.GroundPenalty(0, [[0, 0, 0.0]], v),
    "FrameSpring": lambda v: mforces.FrameSpring(0, v, -1, np.eye(4), 1.0, 1.0),
    "Attachment": lambda v: mforces.Attachment(v),
    "GroundContact": lambda v: GroundContact(0, v),
    "GroundContact.mu": lambda v: GroundContact(0, [[0, 0, 0.0]], v),
    "Joint": lambda v: Joint("revolute", 0, 1, v, np.eye(4)),
    "Joint.compliance": lambda v: Joint("revolute", 0, 1, np.eye(4), np.eye(4), compliance=v),
}


@pytest.mark.parametrize("name", sorted(FORCES))
def test_forces_and_constraints_refuse_bad_arguments(name):
    @SETTINGS
    @given(st.one_of(bad_array((3,)), bad_array((4, 4)), BAD_SCALARS,
                     st.sampled_from(["force", [1, 2], {"r": 1}, BALL, -1, 7.5])))
    def check(value):
        ends_well("maximal", lambda: FORCES[name](value), "argument", "attachment", "joint", "contact",
                  "body")

    check()


@SETTINGS
@given(bad_array((6, 6)), bad_array((6,)))
def test_newton_euler_refuses_or_stays_finite(M, phi):
    ends_well("maximal", lambda: newton_euler_acceleration(M, np.zeros(6), np.zeros(6)), "argument 'M'")
    ends_well("maximal", lambda: newton_euler_acceleration(np.eye(6), phi, np.zeros(6)), "argument 'phi'",
              "phi")


# --- inertia shapes --------------------------------------------------------------------------

SHAPES = {
    "cuboid": lambda v: inertia.cuboid(v, density=1.0),
    "cuboid.mass": lambda v: inertia.cuboid([1.0, 1.0, 1.0], mass=v),
    "cylinder": lambda v: inertia.cylinder(v, 1.0, density=1.0),
    "cylinder.height": lambda v: inertia.cylinder(1.0, v, mass=1.0),
    "sphere": lambda v: inertia.sphere(v, mass=1.0),
    "capsule": lambda v: inertia.capsule(0.1, v, density=1.0),
    "MassProperties": lambda v: inertia.MassProperties(1.0, np.zeros(3), v),
    "MassProperties.mass": lambda v: inertia.MassProperties(v, np.zeros(3), np.eye(3)),
    "from_spatial_inertia": lambda v: inertia.from_spatial_inertia(v),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_inertia_shapes_refuse_bad_arguments(name):
    @SETTINGS
    @given(st.one_of(bad_array((3,)), bad_array((3, 3)), bad_array(()), BAD_SCALARS))
    def check(value):
        ends_well("inertia", lambda: SHAPES[name](value), "argument", "radius", "height", "length", "sides",
                  "mass", "density", "inertia", "M")

    check()


# --- solvers: user-driven loops --------------------------------------------------------------

@pytest.mark.parametrize("iterations", [True, 0, 10**12, 2.5, "100", None])
def test_gauss_seidel_sweep_budgets_are_checked(iterations):
    from redmax_edu.maximal.solve import pgs_contact, projected_gauss_seidel

    with pytest.raises((ValueError, TypeError), match="iterations"):
        projected_gauss_seidel(np.eye(2), np.ones(2), iterations=iterations)
    with pytest.raises((ValueError, TypeError), match="iterations"):
        pgs_contact(np.eye(6), np.zeros(6), np.zeros((1, 6)), np.zeros(1), iterations=iterations)
    OUTCOMES["maximal"]["refused"] += 2


def test_singular_kkt_system_is_explained():
    from redmax_edu.maximal.solve import kkt_solve

    G = np.array([[1.0, 0.0], [2.0, 0.0]])  # the same constraint twice
    with pytest.raises(ValueError, match="'G' has dependent rows .* 'r' is consistent"):
        kkt_solve(np.eye(2), np.ones(2), G, np.zeros(2))
    with pytest.raises(ValueError, match="'G' has dependent rows .* 'r' is inconsistent"):
        kkt_solve(np.eye(2), np.ones(2), G, np.array([0.0, 1.0]))
    OUTCOMES["maximal"]["refused"] += 2


# --- the issue's classes, by hand: each case ends in a ValueError/TypeError naming its cause --

def _spring_deformable_spec():
    spec = _spec()
    spec["deformables"] = [{"name": "rope", "nodes": [[0, 0, 0], [0, 0, -1.0]], "stiffness": 1.0,
                            "mass": 1.0, "stifness": 2.0}]
    return spec


def _composite_spec():
    spec = _spec()
    sub = {"type": "revolute", "axis": [1, 0, 0], "stiffness": 1.0}
    spec["bodies"][1]["joint"] = {"type": "composite", "joints": [sub]}
    return spec


def _single(joint, q):
    return Model([Body("ball", -1, joint, np.eye(4), np.eye(4), 1.0, np.eye(3))]), np.asarray(q, float)


def _bad_last_row():
    E, phi = SYSTEM.rest_state()
    E[0, 3, 3] = 2.0
    return E, phi


_EULER, _EULER_Q = _single(SphericalEuler("ZYX"), [0.3, np.pi / 2, 0.1])
_SHELL, _SHELL_Q = _single(SphericalExp(), [2 * np.pi, 0.0, 0.0])
_FREE, _FREE_Q = _single(JOINT_TYPES["free3d_euler"](), [0, 0, 0, 0.2, np.pi / 2, 0])
_Z = np.zeros(NQ)

ISSUE_CASES = [
    # hangs (unbounded loops and allocations driven by the input)
    ("hang", lambda: SphericalExp().reparameterize([1e15, 0, 0], [0, 0, 1.0]), "argument 'q'"),
    ("hang", lambda: simulate(MODEL, _Z, _Z, (0, 1), method="euler", h=1e-300), "argument 'h'"),
    ("hang", lambda: simulate(MODEL, _Z, _Z, (0, 1e12)), "argument 't_span'"),
    ("hang", lambda: simulate(MODEL, _Z, _Z, (0, 1), sample_dt=1e-12), "argument 'sample_dt'"),
    ("hang", lambda: simulate(MODEL, _Z, _Z, (0, 1), max_steps=10**12), "argument 'max_steps'"),
    ("hang", lambda: msimulate(SYSTEM, *SYSTEM.rest_state(), 0.01, 10**12), "argument 'steps'"),
    ("hang", lambda: __import__("redmax_edu.maximal.simulate", fromlist=["x"]).simulate_rk45(
        System([BALL]), *System([BALL]).rest_state(), 1.0, samples=10**12), "argument 'samples'"),
    ("hang", lambda: __import__("redmax_edu.checks", fromlist=["x"]).step_sweep(
        np.exp, [0.5], np.exp([[0.5]]), steps=np.logspace(-1, -12, 10**5)), "argument 'steps'"),
    # deep tracebacks (numpy errors, attribute errors)
    ("traceback", lambda: forward_dynamics(_EULER, _EULER_Q, np.zeros(3)), "body 'ball' is at gimbal lock"),
    ("traceback", lambda: forward_dynamics(_SHELL, _SHELL_Q, np.zeros(3)), "is on a singular shell"),
    ("traceback", lambda: forward_dynamics(_FREE, _FREE_Q, np.zeros(6)), "part is at gimbal"),
    ("traceback", lambda: linearly_implicit_euler_step(_EULER, _EULER_Q, np.zeros(3), 0.01), "gimbal lock"),
    ("traceback", lambda: simulate(_SHELL, _SHELL_Q, np.zeros(3), (0, 1), reparameterize=False), "2 pi"),
    ("traceback", lambda: forward_dynamics([BALL], [0.0], [0.0]), "argument 'model'"),
    ("traceback", lambda: mass_matrix("model", [0.0]), "argument 'model'"),
    ("traceback", lambda: System(BALL), "argument 'bodies'"),
    ("traceback", lambda: System([[BALL]]), "argument 'bodies'"),
    ("traceback", lambda: System([BALL], forces="gravity"), "argument 'forces'"),
    ("traceback", lambda: System([BALL], forces=["spring"]), "argument 'forces'"),
    ("traceback", lambda: step([BALL], *SYSTEM.rest_state(), 0.01), "argument 'system'"),
    ("traceback", lambda: step(SYSTEM, "poses", np.zeros((2, 6)), 0.01), "E"),
    ("traceback", lambda: mforces.Gravity("0", 1.0), "argument 'body'"),
    ("traceback", lambda: mforces.PointSpring([0, 0, 0], mforces.Attachment(0), 1.0), "'first'"),
    ("traceback", lambda: mforces.Spring("ab", mforces.LinearSpringDamper(1.0)), "argument 'points'"),
    ("traceback", lambda: mforces.Spring([mforces.Attachment(-1), mforces.Attachment(0)], 3.0),
     "argument 'law'"),
    ("traceback", lambda: RigidBody(["brick"], 1.0, [1.0, 1.0, 1.0]), "argument 'name'"),
    ("traceback", lambda: Model(MODEL.bodies[0]), "argument 'bodies'"),
    ("traceback", lambda: Model(MODEL.bodies, forces=["spring"]), "argument 'forces'"),
    ("traceback", lambda: MODEL.with_forces(mforces.Gravity(0, 1.0)), "argument 'forces'"),
    ("traceback", lambda: Body("b", -1, Revolute(), np.eye(4), np.eye(4), 1.0, np.eye(3), shape="cube"),
     "field 'shape'"),
    ("traceback", lambda: newton_euler_acceleration(np.zeros((6, 6)), np.zeros(6), np.zeros(6)),
     "argument 'M'"),
    ("traceback", lambda: __import__("redmax_edu.checks", fromlist=["x"]).numerical_derivative(
        "exp", [0.5]), "argument 'f'"),
    # silent (typos, complex, booleans, overflow, bad last rows, non-finite outputs)
    ("silent", lambda: __import__("redmax_edu.checks", fromlist=["x"]).numerical_derivative(
        np.exp, [0.5], h=True), "argument 'h'"),
    ("silent", lambda: model_from_dict({**_spec(), "gravty": [0, 0, 0]}), "did you mean 'gravity'"),
    ("silent", lambda: model_from_dict(_spring_deformable_spec()), "deformable 'rope': unknown field"),
    ("silent", lambda: model_from_dict(_composite_spec()), "joints[0]: unknown field 'stiffness'"),
    ("silent", lambda: Revolute([1e200, 0, 0]), "axis"),
    ("silent", lambda: Body("b", -1, Revolute(), np.eye(4), np.eye(4), 1 + 0j, np.eye(3)), "field 'mass'"),
    ("silent", lambda: Body("b", -1, Revolute(), np.eye(4), np.eye(4), True, np.eye(3)), "field 'mass'"),
    ("silent", lambda: Body("b", -1, Revolute(), np.eye(4), np.eye(4), 1.0, np.eye(3), stiffness=[True]),
     "body 'b': field 'stiffness'"),
    ("silent", lambda: RigidBody("b", True, [1.0, 1.0, 1.0]), "body 'b'"),
    ("silent", lambda: RigidBody("b", 1.0, [1.0, 1.0, 1.0 + 1e-3j]), "body 'b'"),
    ("silent", lambda: simulate(MODEL, _Z + 0j, _Z, (0, 1)), "argument 'q0'"),
    ("silent", lambda: simulate(MODEL, _Z, _Z, (0, 1), method="euler", h=True), "argument 'h'"),
    ("silent", lambda: simulate(MODEL, _Z, _Z, (True, 1)), "argument 't_span'"),
    ("silent", lambda: SYSTEM.check_state(*_bad_last_row()), "body 'ball': pose is not a rigid transform"),
    ("silent", lambda: System([BALL], gravity=[0, 0, -9.81j]), "argument 'gravity'"),
    ("silent", lambda: mforces.Gravity(0, True), "argument 'mass'"),
    ("silent", lambda: forward_dynamics(MODEL, _Z, np.full(NQ, 1e150)), "argument 'qdot'"),
    ("silent", lambda: lie.screw([1j, 0, 0, 0, 0, 1]), "argument 'phi'"),
    ("silent", lambda: inertia.cuboid([1.0, True, 1.0], mass=1.0), "sides"),
    ("silent", lambda: inertia.sphere(1 + 1j, mass=1.0), "radius"),
]


@pytest.mark.parametrize("cls,call,name", ISSUE_CASES,
                         ids=[f"{c}-{k}" for k, (c, _, _) in enumerate(ISSUE_CASES)])
def test_issue_cases_end_in_a_named_error(cls, call, name):
    with pytest.raises((ValueError, TypeError)) as err:
        call()
    assert name in str(err.value), str(err.value)
    OUTCOMES[f"by hand, {cls}"]["refused"] += 1


def test_huge_rotation_vectors_are_shortened_in_one_step():
    for norm in (12.0, 1e3, 1e5, 9.99e5):
        _, q, qd = SphericalExp().reparameterize([0.0, 0.0, norm], [0.0, 0.0, 1.0])
        assert abs(q[2]) <= 1.5 * np.pi and np.allclose(SphericalExp().Q(q), SphericalExp().Q([0, 0, norm]),
                                                        atol=1e-8)
        assert np.allclose(qd, [0, 0, 1.0])
    OUTCOMES["by hand, hang"]["finite"] += 4


# --- issue 23, section 3: the remaining classes, property-based ------------------------------

def refuses(cls, call, *names):
    """Run ``call``: it must end in a ValueError (or TypeError) whose message names one of ``names``."""
    with pytest.raises((ValueError, TypeError)) as err:
        with np.errstate(all="ignore"):
            call()
    assert any(n in str(err.value) for n in names), f"message names none of {names}: {err.value}"
    OUTCOMES[cls]["refused"] += 1


#: Values that are not True or False, the truthy string of the issue among them.
NOT_FLAGS = st.one_of(BAD_SCALARS.filter(lambda v: not isinstance(v, bool)),
                      st.sampled_from(["no", "yes", "False", "", 0, 1, 1.0, [], [True], np.int64(0)]))


@settings(SETTINGS, max_examples=60)
@given(st.sampled_from(["progress", "reparameterize"]), NOT_FLAGS, st.sampled_from(["rk45", "euler", "bdf1"]))
def test_flags_refuse_anything_but_true_or_false(flag, value, method):
    kwargs = {"method": method, "h": 0.01, flag: value}
    refuses("flags", lambda: simulate(MODEL, np.zeros(NQ), np.zeros(NQ), (0.0, 0.02), **kwargs),
            f"argument '{flag}'")


@SETTINGS
@given(st.lists(st.floats(-1e3, 1e3), min_size=3, max_size=3).filter(lambda v: min(v) <= 0),
       st.floats(-1e6, -1e-300))
def test_box_half_sizes_and_contact_margins_refuse_negative_values(half, margin):
    refuses("degenerate geometry", lambda: RigidBody("brick", 1.0, [1.0, 1.0, 1.0], half), "'half_sizes'")
    refuses("degenerate geometry", lambda: GroundContact(0, [[0.0, 0.0, 0.0]], margin=margin), "'margin'")


@SETTINGS
@given(st.integers(-1, 2), st.lists(st.floats(-1, 1), min_size=9, max_size=9), st.integers(2, 4))
def test_a_spring_from_a_body_to_itself_is_refused(body, coords, m):
    r = np.reshape(coords, (3, 3))
    refuses("degenerate geometry", lambda: mforces.PointSpring(
        mforces.Attachment(body, r[0]), mforces.Attachment(body, r[1]), 1.0), "from a body to itself")
    path = [mforces.Attachment(body, r[k % 3]) for k in range(m)]
    refuses("degenerate geometry", lambda: mforces.Spring(path, mforces.LinearSpringDamper(1.0)),
            "from a body to itself")
    if body >= 0:
        frame = lie.exp_se3(r[:2].ravel())
        refuses("degenerate geometry", lambda: mforces.FrameSpring(body, frame, body, np.eye(4), 1.0, 1.0),
                "from a body to itself")


@SETTINGS
@given(st.integers(4, 7), st.integers(0, 6), st.integers(0, 2**32 - 1))
def test_spline_curve_refuses_three_coincident_frames_in_a_row(n, start, seed):
    rng = np.random.default_rng(seed)
    frames = np.array([lie.random_transform(rng) for _ in range(n)])
    for k in (start - 1, start + 1):
        frames[k % n] = frames[start % n]
    refuses("degenerate geometry", lambda: SplineCurve(frames), "three coincident frames")


@SETTINGS
@given(st.sampled_from([0, 1]), st.integers(0, 2**32 - 1), st.sampled_from([0.0, 1.0, 1e3]))
def test_spline_surface_refuses_data_that_ignores_a_coordinate(axis, seed, scale):
    values = scale * np.random.default_rng(seed).standard_normal((4, 4, 6))
    values = np.repeat(values.take([0], axis=axis), 4, axis=axis)  # the same along one index
    refuses("degenerate geometry", lambda: SplineSurface(values), "field 'control_values'")


@SETTINGS
@given(st.lists(st.floats(0, 10), min_size=1, max_size=4, unique=True), st.integers(0, 3),
       st.one_of(BAD_SCALARS, st.text(max_size=4)))
def test_schedules_refuse_bad_breaks_and_bad_times(breaks, k, bad):
    breaks = sorted(breaks)
    values = np.zeros((len(breaks) + 1, 1))
    poisoned = list(breaks)
    poisoned[k % len(breaks)] = bad
    refuses("schedules", lambda: PiecewiseConstant(poisoned, values), "argument 'breaks'")
    refuses("schedules", lambda: PiecewiseConstant(bad, values), "argument 'breaks'")
    refuses("schedules", lambda: PiecewiseConstant(breaks, values)(bad), "argument 't'")
    refuses("schedules", lambda: Sigmoid(7.0, 1.0, 0.0, 1.0)(bad), "argument 't'")
    refuses("schedules", lambda: BodyTwistSchedule()(bad, np.eye(4), np.zeros(6)), "argument 't'")


@SETTINGS
@given(st.one_of(st.integers(-10**6, -2), st.integers(MODEL.n, 10**6),
                 st.text(max_size=8).filter(lambda s: s not in MODEL.names), BAD_SCALARS))
def test_a_body_that_does_not_exist_is_refused(i):
    refuses("bodies", lambda: MODEL.children(i), "argument 'i'", "no body named")
    refuses("bodies", lambda: MODEL.with_body(i, mass=2.0), "argument 'i'", "no body named")


@SETTINGS
@given(st.text(min_size=1, max_size=12).filter(lambda s: s not in {f.name for f in dataclasses.fields(Body)}))
def test_editing_a_body_with_an_unknown_field_is_refused(key):
    refuses("bodies", lambda: MODEL.with_body("hand", **{key: 1.0}), "body 'hand': unknown field")


@SETTINGS
@given(st.integers(1, 1000), st.floats(-1e-9, 1e-9), st.floats(1e-3, 3.0), st.integers(0, 2**32 - 1))
def test_inverse_jacobians_refuse_their_singular_shells(k, on, off, seed):
    """On the shells |w| = 2 pi k (to a relative 1e-9) the closed forms would give entries of 1e9
    to 1e16; 1e-3 rad away they are accepted and are the inverses they claim to be."""
    axis = np.random.default_rng(seed).standard_normal(3)
    axis /= np.linalg.norm(axis)
    for fn in (lie.left_jacobian_inverse_so3, lie.right_jacobian_inverse_so3):
        refuses("singularities", lambda fn=fn: fn(2 * np.pi * k * (1 + on) * axis), "argument 'w'")
    w = (2 * np.pi * k + off) * axis
    assert np.allclose(lie.left_jacobian_inverse_so3(w) @ lie.left_jacobian_so3(w), np.eye(3), atol=1e-6)
    OUTCOMES["singularities"]["finite"] += 1


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.floats(-10, -1e-3))
def test_a_mass_that_is_not_positive_semidefinite_is_refused(seed, k, smallest):
    """A negative mass anywhere; newton_euler_acceleration, which inverts M, refuses a singular one too."""
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    eigenvalues = rng.uniform(0.1, 10, 6)
    eigenvalues[:k] = smallest
    M = Q @ np.diag(eigenvalues) @ Q.T
    M = 0.5 * (M + M.T)
    E, phi = np.eye(4), rng.standard_normal(6)
    for call in (lambda: newton_euler_acceleration(M, phi, np.zeros(6)), lambda: kinetic_energy(M, phi),
                 lambda: spatial_momentum(E, M, phi), lambda: mforces.Coriolis(0, M)):
        refuses("masses", call, "argument 'M'")
    eigenvalues[:k] = 0.0
    singular = Q @ np.diag(eigenvalues) @ Q.T
    refuses("masses", lambda: newton_euler_acceleration(0.5 * (singular + singular.T), phi, np.zeros(6)),
            "argument 'M'")


@SETTINGS
@given(st.one_of(BAD_SCALARS, st.integers(), st.floats(), st.sampled_from(["revolute", Revolute()])))
def test_a_composite_joint_needs_a_list_of_joints(value):
    refuses("joints", lambda: Composite(value), "'joints'")


def _taking(n):
    """A function of ``n`` required positional arguments that returns zeros."""
    return {0: lambda: 0.0, 1: lambda a: 0.0, 2: lambda a, b: 0.0, 3: lambda a, b, c: 0.0,
            4: lambda a, b, c, d: 0.0}[n]


#: Callables the library takes, with the number of positional arguments each must accept.
CALLABLES = {
    "tau": (1, lambda f: simulate(MODEL, np.zeros(NQ), np.zeros(NQ), (0.0, 0.02), tau=f)),
    "law": (2, lambda f: mforces.Spring([mforces.Attachment(-1), mforces.Attachment(0)], f)),
    "motion": (1, lambda f: PrescribedJoint(0, f)),
    "target": (3, lambda f: PrescribedBody(0, [1], f)),
    "velocity": (1, lambda f: PrescribedJointVelocity(0, f)),
    "omega": (1, lambda f: integrate_orientation(f, np.eye(3), 1.0, 4)),
    "f": (1, lambda f: numerical_derivative(f, [0.5])),
}


@SETTINGS
@given(st.sampled_from(sorted(CALLABLES)).flatmap(
    lambda name: st.tuples(st.just(name), st.integers(0, 4).filter(lambda n: n != CALLABLES[name][0]))))
def test_callables_of_the_wrong_arity_are_refused(case):
    name, n = case
    refuses("callables", lambda: CALLABLES[name][1](_taking(n)), f"argument '{name}'")


@SETTINGS
@given(st.integers(0, 11), st.sampled_from([[0], [0, 1], [0, 1, 2, 3], [], [[0, 1, 2]]]))
def test_ragged_mesh_faces_are_refused(k, row):
    V, F = inertia.box_mesh([1.0, 2.0, 3.0])
    faces = F.tolist()
    faces[k] = row
    refuses("meshes", lambda: inertia.mesh(V, faces, density=1.0), "argument 'faces'")


# --- issue 23, section 3, by hand: each case of the issue's classes, with the message it ends in --

def _ragged_box():
    V, F = inertia.box_mesh([1.0, 2.0, 3.0])
    faces = F.tolist()
    faces[4] = faces[4] + [0]  # a quad among the triangles
    return V, faces


_ZERO_TWIST = np.zeros(6)

ISSUE23_CASES = [
    # silent: degenerate geometry
    ("silent", lambda: SplineCurve(np.tile(np.eye(4), (4, 1, 1))), "three coincident frames"),
    ("silent", lambda: SplineSurface(np.zeros((4, 4, 6))), "all-zero data"),
    ("silent", lambda: RigidBody("brick", 1.0, [1.0, 1.0, 1.0], [0.1, -0.2, 0.3]),
     "body 'brick': argument 'half_sizes' must be positive"),
    ("silent", lambda: GroundContact(0, [[0.0, 0.0, 0.0]], margin=-0.01), "argument 'margin' must be >= 0"),
    ("silent", lambda: mforces.PointSpring(mforces.Attachment(0, [0.1, 0, 0]), mforces.Attachment(0), 1.0),
     "arguments 'first' and 'second' are both on body 0"),
    ("silent", lambda: mforces.FrameSpring(1, np.eye(4), 1, np.eye(4), 1.0, 1.0),
     "arguments 'a' and 'b' are both on body 1"),
    # silent: a string where a flag is expected
    ("silent", lambda: simulate(MODEL, _Z, _Z, (0.0, 0.02), progress="no"), "argument 'progress'"),
    ("silent", lambda: simulate(MODEL, _Z, _Z, (0.0, 0.02), reparameterize="no"),
     "argument 'reparameterize'"),
    ("silent", lambda: __import__("redmax_edu.lagrange", fromlist=["x"]).chain_lagrangian([], simplify="no"),
     "argument 'simplify'"),
    # silent: NaN in a schedule's breaks or its time
    ("silent", lambda: PiecewiseConstant([1.0, np.nan], np.zeros((3, 1))), "argument 'breaks'"),
    ("silent", lambda: PiecewiseConstant([1.0], np.zeros((2, 1)))(np.nan), "argument 't'"),
    ("silent", lambda: BodyTwistSchedule().world(np.nan),
     "argument 't'"),
    # silent: a query for a body that does not exist
    ("silent", lambda: MODEL.children(2), "argument 'i': there is no body 2; the model has bodies 0..1"),
    ("silent", lambda: MODEL.children("elbow"), "no body named 'elbow'"),
    # silent: closed forms at their singularity
    ("silent", lambda: lie.left_jacobian_inverse_so3([2 * np.pi, 0, 0]),
     "argument 'w': |w| = 6.28319 = 1 x 2 pi"),
    ("silent", lambda: lie.right_jacobian_inverse_so3([0, 0, -4 * np.pi]), "= 2 x 2 pi"),
    # silent: a mass that is not positive definite
    ("silent", lambda: newton_euler_acceleration(-np.eye(6), _ZERO_TWIST, _ZERO_TWIST),
     "argument 'M' must be positive definite"),
    ("silent", lambda: mforces.Coriolis(0, -np.eye(6)), "argument 'M' must be positive semidefinite"),
    # deep tracebacks
    ("traceback", lambda: MODEL.with_body(5, mass=2.0), "argument 'i': there is no body 5"),
    ("traceback", lambda: MODEL.with_body(-1, mass=2.0), "argument 'i' must be >= 0"),
    ("traceback", lambda: MODEL.with_body("elbow", mass=2.0), "no body named 'elbow'"),
    ("traceback", lambda: MODEL.with_body(1, mas=2.0),
     "body 'hand': unknown field 'mas'; did you mean 'mass'"),
    ("traceback", lambda: Composite(3),
     "composite joint: argument 'joints' must be a list of Joint, got int"),
    ("traceback", lambda: simulate(MODEL, _Z, _Z, (0.0, 0.02), tau=lambda t, q: _Z),
     "argument 'tau' must accept the call tau(t)"),
    ("traceback", lambda: mforces.Spring([mforces.Attachment(-1), mforces.Attachment(0)], lambda l: (l, 0)),
     "argument 'law' must accept the call law(l, ldot)"),
    ("traceback", lambda: inertia.mesh(*_ragged_box(), density=1.0),
     "argument 'faces' must be a rectangular array"),
    ("traceback", lambda: PiecewiseConstant("abc", np.zeros((2, 1))), "argument 'breaks'"),
]


@pytest.mark.parametrize("cls,call,message", ISSUE23_CASES,
                         ids=[f"{c}-{k}" for k, (c, _, _) in enumerate(ISSUE23_CASES)])
def test_issue_23_cases_end_in_a_named_error(cls, call, message):
    with pytest.raises((ValueError, TypeError)) as err:
        call()
    assert message in str(err.value), str(err.value)
    OUTCOMES[f"by hand (issue 23), {cls}"]["refused"] += 1


def test_two_coincident_spline_frames_still_move():
    """The spline curve stops only where three frames coincide: with two, S is never zero."""
    frames = np.tile(np.eye(4), (5, 1, 1))
    frames[:, :2, 3] = [[1, 0], [1, 0], [0, 1], [-1, 0], [0, -1]]
    joint = SplineCurve(frames)
    assert min(np.linalg.norm(joint.S([q])) for q in np.linspace(0, 5, 101)) > 0.1
    OUTCOMES["by hand (issue 23), silent"]["finite"] += 1


# --- issue 23, section 3: a run that blows up stops, naming what and when ----------------------

def _rod(joint=None):
    """A 0.3 m rod of 0.5 kg hinged at one end about z, without gravity."""
    T = np.eye(4)
    T[0, 3] = 0.15
    return Model([Body("rod", -1, joint or Revolute([0, 0, 1]), np.eye(4), T, 0.5, [1e-4, 4e-3, 4e-3])],
                 gravity=np.zeros(3))


def _repulsion(l, ldot):
    """A spring law that pushes harder the longer it gets (f = -l^3): its motion blows up in finite time."""
    return -(l**3), -3 * l**2, 0.0


def _torque_without_bound(t):
    """1/(0.5 - t) N m, which grows without bound as t -> 0.5 s (and is 1e90 N m after)."""
    return [1.0 / (0.5 - t) if t < 0.5 else 1e90]


@pytest.mark.parametrize("method", ["rk45", "rk45_recursive"])
@pytest.mark.parametrize("t_span", [(0.0, 1.0), (0.2, 0.7), (0.0, 10.0)])
def test_rk45_stops_when_its_step_collapses(method, t_span):
    """Driven by a torque that grows without bound at t = 0.5 s, the rod's acceleration blows up
    while its velocity (logarithmic in 0.5 - t) stays far below the divergence bound: RK45's step
    shrinks toward zero (scipy would go on down to the spacing of the floats) and now stops once
    it falls below 1e-12 of the span, naming the coordinate and the body."""
    with pytest.raises(SimulationError, match=r"blew up at t = 0\.5 s: RK45's step size collapsed .* "
                                              r"driven by qdot\[0\] \(body 'rod'\)"):
        simulate(_rod(), [0.0], [0.0], t_span, method, tau=_torque_without_bound)
    OUTCOMES["by hand (issue 23), hang"]["refused"] += 1


def test_rk45_lets_a_tiny_first_step_grow():
    """A rod spinning at 1e9 rad/s: RK45's first step is 1e-11 s (below 1e-12 of the span), then
    grows: no collapse, and the uniform spin is integrated exactly."""
    run = simulate(_rod(), [0.0], [1e9], (0.0, 10.0))
    assert run.nsteps < 100 and np.allclose(run.q[:, 0], 1e9 * run.t, rtol=1e-12)
    OUTCOMES["by hand (issue 23), hang"]["finite"] += 1


def test_a_blow_up_names_the_body():
    """A slider pushed by f = -l^3 reaches infinite speed in finite time: the error names its body."""
    spring = mforces.Spring([mforces.Attachment(-1), mforces.Attachment(0, [0.15, 0.0, 0.0])], _repulsion)
    model = _rod(JOINT_TYPES["prismatic"]([1, 0, 0])).with_forces([spring])
    with pytest.raises(SimulationError, match=r"blew up at t = .* s \(a coordinate or velocity of body "
                                              r"'rod' is not finite"):
        simulate(model, [0.1], [0.0], (0.0, 10.0))
    OUTCOMES["by hand (issue 23), hang"]["refused"] += 1


def test_maximal_rk45_stops_on_a_blow_up_and_on_too_many_steps():
    ball = RigidBody("ball", 1.0, [0.4, 0.4, 0.4])
    spring = mforces.Spring([mforces.Attachment(-1), mforces.Attachment(0)], _repulsion)
    pushed = System([ball], forces=[spring], gravity=np.zeros(3))
    E0 = np.eye(4)[None].copy()
    E0[0, 0, 3] = 1.0
    with pytest.raises(ValueError, match=r"blew up at t = .* s: the twist of body 'ball' is not finite or "
                                         r"exceeds 1e\+08"):
        msimulate_rk45(pushed, E0, np.zeros((1, 6)), 10.0)
    spinning = System([ball], gravity=np.zeros(3))
    with pytest.raises(ValueError, match="more than max_steps = 500 steps"):
        msimulate_rk45(spinning, np.eye(4)[None], [[0.0, 0.0, 1e6, 0.0, 0.0, 0.0]], 10.0, max_steps=500)
    OUTCOMES["by hand (issue 23), hang"]["refused"] += 2
