"""Unit tests of the reference code's stiffness approximations that scenes.scene can build
(``stiffness="reference"``): a constant point force without stiffness, point springs with the
symmetric part of theirs. The exact matrices themselves are checked in test_maximal_forces."""

import numpy as np
import pytest

from redmax_edu import scenes
from redmax_edu.lie import exp_se3
from redmax_edu.maximal.forces import Attachment, PointForce, PointSpring


def _poses(rng, n=2):
    E = np.empty((n, 4, 4))
    for i in range(n):
        E[i] = exp_se3(rng.standard_normal(6))
    return E


def test_reference_point_force_drops_the_stiffness_and_keeps_force_and_energy(rng):
    args = (0, [0.05, 0.01, -0.02], [0.3, -0.2, 1.0])
    exact, approx = PointForce(*args, k=2.0), scenes.ReferencePointForce(*args, k=2.0)
    E, phi = _poses(rng, 1), rng.standard_normal((1, 6))
    a, b = exact.evaluate(E, phi), approx.evaluate(E, phi)
    np.testing.assert_array_equal(a.f, b.f)
    np.testing.assert_array_equal(a.D, b.D)
    assert np.abs(a.K).max() > 0.1 and not np.any(b.K)  # the exact stiffness is not zero
    assert approx.potential_energy(E) == exact.potential_energy(E)
    assert isinstance(approx, PointForce)  # drawn and read like the exact one


def test_reference_point_spring_symmetrises_the_stiffness(rng):
    points = (Attachment(0, [-0.01, 0.0, 0.0]), Attachment(1, [0.05, 0.0, 0.02]))
    exact, approx = PointSpring(*points, 3.0, 0.5), scenes.ReferencePointSpring(*points, 3.0, 0.5)
    E, phi = _poses(rng), rng.standard_normal((2, 6))
    a, b = exact.evaluate(E, phi), approx.evaluate(E, phi)
    np.testing.assert_array_equal(a.f, b.f)
    np.testing.assert_array_equal(a.D, b.D)
    assert np.abs(a.K - a.K.T).max() > 1e-3 * np.abs(a.K).max()  # the exact one is not symmetric
    np.testing.assert_allclose(b.K, 0.5 * (a.K + a.K.T), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(b.K, b.K.T)
    assert approx.potential_energy(E) == exact.potential_energy(E)


def test_scene_builds_the_reference_stiffness_only_where_asked():
    exact, approx = scenes.scene(23), scenes.scene(23, stiffness="reference")
    assert not any(isinstance(f, scenes.ReferencePointSpring) for f in exact.model.forces)
    assert all(isinstance(f, scenes.ReferencePointSpring) for f in approx.model.forces)
    assert [type(f) for f in scenes.scene(10, stiffness="reference").model.forces].count(
        scenes.ReferencePointForce) == 1
    assert scenes.scene(23) is exact  # cached per choice
    np.testing.assert_array_equal(approx.q0, exact.q0)
    assert approx.description == exact.description
    # a scene without point forces or point springs is the same model either way
    plain = scenes.scene(-1, stiffness="reference")
    assert [type(f) for f in plain.model.forces] == [type(f) for f in scenes.scene(-1).model.forces]


@pytest.mark.parametrize("bad", ["Reference", "approx", None, 1, ("exact",)])
def test_an_unknown_stiffness_choice_is_a_value_error(bad):
    with pytest.raises(ValueError, match="stiffness"):
        scenes.scene(23, stiffness=bad)
