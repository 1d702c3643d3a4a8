"""Unit tests of redmax_edu.lie: SO(3), SE(3), their algebras, and the maps between them.

Reference values come from scipy.linalg.expm (a Pade approximant independent of the
closed forms under test), from numpy.linalg.inv, and from the derivative checks of
redmax_edu.checks.
"""

import numpy as np
import pytest
from scipy.linalg import expm

from redmax_edu.checks import check_derivative, numerical_derivative
from redmax_edu.lie import (
    ad,
    ad_unchecked,
    adjoint,
    adjoint_dot,
    brac,
    exp_se3,
    exp_so3,
    gamma,
    inv_se3,
    left_jacobian_inverse_so3,
    left_jacobian_so3,
    log_se3,
    log_so3,
    material_jacobian,
    random_rotation,
    random_transform,
    right_jacobian_inverse_so3,
    right_jacobian_so3,
    screw,
    unbrac,
)

#: The angles where the closed forms of exp and log need care (Taylor series at 0, the
#: symmetric-part axis at pi).
EDGE_ANGLES = [0.0, 1e-8, np.pi - 1e-8, np.pi]
#: Both sides of the switches between branches: Taylor series vs closed form (1e-2) and
#: skew-part vs symmetric-part axis in log_so3 (pi/2).
SWITCH_ANGLES = [1e-2 * (1 - 1e-12), 1e-2 * (1 + 1e-12), np.pi / 2 - 1e-12, np.pi / 2 + 1e-12]
ANGLES_BELOW_PI = [0.0, 1e-8, *SWITCH_ANGLES, 1.0, 3.0, np.pi - 1e-8]

#: exp and log are accurate to a few ulps of their O(1) entries (measured below 2e-15), and
#: scipy's expm is accurate to ~1e-15 for these norms: 1e-12 leaves room for either.
TOL = 1e-12


def unit_vector(rng):
    v = rng.standard_normal(3)
    return v / np.linalg.norm(v)


def twist_with_angle(rng, angle):
    return np.concatenate([angle * unit_vector(rng), rng.standard_normal(3)])


def assert_rotation(R, atol=1e-14):
    """R^T R = I and det R = 1, to round-off (products of O(1) entries)."""
    assert R.shape == (3, 3)
    np.testing.assert_allclose(R.T @ R, np.eye(3), rtol=0, atol=atol)
    assert np.linalg.det(R) == pytest.approx(1.0, abs=atol)


def assert_transform(E, atol=1e-14):
    assert E.shape == (4, 4)
    np.testing.assert_array_equal(E[3], [0, 0, 0, 1])
    assert_rotation(E[:3, :3], atol)


# --- brac / unbrac -----------------------------------------------------------------------


def test_brac_of_3_vector_is_the_cross_product_matrix(rng):
    for _ in range(10):
        a, b = rng.standard_normal((2, 3))
        # one product and one difference per entry: a few ulps
        np.testing.assert_allclose(brac(a) @ b, np.cross(a, b), rtol=0, atol=1e-14)
        np.testing.assert_array_equal(brac(a), -brac(a).T)


def test_brac_of_twist_has_the_block_structure_of_eq_1_6(rng):
    phi = rng.standard_normal(6)
    S = brac(phi)
    assert S.shape == (4, 4)
    np.testing.assert_array_equal(S[:3, :3], brac(phi[:3]))
    np.testing.assert_array_equal(S[:3, 3], phi[3:])
    np.testing.assert_array_equal(S[3], np.zeros(4))
    # acting on a homogeneous point it gives that point's velocity omega x r + nu
    r = rng.standard_normal(3)
    np.testing.assert_allclose(S @ np.append(r, 1.0), np.append(np.cross(phi[:3], r) + phi[3:], 0.0),
                               rtol=0, atol=1e-14)


@pytest.mark.parametrize("n", [3, 6])
def test_unbrac_inverts_brac(rng, n):
    v = rng.standard_normal(n)
    np.testing.assert_array_equal(unbrac(brac(v)), v)
    S = brac(rng.standard_normal(n))
    np.testing.assert_array_equal(brac(unbrac(S)), S)


@pytest.mark.parametrize("n", [3, 6])
def test_unbrac_reads_the_skew_part_of_a_nearly_skew_matrix(rng, n):
    v = rng.standard_normal(n)
    noise = 1e-3 * rng.standard_normal((3, 3))
    S = brac(v)
    S[:3, :3] += noise + noise.T  # a symmetric error, as in R^T dR from finite differences
    # the symmetric part cancels exactly up to the rounding of one addition: 1e-15, while
    # reading single entries would be off by ~1e-3
    np.testing.assert_allclose(unbrac(S), v, rtol=0, atol=1e-15)


# --- exp ----------------------------------------------------------------------------------


def test_exp_so3_matches_expm_at_random_inputs(rng):
    for _ in range(20):
        w = 2.0 * rng.standard_normal(3)
        np.testing.assert_allclose(exp_so3(w), expm(brac(w)), rtol=0, atol=TOL)


def test_exp_se3_matches_expm_at_random_inputs(rng):
    for _ in range(20):
        phi = 2.0 * rng.standard_normal(6)
        np.testing.assert_allclose(exp_se3(phi), expm(brac(phi)), rtol=0, atol=TOL)


@pytest.mark.parametrize("angle", EDGE_ANGLES + SWITCH_ANGLES)
def test_exp_so3_matches_expm_at_edge_angles(rng, angle):
    for _ in range(5):
        w = angle * unit_vector(rng)
        R = exp_so3(w)
        np.testing.assert_allclose(R, expm(brac(w)), rtol=0, atol=TOL)
        assert_rotation(R)


@pytest.mark.parametrize("angle", EDGE_ANGLES + SWITCH_ANGLES)
def test_exp_se3_matches_expm_at_edge_angles(rng, angle):
    for _ in range(5):
        phi = twist_with_angle(rng, angle)
        E = exp_se3(phi)
        np.testing.assert_allclose(E, expm(brac(phi)), rtol=0, atol=TOL)
        assert_transform(E)


# --- log ----------------------------------------------------------------------------------


@pytest.mark.parametrize("angle", ANGLES_BELOW_PI)
def test_log_so3_inverts_exp_so3_below_pi(rng, angle):
    for _ in range(5):
        w = angle * unit_vector(rng)
        np.testing.assert_allclose(log_so3(exp_so3(w)), w, rtol=0, atol=TOL)


@pytest.mark.parametrize("angle", ANGLES_BELOW_PI)
def test_log_se3_inverts_exp_se3_below_pi(rng, angle):
    for _ in range(5):
        phi = twist_with_angle(rng, angle)
        np.testing.assert_allclose(log_se3(exp_se3(phi)), phi, rtol=0, atol=TOL)


@pytest.mark.parametrize("angle", EDGE_ANGLES)
def test_exp_so3_inverts_log_so3_including_angle_pi(rng, angle):
    for _ in range(5):
        R = exp_so3(angle * unit_vector(rng))
        np.testing.assert_allclose(exp_so3(log_so3(R)), R, rtol=0, atol=TOL)


@pytest.mark.parametrize("angle", EDGE_ANGLES)
def test_exp_se3_inverts_log_se3_including_angle_pi(rng, angle):
    for _ in range(5):
        E = exp_se3(twist_with_angle(rng, angle))
        np.testing.assert_allclose(exp_se3(log_se3(E)), E, rtol=0, atol=TOL)


def test_exp_inverts_log_at_random_poses(rng):
    for _ in range(20):
        R = random_rotation(rng)
        np.testing.assert_allclose(exp_so3(log_so3(R)), R, rtol=0, atol=TOL)
        E = random_transform(rng)
        np.testing.assert_allclose(exp_se3(log_se3(E)), E, rtol=0, atol=TOL)


def test_log_so3_at_angle_pi_returns_one_of_the_two_logarithms(rng):
    for _ in range(20):
        n = unit_vector(rng)
        w = log_so3(exp_so3(np.pi * n))
        sign = np.sign(w @ n)  # +pi n and -pi n are both logarithms
        np.testing.assert_allclose(w, sign * np.pi * n, rtol=0, atol=TOL)


@pytest.mark.parametrize("n", [[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [1.0, -1.0, 0.0], [-1.0, 2.0, 2.0]],
                         ids=["x", "-y", "x-y", "-x+2y+2z"])
def test_log_so3_of_exact_half_turn_picks_positive_largest_component(n):
    n = np.asarray(n) / np.linalg.norm(n)
    R = 2.0 * np.outer(n, n) - np.eye(3)  # symmetric: the skew part is exactly zero
    w = log_so3(R)
    k = np.argmax(np.abs(n))
    np.testing.assert_allclose(w, np.sign(n[k]) * np.pi * n, rtol=0, atol=TOL)


def test_log_so3_returns_angle_at_most_pi(rng):
    rotations = [random_rotation(rng) for _ in range(50)]
    rotations += [exp_so3(a * unit_vector(rng)) for a in (np.pi - 1e-8, np.pi) for _ in range(20)]
    for R in rotations:
        # t = atan2(...) <= pi exactly; |t n| may exceed it by the rounding of n's norm (1 ulp)
        assert np.linalg.norm(log_so3(R)) <= np.pi * (1 + 4 * np.finfo(float).eps)


# --- inverse, adjoint, ad -------------------------------------------------------------------


def test_inv_se3_matches_the_matrix_inverse(rng):
    for _ in range(10):
        E = random_transform(rng, scale=3.0)
        Einv = inv_se3(E)
        # translations ~3: entries of the products are a few ulps of ~10
        np.testing.assert_allclose(Einv, np.linalg.inv(E), rtol=0, atol=1e-13)
        np.testing.assert_allclose(E @ Einv, np.eye(4), rtol=0, atol=1e-13)
        np.testing.assert_array_equal(Einv[3], [0, 0, 0, 1])


def test_adjoint_has_the_block_structure_of_eq_1_14(rng):
    E = random_transform(rng)
    R, p = E[:3, :3], E[:3, 3]
    A = adjoint(E)
    np.testing.assert_array_equal(A[:3, :3], R)
    np.testing.assert_array_equal(A[3:, 3:], R)
    np.testing.assert_array_equal(A[:3, 3:], np.zeros((3, 3)))
    np.testing.assert_allclose(A[3:, :3], brac(p) @ R, rtol=0, atol=1e-15)


def test_adjoint_of_a_product_is_the_product_of_adjoints(rng):
    for _ in range(10):
        E1, E2 = random_transform(rng), random_transform(rng)
        np.testing.assert_allclose(adjoint(E1 @ E2), adjoint(E1) @ adjoint(E2), rtol=0, atol=1e-13)


def test_adjoint_of_the_inverse_is_the_inverse_of_the_adjoint(rng):
    for _ in range(10):
        E = random_transform(rng)
        np.testing.assert_allclose(adjoint(inv_se3(E)), np.linalg.inv(adjoint(E)), rtol=0, atol=1e-13)


def test_adjoint_maps_body_twist_to_the_spatial_twist_of_eq_1_15(rng):
    # [phi_a] = E [phi_b] E^-1: the same motion written in frame a
    E, phi = random_transform(rng), rng.standard_normal(6)
    np.testing.assert_allclose(brac(adjoint(E) @ phi), E @ brac(phi) @ inv_se3(E), rtol=0, atol=1e-13)


def test_ad_of_a_twist_annihilates_that_twist(rng):
    for _ in range(10):
        phi = rng.standard_normal(6)
        np.testing.assert_allclose(ad(phi) @ phi, np.zeros(6), rtol=0, atol=1e-14)


def test_stacked_ad_has_the_block_structure_of_eq_1_19(rng):
    """ad_unchecked fills [[w], 0; [nu], [w]] from index tables: compare every stacked twist, real
    and complex, with the blocks built from brac (Eq. 1.7), exactly."""
    stacked = rng.standard_normal((2, 3, 6)) + 1j * rng.standard_normal((2, 3, 6))
    for phi in (rng.standard_normal((4, 6)), stacked):
        out = ad_unchecked(phi)
        assert out.shape == phi.shape[:-1] + (6, 6)
        for index in np.ndindex(phi.shape[:-1]):
            w, nu = brac(phi[index][:3]), brac(phi[index][3:])
            np.testing.assert_array_equal(out[index], np.block([[w, np.zeros((3, 3))], [nu, w]]))


def test_ad_is_the_lie_bracket_of_se3(rng):
    for _ in range(10):
        a, b = rng.standard_normal((2, 6))
        np.testing.assert_allclose(brac(ad(a) @ b), brac(a) @ brac(b) - brac(b) @ brac(a),
                                   rtol=0, atol=1e-13)


# --- adjoint_dot ------------------------------------------------------------------------------


def test_adjoint_dot_factors_as_adjoint_times_ad(rng):
    E, phi = random_transform(rng), rng.standard_normal(6)
    np.testing.assert_allclose(adjoint_dot(E, phi), adjoint(E) @ ad(phi), rtol=0, atol=1e-15)


@pytest.mark.parametrize("method, rtol", [
    ("central", 1e-8),   # truncation h^2 = 1e-12, round-off eps/h = 1e-10
    ("complex", 1e-13),  # no subtractive cancellation: a few ulps
])
def test_adjoint_dot_matches_numerical_derivative_of_adjoint_along_phi(rng, method, rtol):
    E, phi = random_transform(rng), rng.standard_normal(6)
    dA = numerical_derivative(adjoint, E, method=method, space="se3")  # (6, 6, 6): d/d e_k last
    assert dA.shape == (6, 6, 6)
    expected = adjoint_dot(E, phi)
    assert np.linalg.norm(dA @ phi - expected) <= rtol * np.linalg.norm(expected)


def test_adjoint_derivative_check_catches_a_flipped_sign(rng):
    E = random_transform(rng)
    right = np.stack([adjoint_dot(E, e) for e in np.eye(6)], axis=-1)
    wrong = np.stack([adjoint_dot(E, -e) for e in np.eye(6)], axis=-1)
    assert check_derivative(adjoint, E, right, space="se3").ok
    assert not check_derivative(adjoint, E, wrong, space="se3").ok


# --- gamma, material Jacobian ---------------------------------------------------------------


def point_in_world(E, r):
    return (E @ np.append(r, 1.0))[:3]


def test_gamma_gives_the_body_velocity_of_a_body_point(rng):
    r, phi = rng.standard_normal(3), rng.standard_normal(6)
    np.testing.assert_allclose(gamma(r) @ phi, np.cross(phi[:3], r) + phi[3:], rtol=0, atol=1e-14)
    v = gamma(r) @ phi
    check = check_derivative(lambda t: point_in_world(exp_se3(t[0] * phi), r), [0.0], v[:, None])
    assert check.ok, check.error


def test_material_jacobian_gives_the_world_velocity_of_a_body_point(rng):
    E, r, phi = random_transform(rng), rng.standard_normal(3), rng.standard_normal(6)
    v = material_jacobian(E, r) @ phi
    # d/dt of E exp(t [phi]) r at t = 0 (Eq. 1.8, 1.12)
    check = check_derivative(lambda t: point_in_world(E @ exp_se3(t[0] * phi), r), [0.0], v[:, None])
    assert check.ok, check.error


def test_material_jacobian_is_the_derivative_of_the_point_along_body_twists(rng):
    E, r = random_transform(rng), rng.standard_normal(3)
    check = check_derivative(lambda X: point_in_world(X, r), E, material_jacobian(E, r), space="se3")
    assert check.ok, check.error


def test_material_jacobian_check_catches_a_flipped_sign_and_a_missing_term(rng):
    E, r = random_transform(rng), rng.standard_normal(3)
    R = E[:3, :3]
    flipped = R @ np.hstack([brac(r), np.eye(3)])  # [r] instead of [r]^T
    missing = R @ np.hstack([np.zeros((3, 3)), np.eye(3)])  # the rotational part dropped
    for wrong in (flipped, missing):
        assert not check_derivative(lambda X: point_in_world(X, r), E, wrong, space="se3").ok


# --- screw -----------------------------------------------------------------------------------


def test_screw_axis_point_moves_along_the_axis_at_pitch_times_omega(rng):
    for _ in range(10):
        phi = rng.standard_normal(6)
        w, nu = phi[:3], phi[3:]
        point, direction, pitch = screw(phi)
        v = np.cross(w, point) + nu  # velocity of the body point at the axis point
        np.testing.assert_allclose(np.cross(v, w), np.zeros(3), rtol=0, atol=1e-13)
        assert np.linalg.norm(v) == pytest.approx(abs(pitch) * np.linalg.norm(w), rel=1e-13)
        np.testing.assert_allclose(v, pitch * w, rtol=0, atol=1e-13)
        np.testing.assert_allclose(direction, w / np.linalg.norm(w), rtol=0, atol=1e-15)
        # Chasles: after unit time the axis point has slid pitch * angle along the axis
        moved = point_in_world(exp_se3(phi), point)
        np.testing.assert_allclose(moved, point + pitch * w, rtol=0, atol=1e-12)


def test_screw_point_is_the_axis_point_nearest_the_origin(rng):
    point, direction, _ = screw(rng.standard_normal(6))
    assert point @ direction == pytest.approx(0.0, abs=1e-14)


def test_screw_of_pure_translation_has_infinite_pitch():
    point, direction, pitch = screw([0, 0, 0, 1.0, 2.0, 2.0])
    assert np.isinf(pitch)
    np.testing.assert_allclose(direction, [1 / 3, 2 / 3, 2 / 3], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(point, np.zeros(3))


def test_screw_of_zero_twist_raises():
    with pytest.raises(ValueError, match="'phi'.*zero twist"):
        screw(np.zeros(6))


# --- random elements -------------------------------------------------------------------------


def test_random_rotation_is_a_rotation(rng):
    for _ in range(20):
        assert_rotation(random_rotation(rng))


def test_random_rotations_have_zero_mean_as_under_haar_measure(rng):
    mean = np.mean([random_rotation(rng) for _ in range(2000)], axis=0)
    # each entry has variance 1/3 under Haar measure: std of the mean 0.013, 6 sigma = 0.08
    np.testing.assert_allclose(mean, np.zeros((3, 3)), rtol=0, atol=0.08)


def test_random_transform_is_a_rigid_transform(rng):
    for _ in range(20):
        assert_transform(random_transform(rng, scale=2.0))
    np.testing.assert_array_equal(random_transform(rng, scale=0.0)[:3, 3], np.zeros(3))


# --- complex step -----------------------------------------------------------------------------


@pytest.mark.parametrize("f, n", [(brac, 3), (brac, 6), (exp_so3, 3), (exp_se3, 6), (ad, 6), (gamma, 3)],
                         ids=["brac3", "brac6", "exp_so3", "exp_se3", "ad", "gamma"])
def test_functions_accept_complex_input(rng, f, n):
    x, dx = rng.standard_normal((2, n))
    out = f(x + 1e-20j * dx)
    assert np.iscomplexobj(out)
    np.testing.assert_allclose(out.real, f(x), rtol=0, atol=1e-15)
    assert np.abs(out.imag).max() > 0  # the perturbation was carried, not dropped


def test_adjoint_accepts_a_complex_step_perturbed_transform(rng):
    E, phi = random_transform(rng), rng.standard_normal(6)
    A = adjoint(E @ exp_se3(1e-20j * phi))
    assert np.iscomplexobj(A)
    np.testing.assert_allclose(A.imag / 1e-20, adjoint_dot(E, phi), rtol=0, atol=1e-13)


def test_complex_step_derivative_of_exp_se3_at_zero_is_brac(rng):
    phi = rng.standard_normal(6)
    d = numerical_derivative(lambda t: exp_se3(t[0] * phi), [0.0], method="complex")[..., 0]
    # the complex step has no cancellation: exact up to rounding of phi's entries
    np.testing.assert_allclose(d, brac(phi), rtol=0, atol=1e-14)


def test_complex_step_derivative_of_exp_so3_matches_central_differences(rng):
    w = rng.standard_normal(3)
    complex_step = numerical_derivative(exp_so3, w, method="complex")
    central = numerical_derivative(exp_so3, w, method="central")
    np.testing.assert_allclose(complex_step, central, rtol=0, atol=1e-9)  # central: ~1e-10


# --- bad input ----------------------------------------------------------------------------------

_R = exp_so3([0.3, -0.2, 0.9])
_E = exp_se3([0.3, -0.2, 0.9, 1.0, 2.0, 3.0])


def _with(a, index, value):
    a = np.array(a, dtype=float)
    a[index] = value
    return a


def _transform_with_block(block):
    E = _E.copy()
    E[:3, :3] = block
    return E


_NOT_NUMERIC = {
    "string": ("abc", "numeric"),
    "strings": (["a", "b", "c"], "numeric"),
    "ragged": ([[1.0, 2.0], [3.0]], "numeric array"),
    "none": (None, "numeric"),
}
BAD_INPUTS = {
    "vec3": {"shape": (np.zeros(4), "shape"), "matrix": (np.zeros((3, 3)), "shape"),
             "nan": ([0.0, np.nan, 1.0], "NaN"), "inf": ([0.0, 1.0, -np.inf], "infinite"), **_NOT_NUMERIC},
    "vec6": {"shape": (np.zeros(3), "shape"), "nan": (_with(np.ones(6), 4, np.nan), "NaN"),
             "inf": (_with(np.ones(6), 0, np.inf), "infinite"), **_NOT_NUMERIC},
    "vec3or6": {"shape": (np.zeros(4), "shape"), "nan": ([np.nan, 0.0, 0.0], "NaN"),
                "inf": (_with(np.ones(6), 5, np.inf), "infinite"), **_NOT_NUMERIC},
    "mat3or4": {"shape": (np.zeros((3, 4)), "shape"), "vector": (np.zeros(3), "shape"),
                "nan": (_with(np.zeros((3, 3)), (0, 1), np.nan), "NaN"),
                "inf": (_with(np.zeros((4, 4)), (2, 3), np.inf), "infinite"), **_NOT_NUMERIC},
    "rotation": {"shape": (np.eye(4), "shape"), "nan": (_with(_R, (1, 1), np.nan), "NaN"),
                 "inf": (_with(_R, (2, 0), np.inf), "infinite"), "scaled": (2.0 * _R, "not a rotation"),
                 "sheared": (_R + 1e-4 * np.triu(np.ones((3, 3)), 1), "not a rotation"),
                 "reflection": (_R @ np.diag([1.0, 1.0, -1.0]), "reflection"), **_NOT_NUMERIC},
    "transform": {"shape": (np.eye(3), "shape"), "rows": (np.eye(4)[:3], "shape"),
                  "nan": (_with(_E, (0, 3), np.nan), "NaN"), "inf": (_with(_E, (1, 1), np.inf), "infinite"),
                  "scaled": (_transform_with_block(2.0 * _R), "not a rotation"),
                  "reflection": (_transform_with_block(-_R), "reflection"),
                  "last row": (_with(_E, (3, 2), 1.0), "last row"),
                  "homogeneous scale": (_with(_E, (3, 3), 2.0), "last row"), **_NOT_NUMERIC},
}
#: (name, call with the bad argument, the argument's name, kind of argument)
SIGNATURES = [
    ("brac", brac, "v", "vec3or6"),
    ("unbrac", unbrac, "S", "mat3or4"),
    ("exp_so3", exp_so3, "w", "vec3"),
    ("log_so3", log_so3, "R", "rotation"),
    ("exp_se3", exp_se3, "phi", "vec6"),
    ("log_se3", log_se3, "E", "transform"),
    ("inv_se3", inv_se3, "E", "transform"),
    ("adjoint", adjoint, "E", "transform"),
    ("ad", ad, "phi", "vec6"),
    ("adjoint_dot(E)", lambda E: adjoint_dot(E, np.ones(6)), "E", "transform"),
    ("adjoint_dot(phi)", lambda phi: adjoint_dot(_E, phi), "phi", "vec6"),
    ("gamma", gamma, "r", "vec3"),
    ("material_jacobian(E)", lambda E: material_jacobian(E, np.ones(3)), "E", "transform"),
    ("material_jacobian(r)", lambda r: material_jacobian(_E, r), "r", "vec3"),
    ("screw", screw, "phi", "vec6"),
]
BAD_CASES = [pytest.param(f, arg, value, fragment, id=f"{name}-{case}")
             for name, f, arg, kind in SIGNATURES
             for case, (value, fragment) in BAD_INPUTS[kind].items()]


@pytest.mark.parametrize("f, arg, value, fragment", BAD_CASES)
def test_bad_input_raises_value_error_naming_the_argument(f, arg, value, fragment):
    with pytest.raises(ValueError, match=f"argument '{arg}'.*{fragment}"):
        f(value)


def test_bad_input_cases_are_valid_once_repaired():
    # guards the table above: the base values it corrupts are accepted
    for f, value in ((log_so3, _R), (log_se3, _E), (exp_so3, np.ones(3)), (exp_se3, np.ones(6)),
                     (unbrac, np.zeros((3, 3))), (brac, np.ones(6))):
        assert np.isfinite(f(value)).all()


@pytest.mark.parametrize("call", [
    lambda: random_rotation(0),
    lambda: random_transform(np.random.default_rng(0), scale=np.nan),
    lambda: random_transform(np.random.default_rng(0), scale=np.inf),
], ids=["random_rotation(seed int)", "random_transform(scale=nan)", "random_transform(scale=inf)"])
def test_random_element_bad_input_raises_value_error(call):
    with pytest.raises(ValueError, match="'(rng|scale)'"):
        call()


# --- the Taylor-series coefficients -------------------------------------------------------------

def _reference_series(kind, t):
    """Each closed-form coefficient as its full Taylor series in long double (exact to ~1e-19).

    Twelve terms of each series are far more than enough for t <= 1 (the next term is
    below 1e-40), so this reference has no cancellation and no truncation at these angles.
    """
    t2 = np.longdouble(t) ** 2
    total, term = np.longdouble(0), np.longdouble(1)
    for k in range(12):
        if kind == "sin_over":  # sum (-1)^k t^2k / (2k+1)!
            coef = (-1) ** k / np.longdouble(np.prod(np.arange(1, 2 * k + 2, dtype=float)))
        elif kind == "one_minus_cos_over":  # sum (-1)^k t^2k / (2k+2)!
            coef = (-1) ** k / np.longdouble(np.prod(np.arange(1, 2 * k + 3, dtype=float)))
        else:  # t_minus_sin_over: sum (-1)^k t^2k / (2k+3)!
            coef = (-1) ** k / np.longdouble(np.prod(np.arange(1, 2 * k + 4, dtype=float)))
        total += coef * term
        term *= t2
    return float(total)


@pytest.mark.parametrize("kind", ["sin_over", "one_minus_cos_over", "t_minus_sin_over"])
@pytest.mark.parametrize("t", [1e-9, 1e-6, 1e-3, 1e-2 * (1 - 1e-12), 1e-2 * (1 + 1e-12), 0.05, 0.3, 1.0])
def test_exp_coefficients_are_accurate_on_both_sides_of_the_series_switch(kind, t):
    from redmax_edu import lie

    f = {"sin_over": lie._sin_over, "one_minus_cos_over": lie._one_minus_cos_over,
         "t_minus_sin_over": lie._t_minus_sin_over}[kind]
    # 1e-13 relative: the closed forms lose up to ~1e-11 to cancellation just above the switch,
    # but that is the point of the switch; we allow what the formula's conditioning permits
    # there (t - sin t at 1e-2 cancels about 4 digits) and demand ulps elsewhere.
    tol = 1e-11 if kind == "t_minus_sin_over" and 1e-2 <= t <= 0.05 else 1e-14
    assert f(np.float64(t)) == pytest.approx(_reference_series(kind, t), rel=tol)


def test_vinv_coefficient_matches_its_defining_identity(rng):
    # V^-1 V = I for V of exp_se3 and the closed-form inverse used in log_se3, across the switch
    from redmax_edu import lie

    for t in [1e-9, 1e-3, 1e-2 * (1 - 1e-12), 1e-2 * (1 + 1e-12), 0.5, 2.0, np.pi - 1e-8]:
        w = t * unit_vector(rng)
        W = brac(w)
        b, c = lie._one_minus_cos_over(np.float64(t)), lie._t_minus_sin_over(np.float64(t))
        V = np.eye(3) + b * W + c * W @ W
        Vinv = np.eye(3) - 0.5 * W + lie._vinv_coefficient(np.float64(t)) * W @ W
        np.testing.assert_allclose(Vinv @ V, np.eye(3), rtol=0, atol=1e-14)


# --- Jacobians of SO(3) ---------------------------------------------------------------------------

@pytest.mark.parametrize("angle", [0.0, 1e-8, 1e-2 * (1 + 1e-12), 1.0, np.pi - 1e-8])
def test_right_jacobian_maps_rotation_vector_rates_to_body_angular_velocity(rng, angle):
    # d/ds exp(w + s d) at s = 0 equals exp(w) [J_r(w) d]: checked by the complex step, which is
    # exact to round-off here because exp_so3 is analytic in w
    w, d = angle * unit_vector(rng), rng.standard_normal(3)
    R = exp_so3(w)
    numeric = numerical_derivative(lambda s: exp_so3(w + s[0] * d), [0.0], method="complex")[..., 0]
    np.testing.assert_allclose(numeric, R @ brac(right_jacobian_so3(w) @ d), rtol=0, atol=1e-13)
    np.testing.assert_allclose(numeric, brac(left_jacobian_so3(w) @ d) @ R, rtol=0, atol=1e-13)


@pytest.mark.parametrize("angle", [0.0, 1e-8, 1.0, 3.0, np.pi - 1e-8])
def test_right_jacobian_inverse_is_the_derivative_of_log_along_body_rotations(rng, angle):
    w = angle * unit_vector(rng)
    check = check_derivative(lambda xi: log_so3(exp_so3(w) @ exp_so3(xi)), np.zeros(3),
                             right_jacobian_inverse_so3(w))
    assert check.ok, check.error
    check = check_derivative(lambda xi: log_so3(exp_so3(xi) @ exp_so3(w)), np.zeros(3),
                             left_jacobian_inverse_so3(w))
    assert check.ok, check.error


def test_so3_jacobian_check_catches_left_and_right_swapped(rng):
    w = 1.3 * unit_vector(rng)
    check = check_derivative(lambda xi: log_so3(exp_so3(w) @ exp_so3(xi)), np.zeros(3),
                             left_jacobian_inverse_so3(w))
    assert not check.ok


def test_so3_jacobians_are_transposes_and_inverses(rng):
    w = 2.0 * unit_vector(rng)
    np.testing.assert_allclose(right_jacobian_so3(w), left_jacobian_so3(w).T, atol=1e-15)
    np.testing.assert_allclose(right_jacobian_inverse_so3(w) @ right_jacobian_so3(w), np.eye(3), atol=1e-14)
    np.testing.assert_allclose(left_jacobian_inverse_so3(w) @ left_jacobian_so3(w), np.eye(3), atol=1e-14)


def test_left_jacobian_is_the_v_matrix_of_exp_se3(rng):
    phi = twist_with_angle(rng, 1.7)
    np.testing.assert_allclose(exp_se3(phi)[:3, 3], left_jacobian_so3(phi[:3]) @ phi[3:], atol=1e-15)
