"""Unit tests of the O(n) Jacobian products of redmax_edu.jacobian (§2.10, Algorithms 5 and 6).

Each product is compared with the dense matrices of Algorithms 1 and 2 (``fill_jacobian``),
themselves checked against finite differences in test_kinematics_jacobian.py. Both ways are
exact and add the same terms in another order, so they agree to round-off (~1e-15 relative
here, the chains are a few dozen bodies deep): 1e-12 leaves room for it, and a dropped term
shows up at O(1).
"""

import numpy as np
import pytest

import redmax_edu.jacobian as jacobian_module
from redmax_edu.jacobian import fill_jacobian, jacobian_product, jacobian_transpose_product
from redmax_edu.kinematics import forward_kinematics

from .random_trees import every_joint_tree, random_state, random_tree
from .test_deformable import deformable_model
from .test_deformable import random_state as deformable_state

TOL = 1e-12


def relative_error(a, b):
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def _every_joint_case(seed):
    rng = np.random.default_rng(seed)
    model, q, qdot = every_joint_tree(rng)
    return model, q, qdot, rng


def _random_case(seed):
    rng = np.random.default_rng(200 + seed)
    model = random_tree(rng, n=12, branching=seed % 2 == 0)
    return (model, *random_state(rng, model), rng)


def _deformable_case(seed):
    rng = np.random.default_rng(300 + seed)
    model = deformable_model(rng, damping=0.3)
    return (model, *deformable_state(rng, model), rng)


CASES = {"every_joint": _every_joint_case, "random": _random_case, "deformable": _deformable_case}


@pytest.fixture(params=[(kind, seed) for kind in CASES for seed in range(2)], ids=lambda p: f"{p[0]}{p[1]}")
def case(request):
    """A model, a forward sweep with twists, and its dense ``J``, ``Jdot``."""
    kind, seed = request.param
    model, q, qdot, rng = CASES[kind](seed)
    kin = forward_kinematics(model, q, qdot)
    J, Jdot = fill_jacobian(model, kin, with_derivative=True)
    return model, kin, J, Jdot, rng


def test_jacobian_product_equals_the_dense_jacobian(case):
    model, kin, J, _, rng = case
    x = rng.standard_normal(model.nq)
    y = jacobian_product(model, kin, x)
    assert y.shape == (6 * model.n,)
    assert relative_error(y, J @ x) < TOL


def test_jacobian_dot_product_equals_the_dense_jdot(case):
    model, kin, J, Jdot, rng = case
    x = rng.standard_normal(model.nq)
    y, z = jacobian_product(model, kin, x, with_derivative=True)
    assert relative_error(y, J @ x) < TOL
    assert relative_error(z, Jdot @ x) < TOL
    assert np.abs(Jdot @ x).max() > 1e-2  # the comparison is not vacuous


def test_jacobian_products_take_several_columns_at_once(case):
    model, kin, J, Jdot, rng = case
    X = rng.standard_normal((model.nq, 3))
    Y, Z = jacobian_product(model, kin, X, with_derivative=True)
    assert Y.shape == Z.shape == (6 * model.n, 3)
    assert relative_error(Y, J @ X) < TOL
    assert relative_error(Z, Jdot @ X) < TOL


def test_jacobian_transpose_product_equals_the_dense_transpose(case):
    model, kin, J, _, rng = case
    y = rng.standard_normal(6 * model.n)
    x = jacobian_transpose_product(model, kin, y)
    assert x.shape == (model.nq,)
    assert relative_error(x, J.T @ y) < TOL
    Y = rng.standard_normal((6 * model.n, 4))
    assert relative_error(jacobian_transpose_product(model, kin, Y), J.T @ Y) < TOL


def test_the_comparison_catches_a_dropped_adjoint_rate(case, monkeypatch):
    """Alg. 5 without the d/dt Ad(E_i_p) y_p term of line 6: Jdot x is far off."""
    model, kin, _, Jdot, rng = case
    x = rng.standard_normal(model.nq)
    monkeypatch.setattr(jacobian_module, "_parent_adjoint_rates", lambda m, kin: np.zeros((m.n, 6, 6)))
    _, z = jacobian_module.jacobian_product(model, kin, x, with_derivative=True)
    assert relative_error(z, Jdot @ x) > 1e-3


def test_the_comparison_catches_an_untransposed_adjoint(case, monkeypatch):
    """Alg. 6 with Ad(E_i_p) where line 6 needs its transpose: J^T y is far off."""
    from dataclasses import replace

    model, kin, J, _, rng = case
    y = rng.standard_normal(6 * model.n)
    wrong = replace(kin, A_ip=np.swapaxes(kin.A_ip, 1, 2))
    assert relative_error(jacobian_transpose_product(model, wrong, y), J.T @ y) > 1e-3


@pytest.mark.parametrize(("which", "shape"), [("x", (2,)), ("x", (3, 2, 1)), ("y", (5,))])
def test_a_vector_of_the_wrong_length_is_named(which, shape):
    rng = np.random.default_rng(0)
    model = random_tree(rng, n=3, kinds=("revolute",))
    kin = forward_kinematics(model, np.zeros(3), np.zeros(3))
    product = jacobian_product if which == "x" else jacobian_transpose_product
    with pytest.raises(ValueError, match=f"'{which}'"):
        product(model, kin, np.zeros(shape))


def test_jdot_needs_a_sweep_with_twists():
    model = random_tree(np.random.default_rng(0), n=3, kinds=("revolute",))
    with pytest.raises(ValueError, match="'kin' carries no twists"):
        jacobian_product(model, forward_kinematics(model, np.zeros(3)), np.zeros(3), with_derivative=True)
