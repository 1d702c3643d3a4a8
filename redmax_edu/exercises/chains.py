"""Articulated models the Part 2 graders call the students' functions on, with their labels in words.

A check of forward or inverse dynamics needs models where each usual slip shows: joints whose
``Sdot`` is not zero (a spherical joint: a missing ``Sdot qdot`` term), body frames turned
away from the world axes with unequal principal moments (inertia taken in world axes), a
branching tree (a child's wrench not handed to its parent), a single free body (its ``J`` is
6x6, so ``J`` in place of ``J^T`` has the right shape), and the pendulum whose answers are
known by heart. Every model is drawn from the check's seeded generator, so a check sees the
same models every time, and :func:`describe_model` names it in a message.

Taught in book/02_reduced/03_redmax_dynamics and 12_recursive_dynamics (the assignments).
"""

import numpy as np

from ..inertia import cuboid
from ..joints import Free3DExp, Prismatic, Revolute, SphericalExp
from ..lie import random_rotation, random_transform
from ..model import Body, Model

#: The joints of the random chains, by name, in the order they are used.
KINDS = ("revolute", "spherical", "prismatic", "revolute")

#: The pendulum: a 2 kg bob 1 m below a hinge about y, inertia 0.01 about its centre.
PENDULUM_MASS, PENDULUM_LENGTH, PENDULUM_INERTIA = 2.0, 1.0, 0.01


def _joint(rng, kind):
    if kind == "revolute":
        return Revolute(rng.standard_normal(3))
    if kind == "prismatic":
        return Prismatic(rng.standard_normal(3))
    if kind == "spherical":
        return SphericalExp()
    return Free3DExp()


def _inertia(rng):
    """Mass and principal moments of a random box (unequal moments: turning the axes matters)."""
    sides = rng.uniform(0.2, 1.0, 3)
    mass = float(rng.uniform(0.5, 2.0))
    return mass, cuboid(sides, mass=mass).inertia


def random_chain(rng, n=4, branching=False, gravity=(0.0, 0.0, -9.81), kinds=KINDS):
    """A random model of ``n`` bodies whose joints cycle through ``kinds`` (default :data:`KINDS`).

    Body ``i`` hangs from body ``i - 1`` (a chain) or, with ``branching``, from a body drawn
    among the earlier ones (at least one body then has two children).
    """
    parents = [-1] + [i - 1 for i in range(1, n)]
    if branching:
        parents = [-1, 0, 0] + [int(rng.integers(i)) for i in range(3, n)]
    bodies = []
    for i in range(n):
        mass, inertia = _inertia(rng)
        T_joint_body = random_transform(rng, 0.5)
        bodies.append(Body(f"b{i}", parents[i], _joint(rng, kinds[i % len(kinds)]),
                           random_transform(rng, 0.5), T_joint_body, mass, inertia))
    return Model(bodies, gravity=gravity)


def free_body(rng, gravity=(0.0, 0.0, -9.81)):
    """One body on a free joint (six coordinates): its ``J`` is square, 6x6."""
    mass, inertia = _inertia(rng)
    T = np.eye(4)
    T[:3, :3] = random_rotation(rng)
    return Model([Body("b0", -1, Free3DExp(), random_transform(rng, 0.5), T, mass, inertia)],
                 gravity=gravity)


def pendulum(gravity=(0.0, 0.0, -9.81)):
    """The pendulum of the docstrings: a bob of :data:`PENDULUM_MASS` kg, :data:`PENDULUM_LENGTH` m
    below a hinge about y."""
    T = np.eye(4)
    T[2, 3] = -PENDULUM_LENGTH
    return Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, PENDULUM_MASS,
                       PENDULUM_INERTIA * np.eye(3))], gravity=gravity)


def random_state(rng, model, speed=1.0):
    """Random ``(q, qdot)`` of the model, each of shape (nq,)."""
    return rng.uniform(-1.5, 1.5, model.nq), speed * rng.standard_normal(model.nq)


def describe_model(model):
    """The model in words: ``"a chain of 4 bodies (revolute, spherical, prismatic, revolute joints)"``.

    Examples
    --------
    >>> describe_model(pendulum())
    'the pendulum (a 2 kg bob 1 m below a hinge about y)'
    >>> describe_model(random_chain(np.random.default_rng(0), 3, gravity=(0, 0, 0)))
    'a chain of 3 bodies (revolute, spherical_exp, prismatic joints), no gravity'
    """
    names = [b.joint.kind for b in model.bodies]
    if names == ["revolute"] and model.bodies[0].name == "bob":
        text = (f"the pendulum (a {PENDULUM_MASS:g} kg bob {PENDULUM_LENGTH:g} m below a hinge about y)")
    elif model.n == 1:
        text = f"one body on a {names[0]} joint"
    else:
        shape = "chain" if all(p == i - 1 for i, p in enumerate(model.parents)) else "branching tree"
        text = f"a {shape} of {model.n} bodies ({', '.join(names)} joints)"
    return text if np.any(model.gravity) else text + ", no gravity"
