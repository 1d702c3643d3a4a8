"""Mutants of the Part 3 assignments (not a test module): see ``exercise_submissions``.

``JOINT_DERIVATIVE_MUTANTS`` (01_joint_derivative), ``BDF1_MUTANTS`` (02_bdf1_newton_step) and
``ADJOINT_GRADIENT_MUTANTS`` (03_adjoint_gradient):
for every common mistake, a mutant of the solution written as a student would (numpy and the
library's ``dynamics_derivatives`` only; a mutant calling the library's joints or implicit
integrators would be refused as such), and a fragment of the message the grader must give it.
"""

import numpy as np

from redmax_edu.derivatives import dynamics_derivatives

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
