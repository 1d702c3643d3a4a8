"""Grader of the assignment "One BDF1 Newton step in positions" (§3.4, Eq. 3.60-3.65).

The students write, for the first BDF1 step of a model from ``(q0, qdot0)`` with step ``h``
(``qdot1 = (q1 - q0) / h``), with the library's :func:`redmax_edu.derivatives.dynamics_derivatives`
(``M``, ``dM/dq``, ``f``, ``K``, ``D``) but not its implicit integrators: the residual
``bdf1_residual(model, q0, qdot0, q1, h)`` (nq,),
``g = M(q1) (q1 - q0 - h qdot0) - h^2 f(q1, qdot1)`` (Eq. 3.64); the Newton matrix
``bdf1_newton_matrix(model, q0, qdot0, q1, h)`` (nq, nq),
``H = dg/dq1 = M + dM/dq (q1 - q0 - h qdot0) - h D - h^2 K`` (Eq. 3.65); and one Newton step
``bdf1_newton_step(model, q0, qdot0, q1, h)``, the new iterate ``q1 - H^-1 g`` (nq,). The checks
compare with :func:`redmax_edu.implicit.step_residual` on the pendulum, random chains (with
spherical joints) and a branching tree, check that ``g`` vanishes at the library's BDF1
solution, ``H`` against central differences of the library's ``g`` per coordinate, and that
repeated steps converge to that solution. They name the usual slips: the force term's sign,
the ``M^-1 f`` form of the equation, ``f`` at the old velocity, ``M`` at the old position, the
``h qdot0`` term left out, ``H`` without the ``dM/dq`` term (or with it contracted on the
derivative index), ``h^2 D`` for ``h D`` (the ``1/h`` of ``dqdot1/dq1`` forgotten), ``h K`` for
``h^2 K``, the step ``+H^-1 g``, the increment in place of the new iterate.

Examples
--------
>>> from redmax_edu import implicit
>>> def bdf1_residual(model, q0, qdot0, q1, h):
...     stencil = implicit.scheme_stencils("bdf1", h, 1)[0]
...     return implicit.step_residual(model, stencil, q1, {0: q0}, v=qdot0).g
>>> print(check("bdf1_residual", bdf1_residual).results[0].message)
bdf1_residual calls implicit.scheme_stencils, which this assignment does not let you call (see its
list at the top of the notebook): write it yourself.

Taught in book/03_differentiable/04_implicit_integrators.
"""

import numpy as np

from .. import implicit
from ..adjoint import simulate_run
from ..checks import numerical_derivative
from ..derivatives import DynamicsDerivatives, dynamics_derivatives
from ..model import Body, Model
from .calls import call, describe
from .chains import describe_model, pendulum, random_chain
from .compare import finite_difference_verdict, judge_cases
from .core import Assignment, Verdict, entry_points

ASSIGNMENT = Assignment(
    "02_bdf1_newton_step", "One BDF1 Newton step in positions",
    allowed=[dynamics_derivatives, DynamicsDerivatives, Model, Body],
)
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)


# --- the reference, the terms and the inputs -----------------------------------------------------


def residual(model, q0, qdot0, q1, h):
    """The library's :class:`~redmax_edu.implicit.StepResidual` of the first BDF1 step at ``q1``."""
    stencil = implicit.scheme_stencils("bdf1", h, 1)[0]
    return implicit.step_residual(model, stencil, q1, {0: q0}, v=qdot0)


def _terms(model, q0, qdot0, q1, h):
    """``x = q1 - q0 - h qdot0``, ``qdot1`` and the dynamics derivatives at ``(q1, qdot1)``."""
    qdot1 = (q1 - q0) / h
    return q1 - q0 - h * qdot0, qdot1, dynamics_derivatives(model, q1, qdot1)


def solution(model, q0, qdot0, h):
    """The library's BDF1 position after one step (Newton converged)."""
    return simulate_run(model, q0, qdot0, h, 1, scheme="bdf1", reparameterize=False).q[-1]


def _state(rng, model, speed=1.0):
    """``(model, q0, qdot0, q1, h)``: a state, a step, and a guess ``q1`` near the predictor."""
    h = float(rng.choice([0.01, 0.02, 0.05]))
    q0, qdot0 = rng.uniform(-1.2, 1.2, model.nq), speed * rng.standard_normal(model.nq)
    q1 = q0 + h * qdot0 + 0.05 * rng.standard_normal(model.nq)
    return model, q0, qdot0, q1, h


def _label(model, q0, qdot0, q1, h):
    return (f"{describe_model(model)}, q0 = {describe(q0)}, qdot0 = {describe(qdot0)}, q1 = {describe(q1)}, "
            f"h = {h:g}")


def _case(args):
    return args, _label(*args)


def _pendulum_cases():
    model = pendulum()
    return [_case((model, np.array([0.5]), np.zeros(1), np.array([0.5]), 0.01)),
            _case((model, np.array([0.3]), np.array([2.0]), np.array([0.33]), 0.02))]


def _chain_cases(rng, count=3, **kwargs):
    model = random_chain(rng, 4, **kwargs)
    return [_case(_state(rng, model)) for _ in range(count)]


def _at_rest(args):
    """The same model at rest, ``q1 = q0``: where the velocity terms vanish."""
    model, q0, qdot0, q1, h = args
    rest = (model, q0, np.zeros_like(qdot0), q0.copy(), h)
    return rest, _label(*rest) + " (at rest)"


def _solve(A, b):
    """``A^-1 b``, or NaN (which matches nothing) when a wrong ``A`` is singular."""
    try:
        return np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        return np.full(np.shape(b), np.nan)


# --- bdf1_residual (Eq. 3.64) ---------------------------------------------------------------------


def residual_mistakes(model, q0, qdot0, q1, h):
    """The usual wrong residuals, with what went wrong."""
    x, qdot1, d = _terms(model, q0, qdot0, q1, h)
    g = d.M @ x - h * h * d.f
    return [
        ("the force term has the wrong sign: g = M (q1 - q0 - h qdot0) - h^2 f (Eq. 3.64), from "
         "M (qdot1 - qdot0) = h f.", lambda: d.M @ x + h * h * d.f),
        ("it is M^-1 g, the equation divided by M: g = M (q1 - q0 - h qdot0) - h^2 f is the form of "
         "Eq. (3.64), the one whose Jacobian H is Eq. (3.65).", lambda: _solve(d.M, g)),
        ("f is evaluated at the old velocity qdot0: BDF1 is implicit, f(q1, qdot1) with "
         "qdot1 = (q1 - q0) / h.", lambda: d.M @ x - h * h * dynamics_derivatives(model, q1, qdot0).f),
        ("M is evaluated at the old position q0: BDF1 is implicit, M(q1).",
         lambda: dynamics_derivatives(model, q0, qdot1).M @ x - h * h * d.f),
        ("the term h qdot0 is missing: q1 = q0 + h qdot1 and M (qdot1 - qdot0) = h f give "
         "M (q1 - q0 - h qdot0) = h^2 f.", lambda: d.M @ (q1 - q0) - h * h * d.f),
        ("the force is multiplied by h, not h^2: multiply M (qdot1 - qdot0) = h f by h.",
         lambda: d.M @ x - h * d.f),
    ]


def _residual_cases(fn, cases, **kwargs):
    n = cases[0][0][0].nq
    return judge_cases(fn, cases, name="bdf1_residual", shape=(n,), reference=lambda *a: residual(*a).g,
                       mistakes=residual_mistakes, what="the residual g", **kwargs)


@check_of("bdf1_residual", "pendulum", "the pendulum", 1)
def residual_pendulum(fn, rng):
    return _residual_cases(fn, _pendulum_cases(),
                           hint="From rest at q1 = q0 = 0.5, g = -h^2 f = h^2 m g L sin q = 9.4e-4.")


@check_of("bdf1_residual", "chains", "random chains", 2)
def residual_chains(fn, rng):
    cases = _chain_cases(rng)
    return _residual_cases(fn, cases, zero_case=_at_rest(cases[0][0]))


@check_of("bdf1_residual", "tree", "a branching tree", 1)
def residual_tree(fn, rng):
    return _residual_cases(fn, [_case(_state(rng, random_chain(rng, 5, branching=True)))])


@check_of("bdf1_residual", "solution", "zero at the library's BDF1 solution", 1)
def residual_solution(fn, rng):
    model, q0, qdot0, _, h = _state(rng, random_chain(rng, 4))
    q1 = solution(model, q0, qdot0, h)
    label = _label(model, q0, qdot0, q1, h) + " (the BDF1 solution)"
    g = call(fn, model, q0, qdot0, q1, h, name="bdf1_residual", shape=(model.nq,), label=label)
    scale = h * float(np.max(np.diag(residual(model, q0, qdot0, q1, h).M)))
    if np.max(np.abs(g)) <= 1e-7 * scale:
        return None
    return Verdict(f"bdf1_residual({label}) = {describe(g)} is not zero: q1 is the position BDF1 steps "
                   "to (Newton converged), so g(q1) must vanish there.")


# --- bdf1_newton_matrix (Eq. 3.65) ----------------------------------------------------------------


def matrix_mistakes(model, q0, qdot0, q1, h):
    """The usual wrong Newton matrices, with what went wrong."""
    x, _, d = _terms(model, q0, qdot0, q1, h)
    dM = np.einsum("ijk,j->ik", d.dM_dq, x)
    H = d.M + dM - h * d.D - h * h * d.K
    return [
        ("the term dM/dq (q1 - q0 - h qdot0) is missing: M depends on q1 too (Eq. 3.65).",
         lambda: H - dM),
        ("the dM/dq term contracts x = q1 - q0 - h qdot0 with the derivative index: column k of that "
         "term is dM/dq_k x, i.e. np.einsum('ijk,j->ik', dM_dq, x).",
         lambda: H - dM + np.einsum("ijk,k->ij", d.dM_dq, x)),
        ("it has h^2 D where h D belongs: f depends on q1 through qdot1 = (q1 - q0) / h too, and "
         "dqdot1/dq1 = 1/h, so h^2 D (1/h) = h D.", lambda: H + h * d.D - h * h * d.D),
        ("it has h K where h^2 K belongs: the force enters g as h^2 f.",
         lambda: H + h * h * d.K - h * d.K),
        ("the stiffness term -h^2 K is missing.", lambda: H + h * h * d.K),
        ("the damping term -h D is missing: f depends on q1 through qdot1 = (q1 - q0) / h too.",
         lambda: H + h * d.D),
        ("the force terms have the wrong sign: H = M + dM/dq x - h D - h^2 K.",
         lambda: H + 2 * h * d.D + 2 * h * h * d.K),
    ]


def _matrix_cases(fn, cases, **kwargs):
    n = cases[0][0][0].nq
    return judge_cases(fn, cases, name="bdf1_newton_matrix", shape=(n, n),
                       reference=lambda *a: residual(*a).H, mistakes=matrix_mistakes, what="H", **kwargs)


@check_of("bdf1_newton_matrix", "pendulum", "the pendulum", 1)
def matrix_pendulum(fn, rng):
    return _matrix_cases(fn, _pendulum_cases())


@check_of("bdf1_newton_matrix", "chains", "random chains", 2)
def matrix_chains(fn, rng):
    cases = _chain_cases(rng)
    return _matrix_cases(fn, cases, zero_case=_at_rest(cases[0][0]))


@check_of("bdf1_newton_matrix", "tree", "a branching tree", 1)
def matrix_tree(fn, rng):
    return _matrix_cases(fn, [_case(_state(rng, random_chain(rng, 5, branching=True)))])


@check_of("bdf1_newton_matrix", "finite_differences",
          "against finite differences of g, one coordinate at a time", 1)
def matrix_finite_differences(fn, rng):
    model, q0, qdot0, q1, h = _state(rng, random_chain(rng, 3))
    label = _label(model, q0, qdot0, q1, h)
    H = call(fn, model, q0, qdot0, q1, h, name="bdf1_newton_matrix", shape=(model.nq, model.nq), label=label)
    numeric = numerical_derivative(lambda x: residual(model, q0, qdot0, x, h).g, q1)
    names = [f"q1[{k}]" for k in range(model.nq)]
    return finite_difference_verdict(
        H, numeric, names, f"bdf1_newton_matrix({label}): column k of H differs from the central "
        "difference of the library's g in q1[k]")


# --- bdf1_newton_step -----------------------------------------------------------------------------


def _clause(message):
    """A sentence as a clause inside another: no capital, no full stop."""
    return message[:1].lower() + message[1:].rstrip(".")


def step_mistakes(model, q0, qdot0, q1, h):
    """The usual wrong Newton steps, with what went wrong."""
    r = residual(model, q0, qdot0, q1, h)
    dq = _solve(r.H, r.g)
    found = [
        ("it steps the wrong way: the Newton step is q1 - H^-1 g (solve H dq = -g).", lambda: q1 + dq),
        ("it returns the increment -H^-1 g, not the new iterate q1 - H^-1 g.", lambda: -dq),
        ("it solves with the transpose of H: the step is -H^-1 g, H = dg/dq1 (rows: the entries of g).",
         lambda: q1 - _solve(r.H.T, r.g)),
        ("it solves with M in place of H: the Newton matrix is H = dg/dq1 (Eq. 3.65).",
         lambda: q1 - _solve(r.M, r.g)),
        ("it divides g by the diagonal of H entry by entry: solve the linear system H dq = -g "
         "(np.linalg.solve).", lambda: q1 - r.g / np.diag(r.H)),
    ]
    for message, wrong_H in matrix_mistakes(model, q0, qdot0, q1, h):
        found.append((f"it steps with a wrong H ({_clause(message)}); the checks of bdf1_newton_matrix say "
                      "more.", lambda wrong_H=wrong_H: q1 - _solve(wrong_H(), r.g)))
    for message, wrong_g in residual_mistakes(model, q0, qdot0, q1, h):
        found.append((f"it steps with a wrong g ({_clause(message)}); the checks of bdf1_residual say more.",
                      lambda wrong_g=wrong_g: q1 - _solve(r.H, wrong_g())))
    return found


def _step_cases(fn, cases, **kwargs):
    n = cases[0][0][0].nq
    return judge_cases(fn, cases, name="bdf1_newton_step", shape=(n,),
                       reference=lambda *a: a[3] - np.linalg.solve(residual(*a).H, residual(*a).g),
                       mistakes=step_mistakes, what="the new iterate", **kwargs)


@check_of("bdf1_newton_step", "pendulum", "the pendulum", 1)
def step_pendulum(fn, rng):
    return _step_cases(fn, _pendulum_cases())


@check_of("bdf1_newton_step", "chains", "random chains", 2)
def step_chains(fn, rng):
    return _step_cases(fn, _chain_cases(rng))


@check_of("bdf1_newton_step", "converges", "repeated steps converge to the BDF1 solution", 1)
def step_converges(fn, rng):
    model, q0, qdot0, _, h = _state(rng, random_chain(rng, 4))
    target = solution(model, q0, qdot0, h)
    q = q0 + h * qdot0
    errors = []
    for i in range(6):
        label = (f"{describe_model(model)}, q0 = {describe(q0)}, qdot0 = {describe(qdot0)}, h = {h:g}, "
                 f"iterate {i} from the predictor q0 + h qdot0")
        q = call(fn, model, q0, qdot0, q, h, name="bdf1_newton_step", shape=(model.nq,), label=label)
        errors.append(float(np.max(np.abs(q - target))))
    if errors[-1] <= 1e-9:
        return None
    return Verdict(f"six steps from the predictor q0 + h qdot0 ({describe_model(model)}, h = {h:g}) end "
                   f"{errors[-1]:.2g} from the BDF1 solution (errors per step "
                   f"{describe(np.array(errors), 2)}); Newton's method converges in a few steps from there.")
