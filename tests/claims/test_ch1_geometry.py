"""Claims of book/01_maximal (§1.1-1.5 of the writeup): each test cites the sentence it checks."""

import numpy as np
import pytest
from scipy.linalg import expm

from redmax_edu.checks import check_derivative, numerical_derivative, step_sweep
from redmax_edu.lie import (
    ad,
    adjoint,
    adjoint_dot,
    brac,
    exp_se3,
    exp_so3,
    gamma,
    inv_se3,
    log_se3,
    log_so3,
    material_jacobian,
    random_transform,
    screw,
    unbrac,
)
from redmax_edu.viz.explorers import ADJOINT_SETUP, TWIST_PRESETS, observer_pose

EDGE_ANGLES = [0.0, 1e-8, np.pi - 1e-8, np.pi]


def _twist(rng, angle):
    n = rng.standard_normal(3)
    return np.concatenate([angle * n / np.linalg.norm(n), rng.standard_normal(3)])


# --- §1.1 -------------------------------------------------------------------------------------

def test_s1_1_inverse_by_eq_1_4_agrees_with_a_general_inverse_to_1e_12(rng):
    """§1.1: 'Eq. (1.4) agrees with a general inverse' (checked to 1e-12 on the page)."""
    for _ in range(100):
        E = random_transform(rng, scale=3.0)
        np.testing.assert_allclose(inv_se3(E), np.linalg.inv(E), rtol=0, atol=1e-12)


def test_s1_1_reflection_is_refused():
    """§1.1: 'a reflection is refused' with a message naming the argument."""
    with pytest.raises(ValueError, match="'E' is a reflection"):
        inv_se3(np.diag([1.0, 1.0, -1.0, 1.0]))


# --- §1.2 -------------------------------------------------------------------------------------

def test_s1_2_e_inverse_edot_is_a_twist_for_a_motion_with_varying_twist(rng):
    """§1.2: 'for any smooth motion, E^-1 Edot has a skew-symmetric upper-left block and a zero
    bottom row', tested on exp(t[A]) exp(t^2[B]) at several times."""
    A, B = rng.standard_normal(6), rng.standard_normal(6)

    def motion(t):
        return exp_se3(t * A) @ exp_se3(t * t * B)

    for t0 in (0.0, 0.7, 1.9):
        X = inv_se3(motion(t0)) @ numerical_derivative(lambda t: motion(t[0]), [t0])[..., 0]
        # central differences: ~1e-9 absolute on entries of size ~10
        np.testing.assert_allclose(X[:3, :3], -X[:3, :3].T, atol=1e-7)
        np.testing.assert_allclose(X[3], 0, atol=1e-7)


def test_s1_2_one_body_twist_two_world_twists_each_constant_while_spinning(rng):
    """§1.2: a constant body twist gives a constant world twist Ad(E0) phi along the motion,
    and the same body twist at two placements gives different world twists; the page's book
    spinning at 2 rad/s one metre away, turned a quarter turn, has world twist (0,2,0, 0,0,2)."""
    for _ in range(20):
        E0, phi = random_transform(rng), rng.standard_normal(6)
        for t in np.linspace(0, 3, 7):
            np.testing.assert_allclose(adjoint(E0 @ exp_se3(t * phi)) @ phi, adjoint(E0) @ phi,
                                       atol=1e-12)
    spin = np.array([2.0, 0, 0, 0, 0, 0])
    E_there = exp_se3([0, 0, np.pi / 2, 0, 0, 0])
    E_there[:3, 3] = [1.0, 0, 0]
    np.testing.assert_allclose(adjoint(np.eye(4)) @ spin, spin)
    np.testing.assert_allclose(adjoint(E_there) @ spin, [0, 2, 0, 0, 0, 2], atol=1e-12)


def test_s1_2_screw_preset_turns_once_and_advances_two_pi_pitch():
    """§1.2: points on the axis move at h omega; after t = 2 pi/|omega| the orientation is
    restored and the frame has moved 2 pi h along the axis."""
    phi = TWIST_PRESETS["screw"]
    c, d, h = screw(phi)
    np.testing.assert_allclose(np.cross(phi[:3], c) + phi[3:], h * phi[:3], atol=1e-15)
    E = exp_se3(2 * np.pi / np.linalg.norm(phi[:3]) * phi)
    np.testing.assert_allclose(E[:3, :3], np.eye(3), atol=1e-14)
    np.testing.assert_allclose(E[:3, 3], 2 * np.pi * h * d, atol=1e-14)


def test_s1_2_every_body_point_keeps_its_speed_under_a_constant_twist(rng):
    """§1.2 (twist explorer): 'under a constant twist every body point keeps its speed'."""
    phi, r = TWIST_PRESETS["screw"], rng.standard_normal(3)
    speeds = [np.linalg.norm(material_jacobian(exp_se3(t * phi), r) @ phi) for t in np.linspace(0, 3, 13)]
    np.testing.assert_allclose(speeds, speeds[0], rtol=1e-14)


# --- §1.3 -------------------------------------------------------------------------------------

def test_s1_3_exp_agrees_with_scipy_expm_to_1e_12_at_random_and_edge_angles(rng):
    """§1.3: 'exp_so3 and exp_se3 agree with scipy.linalg.expm to 1e-12'."""
    for theta in EDGE_ANGLES + list(rng.uniform(0, 3 * np.pi, 200)):
        phi = _twist(rng, theta)
        assert np.abs(exp_so3(phi[:3]) - expm(brac(phi[:3]))).max() < 1e-12
        assert np.abs(exp_se3(phi) - expm(brac(phi))).max() < 1e-12


def test_s1_3_round_trips_hold_to_1e_12_at_every_angle(rng):
    """§1.3: 'exp(log(E)) = E to 1e-12, including angle pi' and 'log(exp(phi)) = phi to 1e-12
    for angles below pi'."""
    for theta in EDGE_ANGLES * 25 + list(rng.uniform(0, np.pi, 100)):
        phi = _twist(rng, theta)
        E = exp_se3(phi)
        assert np.abs(exp_se3(log_se3(E)) - E).max() < 1e-12
        if theta < np.pi:
            assert np.abs(log_se3(E) - phi).max() < 1e-12
            assert np.abs(log_so3(E[:3, :3]) - phi[:3]).max() < 1e-12


def test_s1_3_coefficient_written_as_is_loses_its_digits_as_the_angle_shrinks():
    """§1.3: (t - sin t)/t^3 written as is has relative error within 6 eps/t^2 (the absolute
    rounding error eps*t of t and sin t over the numerator t^3/6): about five digits left at
    1e-5, at most one at 1e-7, none below sqrt(3 eps) ~ 2.6e-8; the numerator at 1e-5 is about
    1.7e-16 and the absolute rounding error eps*t about 2e-21. The library keeps all digits."""
    from redmax_edu.lie import _t_minus_sin_over

    eps = np.finfo(float).eps

    def naive(t):
        return (t - np.sin(t)) / t**3

    def rel(t):
        return abs(naive(t) - 1 / 6) * 6

    def series(t):
        return 1 / 6 - t**2 / 120 + t**4 / 5040 - t**6 / 362880

    for t in np.logspace(-9, -1, 9):  # the page's verdict column
        assert abs(naive(t) - series(t)) <= 6 * eps / t**2 * series(t)
    assert round(-np.log10(6 * eps / 1e-5**2)) == 5  # "about five are left at 1e-5"
    assert 0.1 <= 6 * eps / 1e-7**2 < 1  # "at most one at 1e-7"
    assert np.sqrt(3 * eps) == pytest.approx(2.6e-8, rel=0.01)
    for t in (1e-8, 1e-9):  # below sqrt(3 eps): nothing left
        assert t < np.sqrt(3 * eps) and rel(t) > 0.5
    assert 1e-5**3 / 6 == pytest.approx(1.7e-16, rel=0.02)
    assert 1.5e-21 < eps * 1e-5 < 2.5e-21
    for t in (1e-9, 1e-7, 1e-5):
        assert _t_minus_sin_over(np.float64(t)) == pytest.approx(1 / 6 - t * t / 120, rel=1e-15)


def test_s1_3_textbook_log_fails_near_pi_where_log_so3_does_not(rng):
    """§1.3: at pi - 1e-8 the arccos/skew-part logarithm is off by more than 1e-6, while
    log_so3 recovers the rotation vector to 1e-12."""
    def textbook(R):
        theta = np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1))
        skew = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
        return theta / (2 * np.sin(theta)) * skew

    worst_textbook, worst_library = 0.0, 0.0
    for _ in range(100):
        w = _twist(rng, np.pi - 1e-8)[:3]
        R = exp_so3(w)
        worst_textbook = max(worst_textbook, np.abs(textbook(R) - w).max())
        worst_library = max(worst_library, np.abs(log_so3(R) - w).max())
    assert worst_textbook > 1e-6
    assert worst_library < 1e-12


def test_s1_3_best_steps_of_the_eq_1_11_check(rng):
    """§1.3: checking Eq. (1.8) by Eq. (1.11), the forward difference is best within a decade
    of 1e-8, the central difference within a decade of 1e-5, and the complex step stays below
    1e-14 for every step from 1e-8 to 1e-20."""
    for _ in range(5):
        E, phi = random_transform(rng), rng.standard_normal(6)
        analytic = (E @ brac(phi))[..., None]

        def moved(t, E=E, phi=phi):
            return E @ exp_se3(t[0] * phi)

        steps, errors = step_sweep(moved, [0.0], analytic, method="forward")
        assert 1e-9 <= steps[errors.argmin()] <= 1e-7 and errors.min() < 1e-7
        steps, errors = step_sweep(moved, [0.0], analytic, method="central")
        assert 1e-6 <= steps[errors.argmin()] <= 1e-4 and errors.min() < 1e-9
        steps, errors = step_sweep(moved, [0.0], analytic, method="complex")
        assert (errors[steps <= 1e-8] < 1e-14).all()


# --- §1.4 -------------------------------------------------------------------------------------

def test_s1_4_writeup_examples_of_point_velocity():
    """§1.4: the point (1, 0, 0) of an unmoved body moves along x when sliding along x, and
    along y when spinning about z."""
    J = material_jacobian(np.eye(4), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(J @ [0, 0, 0, 1, 0, 0], [1, 0, 0])
    np.testing.assert_array_equal(J @ [0, 0, 1, 0, 0, 0], [0, 1, 0])


def test_s1_4_point_velocity_matches_finite_differences(rng):
    """§1.4: 'Eq. (1.12) point velocity matches central differences'."""
    for _ in range(10):
        E, phi, r = random_transform(rng), rng.standard_normal(6), rng.standard_normal(3)
        check = check_derivative(lambda t, E=E, phi=phi, r=r: (E @ exp_se3(t[0] * phi) @ np.append(r, 1))[:3],
                                 [0.0], (material_jacobian(E, r) @ phi)[:, None])
        assert check.ok, check.error


def test_s1_4_velocity_vanishes_at_the_instantaneous_centre():
    """§1.4: a planar twist's velocity field is zero at the screw axis point."""
    phi = np.array([0.0, 0.0, 1.5, 0.6, -0.3, 0.0])
    centre, _, pitch = screw(phi)
    assert pitch == 0.0
    np.testing.assert_allclose(gamma(centre) @ phi, 0, atol=1e-15)


def test_s1_4_wrench_of_a_point_force_and_its_power(rng):
    """§1.4: J^T f = (x cross f_b, f_b) with f_b = R^T f, and f . xdot = wrench . phi."""
    E, phi = random_transform(rng), rng.standard_normal(6)
    r, f = rng.standard_normal(3), rng.standard_normal(3)
    J = material_jacobian(E, r)
    f_b = E[:3, :3].T @ f
    np.testing.assert_allclose(J.T @ f, np.concatenate([np.cross(r, f_b), f_b]), atol=1e-14)
    assert f @ (J @ phi) == pytest.approx((J.T @ f) @ phi, rel=1e-13)


def test_s1_4_a_couple_is_a_pure_torque():
    """§1.4: equal and opposite forces at a and b give torque (a - b) x f and no force."""
    a, b, f = np.array([0.5, 0, 0]), np.array([-0.5, 0, 0]), np.array([0, 2.0, 0])
    w = material_jacobian(np.eye(4), a).T @ f + material_jacobian(np.eye(4), b).T @ (-f)
    np.testing.assert_allclose(w, np.concatenate([np.cross(a - b, f), np.zeros(3)]), atol=1e-15)


def test_s1_4_try_this_a_couple_ignores_translation_but_not_rotation():
    """§1.4, 'Try this': with the same world forces, translating the body leaves the couple's
    torque unchanged in body and world coordinates; turning it changes the world torque."""
    a, b, f = np.array([0.5, 0, 0]), np.array([-0.5, 0, 0]), np.array([0, 2.0, 0])

    def torques(E):
        w = material_jacobian(E, a).T @ f + material_jacobian(E, b).T @ (-f)
        assert np.allclose(w[3:], 0, atol=1e-14)
        return w[:3], E[:3, :3] @ w[:3]

    body0, world0 = torques(np.eye(4))
    body_t, world_t = torques(exp_se3([0, 0, 0, 1.0, 2.0, 0.5]))
    np.testing.assert_allclose(body_t, body0, atol=1e-14)
    np.testing.assert_allclose(world_t, world0, atol=1e-14)
    body_r, world_r = torques(exp_se3([0, 0, 1.0, 0, 0, 0]))
    assert not np.allclose(world_r, world0)
    np.testing.assert_allclose(world_r, np.cross(exp_so3([0, 0, 1.0]) @ (a - b), f), atol=1e-14)


# --- §1.5 -------------------------------------------------------------------------------------

def test_s1_5_writeup_example_of_a_world_twist():
    """§1.5: a body at (1, 0, 0) spinning about its y axis has world twist (0, 1, 0, 0, 0, 1)."""
    E = np.eye(4)
    E[:3, 3] = [1, 0, 0]
    np.testing.assert_array_equal(adjoint(E) @ [0, 1, 0, 0, 0, 0], [0, 1, 0, 0, 0, 1])


def test_s1_5_linear_part_is_the_velocity_of_the_body_point_at_the_origin(rng):
    """§1.5: the linear part of phi_b is the velocity of the body point passing through b's
    origin; the angular part is the body's angular velocity, rotated."""
    for _ in range(10):
        E_w_i, E_w_b, phi_i = random_transform(rng), random_transform(rng), rng.standard_normal(6)
        phi_b = adjoint(inv_se3(E_w_b) @ E_w_i) @ phi_i
        r0 = (inv_se3(E_w_i) @ E_w_b)[:3, 3]
        v0 = material_jacobian(E_w_i, r0) @ phi_i
        np.testing.assert_allclose(E_w_b[:3, :3] @ phi_b[3:], v0, atol=1e-12)
        np.testing.assert_allclose(E_w_b[:3, :3] @ phi_b[:3], E_w_i[:3, :3] @ phi_i[:3], atol=1e-13)


def test_s1_5_power_is_the_same_in_every_observer_frame_of_the_explorer():
    """§1.5 (adjoint explorer): as the observer b moves, phi_i, phi_w and the power stay fixed,
    and power computed in b equals power computed in w."""
    E_w_i, phi_i = ADJOINT_SETUP["E_w_i"], ADJOINT_SETUP["phi_i"]
    x = (E_w_i @ np.append(ADJOINT_SETUP["r_force"], 1))[:3]
    f = ADJOINT_SETUP["f_world"]
    w_w = np.concatenate([np.cross(x, f), f])
    phi_w = adjoint(E_w_i) @ phi_i
    power = w_w @ phi_w
    assert abs(power) > 0.1  # the explorer's power is not trivially zero
    for s in np.linspace(0, 1, 21):
        E_w_b = observer_pose(s)
        phi_b = adjoint(inv_se3(E_w_b) @ E_w_i) @ phi_i
        assert (adjoint(E_w_b).T @ w_w) @ phi_b == pytest.approx(power, rel=1e-13)


def test_s1_5_adjoint_rate_and_its_se3_derivatives(rng):
    """§1.5: Eq. (1.17); Eq. (1.19) matches central differences along the twist (Eq. 1.20);
    the six se(3) directional derivatives of the adjoint are A(E) ad(e_k)."""
    E, phi, nu = random_transform(rng), rng.standard_normal(6), rng.standard_normal(3)
    R = E[:3, :3]
    np.testing.assert_allclose(brac(R @ nu), R @ brac(nu) @ R.T, atol=1e-14)
    check = check_derivative(lambda t: adjoint(E @ exp_se3(t[0] * phi)), [0.0],
                             adjoint_dot(E, phi)[..., None])
    assert check.ok, check.error
    D = numerical_derivative(adjoint, E, space="se3")
    for k in range(6):
        np.testing.assert_allclose(D[..., k], adjoint(E) @ ad(np.eye(6)[k]), atol=1e-8)


def test_s1_5_ad_is_the_lie_bracket_and_adjoint_is_a_representation(rng):
    """§1.5: [ad(p1) p2] = [p1][p2] - [p2][p1]; A(E1 E2) = A(E1) A(E2); A(E^-1) = A(E)^-1."""
    p1, p2 = rng.standard_normal(6), rng.standard_normal(6)
    np.testing.assert_allclose(unbrac(brac(p1) @ brac(p2) - brac(p2) @ brac(p1)), ad(p1) @ p2, atol=1e-13)
    E1, E2 = random_transform(rng), random_transform(rng)
    np.testing.assert_allclose(adjoint(E1 @ E2), adjoint(E1) @ adjoint(E2), atol=1e-13)
    np.testing.assert_allclose(adjoint(inv_se3(E1)), np.linalg.inv(adjoint(E1)), atol=1e-12)
