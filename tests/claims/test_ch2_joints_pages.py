"""Claims of the joints pages (book/02_reduced/04_joints, 04b_euler_joints, 04c_exponential_joints,
04d_composite_spline_joints) and Appendix A (appendix_a_codegen).

Each test recomputes one quantitative sentence of those pages with library calls (not by
running the notebooks) and cites the section that makes it.
"""

from pathlib import Path

import numpy as np
import pytest
from scripts import load_tool

from redmax_edu.checks import check_derivative
from redmax_edu.integrators import SimulationError, simulate
from redmax_edu.joints import (
    JOINT_TYPES,
    Composite,
    Free3DExp,
    Prismatic,
    SphericalEuler,
    SphericalExp,
    Universal,
)
from redmax_edu.joints.euler import CHART_NAMES, SWITCH_DET, best_chart, euler_angles
from redmax_edu.joints.exponential import REPARAM_ANGLE
from redmax_edu.joints.spline import cumulative_basis
from redmax_edu.lie import ad, adjoint, brac, exp_se3, exp_so3, inv_se3, log_se3, log_so3, random_rotation
from redmax_edu.model import Body, Model
from redmax_edu.viz.joint_explorer import joint_presets

ROOT = Path(__file__).resolve().parents[2]
PRESETS = joint_presets()


def _ball(joint):
    """The page's uniform ball (mass 1, inertia 0.1 I) on a root joint, without gravity."""
    body = Body("ball", -1, joint, np.eye(4), np.eye(4), 1.0, 0.1 * np.eye(3))
    return Model([body], gravity=[0.0, 0.0, 0.0])


def _orientation_error(run, R_exact):
    return np.array([np.linalg.norm(log_so3(R_exact(t).T @ E[0, :3, :3]))
                     for t, E in zip(run.t, run.E_wi, strict=True)])


# --- §2.4 "Every joint against finite differences" ------------------------------------------

@pytest.mark.parametrize("kind", [k for k in JOINT_TYPES if k in PRESETS])
def test_every_joint_type_S_and_Sdot_match_central_differences_to_1e_9(kind, rng):
    """04_joints, 'Every joint against finite differences': relative errors around 1e-11.

    Central differences of a smooth function reach ~1e-10 relative accuracy at their best
    step; 1e-9 leaves a margin while any wrong column or sign gives O(1).
    """
    joint, q0, _ = PRESETS[kind]
    qdot = rng.standard_normal(joint.ndof)
    Q, S = joint.Q(q0), joint.S(q0)
    dQ = np.stack([Q @ brac(S[:, j]) for j in range(joint.ndof)], axis=-1)
    s_check = check_derivative(joint.Q, q0, dQ)
    sdot_check = check_derivative(lambda t: joint.S(q0 + t[0] * qdot), [0.0], joint.Sdot(q0, qdot)[..., None])
    assert s_check.error < 1e-9 and sdot_check.error < 1e-9


@pytest.mark.parametrize("kind", ["revolute", "prismatic", "planar", "translational"])
def test_constant_S_joints_match_their_zero_Sdot_exactly(kind, rng):
    """04_joints, 'Every joint against finite differences': the joints with a constant S agree
    exactly in Sdot (both sides are zero)."""
    joint, q0, _ = PRESETS[kind]
    qdot = rng.standard_normal(joint.ndof)
    check = check_derivative(lambda t: joint.S(q0 + t[0] * qdot), [0.0], joint.Sdot(q0, qdot)[..., None])
    assert check.error == 0.0 and not joint.Sdot(q0, qdot).any()


def test_every_registered_joint_type_but_fixed_has_an_explorer_preset():
    """04_joints: the check loop covers every type (fixed, with no coordinates, by hand)."""
    assert set(JOINT_TYPES) - set(PRESETS) == {"fixed"}


# --- §2.4.5 Euler angles --------------------------------------------------------------------

def test_table3_det_S_is_minus_sin_q2_for_proper_euler_and_plus_minus_cos_q2_for_tait_bryan(rng):
    """04b_euler_joints, 'Where the charts break down': Table 3, column 2, for all 12 charts."""
    expected = {"XYZ": 1, "XZY": -1, "YZX": 1, "YXZ": -1, "ZXY": 1, "ZYX": -1}
    for chart in CHART_NAMES:
        q = rng.uniform(-3, 3, 3)
        det = SphericalEuler(chart).det_S(q)
        want = -np.sin(q[1]) if chart[0] == chart[2] else expected[chart] * np.cos(q[1])
        assert np.isclose(det, want, atol=1e-14)
        assert np.isclose(np.linalg.det(SphericalEuler(chart).S(q)[:3]), want, atol=1e-12)


def test_best_chart_after_a_switch_has_abs_det_S_at_least_sqrt_two_thirds(rng):
    """04b_euler_joints, 'Switching charts': the chart chosen starts with |det S| >= sqrt(2/3) ~ 0.82."""
    worst = min(abs(SphericalEuler(ch := best_chart(R)).det_S(euler_angles(R, ch)))
                for R in (random_rotation(rng) for _ in range(3000)))
    assert worst >= np.sqrt(2 / 3) - 1e-12


def _spinning_ball_runs():
    omega = np.array([0.05, 1.0, 0.0])
    runs = {switch: simulate(_ball(SphericalEuler("XYZ")), np.zeros(3), omega, (0.0, 3.0), method="euler",
                             h=0.01, reparameterize=switch) for switch in (False, True)}
    out = {}
    for switch, run in runs.items():
        joints = [m.bodies[0].joint for m in run.models]
        det = np.abs([j.det_S(q) for j, q in zip(joints, run.q, strict=True)])
        err = _orientation_error(run, lambda t: exp_so3(t * omega))
        out[switch] = run, det, err, [j.chart for j in joints]
    return out


def test_spinning_ball_without_chart_switching_nears_gimbal_lock_and_loses_its_orientation():
    """04b_euler_joints, 'A spinning ball through gimbal lock': |det S| falls to about 0.04, the
    velocities reach more than 30 rad/s and the orientation error about 0.7 rad (40 degrees) at 3 s."""
    run, det, err, charts = _spinning_ball_runs()[False]
    assert set(charts) == {"XYZ"}
    assert 0.03 < det.min() < 0.05
    assert np.abs(run.qdot).max() > 30
    assert 0.6 < err[-1] < 0.8 and err[: int(1.4 / 0.01)].max() < 0.01  # negligible before the passage


def test_spinning_ball_with_chart_switching_leaves_xyz_for_xzy_at_1_38_s_and_stays_accurate():
    """04b_euler_joints, 'A spinning ball through gimbal lock': one switch XYZ -> XZY at t ~ 1.38 s as
    |det S| crosses 0.2, |det S| stays above 0.15, the new chart starts near 1, error < 0.05 rad."""
    run, det, err, charts = _spinning_ball_runs()[True]
    assert list(dict.fromkeys(charts)) == ["XYZ", "XZY"]
    assert np.allclose(run.reparameterized, [1.38])
    assert det.min() > 0.15 and det.min() < SWITCH_DET
    after = det[np.searchsorted(run.t, 1.38) + 1]
    assert after > 0.99
    assert err.max() < 0.05
    assert np.abs(run.qdot).max() < 1.5


# --- §2.4.8 exponential coordinates --------------------------------------------------------

def test_exponential_coordinates_reparameterize_to_2pi_minus_length():
    """04c_exponential_joints, exponential coordinates: |q| = 5 becomes 2 pi - 5 ~ 1.283, same R and omega."""
    j = SphericalExp()
    q = 5.0 * np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5])
    qd = np.array([0.3, -0.1, 0.7])
    _, q2, qd2 = j.reparameterize(q, qd)
    assert np.isclose(np.linalg.norm(q2), 2 * np.pi - 5.0)
    assert np.allclose(j.Q(q), j.Q(q2)) and np.allclose(j.S(q) @ qd, j.S(q2) @ qd2)


def test_tilted_spinning_ball_in_exponential_coordinates_blows_up_without_reparameterisation():
    """04c_exponential_joints: without reparameterisation the simulation fails at t = 3.16 s
    as |q| -> 2 pi."""
    q0, omega = np.array([0.5, 0.0, 0.0]), np.array([0.0, 0.0, 2.0])
    qd0 = np.linalg.solve(SphericalExp().S(q0)[:3], omega)
    with pytest.raises(SimulationError, match=r"t = 3\.16 s"):
        simulate(_ball(SphericalExp()), q0, qd0, (0.0, 6.0), method="euler", h=0.01, reparameterize=False)
    short = simulate(_ball(SphericalExp()), q0, qd0, (0.0, 3.0), method="euler", h=0.01, reparameterize=False)
    assert np.linalg.norm(short.q, axis=1).max() > 5.5  # climbing towards 2 pi


def test_tilted_spinning_ball_in_exponential_coordinates_is_shortened_twice_near_1_5_pi():
    """04c_exponential_joints: shortened at t ~ 2.39 and 5.52 s, |q| stays at 1.5 pi (plus one
    step), det S >~ 0.09."""
    q0, omega = np.array([0.5, 0.0, 0.0]), np.array([0.0, 0.0, 2.0])
    qd0 = np.linalg.solve(SphericalExp().S(q0)[:3], omega)
    run = simulate(_ball(SphericalExp()), q0, qd0, (0.0, 6.0), method="euler", h=0.01)
    assert np.allclose(run.reparameterized, [2.39, 5.52])
    norm = np.linalg.norm(run.q, axis=1)
    # samples come after a step and before the next check: |q| passes 1.5 pi by one step at most
    assert REPARAM_ANGLE < norm.max() < REPARAM_ANGLE + 0.01 * np.abs(run.qdot).max()
    det_floor = 2 * (1 - np.cos(REPARAM_ANGLE)) / REPARAM_ANGLE**2
    assert np.isclose(det_floor, 0.09, atol=0.005)
    assert (2 * (1 - np.cos(norm)) / norm**2).min() > 0.085  # "about 0.09"
    assert _orientation_error(run, lambda t: exp_so3(q0) @ exp_so3(t * omega)).max() < 0.1


# --- §2.4.9-2.4.11 composite and free joints -----------------------------------------------

def test_composite_S_and_Sdot_equal_eq_2_54_and_2_58(rng):
    """04d_composite_spline_joints, 'Composite joints': a universal joint followed by a slider, by hand."""
    arm = Composite([Universal(), Prismatic([0, 0, 1])])
    j1, j2 = arm.joints
    q, qd = rng.uniform(-1, 1, 3), rng.standard_normal(3)
    A21 = adjoint(inv_se3(j2.Q(q[2:])))
    S = np.hstack([A21 @ j1.S(q[:2]), j2.S(q[2:])])
    Sdot = np.hstack([-ad(j2.S(q[2:]) @ qd[2:]) @ A21 @ j1.S(q[:2]) + A21 @ j1.Sdot(q[:2], qd[:2]),
                      j2.Sdot(q[2:], qd[2:])])
    assert np.allclose(arm.S(q), S) and np.allclose(arm.Sdot(q, qd), Sdot)


@pytest.mark.parametrize("order", Free3DExp.ORDERS)
def test_free3d_exp_S_and_Sdot_equal_the_closed_forms_eq_2_63_to_2_66(order, rng):
    """04d_composite_spline_joints, 'Free joints': Free3DExp's S is Eq. (2.63) (translate first) or (2.65)."""
    joint = Free3DExp(order)
    q, qd = rng.uniform(-1, 1, 6), rng.standard_normal(6)
    Z, I = np.zeros((3, 3)), np.eye(3)
    sph = SphericalExp()
    if order == "translate_first":
        r, rd = q[3:], qd[3:]
        Sh, Sdh, R = sph.S(r)[:3], sph.Sdot(r, rd)[:3], exp_so3(r)
        S = np.block([[Z, Sh], [R.T, Z]])
        Sdot = np.block([[Z, Sdh], [-brac(Sh @ rd) @ R.T, Z]])
    else:
        r, rd, p, pd = q[:3], qd[:3], q[3:], qd[3:]
        Sh, Sdh = sph.S(r)[:3], sph.Sdot(r, rd)[:3]
        S = np.block([[Sh, Z], [-brac(p) @ Sh, I]])
        Sdot = np.block([[Sdh, Z], [-brac(pd) @ Sh - brac(p) @ Sdh, Z]])
    assert np.allclose(joint.S(q), S, atol=1e-13) and np.allclose(joint.Sdot(q, qd), Sdot, atol=1e-13)


# --- §2.4.12 spline curve, Algorithm 3 -----------------------------------------------------

def _algorithm3_dS(curve, q, printed):
    frames = curve.control_frames
    n = len(frames)
    dC = [log_se3(inv_se3(frames[m - 1]) @ frames[m]) for m in range(n)]
    k = int(np.floor(q % n))
    bt, dbt, ddbt = cumulative_basis(q % n - k)
    xi = dC[(k + 1) % n]
    S, dS = xi * dbt[1], xi * ddbt[1]
    for i in (2, 3):
        xi = dC[(k + i) % n]
        Qi = exp_se3(xi * bt[i])
        A = adjoint(inv_se3(Qi))
        dS = xi * ddbt[i] + A @ (dS + ad(S) @ xi * (bt[i] if printed else dbt[i]))
        S = xi * dbt[i] + A @ S
    return dS


def test_algorithm3_needs_the_derivative_weight_in_line_10():
    """04d_composite_spline_joints, 'The spline curve joint': with B~'_i the Hessian agrees with
    central differences to 1e-6; with B~_i as printed it is off by more than 10%."""
    curve = PRESETS["spline_curve"][0]
    q = 2.37
    fd = (curve.S([q + 1e-6]) - curve.S([q - 1e-6]))[:, 0] / 2e-6
    rel = {p: np.linalg.norm(_algorithm3_dS(curve, q, p) - fd) / np.linalg.norm(fd) for p in (False, True)}
    assert rel[False] < 1e-8
    assert 0.1 < rel[True] < 0.3
    assert np.allclose(_algorithm3_dS(curve, q, False), curve.Sdot([q], [1.0])[:, 0])


# --- Appendix A ---------------------------------------------------------------------------

def test_appendix_a_table3_by_sympy_shortcut_matches_the_library_for_all_12_charts(rng):
    """appendix_a_codegen: det S by the column shortcut is -sin q2 / +-cos q2 as in Table 3."""
    gen = load_tool("gen_euler_joints")
    sp, q = gen.sp, gen.q
    E = sp.eye(3)
    for chart in CHART_NAMES:
        a, b, c = ("XYZ".index(x) for x in chart)
        Rb, Rc = gen.elementary(chart[1], q[1]), gen.elementary(chart[2], q[2])
        S = sp.Matrix.hstack(Rc.T * Rb.T * E[:, a], Rc.T * E[:, b], E[:, c])
        det = sp.trigsimp(S.det())
        assert det in (-sp.sin(q[1]), sp.cos(q[1]), -sp.cos(q[1]))
        values = rng.uniform(-3, 3, 3)
        f = sp.lambdify(q, S)
        assert np.allclose(np.array(f(*values), dtype=float), SphericalEuler(chart).S(values)[:3], atol=1e-14)
        assert np.isclose(float(det.subs(q[1], values[1])), SphericalEuler(chart).det_S(values), atol=1e-14)


def test_appendix_a_committed_module_contains_the_generated_code_of_one_chart():
    """appendix_a_codegen: the XYZ chart's generated functions appear verbatim in the module
    (tests/unit/test_joints_codegen.py compares the whole file)."""
    committed = (ROOT / "redmax_edu" / "joints" / "_euler_generated.py").read_text()
    assert load_tool("gen_euler_joints").chart_code("XYZ") in committed
