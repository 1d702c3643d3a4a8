"""Grader of the assignment "The Lagrangian of a two-link arm" (companion chapter, Liu and Jain).

The students write, for the planar two-link arm of :func:`redmax_edu.lagrange.planar_two_link`
(parameters ``arm = {"m1", "m2", "l1", "r1", "r2", "I1", "I2"}``: masses, the first link's
length, the centres of mass at ``r1``, ``r2`` from their hinges, inertias about the centres of
mass), its mass matrix ``mass_matrix(q, arm)`` and its Coriolis matrix
``coriolis_matrix(q, qdot, arm)`` in the Christoffel form, by hand, with numpy. The checks
compare with the terms :func:`redmax_edu.lagrange.chain_lagrangian` derives symbolically (and
which the book checks against RedMax's ``M_r`` and ``f_r``), the Coriolis matrix also through
``C + C^T = Mdot`` against central differences of ``M`` along the motion, and name the usual
slips: ``M`` not symmetric, ``cos(q1 + q2)`` for ``cos q2`` (right at ``q = 0`` only), the
parallel-axis terms ``m_i r_i^2`` left out, link 2 hung at ``r1`` instead of ``l1``, ``I2``
missing where link 2 turns with ``qdot1 + qdot2``, the Christoffel symbols in the wrong
index order, another matrix with the same product ``C qdot``, the vector ``C qdot`` for the
matrix ``C``.

Examples
--------
The identity is symmetric, positive definite and the same when the arm turns, and wrong:

>>> report = check("mass_matrix", lambda q, arm: np.eye(2))
>>> report.points, report.max_points
(2.0, 6.0)

Taught in book/04_companions/01_lagrangian_arm.
"""

import functools

import numpy as np

from .. import dynamics, lagrange
from ..joints import Revolute
from ..model import Body, Model
from .calls import call, describe
from .compare import agrees, asymmetry, judge_cases
from .core import Assignment, Verdict, entry_points

#: The parameters of the arm, in the order of :func:`redmax_edu.lagrange.planar_two_link`.
PARAMETERS = ("m1", "m2", "l1", "r1", "r2", "I1", "I2")


@functools.cache
def terms():
    """Numpy functions of ``(q, qdot, arm)``: ``M``, ``C``, ``dM`` (dM/dq_k, last index k), from sympy.

    Derived once per process (about a second): the assignment prepares them before the
    checks' child processes start, which inherit them.
    """
    import sympy as sp

    links, symbols = lagrange.planar_two_link()
    two = lagrange.chain_lagrangian(links)
    args = (*two.q, *two.qdot, *(symbols[p] for p in PARAMETERS))
    M = sp.lambdify(args, two.M, "numpy")
    C = sp.lambdify(args, two.C, "numpy")
    dM = [sp.lambdify(args, sp.diff(two.M, qk), "numpy") for qk in two.q]

    def values(f, q, qdot, arm):
        return np.array(f(*q, *qdot, *(arm[p] for p in PARAMETERS)), dtype=float)

    zero = np.zeros(2)
    return {
        "M": lambda q, arm: values(M, q, zero, arm),
        "C": lambda q, qdot, arm: values(C, q, qdot, arm),
        "dM": lambda q, arm: np.stack([values(f, q, zero, arm) for f in dM], axis=-1),
    }


ASSIGNMENT = Assignment("01_lagrangian_arm", "The Lagrangian of a two-link arm", allowed=[], prepare=terms)
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)


# --- inputs -------------------------------------------------------------------------------------


def random_arm(rng):
    """Random parameters of a two-link arm: a dict of :data:`PARAMETERS`."""
    m1, m2, l1 = rng.uniform(0.5, 3.0, 2).tolist() + [float(rng.uniform(0.5, 1.5))]
    return {"m1": m1, "m2": m2, "l1": l1, "r1": float(rng.uniform(0.2, 0.8) * l1),
            "r2": float(rng.uniform(0.2, 1.0)), "I1": float(rng.uniform(0.01, 0.3)),
            "I2": float(rng.uniform(0.01, 0.3))}


def _arm_text(arm):
    return "arm = (" + ", ".join(f"{p} {arm[p]:.3g}" for p in PARAMETERS) + ")"


def _label(q, arm, qdot=None):
    text = f"q = {describe(q)}"
    if qdot is not None:
        text += f", qdot = {describe(qdot)}"
    return f"{text}, {_arm_text(arm)}"


def _angles(rng):
    return rng.uniform(-np.pi, np.pi, 2)


# --- mass_matrix --------------------------------------------------------------------------------


def mass_mistakes(q, arm):
    """The usual wrong mass matrices of the arm, with what went wrong."""
    M = terms()["M"](q, arm)
    m1, m2, l1, r1, r2, I2 = (arm[p] for p in ("m1", "m2", "l1", "r1", "r2", "I2"))
    c2, c12 = np.cos(q[1]), np.cos(q[0] + q[1])
    ones = np.ones((2, 2))
    coupling = m2 * l1 * r2 * np.array([[2, 1], [1, 0]])  # the factor of cos q2 in M
    return [
        ("it depends on q1 through cos(q1 + q2), so it is right at q1 = 0 only: the relative angle "
         "q2 alone enters M (c1 c12 + s1 s12 = cos q2); turning the whole arm changes nothing "
         "about its inertia.",
         lambda: M + coupling * (c12 - c2)),
        ("the parallel-axis terms m1 r1^2 and m2 r2^2 are missing: I1 and I2 are about the centres "
         "of mass, and each centre of mass moves on a circle about its hinge.",
         lambda: M - np.diag([m1 * r1**2, 0]) - m2 * r2**2 * ones),
        ("the parallel-axis term m1 r1^2 of link 1 is missing (I1 is about its centre of mass).",
         lambda: M - np.diag([m1 * r1**2, 0])),
        ("link 2's parallel-axis term m2 r2^2 is missing (I2 is about its centre of mass).",
         lambda: M - m2 * r2**2 * ones),
        ("link 2 hangs at the end of link 1, l1 from the first hinge, not at link 1's centre of "
         "mass r1.", lambda: M + np.diag([m2 * (r1**2 - l1**2), 0]) + coupling * c2 * (r1 / l1 - 1)),
        ("the off-diagonal entries carry 2 m2 l1 r2 cos q2; only M11 has the factor 2 (M12 = I2 + "
         "m2 (r2^2 + l1 r2 cos q2)).", lambda: M + m2 * l1 * r2 * c2 * np.array([[0, 1], [1, 0]])),
        ("I2 is missing from M12, M21 and M22: link 2 turns at qdot1 + qdot2, so I2 multiplies "
         "[[1, 1], [1, 1]].", lambda: M - I2 * np.array([[0, 1], [1, 1]])),
        ("M12 and M21 differ: I2 is missing from M21. M is symmetric (it is the Hessian of the "
         "kinetic energy in qdot).", lambda: M - I2 * np.array([[0, 0], [1, 0]])),
    ]


def _mass_cases(fn, cases, **kwargs):
    return judge_cases(fn, cases, name="mass_matrix", shape=(2, 2), reference=terms()["M"],
                       mistakes=mass_mistakes, what="the mass matrix", **kwargs)


@check_of("mass_matrix", "stretched", "the arm stretched out (q2 = 0)", 1)
def mass_stretched(fn, rng):
    arm = random_arm(rng)
    cases = [((np.array([q1, 0.0]), arm), _label([q1, 0.0], arm)) for q1 in (0.0, 1.1)]
    return _mass_cases(fn, cases, hint="Stretched out, M11 = I1 + I2 + m1 r1^2 + m2 (l1 + r2)^2.")


@check_of("mass_matrix", "symmetric", "symmetric and positive definite", 1)
def mass_symmetric(fn, rng):
    arm, q = random_arm(rng), _angles(rng)
    label = _label(q, arm)
    M = call(fn, q, arm, name="mass_matrix", shape=(2, 2), label=label)
    gap = asymmetry(M, "M")
    if gap:
        return Verdict(f"At {label}, {gap} M is the Hessian of the kinetic energy in qdot: symmetric.")
    if np.linalg.eigvalsh(M).min() <= 0:
        return Verdict(f"At {label}, M is not positive definite: the kinetic energy qdot^T M qdot / 2 "
                       "must be positive whenever the arm moves.")
    return None


@check_of("mass_matrix", "general", "general angles and arms", 2)
def mass_general(fn, rng):
    cases = []
    for _ in range(4):
        arm, q = random_arm(rng), _angles(rng)
        cases.append(((q, arm), _label(q, arm)))
    arm = cases[0][0][1]
    return _mass_cases(fn, cases, zero_case=((np.zeros(2), arm), "q = 0 (same arm)"))


@check_of("mass_matrix", "turned", "the whole arm turned (q1 changed)", 1)
def mass_turned(fn, rng):
    arm, q2 = random_arm(rng), float(rng.uniform(0.3, 2.5))
    outputs = []
    for q1 in (0.0, 0.9, -2.0):
        q = np.array([q1, q2])
        outputs.append((q, call(fn, q, arm, name="mass_matrix", shape=(2, 2), label=_label(q, arm))))
    (q_a, M_a), *others = outputs
    for q_b, M_b in others:
        if not agrees(M_b, M_a):
            return Verdict(f"M changes when the whole arm turns ({_arm_text(arm)}): mass_matrix(q = "
                           f"{describe(q_a)}) differs from mass_matrix(q = {describe(q_b)}). Turning "
                           "about the first hinge changes nothing about the arm's inertia: only q2 "
                           "enters M.")
    return None


def arm_model(arm):
    """The arm as a RedMax model: two hinges about z, link 2's hinge at ``l1`` along link 1."""
    def shift(x):
        T = np.eye(4)
        T[0, 3] = x
        return T

    z = Revolute([0.0, 0.0, 1.0])
    return Model([Body("link1", -1, z, np.eye(4), shift(arm["r1"]), arm["m1"], arm["I1"] * np.eye(3)),
                  Body("link2", 0, z, shift(arm["l1"]), shift(arm["r2"]), arm["m2"], arm["I2"] * np.eye(3))],
                 gravity=(0.0, -9.81, 0.0))


@check_of("mass_matrix", "redmax", "the same as RedMax's M_r = J^T M_m J", 1)
def mass_redmax(fn, rng):
    cases = []
    for _ in range(3):
        arm, q = random_arm(rng), _angles(rng)
        cases.append(((q, arm), _label(q, arm)))
    return judge_cases(fn, cases, name="mass_matrix", shape=(2, 2),
                       reference=lambda q, arm: dynamics.mass_matrix(arm_model(arm), q),
                       mistakes=mass_mistakes, what="RedMax's M_r",
                       hint="RedMax's M_r is the same matrix from the body Jacobians (Part 2, Eq. 2.19).")


# --- coriolis_matrix ----------------------------------------------------------------------------

SHAPE_HINT = ("That is a vector: perhaps C qdot. Return the matrix C (2x2), which is linear in qdot; "
              "the equations of motion use its product C qdot.")


def coriolis_mistakes(q, qdot, arm):
    """The usual wrong Coriolis matrices, with what went wrong."""
    dM = terms()["dM"](q, arm)          # dM[k, j, i] = dM_kj / dq_i
    C = terms()["C"](q, qdot, arm)
    first = np.einsum("kji,i->kj", dM, qdot)           # sum_i dM_kj/dq_i qdot_i = Mdot
    second = np.einsum("kij,i->kj", dM, qdot)          # sum_i dM_ki/dq_j qdot_i
    third = np.einsum("ijk,i->kj", dM, qdot)           # sum_i dM_ij/dq_k qdot_i
    order = ("the Christoffel symbols are in the wrong index order: Gamma_kji = 1/2 (dM_kj/dq_i + "
             "dM_ki/dq_j - dM_ij/dq_k), the minus sign on the derivative by q_k.")
    return [
        (order, lambda: 0.5 * (first - second + third)),  # = C^T
        (order, lambda: 0.5 * (third + second - first)),
        ("it is Mdot - 1/2 (dM/dq_k qdot)^T: the right product C qdot, but not the Christoffel "
         "matrix (with it, Mdot - 2C is not skew-symmetric).", lambda: first - 0.5 * third),
        ("it is Mdot: C is only part of it (Mdot = C + C^T).", lambda: first),
        ("it is C without the 1/2 of the Christoffel symbols.", lambda: 2 * C),
    ]


def _with_shape_hint(judge):
    """Add :data:`SHAPE_HINT` when the student's function returned a 2-vector."""
    try:
        return judge()
    except Verdict as verdict:
        if "returned an array of shape (2,)" in verdict.message:
            verdict.message = f"{verdict.message} {SHAPE_HINT}"
            verdict.args = (verdict.message,)
        raise


def _coriolis_call(fn, q, qdot, arm):
    return _with_shape_hint(lambda: call(fn, q, qdot, arm, name="coriolis_matrix", shape=(2, 2),
                                         label=_label(q, arm, qdot)))


def _coriolis_cases(fn, cases, **kwargs):
    return _with_shape_hint(lambda: judge_cases(fn, cases, name="coriolis_matrix", shape=(2, 2),
                                                reference=terms()["C"], mistakes=coriolis_mistakes,
                                                what="the Coriolis matrix", **kwargs))


def _motion(rng):
    arm, q, qdot = random_arm(rng), _angles(rng), rng.standard_normal(2)
    return (q, qdot, arm), _label(q, arm, qdot)


@check_of("coriolis_matrix", "rest", "at rest (qdot = 0)", 1)
def coriolis_rest(fn, rng):
    arm, q = random_arm(rng), _angles(rng)
    return _coriolis_cases(fn, [((q, np.zeros(2), arm), _label(q, arm, np.zeros(2)))],
                           hint="C is linear in qdot: at rest it is zero.")


@check_of("coriolis_matrix", "product", "the velocity force C qdot", 2)
def coriolis_product(fn, rng):
    cases = [_motion(rng) for _ in range(4)]
    failures, first = 0, None
    for (q, qdot, arm), label in cases:
        got = _coriolis_call(fn, q, qdot, arm) @ qdot
        want = terms()["C"](q, qdot, arm) @ qdot
        if not agrees(got, want):
            failures += 1
            first = first or (label, got, want)
    if not failures:
        return None
    label, got, want = first
    got, want = np.round(got, 9), np.round(want, 9)  # no round-off digits in the message
    message = (f"C qdot at {label} is {describe(got)}; it should be {describe(want)} (the centrifugal "
               f"and Coriolis forces, -m2 l1 r2 sin q2 (2 qdot1 qdot2 + qdot2^2, -qdot1^2)).")
    if agrees(-got, want):
        message += " It has the wrong sign."
    message += f" Wrong for {failures} of {len(cases)} inputs."
    return Verdict(message, fraction=1 - failures / len(cases))


@check_of("coriolis_matrix", "christoffel", "the Christoffel form itself", 2)
def coriolis_christoffel(fn, rng):
    cases = [_motion(rng) for _ in range(4)]
    return _coriolis_cases(fn, cases)


@check_of("coriolis_matrix", "finite_differences", "C + C^T = Mdot against central differences of M", 1)
def coriolis_finite_differences(fn, rng):
    (q, qdot, arm), label = _motion(rng)
    C = _coriolis_call(fn, q, qdot, arm)
    h = 1e-6  # central differences of M along the motion: truncation ~h^2, round-off ~1e-16/h
    Mdot = (terms()["M"](q + h * qdot, arm) - terms()["M"](q - h * qdot, arm)) / (2 * h)
    N = Mdot - 2 * C
    if agrees(N, -N.T, 1e-6):
        return None
    return Verdict(f"At {label}, C + C^T differs from Mdot = (M(q + h qdot) - M(q - h qdot)) / 2h: "
                   f"N = Mdot - 2C is not skew-symmetric (the largest entry of N + N^T is "
                   f"{np.abs(N + N.T).max():.2g}). With the Christoffel symbols it is, and the velocity "
                   "terms do no work.")
