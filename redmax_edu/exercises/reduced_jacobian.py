"""Grader of the assignment "The Jacobian by Algorithm 1" (§2.1-2.2, Eq. 2.8-2.14).

The students write, for a tree of n bodies given by its ``parents`` (-1 for the world), the
joint frames in body coordinates ``E_ij`` (n, 4, 4), the parents' frames in body coordinates
``E_ip`` (n, 4, 4; for a root the world's) and the joint Jacobians ``S`` (a list of (6, ndof_i)
arrays): ``body_twists(parents, E_ij, E_ip, S, qdot)``, the forward sweep of twists
``phi_i = Ad(E_ip) phi_p + Ad(E_ij) S_i qdot_i`` (Eq. 2.8-2.12), shape (n, 6), and
``jacobian(parents, E_ij, E_ip, S)``, the matrix ``J_mr`` (6n, nq) of Algorithm 1 (Eq. 2.14)
with ``phi = J_mr qdot``. ``adjoint`` (their own from §1.5, or the library's) is allowed.
The checks build random trees with revolute, prismatic, planar, universal and spherical
joints (:class:`redmax_edu.model.Model`), compare with
:func:`redmax_edu.kinematics.forward_kinematics` and :func:`redmax_edu.jacobian.fill_jacobian`,
and name the usual slips: the adjoint of the inverse transform (off by a frame), the
transpose of the adjoint, the parent's twist or columns left out or not carried into the
child's frame, the joint's columns in the wrong place, the blocks not stacked.

Examples
--------
>>> from redmax_edu.jacobian import fill_jacobian
>>> def jacobian(parents, E_ij, E_ip, S):
...     return fill_jacobian(parents, E_ij)
>>> print(check("jacobian", jacobian).results[0].message)
jacobian calls jacobian.fill_jacobian, which this assignment does not let you call (it lets you call
only lie.adjoint, lie.brac): write it yourself.

Taught in book/02_reduced/01_reduced_coordinates and 02_jacobian.
"""

import numpy as np

from .. import jacobian as jacobians
from .. import kinematics, lie
from ..joints import Planar, Prismatic, Revolute, SphericalEuler, Universal
from ..model import Body, Model
from .calls import call, describe
from .compare import agrees, explain, judge_cases, max_error
from .core import Assignment, Verdict, entry_points

ASSIGNMENT = Assignment("02_jacobian", "The Jacobian by Algorithm 1",
                        allowed=[lie.adjoint, lie.brac])
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)


# --- random trees -------------------------------------------------------------------------------


def _unit(rng):
    v = rng.standard_normal(3)
    return v / np.linalg.norm(v)


JOINTS = {
    "revolute": lambda rng: Revolute(_unit(rng)),
    "prismatic": lambda rng: Prismatic(_unit(rng)),
    "planar": lambda rng: Planar(),
    "universal": lambda rng: Universal(),
    "spherical": lambda rng: SphericalEuler("XYZ"),
}


def tree(rng, parents, kinds):
    """A random tree: ``(model, q, qdot)`` with the given parents and joint kinds."""
    bodies = [Body(f"body {i}", p, JOINTS[kind](rng), lie.random_transform(rng), lie.random_transform(rng),
                   1.0, np.eye(3)) for i, (p, kind) in enumerate(zip(parents, kinds, strict=True))]
    model = Model(bodies)
    # angles away from the spherical joints' singularity (|q_2| < 1 < pi/2)
    return model, rng.uniform(-1, 1, model.nq), rng.standard_normal(model.nq)


def inputs(model, q):
    """The students' arguments ``(parents, E_ij, E_ip, S)`` of a model at q, and the library's sweep."""
    kin = kinematics.forward_kinematics(model, q)
    E_ij = np.stack([lie.inv_se3(T) for T in model.T_joint_body])
    E_wp = [np.eye(4) if p < 0 else kin.E_wi[p] for p in model.parents]
    E_ip = np.stack([lie.inv_se3(E_wi) @ E for E_wi, E in zip(kin.E_wi, E_wp, strict=True)])
    return (list(model.parents), E_ij, E_ip, [np.array(s) for s in kin.S]), kin


def describe_tree(model, kinds):
    """The tree in words: its bodies and each joint with its parent."""
    joints = ", ".join(f"{kind} ({p})" for kind, p in zip(kinds, model.parents, strict=True))
    return f"{model.n} {'body' if model.n == 1 else 'bodies'}, joints (parent): {joints}"


SHAPES = {  # name: (parents, joint kinds)
    "one": ([-1], ["revolute"]),
    "hinges": ([-1, 0, 1], ["revolute"] * 3),
    "chain": ([-1, 0, 1], ["universal", "prismatic", "spherical"]),
    "tree": ([-1, 0, 0, 2, 1], ["revolute", "planar", "universal", "spherical", "prismatic"]),
}


# --- the sweep, right and wrong -----------------------------------------------------------------


def _offsets(S, reverse=False):
    sizes = [s.shape[1] for s in S]
    order = range(len(S) - 1, -1, -1) if reverse else range(len(S))
    start, offsets = 0, [None] * len(S)
    for i in order:
        offsets[i] = slice(start, start + sizes[i])
        start += sizes[i]
    return offsets


def adjoints(E):
    """The adjoints of a stack of transforms, (n, 6, 6) (also the inputs of :mod:`.jacobian_products`)."""
    return np.stack([lie.adjoint(e) for e in E])


def sweep(parents, A_joint, A_parent, S, reverse=False):
    """Algorithm 1 with the given joint and parent adjoints (None: the parent's columns left out)."""
    n, nq = len(parents), sum(s.shape[1] for s in S)
    J = np.zeros((n, 6, nq))
    for i, (p, s) in enumerate(zip(parents, _offsets(S, reverse), strict=True)):
        J[i][:, s] = A_joint[i] @ S[i]
        if p >= 0 and A_parent is not None:
            J[i] += A_parent[i] @ J[p]
    return J.reshape(6 * n, nq)


def _slips(parents, E_ij, E_ip, S):
    """The usual slips of the sweep: (message for J, message for the twists, wrong J)."""
    A_ij, A_ip = adjoints(E_ij), adjoints(E_ip)
    A_ji, A_pi = adjoints([lie.inv_se3(e) for e in E_ij]), adjoints([lie.inv_se3(e) for e in E_ip])
    T = np.swapaxes
    I6 = np.broadcast_to(np.eye(6), A_ip.shape)
    return [
        ("off by a frame: the joint's columns use Ad(E_j_i), the adjoint of the inverse; Ad(E_i_j) "
         "carries a twist from the joint's frame into the body's.",
         "off by a frame: the joint's twist S_i qdot_i is carried with Ad(E_j_i), the adjoint of the "
         "inverse; Ad(E_i_j) carries a twist from the joint's frame into the body's.",
         lambda: sweep(parents, A_ji, A_ip, S)),
        ("off by a frame: the parent's columns are carried with Ad(E_p_i), the adjoint of the inverse; "
         "Ad(E_i_p) carries the parent's twist into the child's frame (Eq. (2.10)).",
         "off by a frame: the parent's twist is carried with Ad(E_p_i), the adjoint of the inverse; "
         "Ad(E_i_p) carries the parent's twist into the child's frame (Eq. (2.10)).",
         lambda: sweep(parents, A_ij, A_pi, S)),
        ("it uses the transpose of the adjoint, Ad(E)^T, which maps wrenches, not twists.",
         "it uses the transpose of the adjoint, Ad(E)^T, which maps wrenches, not twists.",
         lambda: sweep(parents, T(A_ij, 1, 2), T(A_ip, 1, 2), S)),
        ("the parent's columns are missing: body i moves with every joint between it and the root, "
         "so its row block is Ad(E_i_p) times its parent's row block plus its own joint's columns "
         "(Eq. (2.14)).",
         "the parent's twist is missing: phi_i = Ad(E_i_p) phi_p + Ad(E_i_j) S_i qdot_i (Eq. (2.8)-(2.12)).",
         lambda: sweep(parents, A_ij, None, S)),
        ("the parent's columns are copied without Ad(E_i_p): the parent's twist is in the parent's "
         "frame and must be carried into the child's.",
         "the parent's twist is added without Ad(E_i_p): it is in the parent's frame and must be "
         "carried into the child's.", lambda: sweep(parents, A_ij, I6, S)),
        ("the columns are in the wrong order: column block k belongs to joint k, in body order "
         "(qdot = (qdot_0, qdot_1, ...)).",
         "the joint rates are taken in the wrong order: qdot = (qdot_0, qdot_1, ...), joint k's rates "
         "in body order.", lambda: sweep(parents, A_ij, A_ip, S, reverse=True)),
    ]


def mistakes(parents, E_ij, E_ip, S):
    """Candidate wrong Jacobians, with what went wrong."""
    return [(message, J) for message, _, J in _slips(parents, E_ij, E_ip, S)]


def twist_mistakes(parents, E_ij, E_ip, S, qdot):
    """Candidate wrong twists (``J qdot`` of each wrong Jacobian), with what went wrong."""
    return [(message, lambda J=J: (J() @ qdot).reshape(-1, 6))
            for _, message, J in _slips(parents, E_ij, E_ip, S)]


# --- body_twists (Eq. 2.8-2.12) -----------------------------------------------------------------


def _twist_cases(fn, rng, shape, count, **kwargs):
    parents, kinds = SHAPES[shape]
    cases = []
    for _ in range(count):
        model, q, qdot = tree(rng, parents, kinds)
        args, kin = inputs(model, q)
        cases.append(((*args, qdot), f"{describe_tree(model, kinds)}, qdot = {describe(qdot)}"))
    n = len(parents)

    def reference(parents, E_ij, E_ip, S, qdot):
        return (sweep(parents, adjoints(E_ij), adjoints(E_ip), S) @ qdot).reshape(n, 6)

    return judge_cases(fn, cases, name="body_twists", shape=(n, 6), reference=reference,
                       mistakes=twist_mistakes, what="the body twists", **kwargs)


@check_of("body_twists", "one", "one body on a hinge", 1)
def twists_one(fn, rng):
    return _twist_cases(fn, rng, "one", 2)


@check_of("body_twists", "hinges", "a chain of three hinges", 1)
def twists_hinges(fn, rng):
    return _twist_cases(fn, rng, "hinges", 3)


@check_of("body_twists", "tree", "a branching tree with multi-dof joints", 2)
def twists_tree(fn, rng):
    return _twist_cases(fn, rng, "tree", 3)


@check_of("body_twists", "library", "the twists of forward kinematics", 1)
def twists_library(fn, rng):
    parents, kinds = SHAPES["tree"]
    model, q, qdot = tree(rng, parents, kinds)
    args, _ = inputs(model, q)
    label = f"{describe_tree(model, kinds)}, qdot = {describe(qdot)}"
    want = kinematics.forward_kinematics(model, q, qdot).phi
    return judge_cases(fn, [((*args, qdot), label)], name="body_twists", shape=want.shape,
                       reference=lambda *a: want, mistakes=twist_mistakes, what="the body twists")


# --- jacobian (Algorithm 1, Eq. 2.14) -----------------------------------------------------------


def _jacobian_cases(fn, rng, shape, count, **kwargs):
    parents, kinds = SHAPES[shape]
    cases, references = [], []
    for _ in range(count):
        model, q, _ = tree(rng, parents, kinds)
        args, kin = inputs(model, q)
        cases.append((args, describe_tree(model, kinds)))
        references.append(jacobians.fill_jacobian(model, kin))
    lookup = {id(args[1]): J for (args, _), J in zip(cases, references, strict=True)}
    return judge_cases(fn, cases, name="jacobian", shape=references[0].shape,
                       reference=lambda parents, E_ij, E_ip, S: lookup[id(E_ij)], mistakes=mistakes,
                       what="J_mr", **kwargs)


@check_of("jacobian", "one", "one body on a hinge", 1)
def jacobian_one(fn, rng):
    return _jacobian_cases(fn, rng, "one", 2)


@check_of("jacobian", "hinges", "a chain of three hinges", 2)
def jacobian_hinges(fn, rng):
    return _jacobian_cases(fn, rng, "hinges", 3)


@check_of("jacobian", "chain", "a chain with multi-dof joints", 1)
def jacobian_chain(fn, rng):
    return _jacobian_cases(fn, rng, "chain", 3)


@check_of("jacobian", "tree", "a branching tree", 2)
def jacobian_tree(fn, rng):
    return _jacobian_cases(fn, rng, "tree", 3)


@check_of("jacobian", "twists", "J qdot equals the body twists", 1)
def jacobian_twists(fn, rng):
    parents, kinds = SHAPES["tree"]
    model, q, qdot = tree(rng, parents, kinds)
    args, _ = inputs(model, q)
    want = kinematics.forward_kinematics(model, q, qdot).phi.ravel()
    label = f"{describe_tree(model, kinds)}, times qdot = {describe(qdot)}"
    J = call(fn, *args, name="jacobian", shape=(len(want), len(qdot)), label=label)
    got = J @ qdot
    if agrees(got, want):
        return None
    explanation = explain(got, want, what="the stacked body twists of forward kinematics")
    return Verdict(f"jacobian({label}) times qdot is wrong (largest error {max_error(got, want):.2g})"
                   + (f": {explanation}" if explanation else "."))
