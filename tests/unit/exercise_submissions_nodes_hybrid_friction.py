"""Mutants of the assignment 07_nodes_hybrid_friction (not a test module): see ``exercise_submissions``.

``NODES_HYBRID_FRICTION_MUTANTS``: for every common mistake of ``spring_stiffness`` (§2.7),
``hybrid_dynamics`` (§2.9) and ``friction_impulse`` (§2.11), a mutant of the solution written as
a student would (numpy, and the allowed ``mass_matrix`` and ``reduced_forces``), and a fragment
of the message the grader must give it.
"""

import numpy as np

from redmax_edu.dynamics import mass_matrix, reduced_forces

# --- spring_stiffness -----------------------------------------------------------------------------


def _stiffness(x, rest_lengths, stiffness, block, off=1.0):
    """The chain's K with the per-segment block ``block(K, L, l, u)`` (the mistakes change it)."""
    k = len(x)
    K = np.zeros((3 * k, 3 * k))
    for s, L in enumerate(rest_lengths):
        d = x[s + 1] - x[s]
        l = np.linalg.norm(d)
        B = block(stiffness, L, l, d / l)
        a, b = slice(3 * s, 3 * s + 3), slice(3 * s + 3, 3 * s + 6)
        K[a, a] -= B
        K[b, b] -= B
        K[a, b] += off * B
        K[b, a] += off * B
    return K


def stiffness_axial_only(x, rest_lengths, stiffness):
    return _stiffness(x, rest_lengths, stiffness, lambda K, L, l, u: K / L**2 * np.outer(u, u))


def stiffness_projectors_exchanged(x, rest_lengths, stiffness):
    def block(K, L, l, u):
        t = K * (l - L) / L**2
        return K / L**2 * (np.eye(3) - np.outer(u, u)) + t / l * np.outer(u, u)
    return _stiffness(x, rest_lengths, stiffness, block)


def stiffness_no_rest_length(x, rest_lengths, stiffness):
    def block(K, L, l, u):
        t = K * l / L**2  # strain l / L: a spring that pulls even at its rest length
        return K / L**2 * np.outer(u, u) + t / l * (np.eye(3) - np.outer(u, u))
    return _stiffness(x, rest_lengths, stiffness, block)


def stiffness_same_sign_blocks(x, rest_lengths, stiffness):
    def block(K, L, l, u):
        t = K * (l - L) / L**2
        return K / L**2 * np.outer(u, u) + t / l * (np.eye(3) - np.outer(u, u))
    return _stiffness(x, rest_lengths, stiffness, block, off=-1.0)


def stiffness_sign(x, rest_lengths, stiffness):
    def block(K, L, l, u):
        t = K * (l - L) / L**2
        return -(K / L**2 * np.outer(u, u) + t / l * (np.eye(3) - np.outer(u, u)))
    return _stiffness(x, rest_lengths, stiffness, block)


# --- hybrid_dynamics ------------------------------------------------------------------------------


def _kkt(model, q, qdot, body, qddot_p, sign=-1.0):
    M, f = mass_matrix(model, q), reduced_forces(model, q, qdot)
    n = model.nq
    G = np.eye(n)[model.dofs[body]]
    p = len(G)
    K = np.block([[M, sign * G.T], [G, np.zeros((p, p))]])
    x = np.linalg.solve(K, np.concatenate([f, qddot_p]))
    return x[:n], G.T @ x[n:]


def hybrid_as_force(model, q, qdot, body, qddot_p):
    M, f = mass_matrix(model, q), reduced_forces(model, q, qdot)
    tau = np.zeros(model.nq)
    tau[model.dofs[body]] = qddot_p  # "prescribe" by pushing with it
    return np.concatenate([np.linalg.solve(M, f + tau), tau])


def hybrid_writeup_sign(model, q, qdot, body, qddot_p):
    qddot, tau = _kkt(model, q, qdot, body, qddot_p, sign=+1.0)  # [[M, G^T], [G, 0]]
    return np.concatenate([qddot, tau])


def hybrid_no_torque(model, q, qdot, body, qddot_p):
    qddot, _ = _kkt(model, q, qdot, body, qddot_p)
    return np.concatenate([qddot, np.zeros(model.nq)])


def hybrid_overwritten(model, q, qdot, body, qddot_p):
    M, f = mass_matrix(model, q), reduced_forces(model, q, qdot)
    qddot = np.linalg.solve(M, f)
    qddot[model.dofs[body]] = qddot_p
    return np.concatenate([qddot, M @ qddot - f])


# --- friction_impulse -----------------------------------------------------------------------------


def friction_bound_without_mu(M, t, v, alpha, mu):
    W = t @ np.linalg.solve(M, t)
    return np.clip(-(t @ v) / W, -alpha, alpha)


def friction_accelerates(M, t, v, alpha, mu):
    W = t @ np.linalg.solve(M, t)
    return np.clip((t @ v) / W, -mu * alpha, mu * alpha)


def friction_mass_not_inverse(M, t, v, alpha, mu):
    W = t @ M @ t
    return np.clip(-(t @ v) / W, -mu * alpha, mu * alpha)


def friction_one_sided(M, t, v, alpha, mu):
    W = t @ np.linalg.solve(M, t)
    return np.clip(-(t @ v) / W, 0.0, mu * alpha)


def friction_unbounded(M, t, v, alpha, mu):
    return -(t @ v) / (t @ np.linalg.solve(M, t))


NODES_HYBRID_FRICTION_MUTANTS = {
    "stiffness_axial_only": ("spring_stiffness", stiffness_axial_only,
                             "the transverse term (t / l)(I - u u^T) is missing"),
    "stiffness_projectors_exchanged": ("spring_stiffness", stiffness_projectors_exchanged,
                                       "u u^T and I - u u^T are exchanged"),
    "stiffness_no_rest_length": ("spring_stiffness", stiffness_no_rest_length, "the rest length is ignored"),
    "stiffness_same_sign_blocks": ("spring_stiffness", stiffness_same_sign_blocks,
                                   "have the sign of the diagonal blocks"),
    "stiffness_sign": ("spring_stiffness", stiffness_sign, "it is minus the stiffness matrix"),
    "hybrid_as_force": ("hybrid_dynamics", hybrid_as_force,
                        "the prescribed accelerations are applied as a joint force"),
    "hybrid_writeup_sign": ("hybrid_dynamics", hybrid_writeup_sign, "the joint force has the wrong sign"),
    "hybrid_no_torque": ("hybrid_dynamics", hybrid_no_torque, "the joint force is missing (zero)"),
    "hybrid_overwritten": ("hybrid_dynamics", hybrid_overwritten,
                           "the free joints accelerate as if nothing drove the prescribed one"),
    "friction_bound_without_mu": ("friction_impulse", friction_bound_without_mu,
                                  "the bound is not scaled by mu"),
    "friction_accelerates": ("friction_impulse", friction_accelerates,
                             "the friction accelerates the sliding"),
    "friction_mass_not_inverse": ("friction_impulse", friction_mass_not_inverse,
                                  "it uses M where M^-1 belongs"),
    "friction_one_sided": ("friction_impulse", friction_one_sided,
                           "the impulse is clipped to [0, mu alpha]"),
    "friction_unbounded": ("friction_impulse", friction_unbounded, "the bound is missing"),
}
