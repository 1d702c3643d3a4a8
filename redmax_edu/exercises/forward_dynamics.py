"""Grader of the assignment "Forward dynamics in reduced coordinates" (§2.3, Eq. 2.19).

The students write, for a model without joint springs or extra forces, the reduced mass
matrix ``mass_matrix(model, q)`` (``J^T M_m J``, the spatial inertias built from each body's
mass and inertia), the reduced force ``reduced_forces(model, q, qdot)`` (``J^T (f_m - M_m
Jdot qdot)`` with the Coriolis wrenches and gravity in body coordinates) and
``forward_dynamics(model, q, qdot, tau)`` (solve ``M_r qddot = f_r + tau``), with the
library's Jacobians (:func:`redmax_edu.jacobian.jacobian_and_derivative`), forward kinematics
and ``ad``, but not its dynamics. The checks compare with :func:`redmax_edu.dynamics.mass_matrix`,
:func:`~redmax_edu.dynamics.reduced_forces` and :func:`~redmax_edu.dynamics.forward_dynamics`
on the pendulum, random chains (with spherical joints, whose ``Sdot`` is not zero), a
branching tree and a free body (whose ``J`` is square), and name the usual slips: the
inertia in world axes, the mass and inertia blocks swapped, ``M`` not symmetric, the
``Jdot qdot`` term left out or with the wrong sign, the Coriolis wrench left out or written
with ``ad`` for ``ad^T``, gravity with the wrong sign or not turned into body axes, ``J``
where ``J^T`` belongs, and ``tau`` left out or subtracted.

Examples
--------
>>> from redmax_edu import dynamics
>>> print(check("mass_matrix", dynamics.mass_matrix).results[0].message)
mass_matrix calls dynamics.mass_matrix, which this assignment does not let you call (see its list at
the top of the notebook): write it yourself.

Taught in book/02_reduced/03_redmax_dynamics.
"""

import numpy as np

from .. import dynamics
from ..jacobian import jacobian, jacobian_and_derivative
from ..kinematics import Kinematics, forward_kinematics
from ..lie import ad
from ..model import Body, Model
from .calls import call, describe
from .chains import describe_model, free_body, pendulum, random_chain, random_state
from .compare import asymmetry, judge_cases
from .core import Assignment, Verdict, entry_points

ASSIGNMENT = Assignment(
    "03_forward_dynamics", "Forward dynamics in reduced coordinates",
    allowed=[jacobian, jacobian_and_derivative, forward_kinematics, Kinematics, ad, Model, Body],
)
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)

SHAPE_HINT = ("J has shape (6n, nq) and M_m (6n, 6n): the products that fit are J^T M_m J and "
              "J^T f; J^T maps body wrenches to joint forces.")


# --- the terms of Eq. (2.19), one at a time, for naming mistakes ---------------------------------


def _blocks(model, rotational, linear):
    """Block-diagonal M_m from per-body 3x3 blocks: ``rotational(i)`` and ``linear(i)``."""
    M = np.zeros((6 * model.n, 6 * model.n))
    for i in range(model.n):
        M[6 * i:6 * i + 3, 6 * i:6 * i + 3] = rotational(i)
        M[6 * i + 3:6 * i + 6, 6 * i + 3:6 * i + 6] = linear(i)
    return M


def _terms(model, q, qdot):
    """J, Jdot, M_m, the world rotations and the body twists at one state."""
    J, Jdot = jacobian_and_derivative(model, q, qdot)
    kin = forward_kinematics(model, q, qdot)
    M_m = _blocks(model, lambda i: model.bodies[i].inertia, lambda i: model.bodies[i].mass * np.eye(3))
    return J, Jdot, M_m, kin.E_wi[:, :3, :3], kin.phi


def _stack(model, wrench):
    return np.concatenate([wrench(i) for i in range(model.n)])


# --- mass_matrix --------------------------------------------------------------------------------


def mass_mistakes(model, q):
    """The usual wrong reduced mass matrices, with what went wrong."""
    J, _, M_m, R, _ = _terms(model, q, np.zeros(model.nq))
    bodies = model.bodies

    def world(i):
        return R[i] @ bodies[i].inertia @ R[i].T

    found = [
        ("the rotational inertia is taken in world axes (R I R^T); J gives twists in body "
         "coordinates, so M_i = diag(I_i, m_i 1) uses the inertia in body axes.",
         lambda: J.T @ _blocks(model, world, lambda i: bodies[i].mass * np.eye(3)) @ J),
        ("the blocks of M_i are swapped: a twist is (omega, nu), so M_i = diag(I_i, m_i 1), "
         "inertia first.", lambda: J.T @ _blocks(model, lambda i: bodies[i].mass * np.eye(3),
                                                 lambda i: bodies[i].inertia) @ J),
        ("the rotational inertia is missing: M_i = diag(I_i, m_i 1).",
         lambda: J.T @ _blocks(model, lambda i: np.zeros((3, 3)), lambda i: bodies[i].mass * np.eye(3)) @ J),
        ("it is J^T J: the spatial inertias M_m are missing between J^T and J.", lambda: J.T @ J),
        ("only the upper triangle is filled: M_r is symmetric.", lambda: np.triu(J.T @ M_m @ J)),
    ]
    if J.shape[0] == J.shape[1]:
        found.append(("it uses J where J^T belongs (J M_m J^T): " + SHAPE_HINT, lambda: J @ M_m @ J.T))
    return found


def _with_shape_hint(judge):
    """Add :data:`SHAPE_HINT` to a matrix-product error of the student's function."""
    try:
        return judge()
    except Verdict as verdict:
        if any(s in verdict.message for s in ("mismatch in its core dimension", "not aligned")):
            verdict.message = f"{verdict.message} {SHAPE_HINT}"
            verdict.args = (verdict.message,)
        raise


def _state_label(model, q, qdot=None, tau=None):
    text = f"{describe_model(model)}, q = {describe(q)}"
    if qdot is not None:
        text += f", qdot = {describe(qdot)}"
    if tau is not None:
        text += f", tau = {describe(tau)}"
    return text


def _mass_cases(fn, cases, **kwargs):
    def judge():
        model = cases[0][0][0]
        return judge_cases(fn, cases, name="mass_matrix", shape=(model.nq, model.nq),
                           reference=dynamics.mass_matrix, mistakes=mass_mistakes,
                           what="the reduced mass matrix", **kwargs)
    return _with_shape_hint(judge)


@check_of("mass_matrix", "pendulum", "the pendulum (I + m L^2)", 1)
def mass_pendulum(fn, rng):
    model = pendulum()
    return _mass_cases(fn, [((model, np.array([q])), _state_label(model, [q])) for q in (0.0, 0.7)],
                       hint="For one hinge M_r is the moment of inertia about the hinge, I + m L^2 = 2.01.")


@check_of("mass_matrix", "free", "a free body (J is 6x6)", 1)
def mass_free(fn, rng):
    model = free_body(rng)
    states = [rng.uniform(-1.5, 1.5, 6) for _ in range(2)]
    return _mass_cases(fn, [((model, q), _state_label(model, q)) for q in states])


@check_of("mass_matrix", "symmetric", "symmetric and positive definite", 1)
def mass_symmetric(fn, rng):
    model = random_chain(rng, 4)
    q = random_state(rng, model)[0]
    M = _with_shape_hint(lambda: call(fn, model, q, name="mass_matrix", shape=(model.nq, model.nq),
                                      label=_state_label(model, q)))
    where = f"At {_state_label(model, q)}, "
    gap = asymmetry(M, "M")
    if gap:
        return Verdict(where + gap + " J^T M_m J is symmetric whatever J is.")
    smallest = float(np.linalg.eigvalsh(M).min())
    if smallest <= 1e-9 * max(1.0, float(np.abs(M).max())):
        return Verdict(where + f"M is not positive definite (its smallest eigenvalue is {smallest:.3g}): "
                       "the kinetic energy qdot^T M qdot / 2 must be positive for every qdot != 0.")
    return None


@check_of("mass_matrix", "chains", "random chains and a branching tree", 2)
def mass_chains(fn, rng):
    cases = []
    for model in (random_chain(rng, 4), random_chain(rng, 3), random_chain(rng, 5, branching=True)):
        q = random_state(rng, model)[0]
        cases.append(((model, q), _state_label(model, q)))
    model = cases[0][0][0]
    zero = np.zeros(model.nq)
    results = [_mass_cases(fn, [case], zero_case=((model, zero), "q = 0") if case[0][0] is model else None)
               for case in cases]
    return _combine(results, len(cases))


def _combine(verdicts, count):
    """One verdict for several single-case judgements (each on its own model): the first failure's
    message, and the fraction of cases passed."""
    failed = [v for v in verdicts if v is not None]
    if not failed:
        return None
    message = failed[0].message
    if count > 1:
        message += f" Wrong for {len(failed)} of {count} models."
    return Verdict(message, fraction=1 - len(failed) / count)


# --- reduced_forces -----------------------------------------------------------------------------


def force_mistakes(model, q, qdot):
    """The usual wrong reduced forces, with what went wrong."""
    J, Jdot, M_m, R, phi = _terms(model, q, qdot)
    bodies, g = model.bodies, model.gravity
    M_i = [M_m[6 * i:6 * i + 6, 6 * i:6 * i + 6] for i in range(model.n)]
    coriolis = _stack(model, lambda i: ad(phi[i]).T @ M_i[i] @ phi[i])
    gravity = _stack(model, lambda i: np.r_[np.zeros(3), bodies[i].mass * R[i].T @ g])
    qvv = -J.T @ M_m @ Jdot @ qdot
    right = J.T @ (coriolis + gravity) + qvv
    found = [
        ("the quadratic velocity vector -J^T M_m Jdot qdot is missing: phidot = J qddot + Jdot qdot "
         "(Eq. 2.2), and its Jdot qdot part moves to the force side.", lambda: right - qvv),
        ("the quadratic velocity vector has the wrong sign: it is -J^T M_m Jdot qdot.",
         lambda: right - 2 * qvv),
        ("the Coriolis wrenches ad(phi_i)^T M_i phi_i are missing (Eq. 1.21).",
         lambda: right - J.T @ coriolis),
        ("the Coriolis wrench has the wrong sign: f_i = ad(phi_i)^T M_i phi_i + gravity (Eq. 1.21).",
         lambda: right - 2 * J.T @ coriolis),
        ("the Coriolis wrench uses ad(phi_i) where ad(phi_i)^T belongs.",
         lambda: right - J.T @ coriolis + J.T @ _stack(model, lambda i: ad(phi[i]) @ M_i[i] @ phi[i])),
        ("gravity has the wrong sign: the weight of body i is m_i g with g = model.gravity "
         "(pointing down), (0; m_i R_i^T g) in body coordinates.", lambda: right - 2 * J.T @ gravity),
        ("off by a frame: gravity is taken in world axes (0; m_i g); the wrench is in body "
         "coordinates, (0; m_i R_i^T g), with R_i the body's rotation in the world.",
         lambda: right - J.T @ gravity
         + J.T @ _stack(model, lambda i: np.r_[np.zeros(3), bodies[i].mass * g])),
        ("off by a frame: gravity is turned with R_i; world to body coordinates is R_i^T.",
         lambda: right - J.T @ gravity
         + J.T @ _stack(model, lambda i: np.r_[np.zeros(3), bodies[i].mass * R[i] @ g])),
        ("gravity is missing: each body's weight (0; m_i R_i^T g) belongs in f_m.",
         lambda: right - J.T @ gravity),
    ]
    if J.shape[0] == J.shape[1]:
        found.append(("it uses J where J^T belongs (J f): " + SHAPE_HINT,
                      lambda: J @ (coriolis + gravity - M_m @ Jdot @ qdot)))
    return found


def _force_cases(fn, cases, **kwargs):
    def judge():
        model = cases[0][0][0]
        return judge_cases(fn, cases, name="reduced_forces", shape=(model.nq,),
                           reference=dynamics.reduced_forces, mistakes=force_mistakes,
                           what="the reduced force", **kwargs)
    return _with_shape_hint(judge)


@check_of("reduced_forces", "pendulum", "the pendulum at rest", 1)
def forces_pendulum(fn, rng):
    model = pendulum()
    cases = [((model, np.array([q]), np.zeros(1)), _state_label(model, [q], [0])) for q in (np.pi / 2, 0.4)]
    return _force_cases(fn, cases, hint="Held horizontal (q = pi/2), gravity pulls with -m g L = -19.62 N m.")


@check_of("reduced_forces", "gravity", "gravity alone (qdot = 0)", 1)
def forces_gravity(fn, rng):
    model = random_chain(rng, 4)
    cases = []
    for _ in range(2):
        q = random_state(rng, model)[0]
        cases.append(((model, q, np.zeros(model.nq)), _state_label(model, q, np.zeros(model.nq))))
    return _force_cases(fn, cases)


@check_of("reduced_forces", "velocity", "velocity terms alone (no gravity)", 2)
def forces_velocity(fn, rng):
    model = random_chain(rng, 4, gravity=(0.0, 0.0, 0.0))
    cases = [((model, *random_state(rng, model)), None) for _ in range(3)]
    cases = [(args, _state_label(*args)) for args, _ in cases]
    q = cases[0][0][1]
    rest = ((model, q, np.zeros(model.nq)), "rest (qdot = 0, same q)")
    return _force_cases(fn, cases, zero_case=rest)


@check_of("reduced_forces", "free", "a free body (J is 6x6)", 1)
def forces_free(fn, rng):
    model = free_body(rng)
    cases = [((model, *random_state(rng, model)), None) for _ in range(2)]
    return _force_cases(fn, [(args, _state_label(*args)) for args, _ in cases])


@check_of("reduced_forces", "general", "general states of chains and trees", 2)
def forces_general(fn, rng):
    verdicts = []
    for model in (random_chain(rng, 4), random_chain(rng, 5, branching=True)):
        q, qdot = random_state(rng, model)
        rest = ((model, q, np.zeros(model.nq)), "rest (qdot = 0, same q)")
        verdicts.append(_force_cases(fn, [((model, q, qdot), _state_label(model, q, qdot))], zero_case=rest))
    return _combine(verdicts, len(verdicts))


# --- forward_dynamics ---------------------------------------------------------------------------


def dynamics_mistakes(model, q, qdot, tau):
    """The usual wrong accelerations, with what went wrong."""
    M, f = dynamics.mass_matrix(model, q), dynamics.reduced_forces(model, q, qdot)
    found = [
        ("tau is left out: M_r qddot = f_r + tau.", lambda: np.linalg.solve(M, f)),
        ("tau has the wrong sign: M_r qddot = f_r + tau.", lambda: np.linalg.solve(M, f - tau)),
        ("f_r has the wrong sign: M_r qddot = f_r + tau.", lambda: np.linalg.solve(M, tau - f)),
        ("it is M_r (f_r + tau): solve M_r qddot = f_r + tau for qddot (np.linalg.solve).",
         lambda: M @ (f + tau)),
    ]
    # a mistake of mass_matrix or reduced_forces, carried into the accelerations
    for message, wrong_M in mass_mistakes(model, q):
        found.append((f"it solves with a wrong mass matrix ({_clause(message)}); the checks of "
                      "mass_matrix say more.", lambda wrong_M=wrong_M: _solve(wrong_M(), f + tau)))
    for message, wrong_f in force_mistakes(model, q, qdot):
        found.append((f"it solves with a wrong reduced force ({_clause(message)}); the checks of "
                      "reduced_forces say more.", lambda wrong_f=wrong_f: _solve(M, wrong_f() + tau)))
    return found


def _clause(message):
    """A sentence as a clause inside another: no capital, no full stop."""
    return message[:1].lower() + message[1:].rstrip(".")


def _solve(M, b):
    """``M^-1 b``, or NaN (which matches nothing) when a wrong ``M`` is singular."""
    try:
        return np.linalg.solve(M, b)
    except np.linalg.LinAlgError:
        return np.full(np.shape(b), np.nan)


def _dynamics_cases(fn, cases, **kwargs):
    model = cases[0][0][0]
    return judge_cases(fn, cases, name="forward_dynamics", shape=(model.nq,),
                       reference=dynamics.forward_dynamics, mistakes=dynamics_mistakes,
                       what="the acceleration", **kwargs)


@check_of("forward_dynamics", "pendulum", "a released pendulum", 1)
def dynamics_pendulum(fn, rng):
    model = pendulum()
    cases = [((model, np.array([q]), np.array([v]), np.zeros(1)), _state_label(model, [q], [v], [0]))
             for q, v in ((np.pi / 2, 0.0), (0.3, 2.0))]
    return _dynamics_cases(fn, cases,
                           hint="Released horizontal, qddot = -m g L / (I + m L^2) = -9.76 rad/s^2.")


@check_of("forward_dynamics", "torques", "joint torques at rest without gravity", 1)
def dynamics_torques(fn, rng):
    model = random_chain(rng, 4, gravity=(0.0, 0.0, 0.0))
    cases = []
    for _ in range(2):
        q, tau = random_state(rng, model)[0], rng.standard_normal(model.nq)
        cases.append(((model, q, np.zeros(model.nq), tau), _state_label(model, q, np.zeros(model.nq), tau)))
    return _dynamics_cases(fn, cases, hint="At rest without gravity, M_r qddot = tau.")


@check_of("forward_dynamics", "general", "general states with torques", 2)
def dynamics_general(fn, rng):
    model = random_chain(rng, 4)
    cases = []
    for _ in range(3):
        q, qdot = random_state(rng, model)
        tau = rng.standard_normal(model.nq)
        cases.append(((model, q, qdot, tau), _state_label(model, q, qdot, tau)))
    return _dynamics_cases(fn, cases)


@check_of("forward_dynamics", "tree", "a branching tree", 1)
def dynamics_tree(fn, rng):
    model = random_chain(rng, 5, branching=True)
    q, qdot = random_state(rng, model)
    tau = rng.standard_normal(model.nq)
    return _dynamics_cases(fn, [((model, q, qdot, tau), _state_label(model, q, qdot, tau))])
