"""Random articulated models for the Part 2 unit tests (not a test module).

``random_tree(rng, n)`` draws a branching tree of n bodies whose joints cycle through the
basic families (revolute, prismatic, planar, translational, fixed) in a random order, with
random joint and body offsets from :func:`redmax_edu.lie.random_transform`, random joint
axes and a random but physical inertia (positive principal moments that satisfy the
triangle inequality), so every term of the dynamics is exercised.

``every_joint_tree(rng)`` puts one body on every joint type of the library (every Euler chart,
both free-3D orders, composites, splines) in a random branching tree at a random state;
``joint_group_trees(rng)`` spreads the same joints over a few smaller trees (for checks whose
cost grows with nq^2 or nq^3, the Part 3 derivatives); and ``with_springs(rng, model)`` adds
every kind of force the dynamics knows (joint springs and dampers, body damping, a spring
between two bodies); ``with_every_force(rng, model)`` adds one of each force class of
:mod:`redmax_edu.maximal.forces` on top (for the force derivatives of Part 3).
"""

from dataclasses import replace

import numpy as np

from redmax_edu.inertia import cuboid
from redmax_edu.joints import Fixed, Planar, Prismatic, Revolute, Translational
from redmax_edu.lie import random_rotation, random_transform
from redmax_edu.maximal.forces import (
    Attachment,
    BodyDamping,
    CableLaw,
    Coriolis,
    FrameSpring,
    Gravity,
    GroundPenalty,
    LinearSpringDamper,
    PointForce,
    PointSpring,
    Spring,
)
from redmax_edu.model import Body, Model

KINDS = ("revolute", "prismatic", "planar", "translational", "fixed")


def random_joint(rng, kind):
    """A joint of the given family with a random axis or plane."""
    if kind == "revolute":
        return Revolute(rng.standard_normal(3))
    if kind == "prismatic":
        return Prismatic(rng.standard_normal(3))
    if kind == "planar":
        return Planar(random_rotation(rng)[:, :2])
    if kind == "translational":
        return Translational()
    return Fixed()


def random_inertia(rng):
    """Rotated principal moments drawn from a random box: symmetric, positive, triangle-valid."""
    sides = rng.uniform(0.2, 1.0, 3)
    m = float(rng.uniform(0.5, 2.0))
    return m, cuboid(sides, mass=m).inertia


def random_tree(rng, n=6, kinds=KINDS, branching=True, **model_options):
    """A random model of n bodies; body i's parent is drawn from 0..i-1 (or i-1 for a chain)."""
    bodies = []
    for i in range(n):
        kind = kinds[i % len(kinds)] if i < len(kinds) else kinds[rng.integers(len(kinds))]
        parent = -1 if i == 0 else (int(rng.integers(i)) if branching else i - 1)
        mass, inertia = random_inertia(rng)
        bodies.append(Body(f"b{i}", parent, random_joint(rng, kind), random_transform(rng, 0.5),
                           random_transform(rng, 0.5), mass, inertia))
    return Model(bodies, **model_options)


def random_state(rng, model, scale=1.0):
    """Random ``(q, qdot)``, each of shape (model.nq,)."""
    return scale * rng.standard_normal(model.nq), scale * rng.standard_normal(model.nq)


#: :func:`every_joint_tree` away from singularities: the largest singular-value ratio of a joint's
#: ``S`` it accepts, and the draws it makes before giving up.
MAX_SPREAD = 15.0
MAX_DRAWS = 200


def every_joint_tree(rng, skip=(), away_from_singularities=False, **model_options):
    """A branching tree with one body on every joint type of the library (every chart too),
    except the ``skip`` names of ``test_joints.all_joints``, and a random state ``(q, qdot)``.

    With ``away_from_singularities``, each joint's coordinates are redrawn until its ``S`` has
    singular values within a factor 15 of each other: near a chart singularity (an Euler chart's
    gimbal lock) ``M_r`` has a condition number of 1e8 and more, and two exact ways of solving
    with it differ by round-off times that number.
    """
    from .test_joints import all_joints
    from .test_joints import random_state as random_joint_state

    bodies, q, qdot = [], [], []
    joints = [(name, joint) for name, joint in sorted(all_joints(rng).items()) if name not in skip]
    for i, (name, joint) in enumerate(joints):
        parent = -1 if i == 0 else int(rng.integers(i))
        mass, inertia = random_inertia(rng)
        bodies.append(Body(f"{name}", parent, joint, random_transform(rng, 0.3), random_transform(rng, 0.3),
                           mass, inertia))
        qi, vi = random_joint_state(joint, rng)
        draws = 1
        while away_from_singularities and joint.ndof and _spread(joint.S(qi)) > MAX_SPREAD:
            if draws == MAX_DRAWS:  # some random joints never get there (a mixed composite)
                raise ValueError(f"every_joint_tree: joint {name!r} drew no state with singular values of "
                                 f"S within a factor {MAX_SPREAD:g} in {MAX_DRAWS} draws; use another seed")
            qi, vi = random_joint_state(joint, rng)
            draws += 1
        q.append(qi)
        qdot.append(vi)
    return Model(bodies, **model_options), np.concatenate(q), np.concatenate(qdot)


def joint_group_trees(rng, groups=5, **options):
    """``groups`` random trees that together hold one body on every joint type of
    :func:`every_joint_tree` (joint k of the sorted names goes to tree ``k % groups``), each with
    a random state away from chart singularities: a list of ``(model, q, qdot)``."""
    from .test_joints import JOINT_NAMES

    return [every_joint_tree(rng, skip=[name for k, name in enumerate(JOINT_NAMES) if k % groups != g],
                             away_from_singularities=True, **options) for g in range(groups)]


def _spread(S):
    """Largest over smallest singular value of a joint Jacobian."""
    sv = np.linalg.svd(S, compute_uv=False)
    return sv[0] / sv[-1]


def with_springs(rng, model):
    """``model`` with random joint springs and dampers, body damping and a point spring from the
    first body to the last: every force term of the reduced dynamics."""
    bodies = [replace(b, stiffness=rng.uniform(0, 5, b.joint.ndof), damping=rng.uniform(0, 1, b.joint.ndof),
                      body_damping=0.1) for b in model.bodies]
    last = model.n - 1 if model.n > 1 else -1  # (a spring from a body to itself is refused)
    spring = PointSpring(Attachment(0, [0.1, 0, 0]), Attachment(last, [0, 0.1, 0]), stiffness=20.0)
    return Model(bodies, model.gravity, forces=[spring])


def with_every_force(rng, model):
    """:func:`with_springs` plus one force of every class of :mod:`redmax_edu.maximal.forces` on
    random bodies: damped point springs (body-body and world-body), a routed spring through a
    world via point, a taut cable, frame springs (body-body and world-body) with damping, a
    point force, an extra gravity, body damping with its own linear coefficient, an extra Coriolis
    wrench and a ground penalty whose plane cuts through the model (some points in contact)."""
    model = with_springs(rng, model)

    def body():
        return int(rng.integers(model.n))

    def point(scale=0.2):
        return scale * rng.standard_normal(3)

    def two(place):
        """``(a, place_a, b, place_b)`` on two random bodies, b the world when the draws coincide
        (a spring from a body to itself is refused)."""
        a, at_a, b, at_b = body(), place(), body(), place()
        return a, at_a, b if b != a else -1, at_b

    def pair():
        a, ra, b, rb = two(point)
        return Attachment(a, ra), Attachment(b, rb)

    forces = [
        PointSpring(*pair(), 20.0, 1.5),
        PointSpring(Attachment(-1, point(1.0)), Attachment(body(), point()), 10.0, 0.5),
        Spring([Attachment(body(), point()), Attachment(-1, point(1.0)), Attachment(body(), point())],
               LinearSpringDamper(15.0, 0.7, 0.5)),
        Spring(list(pair()), CableLaw(15.0, 0.7, 0.01)),
        FrameSpring(*two(lambda: random_transform(rng, 0.2)), 5.0, 3.0, 0.5, 0.4),
        FrameSpring(body(), random_transform(rng, 0.2), -1, random_transform(rng, 0.2), 5.0, 3.0, 0.5, 0.4),
        PointForce(body(), point(), rng.standard_normal(3), 2.0),
        Gravity(body(), 1.3, rng.standard_normal(3)),
        BodyDamping(body(), 0.3, 0.2),
        Coriolis(body(), np.diag([0.1, 0.2, 0.3, 1.0, 1.0, 1.0])),
        GroundPenalty(body(), 0.3 * rng.standard_normal((3, 3)), 100.0, 2.0, 10.0, 0.5,
                      plane_normal=rng.standard_normal(3)),
    ]
    return model.with_forces(list(model.forces) + forces)
