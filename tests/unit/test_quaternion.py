"""Unit quaternions (redmax_edu.quaternion, ArtiSynth notes §0.2) against the rotation matrices of lie.py."""

import numpy as np
import pytest

from redmax_edu.checks import check_derivative
from redmax_edu.lie import brac, exp_so3, random_rotation
from redmax_edu.quaternion import (
    integrate_orientation,
    quat_conjugate,
    quat_from_rotation,
    quat_from_rotvec,
    quat_multiply,
    quat_rate,
    quat_rate_matrix,
    quat_rotate,
    quat_step,
    quat_to_rotation,
)


def random_unit(rng):
    q = rng.standard_normal(4)
    return q / np.linalg.norm(q)


def test_product_composes_rotations_and_does_not_commute(rng):
    for _ in range(20):
        q, p, r = random_unit(rng), random_unit(rng), random_unit(rng)
        np.testing.assert_allclose(quat_to_rotation(quat_multiply(q, p)),
                                   quat_to_rotation(q) @ quat_to_rotation(p), atol=1e-14)
        np.testing.assert_allclose(quat_multiply(quat_multiply(q, p), r),
                                   quat_multiply(q, quat_multiply(p, r)), atol=1e-14)
        assert np.linalg.norm(quat_multiply(q, p) - quat_multiply(p, q)) > 1e-3
        np.testing.assert_allclose(quat_multiply(q, quat_conjugate(q)), [1, 0, 0, 0], atol=1e-15)


@pytest.mark.parametrize("angle", [0.0, 1e-8, 1.0, np.pi - 1e-8, np.pi])
def test_quaternion_of_a_rotation_vector_is_the_exponential(rng, angle):
    """Edge angles of the sinc factor and of the logarithm: 0, 1e-8, pi - 1e-8, pi."""
    for _ in range(5):
        u = rng.standard_normal(3)
        w = angle * u / np.linalg.norm(u)
        q = quat_from_rotvec(w)
        assert abs(np.linalg.norm(q) - 1) < 1e-15
        np.testing.assert_allclose(quat_to_rotation(q), exp_so3(w), atol=1e-14)
        back = quat_from_rotation(exp_so3(w))
        # q and -q are one rotation; at pi the two differ only in the sign
        assert min(np.linalg.norm(back - q), np.linalg.norm(back + q)) < 1e-7


def test_rotating_a_vector_is_the_rotation_matrix(rng):
    for _ in range(10):
        q, v = random_unit(rng), rng.standard_normal(3)
        np.testing.assert_allclose(quat_rotate(q, v), quat_to_rotation(q) @ v, atol=1e-14)
        R = random_rotation(rng)
        np.testing.assert_allclose(quat_to_rotation(quat_from_rotation(R)), R, atol=1e-12)


@pytest.mark.parametrize("frame", ["world", "body"])
def test_rate_is_the_derivative_of_the_rotation_along_the_angular_velocity(rng, frame):
    """d/dt of exp(t w) q (world) or q exp(t w) (body) at t = 0 is quat_rate, by central
    differences; a rate taken in the other frame is caught."""
    other = {"world": "body", "body": "world"}[frame]
    for _ in range(10):
        q, w = random_unit(rng), rng.standard_normal(3)

        def moved(t, q=q, w=w):
            dq = quat_from_rotvec(t[0] * w)
            return quat_multiply(dq, q) if frame == "world" else quat_multiply(q, dq)

        assert check_derivative(moved, [0.0], quat_rate(q, w, frame)[:, None]).ok
        assert not check_derivative(moved, [0.0], quat_rate(q, w, other)[:, None]).ok


@pytest.mark.parametrize("frame", ["world", "body"])
def test_rotation_matrix_moves_with_the_angular_velocity(rng, frame):
    """dR/dt along qdot is [w] R (world) or R [w] (body): the rate map and R(q) agree."""
    for _ in range(10):
        q, w = random_unit(rng), rng.standard_normal(3)
        qd = quat_rate(q, w, frame)
        R = quat_to_rotation(q)
        expected = brac(w) @ R if frame == "world" else R @ brac(w)

        def along(t, q=q, qd=qd):
            p = q + t[0] * qd
            return quat_to_rotation(p / np.linalg.norm(p))

        assert check_derivative(along, [0.0], expected[..., None]).ok
        assert not check_derivative(along, [0.0], expected.T[..., None]).ok


def test_rate_matrix_columns_are_orthogonal_to_q_and_read_back_omega(rng):
    for frame in ("world", "body"):
        q, w = random_unit(rng), rng.standard_normal(3)
        W = quat_rate_matrix(q, frame)
        np.testing.assert_allclose(W.T @ W, np.eye(3) / 4, atol=1e-15)
        np.testing.assert_allclose(q @ W, 0, atol=1e-15)
        np.testing.assert_allclose(4 * W.T @ quat_rate(q, w, frame), w, atol=1e-14)


def test_exp_step_is_exact_and_euler_step_turns_about_the_right_axis_by_2_atan(rng):
    """For a constant omega the renormalised Euler step is the rotation by 2 atan(h|w|/2) about
    w: the right axis, an angle short by h^3|w|^3/12, so the global error is second order."""
    q0, w = random_unit(rng), rng.standard_normal(3)
    T, s = 1.0, np.linalg.norm(w)
    exact = quat_multiply(quat_from_rotvec(T * w), q0)
    errors = []
    for n in (50, 100, 200, 400):
        h = T / n
        one = quat_step(q0, w, h, "world", "euler")
        np.testing.assert_allclose(one, quat_multiply(quat_from_rotvec(2 * np.arctan(h * s / 2) * w / s), q0),
                                   atol=1e-15)
        qe, qx = q0, q0
        for _ in range(n):
            qe = quat_step(qe, w, h, "world", "euler")
            qx = quat_step(qx, w, h, "world", "exp")
            assert abs(np.linalg.norm(qe) - 1) < 1e-14
        np.testing.assert_allclose(qx, exact, atol=1e-13)
        errors.append(np.linalg.norm(qe - exact))
    orders = np.log2(np.array(errors[:-1]) / errors[1:])
    assert np.all(np.abs(orders - 2) < 0.05)


def test_euler_step_with_a_varying_omega_is_first_order(rng):
    """With omega(t) sampled at the start of each step the Euler step is first order (exp too)."""
    q0 = random_unit(rng)

    def omega(t):
        return np.array([np.sin(3 * t), 1.0 + t, np.cos(2 * t)])

    def run(n, method, T=1.0):
        q = q0
        for k in range(n):
            q = quat_step(q, omega(k * T / n), T / n, "body", method)
        return q

    reference = run(2**15, "exp")
    for method in ("euler", "exp"):
        errors = [np.linalg.norm(run(n, method) - reference) for n in (64, 128, 256)]
        orders = np.log2(np.array(errors[:-1]) / errors[1:])
        assert np.all(np.abs(orders - 1) < 0.1), (method, orders)


def test_an_unnormalised_euler_step_grows_the_norm_by_the_stated_factor(rng):
    q, w, h = random_unit(rng), rng.standard_normal(3), 0.1
    raw = q + h * quat_rate(q, w)
    assert abs(np.linalg.norm(raw) - np.sqrt(1 + h**2 * (w @ w) / 4)) < 1e-15


@pytest.mark.parametrize(("call", "words"), [
    (lambda: quat_to_rotation([1.0, 0.1, 0, 0]), "unit quaternion"),
    (lambda: quat_rate([1.0, 0, 0], [0, 0, 1.0]), "argument 'q' must have shape (4,)"),
    (lambda: quat_rate([1.0, 0, 0, 0], [0, 0, 1.0], frame="space"), "'world' or 'body'"),
    (lambda: quat_step([1.0, 0, 0, 0], [0, 0, 1.0], 0.0), "argument 'h' must be positive"),
    (lambda: quat_step([1.0, 0, 0, 0], [0, 0, 1.0], 0.1, method="rk4"), "'euler' or 'exp'"),
    (lambda: quat_multiply([1.0, np.nan, 0, 0], [1.0, 0, 0, 0]), "argument 'q'"),
    (lambda: quat_from_rotation(2 * np.eye(3)), "argument 'R'"),
    (lambda: quat_rotate([0.0, 0, 0, 0], [1.0, 0, 0]), "unit quaternion"),
])
def test_bad_input_names_the_argument(call, words):
    with pytest.raises(ValueError, match=None) as err:
        call()
    assert words in str(err.value)


@pytest.mark.parametrize("coordinates", ["quaternion", "quaternion_exp", "exponential", "XYZ", "zyz"])
def test_every_coordinate_choice_converges_to_the_same_rotation(rng, coordinates):
    """A varying body omega: each choice lands within O(h) of a fine exponential-step run."""
    R0 = random_rotation(rng)

    def omega(t):
        return np.array([0.5, 0.3 * np.sin(t), 0.2])

    fine = integrate_orientation(omega, R0, 1.0, 4000, "quaternion_exp")[0][-1]
    R, coords = integrate_orientation(omega, R0, 1.0, 400, coordinates)
    assert R.shape == (401, 3, 3)
    np.testing.assert_allclose(R[0], R0, atol=1e-12)
    assert np.abs(R[-1] - fine).max() < 1e-2


def test_integrate_orientation_refuses_bad_input_and_an_exact_gimbal_lock():
    def omega(t):
        return np.array([0.0, 1.0, 0.0])

    R0 = np.eye(3)
    for kwargs, words in [({"coordinates": "rpy"}, "argument 'coordinates'"),
                          ({"n": 0}, "argument 'n'"), ({"n": 2.5}, "argument 'n'"),
                          ({"T": -1.0}, "argument 'T' must be positive")]:
        args = {"omega": omega, "R0": R0, "T": 1.0, "n": 10, **kwargs}
        with pytest.raises(ValueError) as err:
            integrate_orientation(**args)
        assert words in str(err.value)
    with pytest.raises(ValueError, match="argument 'omega'"):
        integrate_orientation(np.ones(3), R0, 1.0, 10)
    locked = exp_so3([0.0, np.pi / 2, 0.0])  # XYZ chart: q2 = pi/2, det S = cos q2 = 0
    with pytest.raises(ValueError, match="singular at step 0"):
        integrate_orientation(omega, locked, 1.0, 10, "XYZ")
