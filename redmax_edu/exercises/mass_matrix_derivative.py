"""Grader of the assignment "The derivative of the mass matrix" (§3.3, Eq. 3.54).

From ``M = J^T M_m J`` (Eq. 2.19, the body inertias ``M_m`` constant in body coordinates) the
product rule gives

    dM/dq_k = (dJ/dq_k)^T M_m J + J^T M_m dJ/dq_k,

two transposed terms, so every slice is symmetric. The students derive it and write
``mass_matrix_derivative(model, q)`` (nq, nq, nq) with ``[:, :, k] = dM/dq_k``, and the rate
``mass_matrix_rate(model, q, qdot)`` (nq, nq), ``Mdot = sum_k dM/dq_k qdot_k``, with the
library's Jacobian and its derivative (:func:`redmax_edu.jacobian.jacobian`,
:func:`~redmax_edu.jacobian.jacobian_dq`) and the bodies' masses and inertias, but not its
dynamics or their derivatives. The checks compare with
:func:`redmax_edu.derivatives.dynamics_derivatives` on the pendulum (whose ``M`` is
constant), random chains (with spherical joints), a branching tree and a free body, and
with central differences of the library's ``M``; they name the usual slips: one of the two
terms of the product rule left out (the slices are then not symmetric), a factor 2 in place
of the second term, the derivative index first, ``qdot`` contracted on the wrong index.

Examples
--------
>>> from redmax_edu import derivatives
>>> def mass_matrix_derivative(model, q):
...     return derivatives.dynamics_derivatives(model, q, 0 * q).dM_dq
>>> print(check("mass_matrix_derivative", mass_matrix_derivative).results[0].message)
mass_matrix_derivative calls derivatives.dynamics_derivatives, which this assignment does not let you
call (see its list at the top of the notebook): write it yourself.

Taught in book/03_differentiable/03_inertia_force_derivatives.
"""

import numpy as np
import scipy.linalg

from ..checks import numerical_derivative
from ..derivatives import dynamics_derivatives
from ..dynamics import mass_matrix
from ..jacobian import jacobian, jacobian_dq
from ..model import Body, Model
from .calls import call, describe
from .chains import describe_model, free_body, pendulum, random_chain, random_state
from .compare import asymmetry, finite_difference_verdict, judge_cases
from .core import Assignment, Verdict, entry_points

ASSIGNMENT = Assignment("05_mass_matrix_derivative", "The derivative of the mass matrix",
                        allowed=[jacobian, jacobian_dq, Model, Body])
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)

INDEX_LAST = "The derivative index goes last: out[:, :, k] is dM/dq_k (np.stack(..., axis=-1))."


def _body_inertias(model):
    """The block diagonal of the bodies' spatial inertias ``M_m`` (6n, 6n)."""
    return scipy.linalg.block_diag(*(body.spatial_inertia for body in model.bodies))


def _terms(model, q):
    """``(dJ/dq_k)^T M_m J`` for every k, shape (nq, nq, nq) (the first term; the second is its transpose)."""
    J, dJ = jacobian(model, q), jacobian_dq(model, q)
    return np.einsum("rik,rs,sj->ijk", dJ, _body_inertias(model), J)


def _models(rng, kind):
    if kind == "pendulum":
        return [pendulum()]
    if kind == "free":
        return [free_body(rng)]
    if kind == "tree":
        return [random_chain(rng, 5, branching=True)]
    return [random_chain(rng, 4) for _ in range(3)]  # the same joints: the same nq


# --- mass_matrix_derivative ------------------------------------------------------------------------


def derivative_mistakes(model, q):
    """The usual wrong dM/dq, with what went wrong."""
    first = _terms(model, q)
    return [
        ("it has only the term (dJ/dq_k)^T M_m J: the product rule on J^T M_m J gives two, the second "
         "its transpose J^T M_m dJ/dq_k; each slice dM/dq_k is symmetric.", lambda: first),
        ("it has only the term J^T M_m dJ/dq_k: the product rule gives (dJ/dq_k)^T M_m J as well.",
         lambda: np.swapaxes(first, 0, 1)),
        ("it is twice one term, 2 (dJ/dq_k)^T M_m J: the two terms are each other's transposes, not equal.",
         lambda: 2 * first),
        ("the derivative index is first: out[:, :, k] is dM/dq_k.", lambda: np.moveaxis(first + np.swapaxes(
            first, 0, 1), -1, 0)),
    ]


def _label(model, q):
    return f"{describe_model(model)}, q = {describe(q)}"


def _derivative_cases(fn, rng, kind, **kwargs):
    cases = []
    for model in _models(rng, kind):
        q, _ = random_state(rng, model)
        cases.append(((model, q), _label(model, q)))
    nq = cases[0][0][0].nq
    try:
        return judge_cases(fn, cases, name="mass_matrix_derivative", shape=(nq, nq, nq),
                           reference=lambda m, q: dynamics_derivatives(m, q, 0 * q).dM_dq,
                           mistakes=derivative_mistakes, what="dM/dq", **kwargs)
    except Verdict as verdict:
        if "returned an array of shape" in verdict.message and "Rows and columns" not in verdict.message:
            verdict.message = f"{verdict.message} {INDEX_LAST}"
            verdict.args = (verdict.message,)
        raise


@check_of("mass_matrix_derivative", "pendulum", "the pendulum (M constant, dM/dq = 0)", 1)
def derivative_pendulum(fn, rng):
    return _derivative_cases(fn, rng, "pendulum")


@check_of("mass_matrix_derivative", "chains", "random chains", 2)
def derivative_chains(fn, rng):
    return _derivative_cases(fn, rng, "chains")


@check_of("mass_matrix_derivative", "tree", "a branching tree", 1)
def derivative_tree(fn, rng):
    return _derivative_cases(fn, rng, "tree")


@check_of("mass_matrix_derivative", "free", "a free body (exponential coordinates)", 1)
def derivative_free(fn, rng):
    return _derivative_cases(fn, rng, "free")


@check_of("mass_matrix_derivative", "symmetric", "every slice dM/dq_k is symmetric", 1)
def derivative_symmetric(fn, rng):
    model = random_chain(rng, 3)
    q, _ = random_state(rng, model)
    label = _label(model, q)
    got = call(fn, model, q, name="mass_matrix_derivative", shape=(model.nq,) * 3, label=label)
    for k in range(model.nq):
        problem = asymmetry(got[:, :, k], f"dM/dq_{k + 1}")
        if problem:
            return Verdict(f"mass_matrix_derivative({label}): {problem} M is symmetric for every q, so is "
                           "each of its derivatives: the two terms of the product rule are transposes.")
    return None


@check_of("mass_matrix_derivative", "finite_differences",
          "against finite differences of M, one coordinate at a time", 1)
def derivative_finite_differences(fn, rng):
    model = random_chain(rng, 4)
    q, _ = random_state(rng, model)
    label = _label(model, q)
    got = call(fn, model, q, name="mass_matrix_derivative", shape=(model.nq,) * 3, label=label)
    numeric = numerical_derivative(lambda x: mass_matrix(model, x), q)
    names = [f"q_{k + 1}" for k in range(model.nq)]
    return finite_difference_verdict(got, numeric, names, f"mass_matrix_derivative({label}) differs from the "
                                     "central difference (M(q + eps e_k) - M(q - eps e_k)) / 2 eps")


# --- mass_matrix_rate ------------------------------------------------------------------------------


def rate_mistakes(model, q, qdot):
    """The usual wrong Mdot, with what went wrong."""
    first = _terms(model, q)
    right = first + np.swapaxes(first, 0, 1)
    return [
        ("it has only one term of the product rule, (dJ/dq qdot)^T M_m J = Jdot^T M_m J: "
         "Mdot = Jdot^T M_m J + J^T M_m Jdot.", lambda: first @ qdot),
        ("qdot is contracted with the first index: Mdot = sum_k dM/dq_k qdot_k, the derivative index.",
         lambda: np.einsum("ijk,i->jk", right, qdot)),
        ("it is twice one term, 2 Jdot^T M_m J: the two terms are each other's transposes.",
         lambda: 2 * first @ qdot),
    ]


def _rate_cases(fn, rng, kind, speed=1.0):
    cases = []
    for model in _models(rng, kind):
        q, qdot = random_state(rng, model, speed)
        cases.append(((model, q, qdot), f"{_label(model, q)}, qdot = {describe(qdot)}"))
    nq = cases[0][0][0].nq
    return judge_cases(fn, cases, name="mass_matrix_rate", shape=(nq, nq),
                       reference=lambda m, q, qdot: dynamics_derivatives(m, q, 0 * q).dM_dq @ qdot,
                       mistakes=rate_mistakes, what="Mdot")


@check_of("mass_matrix_rate", "rest", "at rest (qdot = 0)", 1)
def rate_rest(fn, rng):
    return _rate_cases(fn, rng, "chains", speed=0.0)


@check_of("mass_matrix_rate", "chains", "random chains and a branching tree", 2)
def rate_chains(fn, rng):
    verdict = _rate_cases(fn, rng, "chains")
    return verdict or _rate_cases(fn, rng, "tree")


@check_of("mass_matrix_rate", "finite_differences", "against finite differences of M along the motion", 1)
def rate_finite_differences(fn, rng):
    model = random_chain(rng, 4)
    q, qdot = random_state(rng, model)
    label = f"{_label(model, q)}, qdot = {describe(qdot)}"
    got = call(fn, model, q, qdot, name="mass_matrix_rate", shape=(model.nq,) * 2, label=label)
    numeric = numerical_derivative(lambda t: mass_matrix(model, q + t[0] * qdot), np.zeros(1))
    return finite_difference_verdict(got[..., None], numeric, ["the motion"], f"mass_matrix_rate({label}) "
                                     "differs from (M(q + eps qdot) - M(q - eps qdot)) / 2 eps")
