"""Grader of the assignment "Poses, twists and points" (§1.1, §1.2, §1.4; Eq. 1.4, 1.6, 1.12).

The students write, with numpy alone, ``inv_se3(E)``, the inverse of a rigid transform
without a general matrix inverse (Eq. 1.4), ``twist_bracket(phi)``, the 4x4 matrix
``[phi]`` of a twist (Eq. 1.6-1.7), and ``point_velocity(E, phi, r)``, the world velocity of
the body point ``r`` of a body at pose ``E`` moving with body twist ``phi`` (Eq. 1.12). The
checks compare with :func:`redmax_edu.lie.inv_se3`, :func:`~redmax_edu.lie.brac` and
:func:`~redmax_edu.lie.material_jacobian`, and the velocity also with a central difference
of the point's world position along the motion ``E exp(t [phi])``. They name the usual slips:
the rotation not transposed, the translation not rotated or with the wrong sign, omega and
nu swapped, ``[omega]`` turned the wrong way, nu in the bottom row, a velocity left in body
coordinates, the cross product the wrong way round, the position added to the velocity.

Examples
--------
>>> from redmax_edu import lie
>>> print(check("inv_se3", lie.inv_se3).results[0].message)
inv_se3 calls lie.inv_se3, which this assignment does not let you call (it lets you call no
function of the library): write it yourself.

Taught in book/01_maximal/01_position and 02_velocity and 04_material_jacobian.
"""

import numpy as np

from .. import lie
from ..checks import numerical_derivative
from .calls import call, describe
from .compare import judge_cases, max_error
from .core import Assignment, Verdict, entry_points
from .inputs import IDENTITY, ZERO_TWIST, pose_label, random_pose, twist_case

ASSIGNMENT = Assignment("06_poses_and_points", "Poses, twists and points", allowed=[])
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)


# --- inputs -------------------------------------------------------------------------------------


def _transform(R, p):
    E = np.eye(4)
    E[:3, :3], E[:3, 3] = R, p
    return E


# --- inv_se3 (Eq. 1.4) --------------------------------------------------------------------------


def inverse_mistakes(E):
    """The usual wrong inverses of ``E``, with what went wrong."""
    R, p = E[:3, :3], E[:3, 3]
    return [
        ("the translation is -p: the origin must be turned into the new frame's axes too, "
         "-R^T p (Eq. 1.4).", lambda: _transform(R.T, -p)),
        ("the translation is -R p: it is -R^T p, with the rotation of the inverse (Eq. 1.4).",
         lambda: _transform(R.T, -R @ p)),
        ("the translation has the wrong sign: it is -R^T p (Eq. 1.4).", lambda: _transform(R.T, R.T @ p)),
        ("the rotation block is R: the inverse turns the other way, R^T (Eq. 1.4).",
         lambda: _transform(R, -R.T @ p)),
        ("it is the transpose of E: a transform is not a rotation, and its inverse is not its "
         "transpose (only the rotation block is transposed, Eq. 1.4).", lambda: E.T),
    ]


def _inverse_cases(fn, cases, **kwargs):
    return judge_cases(fn, cases, name="inv_se3", shape=(4, 4), reference=lie.inv_se3,
                       mistakes=inverse_mistakes, what="the inverse", **kwargs)


@check_of("inv_se3", "identity", "the identity", 1)
def inverse_identity(fn, rng):
    return _inverse_cases(fn, [IDENTITY])


@check_of("inv_se3", "rotation", "pure rotations", 1)
def inverse_rotation(fn, rng):
    return _inverse_cases(fn, [((E,), pose_label(E)) for E in (random_pose(rng, translation=False)
                                                                 for _ in range(3))])


@check_of("inv_se3", "translation", "pure translations", 1)
def inverse_translation(fn, rng):
    return _inverse_cases(fn, [((E,), pose_label(E)) for E in (random_pose(rng, rotation=False)
                                                                 for _ in range(3))])


@check_of("inv_se3", "general", "general poses", 2)
def inverse_general(fn, rng):
    cases = [((E,), pose_label(E)) for E in (random_pose(rng) for _ in range(6))]
    return _inverse_cases(fn, cases, zero_case=IDENTITY)


# --- twist_bracket (Eq. 1.6-1.7) ----------------------------------------------------------------


def bracket_mistakes(phi):
    """The usual wrong brackets of the twist ``phi``, with what went wrong."""
    W, nu = lie.brac(phi[:3]), phi[3:]

    def matrix(top_left, column, row=(0.0, 0.0, 0.0)):
        out = np.zeros((4, 4))
        out[:3, :3], out[:3, 3], out[3, :3] = top_left, column, row
        return out

    return [
        ("[omega] turns the wrong way: [a] b = a x b, so [a] = [[0, -a_z, a_y], [a_z, 0, -a_x], "
         "[-a_y, a_x, 0]] (Eq. 1.7).", lambda: matrix(-W, nu)),
        ("nu is in the bottom row: it is the last column, [phi] = [[[omega], nu], [0, 0]] (Eq. 1.6).",
         lambda: matrix(W, np.zeros(3), nu)),
        ("omega and nu are swapped: a twist is (omega, nu), angular part first.",
         lambda: matrix(lie.brac(nu), phi[:3])),
        ("the bottom-right entry is 1: that is a pose's; a twist's bracket has a zero last row.",
         lambda: matrix(W, nu) + np.diag([0.0, 0.0, 0.0, 1.0])),
    ]


def _bracket_cases(fn, cases, **kwargs):
    return judge_cases(fn, cases, name="twist_bracket", shape=(4, 4), reference=lie.brac,
                       mistakes=bracket_mistakes, what="[phi]", **kwargs)


@check_of("twist_bracket", "zero", "the zero twist", 1)
def bracket_zero(fn, rng):
    return _bracket_cases(fn, [ZERO_TWIST])


@check_of("twist_bracket", "angular", "pure angular velocities", 1)
def bracket_angular(fn, rng):
    return _bracket_cases(fn, [twist_case(np.r_[rng.standard_normal(3), 0, 0, 0]) for _ in range(3)])


@check_of("twist_bracket", "general", "general twists", 2)
def bracket_general(fn, rng):
    return _bracket_cases(fn, [twist_case(rng.standard_normal(6)) for _ in range(5)], zero_case=ZERO_TWIST)


# --- point_velocity (Eq. 1.12) ------------------------------------------------------------------


def velocity(E, phi, r):
    """The world velocity ``R Gamma(r) phi`` of the body point ``r`` (Eq. 1.12)."""
    return lie.material_jacobian(E, r) @ phi


def velocity_mistakes(E, phi, r):
    """The usual wrong point velocities, with what went wrong."""
    R, p = E[:3, :3], E[:3, 3]
    w, nu = phi[:3], phi[3:]
    return [
        ("it is in body coordinates, omega x r + nu: turn it into world coordinates with R (Eq. 1.12).",
         lambda: np.cross(w, r) + nu),
        ("the cross product is the wrong way round: r x omega; the point moves with omega x r "
         "(Gamma(r) = ([r]^T I), Eq. 1.12).", lambda: R @ (np.cross(r, w) + nu)),
        ("omega and nu are swapped: a twist is (omega, nu), angular part first.",
         lambda: R @ (np.cross(nu, r) + w)),
        ("it lacks the body's own velocity R nu: only the turning, R (omega x r), is there.",
         lambda: R @ np.cross(w, r)),
        ("the position p is added: a velocity does not depend on where the origin is, only on "
         "how the body moves.", lambda: R @ (np.cross(w, r) + nu) + p),
    ]


def _velocity_label(E, phi, r):
    return f"{pose_label(E)}, phi = {describe(phi)}, r = {describe(r)}"


def _velocity_cases(fn, cases, **kwargs):
    return judge_cases(fn, [(args, _velocity_label(*args)) for args in cases], name="point_velocity",
                       shape=(3,), reference=velocity, mistakes=velocity_mistakes,
                       what="the point's velocity", **kwargs)


@check_of("point_velocity", "at_rest", "a body at rest (phi = 0)", 1)
def velocity_at_rest(fn, rng):
    return _velocity_cases(fn, [(random_pose(rng), np.zeros(6), rng.standard_normal(3)) for _ in range(2)])


@check_of("point_velocity", "identity", "a body at the world frame (E = I)", 1)
def velocity_identity(fn, rng):
    cases = [(np.eye(4), rng.standard_normal(6), rng.standard_normal(3)) for _ in range(3)]
    return _velocity_cases(fn, cases)


@check_of("point_velocity", "general", "general poses, twists and points", 2)
def velocity_general(fn, rng):
    cases = [(random_pose(rng), rng.standard_normal(6), rng.standard_normal(3)) for _ in range(5)]
    E, phi, r = cases[0]
    return _velocity_cases(fn, cases, zero_case=((np.eye(4), phi, r), _velocity_label(np.eye(4), phi, r)))


@check_of("point_velocity", "finite_differences", "against the motion of the point", 1)
def velocity_finite_differences(fn, rng):
    E, phi, r = random_pose(rng), rng.standard_normal(6), rng.standard_normal(3)

    def world_point(t):
        return (E @ lie.exp_se3(t[0] * phi) @ np.append(r, 1.0))[:3]

    numeric = numerical_derivative(world_point, [0.0])[:, 0]
    got = call(fn, E, phi, r, name="point_velocity", shape=(3,), label=_velocity_label(E, phi, r))
    if max_error(got, numeric) <= 1e-6 * max(1.0, float(np.abs(numeric).max())):
        return None
    return Verdict(f"point_velocity({_velocity_label(E, phi, r)}) differs from the central difference "
                   f"of the point's world position along E exp(t [phi]) at t = 0 (largest error "
                   f"{max_error(got, numeric):.2g}): the velocity is the rate of E x, with x = (r, 1).")
