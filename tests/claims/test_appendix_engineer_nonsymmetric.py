"""Claims of book/appendix/engineer_nonsymmetric (ArtiSynth notes §0.23): K - K^T = A(f), symmetric at
equilibrium, and the order lost by symmetrising."""

import numpy as np
import pytest

from redmax_edu.lie import exp_se3, random_transform
from redmax_edu.maximal.forces import (
    Attachment,
    FrameSpring,
    Gravity,
    LinearSpringDamper,
    PointSpring,
    Spring,
    stiffness_skew_part,
)


def page_forces(rng):
    return {
        "gravity": Gravity(0, 2.0),
        "point spring": PointSpring(Attachment(0, rng.standard_normal(3)),
                                    Attachment(-1, rng.standard_normal(3)), 3.0),
        "axial spring": Spring([Attachment(0, rng.standard_normal(3)), Attachment(1, rng.standard_normal(3))],
                               LinearSpringDamper(4.0, rest_length=0.5)),
        "frame spring": FrameSpring(0, random_transform(rng), 1, random_transform(rng), 5.0, 2.0),
    }


def relative_skew(K):
    return np.abs(K - K.T).max() / np.abs(K).max()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_k_is_far_from_symmetric_and_its_skew_part_is_a_of_f(seed):
    """'|K - K^T| / |K| above 0.1' and 'K - K^T = A to 1e-12' for the page's four forces."""
    rng = np.random.default_rng(seed)
    E = np.stack([random_transform(rng) for _ in range(2)])
    for name, force in page_forces(rng).items():
        t = force.evaluate(E, np.zeros((2, 6)))
        assert relative_skew(t.K) > 0.1, name
        assert np.abs(t.K - t.K.T - stiffness_skew_part(t.f)).max() < 1e-12 * np.abs(t.K).max(), name


def test_axial_spring_is_symmetric_at_rest_length_only(rng):
    for _ in range(5):
        E = np.stack([random_transform(rng) for _ in range(2)])
        a, b = Attachment(0, rng.standard_normal(3)), Attachment(1, rng.standard_normal(3))
        x = [E[0, :3, :3] @ a.r + E[0, :3, 3], E[1, :3, :3] @ b.r + E[1, :3, 3]]
        length = np.linalg.norm(x[1] - x[0])
        at_rest = Spring([a, b], LinearSpringDamper(4.0, rest_length=length)).evaluate(E, np.zeros((2, 6)))
        off = Spring([a, b], LinearSpringDamper(4.0, rest_length=length - 1e-4)).evaluate(E, np.zeros((2, 6)))
        assert np.abs(at_rest.f).max() < 1e-12 and relative_skew(at_rest.K) < 1e-12
        assert np.abs(off.f).max() > 1e-12 and relative_skew(off.K) > 1e-12


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_linearisation_is_second_order_with_k_and_first_order_with_its_symmetric_part(seed):
    """'slope within 0.1 of 2' with K, 'within 0.1 of 1' with (K + K^T)/2, for a frame spring."""
    rng = np.random.default_rng(seed)
    E = np.stack([random_transform(rng) for _ in range(2)])
    force = FrameSpring(0, random_transform(rng), 1, random_transform(rng), 5.0, 2.0)
    phi = np.zeros((2, 6))
    t = force.evaluate(E, phi)
    K_sym = 0.5 * (t.K + t.K.T)
    eta = rng.standard_normal(12)
    eps = np.logspace(-1, -5, 9)
    err_K, err_sym = [], []
    for e in eps:
        moved = np.stack([E[b] @ exp_se3(e * eta[6 * b: 6 * b + 6]) for b in range(2)])
        change = force.evaluate(moved, phi).f - t.f
        err_K.append(np.linalg.norm(change - e * t.K @ eta))
        err_sym.append(np.linalg.norm(change - e * K_sym @ eta))
    assert abs(np.polyfit(np.log10(eps), np.log10(err_K), 1)[0] - 2) < 0.1
    assert abs(np.polyfit(np.log10(eps), np.log10(err_sym), 1)[0] - 1) < 0.1
