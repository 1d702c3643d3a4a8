"""Random articulated models for the Part 2 unit tests (not a test module).

``random_tree(rng, n)`` draws a branching tree of n bodies whose joints cycle through the
basic families (revolute, prismatic, planar, translational, fixed) in a random order, with
random joint and body offsets from :func:`redmax_edu.lie.random_transform`, random joint
axes and a random but physical inertia (positive principal moments that satisfy the
triangle inequality), so every term of the dynamics is exercised.
"""

import numpy as np

from redmax_edu.joints import Fixed, Planar, Prismatic, Revolute, Translational
from redmax_edu.lie import random_rotation, random_transform
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
    moments = m * (sides[[1, 0, 0]] ** 2 + sides[[2, 2, 1]] ** 2) / 12
    return m, np.diag(moments)


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
