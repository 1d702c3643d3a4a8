"""Unit tests of redmax_edu.checks: the derivative checks every other test relies on.

A derivative checker that passes everything is the most dangerous bug a test suite can
have, so besides passing correct derivatives these tests make it fail wrong ones.
"""

import numpy as np
import pytest
from scipy.linalg import expm

from redmax_edu.checks import (
    DEFAULT_STEPS,
    METHODS,
    SPACES,
    check_derivative,
    numerical_derivative,
    perturb,
    relative_error,
    step_sweep,
    tangent_dim,
)
from redmax_edu.lie import brac, exp_se3, material_jacobian, random_rotation, random_transform

#: Accuracy of each method with its default step on functions with O(1) derivatives:
#: forward truncation ~h = 1e-6; central truncation h^2 = 1e-12 below round-off eps/h = 1e-10;
#: complex step no cancellation, a few ulps.
RTOL = {"forward": 1e-5, "central": 1e-8, "complex": 1e-13}


def f_vec(x):
    """R^2 -> R^2 with a known Jacobian; analytic, so the complex step applies."""
    return np.array([x[0] * np.sin(x[1]) + x[1] ** 2, np.exp(x[0] * x[1])])


def jac_vec(x):
    e = np.exp(x[0] * x[1])
    return np.array([[np.sin(x[1]), x[0] * np.cos(x[1]) + 2 * x[1]], [x[1] * e, x[0] * e]])


X0 = np.array([0.7, -0.4])


def known_derivative(space, rng):
    """(f, x, derivative of f at x) for each space."""
    if space == "vector":
        return f_vec, X0, jac_vec(X0)
    if space == "se3":
        # d/dh E exp(h [e_k]) = E [e_k] (Eq. 1.8)
        E = random_transform(rng)
        return (lambda X: X), E, np.stack([E @ brac(e) for e in np.eye(6)], axis=-1)
    a = rng.standard_normal(3)
    R = random_rotation(rng)
    # d/dh R exp(h [e_k]) a = R (e_k x a) = -R [a] e_k
    return (lambda X: X @ a), R, -R @ brac(a)


# --- numerical_derivative -----------------------------------------------------------------


@pytest.mark.parametrize("space", SPACES)
@pytest.mark.parametrize("method", METHODS)
def test_numerical_derivative_matches_known_derivatives(rng, method, space):
    f, x, expected = known_derivative(space, rng)
    d = numerical_derivative(f, x, method=method, space=space)
    assert d.shape == expected.shape
    assert relative_error(d, expected) < RTOL[method]


def test_numerical_derivative_puts_the_derivative_index_last():
    x = np.array([1.0, 2.0, 3.0, 4.0])

    def f(x):  # (2, 3) output
        return np.outer([1.0, 2.0], x[:3]) * x[3]

    d = numerical_derivative(f, x)
    assert d.shape == (2, 3, 4)
    # d f[i, j] / d x[k] for k < 3 is [1, 2][i] * x[3] * (j == k); for k = 3 it is f / x[3]
    expected = np.zeros((2, 3, 4))
    for i, c in enumerate([1.0, 2.0]):
        for j in range(3):
            expected[i, j, j] = c * x[3]
            expected[i, j, 3] = c * x[j]
    np.testing.assert_allclose(d, expected, rtol=0, atol=1e-8)  # central: round-off ~1e-10


def test_numerical_derivative_of_matrix_argument_follows_flat_index_order():
    X = np.arange(6.0).reshape(2, 3)
    d = numerical_derivative(lambda X: 3.0 * X[1, 0] + X[0, 2] ** 2, X)
    assert d.shape == (6,)
    np.testing.assert_allclose(d, [0, 0, 2 * X[0, 2], 3.0, 0, 0], rtol=0, atol=1e-8)


def test_numerical_derivative_of_scalar_function_has_one_column_per_entry():
    d = numerical_derivative(lambda x: float(np.sin(x[0])), [0.3], method="forward")
    assert d.shape == (1,)
    assert d[0] == pytest.approx(np.cos(0.3), abs=1e-6)  # forward: truncation ~h/2 |sin| ~ 1.5e-7


def test_numerical_derivative_on_se3_has_six_columns(rng):
    d = numerical_derivative(lambda X: X, random_transform(rng), space="se3")
    assert d.shape == (4, 4, 6)
    assert tangent_dim(np.eye(4), "se3") == 6 and tangent_dim(np.eye(3), "so3") == 3
    assert tangent_dim(np.zeros((2, 5))) == 10


# --- perturb ----------------------------------------------------------------------------------


def test_perturb_on_se3_stays_on_the_group(rng):
    for _ in range(10):
        E, dx = random_transform(rng), rng.standard_normal(6)
        P = perturb(E, dx, "se3")
        np.testing.assert_allclose(P, E @ expm(brac(dx)), rtol=0, atol=1e-12)  # expm accuracy
        np.testing.assert_allclose(P[:3, :3].T @ P[:3, :3], np.eye(3), rtol=0, atol=1e-14)
        assert np.linalg.det(P[:3, :3]) == pytest.approx(1.0, abs=1e-14)
        np.testing.assert_array_equal(P[3], [0, 0, 0, 1])


def test_perturb_on_so3_stays_on_the_group(rng):
    for _ in range(10):
        R, dx = random_rotation(rng), rng.standard_normal(3)
        P = perturb(R, dx, "so3")
        np.testing.assert_allclose(P, R @ expm(brac(dx)), rtol=0, atol=1e-12)
        np.testing.assert_allclose(P.T @ P, np.eye(3), rtol=0, atol=1e-14)
        assert np.linalg.det(P) == pytest.approx(1.0, abs=1e-14)


def test_perturb_on_vectors_adds_in_flat_order():
    X = np.zeros((2, 2))
    np.testing.assert_array_equal(perturb(X, [1.0, 2.0, 3.0, 4.0]), [[1.0, 2.0], [3.0, 4.0]])


# --- relative_error ---------------------------------------------------------------------------


def test_relative_error_basics():
    a = np.array([3.0, -4.0])
    assert relative_error(a, a) == 0.0
    assert relative_error(a, -a) == 2.0
    assert relative_error(a, np.zeros(2)) == 1.0
    assert relative_error(np.zeros(2), a) == 1.0  # symmetric: scaled by the larger of the two
    assert relative_error(a, 2 * a) == relative_error(2 * a, a) == 0.5
    assert relative_error(np.zeros(3), np.zeros(3)) == 0.0  # the floor avoids 0/0
    assert relative_error(a, a + [0.0, 5e-3]) == pytest.approx(1e-3, rel=1e-9)  # |a| = 5
    # scale free: the same relative difference at 1e-30 and 1e30
    assert relative_error(1e-30 * a, 1e-30 * (a + [0.0, 5e-3])) == pytest.approx(1e-3, rel=1e-9)
    assert relative_error(1e30 * a, 1e30 * (a + [0.0, 5e-3])) == pytest.approx(1e-3, rel=1e-9)


def test_relative_error_rejects_different_shapes():
    with pytest.raises(ValueError, match="shapes"):
        relative_error(np.zeros((2, 3)), np.zeros((3, 2)))


# --- step_sweep -------------------------------------------------------------------------------


def test_step_sweep_minimum_error_is_small_for_a_correct_derivative():
    steps, errors = step_sweep(f_vec, X0, jac_vec(X0))
    np.testing.assert_array_equal(steps, DEFAULT_STEPS)
    assert errors.shape == steps.shape
    assert errors.min() < 1e-9  # central at its best step ~1e-5: ~1e-11


def test_step_sweep_shows_the_round_off_branch_of_central_differences():
    steps, errors = step_sweep(f_vec, X0, jac_vec(X0))
    assert errors[-1] > 1e3 * errors.min()  # eps/h at h = 1e-12 ~ 1e-4, far above the best


def test_complex_step_sweep_has_no_round_off_branch():
    steps, errors = step_sweep(f_vec, X0, jac_vec(X0), method="complex")
    assert len(steps) == 20 and steps[-1] == pytest.approx(1e-20)
    # below h = 1e-7 the truncation error h^2 is under eps: every small step is exact to ulps
    assert errors[steps < 1e-7].max() < 1e-15


# --- check_derivative -------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_check_derivative_passes_a_correct_derivative(method):
    check = check_derivative(f_vec, X0, jac_vec(X0), method=method)
    assert check.ok
    assert check.error < RTOL[method]
    assert check.verdict("J") == f"J matches {method} differences: True"


@pytest.mark.parametrize("method", METHODS)
def test_check_derivative_fails_a_derivative_with_a_flipped_sign(method):
    wrong = jac_vec(X0)
    wrong[0, 1] = -X0[0] * np.cos(X0[1]) + 2 * X0[1]  # d/dx1 of x0 sin(x1) with the wrong sign
    check = check_derivative(f_vec, X0, wrong, method=method)
    assert not check.ok
    assert check.verdict() == f"analytic derivative matches {method} differences: False"


@pytest.mark.parametrize("method", METHODS)
def test_check_derivative_fails_a_derivative_with_a_missing_term(method):
    wrong = jac_vec(X0)
    wrong[0, 1] = X0[0] * np.cos(X0[1])  # the 2 x1 of d(x1^2)/dx1 forgotten
    assert not check_derivative(f_vec, X0, wrong, method=method).ok


@pytest.mark.parametrize("space", ["se3", "so3"])
def test_check_derivative_on_groups_passes_the_right_and_fails_the_negated_derivative(rng, space):
    f, x, expected = known_derivative(space, rng)
    assert check_derivative(f, x, expected, space=space).ok
    assert not check_derivative(f, x, -expected, space=space).ok


def test_check_derivative_reports_the_best_step_of_its_sweep():
    check = check_derivative(f_vec, X0, jac_vec(X0))
    k = int(np.argmin(check.errors))
    assert check.step == check.steps[k] and check.error == check.errors[k]
    assert 1e-7 <= check.step <= 1e-3  # central: the V bottoms out near eps^(1/3) ~ 6e-6


# --- convergence order ------------------------------------------------------------------------


def slope_of_error(method, steps):
    """Fitted exponent p of error ~ h^p on a smooth scalar function."""
    x = np.array([0.7])
    exact = (np.cos(x) * np.exp(np.sin(x)))[None, :]
    _, errors = step_sweep(lambda x: np.exp(np.sin(x)), x, exact, steps, method=method)
    return np.polyfit(np.log(steps), np.log(errors), 1)[0]


def test_central_difference_error_is_second_order_in_h():
    # h from 3e-2 to 3e-4: truncation (>1e-8) dominates round-off (eps/h < 1e-12)
    assert slope_of_error("central", np.logspace(-1.5, -3.5, 9)) == pytest.approx(2.0, abs=0.05)


def test_forward_difference_error_is_first_order_in_h():
    # h from 1e-2 to 1e-5: truncation (>1e-6) dominates round-off (eps/h < 1e-10)
    assert slope_of_error("forward", np.logspace(-2, -5, 10)) == pytest.approx(1.0, abs=0.05)


def test_complex_step_error_is_second_order_in_h():
    assert slope_of_error("complex", np.logspace(-1.5, -3.5, 9)) == pytest.approx(2.0, abs=0.05)


# --- bad arguments ------------------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda: numerical_derivative(f_vec, X0, method="backward"),
    lambda: step_sweep(f_vec, X0, jac_vec(X0), method="Central"),
    lambda: check_derivative(f_vec, X0, jac_vec(X0), method="complex-step"),
], ids=["numerical_derivative", "step_sweep", "check_derivative"])
def test_unknown_method_raises(call):
    with pytest.raises(ValueError, match="'method' must be one of"):
        call()


@pytest.mark.parametrize("call", [
    lambda: numerical_derivative(f_vec, X0, space="SE3"),
    lambda: perturb(np.eye(4), np.zeros(6), "se(3)"),
    lambda: tangent_dim(np.eye(3), "so(3)"),
    lambda: check_derivative(f_vec, X0, jac_vec(X0), space="vec"),
], ids=["numerical_derivative", "perturb", "tangent_dim", "check_derivative"])
def test_unknown_space_raises(call):
    with pytest.raises(ValueError, match="'space' must be one of"):
        call()


@pytest.mark.parametrize("analytic", [jac_vec(X0).T[:, :1], np.zeros(4), np.zeros((2, 2, 1))],
                         ids=["(2, 1)", "(4,)", "(2, 2, 1)"])
def test_analytic_of_the_wrong_shape_raises(analytic):
    with pytest.raises(ValueError, match="'analytic' has shape"):
        check_derivative(f_vec, X0, analytic)
    with pytest.raises(ValueError, match="'analytic' has shape"):
        step_sweep(f_vec, X0, analytic)


def test_derivative_index_first_is_rejected():
    # f: R^3 -> R^2; a (3, 2) Jacobian with the derivative index first is a shape error
    def f(x):
        return np.array([x[0] * x[1], x[2]])

    x = np.array([1.0, 2.0, 3.0])
    right = np.array([[2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert check_derivative(f, x, right).ok
    with pytest.raises(ValueError, match="derivative index last"):
        check_derivative(f, x, right.T)


# --- stacks of poses: the layout of maximal coordinates -------------------------------------------

def test_se3_stack_perturbation_moves_each_body_by_its_own_block(rng):
    Es = np.stack([random_transform(rng) for _ in range(3)])
    dx = rng.standard_normal(18)
    moved = perturb(Es, dx, "se3")
    for k in range(3):
        np.testing.assert_allclose(moved[k], Es[k] @ exp_se3(dx[6 * k: 6 * k + 6]), atol=1e-14)
    assert tangent_dim(Es, "se3") == 18 and tangent_dim(Es[:, :3, :3], "so3") == 9


def test_derivative_over_a_stack_of_poses_is_block_diagonal_in_material_jacobians(rng):
    # d(world points)/d(body twists) for two bodies: body k's point depends on body k only
    Es = np.stack([random_transform(rng) for _ in range(2)])
    r = rng.standard_normal((2, 3))

    def points(Es):
        return np.concatenate([(E @ np.append(rk, 1.0))[:3] for E, rk in zip(Es, r, strict=True)])

    analytic = np.zeros((6, 12))
    for k in range(2):
        analytic[3 * k: 3 * k + 3, 6 * k: 6 * k + 6] = material_jacobian(Es[k], r[k])
    assert check_derivative(points, Es, analytic, space="se3").ok
    swapped = analytic.copy()
    swapped[:3, :6], swapped[:3, 6:] = analytic[:3, 6:], analytic[:3, :6]
    assert not check_derivative(points, Es, swapped, space="se3").ok


@pytest.mark.parametrize(("x", "space"), [(np.eye(3), "se3"), (np.zeros((2, 4, 3)), "se3"),
                                         (np.eye(4), "so3")])
def test_tangent_dim_rejects_shapes_that_are_not_transforms_or_rotations(x, space):
    with pytest.raises(ValueError, match="'x'"):
        tangent_dim(x, space)


def test_perturb_rejects_a_step_of_the_wrong_length():
    with pytest.raises(ValueError, match="'dx'"):
        perturb(np.eye(4), np.zeros(5), "se3")
