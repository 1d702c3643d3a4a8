"""Unit tests of redmax_edu.kinematics and redmax_edu.jacobian on random trees (§2.1-2.2).

The Jacobian is checked against what it means, not against another implementation:
``J_mr`` column k is the body twist produced by moving q_k alone, ``[phi_i] = E_i^{-1} dE_i/dq_k``
(Eq. 2.1 with Eq. 1.8), so ``E_i [J_i e_k]`` must equal central differences of the forward
kinematics; ``Jdot_mr`` must equal central differences of ``J_mr(q + t qdot)`` in t (Eq. 2.15).

Tolerances: ``check_derivative`` sweeps the step and keeps the best relative error; on these
smooth maps central differences reach ~1e-10, so rtol = 1e-7 is loose for a right derivative
and tight for a wrong one (errors of order 1, shown by the dropped-term test below).
"""

import numpy as np
import pytest

from redmax_edu.checks import check_derivative
from redmax_edu.jacobian import jacobian, jacobian_and_derivative
from redmax_edu.kinematics import body_poses, body_twists, forward_kinematics
from redmax_edu.lie import ad, adjoint, brac, inv_se3, unbrac

from .random_trees import random_state, random_tree

RTOL = 1e-7
SEEDS = range(4)


@pytest.fixture(params=SEEDS)
def tree(request):
    """A random branching tree of 7 bodies with every basic joint family, and a random state."""
    rng = np.random.default_rng(100 + request.param)
    model = random_tree(rng, 7)
    q, qdot = random_state(rng, model)
    return model, q, qdot


def test_jacobian_times_qdot_equals_body_twists(tree):
    model, q, qdot = tree
    phi = body_twists(model, q, qdot)
    np.testing.assert_allclose(jacobian(model, q) @ qdot, phi.ravel(), rtol=0,
                               atol=1e-12 * (1 + np.abs(phi).max()))


def test_jacobian_and_derivative_returns_the_same_jacobian(tree):
    model, q, qdot = tree
    J, _ = jacobian_and_derivative(model, q, qdot)
    np.testing.assert_array_equal(J, jacobian(model, q))


def _pose_derivative_from_jacobian(model, q):
    """dE_i/dq_k = E_i [J_i e_k] (Eq. 1.8), shape (n, 4, 4, nq)."""
    E = body_poses(model, q)
    J = jacobian(model, q).reshape(model.n, 6, model.nq)
    return np.stack([np.stack([E[i] @ brac(J[i, :, k]) for k in range(model.nq)], axis=-1)
                     for i in range(model.n)])


def test_jacobian_equals_finite_differences_of_the_body_poses(tree):
    model, q, _ = tree
    check = check_derivative(lambda x: body_poses(model, x), q, _pose_derivative_from_jacobian(model, q),
                             rtol=RTOL)
    assert check.ok, check.error


def test_jacobian_columns_are_twists_of_central_differences(tree):
    """The same statement written as the book writes it: phi = unbrac(E^{-1} dE/dt) along qdot."""
    model, q, qdot = tree
    h = 1e-5  # central difference: truncation ~h^2 = 1e-10, round-off ~1e-16/h = 1e-11
    Ep, Em, E = body_poses(model, q + h * qdot), body_poses(model, q - h * qdot), body_poses(model, q)
    dE = (Ep - Em) / (2 * h)
    phi_fd = np.array([unbrac(np.linalg.inv(Ei) @ dEi) for Ei, dEi in zip(E, dE, strict=True)])
    phi = (jacobian(model, q) @ qdot).reshape(model.n, 6)
    assert np.abs(phi_fd - phi).max() < 1e-8 * (1 + np.abs(phi).max())


def test_jdot_equals_finite_differences_of_j_along_qdot(tree):
    model, q, qdot = tree
    _, Jdot = jacobian_and_derivative(model, q, qdot)
    check = check_derivative(lambda t: jacobian(model, q + t[0] * qdot), [0.0], Jdot[..., None], rtol=RTOL)
    assert check.ok, check.error
    assert np.abs(Jdot).max() > 1e-3  # a zero Jdot would make the comparison vacuous


def test_forward_kinematics_composes_parent_frames(tree):
    model, q, qdot = tree
    kin = forward_kinematics(model, q, qdot)
    for i, body in enumerate(model.bodies):
        Q = body.joint.Q(q[model.dofs[i]])
        parent = np.eye(4) if body.parent < 0 else kin.E_wj[body.parent]
        np.testing.assert_allclose(kin.E_pj[i], body.T_parent_joint @ Q, atol=1e-14)
        np.testing.assert_allclose(kin.E_wj[i], parent @ body.T_parent_joint @ Q, atol=1e-12)
        np.testing.assert_allclose(kin.E_wi[i], kin.E_wj[i] @ body.T_joint_body, atol=1e-12)
        np.testing.assert_allclose(kin.S[i], body.joint.S(q[model.dofs[i]]), atol=0)


def test_forward_kinematics_at_zero_is_the_rest_pose_product(rng):
    model = random_tree(rng, 5, branching=False)
    E = np.eye(4)
    E_wi = forward_kinematics(model, np.zeros(model.nq)).E_wi
    for i, body in enumerate(model.bodies):
        E = E @ body.T_parent_joint  # a chain at q = 0: every Q is the identity
        np.testing.assert_allclose(E_wi[i], E @ body.T_joint_body, atol=1e-12)


def _jdot_by_hand(model, q, qdot, with_ad=True):
    """Alg. 2 written out in the test; ``with_ad=False`` drops d/dt Ad(E_i_p) (Eq. 2.18): wrong."""
    kin = forward_kinematics(model, q, qdot)
    J = jacobian(model, q).reshape(model.n, 6, model.nq)
    phi = (J @ qdot)
    Jdot = np.zeros_like(J)
    for i, body in enumerate(model.bodies):
        A_ij = adjoint(inv_se3(body.T_joint_body))
        Jdot[i, :, model.dofs[i]] = A_ij @ kin.Sdot[i]
        p = body.parent
        if p >= 0:
            A_ip = adjoint(inv_se3(kin.E_wi[i]) @ kin.E_wi[p])
            Jdot[i] += A_ip @ Jdot[p]
            if with_ad:
                Jdot[i] += (A_ip @ ad(phi[p]) - ad(phi[i]) @ A_ip) @ J[p]
    return Jdot.reshape(6 * model.n, model.nq)


def test_jdot_check_catches_a_dropped_adjoint_derivative(tree):
    model, q, qdot = tree
    _, Jdot = jacobian_and_derivative(model, q, qdot)
    right, wrong = _jdot_by_hand(model, q, qdot), _jdot_by_hand(model, q, qdot, with_ad=False)
    np.testing.assert_allclose(right, Jdot, atol=1e-11 * (1 + np.abs(Jdot).max()))

    def J_along(t):
        return jacobian(model, q + t[0] * qdot)

    assert check_derivative(J_along, [0.0], right[..., None], rtol=RTOL).ok
    bad = check_derivative(J_along, [0.0], wrong[..., None], rtol=RTOL)
    assert not bad.ok and bad.error > 1e-2


def test_jacobian_check_catches_a_flipped_column(tree):
    model, q, _ = tree
    analytic = _pose_derivative_from_jacobian(model, q)
    k = int(np.argmax(np.abs(analytic).reshape(-1, model.nq).max(axis=0)))
    analytic[..., k] *= -1
    assert not check_derivative(lambda x: body_poses(model, x), q, analytic, rtol=RTOL).ok


def test_state_of_the_wrong_length_is_refused(tree):
    model, q, qdot = tree
    with pytest.raises(ValueError, match="'q'"):
        jacobian(model, q[:-1])
    with pytest.raises(ValueError, match="'qdot'"):
        jacobian_and_derivative(model, q, np.append(qdot, 0.0))
