"""Claims of book/appendix/engineer_quaternions (ArtiSynth notes §0.2): quaternions beside the ball joints."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from redmax_edu.joints import SphericalEuler
from redmax_edu.lie import exp_so3, log_so3, random_rotation
from redmax_edu.quaternion import (
    integrate_orientation,
    quat_from_rotation,
    quat_from_rotvec,
    quat_multiply,
    quat_rate,
    quat_rate_matrix,
    quat_step,
    quat_to_rotation,
)

CHOICES = ("quaternion", "quaternion_exp", "exponential", "XYZ")
STEPS = (100, 200, 400, 800)
T = 2.0
R0 = exp_so3([0.2, -0.1, 0.3])


def omega(t):
    """The page's tumble, mostly about the body's y axis."""
    return np.array([0.4 * np.sin(2 * t), 1.2, 0.3 * np.cos(t)])


@pytest.fixture(scope="module")
def side_by_side():
    """Angle errors against a scipy solution at rtol 1e-12 (the page's reference), per choice and n."""
    reference = solve_ivp(lambda t, q: quat_rate(q / np.linalg.norm(q), omega(t), "body"),
                          (0, T), quat_from_rotation(R0), rtol=1e-12, atol=1e-12, dense_output=True).sol

    def errors(R, times):
        out = []
        for Rk, t in zip(R, times, strict=True):
            qr = reference(t)
            out.append(np.linalg.norm(log_so3(quat_to_rotation(qr / np.linalg.norm(qr)).T @ Rk)))
        return np.array(out)

    return {(c, n): errors(integrate_orientation(omega, R0, T, n, c)[0], np.linspace(0, T, n + 1))
            for c in CHOICES for n in STEPS}


def test_ij_is_k_and_ji_is_minus_k():
    i, j = np.array([0.0, 1, 0, 0]), np.array([0.0, 0, 1, 0])
    assert np.array_equal(quat_multiply(i, j), [0, 0, 0, 1])
    assert np.array_equal(quat_multiply(j, i), [0, 0, 0, -1])


def test_rate_matrix_columns_have_length_one_half_and_are_orthogonal_to_q(rng):
    """'Its three columns have length 1/2, are orthogonal to each other and to q'."""
    for frame in ("world", "body"):
        q = quat_from_rotation(random_rotation(rng))
        W = quat_rate_matrix(q, frame)
        assert np.abs(W.T @ W - np.eye(3) / 4).max() < 1e-14
        assert np.abs(q @ W).max() < 1e-14


def test_raw_euler_steps_grow_the_norm_by_the_stated_factor(rng):
    """'|q| after 200 raw Euler steps matches (1 + h^2|w|^2/4)^(n/2)', and the page's run ends at 1.39."""
    for w in (rng.standard_normal(3), np.array([1.0, -2.0, 0.5])):
        q0, h, n = quat_from_rotation(random_rotation(rng)), 0.05, 200
        raw = q0.copy()
        for _ in range(n):
            raw = raw + h * quat_rate(raw / np.linalg.norm(raw), w) * np.linalg.norm(raw)
        predicted = (1 + h**2 * (w @ w) / 4) ** (n / 2)
        assert abs(np.linalg.norm(raw) - predicted) < 1e-12 * predicted
    assert round(float(np.linalg.norm(raw)), 2) == 1.39
    assert round(float(np.linalg.norm(w)), 2) == 2.29


def test_renormalised_step_loses_h3_w3_over_12_and_is_second_order_for_constant_omega(rng):
    """'the angle lost per step is h^3|w|^3/12 + O(h^5)', 'even second order there'."""
    for x in (1e-2, 2e-2, 4e-2):
        lost = x - 2 * np.arctan(x / 2)
        assert abs(lost - x**3 / 12) < x**5 / 50  # the next term of the series is x^5/80
    q0, w = quat_from_rotation(random_rotation(rng)), rng.standard_normal(3)
    exact = quat_multiply(quat_from_rotvec(w), q0)
    errs = []
    for n in (50, 100, 200):
        q = q0
        for _ in range(n):
            q = quat_step(q, w, 1.0 / n, "world", "euler")
        errs.append(np.linalg.norm(q - exact))
    assert np.all(np.abs(np.log2(np.array(errs[:-1]) / errs[1:]) - 2) < 0.05)


def test_every_choice_is_first_order_on_the_tumble(side_by_side):
    for c in CHOICES:
        e = np.array([side_by_side[c, n].max() for n in STEPS])
        assert np.all(np.abs(np.log2(e[:-1] / e[1:]) - 1) < 0.05), c


def test_xyz_chart_comes_within_14_degrees_of_gimbal_lock():
    """'|det S| dips to 0.24, q2 about 14 degrees from pi/2' (between 0.2 and 0.3 in the check cell)."""
    angles = integrate_orientation(omega, R0, T, 200, "XYZ")[1]
    closest = min(abs(SphericalEuler("XYZ").det_S(a)) for a in angles)
    assert 0.2 < closest < 0.3
    assert round(float(closest), 2) == 0.24
    assert round(90 - np.degrees(np.arccos(closest))) == 14


def test_chart_error_is_over_5_times_and_others_agree_within_10_percent(side_by_side):
    for n in STEPS:
        worst = {c: side_by_side[c, n].max() for c in CHOICES}
        assert worst["XYZ"] > 5 * worst["quaternion"]
        spread = np.ptp([worst[c] for c in CHOICES[:3]])
        assert spread < 0.1 * worst["quaternion"]


def test_chart_ends_between_8_and_10_times_the_quaternion_error(side_by_side):
    ratio = side_by_side["XYZ", 200][-1] / side_by_side["quaternion", 200][-1]
    assert 8 < ratio < 10
