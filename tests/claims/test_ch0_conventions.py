"""Claims of book/00_intro/conventions: each convention the page states holds in the library."""

import numpy as np
import pytest

from redmax_edu.checks import numerical_derivative
from redmax_edu.lie import brac, exp_se3, gamma, inv_se3, random_transform
from redmax_edu.units import GRAVITY, from_cgs


def test_twist_lists_angular_velocity_first():
    """Conventions, 'Twists': (0,0,1,0,0,0) spins about z in place; (0,0,0,1,0,0) slides along x."""
    spin, slide = exp_se3([0, 0, 1, 0, 0, 0]), exp_se3([0, 0, 0, 1, 0, 0])
    np.testing.assert_allclose(spin[:3, 0], [np.cos(1), np.sin(1), 0], atol=1e-15)
    np.testing.assert_allclose(spin[:3, 3], 0, atol=1e-15)
    np.testing.assert_allclose(slide[:3, :3], np.eye(3), atol=1e-15)
    np.testing.assert_allclose(slide[:3, 3], [1, 0, 0], atol=1e-15)


def test_body_twist_multiplies_the_frame_from_the_right(rng):
    """Conventions, 'Twists': dE/dt = E [phi] (Eq. 1.8), and not [phi] E."""
    E, phi = random_transform(rng), rng.standard_normal(6)
    Edot = numerical_derivative(lambda t: E @ exp_se3(t[0] * phi), [0.0])[..., 0]
    # central differences at h = 1e-6 are accurate to ~1e-10 on O(1) entries
    np.testing.assert_allclose(Edot, E @ brac(phi), atol=1e-8)
    assert not np.allclose(Edot, brac(phi) @ E, atol=1e-8)


def test_frame_names_cancel_when_transforms_are_chained(rng):
    """Conventions, 'Frames': x_a = E_a_b x_b, E_a_c = E_a_b E_b_c, inv_se3(E_a_b) = E_b_a."""
    E_a_b, E_b_c = random_transform(rng), random_transform(rng)
    x_c = np.append(rng.standard_normal(3), 1.0)
    np.testing.assert_allclose(E_a_b @ (E_b_c @ x_c), (E_a_b @ E_b_c) @ x_c, atol=1e-13)
    np.testing.assert_allclose(inv_se3(E_a_b) @ (E_a_b @ x_c), x_c, atol=1e-13)


def test_derivative_index_comes_last(rng):
    """Conventions, 'Derivatives': for f: R^3 -> R^(2x2) the derivative has shape (2, 2, 3)."""
    x0 = rng.standard_normal(3)
    d = numerical_derivative(lambda x: np.outer(x[:2], x[1:]), x0)
    assert d.shape == (2, 2, 3)
    np.testing.assert_allclose(d[..., 1], [[x0[0], 0], [2 * x0[1], x0[2]]], atol=1e-8)


def _point_cloud_inertia(points, masses):
    return sum(m * gamma(r).T @ gamma(r) for r, m in zip(points, masses, strict=True))


def test_frame_at_centre_of_mass_makes_spatial_inertia_diagonal():
    """Conventions, 'Bodies': with the frame at the COM on the box axes, M = diag(I, m, m, m);
    moved off the COM, the coupling block sum m_k [r_k] appears."""
    axes = [np.linspace(-a / 2, a / 2, n) for a, n in ((0.4, 8), (0.2, 4), (0.1, 2))]
    points = np.array(np.meshgrid(*axes, indexing="ij")).reshape(3, -1).T
    masses = np.full(len(points), 1e-3)
    M = _point_cloud_inertia(points, masses)
    np.testing.assert_allclose(M, np.diag(np.diag(M)), atol=1e-15)
    offset = np.array([0.1, 0.0, 0.05])
    M_off = _point_cloud_inertia(points + offset, masses)
    np.testing.assert_allclose(M_off[:3, 3:], masses.sum() * brac(offset), atol=1e-15)
    np.testing.assert_allclose(M_off[3:, 3:], masses.sum() * np.eye(3), atol=1e-15)


def test_units_are_si_and_reference_cgs_values_convert():
    """Conventions, 'Units': gravity (0, 0, -9.81) m/s^2; cgs mass and inertia convert exactly."""
    np.testing.assert_array_equal(GRAVITY, [0.0, 0.0, -9.81])
    sides_cm = np.array([40.0, 20.0, 10.0])
    mass_g = sides_cm.prod()  # 1 g/cm^3
    sides_m = from_cgs(sides_cm, "length")
    mass_kg = from_cgs(1.0, "density") * sides_m.prod()
    assert from_cgs(mass_g, "mass") == pytest.approx(mass_kg, rel=1e-15)
    inertia_cgs = mass_g * (sides_cm[1] ** 2 + sides_cm[2] ** 2) / 12
    inertia_si = mass_kg * (sides_m[1] ** 2 + sides_m[2] ** 2) / 12
    assert from_cgs(inertia_cgs, "inertia") == pytest.approx(inertia_si, rel=1e-15)
    assert from_cgs(-980.0, "acceleration") == -9.8


@pytest.mark.parametrize(("call", "named"), [
    (lambda: exp_se3(np.ones(5)), "'phi'"),
    (lambda: exp_se3([0, 0, np.nan, 0, 0, 0]), "'phi'"),
    (lambda: inv_se3(np.diag([2.0, 2.0, 2.0, 1.0])), "'E'"),
])
def test_bad_input_error_names_the_argument(call, named):
    """Conventions, 'Bad input': a ValueError naming the argument at fault."""
    with pytest.raises(ValueError, match=named):
        call()
