"""Grader of the assignment "The derivative of a chain's Jacobian" (§3.1, Eq. 3.5-3.14, Algorithm 11).

For a serial chain whose joints have one coordinate each and a constant ``S`` (hinges and
sliders), body i's Jacobian columns are ``J_i[:, j] = Ad(E_i_j) S_j`` for the joints j up to
i, and turning a joint k between j and i changes the frame ``E_i_j`` by the twist of joint k:
the derivative is a Lie bracket,

    dJ_i[:, j] / dq_k = ad(J_i[:, j]) J_i[:, k]     for j < k <= i, zero otherwise,

the special case of Algorithm 11 that the students derive and then write, from ``J`` alone:
``jacobian_derivative(J)`` (6n, n) -> (6n, n, n) with ``[:, j, k] = dJ[:, j]/dq_k`` (the
library's layout, derivative index last) and ``jacobian_rate(J, qdot)`` (6n, n), the time
derivative ``Jdot = sum_k dJ/dq_k qdot_k`` (Eq. 2.16). ``ad`` and ``brac`` are allowed. The
checks build chains of hinges and sliders (:class:`redmax_edu.model.Model`), compare with
:func:`redmax_edu.jacobian.jacobian_dq` and :func:`~redmax_edu.jacobian.jacobian_and_derivative`,
and with central differences of the library's ``J``; they name the usual slips: the bracket
the wrong way round, the joints before j instead of those after it, the joints beyond body i
counted, the derivative index first or the last two indices exchanged, ``qdot_j`` for
``qdot_k``.

Examples
--------
Zero is right for one body, for sliders only and along the first coordinate, and wrong elsewhere:

>>> report = check("jacobian_derivative", lambda J: np.zeros((*J.shape, J.shape[1])))
>>> [r.points for r in report.results]
[1.0, 0.0, 0.0, 1.0, 0.25]

Taught in book/03_differentiable/01_why_analytic.
"""

import numpy as np

from .. import lie
from ..checks import numerical_derivative
from ..jacobian import jacobian, jacobian_and_derivative, jacobian_dq
from .calls import call, describe
from .chains import describe_model, random_chain
from .compare import finite_difference_verdict, judge_cases
from .core import Assignment, Verdict, entry_points

ASSIGNMENT = Assignment("04_jacobian_derivative", "The derivative of a chain's Jacobian",
                        allowed=[lie.ad, lie.brac])
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)

INDEX_LAST = ("The derivative index goes last: out[:, j, k] is the derivative of column j along q_k "
              "(np.stack(..., axis=-1)).")


# --- inputs ---------------------------------------------------------------------------------------


def chain(rng, n, kinds=("revolute", "prismatic")):
    """A chain of ``n`` hinges and sliders, a state, and its label: ``(model, q, qdot, label)``."""
    model = random_chain(rng, n, kinds=kinds)
    q, qdot = rng.uniform(-1.5, 1.5, n), rng.standard_normal(n)
    return model, q, qdot, f"J of {describe_model(model)} at q = {describe(q)}"


def _brackets(J, where, own_frame=False):
    """``ad(J_i[:, j]) J_i[:, k]`` for the (i, j, k) that ``where(i, j, k)`` selects; (6n, n, n).

    ``own_frame``: joint k's twist taken from body k's block, ``J_k[:, k]``, instead of body i's.
    """
    n = J.shape[1]
    out = np.zeros((*J.shape, n))
    for i in range(J.shape[0] // 6):
        Ji = J[6 * i:6 * i + 6]
        for j in range(n):
            for k in range(n):
                if where(i, j, k):
                    twist = J[6 * k:6 * k + 6, k] if own_frame else Ji[:, k]
                    out[6 * i:6 * i + 6, j, k] = lie.ad(Ji[:, j]) @ twist
    return out


# --- jacobian_derivative ---------------------------------------------------------------------------


def derivative_mistakes(J):
    """The usual wrong dJ/dq of a chain, with what went wrong."""
    return [
        ("the bracket is the wrong way round: dJ_i[:, j]/dq_k = ad(J_i[:, j]) J_i[:, k], the column that "
         "moves first; ad(J_k) J_j is its opposite.", lambda: -_brackets(J, lambda i, j, k: j < k <= i)),
        ("it uses the joints before j (k < j): turning a joint nearer the root moves body i and joint j "
         "together, leaving their relative frame; only the joints k after j, up to i, change E_i_j.",
         lambda: _brackets(J, lambda i, j, k: k < j <= i)),
        ("off by a frame: joint k's twist is the column of body i's block, J_i[:, k] (in body i's frame), "
         "not J_k[:, k] (in body k's).", lambda: _brackets(J, lambda i, j, k: j < k <= i, own_frame=True)),
        ("the last two indices are exchanged: out[:, j, k] is the derivative of column j along q_k.",
         lambda: np.swapaxes(_brackets(J, lambda i, j, k: j < k <= i), 1, 2)),
    ]


def _derivative_cases(fn, rng, count, n, kinds=("revolute", "prismatic"), **kwargs):
    cases, refs = [], {}
    for _ in range(count):
        model, q, _, label = chain(rng, n, kinds)
        J = jacobian(model, q)
        refs[id(J)] = jacobian_dq(model, q)  # by J: the reference needs the model
        cases.append(((J,), label))
    return _judge_derivative(fn, cases, refs, **kwargs)


def _judge_derivative(fn, cases, refs, **kwargs):
    n = cases[0][0][0].shape[1]
    shape = (cases[0][0][0].shape[0], n, n)
    try:
        return judge_cases(fn, cases, name="jacobian_derivative", shape=shape,
                           reference=lambda J: refs[id(J)], mistakes=derivative_mistakes, what="dJ/dq",
                           **kwargs)
    except Verdict as verdict:  # the derivative index first: its hint
        if f"returned an array of shape ({n}, " in verdict.message:
            verdict.message = f"{verdict.message} {INDEX_LAST}"
            verdict.args = (verdict.message,)
        raise


@check_of("jacobian_derivative", "one_body", "one body (its J does not depend on q)", 1)
def derivative_one_body(fn, rng):
    return _derivative_cases(fn, rng, 2, 1)


@check_of("jacobian_derivative", "two_hinges", "two hinges", 1)
def derivative_two_hinges(fn, rng):
    return _derivative_cases(fn, rng, 2, 2, kinds=("revolute",))


@check_of("jacobian_derivative", "chains", "chains of hinges and sliders", 2)
def derivative_chains(fn, rng):
    return _derivative_cases(fn, rng, 3, 4)


@check_of("jacobian_derivative", "sliders", "sliders only (dJ/dq = 0)", 1)
def derivative_sliders(fn, rng):
    return _derivative_cases(fn, rng, 1, 3, kinds=("prismatic",))


@check_of("jacobian_derivative", "finite_differences",
          "against finite differences of J, one coordinate at a time", 1)
def derivative_finite_differences(fn, rng):
    model, q, _, label = chain(rng, 4, ("revolute",))
    J = jacobian(model, q)
    got = call(fn, J, name="jacobian_derivative", shape=(*J.shape, J.shape[1]), label=label)
    numeric = numerical_derivative(lambda x: jacobian(model, x), q)
    names = [f"q_{k + 1}" for k in range(len(q))]
    return finite_difference_verdict(got, numeric, names, f"jacobian_derivative({label}) differs from the "
                                     "central difference (J(q + eps e_k) - J(q - eps e_k)) / 2 eps")


# --- jacobian_rate ---------------------------------------------------------------------------------


def rate_mistakes(J, qdot):
    """The usual wrong Jdot of a chain, with what went wrong."""
    right = _brackets(J, lambda i, j, k: j < k <= i)
    return [
        ("the bracket is the wrong way round: Jdot_i[:, j] = ad(J_i[:, j]) sum_(k > j) J_i[:, k] qdot_k.",
         lambda: -right @ qdot),
        ("it contracts qdot with the column index j: Jdot = sum_k dJ/dq_k qdot_k, the derivative index.",
         lambda: np.einsum("rjk,j->rk", right, qdot)),
        ("it uses the joints before j (k < j): only the joints after j, up to body i, turn the column.",
         lambda: _brackets(J, lambda i, j, k: k < j <= i) @ qdot),
        ("it is dJ/dq with every rate 1 (the sum over k without qdot_k).", lambda: right.sum(axis=2)),
    ]


def _rate_cases(fn, rng, count, n, kinds=("revolute", "prismatic"), speed=1.0):
    cases, refs = [], {}
    for _ in range(count):
        model, q, qdot, label = chain(rng, n, kinds)
        qdot = speed * qdot
        J = jacobian(model, q)
        label = f"{label}, qdot = {describe(qdot)}"
        refs[id(qdot)] = jacobian_and_derivative(model, q, qdot)[1]
        cases.append(((J, qdot), label))
    return judge_cases(fn, cases, name="jacobian_rate", shape=cases[0][0][0].shape,
                       reference=lambda J, qdot: refs[id(qdot)], mistakes=rate_mistakes, what="Jdot")


@check_of("jacobian_rate", "rest", "at rest (qdot = 0)", 1)
def rate_rest(fn, rng):
    return _rate_cases(fn, rng, 1, 3, speed=0.0)


@check_of("jacobian_rate", "two_hinges", "two hinges", 1)
def rate_two_hinges(fn, rng):
    return _rate_cases(fn, rng, 2, 2, kinds=("revolute",))


@check_of("jacobian_rate", "chains", "chains of hinges and sliders", 2)
def rate_chains(fn, rng):
    return _rate_cases(fn, rng, 3, 4)


@check_of("jacobian_rate", "finite_differences", "against finite differences of J along the motion", 1)
def rate_finite_differences(fn, rng):
    model, q, qdot, label = chain(rng, 4, ("revolute",))
    J = jacobian(model, q)
    label = f"{label}, qdot = {describe(qdot)}"
    got = call(fn, J, qdot, name="jacobian_rate", shape=J.shape, label=label)
    numeric = numerical_derivative(lambda t: jacobian(model, q + t[0] * qdot), np.zeros(1))[..., 0]
    return finite_difference_verdict(got[..., None], numeric[..., None], ["the motion"],
                                     f"jacobian_rate({label}) differs from (J(q + eps qdot) - "
                                     "J(q - eps qdot)) / 2 eps")
