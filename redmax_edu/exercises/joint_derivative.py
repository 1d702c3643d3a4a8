"""Grader of the assignment "A joint's derivatives: the universal joint" (§3.2, Eq. 3.10, 3.29-3.30, 3.39).

The students write the derivatives in q of the universal joint's three functions
(``R = R_x(q_1) R_y(q_2)``, the joint of the Part 2 assignment ``01_joint_Q_S_Sdot``), with
the derivative index last: ``universal_dQ_dq(q)`` (4, 4, 2), ``[:, :, k] = dQ/dq_k``;
``universal_dS_dq(q)`` (6, 2, 2), ``[:, j, k] = dS_j/dq_k``; and
``universal_dSdot_dq(q, qdot)`` (6, 2, 2), ``[:, j, k] = dSdot_j/dq_k`` at fixed ``qdot``. The
checks compare with :class:`redmax_edu.joints.Universal` and with central differences of the
library's ``Q``, ``S`` and ``Sdot`` along each coordinate. They name the usual slips: the
derivative index first instead of last, the slices transposed (``dQ/dq_k`` as its transpose,
the two last indices of ``dS/dq`` exchanged), the two derivatives exchanged, the term
``dR^T/dq_k dR/dq_j`` of the product rule left out of ``dS/dq``, the 1 that the writeup's
Eq. (3.30) prints in ``dS/dq_2``, ``dSdot/dq`` without the rate, a term that vanishes at q = 0.

Examples
--------
>>> from redmax_edu.joints import Universal
>>> def universal_dS_dq(q):
...     return Universal().dS_dq(q)
>>> print(check("universal_dS_dq", universal_dS_dq).results[0].message)
universal_dS_dq calls joints.base.Joint.dS_dq, which this assignment does not let you call (it lets
you call only lie.brac, lie.unbrac): write it yourself.

Taught in book/03_differentiable/02_joint_derivatives.
"""

import numpy as np

from .. import lie
from ..checks import numerical_derivative
from ..joints import Universal
from .calls import call, describe
from .compare import finite_difference_verdict, judge_cases
from .core import Assignment, Verdict, entry_points

ASSIGNMENT = Assignment(
    "01_joint_derivative", "A joint's derivatives: the universal joint",
    allowed=[lie.brac, lie.unbrac],
)
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)

JOINT = Universal()
COORDINATES = ("q_1", "q_2")
INDEX_LAST = ("The derivative index goes last: out[..., k] is the derivative along q_k "
              "(np.stack(..., axis=-1), or np.moveaxis(out, 0, -1)).")
SLICES_TRANSPOSED = ("the last two indices are exchanged: out[:, j, k] is the derivative of column j "
                     "of S along q_k, not of column k along q_j.")
EXCHANGED = "the two derivatives are exchanged: out[..., k] is the derivative along q_k."


def _angles(rng):
    return rng.uniform(-np.pi, np.pi, 2)


def _q_case(q):
    return (q,), f"q = {describe(q)}"


ZERO = _q_case(np.zeros(2))


def _rotations(q):
    """R_x(q_1), R_y(q_2) and their first and second derivatives: (Rx, dRx, ddRx), (Ry, dRy, ddRy)."""
    c1, s1, c2, s2 = np.cos(q[0]), np.sin(q[0]), np.cos(q[1]), np.sin(q[1])
    rx = [np.array([[1.0, 0, 0], [0, c1, -s1], [0, s1, c1]]),
          np.array([[0.0, 0, 0], [0, -s1, -c1], [0, c1, -s1]]),
          np.array([[0.0, 0, 0], [0, -c1, s1], [0, -s1, -c1]])]
    ry = [np.array([[c2, 0, s2], [0, 1.0, 0], [-s2, 0, c2]]),
          np.array([[-s2, 0, c2], [0, 0.0, 0], [-c2, 0, -s2]]),
          np.array([[-c2, 0, -s2], [0, 0.0, 0], [s2, 0, -c2]])]
    return rx, ry


def _first_and_second(q):
    """R, dR/dq_k (k = 0, 1) and d2R/dq_j dq_k (2, 2) of the universal joint."""
    rx, ry = _rotations(q)
    dR = [rx[1] @ ry[0], rx[0] @ ry[1]]
    ddR = [[rx[2] @ ry[0], rx[1] @ ry[1]], [rx[1] @ ry[1], rx[0] @ ry[2]]]
    return rx[0] @ ry[0], dR, ddR


def _unbrac(W):
    """The vector of a 3x3 matrix read off as a student would, (W[2, 1], W[0, 2], W[1, 0])."""
    return np.array([W[2, 1], W[0, 2], W[1, 0]])


def _index_hint(judge):
    """Add :data:`INDEX_LAST` to the message of an output with the derivative index first."""
    try:
        return judge()
    except Verdict as verdict:
        if "returned an array of shape (2, " in verdict.message:
            verdict.message = f"{verdict.message} {INDEX_LAST}"
            verdict.args = (verdict.message,)
        raise


def _slices(what):
    """The two derivatives of an output, named for :func:`~redmax_edu.exercises.compare.wrong_parts`."""
    return {f"{what}/dq_{k + 1} (out[:, :, {k}])": np.s_[..., k] for k in range(2)}


def _transposed_slices(a):
    """``a[:, :, k]`` replaced by its transpose for every k (a (4, 4, n) array)."""
    return np.swapaxes(a, 0, 1)


# --- universal_dQ_dq (Eq. 3.29) ------------------------------------------------------------------


def dq_mistakes(q):
    """The usual wrong dQ/dq, with what went wrong."""
    dQ = JOINT.dQ_dq(q)
    rx, ry = _rotations(q)
    factors = np.zeros((4, 4, 2))
    factors[:3, :3, 0], factors[:3, :3, 1] = rx[1], ry[1]
    kept = dQ.copy()
    kept[3, 3, :] = 1.0
    return [
        ("each slice is transposed: out[:, :, k] is dQ/dq_k itself, not its transpose.",
         lambda: _transposed_slices(dQ)),
        (EXCHANGED, lambda: dQ[..., ::-1]),
        ("the product rule is left out: dR/dq_1 = (dR_x/dq_1) R_y and dR/dq_2 = R_x (dR_y/dq_2); "
         "these are the factors' derivatives alone.", lambda: factors),
        ("it is dQ/dq_k with the bottom-right 1 of Q kept: the derivative of a constant entry is 0.",
         lambda: kept),
    ]


def _dq_cases(fn, cases, **kwargs):
    return _index_hint(lambda: judge_cases(
        fn, cases, name="universal_dQ_dq", shape=(4, 4, 2), reference=JOINT.dQ_dq, mistakes=dq_mistakes,
        what="dQ/dq", parts=_slices("dQ"), **kwargs))


@check_of("universal_dQ_dq", "zero", "q = 0", 1)
def dq_zero(fn, rng):
    return _dq_cases(fn, [ZERO])


@check_of("universal_dQ_dq", "general", "general angles", 2)
def dq_general(fn, rng):
    return _dq_cases(fn, [_q_case(_angles(rng)) for _ in range(4)], zero_case=ZERO)


@check_of("universal_dQ_dq", "finite_differences",
          "against finite differences of Q, one coordinate at a time", 1)
def dq_finite_differences(fn, rng):
    q = _angles(rng)
    dQ = _index_hint(lambda: call(fn, q, name="universal_dQ_dq", shape=(4, 4, 2), label=f"q = {describe(q)}"))
    return finite_difference_verdict(
        dQ, numerical_derivative(JOINT.Q, q), COORDINATES,
        f"universal_dQ_dq(q = {describe(q)}): out[:, :, k] differs from the central difference of the "
        "library's Q")


# --- universal_dS_dq (Eq. 3.10, 3.30) ------------------------------------------------------------


def ds_mistakes(q):
    """The usual wrong dS/dq, with what went wrong."""
    dS = JOINT.dS_dq(q)
    R, _, ddR = _first_and_second(q)
    one_term = np.zeros((6, 2, 2))
    for j in range(2):
        for k in range(2):
            one_term[:3, j, k] = _unbrac(R.T @ ddR[j][k])
    writeup = dS.copy()
    writeup[1, 1, 1] = 1.0
    return [
        (SLICES_TRANSPOSED, lambda: np.swapaxes(dS, 1, 2)),
        ("it lacks a term of the product rule: column j of S unbrackets R^T dR/dq_j, so its derivative "
         "along q_k is (dR/dq_k)^T dR/dq_j + R^T d2R/(dq_j dq_k), unbracketed; the first term is missing.",
         lambda: one_term),
        ("it has the 1 that the writeup's Eq. (3.30) prints in column 2 of dS/dq_2: that column of S "
         "is the constant y axis (0, 1, 0, 0, 0, 0), so its derivative is zero (the 1 belongs to S "
         "itself).", lambda: writeup),
        ("the derivative of the first column along q_2 is put in the slice of q_1: out[:, j, k] is "
         "dS_j/dq_k, and S depends on q_2 only.", lambda: dS[..., ::-1]),
    ]


def _ds_cases(fn, cases, **kwargs):
    return _index_hint(lambda: judge_cases(
        fn, cases, name="universal_dS_dq", shape=(6, 2, 2), reference=JOINT.dS_dq, mistakes=ds_mistakes,
        what="dS/dq", parts=_slices("dS"), **kwargs))


@check_of("universal_dS_dq", "zero", "q = 0", 1)
def ds_zero(fn, rng):
    return _ds_cases(fn, [ZERO])


@check_of("universal_dS_dq", "general", "general angles", 2)
def ds_general(fn, rng):
    return _ds_cases(fn, [_q_case(_angles(rng)) for _ in range(4)], zero_case=ZERO)


@check_of("universal_dS_dq", "finite_differences",
          "against finite differences of S, one coordinate at a time", 1)
def ds_finite_differences(fn, rng):
    q = _angles(rng)
    dS = _index_hint(lambda: call(fn, q, name="universal_dS_dq", shape=(6, 2, 2), label=f"q = {describe(q)}"))
    return finite_difference_verdict(
        dS, numerical_derivative(JOINT.S, q), COORDINATES,
        f"universal_dS_dq(q = {describe(q)}): out[:, :, k] differs from the central difference of the "
        "library's S")


# --- universal_dSdot_dq (Eq. 3.30, 3.39) ---------------------------------------------------------


def dsdot_mistakes(q, qdot):
    """The usual wrong dSdot/dq, with what went wrong."""
    G = JOINT.dSdot_dq(q, qdot)
    second = G / qdot[1] if qdot[1] else G
    return [
        ("it is the second derivative without the rate: dSdot/dq_k = sum_l d2S/(dq_l dq_k) qdot_l, "
         "so multiply by qdot_2.", lambda: second),
        ("it uses qdot_1 where qdot_2 belongs: S depends on q_2 only, so dSdot/dq_2 = d2S/dq_2^2 qdot_2.",
         lambda: second * qdot[0]),
        ("it is dS/dq, not dSdot/dq: differentiate Sdot = dS/dq_2 qdot_2 along q at fixed qdot.",
         lambda: JOINT.dS_dq(q)),
        ("it is dS/dq times qdot_2: that is Sdot's derivative along qdot, not along q.",
         lambda: JOINT.dS_dq(q) * qdot[1]),
        (SLICES_TRANSPOSED.replace("of S", "of Sdot"), lambda: np.swapaxes(G, 1, 2)),
    ]


def _dsdot_label(q, qdot):
    return f"q = {describe(q)}, qdot = {describe(qdot)}"


def _dsdot_cases(fn, cases, **kwargs):
    return _index_hint(lambda: judge_cases(
        fn, cases, name="universal_dSdot_dq", shape=(6, 2, 2), reference=JOINT.dSdot_dq,
        mistakes=dsdot_mistakes, what="dSdot/dq", parts=_slices("dSdot"), **kwargs))


@check_of("universal_dSdot_dq", "at_rest", "a joint at rest (qdot = 0)", 1)
def dsdot_at_rest(fn, rng):
    q = _angles(rng)
    return _dsdot_cases(fn, [((q, np.zeros(2)), _dsdot_label(q, np.zeros(2)))])


@check_of("universal_dSdot_dq", "general", "general angles and rates", 2)
def dsdot_general(fn, rng):
    cases = []
    for _ in range(4):
        q, qdot = _angles(rng), rng.standard_normal(2)
        cases.append(((q, qdot), _dsdot_label(q, qdot)))
    qdot = cases[0][0][1]
    return _dsdot_cases(fn, cases, zero_case=((np.zeros(2), qdot), _dsdot_label(np.zeros(2), qdot)))


@check_of("universal_dSdot_dq", "finite_differences",
          "against finite differences of Sdot, one coordinate at a time", 1)
def dsdot_finite_differences(fn, rng):
    q, qdot = _angles(rng), rng.standard_normal(2)
    label = _dsdot_label(q, qdot)
    G = _index_hint(lambda: call(fn, q, qdot, name="universal_dSdot_dq", shape=(6, 2, 2), label=label))
    numeric = numerical_derivative(lambda x: JOINT.Sdot(x, qdot), q)
    return finite_difference_verdict(
        G, numeric, COORDINATES, f"universal_dSdot_dq({label}): out[:, :, k] differs from the central "
        "difference of the library's Sdot at fixed qdot")

