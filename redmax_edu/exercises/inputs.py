"""Inputs the Part 1 graders share: random poses and twists, and how a message names them.

Every input is drawn from the check's seeded generator, so a check sees the same inputs every
time (and other ones at the autograder's secret seed).

Taught in book/01_maximal/03_exp_log and 05_adjoint and 01_position (the assignments).
"""

import numpy as np

from .. import lie
from .calls import describe

#: The identity pose as a check's case: arguments and label.
IDENTITY = ((np.eye(4),), "E = I")
#: The zero twist as a check's case.
ZERO_TWIST = ((np.zeros(6),), "phi = 0")


def random_pose(rng, rotation=True, translation=True):
    """A pose with a random rotation and a standard normal origin (either can be left out)."""
    E = np.eye(4)
    if rotation:
        E[:3, :3] = lie.random_rotation(rng)
    if translation:
        E[:3, 3] = rng.standard_normal(3)
    return E


def pose_label(E):
    """A pose in words, by its twist: ``E = exp_se3((...))``."""
    return f"E = exp_se3({describe(lie.log_se3(E))})"


def twist_case(phi):
    """The twist ``phi`` as a check's case: arguments and label."""
    return (phi,), f"phi = {describe(phi)}"
