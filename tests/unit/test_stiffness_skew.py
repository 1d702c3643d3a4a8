"""The skew part of rigid-body force stiffnesses (forces.stiffness_skew_part, ArtiSynth notes §0.23)."""

import numpy as np
import pytest

from redmax_edu.checks import numerical_derivative
from redmax_edu.lie import random_transform
from redmax_edu.maximal.forces import (
    Attachment,
    FrameSpring,
    Gravity,
    LinearSpringDamper,
    PointSpring,
    Spring,
    stiffness_skew_part,
)


def conservative_forces(rng):
    """One of each conservative force of Part 1 on two bodies (no damping)."""
    return {
        "gravity": Gravity(0, 2.0),
        "point spring": PointSpring(Attachment(0, rng.standard_normal(3)),
                                    Attachment(1, rng.standard_normal(3)), 3.0),
        "spring to the world": Spring([Attachment(0, rng.standard_normal(3)),
                                       Attachment(-1, rng.standard_normal(3))],
                                      LinearSpringDamper(4.0, rest_length=0.5)),
        "frame spring": FrameSpring(0, random_transform(rng), 1, random_transform(rng), 5.0, 2.0),
    }


def test_skew_part_is_antisymmetric_block_diagonal_and_linear(rng):
    f, g = rng.standard_normal(12), rng.standard_normal(12)
    A = stiffness_skew_part(f)
    np.testing.assert_allclose(A, -A.T, atol=1e-15)
    assert np.all(A[:6, 6:] == 0) and np.all(A[6:, :6] == 0)
    np.testing.assert_allclose(stiffness_skew_part(2 * f - g), 2 * A - stiffness_skew_part(g), atol=1e-14)


def test_skew_part_of_finite_difference_stiffness_matches_the_wrench(rng):
    """K by central differences along E exp(h [e_k]) (independent of the library's K): its skew part is
    stiffness_skew_part(f); the opposite sign is caught."""
    for name, force in conservative_forces(rng).items():
        E = np.stack([random_transform(rng) for _ in range(2)])
        phi = np.zeros((2, 6))
        f = force.evaluate(E, phi).f
        K = np.zeros((12, 12))
        for b in range(2):
            def wrench(Eb, b=b, E=E, force=force, phi=phi):
                Es = E.copy()
                Es[b] = Eb
                return force.evaluate(Es, phi).f
            K[:, 6 * b: 6 * b + 6] = numerical_derivative(wrench, E[b], 1e-5, space="se3")
        skew = K - K.T
        scale = np.abs(K).max()
        assert np.abs(skew - stiffness_skew_part(f)).max() < 1e-7 * scale, name
        assert np.abs(skew + stiffness_skew_part(f)).max() > 1e-2 * scale, name


def test_library_stiffness_skew_part_is_exactly_predicted(rng):
    for _ in range(5):
        for name, force in conservative_forces(rng).items():
            E = np.stack([random_transform(rng) for _ in range(2)])
            terms = force.evaluate(E, np.zeros((2, 6)))
            assert np.abs(terms.K - terms.K.T - stiffness_skew_part(terms.f)).max() < 1e-12 * max(
                1.0, np.abs(terms.K).max()), name


@pytest.mark.parametrize("f", [np.zeros(5), np.zeros((2, 6)), [np.nan] * 6])
def test_bad_wrench_is_refused(f):
    with pytest.raises(ValueError, match="argument 'f'"):
        stiffness_skew_part(f)
