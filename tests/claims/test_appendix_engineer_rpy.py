"""Claims of book/appendix/engineer_rpy (ArtiSynth notes §0.4): roll-pitch-yaw rates, rows of limits."""

import numpy as np
import pytest

from redmax_edu.checks import check_derivative
from redmax_edu.joints import SphericalEuler
from redmax_edu.joints.euler import CHART_NAMES, euler_angles
from redmax_edu.lie import exp_so3, random_rotation

RPY = SphericalEuler("ZYX")


def notes_P(th, ph):
    return np.array([[0, -np.sin(th), np.cos(th) * np.cos(ph)],
                     [0, np.cos(th), np.sin(th) * np.cos(ph)],
                     [1, 0, -np.sin(ph)]])


def notes_Pinv(th, ph):
    st, ct, tp, cp = np.sin(th), np.cos(th), np.tan(ph), np.cos(ph)
    return np.array([[tp * ct, tp * st, 1], [-st, ct, 0], [ct / cp, st / cp, 0]])


def notes_Pinv_dot(th, ph, thd, phd):
    st, ct, tp, cp = np.sin(th), np.cos(th), np.tan(ph), np.cos(ph)
    return np.array([[-st * tp * thd + (1 + tp**2) * ct * phd, ct * tp * thd + (1 + tp**2) * st * phd, 0],
                     [-ct * thd, -st * thd, 0],
                     [(-st * thd + ct * tp * phd) / cp, (ct * thd + st * tp * phd) / cp, 0]])


def random_state(rng):
    return np.array([rng.uniform(-3, 3), rng.uniform(-1.4, 1.4), rng.uniform(-3, 3)]), rng.standard_normal(3)


def test_the_notes_three_matrices_are_the_library_zyx_chart(rng):
    """'by hand = angular_velocity_matrix', 'P = R S', 'Eq. (0.2) = angle_rate_matrix', 'notes' matrix =
    angle_rate_matrix_dot', each to 1e-14, at the page's state and at random states."""
    states = [(np.array([0.7, -0.4, 1.1]), rng.standard_normal(3))] + [random_state(rng) for _ in range(20)]
    for q, qd in states:
        R, S = RPY.Q(q)[:3, :3], RPY.S(q)[:3]
        assert np.abs(notes_P(q[0], q[1]) - RPY.angular_velocity_matrix(q)).max() < 1e-14
        assert np.abs(notes_P(q[0], q[1]) - R @ S).max() < 1e-14
        scale = 1 / np.cos(q[1]) ** 3  # entries grow like 1/cos^3 (the tan^2/cos terms)
        assert np.abs(notes_Pinv(q[0], q[1]) - RPY.angle_rate_matrix(q)).max() < 1e-14 * scale
        assert np.abs(notes_Pinv_dot(q[0], q[1], qd[0], qd[1]) - RPY.angle_rate_matrix_dot(q, qd)).max() \
            < 1e-14 * scale * (1 + np.abs(qd).max())


def test_det_P_is_minus_cos_pitch(rng):
    for _ in range(10):
        q, _ = random_state(rng)
        assert abs(np.linalg.det(RPY.angular_velocity_matrix(q)) + np.cos(q[1])) < 1e-14


def test_row_lengths_and_the_stated_values():
    """'length exactly 1/|c_phi|', 'pitch row has length one', 'twice at 30 degrees from lock, almost
    ten times at 6 degrees'."""
    for p in np.radians(np.linspace(-85, 85, 35)):
        lengths = np.linalg.norm(RPY.angle_rate_matrix([0.3, p, 0.0]), axis=1)
        np.testing.assert_allclose(lengths, [1 / np.cos(p), 1.0, 1 / np.cos(p)], rtol=1e-13)
    at60 = np.linalg.norm(RPY.angle_rate_matrix([0.3, np.radians(60), 0.0]), axis=1).max()
    at84 = np.linalg.norm(RPY.angle_rate_matrix([0.3, np.radians(84), 0.0]), axis=1).max()
    assert abs(at60 - 2) < 1e-12
    assert 9.5 < at84 < 10


def test_rates_read_back_and_forgotten_rotation_term_is_caught(rng):
    for _ in range(10):
        q, qd = random_state(rng)
        R, w = RPY.Q(q)[:3, :3], rng.standard_normal(3)
        assert check_derivative(lambda t, R=R, w=w: euler_angles(exp_so3(t[0] * w) @ R, "ZYX"), [0.0],
                                (RPY.angle_rate_matrix(q) @ w)[:, None]).ok

        def along(t, q=q, qd=qd):
            return RPY.angle_rate_matrix(q + t[0] * qd)

        Pinv = RPY.angle_rate_matrix(q)
        forgot = -Pinv @ R @ RPY.Sdot(q, qd)[:3] @ Pinv
        assert check_derivative(along, [0.0], RPY.angle_rate_matrix_dot(q, qd)[..., None]).ok
        assert not check_derivative(along, [0.0], forgot[..., None]).ok


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_all_12_charts_pass_in_both_frames(seed):
    """'12 of 12': rates against euler_angles, row derivatives against differences, world and body."""
    rng = np.random.default_rng(seed)
    for chart in CHART_NAMES:
        joint = SphericalEuler(chart)
        q = euler_angles(random_rotation(rng), chart)
        while abs(joint.det_S(q)) < 0.3:
            q = euler_angles(random_rotation(rng), chart)
        R, w, qd = joint.Q(q)[:3, :3], rng.standard_normal(3), rng.standard_normal(3)
        assert check_derivative(lambda t, R=R, w=w, c=chart: euler_angles(exp_so3(t[0] * w) @ R, c), [0.0],
                                (joint.angle_rate_matrix(q) @ w)[:, None]).ok, chart
        for frame in ("world", "body"):
            def rows(t, f=frame, j=joint, q=q, qd=qd):
                return j.angle_rate_matrix(q + t[0] * qd, f)

            analytic = joint.angle_rate_matrix_dot(q, qd, frame)[..., None]
            assert check_derivative(rows, [0.0], analytic).ok, (chart, frame)
