"""Mutants of the assignment 06_joint_types (not a test module): see ``exercise_submissions``.

``JOINT_TYPES_MUTANTS``: for every common mistake in the exponential-coordinates ball joint's S
(§2.4.8), the composite joint's S (§2.4.9) and the step of linearly implicit Euler with joint
springs and dampers (§2.5), a mutant of the solution written as a student would (numpy and the
allowed ``brac``, ``adjoint``, ``inv_se3`` only), and a fragment of the message the grader must
give it.
"""

import numpy as np

from redmax_edu.lie import adjoint, brac, inv_se3

# --- spherical_exp_S -------------------------------------------------------------------------------


def _coefficients(q):
    """a = (1 - cos t)/t^2 and b = (t - sin t)/t^3, with their series below t = 1e-2."""
    t2 = float(q @ q)
    t = np.sqrt(t2)
    if t < 1e-2:
        return 0.5 - t2 / 24 + t2 * t2 / 720, 1 / 6 - t2 / 120 + t2 * t2 / 5040
    return (1 - np.cos(t)) / t2, (t - np.sin(t)) / (t2 * t)


def _ball(top):
    S = np.zeros((6, 3))
    S[:3] = top
    return S


def exp_left_jacobian(q):
    a, b = _coefficients(q)
    K = brac(q)
    return _ball(np.eye(3) + a * K + b * K @ K)  # the angular velocity in the parent's frame


def exp_no_square(q):
    a, _ = _coefficients(q)
    return _ball(np.eye(3) - a * brac(q))


def exp_no_series(q):
    t = np.linalg.norm(q)
    K = brac(q)
    return _ball(np.eye(3) - (1 - np.cos(t)) / t**2 * K + (t - np.sin(t)) / t**3 * K @ K)


def exp_bottom_rows(q):
    a, b = _coefficients(q)
    K = brac(q)
    S = np.zeros((6, 3))
    S[3:] = np.eye(3) - a * K + b * K @ K  # (nu; omega)
    return S


# --- composite_S -----------------------------------------------------------------------------------


def composite_forward_adjoint(Q2, S1, S2):
    return np.hstack([adjoint(Q2) @ S1, S2])


def composite_wrong_order(Q2, S1, S2):
    return np.hstack([S2, adjoint(inv_se3(Q2)) @ S1])


def composite_not_transformed(Q2, S1, S2):
    return np.hstack([S1, S2])


def composite_rotation_only(Q2, S1, S2):
    R = Q2[:3, :3]
    turned = np.vstack([R.T @ S1[:3], R.T @ S1[3:]])  # forgets the translation of Q2
    return np.hstack([turned, S2])


# --- implicit_euler_velocity -----------------------------------------------------------------------


def euler_K_sign(M, f, K, D, qdot, h):
    return np.linalg.solve(M + h * D - h * h * K, M @ qdot + h * (f + D @ qdot))


def euler_old_velocity(M, f, K, D, qdot, h):
    return np.linalg.solve(M + h * D, M @ qdot + h * (f + D @ qdot) - h * h * K @ qdot)


def euler_damping_twice(M, f, K, D, qdot, h):
    return np.linalg.solve(M + h * D + h * h * K, M @ qdot + h * f)


def euler_explicit(M, f, K, D, qdot, h):
    return qdot + h * np.linalg.solve(M, f)


def euler_no_K(M, f, K, D, qdot, h):
    return np.linalg.solve(M + h * D, M @ qdot + h * (f + D @ qdot))


JOINT_TYPES_MUTANTS = {
    # name: (function graded, mutant, a fragment of the message it must get)
    "exp_left_jacobian": ("spherical_exp_S", exp_left_jacobian, "this is the left Jacobian"),
    "exp_no_square": ("spherical_exp_S", exp_no_square, "the second-order term b [q]^2"),
    "exp_no_series": ("spherical_exp_S", exp_no_series, "use their Taylor series"),
    "exp_bottom_rows": ("spherical_exp_S", exp_bottom_rows, "the rotation block is in the bottom rows"),
    "composite_forward_adjoint": ("composite_S", composite_forward_adjoint,
                                  "it uses Ad(Q2) where Ad(Q2^-1) belongs"),
    "composite_wrong_order": ("composite_S", composite_wrong_order, "the blocks are in the wrong order"),
    "composite_not_transformed": ("composite_S", composite_not_transformed,
                                  "S1 is not carried into the child frame"),
    "composite_rotation_only": ("composite_S", composite_rotation_only, "only the rotation of Q2 is used"),
    "euler_K_sign": ("implicit_euler_velocity", euler_K_sign, "h^2 K has the wrong sign"),
    "euler_old_velocity": ("implicit_euler_velocity", euler_old_velocity,
                           "the spring is linearised with the old velocity"),
    "euler_damping_twice": ("implicit_euler_velocity", euler_damping_twice, "the damper is counted twice"),
    "euler_explicit": ("implicit_euler_velocity", euler_explicit, "this is Euler's explicit step"),
    "euler_no_K": ("implicit_euler_velocity", euler_no_K, "the spring is explicit"),
}
