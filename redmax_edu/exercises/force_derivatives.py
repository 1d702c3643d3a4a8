"""Grader of the assignment "A spring between two bodies: its wrench, stiffness and damping" (§1.9).

The students write, for a zero-rest-length spring with damping between a point ``r_0`` on
body 0 and a point ``r_1`` on body 1 (Eq. 1.40-1.48; the world force on the first point is
``F = k_s (x_1 - x_0) + k_d (v_1 - v_0)``, its opposite acts on the second), the wrenches
``f`` (12,), the stiffness ``K = df/dq`` (12, 12) and the damping ``D = df/dphi`` (12, 12),
with numpy (``brac`` and ``gamma`` are allowed). The checks compare with
:class:`redmax_edu.maximal.forces.PointSpring` and, for ``K`` and ``D``, with central
differences of the library's wrench along each of the twelve coordinates (a pose moves along
its own body twist, ``E_i exp([dq_i])``, Eq. 1.11). They name the usual slips: the force left
in world coordinates, omega and nu swapped, a sign, the transpose, the term of the rotation
inside ``J^T`` (Eq. 1.33) or of the velocity (Eq. 1.43) left out of ``K``.

Examples
--------
>>> from redmax_edu.maximal.forces import PointSpring
>>> def spring_wrench(E, phi, r, ks, kd):
...     return PointSpring(r, r, ks, kd).evaluate(E, phi).f
>>> print(check("spring_wrench", spring_wrench).results[0].message)
spring_wrench calls maximal.forces.PointSpring.__init__, which this assignment does not let you call
(it lets you call only lie.brac, lie.gamma): write it yourself.

Taught in book/01_maximal/09_forces.
"""

import numpy as np

from .. import lie
from ..checks import numerical_derivative
from ..maximal import forces
from .calls import call, describe
from .compare import TWIST_COORDINATES, finite_difference_verdict, judge_cases
from .core import Assignment, Verdict, entry_points

ASSIGNMENT = Assignment(
    "03_force_derivatives", "A spring between two bodies: its wrench, stiffness and damping",
    allowed=[lie.brac, lie.gamma],
)
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)

#: The twelve coordinates of two bodies' twists (or pose perturbations), by index.
COORDINATES = tuple(f"body {i} {name}" for i in (0, 1) for name in TWIST_COORDINATES)


# --- the reference and the inputs ---------------------------------------------------------------


def terms(E, phi, r, ks, kd):
    """The library's ``f``, ``K`` and ``D`` of the spring (:class:`~redmax_edu.maximal.forces.ForceTerms`)."""
    spring = forces.PointSpring(forces.Attachment(0, r[0]), forces.Attachment(1, r[1]), ks, kd)
    return spring.evaluate(E, phi)


def world_force(E, phi, r, ks, kd):
    """The world force ``F`` on the first point (the library's point kinematics, Eq. 1.12)."""
    x, v = forces.point_kinematics(E, phi, [forces.Attachment(0, r[0]), forces.Attachment(1, r[1])])
    return ks * (x[1] - x[0]) + kd * (v[1] - v[0])


def _state(rng, identity=False, rest=False):
    """Poses, twists, points and coefficients: the arguments of the three functions."""
    E = np.stack([np.eye(4) if identity else lie.random_transform(rng) for _ in range(2)])
    phi = np.zeros((2, 6)) if rest else rng.standard_normal((2, 6))
    r = rng.standard_normal((2, 3))
    ks, kd = round(float(rng.uniform(1, 3)), 2), round(float(rng.uniform(0.5, 1.5)), 2)
    return E, phi, r, ks, kd


def _label(args, identity=False):
    E, phi, r, ks, kd = args
    poses = "E = (I, I)" if identity else "random poses E"
    motion = "phi = 0" if not np.any(phi) else f"phi = ({describe(phi[0])}, {describe(phi[1])})"
    return f"{poses}, {motion}, r = ({describe(r[0])}, {describe(r[1])}), ks = {ks:g}, kd = {kd:g}"


def _case(args, identity=False):
    return args, _label(args, identity)


def _at_rest(args):
    """The same state with the bodies at rest: where the terms of the velocities vanish."""
    E, phi, r, ks, kd = args
    rest = (E, np.zeros_like(phi), r, ks, kd)
    return rest, _label(rest) + " (the same poses)"


def swap_each_body(a):
    """A (12,) or (12, 12) array written with (nu, omega) for each body instead of (omega, nu)."""
    p = np.r_[3:6, 0:3, 9:12, 6:9]
    a = np.asarray(a)
    return a[p] if a.ndim == 1 else a[np.ix_(p, p)]


SWAPPED = ("omega and nu are swapped: each body's block is (torque, force) for a wrench and "
           "(omega, nu) for a twist, angular part first.")


def _world_jacobians(r):
    """The material Jacobians without the rotation, Gamma(r_i): a frame mistake."""
    return [lie.gamma(r[0]), lie.gamma(r[1])]


# --- spring_wrench ------------------------------------------------------------------------------


def wrench_mistakes(E, phi, r, ks, kd):
    """The usual wrong wrenches, with what went wrong."""
    F = world_force(E, phi, r, ks, kd)
    G = _world_jacobians(r)
    f = terms(E, phi, r, ks, kd).f
    torque_flipped = f.copy()
    torque_flipped[[0, 1, 2, 6, 7, 8]] *= -1
    return [
        ("off by a frame: the force is left in world coordinates. A body's wrench is in body "
         "coordinates, Gamma(r)^T R^T F (Eq. 1.13): rotate the force into the body first.",
         lambda: np.concatenate([G[0].T @ F, -G[1].T @ F])),
        (SWAPPED, lambda: swap_each_body(f)),
        ("the torques have the wrong sign: the torque of a force F at r is r x F = [r] F.",
         lambda: torque_flipped),
        ("the damping term is missing: F = ks (x_1 - x_0) + kd (v_1 - v_0), with the world velocity "
         "of a point v = R Gamma(r) phi (Eq. 1.12).", lambda: terms(E, np.zeros_like(phi), r, ks, kd).f),
    ]


def _wrench_cases(fn, cases, **kwargs):
    return judge_cases(fn, cases, name="spring_wrench", shape=(12,),
                       reference=lambda *a: terms(*a).f, mistakes=wrench_mistakes, what="the wrench",
                       **kwargs)


@check_of("spring_wrench", "identity", "bodies at rest at the identity", 1)
def wrench_identity(fn, rng):
    return _wrench_cases(fn, [_case(_state(rng, identity=True, rest=True), identity=True)])


@check_of("spring_wrench", "rest", "bodies at rest at random poses", 1)
def wrench_rest(fn, rng):
    return _wrench_cases(fn, [_case(_state(rng, rest=True)) for _ in range(3)])


@check_of("spring_wrench", "moving", "moving bodies", 2)
def wrench_moving(fn, rng):
    cases = [_case(_state(rng)) for _ in range(4)]
    return _wrench_cases(fn, cases, zero_case=_at_rest(cases[0][0]))


@check_of("spring_wrench", "balance", "the forces on the two bodies balance", 1)
def wrench_balance(fn, rng):
    args = _state(rng)
    E = args[0]
    f = call(fn, *args, name="spring_wrench", shape=(12,), label=_label(args))
    world = E[0, :3, :3] @ f[3:6] + E[1, :3, :3] @ f[9:12]
    if np.max(np.abs(world)) <= 1e-9 * max(1.0, float(np.max(np.abs(f)))):
        return None
    return Verdict(f"spring_wrench({_label(args)}): the world forces on the two bodies, R_0 f_0 + R_1 f_1 "
                   f"= {describe(world)}, do not cancel. The spring pulls the two points toward each "
                   "other with opposite forces, F and -F.")


# --- spring_stiffness ---------------------------------------------------------------------------


def _wrench_of_poses(args):
    """``dq -> f(E_i exp([dq_i]))``: the wrench as a function of the twelve pose coordinates."""
    E, phi, r, ks, kd = args

    def f(dq):
        moved = np.stack([E[i] @ lie.exp_se3(dq[6 * i: 6 * i + 6]) for i in (0, 1)])
        return terms(moved, phi, r, ks, kd).f

    return f


def stiffness_mistakes(E, phi, r, ks, kd):
    """The usual wrong stiffness matrices, with what went wrong."""
    full = terms(E, phi, r, ks, kd)
    F = world_force(E, phi, r, ks, kd)
    rotation_term = np.zeros((12, 12))
    for i, Fi in ((0, F), (1, -F)):
        rotation_term[6 * i: 6 * i + 6, 6 * i: 6 * i + 3] = lie.gamma(r[i]).T @ lie.brac(E[i, :3, :3].T @ Fi)
    return [
        ("it lacks the term of the rotation inside the wrench, Gamma(r)^T [R^T F] in the omega "
         "columns of each body (Eq. 1.33): the wrench R^T F turns with the body even at a fixed F.",
         lambda: full.K - rotation_term),
        ("it lacks the velocity term: the point velocity v = R Gamma(r) phi turns with the body, "
         "dv/dq = -R [Gamma(r) phi] on the omega columns (Eq. 1.43), which kd multiplies.",
         lambda: full.K - _velocity_term(E, phi, r, kd)),
        (SWAPPED, lambda: swap_each_body(full.K)),
    ]


def _velocity_term(E, phi, r, kd):
    """``J_a^T dF_a/dv_b dv_b/dq``: the term of Eq. (1.43) in K."""
    K = np.zeros((12, 12))
    J = [E[i, :3, :3] @ lie.gamma(r[i]) for i in (0, 1)]
    dv = [np.hstack([-E[i, :3, :3] @ lie.brac(lie.gamma(r[i]) @ phi[i]), np.zeros((3, 3))])
          for i in (0, 1)]
    sign = np.array([[-1.0, 1.0], [1.0, -1.0]])
    for a in (0, 1):
        for b in (0, 1):
            K[6 * a: 6 * a + 6, 6 * b: 6 * b + 6] = kd * sign[a, b] * J[a].T @ dv[b]
    return K


def _stiffness_cases(fn, cases, **kwargs):
    return judge_cases(fn, cases, name="spring_stiffness", shape=(12, 12),
                       reference=lambda *a: terms(*a).K, mistakes=stiffness_mistakes,
                       what="the stiffness K", **kwargs)


@check_of("spring_stiffness", "identity", "bodies at rest at the identity", 1)
def stiffness_identity(fn, rng):
    return _stiffness_cases(fn, [_case(_state(rng, identity=True, rest=True), identity=True)])


@check_of("spring_stiffness", "rest", "bodies at rest at random poses", 1)
def stiffness_rest(fn, rng):
    return _stiffness_cases(fn, [_case(_state(rng, rest=True)) for _ in range(3)])


@check_of("spring_stiffness", "moving", "moving bodies", 1)
def stiffness_moving(fn, rng):
    cases = [_case(_state(rng)) for _ in range(3)]
    return _stiffness_cases(fn, cases, zero_case=_at_rest(cases[0][0]))


@check_of("spring_stiffness", "finite_differences",
          "against finite differences, one coordinate at a time", 2)
def stiffness_finite_differences(fn, rng):
    args = _state(rng)
    K = call(fn, *args, name="spring_stiffness", shape=(12, 12), label=_label(args))
    numeric = numerical_derivative(_wrench_of_poses(args), np.zeros(12))
    return finite_difference_verdict(
        K, numeric, COORDINATES, f"spring_stiffness({_label(args)}): column k of K differs from the "
        "central difference of the wrench with body i's pose moved to E_i exp(h [e_k])")


# --- spring_damping -----------------------------------------------------------------------------


def damping_mistakes(E, phi, r, ks, kd):
    """The usual wrong damping matrices, with what went wrong."""
    G = _world_jacobians(r)
    sign = np.array([[-1.0, 1.0], [1.0, -1.0]])
    world = np.block([[kd * sign[a, b] * G[a].T @ G[b] for b in (0, 1)] for a in (0, 1)])
    return [
        ("off by a frame: it is Gamma(r_a)^T Gamma(r_b) without the rotations; the point velocities "
         "and the forces are in world coordinates, J = R Gamma(r) (Eq. 1.12-1.13).", lambda: world),
        (SWAPPED, lambda: swap_each_body(terms(E, phi, r, ks, kd).D)),
    ]


def _damping_cases(fn, cases, **kwargs):
    return judge_cases(fn, cases, name="spring_damping", shape=(12, 12),
                       reference=lambda *a: terms(*a).D, mistakes=damping_mistakes,
                       what="the damping D", **kwargs)


@check_of("spring_damping", "identity", "bodies at the identity", 1)
def damping_identity(fn, rng):
    return _damping_cases(fn, [_case(_state(rng, identity=True), identity=True)])


@check_of("spring_damping", "general", "random poses and twists", 2)
def damping_general(fn, rng):
    cases = [_case(_state(rng)) for _ in range(3)]
    E, phi, r, ks, kd = cases[0][0]
    identity = (np.stack([np.eye(4)] * 2), phi, r, ks, kd)
    at_identity = (identity, _label(identity, identity=True) + " (the same phi)")
    return _damping_cases(fn, cases, zero_case=at_identity)


@check_of("spring_damping", "finite_differences",
          "against finite differences, one twist coordinate at a time", 1)
def damping_finite_differences(fn, rng):
    args = _state(rng)
    E, phi, r, ks, kd = args
    D = call(fn, *args, name="spring_damping", shape=(12, 12), label=_label(args))
    numeric = numerical_derivative(lambda p: terms(E, p.reshape(2, 6), r, ks, kd).f, phi.ravel())
    return finite_difference_verdict(
        D, numeric, COORDINATES, f"spring_damping({_label(args)}): column k of D differs from the "
        "central difference of the wrench along twist coordinate k")
