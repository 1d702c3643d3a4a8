"""Claims of book/appendix/engineer_stress_springs (ArtiSynth notes §0.13): the stress-formulated
Jacobians, agreement with the library's strain springs, and the eigenvalues of compression."""

import numpy as np
import pytest

from redmax_edu.checks import check_derivative
from redmax_edu.deformable import DeformableSpring
from redmax_edu.truss import truss_spring


def eigenvalues(ratio, strain, k=1.0, r=1.0):
    _, K, _ = truss_spring([0.0, 0.0, 0.0], [ratio * r, 0.0, 0.0], k, r, strain)
    return K[1, 1], K[0, 0]


@pytest.mark.parametrize("strain", ["linear", "green"])
def test_k_matches_differences_and_the_material_term_alone_fails(rng, strain):
    for _ in range(5):
        y = rng.standard_normal(6)
        _, K, parts = truss_spring(y[:3], y[3:], 2.0, 0.8, strain)
        M = parts["material"]

        def both(z):
            f1 = truss_spring(z[:3], z[3:], 2.0, 0.8, strain)[0]
            return np.concatenate([f1, -f1])

        assert check_derivative(both, y, K).ok
        assert not check_derivative(both, y, np.block([[M, -M], [-M, M]])).ok


def test_zero_rest_length_and_the_library_strain_spring(rng):
    """'K11 = -k I, to 1e-14'; 'same force and stiffness as DeformableSpring, to 1e-12'."""
    for _ in range(5):
        x1, x2 = rng.standard_normal(3), rng.standard_normal(3)
        assert np.abs(truss_spring(x1, x2, 2.0, 0.0)[1][:3, :3] + 2.0 * np.eye(3)).max() < 1e-14
        K_strain, L = rng.uniform(1, 50), rng.uniform(0.1, 1.0)
        terms = DeformableSpring([[0.0, 0, 0], [L, 0, 0]], stiffness=K_strain, mass=1.0).elastic(
            np.array([x1, x2]), np.zeros((2, 3)))
        f1, K, _ = truss_spring(x1, x2, K_strain / L**2, L)
        assert np.abs(f1 - terms.f[0]).max() < 1e-12 * max(1.0, np.abs(f1).max())
        assert np.abs(K - terms.K).max() < 1e-12 * np.abs(K).max()


def test_compression_eigenvalues():
    """'across = +0.25 k' (linear) and '+0.18 k' (Green) at 80%, along negative; Green along
    -(k/2)(3 l^2/r^2 - 1), zero at r/sqrt(3) ~ 0.58 r; linear along -k everywhere; across crosses
    zero at the rest length."""
    assert abs(eigenvalues(0.8, "linear")[0] - 0.25) < 1e-12
    assert abs(eigenvalues(0.8, "green")[0] - 0.18) < 1e-12
    assert eigenvalues(0.8, "linear")[1] < 0 and eigenvalues(0.8, "green")[1] < 0
    for s in np.linspace(0.5, 1.5, 11):
        assert abs(eigenvalues(s, "green")[1] + 0.5 * (3 * s * s - 1)) < 1e-12
        assert abs(eigenvalues(s, "linear")[1] + 1.0) < 1e-12
        for strain in ("linear", "green"):
            across = eigenvalues(s, strain)[0]
            assert (across > 0) == (s < 1 - 1e-12) or abs(s - 1) < 1e-12
    assert abs(eigenvalues(1 / np.sqrt(3), "green")[1]) < 1e-12 and round(1 / np.sqrt(3), 2) == 0.58
