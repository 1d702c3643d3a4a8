"""Grader of the assignment "The adjoint and its rate" (§1.5, Eq. 1.14, 1.18-1.19).

The students write ``adjoint(E)`` (Eq. 1.14), the spatial cross-product matrix ``ad(phi)``
(Eq. 1.19) and ``adjoint_dot(E, phi)``, the rate of the adjoint of a frame moving with body
twist phi (Eq. 1.18, factored as Eq. 1.19), with numpy (``brac`` is allowed). The checks
compare with :func:`redmax_edu.lie.adjoint`, :func:`~redmax_edu.lie.ad` and
:func:`~redmax_edu.lie.adjoint_dot`, and the rate also with central differences of the
library's adjoint along each of the six unit twists (:mod:`redmax_edu.checks`). They name
the usual slips: the transpose (the wrench map), omega and nu swapped, the block ``R [p]``
for ``[p] R`` and the adjoint of the inverse (both off by a frame), a flipped sign, the rate
of a world twist (``ad(phi) A``) for a body twist, and a term of Eq. (1.18) left out.

Examples
--------
>>> from redmax_edu import lie
>>> print(check("ad", lie.ad).results[0].message)
ad calls lie.ad, which this assignment does not let you call (it lets you call only lie.brac): write
it yourself.

Taught in book/01_maximal/05_adjoint.
"""

import numpy as np

from .. import lie
from ..checks import numerical_derivative
from .calls import call, describe
from .compare import TWIST_COORDINATES, direction_mismatches, judge_cases
from .core import Assignment, Verdict, entry_points
from .inputs import IDENTITY, ZERO_TWIST, pose_label, random_pose, twist_case

ASSIGNMENT = Assignment(
    "02_adjoint", "The adjoint and its rate",
    allowed=[lie.brac],
)
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)


# --- inputs -------------------------------------------------------------------------------------


def _blocks(top_left, top_right, bottom_left, bottom_right):
    return np.block([[top_left, top_right], [bottom_left, bottom_right]])


Z3 = np.zeros((3, 3))


# --- adjoint (Eq. 1.14) -------------------------------------------------------------------------


def adjoint_mistakes(E):
    """The usual wrong adjoints of ``E``, with what went wrong."""
    R, p = E[:3, :3], E[:3, 3]
    P = lie.brac(p)
    return [
        ("it is the transpose of the adjoint: A^T carries wrenches the other way (w_b = A^T w_a); "
         "twists use A itself (Eq. 1.15).", lambda: lie.adjoint(E).T),
        ("off by a frame: the bottom-left block is [p] R, with p in the coordinates of the frame E "
         "is expressed in; R [p] takes p as if it were in body coordinates.",
         lambda: _blocks(R, Z3, R @ P, R)),
        ("off by a frame: it is the adjoint of the inverse transform, which carries twists the "
         "other way (A(E^-1) = A(E)^-1).", lambda: lie.adjoint(lie.inv_se3(E))),
        ("the bottom-left block has the wrong sign: it is [p] R, with [p] x = p cross x.",
         lambda: _blocks(R, Z3, -P @ R, R)),
        ("the bottom-left block is [p]; it is [p] R.", lambda: _blocks(R, Z3, P, R)),
    ]


def _adjoint_cases(fn, cases, **kwargs):
    return judge_cases(fn, cases, name="adjoint", shape=(6, 6), reference=lie.adjoint,
                       mistakes=adjoint_mistakes, what="the adjoint", **kwargs)


@check_of("adjoint", "identity", "the identity", 1)
def adjoint_identity(fn, rng):
    return _adjoint_cases(fn, [IDENTITY])


@check_of("adjoint", "rotation", "pure rotations", 1)
def adjoint_rotation(fn, rng):
    poses = [random_pose(rng, translation=False) for _ in range(3)]
    return _adjoint_cases(fn, [((E,), pose_label(E)) for E in poses])


@check_of("adjoint", "translation", "pure translations", 1)
def adjoint_translation(fn, rng):
    poses = [random_pose(rng, rotation=False) for _ in range(3)]
    return _adjoint_cases(fn, [((E,), pose_label(E)) for E in poses])


@check_of("adjoint", "general", "general poses", 2)
def adjoint_general(fn, rng):
    cases = [((E,), pose_label(E)) for E in (random_pose(rng) for _ in range(6))]
    return _adjoint_cases(fn, cases, zero_case=IDENTITY)


# --- ad (Eq. 1.19) ------------------------------------------------------------------------------


def ad_mistakes(phi):
    """The usual wrong spatial cross-product matrices of ``phi``, with what went wrong."""
    W, N = lie.brac(phi[:3]), lie.brac(phi[3:])
    return [
        ("it is the transpose of ad(phi); ad(phi)^T is the matrix that acts on wrenches "
         "(the Coriolis wrench ad(phi)^T M phi, Eq. 1.21).", lambda: lie.ad(phi).T),
        ("the [nu] block has the wrong sign: ad(phi) = [[[omega], 0], [[nu], [omega]]].",
         lambda: _blocks(W, Z3, -N, W)),
        ("the [omega] blocks have the wrong sign: ad(phi) = [[[omega], 0], [[nu], [omega]]].",
         lambda: _blocks(-W, Z3, N, -W)),
    ]


def _ad_cases(fn, cases, **kwargs):
    return judge_cases(fn, cases, name="ad", shape=(6, 6), reference=lie.ad, mistakes=ad_mistakes,
                       what="ad(phi)", **kwargs)


@check_of("ad", "zero", "the zero twist", 1)
def ad_zero(fn, rng):
    return _ad_cases(fn, [ZERO_TWIST])


@check_of("ad", "angular", "pure angular velocities", 1)
def ad_angular(fn, rng):
    return _ad_cases(fn, [twist_case(np.r_[rng.standard_normal(3), 0, 0, 0]) for _ in range(3)])


@check_of("ad", "general", "general twists", 2)
def ad_general(fn, rng):
    cases = [twist_case(rng.standard_normal(6)) for _ in range(5)]
    return _ad_cases(fn, cases, zero_case=ZERO_TWIST)


# --- adjoint_dot (Eq. 1.18-1.19) ----------------------------------------------------------------


def adjoint_dot_mistakes(E, phi):
    """The usual wrong rates of the adjoint, with what went wrong."""
    A, a = lie.adjoint(E), lie.ad(phi)
    R, p = E[:3, :3], E[:3, 3]
    W, N = lie.brac(phi[:3]), lie.brac(phi[3:])
    return [
        ("off by a frame: ad(phi) A is the rate for a twist in world coordinates; phi is in body "
         "coordinates, so the rate is A ad(phi) (Eq. 1.19).", lambda: a @ A),
        ("it uses ad(phi)^T; the rate is A ad(phi) (Eq. 1.19).", lambda: A @ a.T),
        ("the bottom-left block lacks R [nu], the term that comes from the motion of the origin, "
         "d[p]/dt R = R [nu] (Eq. 1.17-1.18).", lambda: A @ a - _blocks(Z3, Z3, R @ N, Z3)),
        ("the bottom-left block lacks [p] R [omega] (Eq. 1.18).",
         lambda: A @ a - _blocks(Z3, Z3, lie.brac(p) @ R @ W, Z3)),
        ("it is A(E) ad(phi) without A: ad(phi) is the rate only at E = I.", lambda: a),
    ]


@check_of("adjoint_dot", "at_rest", "a frame at rest (phi = 0)", 1)
def adjoint_dot_at_rest(fn, rng):
    E = random_pose(rng)
    return judge_cases(fn, [((E, np.zeros(6)), f"{pose_label(E)}, phi = 0")], name="adjoint_dot",
                       shape=(6, 6), reference=lie.adjoint_dot, what="the rate of the adjoint")


@check_of("adjoint_dot", "identity", "at E = I", 1)
def adjoint_dot_identity(fn, rng):
    cases = []
    for _ in range(2):
        phi = rng.standard_normal(6)
        cases.append(((np.eye(4), phi), f"E = I, phi = {describe(phi)}"))
    return judge_cases(fn, cases, name="adjoint_dot", shape=(6, 6), reference=lie.adjoint_dot,
                       mistakes=adjoint_dot_mistakes, what="the rate of the adjoint")


@check_of("adjoint_dot", "general", "general poses and twists", 2)
def adjoint_dot_general(fn, rng):
    cases = []
    for _ in range(5):
        E, phi = random_pose(rng), rng.standard_normal(6)
        cases.append(((E, phi), f"{pose_label(E)}, phi = {describe(phi)}"))
    phi = cases[0][0][1]
    return judge_cases(fn, cases, name="adjoint_dot", shape=(6, 6), reference=lie.adjoint_dot,
                       mistakes=adjoint_dot_mistakes, what="the rate of the adjoint",
                       zero_case=((np.eye(4), phi), "E = I (same phi)"))


@check_of("adjoint_dot", "finite_differences", "against finite differences, one unit twist at a time", 1)
def adjoint_dot_finite_differences(fn, rng):
    E = random_pose(rng)
    # column k: d/dh adjoint(E exp(h [e_k])) at h = 0, by central differences (error ~1e-10)
    numeric = numerical_derivative(lie.adjoint, E, space="se3")
    analytic = np.stack([call(fn, E, e, name="adjoint_dot", shape=(6, 6),
                              label=f"{pose_label(E)}, phi = {describe(e)}") for e in np.eye(6)], axis=-1)
    wrong = direction_mismatches(analytic, numeric, TWIST_COORDINATES, tol=1e-6)
    if not wrong:
        return None
    right = [name for name in TWIST_COORDINATES if name not in wrong]
    message = (f"adjoint_dot(E, e_k) differs from the central difference of adjoint(E exp(h [e_k])) "
               f"along {', '.join(wrong)}")
    message += f"; it agrees along {', '.join(right)}." if right else " (every direction)."
    if wrong == list(TWIST_COORDINATES[3:]):
        message += " The terms of nu are wrong."
    elif wrong == list(TWIST_COORDINATES[:3]):
        message += " The terms of omega are wrong."
    return Verdict(message, fraction=len(right) / 6)
