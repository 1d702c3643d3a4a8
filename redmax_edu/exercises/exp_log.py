"""Grader of the assignment "The exponential and logarithm of SE(3)" (§1.3, Eq. 1.10).

The students write ``exp_se3(phi)`` and ``log_se3(E)`` with numpy (``brac`` is allowed; the
library's exponentials, logarithms and their V matrices are not). The checks compare with
:func:`redmax_edu.lie.exp_se3` and :func:`redmax_edu.lie.log_se3` on the inputs where such
code usually breaks: the zero twist (0/0 in the coefficients), pure rotations and pure
translations, small angles, angles near and at pi (where the skew part of R vanishes),
angles beyond pi (the logarithm returns the rotation of angle at most pi), and general
twists, where they name the usual slips: omega and nu swapped, the rotation turning the
wrong way, the translation taken as nu (or log's linear part as p) instead of going
through V.

Examples
--------
>>> from redmax_edu import lie
>>> print(check("exp_se3", lie.exp_se3).results[0].message)
exp_se3 calls lie.exp_se3, which this assignment does not let you call (it lets you call only
lie.brac): write it yourself.

Taught in book/01_maximal/03_exp_log.
"""

import numpy as np

from .. import lie
from .calls import describe
from .compare import agrees, judge_cases
from .core import Assignment, entry_points
from .inputs import IDENTITY, ZERO_TWIST, twist_case

ASSIGNMENT = Assignment(
    "01_exp_log", "The exponential and logarithm of SE(3)",
    allowed=[lie.brac], forbidden_outside=["scipy.linalg.expm", "scipy.linalg.logm"],
)
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)

ZERO_ANGLE_HINT = ("At theta = |omega| = 0, sin(theta)/theta and (1 - cos theta)/theta^2 are 0/0: "
                   "use their limits (Taylor series) for small theta.")
LOG_ZERO_HINT = ("At angle 0, theta/sin(theta) is 0/0 and the axis is undefined: use the limits "
                 "(Taylor series) for small angles.")


# --- inputs -------------------------------------------------------------------------------------


def _axis(rng):
    n = rng.standard_normal(3)
    return n / np.linalg.norm(n)


def _twist(rng, angle, linear=True):
    nu = rng.standard_normal(3) if linear else np.zeros(3)
    return np.concatenate([angle * _axis(rng), nu])


def _pose_case(phi):
    return (lie.exp_se3(phi),), f"E = exp_se3(phi), phi = {describe(phi)}"


# --- exp_se3 ------------------------------------------------------------------------------------


def exp_mistakes(phi):
    """The usual wrong exponentials of ``phi``, with what went wrong."""
    w, nu = phi[:3], phi[3:]
    R = lie.exp_so3(w)
    V = lie.left_jacobian_so3(w)

    def pose(R_, p_):
        E = np.eye(4)
        E[:3, :3], E[:3, 3] = R_, p_
        return E

    return [
        ("omega and nu are swapped: a twist is (omega, nu), angular part first.",
         lambda: lie.exp_se3(np.r_[nu, w])),
        ("the frame turns the wrong way: the sign of [omega] is flipped (a transposed "
         "cross-product matrix?).", lambda: lie.exp_se3(np.r_[-w, nu])),
        ("the translation is nu itself; it is V nu with V = I + ((1 - cos theta)/theta^2) [omega] "
         "+ ((theta - sin theta)/theta^3) [omega]^2: the body turns while it moves.", lambda: pose(R, nu)),
        ("the translation is R nu; it is V nu (the rotation acts gradually while the body moves).",
         lambda: pose(R, R @ nu)),
        ("the [omega] term of V has the wrong sign (V transposed).", lambda: pose(R, V.T @ nu)),
        ("V lacks its [omega]^2 term ((theta - sin theta)/theta^3 [omega]^2).",
         lambda: pose(R, (np.eye(3) + (V - V.T) / 2) @ nu)),  # (V - V^T)/2 is V's [omega] term
    ]


def _exp_cases(fn, cases, mistakes=exp_mistakes, **kwargs):
    return judge_cases(fn, cases, name="exp_se3", shape=(4, 4), reference=lie.exp_se3,
                       mistakes=mistakes, what="the right exponential", nan_hint=ZERO_ANGLE_HINT,
                       **kwargs)


@check_of("exp_se3", "zero", "the zero twist", 1)
def exp_zero(fn, rng):
    return _exp_cases(fn, [ZERO_TWIST])


@check_of("exp_se3", "rotation", "pure rotations", 1)
def exp_rotation(fn, rng):
    cases = [twist_case(_twist(rng, a, linear=False)) for a in rng.uniform(0.2, 3.0, 3)]
    cases.append(twist_case(_twist(rng, np.pi, linear=False)))
    return _exp_cases(fn, cases)


@check_of("exp_se3", "translation", "pure translations", 1)
def exp_translation(fn, rng):
    return _exp_cases(fn, [twist_case(np.r_[np.zeros(3), rng.standard_normal(3)]) for _ in range(3)])


@check_of("exp_se3", "general", "general twists", 2)
def exp_general(fn, rng):
    cases = [twist_case(_twist(rng, a)) for a in rng.uniform(0.1, 3 * np.pi, 8)]
    return _exp_cases(fn, cases, zero_case=ZERO_TWIST)


@check_of("exp_se3", "small", "small angles (1e-9 to 2e-2)", 1)
def exp_small(fn, rng):
    cases = [twist_case(_twist(rng, a)) for a in (1e-9, 1e-6, 1e-3, 8e-3, 2e-2)]
    return _exp_cases(fn, cases, tol=1e-12, mistakes=None, hint="Small angles need the Taylor series of the "
                      "coefficients, accurate to 1e-12 (and right where the series meets the closed form).")


# --- log_se3 ------------------------------------------------------------------------------------


def log_mistakes(E):
    """The usual wrong logarithms of ``E``, with what went wrong."""
    w = lie.log_so3(E[:3, :3])
    p = E[:3, 3]
    Vinv = lie.left_jacobian_inverse_so3(w)
    return [
        ("omega has the wrong sign: read it from (R - R^T)/2 = sin(theta) [n], not (R^T - R)/2.",
         lambda: np.r_[-w, lie.left_jacobian_inverse_so3(-w) @ p]),
        ("the linear part is the translation p itself; it is V^-1 p, with the V of exp_se3.",
         lambda: np.r_[w, p]),
        ("the linear part is V p; it is V^-1 p (the inverse of the V of exp_se3).",
         lambda: np.r_[w, lie.left_jacobian_so3(w) @ p]),
        ("the linear part is R^T p; it is V^-1 p, with the V of exp_se3.",
         lambda: np.r_[w, E[:3, :3].T @ p]),
        ("the [omega]/2 term of V^-1 has the wrong sign: V^-1 = I - [omega]/2 + c [omega]^2.",
         lambda: np.r_[w, Vinv.T @ p]),
    ]


def _log_cases(fn, cases, mistakes=log_mistakes, **kwargs):
    return judge_cases(fn, cases, name="log_se3", shape=(6,), reference=lambda E: lie.log_se3(E),
                       mistakes=mistakes, what="the right logarithm", nan_hint=LOG_ZERO_HINT, **kwargs)


def _round_trip(got, E):
    """``got`` is a logarithm of E: exp(got) = E with the rotation angle at most pi."""
    return bool(np.linalg.norm(got[:3]) <= np.pi + 1e-9 and agrees(lie.exp_se3(got), E))


@check_of("log_se3", "identity", "the identity", 1)
def log_identity(fn, rng):
    return _log_cases(fn, [IDENTITY])


@check_of("log_se3", "general", "general poses (angles 0.1 to 3)", 2)
def log_general(fn, rng):
    cases = [_pose_case(_twist(rng, a)) for a in rng.uniform(0.1, 3.0, 8)]
    return _log_cases(fn, cases, zero_case=IDENTITY)


@check_of("log_se3", "translation", "pure translations", 1)
def log_translation(fn, rng):
    return _log_cases(fn, [_pose_case(np.r_[np.zeros(3), rng.standard_normal(3)]) for _ in range(3)])


@check_of("log_se3", "small", "small angles (1e-9 to 1e-3)", 1)
def log_small(fn, rng):
    cases = [_pose_case(_twist(rng, a)) for a in (1e-9, 1e-7, 1e-5, 1e-3)]
    return _log_cases(fn, cases, tol=1e-12, mistakes=None,
                      hint="Near angle 0, arccos of the trace loses half the digits: read the angle as "
                      "atan2(|sin part|, cos part) and use the Taylor series of theta/sin(theta).")


@check_of("log_se3", "near_pi", "angles near pi (pi - 1e-8 to pi - 1e-4)", 1)
def log_near_pi(fn, rng):
    cases = [_pose_case(_twist(rng, np.pi - d)) for d in (1e-8, 1e-6, 1e-4)]
    return _log_cases(fn, cases, mistakes=None,
                      hint="Near pi the skew part (R - R^T)/2 = sin(theta) [n] vanishes and arccos is "
                      "steep: read the angle with atan2 and the axis from the symmetric part "
                      "(R + R^T)/2 - cos(theta) I = (1 - cos theta) n n^T.")


@check_of("log_se3", "half_turn", "half turns (angle pi exactly)", 1)
def log_half_turn(fn, rng):
    cases = []
    for axis in np.eye(3):
        E = np.eye(4)
        E[:3, :3] = 2 * np.outer(axis, axis) - np.eye(3)  # a half turn, exactly
        E[:3, 3] = rng.standard_normal(3)
        label = f"E = [[2 n n^T - I, p], [0, 1]], n = {describe(axis)}, p = {describe(E[:3, 3])}"
        cases.append(((E,), label))
    cases += [_pose_case(_twist(rng, np.pi)) for _ in range(2)]
    return judge_cases(fn, cases, name="log_se3", shape=(6,), accept=_round_trip, nan_hint=LOG_ZERO_HINT,
                       hint="At angle pi the skew part of R is zero: read the axis from the symmetric "
                       "part. Either sign of the axis is right; exp_se3(log_se3(E)) must give E back.")


@check_of("log_se3", "round_trip", "angles beyond pi (exp(log E) = E, |omega| <= pi)", 1)
def log_round_trip(fn, rng):
    cases = [_pose_case(_twist(rng, a)) for a in (*rng.uniform(np.pi + 0.1, 3 * np.pi, 3), 2 * np.pi)]
    return judge_cases(fn, cases, name="log_se3", shape=(6,), accept=_round_trip,
                       reference=lambda E: lie.log_se3(E), nan_hint=LOG_ZERO_HINT,
                       hint="The logarithm returns the rotation of angle at most pi: a turn by "
                       "theta > pi about n is a turn by 2 pi - theta about -n.")
