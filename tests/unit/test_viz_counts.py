"""Counts that drive a loop or an allocation in the figures (samples, steps, frames, points) are
checked before anything is drawn: a bad one is a ValueError naming the argument, never a hang,
a MemoryError or numpy's TypeError from inside linspace."""

import numpy as np
import pytest

from redmax_edu.joints import Revolute
from redmax_edu.model import Body, Model
from redmax_edu.viz.explorers import TWIST_PRESETS, twist_scene
from redmax_edu.viz.joint_explorer import joint_scene, joint_sweep
from redmax_edu.viz.reduced import trajectory_scenes

BAD_COUNTS = [10**12, 0, -3, 2.5, True, "60", None]


def _pendulum():
    below = np.eye(4)
    below[2, 3] = -0.5
    return Model([Body("bar", -1, Revolute([0, 1, 0]), np.eye(4), below, 1.0, np.diag([1e-3, 1e-3, 1e-4]))])


CALLS = {
    "samples": lambda n: twist_scene(TWIST_PRESETS["screw"], 0.5, samples=n),
    "joint samples": lambda n: joint_scene(Revolute([0, 0, 1]), [0.3], samples=n),
    "steps": lambda n: joint_sweep(Revolute([0, 0, 1]), [0.0], [1.0], steps=n),
    "max_frames": lambda n: trajectory_scenes(_pendulum(), np.linspace(0, 1, 5), np.zeros((5, 1)),
                                              max_frames=n),
}


@pytest.mark.parametrize("count", BAD_COUNTS, ids=repr)
@pytest.mark.parametrize("call", CALLS, ids=str)
def test_a_bad_count_is_refused_naming_its_argument(call, count):
    argument = call.split()[-1]
    with pytest.raises(ValueError, match=f"argument '{argument}'"):
        CALLS[call](count)


@pytest.mark.parametrize("call", CALLS, ids=str)
def test_a_sensible_count_draws(call):
    assert CALLS[call](3) is not None
