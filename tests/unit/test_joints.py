"""Joints of §2.4: every Q, S and Sdot against finite differences, specs, charts and closed forms.

Tolerances. The finite-difference checks use central differences with h = 1e-6
(redmax_edu.checks.numerical_derivative): truncation error ~ h^2 |f'''| ~ 1e-12 and round-off
~ eps |f| / h ~ 1e-10 relative to the entries (translations of spline joints reach ~10, so
round-off grows accordingly, still ~1e-9 of the norm). A relative error below 1e-7 therefore
leaves two orders of margin, while any mistake in a formula (a sign, a missing term, a wrong
factor) produces errors of order 1e-2 or more, as test_fd_check_catches_wrong_jacobians shows.
"""

import json

import numpy as np
import pytest

from redmax_edu.checks import numerical_derivative, relative_error
from redmax_edu.joints import (
    JOINT_TYPES,
    Composite,
    Fixed,
    Free2D,
    Free3DEuler,
    Free3DExp,
    Planar,
    Prismatic,
    Revolute,
    SphericalEuler,
    SphericalExp,
    SplineCurve,
    SplineSurface,
    Translational,
    Universal,
    joint_from_spec,
)
from redmax_edu.joints.euler import CHART_NAMES, SWITCH_DET, best_chart, euler_angles, euler_rotation
from redmax_edu.joints.exponential import REPARAM_ANGLE
from redmax_edu.joints.spline import bspline_weights, cumulative_basis
from redmax_edu.lie import brac, exp_se3, exp_so3, inv_se3, log_se3, unbrac
from redmax_edu.scenes import reference_data

FD_TOL = 1e-7  # see the module docstring


# --- the joints under test ------------------------------------------------------------------
def loop_frames(rng, n=5, radius=3.0):
    """n control frames around a loop, each turned about z and jittered: consecutive frames differ
    by less than pi, so their logarithms are unambiguous."""
    frames = []
    for i in range(n):
        E = exp_se3(np.concatenate([[0.0, 0.0, 2 * np.pi * i / n], [0.0, 0.0, 0.0]]))
        E[:3, 3] = radius * np.array([np.cos(2 * np.pi * i / n), np.sin(2 * np.pi * i / n), 0.0])
        frames.append(E @ exp_se3(0.3 * rng.standard_normal(6)))
    return np.array(frames)


def surface_values(rng):
    cv = rng.uniform(-1.0, 1.0, (4, 4, 6))
    cv[:, :, 3:] *= 0.6  # rotations of the size the writeup recommends (< pi/4)
    return cv


def stable_unit(v):
    """``v / |v|`` normalised until normalising again changes nothing, so that a spec round trip
    (which normalises the axis once more) reproduces the axis bit for bit."""
    v = np.asarray(v, dtype=float)
    for _ in range(10):
        w = v / np.linalg.norm(v)
        if np.array_equal(w, v):
            break
        v = w
    return v


def all_joints(rng):
    """One instance of every joint type (every chart, both free-3D orders, several composites)."""
    joints = {
        "fixed": Fixed(),
        "revolute": Revolute(stable_unit(rng.standard_normal(3))),
        "prismatic": Prismatic(stable_unit(rng.standard_normal(3))),
        "planar": Planar(rng.standard_normal((3, 2))),
        "translational": Translational(),
        "universal": Universal(),
        "spherical_exp": SphericalExp(),
        "free2d": Free2D(),
        "free3d_exp": Free3DExp(),
        "free3d_exp_rotate_first": Free3DExp(order="rotate_first"),
        "composite_rev_pris": Composite([Revolute([1, 0, 0]), Prismatic([1, 0, 0])]),
        "composite_mixed": Composite([Universal(), Prismatic(stable_unit(rng.standard_normal(3))),
                                      SphericalExp(), Revolute(stable_unit(rng.standard_normal(3)))]),
        "composite_with_spline": Composite([SplineCurve(loop_frames(rng, 4)), SphericalEuler("ZYZ")]),
        "spline_curve": SplineCurve(loop_frames(rng)),
        "spline_surface": SplineSurface(surface_values(rng)),
    }
    for chart in CHART_NAMES:
        joints[f"spherical_euler_{chart}"] = SphericalEuler(chart)
        joints[f"free3d_euler_{chart}"] = Free3DEuler(chart)
    return joints


JOINT_NAMES = sorted(all_joints(np.random.default_rng(0)))


def random_state(joint, rng):
    q = rng.uniform(-1.2, 1.2, joint.ndof)
    if isinstance(joint, SplineCurve):
        q = rng.uniform(-7.0, 12.0, 1)  # outside [0, n) too: the joint wraps
    if isinstance(joint, SplineSurface):
        q = rng.uniform(0.0, 1.0, 2)
    return q, rng.standard_normal(joint.ndof)


def fd_jacobian(joint, q):
    """Column k: unbrac(Q^-1 dQ/dq_k) by central differences (Eq. 2.24, 2.31)."""
    Q = joint.Q(q)
    dQ = numerical_derivative(joint.Q, q)
    return np.stack([unbrac(inv_se3(Q) @ dQ[:, :, k]) for k in range(joint.ndof)], axis=1)


def fd_sdot(joint, q, qdot):
    """d/dt S(q + t qdot) at t = 0 by central differences."""
    return numerical_derivative(lambda t: joint.S(q + t[0] * qdot), np.zeros(1))[:, :, 0]


# --- (a)-(c) every joint: S and Sdot against finite differences, Q rigid ------------------
@pytest.mark.parametrize("name", JOINT_NAMES)
def test_S_matches_finite_differences_of_Q(name, rng):
    joint = all_joints(rng)[name]
    if joint.ndof == 0:
        assert joint.S([]).shape == (6, 0) and np.array_equal(joint.Q([]), np.eye(4))
        return
    for _ in range(3):
        q, _ = random_state(joint, rng)
        err = relative_error(joint.S(q), fd_jacobian(joint, q))
        assert err < FD_TOL, (name, q, err)


@pytest.mark.parametrize("name", JOINT_NAMES)
def test_Sdot_matches_finite_differences_of_S(name, rng):
    joint = all_joints(rng)[name]
    if joint.ndof == 0:
        assert joint.Sdot([], []).shape == (6, 0)
        return
    for _ in range(3):
        q, qdot = random_state(joint, rng)
        Sdot = joint.Sdot(q, qdot)
        fd = fd_sdot(joint, q, qdot)
        assert relative_error(Sdot, fd) < FD_TOL or np.abs(Sdot - fd).max() < 1e-9, (name, q)


@pytest.mark.parametrize("name", JOINT_NAMES)
def test_evaluate_agrees_with_Q_S_Sdot(name, rng):
    joint = all_joints(rng)[name]
    q, qdot = random_state(joint, rng)
    Q, S, Sdot = joint.evaluate(q, qdot)
    assert np.allclose(Q, joint.Q(q), rtol=0, atol=1e-13)
    assert np.allclose(S, joint.S(q), rtol=0, atol=1e-13)
    assert np.allclose(Sdot, joint.Sdot(q, qdot), rtol=0, atol=1e-13)
    assert S.shape == Sdot.shape == (6, joint.ndof)


@pytest.mark.parametrize("name", JOINT_NAMES)
def test_Q_is_a_rigid_transform(name, rng):
    joint = all_joints(rng)[name]
    for _ in range(3):
        Q = joint.Q(random_state(joint, rng)[0])
        R = Q[:3, :3]
        assert np.allclose(R.T @ R, np.eye(3), rtol=0, atol=1e-12)
        assert np.isclose(np.linalg.det(R), 1.0, rtol=0, atol=1e-12)
        assert np.array_equal(Q[3], [0.0, 0.0, 0.0, 1.0])


# --- (d) the scene format ------------------------------------------------------------------
def _jsonable(spec):
    return json.loads(json.dumps(spec, default=lambda a: a.tolist()))


@pytest.mark.parametrize("name", JOINT_NAMES)
def test_spec_round_trip_gives_an_equal_joint(name, rng):
    joint = all_joints(rng)[name]
    again = joint_from_spec(_jsonable(joint.spec()))  # through JSON, as a scene file would
    assert again == joint and type(again) is type(joint)
    q, qdot = random_state(joint, rng)
    assert np.allclose(again.evaluate(q, qdot)[1], joint.evaluate(q, qdot)[1], rtol=0, atol=1e-12)


def test_every_registered_type_is_covered():
    covered = {all_joints(np.random.default_rng(1))[n].kind for n in JOINT_NAMES}
    assert covered == set(JOINT_TYPES)
    assert set(JOINT_TYPES) == {"fixed", "revolute", "prismatic", "planar", "translational", "universal",
                                "spherical_euler", "spherical_exp", "free2d", "free3d_euler",
                                "free3d_exp", "composite", "spline_curve", "spline_surface"}


def test_composite_spec_lists_its_sub_joints():
    spec = Composite([Revolute([0, 0, 2]), SphericalEuler("zyz")]).spec()
    assert spec == {"type": "composite", "joints": [{"type": "revolute", "axis": [0.0, 0.0, 1.0]},
                                                    {"type": "spherical_euler", "chart": "ZYZ"}]}
    assert Free3DExp().spec() == {"type": "free3d_exp"}
    assert Free3DExp(order="rotate_first").spec() == {"type": "free3d_exp", "order": "rotate_first"}
    assert joint_from_spec({"type": "spherical_euler"}).chart == "XYZ"


# --- (e) bad specs --------------------------------------------------------------------------
BAD_SPECS = [
    ({"type": "spherical_euler", "chart": "XXY"}, "'chart'"),
    ({"type": "spherical_euler", "chart": 3}, "'chart'"),
    ({"type": "free3d_euler", "chart": "ABC"}, "'chart'"),
    ({"type": "free3d_exp", "order": "sideways"}, "'order'"),
    ({"type": "revolute", "axis": [0, 0, 0]}, "'axis'"),
    ({"type": "prismatic", "axis": [1, 0]}, "axis"),
    ({"type": "planar", "plane": [[1, 2], [2, 4], [0, 0]]}, "'plane'"),
    ({"type": "composite"}, "'joints'"),
    ({"type": "composite", "joints": []}, "'joints'"),
    ({"type": "composite", "joints": [{"type": "fixed"}]}, "'joints'[0]"),
    ({"type": "composite", "joints": [{"type": "revolute", "axis": [1, 0, 0]},
                                      {"type": "composite", "joints": [{"type": "universal"}]}]},
     "'joints'[1]"),
    ({"type": "composite", "joints": [{"type": "revolute"}]}, "joints[0]: missing field 'axis'"),
    ({"type": "composite", "joints": [{"type": "hinge"}]}, "joints[0]: unknown joint type"),
    ({"type": "spline_curve"}, "'control_frames'"),
    ({"type": "spline_curve", "control_frames": [np.eye(4).tolist()] * 3}, "at least 4"),
    ({"type": "spline_curve", "control_frames": [np.eye(3).tolist()] * 4}, "'control_frames'"),
    ({"type": "spline_curve", "control_frames": [np.eye(4).tolist()] * 3 + [(2 * np.eye(4)).tolist()]},
     "control_frames[3]"),
    ({"type": "spline_curve", "control_frames": "frames"}, "'control_frames'"),
    ({"type": "spline_surface"}, "'control_values'"),
    ({"type": "spline_surface", "control_values": np.zeros((4, 4, 3)).tolist()}, "control_values"),
]


@pytest.mark.parametrize(("spec", "field"), BAD_SPECS)
def test_bad_specs_raise_value_errors_naming_the_field(spec, field):
    with pytest.raises(ValueError) as info:
        joint_from_spec(spec, "body 'arm', joint")
    message = str(info.value)
    assert message.startswith("body 'arm', joint") and field in message, message


def test_wrong_coordinate_count_is_a_value_error():
    with pytest.raises(ValueError, match="q of spherical_euler joint"):
        SphericalEuler().Q([0.0, 1.0])
    with pytest.raises(ValueError, match="qdot of composite joint"):
        Composite([Universal(), Revolute()]).Sdot(np.zeros(3), np.zeros(2))


# --- (f) the check can fail ---------------------------------------------------------------
@pytest.mark.parametrize("name", ["spherical_euler_XYZ", "spherical_exp", "free3d_exp", "composite_mixed",
                                  "spline_curve", "spline_surface", "universal"])
def test_fd_check_catches_wrong_jacobians(name, rng):
    """A flipped sign in one column of S, or a dropped term of Sdot, fails the checks above."""
    joint = all_joints(rng)[name]
    q, qdot = random_state(joint, rng)
    wrong = joint.S(q).copy()
    wrong[:, -1] *= -1.0
    assert relative_error(wrong, fd_jacobian(joint, q)) > 1e-2
    wrong_dot = joint.Sdot(q, qdot).copy()
    wrong_dot[:, 0] = 0.0  # e.g. forgetting the derivative of the first column
    assert relative_error(wrong_dot, fd_sdot(joint, q, qdot)) > 1e-2


# --- (g) Euler charts ------------------------------------------------------------------------
AXES = {"X": np.eye(3)[0], "Y": np.eye(3)[1], "Z": np.eye(3)[2]}


@pytest.mark.parametrize("chart", CHART_NAMES)
def test_euler_chart_is_the_product_of_elementary_rotations(chart, rng):
    for _ in range(3):
        q = rng.uniform(-np.pi, np.pi, 3)
        R = exp_so3(AXES[chart[0]] * q[0]) @ exp_so3(AXES[chart[1]] * q[1]) @ exp_so3(AXES[chart[2]] * q[2])
        assert np.allclose(SphericalEuler(chart).Q(q)[:3, :3], R, rtol=0, atol=1e-14)


# Table 3, column 2, as printed in the writeup.
TABLE3_DET = {**{ch: lambda q: -np.sin(q[1]) for ch in CHART_NAMES[:6]},
              "XYZ": lambda q: np.cos(q[1]), "XZY": lambda q: -np.cos(q[1]), "YZX": lambda q: np.cos(q[1]),
              "YXZ": lambda q: -np.cos(q[1]), "ZXY": lambda q: np.cos(q[1]), "ZYX": lambda q: -np.cos(q[1])}


@pytest.mark.parametrize("chart", CHART_NAMES)
def test_det_S_matches_table_3(chart, rng):
    joint = SphericalEuler(chart)
    for _ in range(3):
        q = rng.uniform(-np.pi, np.pi, 3)
        assert np.isclose(joint.det_S(q), TABLE3_DET[chart](q), rtol=0, atol=1e-14)
        assert np.isclose(np.linalg.det(joint.S(q)[:3]), TABLE3_DET[chart](q), rtol=0, atol=1e-14)


def test_xyz_chart_matches_eq_2_36_and_2_37(rng):
    q, qd = rng.uniform(-1, 1, 3), rng.standard_normal(3)
    s, c = np.sin(q), np.cos(q)
    S = np.array([[c[1] * c[2], s[2], 0], [-c[1] * s[2], c[2], 0], [s[1], 0, 1]])  # Eq. (2.36)
    Sdot = np.array([[-qd[1] * c[2] * s[1] - qd[2] * c[1] * s[2], qd[2] * c[2], 0],  # Eq. (2.37)
                     [qd[1] * s[1] * s[2] - qd[2] * c[1] * c[2], -qd[2] * s[2], 0],
                     [qd[1] * c[1], 0, 0]])
    joint = SphericalEuler("XYZ")
    assert np.allclose(joint.S(q)[:3], S, rtol=0, atol=1e-15)
    assert np.allclose(joint.Sdot(q, qd)[:3], Sdot, rtol=0, atol=1e-15)
    assert np.array_equal(joint.S(q)[3:], np.zeros((3, 3)))


@pytest.mark.parametrize("chart", CHART_NAMES)
def test_rotation_to_angles_round_trip_away_from_singularity(chart, rng):
    for _ in range(5):
        R = euler_rotation(rng.uniform(-np.pi, np.pi, 3), "XYZ")  # any rotation
        q = euler_angles(R, chart)
        if abs(SphericalEuler(chart).det_S(q)) < 1e-3:
            continue
        assert np.allclose(euler_rotation(q, chart), R, rtol=0, atol=1e-12)
    q = np.array([0.4, 0.9, -2.5])  # principal branch of Table 3: the angles themselves come back
    assert np.allclose(euler_angles(euler_rotation(q, chart), chart), q, rtol=0, atol=1e-12)


def near_singular(chart, offset):
    return np.array([0.7, (offset if chart[0] == chart[2] else np.pi / 2 - offset), -0.4])


@pytest.mark.parametrize("chart", CHART_NAMES)
def test_chart_switch_keeps_pose_and_angular_velocity_and_leaves_the_singularity(chart, rng):
    joint = SphericalEuler(chart)
    q, qdot = near_singular(chart, 0.05), rng.standard_normal(3)
    assert abs(joint.det_S(q)) < SWITCH_DET
    new, q_new, qdot_new = joint.reparameterize(q, qdot)
    assert new.chart != chart and abs(new.det_S(q_new)) > 0.8
    assert np.allclose(new.Q(q_new), joint.Q(q), rtol=0, atol=1e-12)
    assert np.allclose(new.S(q_new) @ qdot_new, joint.S(q) @ qdot, rtol=0, atol=1e-12)
    assert best_chart(new.Q(q_new)[:3, :3]) == new.chart


@pytest.mark.parametrize("chart", CHART_NAMES)
def test_no_chart_switch_away_from_the_singularity(chart, rng):
    joint = SphericalEuler(chart)
    q, qdot = near_singular(chart, 0.5), rng.standard_normal(3)
    new, q_new, qdot_new = joint.reparameterize(q, qdot)
    assert new is joint and np.array_equal(q_new, q) and np.array_equal(qdot_new, qdot)


def test_free3d_euler_switches_the_chart_of_its_rotation(rng):
    joint = Free3DEuler("ZYX")
    q = np.concatenate([rng.standard_normal(3), near_singular("ZYX", 0.02)])
    qdot = rng.standard_normal(6)
    new, q_new, qdot_new = joint.reparameterize(q, qdot)
    assert isinstance(new, Free3DEuler) and new.chart != "ZYX"
    assert np.array_equal(q_new[:3], q[:3])
    assert np.allclose(new.Q(q_new), joint.Q(q), rtol=0, atol=1e-12)
    assert np.allclose(new.S(q_new) @ qdot_new, joint.S(q) @ qdot, rtol=0, atol=1e-12)


def test_universal_is_the_xyz_chart_with_q3_zero(rng):
    q, qd = rng.uniform(-1, 1, 2), rng.standard_normal(2)
    xyz = SphericalEuler("XYZ")
    q3, qd3 = np.append(q, 0.0), np.append(qd, 0.0)
    assert np.allclose(Universal().Q(q), xyz.Q(q3), rtol=0, atol=1e-15)
    assert np.allclose(Universal().S(q), xyz.S(q3)[:, :2], rtol=0, atol=1e-15)
    assert np.allclose(Universal().Sdot(q, qd), xyz.Sdot(q3, qd3)[:, :2], rtol=0, atol=1e-15)


# --- (h) exponential coordinates -----------------------------------------------------------
@pytest.mark.parametrize("q", [np.zeros(3), np.array([1e-9, -2e-9, 5e-10]), np.array([0.3, 0.2, -0.35]),
                               np.array([0.28, 0.0, 0.0]), np.array([0.3, 0.2, -0.2]) * 1.0001,
                               np.array([2.0, -1.5, 1.0]), np.array([0.0, 0.0, np.pi])])
def test_exp_coordinates_small_and_large_angles_agree_with_finite_differences(q, rng):
    """The series branch (|q| < 0.5) and the closed form (|q| >= 0.5), at and around the switch."""
    joint = SphericalExp()
    qdot = rng.standard_normal(3)
    assert relative_error(joint.S(q), fd_jacobian(joint, q)) < FD_TOL
    Sdot, fd = joint.Sdot(q, qdot), fd_sdot(joint, q, qdot)
    assert np.abs(Sdot - fd).max() < 1e-9 * max(1.0, np.abs(fd).max())


def test_exp_series_and_closed_form_meet_continuously():
    from redmax_edu.joints.exponential import exp_coefficients

    below, above = exp_coefficients(0.25 * (1 - 1e-13)), exp_coefficients(0.25 * (1 + 1e-13))
    # the arguments differ by 5e-14, so the exact values differ by < 1e-14 relative; a branch
    # error would show as the cancellation of the closed form (~1e-13) or worse
    assert np.allclose(below, above, rtol=1e-13, atol=0)


def test_exp_S_is_the_right_jacobian_and_complex_step_works(rng):
    from redmax_edu.lie import right_jacobian_so3

    q = rng.standard_normal(3)
    assert np.allclose(SphericalExp().S(q)[:3], right_jacobian_so3(q), rtol=0, atol=1e-15)
    qdot = rng.standard_normal(3)
    cs = numerical_derivative(lambda t: SphericalExp().S(q + t[0] * qdot), np.zeros(1), method="complex")
    assert relative_error(SphericalExp().Sdot(q, qdot), cs[:, :, 0]) < 1e-13


def test_exp_reparameterization_keeps_pose_and_angular_velocity_and_shortens_q(rng):
    joint = SphericalExp()
    for norm in (1.51 * np.pi, 1.9 * np.pi, 2.2 * np.pi, 5.3 * np.pi):
        axis = rng.standard_normal(3)
        q, qdot = norm * axis / np.linalg.norm(axis), rng.standard_normal(3)
        new, q_new, qdot_new = joint.reparameterize(q, qdot)
        assert new is joint and np.linalg.norm(q_new) <= REPARAM_ANGLE
        assert np.linalg.norm(q_new) < np.linalg.norm(q)
        assert np.allclose(joint.Q(q_new), joint.Q(q), rtol=0, atol=1e-12)
        assert np.allclose(joint.S(q_new) @ qdot_new, joint.S(q) @ qdot, rtol=0, atol=1e-11)
    q = np.array([0.0, 1.4 * np.pi, 0.0])  # below the threshold: untouched
    assert np.array_equal(joint.reparameterize(q, np.ones(3))[1], q)


@pytest.mark.parametrize("order", ["translate_first", "rotate_first"])
def test_free3d_exp_reparameterizes_its_rotation(order, rng):
    joint = Free3DExp(order=order)
    r = 1.7 * np.pi * np.array([0.6, 0.0, 0.8])
    p = rng.standard_normal(3)
    q = np.concatenate([p, r] if order == "translate_first" else [r, p])
    qdot = rng.standard_normal(6)
    new, q_new, qdot_new = joint.reparameterize(q, qdot)
    assert not np.allclose(q_new, q)
    assert np.allclose(new.Q(q_new), joint.Q(q), rtol=0, atol=1e-12)
    assert np.allclose(new.S(q_new) @ qdot_new, joint.S(q) @ qdot, rtol=0, atol=1e-11)


@pytest.mark.parametrize("name", JOINT_NAMES)
def test_only_joints_with_charts_change_under_reparameterize(name, rng):
    """has_charts marks the spherical joints and the composites holding one; simulate does not
    reparameterize a model without such a joint, so every other joint must leave any state alone."""
    joint = all_joints(rng)[name]
    parts = getattr(joint, "joints", (joint,))
    assert joint.has_charts == any(isinstance(j, (SphericalEuler, SphericalExp)) for j in parts)
    if not joint.has_charts:
        q, qdot = 10.0 * rng.standard_normal(joint.ndof), rng.standard_normal(joint.ndof)
        new, q1, qdot1 = joint.reparameterize(q, qdot)
        assert new is joint and np.array_equal(q1, q) and np.array_equal(qdot1, qdot)


# --- (i) composite and free joints: the writeup's closed forms ------------------------------
def test_free2d_matches_eq_2_60_and_2_61(rng):
    q, qd = rng.standard_normal(3), rng.standard_normal(3)
    c, s = np.cos(q[2]), np.sin(q[2])
    S = np.array([[0, 0, 0, c, -s, 0], [0, 0, 0, s, c, 0], [0, 0, 1, 0, 0, 0]]).T  # Eq. (2.60)
    Sdot = np.array([[0, 0, 0, -qd[2] * s, -qd[2] * c, 0], [0, 0, 0, qd[2] * c, -qd[2] * s, 0],
                     [0, 0, 0, 0, 0, 0]]).T  # Eq. (2.61)
    assert np.allclose(Free2D().S(q), S, rtol=0, atol=1e-15)
    assert np.allclose(Free2D().Sdot(q, qd), Sdot, rtol=0, atol=1e-15)


@pytest.mark.parametrize("rotation", ["exp", "euler"])
def test_free3d_translate_first_matches_eq_2_63_and_2_64(rotation, rng):
    if rotation == "exp":
        joint, sph = Free3DExp(), SphericalExp()
    else:
        joint, sph = Free3DEuler("YZX"), SphericalEuler("YZX")
    q, qd = rng.standard_normal(6), rng.standard_normal(6)
    R2 = sph.Q(q[3:])[:3, :3]
    S2, Sd2 = sph.S(q[3:])[:3], sph.Sdot(q[3:], qd[3:])[:3]
    S = np.block([[np.zeros((3, 3)), S2], [R2.T, np.zeros((3, 3))]])  # Eq. (2.63)
    Sdot = np.block([[np.zeros((3, 3)), Sd2], [-brac(S2 @ qd[3:]) @ R2.T, np.zeros((3, 3))]])  # Eq. (2.64)
    assert np.allclose(joint.S(q), S, rtol=0, atol=1e-14)
    assert np.allclose(joint.Sdot(q, qd), Sdot, rtol=0, atol=1e-14)


def test_free3d_rotate_first_matches_eq_2_65_and_2_66(rng):
    joint, sph = Free3DExp(order="rotate_first"), SphericalExp()
    q, qd = rng.standard_normal(6), rng.standard_normal(6)
    S1, Sd1 = sph.S(q[:3])[:3], sph.Sdot(q[:3], qd[:3])[:3]
    S = np.block([[S1, np.zeros((3, 3))], [-brac(q[3:]) @ S1, np.eye(3)]])  # Eq. (2.65)
    Sdot = np.block([[Sd1, np.zeros((3, 3))], [-brac(qd[3:]) @ S1 - brac(q[3:]) @ Sd1, np.zeros((3, 3))]])
    assert np.allclose(joint.S(q), S, rtol=0, atol=1e-14)
    assert np.allclose(joint.Sdot(q, qd), Sdot, rtol=0, atol=1e-14)  # Eq. (2.66)
    E = joint.Q(q)
    assert np.allclose(E[:3, 3], exp_so3(q[:3]) @ q[3:], rtol=0, atol=1e-14)


def test_composite_of_three_equals_nested_pairs(rng):
    """Q = Q1 (Q2 Q3): chaining three joints at once equals a composite of a composite's parts."""
    a, b, c = Universal(), Prismatic(rng.standard_normal(3)), SphericalExp()
    flat = Composite([a, b, c])
    q, qd = rng.standard_normal(6), rng.standard_normal(6)
    tail = Composite([b, c])
    Q_tail, S_tail, Sd_tail = tail.evaluate(q[2:], qd[2:])
    from redmax_edu.lie import ad, adjoint

    A = adjoint(inv_se3(Q_tail))
    S = np.hstack([A @ a.S(q[:2]), S_tail])  # Eq. (2.54) with joint 2 = the tail
    Sdot = np.hstack([-ad(S_tail @ qd[2:]) @ A @ a.S(q[:2]) + A @ a.Sdot(q[:2], qd[:2]),  # Eq. (2.58)
                      Sd_tail])
    assert np.allclose(flat.Q(q), a.Q(q[:2]) @ Q_tail, rtol=0, atol=1e-14)
    assert np.allclose(flat.S(q), S, rtol=0, atol=1e-14)
    assert np.allclose(flat.Sdot(q, qd), Sdot, rtol=0, atol=1e-14)


# --- (j) spline curve ------------------------------------------------------------------------
def test_spline_curve_at_knots_is_the_bspline_blend_of_translations(rng):
    """Same orientation everywhere: the logs are plain differences, so Q(k) = (c_k+1 + 4 c_k+2 + c_k+3)/6."""
    n = 6
    frames = np.tile(np.eye(4), (n, 1, 1))
    frames[:, :3, 3] = rng.standard_normal((n, 3))
    joint = SplineCurve(frames)
    c = frames[:, :3, 3]
    for k in range(n):
        blend = (c[k] + 4 * c[(k + 1) % n] + c[(k + 2) % n]) / 6
        assert np.allclose(joint.Q([float(k)])[:3, 3], blend, rtol=0, atol=1e-13)
    u = 0.37  # and between knots, the four B-spline weights of Eq. (2.70)
    b = bspline_weights(u)[0]
    assert np.allclose(joint.Q([2 + u])[:3, 3], b @ c[[2, 3, 4, 5]], rtol=0, atol=1e-13)


def test_spline_curve_about_a_fixed_axis_blends_the_angles():
    angles = np.array([0.0, 0.5, 1.5, 1.2, 0.4])
    frames = np.array([exp_se3([0, 0, a, 0, 0, 0]) for a in angles])
    joint = SplineCurve(frames)
    for k in range(5):
        blend = (angles[k] + 4 * angles[(k + 1) % 5] + angles[(k + 2) % 5]) / 6
        assert np.allclose(joint.Q([float(k)]), exp_se3([0, 0, blend, 0, 0, 0]), rtol=0, atol=1e-13)


def test_spline_curve_is_c2_across_knots_and_periodic(rng):
    joint = SplineCurve(loop_frames(rng, 5))
    for k in range(6):
        eps = 1e-7
        left, right = joint.evaluate([k - eps], [1.0]), joint.evaluate([k + eps], [1.0])
        assert np.allclose(left[0], right[0], rtol=0, atol=1e-6)  # C^0
        assert np.allclose(left[1], right[1], rtol=0, atol=1e-5)  # C^1: S has no jump
        assert np.allclose(left[2], right[2], rtol=0, atol=1e-5)  # C^2: dS/dq has no jump
    q = np.array([1.3])
    for shift in (5.0, -5.0, 15.0):
        assert np.allclose(joint.Q(q + shift), joint.Q(q), rtol=0, atol=1e-12)
        assert np.allclose(joint.S(q + shift), joint.S(q), rtol=0, atol=1e-12)


def test_spline_curve_jumps_would_be_detected(rng):
    """The continuity check is sharp: a spline with the wrong weights (no cumulative basis) jumps."""
    joint = SplineCurve(loop_frames(rng, 5))
    Q0 = joint.Q([1.0 - 1e-9])
    assert not np.allclose(Q0, joint.control_frames[1], atol=1e-3)  # a B-spline does not interpolate
    assert np.allclose(cumulative_basis(0.0)[0], [1, 5 / 6, 1 / 6, 0])
    assert np.allclose(cumulative_basis(1.0)[0], [1, 1, 5 / 6, 1 / 6])  # shifts to the next segment's start


# --- reference scenes: the joints reproduce the reference code's initial poses --------------
def _scene(scene_id):
    scene = reference_data()["scenes"][str(scene_id)]
    return next(iter(scene["setups"].values()))


def _joint_of(ref):
    kind = ref["class"].split(".")[-1]
    if kind == "JointRevolute":
        return Revolute(ref["axis"])
    if kind == "JointPrismatic":
        return Prismatic(ref["axis"])
    if kind == "JointUniversal":
        return Universal()
    if kind == "JointSphericalExp":
        return SphericalExp()
    if kind == "JointFree3D":
        return Free3DExp()
    if kind == "JointFree":
        return Free3DExp(order="rotate_first")
    if kind == "JointFree2D":
        return Free2D()
    if kind == "JointComposite":
        return Composite([_joint_of(ref["joint1"]), _joint_of(ref["joint2"])])
    if kind == "JointSplineCurve":
        return joint_from_spec({"type": "spline_curve", "control_frames": ref["controlFrames"]})
    if kind == "JointSplineSurface":
        return joint_from_spec({"type": "spline_surface", "control_values": ref["controlValues"]})
    if kind == "JointFixed":
        return Fixed()
    raise AssertionError(kind)


@pytest.mark.parametrize("scene_id", [3, 14, 18, 19, 21, 22, 33, 35])
def test_joints_reproduce_reference_initial_poses(scene_id):
    setup = _scene(scene_id)
    E_wj = {}
    for ref in setup["joints"]:
        joint = _joint_of(ref)
        q = np.atleast_1d(np.asarray(ref["q0"], dtype=float))
        E_pj0 = np.asarray(ref["E_pj0"], dtype=float) if ref.get("E_pj0") else np.eye(4)
        parent = E_wj[ref["parent"]] if ref["parent"] > 0 else np.eye(4)
        E_wj[ref["body"]] = parent @ E_pj0 @ joint.Q(q)
    for body in setup["bodies"]:
        E_wi = E_wj[body["index"]] @ np.asarray(body["E_ji"], dtype=float)
        assert np.allclose(E_wi, body["E_wi_initial"], rtol=0, atol=1e-9), body["name"]


def test_spline_curve_differences_match_the_reference_dCs():
    ref = _scene(21)["joints"][1]
    joint = _joint_of(ref)
    dCs = np.asarray(ref["dCs"]).T  # (n, 6), [omega; v]
    C = joint.control_frames
    mine = np.array([log_se3(inv_se3(C[m - 1]) @ C[m]) for m in range(4)])
    assert np.allclose(mine, dCs, rtol=0, atol=1e-9)


# --- the scene format end to end ---------------------------------------------------------------
def test_models_built_from_specs_reparameterize_all_joint_kinds(rng):
    from redmax_edu.model import model_from_dict

    joints = all_joints(rng)
    names = [n for n in JOINT_NAMES if joints[n].ndof > 0][:40]
    bodies = [{"name": n, "parent": i - 1, "joint": _jsonable(joints[n].spec()),
               "T_joint_body": np.eye(4).tolist(), "mass": 1.0, "inertia": np.eye(3).tolist()}
              for i, n in enumerate(names)]
    model = model_from_dict({"bodies": bodies})
    q, qdot = np.zeros(model.nq), rng.standard_normal(model.nq)
    for i, n in enumerate(names):
        q[model.dofs[i]] = random_state(joints[n], rng)[0]
    new, q2, qdot2 = model.reparameterize(q, qdot)
    assert new.nq == model.nq and np.all(np.isfinite(q2)) and np.all(np.isfinite(qdot2))


@pytest.mark.parametrize("order", Free3DExp.ORDERS)
def test_free_joint_closed_forms_equal_the_composite_rule(order, rng):
    """Eq. (2.63)-(2.66) worked out equal the general composite rule (Eq. 2.53-2.58) applied to
    the translational and ball parts, to round-off, also at large rotations."""
    from redmax_edu.joints import Composite

    joint = Free3DExp(order=order)
    for scale in (0.1, 1.0, 3.0):
        q, qdot = scale * rng.standard_normal(6), rng.standard_normal(6)
        closed, general = joint._evaluate(q, qdot), Composite._evaluate(joint, q, qdot)
        for a, b in zip(closed, general, strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-14 * max(1.0, np.abs(b).max()))
