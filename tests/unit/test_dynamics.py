"""Unit tests of redmax_edu.dynamics: the RedMax equations of motion (§2.3, §2.5, §2.6).

The reduced quantities are checked against the Lagrangian they come from, with finite
differences: ``M_r`` is the Hessian of the kinetic energy in qdot, the velocity-dependent
forces are minus the Lagrangian Coriolis term ``Mdot qdot - 1/2 d/dq (qdot^T M qdot)``, and
the conservative forces are ``-dV/dq``. Energy is conserved by an accurate integrator.

Tolerances: ``check_derivative`` takes the best step of a sweep; central differences of these
smooth functions reach ~1e-10 relative, so rtol = 1e-7 accepts a right derivative and refuses a
wrong one (relative error O(1), see the flipped-sign test).
"""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from redmax_edu.checks import check_derivative, numerical_derivative
from redmax_edu.dynamics import (
    forward_dynamics,
    inverse_dynamics,
    joint_forces,
    kinetic_energy,
    linearly_implicit_euler_step,
    mass_matrix,
    maximal_forces,
    potential_energy,
    quadratic_velocity_vector,
    reduced_forces,
)
from redmax_edu.hyper_reduced import hyper_reduce, hyper_reduced_dynamics
from redmax_edu.jacobian import jacobian, jacobian_and_derivative
from redmax_edu.joints import Fixed, Revolute
from redmax_edu.kinematics import body_twists, forward_kinematics
from redmax_edu.lie import ad, random_transform
from redmax_edu.maximal.forces import Attachment, LinearSpringDamper, PointForce, PointSpring, Spring
from redmax_edu.model import Body, Model

from .random_trees import random_state, random_tree

RTOL = 1e-7


@pytest.fixture(params=range(3))
def tree(request):
    rng = np.random.default_rng(300 + request.param)
    model = random_tree(rng, 6)
    q, qdot = random_state(rng, model)
    return model, q, qdot, rng


def _with_springs(model, rng):
    """The same bodies with random joint springs and rest positions (no dampers)."""
    from dataclasses import replace

    bodies = [replace(b, stiffness=rng.uniform(1, 5, b.joint.ndof), q_rest=rng.standard_normal(b.joint.ndof))
              for b in model.bodies]
    return Model(bodies, model.gravity, model.forces)


# --- the mass matrix ---------------------------------------------------------------------------

def test_mass_matrix_is_symmetric_positive_definite(tree):
    model, q, _, _ = tree
    M = mass_matrix(model, q)
    np.testing.assert_allclose(M, M.T, atol=1e-13 * np.abs(M).max())
    assert np.linalg.eigvalsh(M)[0] > 0


def test_mass_matrix_is_the_hessian_of_kinetic_energy(tree):
    """M_ij = T(e_i + e_j) - T(e_i) - T(e_j): exact for a quadratic form, so only round-off."""
    model, q, _, _ = tree
    M = mass_matrix(model, q)
    n, e = model.nq, np.eye(model.nq)
    H = np.array([[kinetic_energy(model, q, e[i] + e[j]) - kinetic_energy(model, q, e[i])
                   - kinetic_energy(model, q, e[j]) for j in range(n)] for i in range(n)])
    np.testing.assert_allclose(H, M, atol=1e-12 * np.abs(M).max())
    _, qdot = random_state(np.random.default_rng(0), model)
    assert kinetic_energy(model, q, qdot) == pytest.approx(0.5 * qdot @ M @ qdot, rel=1e-12)


# --- forward and inverse dynamics --------------------------------------------------------------

def test_forward_and_inverse_dynamics_are_inverses(tree):
    model, q, qdot, rng = tree
    model = _with_springs(model, rng)
    tau = rng.standard_normal(model.nq)
    qddot = forward_dynamics(model, q, qdot, tau)
    np.testing.assert_allclose(inverse_dynamics(model, q, qdot, qddot), tau,
                               atol=1e-10 * (1 + np.abs(tau).max()))
    qddot_in = rng.standard_normal(model.nq)
    tau = inverse_dynamics(model, q, qdot, qddot_in)
    np.testing.assert_allclose(forward_dynamics(model, q, qdot, tau), qddot_in, atol=1e-9)


def test_forward_dynamics_solves_the_redmax_equation(tree):
    model, q, qdot, rng = tree
    tau = rng.standard_normal(model.nq)
    M = mass_matrix(model, q)
    np.testing.assert_allclose(M @ forward_dynamics(model, q, qdot, tau), reduced_forces(model, q, qdot, tau),
                               atol=1e-10 * (1 + np.abs(M).max()))


def test_total_energy_is_conserved_by_an_accurate_integrator(rng):
    """Without dampers the RedMax equations conserve T + V; RK45 at rtol 1e-10 over 1 s keeps the
    drift at ~1e-9 of the kinetic-energy scale, so 1e-6 leaves room and still catches a wrong
    force (a missing quadratic velocity vector drifts by O(1), see below)."""
    model = _with_springs(random_tree(rng, 5), rng)
    q0, qdot0 = random_state(rng, model, 0.5)

    def run(rhs):
        sol = solve_ivp(rhs, (0.0, 1.0), np.concatenate([q0, qdot0]), rtol=1e-10, atol=1e-12,
                        t_eval=np.linspace(0, 1, 21))
        n = model.nq
        H = np.array([kinetic_energy(model, y[:n], y[n:]) + potential_energy(model, y[:n]) for y in sol.y.T])
        scale = max(kinetic_energy(model, y[:model.nq], y[model.nq:]) for y in sol.y.T)
        return np.abs(H - H[0]).max() / scale

    def rhs(_, y):
        q, qdot = y[:model.nq], y[model.nq:]
        return np.concatenate([qdot, forward_dynamics(model, q, qdot)])

    def rhs_without_qvv(_, y):
        q, qdot = y[:model.nq], y[model.nq:]
        f = reduced_forces(model, q, qdot) - quadratic_velocity_vector(model, q, qdot)
        return np.concatenate([qdot, np.linalg.solve(mass_matrix(model, q), f)])

    assert run(rhs) < 1e-6
    assert run(rhs_without_qvv) > 1e-3


# --- velocity-dependent forces: the Lagrangian Coriolis term -----------------------------------

def _lagrangian_coriolis(model, q, qdot):
    """``Mdot qdot - 1/2 d/dq (qdot^T M qdot)`` by central differences (step 1e-6: error ~1e-10)."""
    dM = numerical_derivative(lambda x: mass_matrix(model, x), q)        # (nq, nq, nq)
    Mdot = dM @ qdot
    grad = np.einsum("i,ijk,j->k", qdot, dM, qdot)
    return Mdot @ qdot - 0.5 * grad


def test_velocity_forces_are_minus_the_lagrangian_coriolis_term(tree):
    """With gravity off, f_r(q, qdot) = -(Mdot qdot - 1/2 d/dq(qdot^T M qdot)); its two parts are
    the quadratic velocity vector and J^T of the bodies' Coriolis wrenches ad(phi)^T M phi."""
    model, q, qdot, _ = tree
    model = Model(model.bodies, gravity=np.zeros(3))
    c = _lagrangian_coriolis(model, q, qdot)
    scale = 1 + np.abs(c).max()
    np.testing.assert_allclose(reduced_forces(model, q, qdot), -c, atol=1e-7 * scale)
    J = jacobian(model, q)
    phi = body_twists(model, q, qdot)
    coriolis = np.concatenate([ad(p).T @ M @ p for p, M in zip(phi, model.spatial_inertias, strict=True)])
    np.testing.assert_allclose(quadratic_velocity_vector(model, q, qdot) + J.T @ coriolis, -c,
                               atol=1e-7 * scale)


def test_quadratic_velocity_vector_is_minus_jt_m_jdot_qdot(tree):
    model, q, qdot, _ = tree
    J, Jdot = jacobian_and_derivative(model, q, qdot)
    M_m = np.zeros((6 * model.n, 6 * model.n))
    for i, M in enumerate(model.spatial_inertias):
        M_m[6 * i: 6 * i + 6, 6 * i: 6 * i + 6] = M
    np.testing.assert_allclose(quadratic_velocity_vector(model, q, qdot), -J.T @ M_m @ Jdot @ qdot,
                               atol=1e-12)


def test_quadratic_velocity_vector_is_quadratic(tree):
    model, q, qdot, _ = tree
    np.testing.assert_allclose(quadratic_velocity_vector(model, q, 3 * qdot),
                               9 * quadratic_velocity_vector(model, q, qdot), rtol=1e-12, atol=1e-12)


# --- conservative forces: -dV/dq ---------------------------------------------------------------

def _conservative_check(model, q, flip=False):
    f = reduced_forces(model, q, np.zeros(model.nq))   # at rest only the conservative forces remain
    return check_derivative(lambda x: potential_energy(model, x), q, (f if flip else -f), rtol=RTOL)


def test_gravity_force_is_minus_the_gradient_of_its_potential(tree):
    model, q, _, _ = tree
    check = _conservative_check(model, q)
    assert check.ok, check.error


def test_joint_springs_are_minus_the_gradient_of_their_potential(tree):
    model, q, _, rng = tree
    model = _with_springs(Model(model.bodies, gravity=np.zeros(3)), rng)
    np.testing.assert_allclose(reduced_forces(model, q, np.zeros(model.nq)),
                               -model.stiffness * (q - model.q_rest), atol=1e-14)
    assert _conservative_check(model, q).ok
    with_gravity = _with_springs(tree[0], rng)
    assert _conservative_check(with_gravity, q).ok


def test_a_flipped_force_fails_the_gradient_check(tree):
    model, q, _, _ = tree
    assert not _conservative_check(model, q, flip=True).ok


def _point_spring_model(model, rng):
    a, b = Attachment(model.n - 1, rng.standard_normal(3)), Attachment(1, rng.standard_normal(3))
    world = Attachment(-1, rng.standard_normal(3))
    law = LinearSpringDamper(7.0, 0.0, rest_length=0.3)
    forces = [PointSpring(a, b, 5.0), PointSpring(world, Attachment(0, rng.standard_normal(3)), 2.0),
              Spring([a, world], law), PointForce(2, rng.standard_normal(3), rng.standard_normal(3), 3.0)]
    return model.with_forces(forces)


def test_maximal_forces_enter_through_jt_and_are_conservative(tree):
    model, q, _, rng = tree
    model = _point_spring_model(model, rng)
    check = _conservative_check(model, q)
    assert check.ok, check.error
    kin = forward_kinematics(model, q)
    f_m = maximal_forces(model, kin.E_wi, np.zeros((model.n, 6)))
    bare = Model(model.bodies, model.gravity)
    rest = np.zeros(model.nq)
    extra = f_m - maximal_forces(bare, kin.E_wi, np.zeros((model.n, 6)))
    np.testing.assert_allclose(reduced_forces(model, q, rest) - reduced_forces(bare, q, rest),
                               jacobian(model, q).T @ extra, atol=1e-12)


def test_maximal_forces_derivatives_are_those_of_the_model_forces(tree):
    model, q, qdot, rng = tree
    model = _point_spring_model(model, rng)
    kin = forward_kinematics(model, q)
    phi = body_twists(model, q, qdot)
    terms = maximal_forces(model, kin.E_wi, phi, derivatives=True)
    np.testing.assert_allclose(terms.f, maximal_forces(model, kin.E_wi, phi), atol=0)
    K = terms.K + _gravity_K(model, kin.E_wi, phi)
    check = check_derivative(lambda E: maximal_forces(model, E, phi), kin.E_wi, K, space="se3", rtol=RTOL)
    assert check.ok, check.error


def _gravity_K(model, E, phi):
    """The pose derivative of gravity's body-frame wrench, which MaximalForces.K leaves out."""
    from redmax_edu.maximal.forces import Gravity

    K = np.zeros((6 * model.n, 6 * model.n))
    for i, b in enumerate(model.bodies):
        K += Gravity(i, b.mass, model.gravity).evaluate(E, phi).K
    return K


# --- linearly implicit Euler -------------------------------------------------------------------

def _one_dof(stiffness, damping, q_rest=0.0):
    body = Body("pendulum", -1, Revolute([0, 0, 1]), np.eye(4), random_transform(np.random.default_rng(5)),
                2.0, np.diag([0.2, 0.3, 0.4]), stiffness=stiffness, damping=damping, q_rest=q_rest)
    return Model([body], gravity=np.zeros(3))


def test_linearly_implicit_euler_matches_the_closed_form_on_a_spring_damper():
    """(M + h D + h^2 K) v1 = M v0 - h K (q0 - q_rest): the damper's explicit part cancels (Eq. 2.83)."""
    K, D, rest, h = 30.0, 1.5, 0.2, 0.01
    model = _one_dof(K, D, rest)
    q0, v0 = np.array([0.7]), np.array([-1.3])
    M = mass_matrix(model, q0)[0, 0]
    v1 = (M * v0 + h * (-K * (q0 - rest))) / (M + h * D + h * h * K)
    q1, qdot1 = linearly_implicit_euler_step(model, q0, v0, h)
    np.testing.assert_allclose(qdot1, v1, rtol=1e-14)
    np.testing.assert_allclose(q1, q0 + h * v1, rtol=1e-14)


@pytest.mark.parametrize("damping", [0.0, 1.5])
def test_linearly_implicit_euler_dissipates_energy(damping):
    model = _one_dof(30.0, damping)
    q, qdot = np.array([0.7]), np.array([-1.3])
    energy = [kinetic_energy(model, q, qdot) + potential_energy(model, q)]
    for _ in range(200):
        q, qdot = linearly_implicit_euler_step(model, q, qdot, 0.01)
        energy.append(kinetic_energy(model, q, qdot) + potential_energy(model, q))
    assert np.all(np.diff(energy) < 0)  # every step loses energy, even without a damper
    if damping:
        assert energy[-1] < 0.9 * energy[0]


def test_linearly_implicit_euler_is_consistent_with_forward_dynamics(tree):
    """(qdot1 - qdot0)/h -> qddot with an O(h) error: halving h halves the error."""
    model, q, qdot, rng = tree
    model = _point_spring_model(_with_springs(model, rng), rng)
    qddot = forward_dynamics(model, q, qdot)
    errors = [np.abs((linearly_implicit_euler_step(model, q, qdot, h)[1] - qdot) / h - qddot).max()
              for h in (1e-4, 5e-5)]
    assert errors[0] / errors[1] == pytest.approx(2.0, rel=0.05)


def test_step_size_must_be_positive(tree):
    model, q, qdot, _ = tree
    with pytest.raises(ValueError, match="'h'"):
        linearly_implicit_euler_step(model, q, qdot, 0.0)


# --- hyper-reduced coordinates -----------------------------------------------------------------

def _map(Q):
    """A nonlinear map q = g(Q) for a 3-coordinate model: (Q, Q^2/2, sin Q)."""
    return np.array([Q[0], 0.5 * Q[0] ** 2, np.sin(Q[0])])


def _map_jacobians(Q, Qdot):
    J_rR = np.array([[1.0], [Q[0]], [np.cos(Q[0])]])
    Jdot_rR = np.array([[0.0], [Qdot[0]], [-np.sin(Q[0]) * Qdot[0]]])
    return J_rR, Jdot_rR


def test_hyper_reduced_jacobians_match_finite_differences(rng):
    model = random_tree(rng, 3, kinds=("revolute", "prismatic"), branching=False)
    Q, Qdot = rng.standard_normal(1), rng.standard_normal(1)
    J_rR, Jdot_rR = _map_jacobians(Q, Qdot)
    q, qdot = _map(Q), J_rR @ Qdot
    J_mR, Jdot_mR = hyper_reduce(*jacobian_and_derivative(model, q, qdot), J_rR, Jdot_rR)
    check = check_derivative(lambda x: forward_kinematics(model, _map(x)).E_wi, Q,
                             np.stack([np.einsum("ij,jkl->ikl", E, _brac_rows(J_mR[6 * i: 6 * i + 6]))
                                       for i, E in enumerate(forward_kinematics(model, q).E_wi)]), rtol=RTOL)
    assert check.ok, check.error

    def J_along(t):
        x = Q + t[0] * Qdot
        J_rR = _map_jacobians(x, Qdot)[0]
        return hyper_reduce(jacobian(model, _map(x)), np.zeros((6 * model.n, 3)), J_rR)[0]

    assert check_derivative(J_along, [0.0], Jdot_mR[..., None], rtol=RTOL).ok
    # without the J_mr Jdot_rR term of Eq. (2.89) the check fails
    _, wrong = hyper_reduce(*jacobian_and_derivative(model, q, qdot), J_rR)
    assert not check_derivative(J_along, [0.0], wrong[..., None], rtol=RTOL).ok


def _brac_rows(J6):
    """(6, k) twists -> (4, 4, k) matrices [J e_k]."""
    from redmax_edu.lie import brac

    return np.stack([brac(c) for c in J6.T], axis=-1)


def _twin_pendulums(rng):
    """A fixed root with two identical revolute pendulums hanging at the same place."""
    T_pj, T_jb = random_transform(rng, 0.5), random_transform(rng, 0.5)
    axis = rng.standard_normal(3)
    root = Body("root", -1, Fixed(), random_transform(rng), np.eye(4), 1.0, np.eye(3))
    twins = [Body(name, 0, Revolute(axis), T_pj, T_jb, 1.5, np.diag([0.1, 0.2, 0.25]))
             for name in ("left", "right")]
    return Model([root] + twins, gravity=[0.0, -3.0, -9.81])


def _hyper_reduced_acceleration(model, J_rR, Q, Qdot):
    """Solve Eq. (2.90) with J_mR = J_mr J_rR (constant J_rR)."""
    q, qdot = J_rR @ Q, J_rR @ Qdot
    J_mR, Jdot_mR = hyper_reduce(*jacobian_and_derivative(model, q, qdot), J_rR)
    kin = forward_kinematics(model, q)
    phi = (J_mR @ Qdot).reshape(model.n, 6)
    M_m = np.zeros((6 * model.n, 6 * model.n))
    for i, M in enumerate(model.spatial_inertias):
        M_m[6 * i: 6 * i + 6, 6 * i: 6 * i + 6] = M
    f_m = maximal_forces(model, kin.E_wi, phi)
    return np.linalg.solve(J_mR.T @ M_m @ J_mR, J_mR.T @ (f_m - M_m @ Jdot_mR @ Qdot))


def test_equal_angle_hyper_reduction_moves_like_the_full_model_when_that_motion_is_exact(rng):
    """Twin pendulums started together stay together in the full model, so the hyper-reduced
    model with J_rR = (1, 1) (one shared angle) must produce the same acceleration."""
    model = _twin_pendulums(rng)
    J_rR = np.ones((2, 1))
    for _ in range(3):
        Q, Qdot = rng.standard_normal(1), rng.standard_normal(1)
        full = forward_dynamics(model, J_rR @ Q, J_rR @ Qdot)
        assert full[0] == pytest.approx(full[1], rel=1e-12)
        np.testing.assert_allclose(_hyper_reduced_acceleration(model, J_rR, Q, Qdot), full[:1], rtol=1e-11)


def test_hyper_reduced_dynamics_solves_eq_2_90_with_an_offset_and_forces(rng):
    """The library function equals Eq. (2.90) assembled from hyper_reduce, for random (non-exact)
    reductions with an offset q_0, and applies tau_R through J_rR^T."""
    model = _with_springs(random_tree(rng, 4), rng)
    J_rR = rng.standard_normal((model.nq, 2))
    q0 = rng.standard_normal(model.nq)
    for _ in range(3):
        Q, Qdot, tau_R = rng.standard_normal((3, 2))
        q, qdot = q0 + J_rR @ Q, J_rR @ Qdot
        terms_M, f = mass_matrix(model, q), reduced_forces(model, q, qdot)
        expected = np.linalg.solve(J_rR.T @ terms_M @ J_rR, J_rR.T @ f + tau_R)
        np.testing.assert_allclose(hyper_reduced_dynamics(model, J_rR, q, qdot, tau_R), expected, rtol=1e-10)
    with pytest.raises(ValueError, match="J_rR @ qdot_R"):
        hyper_reduced_dynamics(model, J_rR, q, qdot + rng.standard_normal(model.nq))
    with pytest.raises(ValueError, match="J_rR"):
        hyper_reduced_dynamics(model, J_rR[:-1], q, qdot)


def test_hyper_reduced_dynamics_agrees_with_the_twin_pendulum_assembly(rng):
    model = _twin_pendulums(rng)
    J_rR = np.ones((model.nq, 1))
    Q, Qdot = rng.standard_normal(1), rng.standard_normal(1)
    np.testing.assert_allclose(hyper_reduced_dynamics(model, J_rR, J_rR @ Q, J_rR @ Qdot),
                               _hyper_reduced_acceleration(model, J_rR, Q, Qdot), rtol=1e-11)


def test_joint_forces_are_spring_and_damper(rng):
    model = _with_springs(random_tree(rng, 3), rng)
    q, qdot = random_state(rng, model)
    np.testing.assert_allclose(joint_forces(model, q, qdot), -model.stiffness * (q - model.q_rest)
                               - model.damping * qdot, atol=0)
