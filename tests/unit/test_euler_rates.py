"""Angle rates of the Euler charts from an angular velocity, and their derivatives (ArtiSynth notes §0.4)."""

import numpy as np
import pytest

from redmax_edu.checks import check_derivative
from redmax_edu.joints import SphericalEuler
from redmax_edu.joints.euler import CHART_NAMES, euler_angles
from redmax_edu.lie import brac, exp_so3, random_rotation


def regular_angles(rng, joint):
    """Angles on the chart's principal branch, at least ~17 degrees from its singularity."""
    while True:
        q = euler_angles(random_rotation(rng), joint.chart)
        if abs(joint.det_S(q)) > 0.3:
            return q


@pytest.mark.parametrize("chart", CHART_NAMES)
def test_columns_are_the_rotation_axes_and_world_is_R_times_body(rng, chart):
    j = SphericalEuler(chart)
    axis = {"X": 0, "Y": 1, "Z": 2}
    for _ in range(5):
        q = rng.uniform(-3, 3, 3)
        e = np.eye(3)
        Ra = exp_so3(q[0] * e[axis[chart[0]]])
        Rb = exp_so3(q[1] * e[axis[chart[1]]])
        axes = np.column_stack([e[axis[chart[0]]], Ra @ e[axis[chart[1]]], Ra @ Rb @ e[axis[chart[2]]]])
        np.testing.assert_allclose(j.angular_velocity_matrix(q), axes, atol=1e-14)
        R = j.Q(q)[:3, :3]
        np.testing.assert_allclose(j.angular_velocity_matrix(q, "body"), j.S(q)[:3], atol=1e-15)
        np.testing.assert_allclose(R @ j.angular_velocity_matrix(q, "body"), j.angular_velocity_matrix(q),
                                   atol=1e-14)


@pytest.mark.parametrize("chart", CHART_NAMES)
def test_angle_rates_are_the_derivative_of_the_angles_along_a_world_angular_velocity(rng, chart):
    """d/dt euler_angles(exp(t [w]) R(q)) at t = 0 is P^-1 w; a body-frame P^-1 is caught."""
    j = SphericalEuler(chart)
    for _ in range(5):
        q, w = regular_angles(rng, j), rng.standard_normal(3)
        R = j.Q(q)[:3, :3]

        def angles(t, R=R, w=w):
            return euler_angles(exp_so3(t[0] * w) @ R, chart)

        assert check_derivative(angles, [0.0], (j.angle_rate_matrix(q) @ w)[:, None]).ok
        assert not check_derivative(angles, [0.0], (j.angle_rate_matrix(q, "body") @ w)[:, None]).ok


@pytest.mark.parametrize("chart", CHART_NAMES)
@pytest.mark.parametrize("frame", ["world", "body"])
def test_rate_matrix_dot_matches_central_differences(rng, chart, frame):
    j = SphericalEuler(chart)
    for _ in range(3):
        q, qd = regular_angles(rng, j), rng.standard_normal(3)
        check = check_derivative(lambda t, q=q, qd=qd: j.angle_rate_matrix(q + t[0] * qd, frame), [0.0],
                                 j.angle_rate_matrix_dot(q, qd, frame)[..., None])
        assert check.ok, (chart, frame, check.error)


def test_a_world_derivative_without_the_rotation_term_is_caught(rng):
    """The mutant: Pdot = R Sdot (the [S qdot] S term forgotten) fails the check."""
    j = SphericalEuler("ZYX")
    q, qd = regular_angles(rng, j), rng.standard_normal(3)
    s, c = np.sin(q), np.cos(q)
    Pinv = j.angle_rate_matrix(q)
    wrong = -Pinv @ j.Q(q)[:3, :3] @ j._Sdot_top(s, c, qd) @ Pinv
    f = lambda t: j.angle_rate_matrix(q + t[0] * qd)  # noqa: E731
    assert check_derivative(f, [0.0], j.angle_rate_matrix_dot(q, qd)[..., None]).ok
    assert not check_derivative(f, [0.0], wrong[..., None]).ok
    # the forgotten term is R [omega_body] S, with omega_body = S qdot = R^T omega_world
    R = j.Q(q)[:3, :3]
    omega_world = j.angular_velocity_matrix(q) @ qd
    np.testing.assert_allclose(brac(j.S(q)[:3] @ qd), R.T @ brac(omega_world) @ R, atol=1e-14)


def test_roll_and_yaw_rows_have_length_one_over_cos_pitch(rng):
    j = SphericalEuler("ZYX")
    for _ in range(10):
        q = rng.uniform(-1.5, 1.5, 3)
        rows = j.angle_rate_matrix(q)
        np.testing.assert_allclose(np.linalg.norm(rows, axis=1),
                                   [1 / abs(np.cos(q[1])), 1.0, 1 / abs(np.cos(q[1]))], rtol=1e-13)


@pytest.mark.parametrize(("call", "words"), [
    (lambda j: j.angle_rate_matrix([0.1, np.pi / 2, 0.2]), "gimbal lock"),
    (lambda j: j.angle_rate_matrix_dot([0.1, np.pi / 2, 0.2], [1.0, 0, 0]), "gimbal lock"),
    (lambda j: j.angular_velocity_matrix([0.1, 0.2]), "argument 'q of spherical_euler joint'"),
    (lambda j: j.angle_rate_matrix([0.1, 0.2, 0.3], frame="parent"), "'world' or 'body'"),
    (lambda j: j.angle_rate_matrix_dot([0.1, 0.2, 0.3], [np.nan, 0, 0]), "qdot"),
])
def test_bad_input_gets_a_value_error_naming_it(call, words):
    with pytest.raises(ValueError) as err:
        call(SphericalEuler("ZYX"))
    assert words in str(err.value)
