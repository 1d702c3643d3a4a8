"""Grader of the assignment "A joint's Q, S and Sdot: the universal joint" (§2.4, Eq. 2.24, 2.32, 2.41-2.44).

The students write the three functions every joint supplies (Eq. 2.24) for the universal
joint, ``R = R_x(q_1) R_y(q_2)``: the transform ``universal_Q(q)`` (4, 4), the Jacobian
``universal_S(q)`` (6, 2), whose column j unbrackets ``R^T dR/dq_j`` (Eq. 2.32), and its time
derivative ``universal_Sdot(q, qdot)`` (6, 2). The checks compare with
:class:`redmax_edu.joints.Universal` and, for S and Sdot, with central differences of the
library's Q and S in each coordinate. They name the usual slips: the rotations in the wrong
order or turning the wrong way, the transpose, omega and nu swapped, S in the parent's
frame, the columns exchanged, a term that vanishes at q = 0, Sdot not dS/dq qdot.

Examples
--------
>>> from redmax_edu.joints import Universal
>>> def universal_Q(q):
...     return Universal().Q(q)
>>> print(check("universal_Q", universal_Q).results[0].message)
universal_Q calls joints.base.Joint.Q, which this assignment does not let you call (it lets you call
only lie.brac, lie.unbrac): write it yourself.

Taught in book/02_reduced/04_joints and 04b_euler_joints.
"""

import numpy as np

from .. import lie
from ..checks import numerical_derivative
from ..joints import Universal
from .calls import call, describe
from .compare import finite_difference_verdict, judge_cases
from .core import Assignment, entry_points

ASSIGNMENT = Assignment(
    "01_joint_Q_S_Sdot", "A joint's Q, S and Sdot: the universal joint",
    allowed=[lie.brac, lie.unbrac],
)
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)

JOINT = Universal()
COORDINATES = ("q_1", "q_2")
#: The rows of a (6, k) Jacobian written (nu; omega) instead of (omega; nu).
SWAP_ROWS = np.r_[3:6, 0:3]


def _rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def _transform(R):
    Q = np.eye(4)
    Q[:3, :3] = R
    return Q


def _angles(rng):
    return rng.uniform(-np.pi, np.pi, 2)


def _q_case(q):
    return (q,), f"q = {describe(q)}"


ZERO = _q_case(np.zeros(2))


# --- universal_Q (Eq. 2.41) ---------------------------------------------------------------------


def q_mistakes(q):
    """The usual wrong joint transforms, with what went wrong."""
    return [
        ("the rotations are in the wrong order: R = R_x(q_1) R_y(q_2), first about x, then about "
         "the new y axis (Eq. (2.41)).", lambda: _transform(_ry(q[1]) @ _rx(q[0]))),
        ("the rotations turn the wrong way: R_x(q) = [[1, 0, 0], [0, cos q, -sin q], [0, sin q, "
         "cos q]], and R_y(q) has +sin q in its top-right entry.",
         lambda: _transform(_rx(-q[0]) @ _ry(-q[1]))),
        ("the rotation about y turns the wrong way: R_y(q) = [[cos q, 0, sin q], [0, 1, 0], "
         "[-sin q, 0, cos q]].", lambda: _transform(_rx(q[0]) @ _ry(-q[1]))),
        ("the rotation about x turns the wrong way: R_x(q) = [[1, 0, 0], [0, cos q, -sin q], "
         "[0, sin q, cos q]].", lambda: _transform(_rx(-q[0]) @ _ry(q[1]))),
    ]


def _q_cases(fn, cases, **kwargs):
    return judge_cases(fn, cases, name="universal_Q", shape=(4, 4), reference=JOINT.Q, mistakes=q_mistakes,
                       what="Q(q)", **kwargs)


@check_of("universal_Q", "zero", "q = 0", 1)
def q_zero(fn, rng):
    return _q_cases(fn, [ZERO])


@check_of("universal_Q", "one_angle", "one angle at a time", 1)
def q_one_angle(fn, rng):
    a, b = _angles(rng)
    return _q_cases(fn, [_q_case(np.array([a, 0.0])), _q_case(np.array([0.0, b]))])


@check_of("universal_Q", "general", "general angles", 2)
def q_general(fn, rng):
    return _q_cases(fn, [_q_case(_angles(rng)) for _ in range(4)], zero_case=ZERO)


# --- universal_S (Eq. 2.32, 2.43) ---------------------------------------------------------------


def s_mistakes(q):
    """The usual wrong joint Jacobians, with what went wrong."""
    S = JOINT.S(q)
    R = JOINT.Q(q)[:3, :3]
    parent = S.copy()
    parent[:3] = R @ S[:3]
    return [
        ("omega and nu are swapped: the rows of S are (omega; nu), the angular part first.",
         lambda: S[SWAP_ROWS]),
        ("off by a frame: these are the joint's axes in the parent's frame, R S; S gives the child's "
         "twist in its own frame, the columns unbracket R^T dR/dq_j (Eq. (2.32)).", lambda: parent),
        ("the columns are exchanged: column j of S belongs to q_j.", lambda: S[:, ::-1]),
    ]


def _s_cases(fn, cases, **kwargs):
    return judge_cases(fn, cases, name="universal_S", shape=(6, 2), reference=JOINT.S, mistakes=s_mistakes,
                       what="S(q)", **kwargs)


@check_of("universal_S", "zero", "q = 0", 1)
def s_zero(fn, rng):
    return _s_cases(fn, [ZERO])


@check_of("universal_S", "general", "general angles", 2)
def s_general(fn, rng):
    cases = [_q_case(_angles(rng)) for _ in range(4)]
    return _s_cases(fn, cases, zero_case=ZERO)


@check_of("universal_S", "finite_differences", "against finite differences of Q", 1)
def s_finite_differences(fn, rng):
    q = _angles(rng)
    S = call(fn, q, name="universal_S", shape=(6, 2), label=f"q = {describe(q)}")
    R = JOINT.Q(q)[:3, :3]
    dR = numerical_derivative(lambda x: JOINT.Q(x)[:3, :3], q)  # (3, 3, 2)
    numeric = np.stack([np.r_[lie.unbrac(R.T @ dR[..., j]), 0, 0, 0] for j in range(2)], axis=-1)
    return finite_difference_verdict(
        S, numeric, COORDINATES, f"universal_S(q = {describe(q)}): column j of S differs from "
        "(R^T dR/dq_j) unbracketed, with dR/dq_j by central differences of the library's Q,")


# --- universal_Sdot (Eq. 2.44) ------------------------------------------------------------------


def sdot_mistakes(q, qdot):
    """The usual wrong rates of S, with what went wrong."""
    Sd = JOINT.Sdot(q, qdot)
    dS = JOINT.dS_dq(q)  # (6, 2, 2): dS/dq_k in [..., k]
    return [
        ("it is dS/dq_2 without the rate: Sdot = sum_k dS/dq_k qdot_k, so multiply by qdot_2.",
         lambda: dS[..., 1]),
        ("it uses qdot_1 where qdot_2 belongs: S depends on q_2 only, so Sdot = dS/dq_2 qdot_2.",
         lambda: dS[..., 1] * qdot[0]),
        ("omega and nu are swapped: the rows of Sdot are (omega; nu), the angular part first.",
         lambda: Sd[SWAP_ROWS]),
    ]


def _sdot_label(q, qdot):
    return f"q = {describe(q)}, qdot = {describe(qdot)}"


def _sdot_cases(fn, cases, **kwargs):
    return judge_cases(fn, cases, name="universal_Sdot", shape=(6, 2), reference=JOINT.Sdot,
                       mistakes=sdot_mistakes, what="Sdot", **kwargs)


@check_of("universal_Sdot", "at_rest", "a joint at rest (qdot = 0)", 1)
def sdot_at_rest(fn, rng):
    q = _angles(rng)
    return _sdot_cases(fn, [((q, np.zeros(2)), _sdot_label(q, np.zeros(2)))])


@check_of("universal_Sdot", "general", "general angles and rates", 2)
def sdot_general(fn, rng):
    cases = []
    for _ in range(4):
        q, qdot = _angles(rng), rng.standard_normal(2)
        cases.append(((q, qdot), _sdot_label(q, qdot)))
    qdot = cases[0][0][1]
    return _sdot_cases(fn, cases, zero_case=((np.zeros(2), qdot), _sdot_label(np.zeros(2), qdot)))


@check_of("universal_Sdot", "finite_differences", "against finite differences of S, one rate at a time", 1)
def sdot_finite_differences(fn, rng):
    q = _angles(rng)
    numeric = numerical_derivative(JOINT.S, q)  # (6, 2, 2): dS/dq_k in [..., k]
    analytic = np.stack([call(fn, q, e, name="universal_Sdot", shape=(6, 2), label=_sdot_label(q, e))
                         for e in np.eye(2)], axis=-1)
    return finite_difference_verdict(
        analytic, numeric, COORDINATES, f"universal_Sdot(q = {describe(q)}, qdot = e_k) differs from the "
        "central difference of the library's S in q_k (Sdot = sum_k dS/dq_k qdot_k)")
