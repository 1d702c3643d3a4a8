"""Grader of the assignment "Recursive inverse dynamics in two sweeps" (§2.12, Liu and Jain §7).

The students write the two sweeps of the recursive Newton-Euler algorithm in RedMax's body
frames: ``body_accelerations(model, q, qdot, qddot)``, the outward sweep from the root
(``phidot_i = Ad(E_i_p) phidot_p - ad(psi_i) Ad(E_i_p) phi_p + Ad(E_i_j)(S_i qddot_i + Sdot_i
qdot_i)``), and ``inverse_dynamics(model, q, qdot, qddot)``, the inward sweep from the leaves
(``W_i = M_i phidot_i - f_i + sum_c Ad(E_c_i)^T W_c``, ``tau_i = (Ad(E_i_j) S_i)^T W_i``), with
the library's forward kinematics (frames, ``S``, ``Sdot``, twists) and ``ad``, but not its
Jacobians or dynamics. The checks compare with :func:`redmax_edu.recursive.body_accelerations`
and :func:`~redmax_edu.recursive.recursive_inverse_dynamics`, the accelerations also with
central differences of the body twists along the motion, on a single body, chains with
spherical joints (whose ``Sdot`` is not zero) and branching trees. They name the usual slips:
the bodies visited in the wrong order, the velocity-product (bias) term or the Coriolis
wrench left out, ``Ad`` where ``Ad^T`` belongs in the inward sweep, a child's wrench not
handed to its parent, ``Sdot qdot`` left out, ``S`` used without ``Ad(E_i_j)`` (off by a
frame), gravity with the wrong sign.

Examples
--------
>>> from redmax_edu import recursive
>>> report = check("inverse_dynamics", recursive.recursive_inverse_dynamics)
>>> report.points, "which this assignment does not let you call" in report.results[0].message
(0.0, True)

Taught in book/02_reduced/12_recursive_dynamics and book/04_companions/01_lagrangian_arm.
"""

import numpy as np

from .. import recursive
from ..kinematics import Kinematics, body_twists, forward_kinematics, joint_twist_adjoints
from ..lie import ad
from ..model import Body, Model
from .calls import call, describe
from .chains import describe_model, pendulum, random_chain, random_state
from .compare import judge_cases
from .core import Assignment, Verdict, entry_points

ASSIGNMENT = Assignment(
    "04_recursive", "Recursive inverse dynamics in two sweeps",
    allowed=[forward_kinematics, joint_twist_adjoints, Kinematics, ad, Model, Body],
)
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)


def _label(model, q, qdot, qddot):
    return f"{describe_model(model)}, q = {describe(q)}, qdot = {describe(qdot)}, qddot = {describe(qddot)}"


def _cases(rng, model, count, rest=False, still=False):
    """``count`` random states of ``model`` with their labels; ``rest``: qdot = 0; ``still``: qddot = 0."""
    cases = []
    for _ in range(count):
        q, qdot = random_state(rng, model)
        qddot = np.zeros(model.nq) if still else rng.standard_normal(model.nq)
        if rest:
            qdot = np.zeros(model.nq)
        cases.append(((model, q, qdot, qddot), _label(model, q, qdot, qddot)))
    return cases


def _rest_case(case):
    (model, q, _, qddot), _ = case
    return (model, q, np.zeros(model.nq), qddot), "rest (qdot = 0, same q and qddot)"


# --- the outward sweep --------------------------------------------------------------------------


def _outward(model, q, qdot, qddot, order=None, bias=1.0, sdot=True, own=True, carry=True):
    """The outward sweep with one of its terms changed (the usual mistakes), in body ``order``."""
    kin = forward_kinematics(model, q, qdot)
    A_ij = joint_twist_adjoints(model)
    phidot = np.zeros((model.n, 6))
    for i in (range(model.n) if order is None else order):
        p, s = model.parents[i], model.dofs[i]
        rate = kin.S[i] @ qddot[s] + (kin.Sdot[i] @ qdot[s] if sdot else 0)
        phidot[i] = A_ij[i] @ rate if own else rate
        if p >= 0:
            psi = A_ij[i] @ kin.S[i] @ qdot[s]
            carried = kin.A_ip[i] @ phidot[p] if carry else phidot[p]
            phidot[i] += carried - bias * ad(psi) @ kin.A_ip[i] @ kin.phi[p]
    return phidot


def acceleration_mistakes(model, q, qdot, qddot):
    """The usual wrong body accelerations, with what went wrong."""
    return [
        ("the bodies are visited in the wrong order: a body's acceleration needs its parent's, so "
         "the sweep goes from the root outwards (parents come first in model.bodies).",
         lambda: _outward(model, q, qdot, qddot, order=reversed(range(model.n)))),
        ("the velocity-product (bias) term -ad(psi_i) Ad(E_i_p) phi_p is missing: Ad(E_i_p) changes "
         "as the joint moves.", lambda: _outward(model, q, qdot, qddot, bias=0.0)),
        ("the velocity-product (bias) term has the wrong sign: it is -ad(psi_i) Ad(E_i_p) phi_p.",
         lambda: _outward(model, q, qdot, qddot, bias=-1.0)),
        ("the Sdot_i qdot_i term is missing (the joint's own velocity product).",
         lambda: _outward(model, q, qdot, qddot, sdot=False)),
        ("off by a frame: S_i qddot_i + Sdot_i qdot_i is in the joint's frame; Ad(E_i_j) carries it "
         "into the body's frame.", lambda: _outward(model, q, qdot, qddot, own=False)),
        ("off by a frame: the parent's acceleration is added without Ad(E_i_p), which carries it into "
         "the child's frame.", lambda: _outward(model, q, qdot, qddot, carry=False)),
    ]


def _acceleration_cases(fn, cases, **kwargs):
    model = cases[0][0][0]
    return judge_cases(fn, cases, name="body_accelerations", shape=(model.n, 6),
                       reference=lambda *args: recursive.body_accelerations(*args)[0],
                       mistakes=acceleration_mistakes, what="the body accelerations", **kwargs)


@check_of("body_accelerations", "single", "a single body on a spherical joint", 1)
def accelerations_single(fn, rng):
    return _acceleration_cases(fn, _cases(rng, random_chain(rng, 1, kinds=("spherical",)), 2))


@check_of("body_accelerations", "rest", "at rest (qdot = 0)", 1)
def accelerations_rest(fn, rng):
    return _acceleration_cases(fn, _cases(rng, random_chain(rng, 4), 2, rest=True))


@check_of("body_accelerations", "chains", "chains in motion", 2)
def accelerations_chains(fn, rng):
    cases = _cases(rng, random_chain(rng, 4), 3)
    return _acceleration_cases(fn, cases, zero_case=_rest_case(cases[0]))


@check_of("body_accelerations", "tree", "a branching tree in motion", 1)
def accelerations_tree(fn, rng):
    return _acceleration_cases(fn, _cases(rng, random_chain(rng, 5, branching=True), 2))


@check_of("body_accelerations", "finite_differences", "against central differences of the twists", 1)
def accelerations_finite_differences(fn, rng):
    model = random_chain(rng, 4)
    (args, label), = _cases(rng, model, 1)
    _, q, qdot, qddot = args
    got = call(fn, *args, name="body_accelerations", shape=(model.n, 6), label=label)
    # d/dt phi(q + t qdot + t^2/2 qddot, qdot + t qddot) at t = 0; truncation ~h^2, round-off ~1e-16/h
    h = 1e-5
    numeric = (body_twists(model, q + h * qdot + h * h / 2 * qddot, qdot + h * qddot)
               - body_twists(model, q - h * qdot + h * h / 2 * qddot, qdot - h * qddot)) / (2 * h)
    scale = max(1.0, float(np.abs(numeric).max()))
    wrong = [b.name for i, b in enumerate(model.bodies) if np.abs(got[i] - numeric[i]).max() > 1e-6 * scale]
    if not wrong:
        return None
    right = [b.name for b in model.bodies if b.name not in wrong]
    message = (f"at {label}, phidot differs from the central difference of the body twists along the "
               f"motion for {', '.join(wrong)}")
    message += f"; it agrees for {', '.join(right)}." if right else " (every body)."
    return Verdict(message, fraction=len(right) / model.n)


# --- the inward sweep ---------------------------------------------------------------------------


def _inward(model, q, qdot, qddot, order="leaves", transpose=True, children=True, coriolis="ad^T",
            gravity=1.0, own=True, phidot=None):
    """The inward sweep with one of its parts changed (the usual mistakes), or on other ``phidot``."""
    right, kin = recursive.body_accelerations(model, q, qdot, qddot)
    phidot = right if phidot is None else phidot
    A_ij = joint_twist_adjoints(model)
    W = np.zeros((model.n, 6))
    for i, body in enumerate(model.bodies):
        M, phi, R = body.spatial_inertia, kin.phi[i], kin.E_wi[i, :3, :3]
        f = {"ad^T": ad(phi).T, "ad": ad(phi), "none": np.zeros((6, 6))}[coriolis] @ M @ phi
        f[3:] += gravity * body.mass * R.T @ model.gravity
        W[i] = M @ phidot[i] - f
    tau = np.zeros(model.nq)
    for i in (reversed(range(model.n)) if order == "leaves" else range(model.n)):
        s, p = model.dofs[i], model.parents[i]
        tau[s] = ((A_ij[i] @ kin.S[i]) if own else kin.S[i]).T @ W[i]
        if p >= 0 and children:
            W[p] += (kin.A_ip[i].T if transpose else kin.A_ip[i]) @ W[i]
    return tau


def torque_mistakes(model, q, qdot, qddot):
    """The usual wrong joint forces, with what went wrong."""
    return [
        ("the children's wrenches never reach their parents: go from the leaves to the root and add "
         "Ad(E_c_i)^T W_c to the parent's W_i before taking its tau_i.",
         lambda: _inward(model, q, qdot, qddot, children=False)),
        ("the bodies are visited root first: a parent's tau is taken before its children's wrenches "
         "are added; the inward sweep goes from the leaves.",
         lambda: _inward(model, q, qdot, qddot, order="root")),
        ("a child's wrench is carried with Ad(E_c_i); wrenches go to the parent with the transpose, "
         "Ad(E_c_i)^T (power is the same in both frames).",
         lambda: _inward(model, q, qdot, qddot, transpose=False)),
        ("the Coriolis wrench ad(phi_i)^T M_i phi_i is missing from f_i (the bias force of the inward "
         "sweep, Eq. 1.21).", lambda: _inward(model, q, qdot, qddot, coriolis="none")),
        ("the Coriolis wrench uses ad(phi_i) where ad(phi_i)^T belongs (Eq. 1.21).",
         lambda: _inward(model, q, qdot, qddot, coriolis="ad")),
        ("gravity has the wrong sign: the weight (0; m_i R_i^T g) is part of f_i, and W_i = "
         "M_i phidot_i - f_i.", lambda: _inward(model, q, qdot, qddot, gravity=-1.0)),
        ("off by a frame: tau_i = (Ad(E_i_j) S_i)^T W_i; S_i is in the joint's frame and W_i in the "
         "body's.", lambda: _inward(model, q, qdot, qddot, own=False)),
    ] + [  # a mistake of body_accelerations, carried into the joint forces
        (f"it uses wrong body accelerations ({message[:1].lower()}{message[1:].rstrip('.')}); the checks of "
         "body_accelerations say more.", lambda wrong=wrong: _inward(model, q, qdot, qddot, phidot=wrong()))
        for message, wrong in acceleration_mistakes(model, q, qdot, qddot)
    ]


def _torque_cases(fn, cases, **kwargs):
    model = cases[0][0][0]
    return judge_cases(fn, cases, name="inverse_dynamics", shape=(model.nq,),
                       reference=recursive.recursive_inverse_dynamics, mistakes=torque_mistakes,
                       what="the joint forces", **kwargs)


@check_of("inverse_dynamics", "pendulum", "the pendulum held still", 1)
def torques_pendulum(fn, rng):
    model, zero = pendulum(), np.zeros(1)
    cases = [((model, np.array([q]), zero, zero), _label(model, [q], zero, zero)) for q in (np.pi / 2, 0.5)]
    return _torque_cases(fn, cases, hint="Holding the bob out horizontally takes m g L = 19.62 N m.")


@check_of("inverse_dynamics", "static", "static poses (qdot = qddot = 0)", 1)
def torques_static(fn, rng):
    return _torque_cases(fn, _cases(rng, random_chain(rng, 4), 2, rest=True, still=True))


@check_of("inverse_dynamics", "velocity", "velocity terms alone (no gravity, qddot = 0)", 1)
def torques_velocity(fn, rng):
    return _torque_cases(fn, _cases(rng, random_chain(rng, 4, gravity=(0.0, 0.0, 0.0)), 2, still=True))


@check_of("inverse_dynamics", "chains", "chains in motion", 2)
def torques_chains(fn, rng):
    cases = _cases(rng, random_chain(rng, 4), 3)
    return _torque_cases(fn, cases, zero_case=_rest_case(cases[0]))


@check_of("inverse_dynamics", "tree", "branching trees in motion", 2)
def torques_tree(fn, rng):
    return _torque_cases(fn, _cases(rng, random_chain(rng, 6, branching=True), 2))
