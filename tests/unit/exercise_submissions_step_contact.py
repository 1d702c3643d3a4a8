"""Mutants of the assignment 07_step_and_contact (not a test module): see ``exercise_submissions``.

``STEP_CONTACT_MUTANTS``: for every common mistake in ``symplectic_euler_step``, ``contact_rows``
and ``projected_gauss_seidel``, a mutant written as a student would (numpy and the allowed
``brac``, ``ad``, ``exp_se3`` and ``pyramid_directions`` only), and a fragment of the message
the grader must give it.
"""

import numpy as np

from redmax_edu.lie import ad, brac, exp_se3
from redmax_edu.maximal.constraints import pyramid_directions

# --- symplectic_euler_step (Eq. 1.28-1.29) -------------------------------------------------------


def _twist_bracket(phi):
    T = np.zeros((4, 4))
    T[:3, :3], T[:3, 3] = brac(phi[:3]), phi[3:]
    return T


def _step(M, E, phi, h, g, *, coriolis=1.0, impulse_h=True, world_weight=False, move="new",
          exp_left=False, additive=False):
    """One step with the mistakes switched on by the keywords."""
    R, m = E[:3, :3], M[3, 3]
    weight = np.concatenate([np.zeros(3), (m * g) if world_weight else R.T @ (m * g)])
    wrench = coriolis * ad(phi).T @ M @ phi + weight
    phi_new = phi + (h if impulse_h else 1.0) * np.linalg.solve(M, wrench)
    twist = phi_new if move == "new" else phi
    if additive:
        E_new = E + h * E @ _twist_bracket(twist)
    else:
        E_new = exp_se3(h * twist) @ E if exp_left else E @ exp_se3(h * twist)
    return np.concatenate([phi_new, E_new.ravel()])


def step_explicit(M, E, phi, h, g):
    return _step(M, E, phi, h, g, move="old")


def step_exp_left(M, E, phi, h, g):
    return _step(M, E, phi, h, g, exp_left=True)


def step_no_coriolis(M, E, phi, h, g):
    return _step(M, E, phi, h, g, coriolis=0.0)


def step_coriolis_sign(M, E, phi, h, g):
    return _step(M, E, phi, h, g, coriolis=-1.0)


def step_no_h(M, E, phi, h, g):
    return _step(M, E, phi, h, g, impulse_h=False)


def step_world_weight(M, E, phi, h, g):
    return _step(M, E, phi, h, g, world_weight=True)


def step_additive_pose(M, E, phi, h, g):
    return _step(M, E, phi, h, g, additive=True)


def step_tuple(M, E, phi, h, g):
    out = _step(M, E, phi, h, g)
    return out[:6], out[6:].reshape(4, 4)


# --- contact_rows (Eq. 1.90-1.91, §1.13) ----------------------------------------------------------


def _rows(E, x, n, *, rotation="R", gamma="right"):
    R = {"R": E[:3, :3], "I": np.eye(3), "R^T": E[:3, :3].T}[rotation]
    Gamma = {"right": np.hstack([brac(x).T, np.eye(3)]), "swapped": np.hstack([np.eye(3), brac(x).T]),
             "sign": np.hstack([brac(x), np.eye(3)])}[gamma]
    return np.vstack([n, pyramid_directions(n)]) @ R @ Gamma


def rows_no_rotation(E, x, n):
    return _rows(E, x, n, rotation="I")


def rows_rotation_transposed(E, x, n):
    return _rows(E, x, n, rotation="R^T")


def rows_gamma_swapped(E, x, n):
    return _rows(E, x, n, gamma="swapped")


def rows_bracket_sign(E, x, n):
    return _rows(E, x, n, gamma="sign")


# --- projected_gauss_seidel (ArtiSynth notes §0.15) ---------------------------------------------


def pgs_jacobi(M, q, lower, upper, sweeps):
    z = np.zeros(len(q))
    for _ in range(sweeps):
        z = np.clip(z - (M @ z + q) / np.diag(M), lower, upper)  # every row from the old z
    return z


def _pgs(M, q, lower, upper, sweeps, *, clamp=True, divide=True):
    z = np.zeros(len(q))
    for _ in range(sweeps):
        for i in range(len(q)):
            new = z[i] - (M[i] @ z + q[i]) / (M[i, i] if divide else 1.0)
            z[i] = np.clip(new, lower[i], upper[i]) if clamp else new
    return z


def pgs_no_clamp(M, q, lower, upper, sweeps):
    return _pgs(M, q, lower, upper, sweeps, clamp=False)


def pgs_wrong_side(M, q, lower, upper, sweeps):
    return _pgs(M, q, -upper, -lower, sweeps)


def pgs_undivided(M, q, lower, upper, sweeps):
    return _pgs(M, q, lower, upper, sweeps, divide=False)


def pgs_q_sign(M, q, lower, upper, sweeps):
    return _pgs(M, -q, lower, upper, sweeps)


STEP_CONTACT_MUTANTS = {
    # name: (function graded, mutant, a fragment of the message it must get)
    "step_explicit": ("symplectic_euler_step", step_explicit, "the pose moves with the old twist"),
    "step_exp_left": ("symplectic_euler_step", step_exp_left, "the exponential is on the wrong side"),
    "step_no_coriolis": ("symplectic_euler_step", step_no_coriolis,
                         "the Coriolis wrench ad(phi)^T M phi is missing"),
    "step_coriolis_sign": ("symplectic_euler_step", step_coriolis_sign,
                           "the Coriolis wrench has the wrong sign"),
    "step_no_h": ("symplectic_euler_step", step_no_h, "the wrench is not multiplied by the step"),
    "step_world_weight": ("symplectic_euler_step", step_world_weight, "the weight is taken in world axes"),
    "step_additive_pose": ("symplectic_euler_step", step_additive_pose,
                           "the new pose is not a rigid transform"),
    "step_tuple": ("symplectic_euler_step", step_tuple, "np.concatenate([phi_new, E_new.ravel()])"),
    "rows_no_rotation": ("contact_rows", rows_no_rotation, "the rotation R is missing"),
    "rows_rotation_transposed": ("contact_rows", rows_rotation_transposed, "it uses R^T where R belongs"),
    "rows_gamma_swapped": ("contact_rows", rows_gamma_swapped, "Gamma's blocks are swapped"),
    "rows_bracket_sign": ("contact_rows", rows_bracket_sign, "the sign of [x] is flipped"),
    "pgs_jacobi": ("projected_gauss_seidel", pgs_jacobi, "that is Jacobi's method"),
    "pgs_no_clamp": ("projected_gauss_seidel", pgs_no_clamp, "the update is not clamped"),
    "pgs_wrong_side": ("projected_gauss_seidel", pgs_wrong_side, "the clamp keeps the wrong side"),
    "pgs_undivided": ("projected_gauss_seidel", pgs_undivided, "the residual is not divided by the diagonal"),
    "pgs_q_sign": ("projected_gauss_seidel", pgs_q_sign, "the sign of q is flipped"),
}
