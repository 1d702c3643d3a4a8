"""Claims of book/appendix/derivative_checks: the shape of the step sweep and what it catches."""

import numpy as np
import pytest

from redmax_edu.checks import check_derivative, numerical_derivative, perturb, step_sweep
from redmax_edu.lie import material_jacobian, random_transform


def f(x):
    return np.array([x[0] ** 2 * x[1], np.sin(x[0]) + x[2] ** 3, np.exp(x[1] * x[2])])


def df(x):
    return np.array([[2 * x[0] * x[1], x[0] ** 2, 0.0],
                     [np.cos(x[0]), 0.0, 3 * x[2] ** 2],
                     [0.0, x[2] * np.exp(x[1] * x[2]), x[1] * np.exp(x[1] * x[2])]])


def _slope(steps, errors, lo, hi):
    keep = (steps >= lo) & (steps <= hi)
    return np.polyfit(np.log10(steps[keep]), np.log10(errors[keep]), 1)[0]


def test_step_sweep_has_the_slopes_and_best_steps_the_appendix_states(rng):
    """Appendix: truncation slope 1 (forward) and 2 (central); best steps within a decade of
    1e-8 (forward) and 1e-5 (central); the complex step at machine precision below 1e-8.
    Checked at the page's point and at random points."""
    for x0 in [np.array([0.7, -0.4, 1.1])] + [rng.uniform(-1, 1, 3) for _ in range(5)]:
        s, e = step_sweep(f, x0, df(x0), method="forward")
        assert abs(_slope(s, e, 1e-4, 1e-1) - 1) < 0.15
        assert 1e-9 <= s[e.argmin()] <= 1e-7
        s, e = step_sweep(f, x0, df(x0), method="central")
        assert abs(_slope(s, e, 1e-3, 1e-1) - 2) < 0.15
        assert 1e-6 <= s[e.argmin()] <= 1e-4
        s, e = step_sweep(f, x0, df(x0), method="complex")
        assert (e[s < 1e-8] < 1e-15).all()


def test_a_flipped_sign_and_a_missing_term_fail_the_check():
    """Appendix: 'A check that can fail' - the correct Jacobian passes, the two broken ones don't."""
    x0 = np.array([0.7, -0.4, 1.1])
    assert check_derivative(f, x0, df(x0)).ok
    flipped = df(x0)
    flipped[1, 0] *= -1
    missing = df(x0)
    missing[2, 2] = x0[1]
    assert not check_derivative(f, x0, flipped).ok
    assert not check_derivative(f, x0, missing).ok


def test_se3_perturbation_stays_rigid_and_gives_the_material_jacobian(rng):
    """Appendix: additive perturbation of E is refused, the twist perturbation stays in SE(3),
    and d(E r)/d(twist) is the material Jacobian."""
    E, r = random_transform(rng), rng.standard_normal(3)
    moved = perturb(E, [0, 0, 1e-3, 0, 0, 0], "se3")
    np.testing.assert_allclose(moved[:3, :3].T @ moved[:3, :3], np.eye(3), atol=1e-15)
    try:
        material_jacobian(perturb(E, 1e-3 * np.eye(16)[0], "vector"), r)
    except ValueError as err:
        assert "'E' is not a rotation" in str(err)
    else:
        raise AssertionError("an additively perturbed transform was accepted")
    assert check_derivative(lambda E: (E @ np.append(r, 1))[:3], E, material_jacobian(E, r), space="se3").ok


def test_complex_step_needs_analytic_code():
    """Appendix: the complex step through np.linalg.norm is wrong, through sqrt(x @ x) right."""
    x1 = np.array([0.3, -1.2, 0.5])
    exact = x1 / np.linalg.norm(x1)
    assert not np.allclose(numerical_derivative(np.linalg.norm, x1, method="complex"), exact)
    np.testing.assert_allclose(numerical_derivative(lambda x: np.sqrt(x @ x), x1, method="complex"), exact,
                               rtol=1e-15)


def test_try_this_best_central_step_for_exp_at_30_is_no_smaller_than_at_0():
    """Appendix, 'Try this': the best central step for exp is 1e-5 at x = 30, no smaller than at
    x = 0 (relative error does not scale with e^x); the rounding of x + h raises the left arm at
    x = 30, and at x = 300 the best step moves up to 1e-4."""
    def sweep(x):
        return step_sweep(np.exp, [x], np.array([[np.exp(x)]]), method="central")

    def best(x):
        s, e = sweep(x)
        return s[e.argmin()]

    assert np.exp(30.0) == pytest.approx(1.07e13, rel=0.01)  # "1e13 times larger"
    assert best(30.0) == pytest.approx(1e-5)
    assert best(30.0) >= best(0.0) * (1 - 1e-12)
    assert best(300.0) == pytest.approx(1e-4)
    (s0, e0), (_, e30) = sweep(0.0), sweep(30.0)
    left = s0 <= 1e-6  # the rounding arm: about ten times higher on average at x = 30
    assert np.log10(e30[left]).mean() > np.log10(e0[left]).mean() + 1


def test_printed_errors_of_the_check_that_can_fail():
    """Appendix, 'A check that can fail': the correct Jacobian's best error is below 1e-9 (printed
    as a bound), the flipped sign's is 4e-01 and the missing term's 4e-02 (printed to one digit)."""
    x0 = np.array([0.7, -0.4, 1.1])
    flipped = df(x0)
    flipped[1, 0] *= -1
    missing = df(x0)
    missing[2, 2] = x0[1]
    assert check_derivative(f, x0, df(x0)).error < 1e-9
    for wrong, shown in ((flipped, "4e-01"), (missing, "4e-02")):
        error = check_derivative(f, x0, wrong).error
        assert f"{error:.0e}" == shown
        # far from a rounding boundary of the printed digit
        assert abs(error / float(shown) - 1) < 0.2
