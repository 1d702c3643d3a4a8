"""Claims of book/01_maximal/09_forces (§1.9): every force's K and D match finite differences."""

import numpy as np
import pytest

from redmax_edu.checks import check_derivative
from redmax_edu.lie import brac, random_transform
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

BOUND = 1e-9  # the page's bound: relative error at the best finite-difference step


def _examples(rng):
    """The forces of the page's table, each at a random state of two bodies (same parameters)."""

    def state(below_ground=False):
        E = np.stack([random_transform(rng) for _ in range(2)])
        if below_ground:
            E[:, 2, 3] = [-0.5, -0.6]
        return E, rng.standard_normal((2, 6))

    def point(body):
        return Attachment(body, rng.standard_normal(3))

    corners = 0.2 * rng.standard_normal((4, 3))
    return {
        "damping": (BodyDamping(0, 0.7), *state()),
        "point force": (PointForce(1, rng.standard_normal(3), rng.standard_normal(3), 3.0), *state()),
        "gravity": (Gravity(0, mass=2.0), *state()),
        "Coriolis": (Coriolis(1, np.diag([0.3, 0.4, 0.5, 2.0, 2.0, 2.0])), *state()),
        "point spring": (PointSpring(point(0), point(1), 5.0, damping=0.8), *state()),
        "ground, static friction": (GroundPenalty(0, corners, kn=100.0, kd=2.0, kt=50.0, mu=0.8),
                                    *state(below_ground=True)),
        "ground, dynamic friction": (GroundPenalty(1, corners, kn=100.0, kd=2.0, kt=500.0, mu=0.3),
                                     *state(below_ground=True)),
        "spring-damper": (Spring([point(0), point(1)], LinearSpringDamper(4.0, 0.6, 0.5)), *state()),
        "multi-point spring": (Spring([point(0), point(1), point(-1), point(0)],
                                      LinearSpringDamper(4.0, 0.6, 0.5)), *state()),
        "cable": (Spring([point(0), point(-1), point(1)], CableLaw(4.0, 0.6, 0.5)), *state()),
        "frame spring": (FrameSpring(0, random_transform(rng), 1, random_transform(rng), kt=3.0, kr=2.0,
                                     dt=0.5, dr=0.7), *state()),
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_s1_9_every_K_and_D_matches_central_differences_to_1e_9(seed):
    """§1.9, 'Every force, checked': each force's K and D agree with central differences to a
    relative error below 1e-9 (the bound the page prints), at several random states."""
    rng = np.random.default_rng(seed)
    for name, (force, E, phi) in _examples(rng).items():
        terms = force.evaluate(E, phi)
        cK = check_derivative(lambda X, F=force, p=phi: F.evaluate(X, p).f, E, terms.K, space="se3")
        cD = check_derivative(lambda p, F=force, X=E: F.evaluate(X, p.reshape(2, 6)).f, phi.ravel(),
                              terms.D)
        assert cK.error < BOUND, (name, "K", cK.error)
        assert cD.error < BOUND, (name, "D", cD.error)


def test_s1_9_the_check_rejects_a_flipped_eq_1_32(rng):
    """§1.9, 'A check that fails when it should': flipping the lower block of Eq. (1.32) fails."""
    E = random_transform(rng)[None]
    r, a, k = rng.standard_normal(3), rng.standard_normal(3), 2.5
    pull = PointForce(0, r, a, k)
    phi = rng.standard_normal((1, 6))
    wrong = pull.evaluate(E, phi).K.copy()
    np.testing.assert_allclose(wrong[3:, :3], k * brac(E[0, :3, :3].T @ a), atol=1e-12)
    wrong[3:, :3] *= -1
    assert not check_derivative(lambda X: pull.evaluate(X, phi).f, E, wrong, space="se3").ok
