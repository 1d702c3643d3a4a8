"""Mutants of the Part 3 assignments (not a test module): see ``exercise_submissions``.

``JOINT_DERIVATIVE_MUTANTS`` (01_joint_derivative): for every common mistake, a mutant of the
solution written as a student would (numpy only; a mutant calling the library's joints would
be refused as such), and a fragment of the message the grader must give it.
"""

import numpy as np

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
