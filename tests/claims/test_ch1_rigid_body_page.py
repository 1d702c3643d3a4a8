"""Claims of book/01_maximal/06_rigid_body (§1.6) added with the derivation of the Coriolis wrench.

The earlier §1.6 claims (classic form, free flight, tennis racket) are in test_ch1_maximal.py.
"""

import numpy as np
import pytest

from redmax_edu.checks import check_derivative
from redmax_edu.lie import ad, adjoint, exp_se3, inv_se3, random_transform
from redmax_edu.maximal.body import RigidBody, newton_euler_acceleration, spatial_momentum
from redmax_edu.maximal.simulate import simulate_rk45
from redmax_edu.maximal.system import System

M_PAGE = np.diag([0.2, 0.5, 0.6, 2.0, 2.0, 2.0])


@pytest.fixture(scope="module")
def free():
    return System([RigidBody.cuboid("book", [0.24, 0.16, 0.04], density=600.0)], gravity=np.zeros(3))


def test_s1_6_transported_momentum_rate_is_minus_a_inverse_transpose_ad_transpose(rng):
    """§1.6, 'Where the Coriolis wrench comes from': d/dt A^-1 = -ad(phi) A^-1, so for a frozen
    body momentum mu, d/dt (A^-T mu) = -A^-T ad(phi)^T mu (checked by finite differences)."""
    for _ in range(10):
        E, phi = random_transform(rng), rng.standard_normal(6)
        mu = M_PAGE @ phi
        rate = -adjoint(inv_se3(E)).T @ ad(phi).T @ mu

        def world(t, E=E, phi=phi, mu=mu):
            return adjoint(inv_se3(E @ exp_se3(t[0] * phi))).T @ mu

        def a_inv(t, E=E, phi=phi):
            return np.linalg.inv(adjoint(E @ exp_se3(t[0] * phi)))

        check = check_derivative(world, [0.0], rate[:, None])
        assert check.ok, check.error
        D = check_derivative(a_inv, [0.0], (-ad(phi) @ np.linalg.inv(adjoint(E)))[..., None])
        assert D.ok, D.error


def test_s1_6_newton_euler_is_momentum_conservation(rng):
    """§1.6: the world momentum A^-T M phi changes at the world wrench A^-T f exactly when
    M phidot = ad(phi)^T M phi + f (Eq. 1.21); a wrong sign of the Coriolis term breaks it."""
    for _ in range(10):
        E, phi, f = random_transform(rng), rng.standard_normal(6), rng.standard_normal(6)
        phidot = newton_euler_acceleration(M_PAGE, phi, f)

        def world(t, phidot=phidot, E=E, phi=phi):  # first-order motion from t = 0
            return spatial_momentum(E @ exp_se3(t[0] * phi), M_PAGE, phi + t[0] * phidot)

        target = adjoint(inv_se3(E)).T @ f
        assert check_derivative(world, [0.0], target[:, None]).ok
        wrong = np.linalg.solve(M_PAGE, -ad(phi).T @ M_PAGE @ phi + f)

        def world_wrong(t, wrong=wrong, E=E, phi=phi):
            return spatial_momentum(E @ exp_se3(t[0] * phi), M_PAGE, phi + t[0] * wrong)

        assert not check_derivative(world_wrong, [0.0], target[:, None]).ok


def test_s1_6_at_the_centre_of_mass_spin_and_translation_do_not_exchange_momentum(rng):
    """§1.6: at the centre of mass ad(phi)^T M phi = -(w x Iw, w x m nu): the angular part
    involves w alone and the linear part is perpendicular to nu; away from the centre of mass
    the rows mix."""
    I_rot, m = np.array([0.2, 0.5, 0.6]), 2.0
    for _ in range(10):
        phi = rng.standard_normal(6)
        w, nu = phi[:3], phi[3:]
        c = ad(phi).T @ M_PAGE @ phi
        np.testing.assert_allclose(c, -np.concatenate([np.cross(w, I_rot * w), np.cross(w, m * nu)]),
                                   atol=1e-12)
        other = np.concatenate([w, rng.standard_normal(3)])
        np.testing.assert_allclose((ad(other).T @ M_PAGE @ other)[:3], c[:3], atol=1e-12)
        assert abs(c[3:] @ nu) < 1e-12
    # frame off the centre of mass: M has coupling blocks and the angular row depends on nu
    E_off = np.eye(4)
    E_off[:3, 3] = [0.1, 0.0, 0.05]
    A = adjoint(E_off)
    M_off = A.T @ M_PAGE @ A
    phi = rng.standard_normal(6)
    other = np.concatenate([phi[:3], rng.standard_normal(3)])
    assert not np.allclose((ad(phi).T @ M_off @ phi)[:3], (ad(other).T @ M_off @ other)[:3])


def test_s1_6_thrown_book_keeps_momentum_spins_as_if_still_and_flies_straight(free):
    """§1.6: a book thrown with linear velocity (0.3, -0.2, 0.5): world momentum (all six)
    constant to 1e-8 relative, spin equal to the throw without linear velocity to 1e-8 rad/s,
    |nu| constant and the centre of mass on a straight line, to 1e-8, over 10 s."""
    spin_only = simulate_rk45(free, np.eye(4)[None], np.array([[1.0, 0.5, 4.0, 0, 0, 0]]), 10.0, 501)
    thrown = simulate_rk45(free, np.eye(4)[None], np.array([[1.0, 0.5, 4.0, 0.3, -0.2, 0.5]]), 10.0, 501)
    h = np.array([free.momentum(E, p) for E, p in zip(thrown.E, thrown.phi, strict=True)])
    assert np.abs(h - h[0]).max() < 1e-8 * np.linalg.norm(h[0])
    assert np.abs(thrown.phi[:, 0, :3] - spin_only.phi[:, 0, :3]).max() < 1e-8
    speed = np.linalg.norm(thrown.phi[:, 0, 3:], axis=1)
    assert np.abs(speed - speed[0]).max() < 1e-8
    assert np.abs(thrown.E[:, 0, :3, 3] - np.outer(thrown.t, [0.3, -0.2, 0.5])).max() < 1e-8
    # and the spin does wander, so the comparison is not trivial
    assert np.ptp(spin_only.phi[:, 0, 0]) > 0.1
