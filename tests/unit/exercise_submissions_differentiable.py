"""Mutants of the Part 3 assignments (not a test module): see ``exercise_submissions``.

``JOINT_DERIVATIVE_MUTANTS`` (01_joint_derivative), ``BDF1_MUTANTS`` (02_bdf1_newton_step),
``ADJOINT_GRADIENT_MUTANTS`` (03_adjoint_gradient), ``JACOBIAN_DERIVATIVE_MUTANTS``
(04_jacobian_derivative), ``MASS_DERIVATIVE_MUTANTS`` (05_mass_matrix_derivative) and, for
chapter 5, ``DEL_MUTANTS`` (01_discrete_euler_lagrange):
for every common mistake, a mutant of the solution written as a student would (numpy and the
library's ``dynamics_derivatives`` only; a mutant calling the library's joints or implicit
integrators would be refused as such), and a fragment of the message the grader must give it.
"""

import numpy as np

from redmax_edu.derivatives import dynamics_derivatives
from redmax_edu.dynamics import mass_matrix, reduced_forces
from redmax_edu.jacobian import jacobian, jacobian_dq
from redmax_edu.kinematics import forward_kinematics
from redmax_edu.lie import brac

# --- universal_dQ_dq, universal_dS_dq, universal_dSdot_dq (01_joint_derivative) -------------------


def _rotations(q):
    c1, s1, c2, s2 = np.cos(q[0]), np.sin(q[0]), np.cos(q[1]), np.sin(q[1])
    Rx = np.array([[1.0, 0.0, 0.0], [0.0, c1, -s1], [0.0, s1, c1]])
    Ry = np.array([[c2, 0.0, s2], [0.0, 1.0, 0.0], [-s2, 0.0, c2]])
    dRx = np.array([[0.0, 0.0, 0.0], [0.0, -s1, -c1], [0.0, c1, -s1]])
    dRy = np.array([[-s2, 0.0, c2], [0.0, 0.0, 0.0], [-c2, 0.0, -s2]])
    return Rx, Ry, dRx, dRy


def _slices(first, second):
    dQ = np.zeros((4, 4, 2))
    dQ[:3, :3, 0], dQ[:3, :3, 1] = first, second
    return dQ


def dQ_index_first(q):
    Rx, Ry, dRx, dRy = _rotations(q)
    return np.moveaxis(_slices(dRx @ Ry, Rx @ dRy), -1, 0)  # out[k] = dQ/dq_k


def dQ_transposed_slices(q):
    Rx, Ry, dRx, dRy = _rotations(q)
    return _slices((dRx @ Ry).T, (Rx @ dRy).T)


def dQ_factors_only(q):
    Rx, Ry, dRx, dRy = _rotations(q)
    return _slices(dRx, dRy)  # the other factor of each product dropped


def dQ_at_zero(q):
    Rx, Ry, dRx, dRy = _rotations(np.zeros(2))  # the derivative at q = 0, for every q
    return _slices(dRx @ Ry, Rx @ dRy)


def dQ_y_sign(q):
    Rx, Ry, dRx, dRy = _rotations(q)
    return _slices(dRx @ Ry, -Rx @ dRy)  # d(cos)/dq taken as +sin


def _dS(q):
    dS = np.zeros((6, 2, 2))
    dS[:3, 0, 1] = [-np.sin(q[1]), 0.0, np.cos(q[1])]
    return dS


def dS_transposed_slices(q):
    return np.swapaxes(_dS(q), 1, 2)


def dS_product_rule(q):
    Rx, Ry, dRx, dRy = _rotations(q)
    flip = np.diag([0.0, -1.0, -1.0])  # d2R_x/dq_1^2 = flip R_x, d2R_y/dq_2^2 = flip_y R_y
    flip_y = np.diag([-1.0, 0.0, -1.0])
    second = [[flip @ Rx @ Ry, dRx @ dRy], [dRx @ dRy, Rx @ flip_y @ Ry]]
    dS = np.zeros((6, 2, 2))
    for j in range(2):
        for k in range(2):
            W = (Rx @ Ry).T @ second[j][k]  # d/dq_k of R^T dR/dq_j with R^T held fixed
            dS[:3, j, k] = [W[2, 1], W[0, 2], W[1, 0]]
    return dS


def dS_writeup_one(q):
    dS = _dS(q)
    dS[1, 1, 1] = 1.0  # Eq. (3.30) as transcribed
    return dS


def dS_index_first(q):
    return np.moveaxis(_dS(q), -1, 0)


def dSdot_no_rate(q, qdot):
    dSdot = np.zeros((6, 2, 2))
    dSdot[:3, 0, 1] = [-np.cos(q[1]), 0.0, -np.sin(q[1])]
    return dSdot


def dSdot_is_dS(q, qdot):
    return _dS(q)


def dSdot_sign(q, qdot):
    dSdot = np.zeros((6, 2, 2))
    dSdot[:3, 0, 1] = np.array([np.cos(q[1]), 0.0, -np.sin(q[1])]) * qdot[1]  # sign of the first entry
    return dSdot


JOINT_DERIVATIVE_MUTANTS = {
    "dQ_index_first": ("universal_dQ_dq", dQ_index_first, "The derivative index goes last"),
    "dQ_transposed_slices": ("universal_dQ_dq", dQ_transposed_slices, "each slice is transposed"),
    "dQ_factors_only": ("universal_dQ_dq", dQ_factors_only, "the product rule is left out"),
    "dQ_at_zero": ("universal_dQ_dq", dQ_at_zero, "It is right at q = (0, 0) and wrong elsewhere"),
    "dQ_y_sign": ("universal_dQ_dq", dQ_y_sign, "along q_2; it agrees along q_1"),
    "dS_transposed_slices": ("universal_dS_dq", dS_transposed_slices, "the last two indices are exchanged"),
    "dS_product_rule": ("universal_dS_dq", dS_product_rule, "it lacks a term of the product rule"),
    "dS_writeup_one": ("universal_dS_dq", dS_writeup_one, "the writeup's Eq. (3.30) prints"),
    "dS_index_first": ("universal_dS_dq", dS_index_first, "The derivative index goes last"),
    "dSdot_no_rate": ("universal_dSdot_dq", dSdot_no_rate, "so multiply by qdot_2"),
    "dSdot_is_dS": ("universal_dSdot_dq", dSdot_is_dS, "it is dS/dq, not dSdot/dq"),
    "dSdot_sign": ("universal_dSdot_dq", dSdot_sign, "along q_2; it agrees along q_1"),
}


# --- bdf1_residual, bdf1_newton_matrix, bdf1_newton_step (02_bdf1_newton_step) -------------------


def _bdf1(model, q0, qdot0, q1, h):
    """x = q1 - q0 - h qdot0 and the dynamics derivatives at (q1, qdot1)."""
    return q1 - q0 - h * qdot0, dynamics_derivatives(model, q1, (q1 - q0) / h)


def residual_force_sign(model, q0, qdot0, q1, h):
    x, d = _bdf1(model, q0, qdot0, q1, h)
    return d.M @ x + h**2 * d.f


def residual_minv_form(model, q0, qdot0, q1, h):
    x, d = _bdf1(model, q0, qdot0, q1, h)
    return x - h**2 * np.linalg.solve(d.M, d.f)  # q1 = q0 + h qdot0 + h^2 M^-1 f, moved to one side


def residual_old_velocity(model, q0, qdot0, q1, h):
    x, d = _bdf1(model, q0, qdot0, q1, h)
    return d.M @ x - h**2 * dynamics_derivatives(model, q1, qdot0).f


def residual_no_h_qdot0(model, q0, qdot0, q1, h):
    x, d = _bdf1(model, q0, qdot0, q1, h)
    return d.M @ (q1 - q0) - h**2 * d.f


def residual_h_not_h2(model, q0, qdot0, q1, h):
    x, d = _bdf1(model, q0, qdot0, q1, h)
    return d.M @ x - h * d.f


def _matrix(model, q0, qdot0, q1, h, dM=True, hD=None, hK=None, contract="ijk,j->ik"):
    x, d = _bdf1(model, q0, qdot0, q1, h)
    hD = h if hD is None else hD
    hK = h**2 if hK is None else hK
    H = d.M - hD * d.D - hK * d.K
    return H + np.einsum(contract, d.dM_dq, x) if dM else H


def matrix_no_dM(model, q0, qdot0, q1, h):
    return _matrix(model, q0, qdot0, q1, h, dM=False)


def matrix_h2_D(model, q0, qdot0, q1, h):
    return _matrix(model, q0, qdot0, q1, h, hD=h**2)  # dqdot1/dq1 = 1/h forgotten


def matrix_h_K(model, q0, qdot0, q1, h):
    return _matrix(model, q0, qdot0, q1, h, hK=h)


def matrix_derivative_index(model, q0, qdot0, q1, h):
    return _matrix(model, q0, qdot0, q1, h, contract="ijk,k->ij")  # sum_k dM/dq_k x_k


def matrix_force_sign(model, q0, qdot0, q1, h):
    return _matrix(model, q0, qdot0, q1, h, hD=-h, hK=-h**2)


def _reference_step(model, q0, qdot0, q1, h):
    x, d = _bdf1(model, q0, qdot0, q1, h)
    return d.M @ x - h**2 * d.f, _matrix(model, q0, qdot0, q1, h)


def step_plus(model, q0, qdot0, q1, h):
    g, H = _reference_step(model, q0, qdot0, q1, h)
    return q1 + np.linalg.solve(H, g)


def step_increment(model, q0, qdot0, q1, h):
    g, H = _reference_step(model, q0, qdot0, q1, h)
    return -np.linalg.solve(H, g)


def step_transposed(model, q0, qdot0, q1, h):
    g, H = _reference_step(model, q0, qdot0, q1, h)
    return q1 - np.linalg.solve(H.T, g)


def step_divided(model, q0, qdot0, q1, h):
    g, H = _reference_step(model, q0, qdot0, q1, h)
    return q1 - g / np.diag(H)


def step_no_dM(model, q0, qdot0, q1, h):
    g, _ = _reference_step(model, q0, qdot0, q1, h)
    return q1 - np.linalg.solve(matrix_no_dM(model, q0, qdot0, q1, h), g)  # still converges, slowly


BDF1_MUTANTS = {
    "residual_force_sign": ("bdf1_residual", residual_force_sign, "the force term has the wrong sign"),
    "residual_minv_form": ("bdf1_residual", residual_minv_form, "it is M^-1 g, the equation divided by M"),
    "residual_old_velocity": ("bdf1_residual", residual_old_velocity, "f is evaluated at the old velocity"),
    "residual_no_h_qdot0": ("bdf1_residual", residual_no_h_qdot0, "the term h qdot0 is missing"),
    "residual_h_not_h2": ("bdf1_residual", residual_h_not_h2, "the force is multiplied by h, not h^2"),
    "matrix_no_dM": ("bdf1_newton_matrix", matrix_no_dM, "the term dM/dq (q1 - q0 - h qdot0) is missing"),
    "matrix_h2_D": ("bdf1_newton_matrix", matrix_h2_D, "it has h^2 D where h D belongs"),
    "matrix_h_K": ("bdf1_newton_matrix", matrix_h_K, "it has h K where h^2 K belongs"),
    "matrix_derivative_index": ("bdf1_newton_matrix", matrix_derivative_index,
                                "contracts x = q1 - q0 - h qdot0 with the derivative index"),
    "matrix_force_sign": ("bdf1_newton_matrix", matrix_force_sign, "the force terms have the wrong sign"),
    "step_plus": ("bdf1_newton_step", step_plus, "it steps the wrong way"),
    "step_increment": ("bdf1_newton_step", step_increment, "it returns the increment -H^-1 g"),
    "step_transposed": ("bdf1_newton_step", step_transposed, "it solves with the transpose of H"),
    "step_divided": ("bdf1_newton_step", step_divided, "divides g by the diagonal of H"),
    "step_no_dM": ("bdf1_newton_step", step_no_dM, "it steps with a wrong H (the term dM/dq"),
}


# --- adjoint_back_solve, initial_state_gradient, parameter_gradient (03_adjoint_gradient) ---------


def _loop(H, A, B, y, transpose=True, use_B=True, sign=-1.0, shift=0):
    N = len(H) - 1
    z = np.zeros_like(y, dtype=float)
    for i in range(N, 0, -1):
        rhs = y[i].copy()
        if i + 1 <= N:
            rhs += sign * A[i + 1 - shift].T @ z[i + 1]
        if use_B and i + 2 <= N:
            rhs += sign * B[i + 2 - shift].T @ z[i + 2]
        z[i] = np.linalg.solve(H[i].T if transpose else H[i], rhs)
    return z


def back_solve_with_H(H, A, B, y):
    return _loop(H, A, B, y, transpose=False)


def back_solve_no_B(H, A, B, y):
    return _loop(H, A, B, y, use_B=False)


def back_solve_sign(H, A, B, y):
    return _loop(H, A, B, y, sign=1.0)


def back_solve_off_by_one(H, A, B, y):
    return _loop(H, A, B, y, shift=1)  # A[i] and B[i + 1]: the blocks of the wrong rows


def back_solve_forward(H, A, B, y):
    z = np.zeros_like(y, dtype=float)
    for i in range(1, len(H)):  # forward, as in the forward run
        rhs = y[i] - A[i].T @ z[i - 1]
        if i >= 2:
            rhs -= B[i].T @ z[i - 2]
        z[i] = np.linalg.solve(H[i].T, rhs)
    return z


def initial_sign(z, y, A, B):
    return y[0] + A[1].T @ z[1] + B[2].T @ z[2]


def initial_no_B(z, y, A, B):
    return y[0] - A[1].T @ z[1]


def initial_not_transposed(z, y, A, B):
    return y[0] - A[1] @ z[1] - B[2] @ z[2]


def parameter_sign(z, dg_dp, dpsi_dp):
    return dpsi_dp + sum(dg_dp[i].T @ z[i] for i in range(1, len(z)))


def parameter_off_by_one(z, dg_dp, dpsi_dp):
    return dpsi_dp - sum(dg_dp[i - 1].T @ z[i] for i in range(1, len(z)))


def parameter_no_explicit(z, dg_dp, dpsi_dp):
    return -sum(dg_dp[i].T @ z[i] for i in range(1, len(z)))


ADJOINT_GRADIENT_MUTANTS = {
    "back_solve_with_H": ("adjoint_back_solve", back_solve_with_H, "it solves with H_i where H_i^T belongs"),
    "back_solve_no_B": ("adjoint_back_solve", back_solve_no_B,
                        "the block B (dg_(i+2)/dq_i, two states back) is dropped"),
    "back_solve_sign": ("adjoint_back_solve", back_solve_sign, "the coupling terms have the wrong sign"),
    "back_solve_off_by_one": ("adjoint_back_solve", back_solve_off_by_one, "off by one step"),
    "back_solve_forward": ("adjoint_back_solve", back_solve_forward, "the loop runs forward"),
    "initial_sign": ("initial_state_gradient", initial_sign, "the z terms have the wrong sign"),
    "initial_no_B": ("initial_state_gradient", initial_no_B, "the term B_2^T z_2 is missing"),
    "initial_not_transposed": ("initial_state_gradient", initial_not_transposed,
                               "the blocks are not transposed"),
    "parameter_sign": ("parameter_gradient", parameter_sign, "the term z^T dg/dp has the wrong sign"),
    "parameter_off_by_one": ("parameter_gradient", parameter_off_by_one, "off by one step"),
    "parameter_no_explicit": ("parameter_gradient", parameter_no_explicit,
                              "the explicit term dPsi/dp|_qbar is missing"),
}


# --- jacobian_derivative, jacobian_rate (04_jacobian_derivative) ------------------------------------


def _ad(phi):
    W, N = brac(phi[:3]), brac(phi[3:])
    return np.block([[W, np.zeros((3, 3))], [N, W]])


def _brackets(J, keep):
    n = J.shape[1]
    out = np.zeros((*J.shape, n))
    for i in range(J.shape[0] // 6):
        Ji = J[6 * i:6 * i + 6]
        for j in range(n):
            for k in range(n):
                if keep(i, j, k):
                    out[6 * i:6 * i + 6, j, k] = _ad(Ji[:, j]) @ Ji[:, k]
    return out


def _right(i, j, k):
    return j < k <= i


def derivative_bracket_swapped(J):
    return -_brackets(J, _right)  # ad(J_k) J_j


def derivative_joints_before(J):
    return _brackets(J, lambda i, j, k: k < j <= i)


def derivative_own_frame(J):
    n = J.shape[1]
    out = np.zeros((*J.shape, n))
    for i in range(J.shape[0] // 6):
        for j in range(n):
            for k in range(j + 1, min(i, n - 1) + 1):
                out[6 * i:6 * i + 6, j, k] = _ad(J[6 * i:6 * i + 6, j]) @ J[6 * k:6 * k + 6, k]  # body k's
    return out


def derivative_index_first(J):
    return np.moveaxis(_brackets(J, _right), -1, 0)


def derivative_slices_transposed(J):
    return np.swapaxes(_brackets(J, _right), 1, 2)


def rate_bracket_swapped(J, qdot):
    return -_brackets(J, _right) @ qdot


def rate_column_index(J, qdot):
    return np.einsum("rjk,j->rk", _brackets(J, _right), qdot)


def rate_without_qdot(J, qdot):
    return _brackets(J, _right).sum(axis=2)


JACOBIAN_DERIVATIVE_MUTANTS = {
    "derivative_bracket_swapped": ("jacobian_derivative", derivative_bracket_swapped,
                                   "the bracket is the wrong way round"),
    "derivative_joints_before": ("jacobian_derivative", derivative_joints_before,
                                 "it uses the joints before j"),
    "derivative_own_frame": ("jacobian_derivative", derivative_own_frame, "off by a frame: joint k's twist"),
    "derivative_index_first": ("jacobian_derivative", derivative_index_first,
                               "The derivative index goes last"),
    "derivative_slices_transposed": ("jacobian_derivative", derivative_slices_transposed,
                                     "the last two indices are exchanged"),
    "rate_bracket_swapped": ("jacobian_rate", rate_bracket_swapped, "the bracket is the wrong way round"),
    "rate_column_index": ("jacobian_rate", rate_column_index, "it contracts qdot with the column index j"),
    "rate_without_qdot": ("jacobian_rate", rate_without_qdot, "it is dJ/dq with every rate 1"),
}


# --- mass_matrix_derivative, mass_matrix_rate (05_mass_matrix_derivative) ----------------------------


def _first_term(model, q):
    J, dJ = jacobian(model, q), jacobian_dq(model, q)
    Mm = np.zeros((6 * model.n, 6 * model.n))
    for i, body in enumerate(model.bodies):
        Mm[6 * i:6 * i + 3, 6 * i:6 * i + 3] = body.inertia
        Mm[6 * i + 3:6 * i + 6, 6 * i + 3:6 * i + 6] = body.mass * np.eye(3)
    return np.einsum("rik,rs,sj->ijk", dJ, Mm, J)


def mass_derivative_first_term(model, q):
    return _first_term(model, q)


def mass_derivative_second_term(model, q):
    return np.swapaxes(_first_term(model, q), 0, 1)


def mass_derivative_twice(model, q):
    return 2 * _first_term(model, q)


def mass_derivative_index_first(model, q):
    first = _first_term(model, q)
    return np.moveaxis(first + np.swapaxes(first, 0, 1), -1, 0)


def mass_rate_first_term(model, q, qdot):
    return _first_term(model, q) @ qdot


def mass_rate_first_index(model, q, qdot):
    first = _first_term(model, q)
    return np.einsum("ijk,i->jk", first + np.swapaxes(first, 0, 1), qdot)


MASS_DERIVATIVE_MUTANTS = {
    "mass_derivative_first_term": ("mass_matrix_derivative", mass_derivative_first_term,
                                   "it has only the term (dJ/dq_k)^T M_m J"),
    "mass_derivative_second_term": ("mass_matrix_derivative", mass_derivative_second_term,
                                    "it has only the term J^T M_m dJ/dq_k"),
    "mass_derivative_twice": ("mass_matrix_derivative", mass_derivative_twice, "it is twice one term"),
    "mass_derivative_index_first": ("mass_matrix_derivative", mass_derivative_index_first,
                                    "the derivative index is first"),
    "mass_rate_first_term": ("mass_matrix_rate", mass_rate_first_term,
                             "it has only one term of the product rule"),
    "mass_rate_first_index": ("mass_matrix_rate", mass_rate_first_index,
                              "qdot is contracted with the first index"),
}


# --- discrete_lagrangian, discrete_momentum, del_residual (01_discrete_euler_lagrange) -------------------


def _potential(model, q):
    kin = forward_kinematics(model, q)
    return -sum(body.mass * model.gravity @ kin.E_wi[i][:3, 3] for i, body in enumerate(model.bodies))


def _kinetic(model, q, v):
    return 0.5 * v @ mass_matrix(model, q) @ v


def lagrangian_full_step(model, q0, q1, h):
    v = (q1 - q0) / h
    return h * sum(_kinetic(model, q, v) - _potential(model, q) for q in (q0, q1))


def lagrangian_plus_potential(model, q0, q1, h):
    v = (q1 - q0) / h
    return h / 2 * sum(_kinetic(model, q, v) + _potential(model, q) for q in (q0, q1))


def lagrangian_midpoint(model, q0, q1, h):
    v, mid = (q1 - q0) / h, (q0 + q1) / 2
    return h * (_kinetic(model, mid, v) - _potential(model, mid))


def _dL_dq(model, q, v, with_dM=True):
    dM = dynamics_derivatives(model, q, np.zeros(model.nq)).dM_dq
    gravity = reduced_forces(model, q, np.zeros(model.nq))
    return (0.5 * np.einsum("i,ijk,j->k", v, dM, v) if with_dM else 0) + gravity


def _mean(model, q0, q1, h):
    return 0.5 * (mass_matrix(model, q0) + mass_matrix(model, q1)) @ ((q1 - q0) / h)


def momentum_continuous(model, q0, q1, h):
    return mass_matrix(model, q1) @ ((q1 - q0) / h)


def momentum_without_force(model, q0, q1, h):
    return _mean(model, q0, q1, h)


def momentum_start_of_step(model, q0, q1, h):
    return _mean(model, q0, q1, h) - h / 2 * _dL_dq(model, q0, (q1 - q0) / h)


def _residual(model, q_prev, q, q_next, h, force=True, with_dM=True):
    terms = _mean(model, q_prev, q, h) - _mean(model, q, q_next, h)
    if force:
        terms = terms + h / 2 * (_dL_dq(model, q, (q - q_prev) / h, with_dM)
                                 + _dL_dq(model, q, (q_next - q) / h, with_dM))
    return terms


def residual_sign(model, q_prev, q, q_next, h):
    return -_residual(model, q_prev, q, q_next, h)


def residual_without_force(model, q_prev, q, q_next, h):
    return _residual(model, q_prev, q, q_next, h, force=False)


def residual_without_dM(model, q_prev, q, q_next, h):
    return _residual(model, q_prev, q, q_next, h, with_dM=False)


DEL_MUTANTS = {
    "lagrangian_full_step": ("discrete_lagrangian", lagrangian_full_step, "it is h (L(q0, v) + L(q1, v))"),
    "lagrangian_plus_potential": ("discrete_lagrangian", lagrangian_plus_potential, "it uses T + V"),
    "lagrangian_midpoint": ("discrete_lagrangian", lagrangian_midpoint, "it is the midpoint rule"),
    "momentum_continuous": ("discrete_momentum", momentum_continuous,
                            "it is the continuous momentum M(q1) v"),
    "momentum_without_force": ("discrete_momentum", momentum_without_force,
                               "the force term h/2 dL/dq(q1, v) is missing"),
    "momentum_start_of_step": ("discrete_momentum", momentum_start_of_step, "it is -D_0 L_d"),
    "residual_sign": ("del_residual", residual_sign, "it has the wrong sign overall"),
    "residual_without_force": ("del_residual", residual_without_force,
                               "the force terms h/2 dL/dq are missing"),
    "residual_without_dM": ("del_residual", residual_without_dM, "the velocity part of dL/dq"),
}
