"""Joint derivatives of §3.2: dQ/dq, dA/dq, dS/dq, dSdot/dq, dSdot/dqdot and dAdot/dq of every
joint type and every Euler chart, against numerical differences, the writeup's closed forms and
the identities that tie them together; singular charts refused; wrong derivatives caught.

Every comparison goes through redmax_edu.checks.check_derivative: a step sweep (central
differences at h = 1e-1 ... 1e-12, the complex step at h = 1e-1 ... 1e-20) whose best step must
agree with the analytic derivative.

Tolerances. Central differences balance truncation (h^2 |f'''| / 6) against round-off
(eps |f| / h): the best step, near 1e-5, leaves ~3e-11 of relative error on entries of order
one. The spline joints carry translations of ~10 and cubic weights and reach a few 1e-10:
over 40 random states of each joint below (every chart, every family) the largest best-step
error was 3.5e-10 (spline curve, dS/dq), 5e-11 for exponential coordinates, 3e-11 for the
Euler charts. CENTRAL_TOL = 1e-8 keeps a margin of about 30 over that and is still six
orders below the error of a wrong derivative (a flipped sign gives 2 on its slice, a
transposed Hessian the bracket ad(S_j) S_k, a dropped term 1e-4 or more: the mutation tests
below). The complex step subtracts nothing, so it lands on round-off (at most 4e-15
measured): COMPLEX_TOL = 1e-12.
"""

import numpy as np
import pytest

from redmax_edu.checks import check_derivative, numerical_derivative, relative_error
from redmax_edu.joints import (
    Composite,
    Free2D,
    Free3DEuler,
    Prismatic,
    Revolute,
    SphericalEuler,
    SphericalExp,
    Universal,
)
from redmax_edu.joints import exponential as exponential_module
from redmax_edu.joints.base import SINGULAR_DET
from redmax_edu.joints.euler import CHART_NAMES
from redmax_edu.joints.exponential import exp_coefficients, exp_second_derivatives
from redmax_edu.lie import ad, ad_unchecked, adjoint, adjoint_dot, adjoint_unchecked, brac

from .test_joints import JOINT_NAMES, all_joints, random_state

CENTRAL_TOL = 1e-8  # see the module docstring
COMPLEX_TOL = 1e-12

#: One instance of every joint type, every Euler chart, both free-3D orders and three composites.
JOINTS = all_joints(np.random.default_rng(0))
MOVING = [name for name in JOINT_NAMES if JOINTS[name].ndof > 0]  # all but the fixed joint
DERIVATIVES = ("dQ_dq", "dA_dq", "dS_dq", "dSdot_dq", "dSdot_dqdot", "dAdot_dq")
METHODS_Q = ("dQ_dq", "dA_dq", "dS_dq")
METHODS_Q_QDOT = ("dSdot_dq", "dSdot_dqdot", "dAdot_dq")


def _adjoint(Q):
    # unchecked: a complex step of h = 0.1 moves the real part of Q off SE(3) by O(h^2), and the
    # checked adjoint() would refuse the perturbed matrix
    return adjoint_unchecked(Q)


def _adjoint_dot(Q, phi):
    return adjoint_unchecked(Q) @ ad_unchecked(phi)  # Eq. (1.18), as lie.adjoint_dot


def derivative_cases(joint, q, qdot):
    """``{name: (f, x, analytic)}``: each analytic derivative with the function it differentiates."""
    return {
        "dQ_dq": (joint.Q, q, joint.dQ_dq(q)),
        "dA_dq": (lambda x: _adjoint(joint.Q(x)), q, joint.dA_dq(q)),
        "dS_dq": (joint.S, q, joint.dS_dq(q)),
        "dSdot_dq": (lambda x: joint.Sdot(x, qdot), q, joint.dSdot_dq(q, qdot)),
        "dSdot_dqdot": (lambda x: joint.Sdot(q, x), qdot, joint.dSdot_dqdot(q, qdot)),
        "dAdot_dq": (lambda x: _adjoint_dot(joint.Q(x), joint.S(x) @ qdot), q, joint.dAdot_dq(q, qdot)),
    }


def call(joint, method, q, qdot):
    return getattr(joint, method)(q) if method in METHODS_Q else getattr(joint, method)(q, qdot)


# --- shapes -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", JOINT_NAMES)
def test_derivatives_have_the_documented_shapes(name, rng):
    joint = JOINTS[name]
    n = joint.ndof
    q, qdot = random_state(joint, rng)
    shapes = {"dQ_dq": (4, 4, n), "dA_dq": (6, 6, n), "dS_dq": (6, n, n), "dSdot_dq": (6, n, n),
              "dSdot_dqdot": (6, n, n), "dAdot_dq": (6, 6, n)}
    for method, shape in shapes.items():
        out = call(joint, method, q, qdot)
        assert out.shape == shape and np.isfinite(out).all(), (name, method, out.shape)


@pytest.mark.parametrize("name", MOVING)
def test_derivatives_at_once_equal_the_derivatives_one_by_one(name, rng):
    """``Joint.derivatives`` (what Algorithm 11 calls; a composite shares work between the four)
    gives what the four methods give one by one, which the tests below check against differences."""
    joint = JOINTS[name]
    q, qdot = random_state(joint, rng)
    together = joint.derivatives(q, qdot)
    apart = (joint.dA_dq(q), joint.dS_dq(q), joint.dAdot_dq(q, qdot), joint.dSdot_dq(q, qdot))
    for what, a, b in zip(("dA_dq", "dS_dq", "dAdot_dq", "dSdot_dq"), together, apart, strict=True):
        assert np.allclose(a, b, rtol=1e-12, atol=1e-12), (name, what)
    assert joint.derivatives(q)[2] is None         # without qdot, no rates


# --- (a) every derivative of every joint against central differences and the complex step ---
@pytest.mark.parametrize("what", DERIVATIVES)
@pytest.mark.parametrize("name", MOVING)
def test_joint_derivative_matches_central_differences(name, what, rng):
    joint = JOINTS[name]
    for _ in range(2):
        q, qdot = random_state(joint, rng)
        f, x, analytic = derivative_cases(joint, q, qdot)[what]
        check = check_derivative(f, x, analytic, rtol=CENTRAL_TOL)
        assert check.ok, (name, what, q.tolist(), check.error)


@pytest.mark.parametrize("what", DERIVATIVES)
@pytest.mark.parametrize("name", MOVING)
def test_joint_derivative_matches_the_complex_step(name, what, rng):
    """Every joint evaluates Q, S and Sdot analytically in complex q (and qdot)."""
    joint = JOINTS[name]
    q, qdot = random_state(joint, rng)
    f, x, analytic = derivative_cases(joint, q, qdot)[what]
    check = check_derivative(f, x, analytic, method="complex", rtol=COMPLEX_TOL)
    assert check.ok, (name, what, q.tolist(), check.error)


def _unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


AXIS = _unit([0.3, -0.5, 0.8])
EDGE_STATES = [
    ("spherical_exp", np.zeros(3)),  # the rest pose: Eq. (3.32)-(3.38) divide by q.q here
    ("spherical_exp", 1e-8 * AXIS),
    ("spherical_exp", 0.5 * AXIS),  # where a, b, a', b' change from series to closed form
    ("spherical_exp", 1.5 * AXIS),  # where a'', b'' do
    ("spherical_exp", (np.pi - 1e-8) * AXIS),
    ("spherical_exp", 1.5 * np.pi * AXIS),  # the reparameterization threshold
    ("spherical_exp", (2 * np.pi - 2e-3) * AXIS),  # det S = 1e-7, just above SINGULAR_DET
    ("free3d_exp", np.concatenate([[1.0, -2.0, 0.5], np.zeros(3)])),
    ("spherical_euler_XYZ", np.array([0.4, np.pi / 2 - 1e-4, -0.3])),  # det S = 1e-4
    ("spherical_euler_ZYZ", np.array([0.4, 1e-4, -0.3])),
    ("spline_surface", np.array([0.0, 0.0])),
    ("spline_surface", np.array([1.0, 1.0])),
    ("spline_curve", np.array([2.5])),
]


@pytest.mark.parametrize(("name", "q"), EDGE_STATES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(EDGE_STATES)])
def test_joint_derivatives_at_edge_states(name, q, rng):
    joint = JOINTS[name]
    qdot = rng.standard_normal(joint.ndof)
    for what, (f, x, analytic) in derivative_cases(joint, q, qdot).items():
        assert check_derivative(f, x, analytic, rtol=CENTRAL_TOL).ok, (name, what)
        assert check_derivative(f, x, analytic, method="complex", rtol=COMPLEX_TOL).ok, (name, what)


def test_exp_second_derivative_coefficients_match_differences_and_meet_their_series():
    """a''(s), b''(s) against central differences of a'(s), b'(s), on both sides of the seam."""
    for s in (0.0, 0.1, 0.25, 1.0, 2.2, 2.3, 4.0, 30.0):
        first = lambda x: np.array(exp_coefficients(x[0])[2:])  # noqa: E731
        check = check_derivative(first, [s], np.array(exp_second_derivatives(s))[:, None], rtol=1e-8)
        assert check.ok, (s, check.error)
    below, above = exp_second_derivatives(1.5**2 * (1 - 1e-15)), exp_second_derivatives(1.5**2)
    assert relative_error(below, above) < 1e-13


def test_spline_curve_dSdot_dq_at_a_knot_is_the_derivative_from_the_right(rng):
    """A cubic B-spline is C^2: S is C^1, dS/dq continuous, and dSdot/dq jumps at a knot."""
    joint = JOINTS["spline_curve"]
    q, qdot = np.array([2.0]), np.array([1.3])
    G = joint.dSdot_dq(q, qdot)
    sdot = lambda x: joint.Sdot(x, qdot)  # noqa: E731
    assert check_derivative(sdot, q, G, method="forward", steps=np.logspace(-4, -9, 6), rtol=1e-5).ok
    h = 1e-7
    left = ((sdot(q) - sdot(q - h)) / h)[..., None]
    assert relative_error(left, G) > 1e-3  # the left derivative differs: a jump, not round-off
    assert check_derivative(joint.S, q, joint.dS_dq(q), rtol=1e-6).ok  # the Hessian is continuous


# --- (b) identities and the writeup's closed forms -----------------------------------------
@pytest.mark.parametrize("name", MOVING)
def test_identities_tie_the_derivatives_to_S(name, rng):
    """Eq. (2.31): dQ/dq_k = Q [S_k]; Eq. (1.18): dA/dq_k = A ad(S_k); Eq. (3.39): Sdot = dS/dq qdot;
    dSdot/dqdot = dS/dq; and the structure equation dS_j/dq_k - dS_k/dq_j = ad(S_j) S_k."""
    joint = JOINTS[name]
    q, qdot = random_state(joint, rng)
    Q, S, H = joint.Q(q), joint.S(q), joint.dS_dq(q)
    A = adjoint(Q)
    scale = 1.0 + np.abs(Q).max()
    for k in range(joint.ndof):
        assert np.allclose(joint.dQ_dq(q)[:, :, k], Q @ brac(S[:, k]), rtol=0, atol=1e-13 * scale)
        assert np.allclose(joint.dA_dq(q)[:, :, k], A @ ad(S[:, k]), rtol=0, atol=1e-12 * scale)
    assert np.allclose(joint.Sdot(q, qdot), np.einsum("ajk,k->aj", H, qdot), rtol=0, atol=1e-12 * scale)
    assert np.array_equal(joint.dSdot_dqdot(q, qdot), H)
    bracket = np.stack([[ad(S[:, j]) @ S[:, k] for k in range(joint.ndof)] for j in range(joint.ndof)])
    assert np.allclose(H - H.transpose(0, 2, 1), np.moveaxis(bracket, -1, 0), rtol=0, atol=1e-12 * scale)


@pytest.mark.parametrize("name", ["revolute", "universal", "spherical_euler_ZXZ", "free3d_exp",
                                  "spline_curve"])
def test_adjoint_dot_is_the_time_derivative_of_the_adjoint(name, rng):
    """Adot = A ad(S qdot), the quantity dAdot_dq differentiates (Eq. 3.13)."""
    joint = JOINTS[name]
    q, qdot = random_state(joint, rng)
    along = lambda t: adjoint(joint.Q(q + t[0] * qdot))  # noqa: E731
    Adot = adjoint_dot(joint.Q(q), joint.S(q) @ qdot)
    assert check_derivative(along, [0.0], Adot[..., None], rtol=CENTRAL_TOL).ok


def test_constant_jacobian_joints_match_eq_3_16_to_3_22(rng):
    a = _unit(rng.standard_normal(3))
    q, qdot = rng.standard_normal(1), rng.standard_normal(1)
    rev = Revolute(a)
    R = rev.Q(q)[:3, :3]
    dR, ddR = R @ brac(a), R @ brac(a) @ brac(a) * qdot[0]  # Eq. (3.16)
    zero = np.zeros((3, 3))
    assert np.allclose(rev.dA_dq(q)[:, :, 0], np.block([[dR, zero], [zero, dR]]), rtol=0, atol=1e-15)
    dAdot = rev.dAdot_dq(q, qdot)[:, :, 0]
    assert np.allclose(dAdot, np.block([[ddR, zero], [zero, ddR]]), rtol=0, atol=1e-15)
    pris = Prismatic(a)
    dA = pris.dA_dq(q)[:, :, 0]
    assert np.array_equal(dA, np.block([[zero, zero], [brac(a), zero]]))  # Eq. (3.18)
    assert not pris.dAdot_dq(q, qdot).any()
    for joint in (rev, pris):
        assert not joint.dS_dq(q).any() and not joint.dSdot_dq(q, qdot).any()
    trans = JOINTS["translational"]
    dA = trans.dA_dq(np.zeros(3))
    for k in range(3):  # Eq. (3.22)
        assert np.array_equal(dA[:, :, k], np.block([[zero, zero], [brac(np.eye(3)[k]), zero]]))


def test_xyz_chart_matches_eq_3_27(rng):
    q, qd = rng.uniform(-1.2, 1.2, 3), rng.standard_normal(3)
    s1, s2, s3 = np.sin(q)
    c1, c2, c3 = np.cos(q)
    qd1, qd2, qd3 = qd
    dS = np.zeros((3, 3, 3))
    dS[:, :, 1] = [[-c3 * s2, 0, 0], [s2 * s3, 0, 0], [c2, 0, 0]]
    dS[:, :, 2] = [[-c2 * s3, c3, 0], [-c2 * c3, -s3, 0], [0, 0, 0]]
    dSd = np.zeros((3, 3, 3))
    dSd[:, :, 1] = [[qd3 * s2 * s3 - qd2 * c2 * c3, 0, 0],
                    [qd2 * c2 * s3 + qd3 * c3 * s2, 0, 0],
                    [-qd2 * s2, 0, 0]]
    dSd[:, :, 2] = [[qd2 * s2 * s3 - qd3 * c2 * c3, -qd3 * s3, 0],
                    [qd2 * c3 * s2 + qd3 * c2 * s3, -qd3 * c3, 0],
                    [0, 0, 0]]
    j = SphericalEuler("XYZ")
    assert np.allclose(j.dS_dq(q)[:3], dS, rtol=0, atol=1e-15) and not j.dS_dq(q)[3:].any()
    assert np.allclose(j.dSdot_dq(q, qd)[:3], dSd, rtol=0, atol=1e-14) and not j.dSdot_dq(q, qd)[3:].any()


def test_xyz_chart_dR_matches_eq_3_24_with_one_entry_corrected(rng):
    """Entry (2, 3) of dR/dq1 is the derivative of R_23 = -c2 s1 (Eq. 2.33), i.e. -c1 c2; the
    seed's text of Eq. (3.24) reads -c1 s2 there, which the central differences reject."""
    q = rng.uniform(-1.2, 1.2, 3)
    s1, s2, s3 = np.sin(q)
    c1, c2, c3 = np.cos(q)
    dR = np.zeros((3, 3, 3))
    dR[:, :, 0] = [[0, 0, 0], [c1 * c3 * s2 - s1 * s3, -c3 * s1 - c1 * s2 * s3, -c1 * c2],
                   [c1 * s3 + c3 * s1 * s2, c1 * c3 - s1 * s2 * s3, -c2 * s1]]
    dR[:, :, 1] = [[-c3 * s2, s2 * s3, c2], [c2 * c3 * s1, -c2 * s1 * s3, s1 * s2],
                   [-c1 * c2 * c3, c1 * c2 * s3, -c1 * s2]]
    dR[:, :, 2] = [[-c2 * s3, -c2 * c3, 0], [c1 * c3 - s1 * s2 * s3, -c1 * s3 - c3 * s1 * s2, 0],
                   [c3 * s1 + c1 * s2 * s3, c1 * c3 * s2 - s1 * s3, 0]]
    j = SphericalEuler("XYZ")
    assert np.allclose(j.dQ_dq(q)[:3, :3], dR, rtol=0, atol=1e-15)
    as_printed = j.dQ_dq(q)
    as_printed[1, 2, 0] = -c1 * s2
    assert not check_derivative(j.Q, q, as_printed).ok


def test_universal_joint_matches_eq_3_29_and_eq_3_30_corrected(rng):
    """Eq. (3.30) as printed puts the column (0, 1, 0, 0, 0, 0) into dS/dq2 as well; that column of
    S is the constant y axis, so its derivative is zero, which the central differences confirm."""
    j = Universal()
    q, qd = rng.uniform(-1.2, 1.2, 2), rng.standard_normal(2)
    s1, s2, c1, c2 = np.sin(q[0]), np.sin(q[1]), np.cos(q[0]), np.cos(q[1])
    dR2 = [[-s2, 0, c2], [c2 * s1, 0, s1 * s2], [-c1 * c2, 0, -c1 * s2]]  # Eq. (3.29)
    assert np.allclose(j.dQ_dq(q)[:3, :3, 1], dR2, rtol=0, atol=1e-15)
    H = np.zeros((6, 2, 2))
    H[:3, 0, 1] = [-s2, 0, c2]
    assert np.allclose(j.dS_dq(q), H, rtol=0, atol=1e-15)
    G = np.zeros((6, 2, 2))
    G[:3, 0, 1] = [-c2 * qd[1], 0, -s2 * qd[1]]
    assert np.allclose(j.dSdot_dq(q, qd), G, rtol=0, atol=1e-15)
    as_printed = H.copy()
    as_printed[1, 1, 1] = 1.0
    assert not check_derivative(j.S, q, as_printed).ok


def test_exponential_dR_matches_eq_3_32_away_from_zero(rng):
    """Gallego and Yezzi's dR/dq_k = (q_k [q] + [[q] (I - R) e_k]) R / q.q (Eq. 3.32)."""
    j = SphericalExp()
    for norm in (0.3, 1.0, 2.5):
        q = norm * _unit(rng.standard_normal(3))
        R = j.Q(q)[:3, :3]
        for k in range(3):
            e = np.eye(3)[k]
            eq_3_32 = (q[k] * brac(q) + brac(brac(q) @ (np.eye(3) - R) @ e)) @ R / (q @ q)
            assert np.allclose(j.dQ_dq(q)[:3, :3, k], eq_3_32, rtol=0, atol=1e-14)


def test_free2d_matches_eq_3_41_to_3_46(rng):
    j = Free2D()
    q, qd = rng.standard_normal(3), rng.standard_normal(3)
    s, c, qd3 = np.sin(q[2]), np.cos(q[2]), qd[2]
    R = j.Q(q)[:3, :3]
    p, pdot = np.array([q[0], q[1], 0.0]), np.array([qd[0], qd[1], 0.0])
    dR = np.array([[-s, -c, 0], [c, -s, 0], [0, 0, 0]])  # Eq. (3.41)
    dRdot = np.array([[-c, s, 0], [-s, -c, 0], [0, 0, 0]]) * qd3  # Eq. (3.43)
    Rdot = dR * qd3
    zero = np.zeros((3, 3))
    dA = j.dA_dq(q)
    for k in range(2):
        assert np.allclose(dA[:, :, k], np.block([[zero, zero], [brac(np.eye(3)[k]) @ R, zero]]), atol=1e-15)
    assert np.allclose(dA[:, :, 2], np.block([[dR, zero], [brac(p) @ dR, dR]]), rtol=0, atol=1e-14)
    dAdot = j.dAdot_dq(q, qd)
    for k in range(2):
        lower = brac(np.eye(3)[k]) @ Rdot
        assert np.allclose(dAdot[:, :, k], np.block([[zero, zero], [lower, zero]]), rtol=0, atol=1e-14)
    lower = brac(pdot) @ dR + brac(p) @ dRdot
    assert np.allclose(dAdot[:, :, 2], np.block([[dRdot, zero], [lower, dRdot]]), rtol=0, atol=1e-14)
    H, G = np.zeros((6, 3, 3)), np.zeros((6, 3, 3))
    H[3:5, :2, 2] = [[-s, c], [-c, -s]]  # Eq. (3.45)
    G[3:5, :2, 2] = [[-c * qd3, -s * qd3], [s * qd3, -c * qd3]]  # Eq. (3.46)
    assert np.allclose(j.dS_dq(q), H, rtol=0, atol=1e-15)
    assert np.allclose(j.dSdot_dq(q, qd), G, rtol=0, atol=1e-15)


@pytest.mark.parametrize("chart", ["XYZ", "ZYZ"])
def test_free3d_matches_eq_3_48_to_3_52_with_eq_3_50_corrected(chart, rng):
    """The lower-left block of dAdot/dq_k (k = 4..6) is [pdot] dR/dq_k + [p] dRdot/dq_k, the
    derivative of [pdot] R + [p] Rdot (Eq. 3.49). Eq. (3.50), and Eq. (3.43) for the 2D joint,
    print [pdot] dRdot/dq_k in its first term, which the complex step rejects."""
    j = Free3DEuler(chart)
    ball = SphericalEuler(chart)
    q, qd = rng.uniform(-1.2, 1.2, 6), rng.standard_normal(6)
    p, r, pdot, rdot = q[:3], q[3:], qd[:3], qd[3:]
    R, dR = ball.Q(r)[:3, :3], ball.dQ_dq(r)[:3, :3]
    dRdot = np.einsum("abkl,l->abk", numerical_derivative(ball.dQ_dq, r)[:3, :3], rdot)  # d(Rdot)/dq_k
    Rdot = dR @ rdot
    zero = np.zeros((3, 3))
    dA, dAdot, H = j.dA_dq(q), j.dAdot_dq(q, qd), j.dS_dq(q)
    for k in range(3):  # Eq. (3.48), (3.50), translations
        e = brac(np.eye(3)[k])
        assert np.allclose(dA[:, :, k], np.block([[zero, zero], [e @ R, zero]]), rtol=0, atol=1e-14)
        assert np.allclose(dAdot[:, :, k], np.block([[zero, zero], [e @ Rdot, zero]]), rtol=0, atol=1e-13)
        assert not H[:, :, k].any()
    for k in range(3):  # rotations
        dRk, dRdk = dR[:, :, k], dRdot[:, :, k]
        assert np.allclose(dA[:, :, 3 + k], np.block([[dRk, zero], [brac(p) @ dRk, dRk]]), rtol=0, atol=1e-14)
        right = np.block([[dRdk, zero], [brac(pdot) @ dRk + brac(p) @ dRdk, dRdk]])
        assert np.allclose(dAdot[:, :, 3 + k], right, rtol=0, atol=1e-8)  # dRdot by differences
        eq_3_52 = np.block([[zero, ball.dS_dq(r)[:3, :, k]], [dRk.T, zero]])
        assert np.allclose(H[:, :, 3 + k], eq_3_52, rtol=0, atol=1e-14)
    as_printed = dAdot.copy()
    for k in range(3):
        as_printed[3:, :3, 3 + k] = brac(pdot) @ dRdot[:, :, k] + brac(p) @ dRdot[:, :, k]
    adot = lambda x: _adjoint_dot(j.Q(x), j.S(x) @ qd)  # noqa: E731
    assert check_derivative(adot, q, dAdot, method="complex", rtol=COMPLEX_TOL).ok
    assert not check_derivative(adot, q, as_printed, method="complex", rtol=COMPLEX_TOL).ok


# --- (c) the checks catch wrong derivatives ---------------------------------------------------
MUTANT_JOINTS = ["universal", "spherical_euler_XYZ", "spherical_euler_YZY", "spherical_exp", "free2d",
                 "free3d_exp", "free3d_exp_rotate_first", "free3d_euler_ZYX", "composite_mixed",
                 "spline_curve", "spline_surface"]


@pytest.mark.parametrize("what", DERIVATIVES)
@pytest.mark.parametrize("name", MUTANT_JOINTS)
def test_a_sign_flipped_slice_fails_the_same_check(name, what, rng):
    """The check that passes the analytic derivative fails it with one slice negated."""
    joint = JOINTS[name]
    q, qdot = random_state(joint, rng)
    f, x, analytic = derivative_cases(joint, q, qdot)[what]
    assert check_derivative(f, x, analytic, rtol=CENTRAL_TOL).ok
    k = int(np.argmax([np.abs(analytic[..., i]).sum() for i in range(analytic.shape[-1])]))
    wrong = analytic.copy()
    wrong[..., k] *= -1.0
    for method, tol in (("central", CENTRAL_TOL), ("complex", COMPLEX_TOL)):
        check = check_derivative(f, x, wrong, method=method, rtol=tol)
        assert not check.ok and check.error > 1e-2, (name, what, method, check.error)


@pytest.mark.parametrize("name", [n for n in MOVING if JOINTS[n].ndof >= 2])
def test_a_transposed_hessian_fails_where_columns_do_not_commute(name, rng):
    """dS_j/dq_k and dS_k/dq_j differ by ad(S_j) S_k: the transposed Hessian is wrong by exactly
    that bracket, and the check sees it whenever two columns do not commute."""
    joint = JOINTS[name]
    q, _ = random_state(joint, rng)
    H = joint.dS_dq(q)
    transposed = H.transpose(0, 2, 1)
    if relative_error(transposed, H) < 1e-6:  # commuting columns (planar, translational, a screw)
        assert name in ("planar", "translational", "composite_rev_pris"), name
        return
    assert check_derivative(joint.S, q, H, rtol=CENTRAL_TOL).ok
    check = check_derivative(joint.S, q, transposed, rtol=CENTRAL_TOL)
    assert not check.ok and check.error > 1e-3, (name, check.error)


def test_a_dropped_second_derivative_term_of_exponential_coordinates_is_caught(monkeypatch, rng):
    """a''(s) and b''(s) are small (1/360, 1/2520 at q = 0), yet forgetting them fails the check."""
    joint = SphericalExp()
    q, qdot = 0.9 * _unit(rng.standard_normal(3)), rng.standard_normal(3)
    sdot = lambda x: joint.Sdot(x, qdot)  # noqa: E731
    assert check_derivative(sdot, q, joint.dSdot_dq(q, qdot), rtol=CENTRAL_TOL).ok
    monkeypatch.setattr(exponential_module, "exp_second_derivatives", lambda s: (0.0 * s, 0.0 * s))
    check = check_derivative(sdot, q, joint.dSdot_dq(q, qdot), rtol=CENTRAL_TOL)
    assert not check.ok and check.error > 1e-4, check.error


# --- (d) singular charts are refused, bad input named ------------------------------------------
@pytest.mark.parametrize("chart", CHART_NAMES)
def test_euler_derivatives_refuse_the_chart_singularity(chart, rng):
    singular = 0.0 if chart[0] == chart[2] else np.pi / 2  # det S = -sin q2 or +-cos q2 (Table 3)
    q, qdot = np.array([0.3, singular, -0.2]), rng.standard_normal(3)
    joint = SphericalEuler(chart)
    for method in DERIVATIVES:
        with pytest.raises(ValueError, match=rf"'q' of spherical_euler joint: chart {chart} is in gimbal "
                                             r"lock.*reparameterize"):
            call(joint, method, q, qdot)
    near = q + [0.0, 10 * SINGULAR_DET, 0.0]  # |det S| = 1.5e-7: differentiable, and differentiated
    assert check_derivative(joint.S, near, joint.dS_dq(near), rtol=CENTRAL_TOL).ok
    new, q_new, qdot_new = joint.reparameterize(q, qdot)  # the way out the message names
    assert new.chart != chart
    assert check_derivative(new.S, q_new, new.dS_dq(q_new), rtol=CENTRAL_TOL).ok


def test_exponential_and_composite_derivatives_refuse_their_singularities(rng):
    joint = SphericalExp()
    q, qdot = 2 * np.pi * AXIS, rng.standard_normal(3)
    for method in DERIVATIVES:
        with pytest.raises(ValueError, match=r"spherical_exp joint: \|q\| = 6.283185 is a nonzero multiple"):
            call(joint, method, q, qdot)
    _, q_new, _ = joint.reparameterize(q, qdot)
    assert np.linalg.norm(q_new) < 1e-12 and joint.dS_dq(q_new).shape == (6, 3, 3)
    free = Free3DEuler("XZX")
    with pytest.raises(ValueError, match=r"free3d_euler joint: its sub-joint 1 \(spherical_euler\): chart "):
        free.dSdot_dq([1.0, 2.0, 3.0, 0.5, np.pi, 0.5], np.zeros(6))
    chain = Composite([Revolute([1, 0, 0]), SphericalExp()])
    with pytest.raises(ValueError, match=r"composite joint: its sub-joint 1 \(spherical_exp\)"):
        chain.dA_dq(np.concatenate([[0.2], 4 * np.pi * AXIS]))


@pytest.mark.parametrize("name", JOINT_NAMES)
def test_derivatives_refuse_bad_coordinates_naming_the_argument_and_the_joint(name):
    joint = JOINTS[name]
    n, kind = joint.ndof, joint.kind
    good = np.full(n, 0.7)  # away from every chart's singularity
    bad = [np.zeros(n + 1), np.zeros((n, 1)), "q"]
    if n:
        bad += [np.where(np.arange(n) == n - 1, np.nan, good), np.where(np.arange(n) == 0, np.inf, good)]
    for value in bad:
        for method in DERIVATIVES:
            with pytest.raises(ValueError, match=rf"argument 'q of {kind} joint'"):
                call(joint, method, value, good)
        for method in METHODS_Q_QDOT:
            with pytest.raises(ValueError, match=rf"argument 'qdot of {kind} joint'"):
                getattr(joint, method)(good, value)
