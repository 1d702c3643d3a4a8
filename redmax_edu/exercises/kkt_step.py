"""Grader of the assignment "One step of the KKT joint solve" (§1.10, §1.12, Eq. 1.84-1.89, 1.97).

The students write ``kkt_matrix(A, G)``, the symmetric KKT matrix of the writeup's Eq. (1.88),
``[[A, G^T], [G, 0]]``, and ``kkt_step(M, phi, f, G, g, h, gamma)``: one symplectic Euler step
of bodies held by rigid joints, with velocity-level Baumgarte stabilisation
``G Phi = -gamma g`` (Eq. 1.97), returning the new twists ``Phi`` and the multipliers
``lambda`` in this book's sign (``M Phi = M phi + h f + G^T lambda``, the sign of
:func:`redmax_edu.maximal.solve.kkt_solve`), stacked. The checks build chains of bodies on
hinges with :class:`redmax_edu.maximal.constraints.Joint` at random poses (and drifted
poses, where the joint error ``g`` is not zero), compare with ``kkt_solve``, and name the
usual slips: G where G^T belongs, the library's sign of G^T mixed into the writeup's
symmetric matrix, the writeup's sign of lambda, the Baumgarte term left out or with the
wrong sign, the momentum ``M phi`` or the step ``h`` left out of the right-hand side.

Examples
--------
>>> from redmax_edu.maximal.solve import kkt_solve
>>> def kkt_step(M, phi, f, G, g, h, gamma):
...     return kkt_solve(M, M @ phi + h * f, G, -gamma * g).phi
>>> print(check("kkt_step", kkt_step).results[0].message)
kkt_step calls maximal.solve.kkt_solve, which this assignment does not let you call (it lets you
call no function of the library): write it yourself.

Taught in book/01_maximal/10_joints and 12_solvers.
"""

import numpy as np

from .. import lie
from ..maximal import solve
from ..maximal.constraints import Joint
from .calls import call
from .compare import asymmetry, judge_cases
from .core import Assignment, Verdict, entry_points

ASSIGNMENT = Assignment("04_kkt_step", "One step of the KKT joint solve",
                        allowed=[])
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)


# --- the inputs ---------------------------------------------------------------------------------


def _mass_matrix(rng, n):
    """Block-diagonal body mass matrices ``diag(I_1, I_2, I_3, m, m, m)`` (Eq. 1.39)."""
    blocks = [np.r_[rng.uniform(0.05, 0.5, 3), np.full(3, rng.uniform(0.5, 3.0))] for _ in range(n)]
    return np.diag(np.concatenate(blocks))


def system(rng, n, kind="revolute", drift=0.0):
    """A chain of ``n`` bodies: body 0 jointed to the world, body k to body k-1.

    Returns the arguments of ``kkt_step`` except ``h`` and ``gamma``, and a label: ``(M, phi,
    f, G, g)``. With ``drift`` > 0 the poses are moved off the joints by random twists of
    that size, so that the joint error ``g`` is not zero. ``kind`` None: no joints (k = 0).
    """
    E = np.stack([lie.random_transform(rng) for _ in range(n)])
    joints = [Joint.at(kind, k, k - 1, lie.random_transform(rng), E) for k in range(n) if kind is not None]
    if drift:
        E = np.stack([e @ lie.exp_se3(drift * rng.standard_normal(6)) for e in E])
    G = np.vstack([j.jacobian(E) for j in joints] + [np.zeros((0, 6 * n))])
    g = np.concatenate([j.error(E) for j in joints] + [np.zeros(0)])
    M, phi, f = _mass_matrix(rng, n), rng.standard_normal(6 * n), 5 * rng.standard_normal(6 * n)
    what = {"fixed": "one body welded to the world", "revolute": f"a chain of {n} bodies on hinges",
            "spherical": f"a chain of {n} bodies on ball joints", None: f"{n} bodies without joints"}[kind]
    return (M, phi, f, G, g), what


# --- kkt_matrix (Eq. 1.88) ----------------------------------------------------------------------


def kkt_reference(A, G):
    """The writeup's symmetric KKT matrix ``[[A, G^T], [G, 0]]`` (Eq. 1.88)."""
    return np.block([[A, G.T], [G, np.zeros((len(G), len(G)))]])


def matrix_mistakes(A, G):
    """The usual wrong KKT matrices, with what went wrong."""
    Z = np.zeros((len(G), len(G)))
    square = [  # G in place of G^T only has the right shape when G is square (otherwise it raises)
        ("the off-diagonal blocks are exchanged: the top-right block is G^T (one column per "
         "constraint row), the bottom-left block G.", lambda: np.block([[A, G], [G.T, Z]])),
        ("the top-right block is G; it is G^T.", lambda: np.block([[A, G], [G, Z]])),
    ]
    return (square if G.shape[0] == G.shape[1] else []) + [
        ("the top-right block is -G^T: that is the sign of this book's KKT system (M Phi = b + "
         "G^T lambda, Eq. (1.88), our sign), mixed with the writeup's symmetric matrix, which has "
         "+G^T. The matrix is not symmetric.", lambda: np.block([[A, -G.T], [G, Z]])),
        ("the bottom-left block is -G: the matrix is not symmetric (Eq. (1.88) has G there).",
         lambda: np.block([[A, G.T], [-G, Z]])),
    ]


def blocks(m):
    """The four blocks of a KKT matrix with ``m`` velocity rows, by name (for the messages)."""
    return {"the top-left block (A)": np.s_[:m, :m], "the top-right block (G^T)": np.s_[:m, m:],
            "the bottom-left block (G)": np.s_[m:, :m], "the bottom-right block (zero)": np.s_[m:, m:]}


def _matrix_cases(fn, cases):
    (A, G), _ = cases[0]
    m = len(A) + len(G)
    try:
        return judge_cases(fn, cases, name="kkt_matrix", shape=(m, m), reference=kkt_reference,
                           mistakes=matrix_mistakes, what="the KKT matrix", parts=blocks(len(A)))
    except Verdict as verdict:
        if "raised ValueError" in verdict.message:  # np.block with G where G^T belongs
            verdict.message += (" (The blocks' shapes: A is m x m, G^T is m x k, G is k x m and the "
                                "zero block k x k, with k constraint rows.)")
        raise


def _matrix_case(rng, n, kind):
    (M, phi, f, G, g), what = system(rng, n, kind)
    return (M, G), f"A = M and G of {what} ({len(G)} rows, {G.shape[1]} columns)"


@check_of("kkt_matrix", "weld", "one body welded to the world (G square)", 1)
def matrix_weld(fn, rng):
    return _matrix_cases(fn, [_matrix_case(rng, 1, "fixed")])


@check_of("kkt_matrix", "chain", "chains of bodies on hinges", 2)
def matrix_chain(fn, rng):
    return _matrix_cases(fn, [_matrix_case(rng, 3, "revolute") for _ in range(3)])


@check_of("kkt_matrix", "free", "bodies without joints (k = 0)", 1)
def matrix_free(fn, rng):
    return _matrix_cases(fn, [_matrix_case(rng, 2, None)])


@check_of("kkt_matrix", "symmetric", "the matrix is symmetric", 1)
def matrix_symmetric(fn, rng):
    (A, G), label = _matrix_case(rng, 2, "revolute")
    m = len(A) + len(G)
    K = call(fn, A, G, name="kkt_matrix", shape=(m, m), label=label)
    problem = asymmetry(K, "K")
    return None if problem is None else Verdict(f"kkt_matrix({label}): {problem} The writeup's "
                                                "Eq. (1.88) is symmetric: [[A, G^T], [G, 0]].")


# --- kkt_step (Eq. 1.28, 1.88, 1.97) ------------------------------------------------------------


def step_reference(M, phi, f, G, g, h, gamma):
    """``(Phi, lambda)`` stacked, by :func:`~redmax_edu.maximal.solve.kkt_solve` (this book's sign)."""
    solution = solve.kkt_solve(M, M @ phi + h * f, G, -gamma * g)
    return np.concatenate([solution.phi, solution.lam_G])


def step_mistakes(M, phi, f, G, g, h, gamma):
    """The usual wrong steps, with what went wrong."""
    right = step_reference(M, phi, f, G, g, h, gamma)
    m = len(phi)
    writeup_sign = np.concatenate([right[:m], -right[m:]])
    return [
        ("the multipliers have the writeup's sign: its Eq. (1.88) solves M Phi + G^T lambda = M phi "
         "+ h f; this book's lambda (M Phi = M phi + h f + G^T lambda) is its negative. The "
         "velocities are right.", writeup_sign),
        ("the Baumgarte term is missing: the joint rows ask G Phi = -gamma g (Eq. (1.97)), which "
         "removes part of the joint error g each step.",
         lambda: step_reference(M, phi, f, G, 0 * g, h, gamma)),
        ("the Baumgarte term has the wrong sign: G Phi = -gamma g (Eq. (1.97)); +gamma g makes the "
         "error grow.", lambda: step_reference(M, phi, f, G, -g, h, gamma)),
        ("the right-hand side lacks the momentum M phi: one step of Eq. (1.28) is M Phi = M phi + h f "
         "(plus the constraint impulse).", lambda: step_reference(M, 0 * phi, f, G, g, h, gamma)),
        ("the force is not multiplied by the step: the impulse over one step is h f (Eq. (1.28)).",
         lambda: step_reference(M, phi, f / h, G, g, h, gamma)),
    ]


def _step_cases(fn, cases, **kwargs):
    m = len(cases[0][0][1])
    k = len(cases[0][0][3])
    return judge_cases(fn, cases, name="kkt_step", shape=(m + k,), reference=step_reference,
                       mistakes=step_mistakes, what="(Phi, lambda)",
                       stacked="the new twists and the multipliers together, np.concatenate([Phi, lam])",
                       **kwargs)


H, GAMMA = 0.01, 5.0


def _step_case(rng, n, kind="revolute", drift=0.0):
    (M, phi, f, G, g), what = system(rng, n, kind, drift)
    error = "g = 0" if not drift else "drifted poses, g != 0"
    return (M, phi, f, G, g, H, GAMMA), f"{what}, {error}, h = {H:g}, gamma = {GAMMA:g}"


@check_of("kkt_step", "weld", "one body welded to the world", 1)
def step_weld(fn, rng):
    return _step_cases(fn, [_step_case(rng, 1, "fixed")])


@check_of("kkt_step", "holding", "joints that hold (g = 0)", 2)
def step_holding(fn, rng):
    return _step_cases(fn, [_step_case(rng, 2) for _ in range(3)])


@check_of("kkt_step", "drifted", "joints that have drifted (g not 0)", 2)
def step_drifted(fn, rng):
    cases = [_step_case(rng, 3, drift=0.05) for _ in range(3)]
    (M, phi, f, G, g, h, gamma), label = cases[0]
    held = ((M, phi, f, G, 0 * g, h, gamma),
            label.replace("drifted poses, g != 0", "the same, with g = 0"))
    return _step_cases(fn, cases, zero_case=held)


@check_of("kkt_step", "ball", "joints that hold, ball joints", 1)
def step_ball(fn, rng):
    return _step_cases(fn, [_step_case(rng, 3, "spherical") for _ in range(2)])


@check_of("kkt_step", "free", "bodies without joints (k = 0)", 1)
def step_free(fn, rng):
    return _step_cases(fn, [_step_case(rng, 2, None)])


@check_of("kkt_step", "constraints", "the new twists satisfy the joint rows", 1)
def step_constraints(fn, rng):
    args, label = _step_case(rng, 2, drift=0.05)
    M, phi, f, G, g, h, gamma = args
    m, k = len(phi), len(g)
    x = call(fn, *args, name="kkt_step", shape=(m + k,), label=label)
    residual = G @ x[:m] + gamma * g
    if np.max(np.abs(residual)) <= 1e-9 * max(1.0, float(np.max(np.abs(x)))):
        return None
    return Verdict(f"kkt_step({label}): the new twists break the joints, G Phi + gamma g has entries up to "
                   f"{np.max(np.abs(residual)):.2g}; the bottom rows of the KKT system ask G Phi = -gamma g.")
