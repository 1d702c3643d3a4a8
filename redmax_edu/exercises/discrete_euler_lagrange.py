"""Grader of the assignment "The discrete Euler-Lagrange equations" (chapter 5).

The mathematics is that of the appendix of Fan, Schultz and Murphey (WAFR 2018).

A variational integrator replaces the action over a step by a quadrature. With the
trapezoidal rule and straight lines between step points (the library's ``vi2``), for steps
``q0 -> q1`` of length ``h`` and ``v = (q1 - q0) / h``,

    L_d(q0, q1) = h/2 (L(q0, v) + L(q1, v)),       L(q, v) = 1/2 v^T M(q) v - V(q),
    D_0 L_d = -1/2 (M(q0) + M(q1)) v + h/2 dL/dq(q0, v),
    D_1 L_d =  1/2 (M(q0) + M(q1)) v + h/2 dL/dq(q1, v),
    dL/dq(q, v) = 1/2 v^T dM/dq v - dV/dq,

and the discrete Euler-Lagrange equations ask, at every inner point q of three consecutive
ones, ``D_1 L_d(q_prev, q) + D_0 L_d(q, q_next) = 0``; ``p = D_1 L_d(q_prev, q)`` is the
discrete momentum, conserved along a coordinate the Lagrangian does not depend on (the
discrete Noether theorem). The students write ``discrete_lagrangian(model, q0, q1, h)``
(a number), ``discrete_momentum(model, q0, q1, h)`` (nq,) ``= D_1 L_d(q0, q1)`` and
``del_residual(model, q_prev, q, q_next, h)`` (nq,), with the library's mass matrix, its
derivative (:func:`redmax_edu.derivatives.dynamics_derivatives`), the joint forces at rest
(:func:`redmax_edu.dynamics.reduced_forces` at ``qdot = 0``: gravity, ``-dV/dq``) and
forward kinematics, but not its variational integrators. The checks use chains of hinges
and sliders with gravity (and without, where the kinetic part or a conserved momentum
shows), compare with :func:`redmax_edu.variational.del_residual`, check that the residual
vanishes along the library's ``vi2`` run, that it is the derivative of the library's
discrete Lagrangian by central differences, and that the momentum along a slider is kept
without gravity; they name the usual slips: ``h`` for ``h/2``, ``T + V`` for ``T - V``, the
midpoint rule, the continuous momentum ``M(q1) v``, the force term left out or with its sign
flipped, ``D_0`` and ``D_1`` exchanged.

Examples
--------
>>> from redmax_edu import variational
>>> def discrete_momentum(model, q0, q1, h):
...     return variational.del_residual(model, q0, 0 * q0, [q1], h).p_next
>>> print(check("discrete_momentum", discrete_momentum).results[0].message)
discrete_momentum calls variational.residual.del_residual, which this assignment does not let you call (see
its list at the top of the notebook): write it yourself.

Taught in book/05_variational/01_what_is_preserved and 02_newton_direction.
"""

import numpy as np

from .. import variational
from ..checks import numerical_derivative
from ..derivatives import DynamicsDerivatives, dynamics_derivatives
from ..dynamics import mass_matrix, reduced_forces
from ..integrators import simulate
from ..joints import Prismatic
from ..kinematics import Kinematics, forward_kinematics
from ..lie import random_transform
from ..model import Body, Model
from .calls import call, describe
from .chains import describe_model, random_chain
from .compare import finite_difference_verdict, judge_cases
from .core import Assignment, Verdict, entry_points

ASSIGNMENT = Assignment(
    "01_discrete_euler_lagrange", "The discrete Euler-Lagrange equations",
    allowed=[mass_matrix, reduced_forces, dynamics_derivatives, DynamicsDerivatives, forward_kinematics,
             Kinematics, Model, Body],
)
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)

KINDS = ("revolute", "prismatic")


# --- the reference, from the library ---------------------------------------------------------------


def potential(model, q):
    """``V(q)``: the library's energy at rest (``p = 0``)."""
    return variational.energy(model, q, np.zeros(model.nq))


def lagrangian(model, q, v):
    return 0.5 * v @ mass_matrix(model, q) @ v - potential(model, q)


def reference_lagrangian(model, q0, q1, h):
    v = (q1 - q0) / h
    return np.array(h / 2 * (lagrangian(model, q0, v) + lagrangian(model, q1, v)))


def reference_momentum(model, q0, q1, h):
    """``D_1 L_d(q0, q1)``: the next momentum of the library's DEL step (it does not depend on ``p0``)."""
    return variational.del_residual(model, q0, np.zeros(model.nq), [q1], h).p_next


def reference_residual(model, q_prev, q, q_next, h):
    return variational.del_residual(model, q, reference_momentum(model, q_prev, q, h), [q_next], h).r[0]


def _force_term(model, q, v):
    """``dL/dq(q, v) = 1/2 v^T dM/dq v - dV/dq``."""
    dM = dynamics_derivatives(model, q, np.zeros(model.nq)).dM_dq
    return 0.5 * np.einsum("i,ijk,j->k", v, dM, v) + reduced_forces(model, q, np.zeros(model.nq))


def _ends(model, q0, q1, h):
    """``(D_0 L_d, D_1 L_d)`` as the formulas of the module docstring give them, with their two parts."""
    v = (q1 - q0) / h
    mean = 0.5 * (mass_matrix(model, q0) + mass_matrix(model, q1)) @ v
    return mean, h / 2 * _force_term(model, q0, v), h / 2 * _force_term(model, q1, v)


# --- inputs -------------------------------------------------------------------------------------------


def chain(rng, n=3, gravity=(0.0, 0.0, -9.81)):
    return random_chain(rng, n, gravity=gravity, kinds=KINDS)


def slider_chain(rng, n=3):
    """A chain on a slider, without gravity: nothing depends on the slider's coordinate."""
    model = random_chain(rng, n, gravity=(0.0, 0.0, 0.0), kinds=("revolute",))
    first = model.bodies[0]
    root = Body(first.name, -1, Prismatic(rng.standard_normal(3)), random_transform(rng, 0.5),
                first.T_joint_body, first.mass, first.inertia)
    return Model([root, *model.bodies[1:]], gravity=(0.0, 0.0, 0.0))


def step(rng, model, h=None, size=0.05):
    """``(q0, q1, h)``: a state and the next one, a step of ``h`` apart."""
    h = float(rng.choice([0.01, 0.02, 0.05])) if h is None else h
    q0 = rng.uniform(-1.2, 1.2, model.nq)
    return q0, q0 + size * rng.standard_normal(model.nq), h


def _label(model, *points, h):
    names = ("q0", "q1") if len(points) == 2 else ("q_prev", "q", "q_next")
    shown = ", ".join(f"{name} = {describe(p)}" for name, p in zip(names, points, strict=True))
    return f"{describe_model(model)}, {shown}, h = {h:g}"


def run(model, rng, steps=4, h=0.01):
    """The library's ``vi2`` run of ``model``: its step-boundary positions (steps + 1, nq)."""
    q0, qdot0 = rng.uniform(-1.0, 1.0, model.nq), rng.standard_normal(model.nq)
    traj = simulate(model, q0, qdot0, (0.0, steps * h), method="vi2", h=h)
    return traj.variational.q


# --- discrete_lagrangian ------------------------------------------------------------------------------


def lagrangian_mistakes(model, q0, q1, h):
    """The usual wrong discrete Lagrangians, with what went wrong."""
    v = (q1 - q0) / h
    T = [0.5 * v @ mass_matrix(model, q) @ v for q in (q0, q1)]
    V = [potential(model, q) for q in (q0, q1)]
    return [
        ("it is h (L(q0, v) + L(q1, v)): the trapezoidal rule weighs each end by h/2.",
         lambda: np.array(h * (T[0] + T[1] - V[0] - V[1]))),
        ("it uses T + V: the Lagrangian is L = T - V, kinetic minus potential energy.",
         lambda: np.array(h / 2 * (T[0] + T[1] + V[0] + V[1]))),
        ("it is the midpoint rule, h L((q0 + q1)/2, v): the library's vi2 (and this assignment) use the "
         "trapezoidal rule, h/2 (L(q0, v) + L(q1, v)).",
         lambda: np.array(h * lagrangian(model, (q0 + q1) / 2, v))),
        ("its kinetic energy uses M(q0) at both ends: each end has its own M(q).",
         lambda: np.array(h / 2 * (2 * T[0] - V[0] - V[1]))),
    ]


def _lagrangian_cases(fn, cases):
    return judge_cases(fn, cases, name="discrete_lagrangian", shape=(), reference=reference_lagrangian,
                       mistakes=lagrangian_mistakes, what="L_d")


@check_of("discrete_lagrangian", "rest", "at rest (q1 = q0 and L_d = -h V(q0))", 1)
def lagrangian_rest(fn, rng):
    model = chain(rng)
    q0, _, h = step(rng, model)
    return _lagrangian_cases(fn, [((model, q0, q0.copy(), h), _label(model, q0, q0, h=h))])


@check_of("discrete_lagrangian", "kinetic", "without gravity (the kinetic part alone)", 1)
def lagrangian_kinetic(fn, rng):
    cases = []
    for _ in range(2):
        model = chain(rng, gravity=(0.0, 0.0, 0.0))
        q0, q1, h = step(rng, model)
        cases.append(((model, q0, q1, h), _label(model, q0, q1, h=h)))
    return _lagrangian_cases(fn, cases)


@check_of("discrete_lagrangian", "chains", "chains of hinges and sliders with gravity", 2)
def lagrangian_chains(fn, rng):
    cases = []
    for _ in range(3):
        model = chain(rng)
        q0, q1, h = step(rng, model)
        cases.append(((model, q0, q1, h), _label(model, q0, q1, h=h)))
    return _lagrangian_cases(fn, cases)


# --- discrete_momentum --------------------------------------------------------------------------------


def momentum_mistakes(model, q0, q1, h):
    """The usual wrong discrete momenta, with what went wrong."""
    v = (q1 - q0) / h
    mean, force0, force1 = _ends(model, q0, q1, h)
    return [
        ("it is the continuous momentum M(q1) v: the discrete one is D_1 L_d = 1/2 (M(q0) + M(q1)) v "
         "+ h/2 dL/dq(q1, v).", lambda: mass_matrix(model, q1) @ v),
        ("the force term h/2 dL/dq(q1, v) is missing.", lambda: mean),
        ("the force term has the wrong sign: + h/2 dL/dq(q1, v), with dL/dq = 1/2 v^T dM/dq v - dV/dq.",
         lambda: mean - force1),
        ("it is -D_0 L_d (the momentum at the start of the step): the end of the step is D_1 L_d.",
         lambda: mean - force0),
    ]


def _momentum_cases(fn, cases):
    nq = cases[0][0][0].nq
    return judge_cases(fn, cases, name="discrete_momentum", shape=(nq,), reference=reference_momentum,
                       mistakes=momentum_mistakes, what="the discrete momentum")


@check_of("discrete_momentum", "slider", "a slider (p = m (q1 - q0) / h)", 1)
def momentum_slider(fn, rng):
    model = Model([Body("slider", -1, Prismatic([1.0, 0.0, 0.0]), np.eye(4), np.eye(4), 2.0, np.eye(3))],
                  gravity=(0.0, 0.0, 0.0))
    q0, q1, h = step(rng, model)
    return _momentum_cases(fn, [((model, q0, q1, h), "a 2 kg slider along x without gravity, "
                                 f"q0 = {describe(q0)}, q1 = {describe(q1)}, h = {h:g}")])


@check_of("discrete_momentum", "chains", "chains of hinges and sliders with gravity", 2)
def momentum_chains(fn, rng):
    cases = []
    for _ in range(3):
        model = chain(rng)
        q0, q1, h = step(rng, model)
        cases.append(((model, q0, q1, h), _label(model, q0, q1, h=h)))
    return _momentum_cases(fn, cases)


@check_of("discrete_momentum", "noether", "kept along a free slider (the discrete Noether theorem)", 1)
def momentum_noether(fn, rng):
    model = slider_chain(rng)
    qs, h = run(model, rng), 0.01
    label = f"{describe_model(model)} on a slider, along the library's vi2 run (h = {h:g})"
    first = []
    for k in range(len(qs) - 1):
        p = call(fn, model, qs[k], qs[k + 1], h, name="discrete_momentum", shape=(model.nq,),
                 label=f"{label}, step {k}")
        first.append(p[0])
    if np.ptp(first) <= 1e-9 * max(1.0, np.max(np.abs(first))):
        return None
    return Verdict(f"discrete_momentum({label}): its slider component changes from step to step "
                   f"({', '.join(f'{x:.6g}' for x in first)}); nothing in the Lagrangian depends on the "
                   "slider's position, so the discrete momentum along it is kept exactly (the discrete "
                   "Noether theorem), step after step.")


# --- del_residual -----------------------------------------------------------------------------------


def residual_mistakes(model, q_prev, q, q_next, h):
    """The usual wrong DEL residuals, with what went wrong."""
    mean_a, _, force_a1 = _ends(model, q_prev, q, h)
    mean_b, force_b0, _ = _ends(model, q, q_next, h)
    right = mean_a + force_a1 - mean_b + force_b0
    v_a, v_b = (q - q_prev) / h, (q_next - q) / h
    gravity = reduced_forces(model, q, np.zeros(model.nq))
    return [
        ("it has the wrong sign overall: D_1 L_d(q_prev, q) + D_0 L_d(q, q_next).", lambda: -right),
        ("D_0 and D_1 are exchanged: the inner point is the end of the first step (D_1 L_d(q_prev, q)) "
         "and the start of the second (D_0 L_d(q, q_next)).",
         lambda: -(mean_a - _ends(model, q_prev, q, h)[1]) + (mean_b + _ends(model, q, q_next, h)[2])),
        ("the force terms h/2 dL/dq are missing.", lambda: mean_a - mean_b),
        ("the velocity part of dL/dq, 1/2 v^T dM/dq v, is missing: M changes with q.",
         lambda: mean_a - mean_b + h * gravity),
        ("it uses M(q) alone in both steps: each step averages the M of its two ends, "
         "1/2 (M(q_prev) + M(q)) and 1/2 (M(q) + M(q_next)).",
         lambda: mass_matrix(model, q) @ (v_a - v_b) + force_a1 + force_b0),
    ]


def _residual_cases(fn, cases):
    nq = cases[0][0][0].nq
    return judge_cases(fn, cases, name="del_residual", shape=(nq,), reference=reference_residual,
                       mistakes=residual_mistakes, what="the DEL residual")


@check_of("del_residual", "run", "zero along the library's vi2 run", 2)
def residual_run(fn, rng):
    cases = []
    for _ in range(2):
        model = chain(rng)
        qs = run(model, rng)
        cases.append(((model, qs[1], qs[2], qs[3], 0.01), _label(model, qs[1], qs[2], qs[3], h=0.01)
                      + " (three steps of the library's vi2 run)"))
    return _residual_cases(fn, cases)


@check_of("del_residual", "chains", "chains, away from a solution", 1)
def residual_chains(fn, rng):
    cases = []
    for _ in range(2):
        model = chain(rng)
        q_prev, q, h = step(rng, model)
        q_next = q + 0.05 * rng.standard_normal(model.nq)
        cases.append(((model, q_prev, q, q_next, h), _label(model, q_prev, q, q_next, h=h)))
    return _residual_cases(fn, cases)


@check_of("del_residual", "finite_differences",
          "the derivative of the discrete action, by central differences in q", 1)
def residual_finite_differences(fn, rng):
    model = chain(rng)
    q_prev, q, h = step(rng, model)
    q_next = q + 0.05 * rng.standard_normal(model.nq)
    label = _label(model, q_prev, q, q_next, h=h)
    got = call(fn, model, q_prev, q, q_next, h, name="del_residual", shape=(model.nq,), label=label)

    def action(x):
        return reference_lagrangian(model, q_prev, x, h) + reference_lagrangian(model, x, q_next, h)

    numeric = numerical_derivative(action, q)
    names = [f"q_{k + 1}" for k in range(model.nq)]
    return finite_difference_verdict(got[None, :], numeric[None, :], names, f"del_residual({label}) differs "
                                     "from the central difference of L_d(q_prev, q) + L_d(q, q_next) in q",
                                     tol=1e-6)
