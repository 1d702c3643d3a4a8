"""Grader of the assignment "Products with the Jacobian, without the Jacobian" (§2.10, Algorithms 5-6).

With the inputs of the assignment on Algorithm 1 (``parents``, the joint frames ``E_ij``, the
parents' frames ``E_ip``, the joint Jacobians ``S``), the students write the O(n) products
that never form ``J``:

* ``jacobian_transpose_product(parents, E_ij, E_ip, S, y)`` (nq,): ``J^T y`` for body wrenches
  ``y`` (n, 6), by a backward sweep from the leaves (Algorithm 6): each body adds its wrench
  to what its children handed it, ``w_i = y_i + sum_c Ad(E_c_i)^T w_c``, and its joint takes
  ``(Ad(E_i_j) S_i)^T w_i``;
* ``mass_matrix_product(parents, E_ij, E_ip, S, inertias, x)`` (nq,): ``M_r x = J^T M_m J x``
  for spatial inertias (n, 6, 6), a forward sweep of twists (``J x``) and the backward one.

``adjoint`` is allowed. The checks build the random trees of that assignment, compare with
the library's ``J`` (:func:`redmax_edu.jacobian.jacobian`), and name the usual slips: ``Ad``
where ``Ad^T`` belongs, a child's wrench not handed to its parent, the adjoint of the inverse,
the joints' entries in the wrong order, ``M_m`` left out or taken once per joint.

Examples
--------
>>> def jacobian_transpose_product(parents, E_ij, E_ip, S, y):
...     return lie.exp_se3(np.zeros(6))
>>> print(check("jacobian_transpose_product", jacobian_transpose_product).results[0].message)
jacobian_transpose_product calls lie.exp_se3, which this assignment does not let you call (it lets you
call only lie.adjoint, lie.brac): write it yourself.

Taught in book/02_reduced/10_jacobian_products.
"""

import numpy as np

from .. import jacobian as jacobians
from .. import lie
from .calls import call, describe
from .compare import judge_cases
from .core import Assignment, Verdict, entry_points
from .reduced_jacobian import SHAPES, adjoints, describe_tree, inputs, sweep, tree

ASSIGNMENT = Assignment("05_jacobian_products", "Products with the Jacobian, without the Jacobian",
                        allowed=[lie.adjoint, lie.brac])
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)


def case(rng, shape):
    """``(model, q, (parents, E_ij, E_ip, S), label)`` for one of :data:`~.reduced_jacobian.SHAPES`."""
    parents, kinds = SHAPES[shape]
    model, q, _ = tree(rng, parents, kinds)
    args, _ = inputs(model, q)
    return model, q, args, describe_tree(model, kinds)


def inertias(rng, n):
    """Random spatial inertias (n, 6, 6) about points off the centres of mass (full 6x6 blocks)."""
    out = []
    for _ in range(n):
        mass, inertia = float(rng.uniform(0.5, 2.0)), np.diag(rng.uniform(0.05, 0.5, 3))
        C = lie.brac(0.3 * rng.standard_normal(3))
        out.append(np.block([[inertia - mass * C @ C, mass * C], [-mass * C, mass * np.eye(3)]]))
    return np.stack(out)


def _wrong_jacobians(parents, E_ij, E_ip, S):
    """The usual wrong sweeps, as the Jacobian they amount to, with what went wrong in a product."""
    A_ij, A_ip = adjoints(E_ij), adjoints(E_ip)
    A_ji, A_pi = adjoints([lie.inv_se3(e) for e in E_ij]), adjoints([lie.inv_se3(e) for e in E_ip])
    T = np.swapaxes
    return [
        ("a child's wrench is not handed to its parent: w_i = y_i + sum_c Ad(E_c_i)^T w_c, so each joint "
         "feels every body beyond it.", lambda: sweep(parents, A_ij, None, S)),
        ("it carries wrenches with Ad where Ad^T belongs (wrenches map by the transposed adjoint of the "
         "twists' map).", lambda: sweep(parents, T(A_ij, 1, 2), T(A_ip, 1, 2), S)),
        ("off by a frame: the joint's columns use Ad(E_j_i), the adjoint of the inverse; the joint takes "
         "(Ad(E_i_j) S_i)^T w_i.", lambda: sweep(parents, A_ji, A_ip, S)),
        ("off by a frame: a child's wrench reaches its parent by Ad(E_p_c)^T, the inverse frame; it is "
         "Ad(E_c_p)^T w_c (the transpose of the map that carries the parent's twist into the child).",
         lambda: sweep(parents, A_ij, A_pi, S)),
        ("the joints' entries are in the wrong order: entry block k belongs to joint k, in body order.",
         lambda: sweep(parents, A_ij, A_ip, S, reverse=True)),
    ]


# --- jacobian_transpose_product --------------------------------------------------------------------


def transpose_mistakes(parents, E_ij, E_ip, S, y):
    wrong = _wrong_jacobians(parents, E_ij, E_ip, S)
    return [(message, lambda J=J: J().T @ y.ravel()) for message, J in wrong]


def _transpose_cases(fn, rng, shape, count=1, wrench=None):
    cases, refs = [], {}
    for _ in range(count):
        model, q, args, label = case(rng, shape)
        y = rng.standard_normal((model.n, 6)) if wrench is None else wrench(rng, model.n)
        label = f"{label}, y = {describe(y.ravel()) if model.n == 1 else f'wrenches on bodies {_bodies(y)}'}"
        refs[id(y)] = jacobians.jacobian(model, q).T @ y.ravel()  # keyed by y: the reference needs the model
        cases.append(((*args, y), label))
    return judge_cases(fn, cases, name="jacobian_transpose_product", shape=(model.nq,),
                       reference=lambda *a: refs[id(a[-1])], mistakes=transpose_mistakes, what="J^T y")


@check_of("jacobian_transpose_product", "one", "one body on a hinge", 1)
def transpose_one(fn, rng):
    return _transpose_cases(fn, rng, "one")


@check_of("jacobian_transpose_product", "hinges", "a chain of three hinges", 1)
def transpose_hinges(fn, rng):
    return _transpose_cases(fn, rng, "hinges", 2)


@check_of("jacobian_transpose_product", "chain", "a chain of universal, prismatic and spherical joints", 1)
def transpose_chain(fn, rng):
    return _transpose_cases(fn, rng, "chain", 2)


@check_of("jacobian_transpose_product", "tree", "a branching tree", 2)
def transpose_tree(fn, rng):
    return _transpose_cases(fn, rng, "tree", 2)


def _bodies(y):
    """The bodies that carry a wrench, in words."""
    return ", ".join(str(i) for i in np.flatnonzero(np.any(y != 0, axis=1)))


def _tip_wrench(rng, n):
    y = np.zeros((n, 6))
    y[-1] = rng.standard_normal(6)
    return y


@check_of("jacobian_transpose_product", "tip", "a wrench on the last body only", 1)
def transpose_tip(fn, rng):
    return _transpose_cases(fn, rng, "hinges", 1, wrench=_tip_wrench)


# --- mass_matrix_product ---------------------------------------------------------------------------


def product_mistakes(parents, E_ij, E_ip, S, inertias, x):
    block = np.zeros((6 * len(inertias),) * 2)
    for i, M in enumerate(inertias):
        block[6 * i:6 * i + 6, 6 * i:6 * i + 6] = M
    J = sweep(parents, adjoints(E_ij), adjoints(E_ip), S)
    alone = sweep(parents, adjoints(E_ij), None, S)
    return [
        ("the inertias are left out: it is J^T J x; the product is J^T M_m J x, body i's twist times its "
         "spatial inertia M_i before the backward sweep.", lambda: J.T @ J @ x),
        ("in the forward sweep, the parent's twist is missing: phi_i = Ad(E_i_p) phi_p + Ad(E_i_j) S_i x_i.",
         lambda: J.T @ block @ alone @ x),
        *[(f"in the backward sweep, {message}", lambda W=W: W().T @ block @ J @ x)
          for message, W in _wrong_jacobians(parents, E_ij, E_ip, S)],
    ]


def _product_cases(fn, rng, shape, count=1, rest=False):
    cases, refs = [], {}
    for _ in range(count):
        model, q, args, label = case(rng, shape)
        Mi = inertias(rng, model.n)
        x = np.zeros(model.nq) if rest else rng.standard_normal(model.nq)
        label = f"{label}, random spatial inertias, x = {describe(x)}"
        J = jacobians.jacobian(model, q)
        block = np.zeros((6 * model.n,) * 2)
        for i, M in enumerate(Mi):
            block[6 * i:6 * i + 6, 6 * i:6 * i + 6] = M
        refs[id(x)] = J.T @ block @ J @ x
        cases.append(((*args, Mi, x), label))
    return judge_cases(fn, cases, name="mass_matrix_product", shape=(model.nq,),
                       reference=lambda *a: refs[id(a[-1])], mistakes=product_mistakes, what="M_r x")


@check_of("mass_matrix_product", "one", "one body on a hinge", 1)
def product_one(fn, rng):
    return _product_cases(fn, rng, "one")


@check_of("mass_matrix_product", "chains", "chains of hinges and of mixed joints", 2)
def product_chains(fn, rng):
    return _product_cases(fn, rng, "hinges") or _product_cases(fn, rng, "chain")


@check_of("mass_matrix_product", "tree", "a branching tree", 1)
def product_tree(fn, rng):
    return _product_cases(fn, rng, "tree", 2)


@check_of("mass_matrix_product", "symmetric", "symmetric, x1 . (M x2) = x2 . (M x1)", 1)
def product_symmetric(fn, rng):
    model, q, args, label = case(rng, "tree")
    Mi = inertias(rng, model.n)
    x1, x2 = rng.standard_normal(model.nq), rng.standard_normal(model.nq)
    label = f"{label}, random spatial inertias"
    a = call(fn, *args, Mi, x2, name="mass_matrix_product", shape=(model.nq,), label=f"{label}, x = x2")
    b = call(fn, *args, Mi, x1, name="mass_matrix_product", shape=(model.nq,), label=f"{label}, x = x1")
    if abs(x1 @ a - x2 @ b) <= 1e-9 * max(1.0, abs(x1 @ a)):
        return None
    return Verdict(f"mass_matrix_product({label}): x1 . (M x2) = {x1 @ a:.6g} but x2 . (M x1) = "
                   f"{x2 @ b:.6g}, with x1 = {describe(x1)}, x2 = {describe(x2)}: the mass matrix J^T M_m J "
                   "is symmetric, so the two must agree (is the backward sweep the transpose of the forward "
                   "one?).")
