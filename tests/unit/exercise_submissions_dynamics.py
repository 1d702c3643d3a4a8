"""Mutants of the Part 2 and companion assignments (not a test module): see ``exercise_submissions``.

``FORWARD_DYNAMICS_MUTANTS`` (03_forward_dynamics), ``RECURSIVE_MUTANTS`` (04_recursive) and
``LAGRANGIAN_MUTANTS`` (01_lagrangian_arm): for every common mistake, a mutant of the
solution written as a student would (numpy and the library's kinematics only; a mutant
calling the library's dynamics would be refused as such), and a fragment of the message the
grader must give it.
"""

import numpy as np

from redmax_edu.jacobian import jacobian, jacobian_and_derivative
from redmax_edu.kinematics import forward_kinematics, joint_twist_adjoints
from redmax_edu.lie import ad

# --- forward dynamics (03_forward_dynamics) ------------------------------------------------------


def _inertias(model, rotational=None):
    """Block-diagonal M_m; ``rotational(i, body)`` replaces the inertia block (a mistake)."""
    M_m = np.zeros((6 * model.n, 6 * model.n))
    for i, body in enumerate(model.bodies):
        k = 6 * i
        M_m[k:k + 3, k:k + 3] = body.inertia if rotational is None else rotational(i, body)
        M_m[k + 3:k + 6, k + 3:k + 6] = body.mass * np.eye(3)
    return M_m


def mass_world_inertia(model, q):
    J, R = jacobian(model, q), forward_kinematics(model, q).E_wi[:, :3, :3]
    return J.T @ _inertias(model, lambda i, b: R[i] @ b.inertia @ R[i].T) @ J


def mass_swapped_blocks(model, q):
    J = jacobian(model, q)
    M_m = np.zeros((6 * model.n, 6 * model.n))
    for i, body in enumerate(model.bodies):
        k = 6 * i
        M_m[k:k + 3, k:k + 3] = body.mass * np.eye(3)  # the order (nu, omega)
        M_m[k + 3:k + 6, k + 3:k + 6] = body.inertia
    return J.T @ M_m @ J


def mass_upper_triangle(model, q):
    J, M_m = jacobian(model, q), _inertias(model)
    M = np.zeros((model.nq, model.nq))
    for r in range(model.nq):
        for c in range(r, model.nq):  # "M is symmetric, so half is enough" - and the other half?
            M[r, c] = J[:, r] @ M_m @ J[:, c]
    return M


def mass_J_not_transposed(model, q):
    J = jacobian(model, q)
    return J @ _inertias(model) @ J.T


def _forces(model, q, qdot, qvv=True, gravity=lambda R, g: R.T @ g, coriolis=lambda phi: ad(phi).T, JT=True):
    J, Jdot = jacobian_and_derivative(model, q, qdot)
    kin = forward_kinematics(model, q, qdot)
    M_m = _inertias(model)
    f_m = np.zeros(6 * model.n)
    for i, body in enumerate(model.bodies):
        k = slice(6 * i, 6 * i + 6)
        phi = kin.phi[i]
        f_m[k] = coriolis(phi) @ M_m[k, k] @ phi
        f_m[6 * i + 3:6 * i + 6] += body.mass * gravity(kin.E_wi[i, :3, :3], model.gravity)
    if qvv:
        f_m -= M_m @ Jdot @ qdot
    return J.T @ f_m if JT else J @ f_m


def forces_no_qvv(model, q, qdot):
    return _forces(model, q, qdot, qvv=False)


def forces_gravity_sign(model, q, qdot):
    return _forces(model, q, qdot, gravity=lambda R, g: -R.T @ g)


def forces_gravity_world(model, q, qdot):
    return _forces(model, q, qdot, gravity=lambda R, g: g)


def forces_ad_not_transposed(model, q, qdot):
    return _forces(model, q, qdot, coriolis=ad)


def forces_J_not_transposed(model, q, qdot):
    return _forces(model, q, qdot, JT=False)


def _solution_forces(model, q, qdot):
    return _forces(model, q, qdot)


def _solution_mass(model, q):
    J = jacobian(model, q)
    return J.T @ _inertias(model) @ J


def dynamics_tau_sign(model, q, qdot, tau):
    return np.linalg.solve(_solution_mass(model, q), _solution_forces(model, q, qdot) - tau)


def dynamics_times_M(model, q, qdot, tau):
    return _solution_mass(model, q) @ (_solution_forces(model, q, qdot) + tau)


def dynamics_on_forces_without_qvv(model, q, qdot, tau):
    return np.linalg.solve(_solution_mass(model, q), forces_no_qvv(model, q, qdot) + tau)


def dynamics_column(model, q, qdot, tau):
    M, f = _solution_mass(model, q), _solution_forces(model, q, qdot)
    return np.linalg.solve(M, (f + tau)[:, None])  # a column vector


FORWARD_DYNAMICS_MUTANTS = {
    # name: (function graded, mutant, a fragment of the message it must get)
    "mass_world_inertia": ("mass_matrix", mass_world_inertia,
                           "the rotational inertia is taken in world axes"),
    "mass_swapped_blocks": ("mass_matrix", mass_swapped_blocks, "the blocks of M_i are swapped"),
    "mass_upper_triangle": ("mass_matrix", mass_upper_triangle, "M is not symmetric: M["),
    "mass_J_not_transposed": ("mass_matrix", mass_J_not_transposed,
                              "it uses J where J^T belongs (J M_m J^T)"),
    "forces_no_qvv": ("reduced_forces", forces_no_qvv,
                      "the quadratic velocity vector -J^T M_m Jdot qdot is missing"),
    "forces_gravity_sign": ("reduced_forces", forces_gravity_sign, "gravity has the wrong sign"),
    "forces_gravity_world": ("reduced_forces", forces_gravity_world,
                             "off by a frame: gravity is taken in world axes"),
    "forces_ad_not_transposed": ("reduced_forces", forces_ad_not_transposed,
                                 "the Coriolis wrench uses ad(phi_i) where ad(phi_i)^T belongs"),
    "forces_J_not_transposed": ("reduced_forces", forces_J_not_transposed,
                                "J has shape (6n, nq) and M_m (6n, 6n)"),
    "dynamics_tau_sign": ("forward_dynamics", dynamics_tau_sign, "tau has the wrong sign"),
    "dynamics_times_M": ("forward_dynamics", dynamics_times_M, "it is M_r (f_r + tau): solve"),
    "dynamics_column": ("forward_dynamics", dynamics_column, "Return a flat array"),
    "dynamics_on_forces_without_qvv": ("forward_dynamics", dynamics_on_forces_without_qvv,
                                       "it solves with a wrong reduced force (the quadratic velocity"),
}


# --- recursive inverse dynamics (04_recursive) ---------------------------------------------------


def _sweep_out(model, q, qdot, qddot, order=None, bias=True, sdot=True):
    kin = forward_kinematics(model, q, qdot)
    A_ij = joint_twist_adjoints(model)
    phidot = np.zeros((model.n, 6))
    for i in (range(model.n) if order is None else order):
        p, s = model.parents[i], model.dofs[i]
        phidot[i] = A_ij[i] @ (kin.S[i] @ qddot[s] + (kin.Sdot[i] @ qdot[s] if sdot else 0))
        if p >= 0:
            phidot[i] += kin.A_ip[i] @ phidot[p]
            if bias:
                phidot[i] -= ad(A_ij[i] @ kin.S[i] @ qdot[s]) @ kin.A_ip[i] @ kin.phi[p]
    return phidot


def accelerations_leaves_first(model, q, qdot, qddot):
    return _sweep_out(model, q, qdot, qddot, order=reversed(range(model.n)))


def accelerations_no_bias(model, q, qdot, qddot):
    return _sweep_out(model, q, qdot, qddot, bias=False)


def accelerations_no_sdot(model, q, qdot, qddot):
    return _sweep_out(model, q, qdot, qddot, sdot=False)


def _sweep_in(model, q, qdot, qddot, order="leaves", carry=lambda A: A.T, children=True, coriolis=True,
              gravity=1.0, frame=True, phidot=None):
    kin = forward_kinematics(model, q, qdot)
    A_ij = joint_twist_adjoints(model)
    phidot = _sweep_out(model, q, qdot, qddot) if phidot is None else phidot
    W = np.zeros((model.n, 6))
    for i, body in enumerate(model.bodies):
        M = np.zeros((6, 6))
        M[:3, :3], M[3:, 3:] = body.inertia, body.mass * np.eye(3)
        phi, R = kin.phi[i], kin.E_wi[i, :3, :3]
        f = ad(phi).T @ M @ phi if coriolis else np.zeros(6)
        f[3:] += gravity * body.mass * R.T @ model.gravity
        W[i] = M @ phidot[i] - f
    tau = np.zeros(model.nq)
    for i in (reversed(range(model.n)) if order == "leaves" else range(model.n)):
        s, p = model.dofs[i], model.parents[i]
        tau[s] = (A_ij[i] @ kin.S[i] if frame else kin.S[i]).T @ W[i]
        if p >= 0 and children:
            W[p] += carry(kin.A_ip[i]) @ W[i]
    return tau


def torques_on_accelerations_without_bias(model, q, qdot, qddot):
    return _sweep_in(model, q, qdot, qddot, phidot=accelerations_no_bias(model, q, qdot, qddot))


def torques_root_first(model, q, qdot, qddot):
    return _sweep_in(model, q, qdot, qddot, order="root")


def torques_Ad_not_transposed(model, q, qdot, qddot):
    return _sweep_in(model, q, qdot, qddot, carry=lambda A: A)


def torques_children_forgotten(model, q, qdot, qddot):
    return _sweep_in(model, q, qdot, qddot, children=False)


def torques_no_coriolis(model, q, qdot, qddot):
    return _sweep_in(model, q, qdot, qddot, coriolis=False)


def torques_joint_frame(model, q, qdot, qddot):
    return _sweep_in(model, q, qdot, qddot, frame=False)


def torques_gravity_sign(model, q, qdot, qddot):
    return _sweep_in(model, q, qdot, qddot, gravity=-1.0)


RECURSIVE_MUTANTS = {
    "accelerations_leaves_first": ("body_accelerations", accelerations_leaves_first,
                                   "the bodies are visited in the wrong order"),
    "accelerations_no_bias": ("body_accelerations", accelerations_no_bias,
                              "the velocity-product (bias) term -ad(psi_i) Ad(E_i_p) phi_p is missing"),
    "accelerations_no_sdot": ("body_accelerations", accelerations_no_sdot,
                              "the Sdot_i qdot_i term is missing"),
    "torques_root_first": ("inverse_dynamics", torques_root_first, "the children's wrenches never reach"),
    "torques_Ad_not_transposed": ("inverse_dynamics", torques_Ad_not_transposed,
                                  "wrenches go to the parent with the transpose"),
    "torques_children_forgotten": ("inverse_dynamics", torques_children_forgotten,
                                   "the children's wrenches never reach their parents"),
    "torques_no_coriolis": ("inverse_dynamics", torques_no_coriolis,
                            "the Coriolis wrench ad(phi_i)^T M_i phi_i is missing"),
    "torques_joint_frame": ("inverse_dynamics", torques_joint_frame,
                            "off by a frame: tau_i = (Ad(E_i_j) S_i)^T W_i"),
    "torques_gravity_sign": ("inverse_dynamics", torques_gravity_sign, "gravity has the wrong sign"),
    "torques_on_accelerations_without_bias": ("inverse_dynamics", torques_on_accelerations_without_bias,
                                              "it uses wrong body accelerations (the velocity-product"),
}


# --- the Lagrangian of a two-link arm (01_lagrangian_arm) ----------------------------------------


def _arm(arm):
    return (arm[k] for k in ("m1", "m2", "l1", "r1", "r2", "I1", "I2"))


def _mass(q, arm, c2=None, parallel=1.0, hang=None, off=1.0, I2_21=True):
    m1, m2, l1, r1, r2, I1, I2 = _arm(arm)
    c2 = np.cos(q[1]) if c2 is None else c2
    L = l1 if hang is None else hang
    M12 = I2 + m2 * (parallel * r2**2 + off * L * r2 * c2)
    M21 = M12 if I2_21 else M12 - I2
    M11 = I1 + I2 + parallel * m1 * r1**2 + m2 * (L**2 + parallel * r2**2 + 2 * L * r2 * c2)
    return np.array([[M11, M12], [M21, I2 + parallel * m2 * r2**2]])


def arm_cos_q1_q2(q, arm):
    return _mass(q, arm, c2=np.cos(q[0] + q[1]))


def arm_no_parallel_axis(q, arm):
    return _mass(q, arm, parallel=0.0)


def arm_hung_at_r1(q, arm):
    return _mass(q, arm, hang=arm["r1"])


def arm_factor_two(q, arm):
    return _mass(q, arm, off=2.0)


def arm_not_symmetric(q, arm):
    return _mass(q, arm, I2_21=False)


def _h(q, arm):
    return -arm["m2"] * arm["l1"] * arm["r2"] * np.sin(q[1])


def _dM(q, arm):
    """dM/dq_i of the arm, by coordinate: only q2 enters M."""
    h = _h(q, arm)
    return [np.zeros((2, 2)), np.array([[2 * h, h], [h, 0.0]])]


def coriolis_index_order(q, qdot, arm):
    dM = _dM(q, arm)
    C = np.zeros((2, 2))
    for k in range(2):
        for j in range(2):
            # the minus sign on the derivative by q_i instead of q_k
            C[k, j] = sum(0.5 * (dM[k][i, j] + dM[j][k, i] - dM[i][k, j]) * qdot[i] for i in range(2))
    return C


def coriolis_other_factorization(q, qdot, arm):
    # Mdot - 1/2 (dM/dq_k qdot)^T: the same C qdot, not the Christoffel form
    dM = _dM(q, arm)
    Mdot = sum(dM[i] * qdot[i] for i in range(2))
    return Mdot - 0.5 * np.array([[qdot @ dM[k][:, j] for j in range(2)] for k in range(2)])


def coriolis_vector(q, qdot, arm):
    h = _h(q, arm)
    return np.array([h * (2 * qdot[0] * qdot[1] + qdot[1] ** 2), -h * qdot[0] ** 2])  # C qdot


def coriolis_transposed(q, qdot, arm):
    h = _h(q, arm)
    return np.array([[h * qdot[1], h * (qdot[0] + qdot[1])], [-h * qdot[0], 0.0]]).T


def coriolis_sign(q, qdot, arm):
    h = -_h(q, arm)  # sin q2 with the wrong sign
    return np.array([[h * qdot[1], h * (qdot[0] + qdot[1])], [-h * qdot[0], 0.0]])


LAGRANGIAN_MUTANTS = {
    "arm_cos_q1_q2": ("mass_matrix", arm_cos_q1_q2,
                      "it depends on q1 through cos(q1 + q2), so it is right at q1 = 0"),
    "arm_no_parallel_axis": ("mass_matrix", arm_no_parallel_axis,
                             "the parallel-axis terms m1 r1^2 and m2 r2^2"),
    "arm_hung_at_r1": ("mass_matrix", arm_hung_at_r1, "link 2 hangs at the end of link 1"),
    "arm_factor_two": ("mass_matrix", arm_factor_two, "only M11 has the factor 2"),
    "arm_not_symmetric": ("mass_matrix", arm_not_symmetric, "M is not symmetric: M[0, 1]"),
    "coriolis_index_order": ("coriolis_matrix", coriolis_index_order,
                             "the Christoffel symbols are in the wrong index order"),
    "coriolis_other_factorization": ("coriolis_matrix", coriolis_other_factorization,
                                     "the right product C qdot, but not the Christoffel matrix"),
    "coriolis_vector": ("coriolis_matrix", coriolis_vector, "That is a vector: perhaps C qdot"),
    "coriolis_transposed": ("coriolis_matrix", coriolis_transposed,
                            "it is the transpose of the Coriolis matrix"),
    "coriolis_sign": ("coriolis_matrix", coriolis_sign, "It has the wrong sign"),
}
