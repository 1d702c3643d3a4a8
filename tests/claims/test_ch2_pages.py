"""Claims of the Part 2 pages book/02_reduced/01, 02, 03 and 05 (§2 intro, §2.1-2.3, §2.5-2.6).

Each test repeats one quantitative sentence or check-cell verdict of a page with library calls
(no notebook is executed) and cites the page and section. The models are the pages' own: rods
of length L hinged about y at the top, centre of mass half way down.
"""

from dataclasses import replace

import numpy as np
import pytest
import scipy.linalg
from scipy.integrate import solve_ivp

from redmax_edu.checks import check_derivative, numerical_derivative
from redmax_edu.dynamics import (
    energies,
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
from redmax_edu.hyper_reduced import hyper_reduce
from redmax_edu.integrators import simulate
from redmax_edu.jacobian import jacobian, jacobian_and_derivative
from redmax_edu.joints import Revolute, SphericalExp
from redmax_edu.kinematics import body_poses, forward_kinematics
from redmax_edu.lie import ad, adjoint, exp_se3, inv_se3, unbrac
from redmax_edu.maximal.constraints import Joint
from redmax_edu.model import Body, Model, model_from_dict

# --- the pages' models --------------------------------------------------------------------------


def rod(name, parent, L=1.0, m=1.0, **joint):
    """Page 2.0/2.3/2.5's rod: hinged about y at its top end, hanging along -z."""
    top, com = np.eye(4), np.eye(4)
    if parent >= 0:
        top[2, 3] = -L
    com[2, 3] = -L / 2
    return Body(name, parent, Revolute([0, 1, 0]), top, com, m,
                np.diag([m * L**2 / 12, m * L**2 / 12, 1e-3 * m]), **joint)


def chain(n, **kw):
    return Model([rod(f"rod{i + 1}", i - 1, **kw) for i in range(n)])


def _offset_rod(name, parent, axis, joint_at, L=1.0):
    T_pj, T_jb = np.eye(4), np.eye(4)
    T_pj[:3, 3], T_jb[2, 3] = joint_at, -L / 2
    return Body(name, parent, Revolute(axis), T_pj, T_jb, 1.0, np.diag([L**2 / 12, L**2 / 12, 1e-3]))


def tree():
    """Pages 2.0 and 2.1's branching tree: a torso with two two-link arms."""
    return Model([
        _offset_rod("torso", -1, [0, 1, 0], [0, 0, 0]),
        _offset_rod("left1", 0, [1, 0, 0], [-0.3, 0, -1]),
        _offset_rod("left2", 1, [0, 1, 0], [0, 0, -1]),
        _offset_rod("right1", 0, [1, 0, 0], [0.3, 0, -1]),
        _offset_rod("right2", 3, [0, 1, 0], [0, 0, -1]),
    ])


def arm():
    """Page 2.1's arm: base about z, shoulder and elbow about y, rods of length 1."""
    def link(name, parent, axis, joint_at, along):
        T_pj, T_jb = np.eye(4), np.eye(4)
        T_pj[:3, 3] = joint_at
        T_jb[:3, 3] = 0.5 * np.asarray(along, dtype=float)
        return Body(name, parent, Revolute(axis), T_pj, T_jb, 1.0, np.diag([0.1, 0.1, 0.02]))
    return Model([link("base", -1, [0, 0, 1], [0, 0, 0], [0, 0, 1]),
                  link("upper", 0, [0, 1, 0], [0, 0, 1], [1, 0, 0]),
                  link("fore", 1, [0, 1, 0], [1, 0, 0], [1, 0, 0])])


def hinge_rows(model, q):
    """The Part 1 hinge rows G of the same mechanism: each joint frame tilted so z is its axis."""
    kin = forward_kinematics(model, q)
    G = []
    for i, body in enumerate(model.bodies):
        a = body.joint.axis
        tilt = np.eye(4)
        if not np.allclose(a, [0, 0, 1]):
            w = np.cross([0, 0, 1], a)
            tilt = exp_se3(np.r_[w / np.linalg.norm(w) * np.arccos(a[2]), 0, 0, 0])
        joint = Joint.at("revolute", i, model.parents[i], kin.E_wj[i] @ tilt, kin.E_wi)
        G.append(joint.jacobian(kin.E_wi))
    return np.vstack(G)


def rk45(model, q0, v0, t_end, samples=201, tol=1e-8):
    """The pages' RK45 runs: integrators.simulate at rtol = atol = tol, evenly sampled."""
    tr = simulate(model, q0, v0, (0.0, t_end), rtol=tol, atol=tol, sample_dt=t_end / (samples - 1))
    return tr.t, tr.q, tr.qdot


def energy(model, qs, vs):
    return np.array([sum(energies(model, q, v)) for q, v in zip(qs, vs, strict=True)])


# --- page 2.0: reduced coordinates ---------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 3, 6])
def test_p2_0_hinge_chain_has_6n_maximal_5n_constraints_and_n_free_directions(n, rng):
    """Page 2.0, 'Counting': 6n maximal coordinates, 5n hinge rows of rank 5n, n = nq free."""
    model = chain(n)
    G = hinge_rows(model, rng.uniform(-1, 1, n))
    assert G.shape == (5 * n, 6 * n)
    assert G.shape[1] - np.linalg.matrix_rank(G) == model.nq == n


def test_p2_0_revolute_Q_is_the_rotation_and_the_exponential_of_S_q(rng):
    """Page 2.0, Eq. (2.3)-(2.4): Q(q) is the rotation about z and equals exp([S q])."""
    hinge = Revolute([0, 0, 1])
    for q in [*rng.uniform(-np.pi, np.pi, 5), 0.0, np.pi]:
        c, s = np.cos(q), np.sin(q)
        R = np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])
        S = hinge.S([q])[:, 0]
        np.testing.assert_allclose(hinge.Q([q]), R, atol=1e-15)
        np.testing.assert_allclose(hinge.Q([q]), exp_se3(S * q), atol=1e-14)


def test_p2_0_forward_kinematics_is_the_chained_product(rng):
    """Page 2.0, Eq. (2.5) and Eq. (2.23): world frames by chaining J-bar_i Q_i(q_i), in a chain
    (hand product from the root) and in a tree (each joint from its parent's frame)."""
    model = chain(3)
    q = rng.uniform(-1, 1, 3)
    E, by_hand = np.eye(4), []
    for i, body in enumerate(model.bodies):
        E = E @ body.T_parent_joint @ body.joint.Q(q[model.dofs[i]])
        by_hand.append(E @ body.T_joint_body)
    np.testing.assert_allclose(forward_kinematics(model, q).E_wi, by_hand, atol=1e-14)
    t = tree()
    qt = rng.uniform(-0.8, 0.8, t.nq)
    kin = forward_kinematics(t, qt)
    for i, p in enumerate(t.parents):
        parent = np.eye(4) if p < 0 else kin.E_wj[p]
        np.testing.assert_allclose(kin.E_wj[i], parent @ t.T_parent_joint[i]
                                   @ t.bodies[i].joint.Q(qt[t.dofs[i]]), atol=1e-14)


def test_p2_0_scene_format_round_trip_and_a_parent_listed_later_is_refused():
    """Page 2.0: the tree survives to_dict/model_from_dict; a child before its parent is a
    ValueError naming the body."""
    spec = tree().to_dict()
    assert model_from_dict(spec).to_dict() == spec
    spec["bodies"][2]["parent"] = 4
    with pytest.raises(ValueError, match="left2"):
        model_from_dict(spec)


# --- page 2.1-2.2: the Jacobian -----------------------------------------------------------------


def test_p2_1_J_qdot_equals_body_twists_from_differenced_poses(rng):
    """Page 2.1, Eq. (2.1): J qdot = E_i^-1 dE_i/dt from central differences, to 1e-8."""
    model, q = arm(), np.array([0.5, -0.4, 0.8])
    qdot = rng.standard_normal(3)
    Edot = numerical_derivative(lambda t: body_poses(model, q + t[0] * qdot), [0.0])
    E = body_poses(model, q)
    phi = np.array([unbrac(inv_se3(E[i]) @ Edot[i, :, :, 0]) for i in range(3)])
    assert np.abs(jacobian(model, q) @ qdot - phi.ravel()).max() < 1e-8


@pytest.mark.parametrize("make", [arm, lambda: chain(5), tree])
def test_p2_1_columns_of_J_span_exactly_the_motions_the_part1_hinges_allow(make, rng):
    """Page 2.1: G J = 0 and rank G + rank J = 6n."""
    model = make()
    q = rng.uniform(-1, 1, model.nq)
    J, G = jacobian(model, q), hinge_rows(model, q)
    assert np.abs(G @ J).max() < 1e-12
    assert np.linalg.matrix_rank(G) + np.linalg.matrix_rank(J) == 6 * model.n


def test_p2_1_each_column_is_one_world_twist_for_all_descendants(rng):
    """Page 2.1, 'What a column means': Ad(E_i) J_ik is the same for every descendant i of joint
    k, and J_ik = 0 for the other bodies."""
    for model in (arm(), tree()):
        q = rng.uniform(-1, 1, model.nq)
        J, E = jacobian(model, q), body_poses(model, q)
        for k in range(model.nq):
            world = [adjoint(E[i]) @ J[6 * i:6 * i + 6, k] for i in range(model.n) if model.ancestors[i, k]]
            for w in world:
                np.testing.assert_allclose(w, world[0], atol=1e-12)
            for i in range(model.n):
                if not model.ancestors[i, k]:
                    assert not J[6 * i:6 * i + 6, k].any()


@pytest.mark.parametrize("make", [lambda: chain(5), tree])
def test_p2_1_nonzero_blocks_of_J_are_model_ancestors(make, rng):
    """Page 2.1, 'Sparsity': the block pattern of J is model.ancestors (chain and tree)."""
    model = make()
    J = jacobian(model, rng.uniform(-1, 1, model.nq))
    blocks = (np.abs(J) > 1e-12).reshape(model.n, 6, model.nq).any(axis=1)
    np.testing.assert_array_equal(blocks, model.ancestors)


@pytest.mark.parametrize("make", [arm, lambda: chain(5), tree])
def test_p2_2_jdot_matches_central_differences_of_J_along_qdot(make, rng):
    """Page 2.2, Eq. (2.16)-(2.18), Alg. 2: Jdot = d/dt J(q + t qdot) (check_derivative)."""
    model = make()
    q, qdot = rng.uniform(-1, 1, model.nq), rng.standard_normal(model.nq)
    Jdot = jacobian_and_derivative(model, q, qdot)[1]
    assert check_derivative(lambda t: jacobian(model, q + t[0] * qdot), [0.0], Jdot[..., None]).ok


def test_p2_2_dropping_the_minus_ad_phi_i_term_of_eq_2_18_is_caught(rng):
    """Page 2.2: Jdot without -ad(phi_i) A_ip 'matches central differences: False'."""
    model, q = arm(), np.array([0.5, -0.4, 0.8])
    qdot = rng.standard_normal(3)
    kin = forward_kinematics(model, q)
    J = jacobian(model, q).reshape(3, 6, 3)

    def jdot(drop):
        Jdot = np.zeros_like(J)
        for i in range(1, 3):
            p = i - 1
            A_ip = adjoint(inv_se3(kin.E_wi[i]) @ kin.E_wi[p])
            A_ip_dot = A_ip @ ad(J[p] @ qdot) - (0 if drop else ad(J[i] @ qdot) @ A_ip)
            Jdot[i] = A_ip_dot @ J[p] + A_ip @ Jdot[p]
        return Jdot.reshape(18, 3, 1)

    def along(t):
        return jacobian(model, q + t[0] * qdot)
    assert check_derivative(along, [0.0], jdot(drop=False)).ok  # the construction is right
    assert not check_derivative(along, [0.0], jdot(drop=True)).ok


# --- page 2.3: RedMax dynamics ------------------------------------------------------------------


def test_p2_3_mass_matrix_qvv_forward_and_inverse_dynamics_assemble_eq_2_19(rng):
    """Page 2.3: M_r = J^T M_m J, QVV = -J^T M_m Jdot qdot, M_r SPD, M_r qddot = f_r, and the
    inverse dynamics of that qddot is zero torque."""
    model = chain(3)
    q, qdot = rng.uniform(-1, 1, 3), rng.standard_normal(3)
    J, Jdot = jacobian_and_derivative(model, q, qdot)
    M_m = scipy.linalg.block_diag(*model.spatial_inertias)
    M_r = J.T @ M_m @ J
    np.testing.assert_allclose(mass_matrix(model, q), M_r, atol=1e-12)
    qvv = -J.T @ M_m @ Jdot @ qdot
    np.testing.assert_allclose(quadratic_velocity_vector(model, q, qdot), qvv, atol=1e-12)
    assert np.allclose(M_r, M_r.T) and np.linalg.eigvalsh(M_r).min() > 0
    qddot = forward_dynamics(model, q, qdot)
    np.testing.assert_allclose(M_r @ qddot, reduced_forces(model, q, qdot), atol=1e-10)
    np.testing.assert_allclose(inverse_dynamics(model, q, qdot, qddot), 0, atol=1e-10)


def test_p2_3_eq_2_19_equals_lagranges_equations(rng):
    """Page 2.3, 'A check from Lagrange': M_r = d2T/dqdot2 to 1e-8 (steps of 1e-3: T is
    quadratic in qdot, so only round-off remains) and f_r = -Mdot qdot + dT/dq - dV/dq to
    1e-7 (central-difference truncation at h = 1e-6 plus round-off)."""
    model = chain(3)
    q, qdot = rng.uniform(-1, 1, 3), rng.standard_normal(3)
    hess = numerical_derivative(
        lambda v: numerical_derivative(lambda w: kinetic_energy(model, q, w), v, h=1e-3), qdot, h=1e-3)
    assert np.abs(hess - mass_matrix(model, q)).max() < 1e-8
    Mdot_qdot = numerical_derivative(lambda t: mass_matrix(model, q + t[0] * qdot), [0.0])[..., 0] @ qdot
    dT = numerical_derivative(lambda x: kinetic_energy(model, x, qdot), q)
    dV = numerical_derivative(lambda x: potential_energy(model, x), q)
    assert np.abs(-Mdot_qdot + dT - dV - reduced_forces(model, q, qdot)).max() < 1e-7


def test_p2_3_velocity_terms_are_the_coriolis_wrenches_plus_the_quadratic_velocity_vector(rng):
    """Page 2.3, 'Where the velocity terms come from': with phi = J qdot, the velocity part of
    f_r is J^T ad(phi)^T M phi - J^T M Jdot qdot, Jdot is linear in qdot, the terms are
    quadratic, and they equal Lagrange's -Mdot_r qdot + dT/dq."""
    model = chain(3)
    q, qdot = rng.uniform(-1, 1, 3), rng.standard_normal(3)
    J, Jdot = jacobian_and_derivative(model, q, qdot)
    phi = (J @ qdot).reshape(3, 6)
    coriolis = np.concatenate([ad(p).T @ M @ p for p, M in zip(phi, model.spatial_inertias, strict=True)])
    terms = J.T @ coriolis - J.T @ scipy.linalg.block_diag(*model.spatial_inertias) @ Jdot @ qdot
    rest = reduced_forces(model, q, np.zeros(3))
    assert np.allclose(reduced_forces(model, q, qdot) - rest, terms)
    assert np.allclose(jacobian_and_derivative(model, q, 2 * qdot)[1], 2 * Jdot)
    assert np.allclose(reduced_forces(model, q, 2 * qdot) - rest, 4 * terms)
    Mdot_qdot = numerical_derivative(lambda t: mass_matrix(model, q + t[0] * qdot), [0.0])[..., 0] @ qdot
    dT_dq = numerical_derivative(lambda x: kinetic_energy(model, x, qdot), q)
    assert np.abs(terms - (-Mdot_qdot + dT_dq)).max() < 1e-7
    assert np.abs(terms).max() > 0.1  # not trivially zero


def test_p2_3_triple_pendulum_drops_44_joules_from_horizontal():
    """Page 2.3: 'the three rods turn about 44 J of potential energy into motion'."""
    model = chain(3)
    drop = potential_energy(model, [np.pi / 2, 0, 0]) - potential_energy(model, [0, 0, 0])
    assert drop == pytest.approx(4.5 * 9.81) and round(drop) == 44


def _euler_221(model, y0, h, t_end, stride):
    q, v = y0[:model.nq].copy(), y0[model.nq:].copy()
    E0, worst = sum(energies(model, q, v)), 0.0
    for k in range(int(round(t_end / h))):
        v = v + h * forward_dynamics(model, q, v)
        q = q + h * v
        if (k + 1) % stride == 0:
            worst = max(worst, abs(sum(energies(model, q, v)) - E0))
    return worst


def test_p2_3_eq_2_21_by_hand_is_simulate_euler_for_a_model_without_springs():
    """Page 2.3: 'Eq. (2.21) by hand = simulate(method='euler'): True' (triple pendulum from
    horizontal, h = 0.01, 5 s): linearly implicit Euler without springs or dampers is Eq. (2.21)."""
    model = chain(3)
    q, v = np.array([np.pi / 2, 0, 0]), np.zeros(3)
    qs, vs = [q], [v]
    for _ in range(500):
        v = v + 0.01 * forward_dynamics(model, q, v)
        q = q + 0.01 * v
        qs.append(q)
        vs.append(v)
    lib = simulate(model, [np.pi / 2, 0, 0], np.zeros(3), (0.0, 5.0), method="euler", h=0.01)
    assert np.allclose(qs, lib.q) and np.allclose(vs, lib.qdot)


def test_p2_3_rk45_keeps_energy_and_euler_error_is_first_order():
    """Page 2.3: over 5 s from horizontal, RK45 (simulate, rtol = atol = 1e-10) keeps the energy
    to 1e-6 J; Euler (simulate(method='euler'), Eq. 2.21 here) with a 10x smaller step has a 5 to
    20x smaller worst energy error (sampled every 0.02 s, as plotted); the hand loop agrees."""
    model = chain(3)
    y0 = np.array([np.pi / 2, 0, 0, 0, 0, 0])
    t, qs, vs = rk45(model, y0[:3], y0[3:], 5.0, samples=251, tol=1e-10)
    E = energy(model, qs, vs)
    assert np.abs(E - E[0]).max() < 1e-6
    worst = {}
    for h in (1e-2, 1e-3):
        tr = simulate(model, y0[:3], y0[3:], (0.0, 5.0), method="euler", h=h, sample_dt=0.02)
        worst[h] = np.abs(tr.H - tr.H[0]).max()
    assert 5 < worst[1e-2] / worst[1e-3] < 20
    big, small = _euler_221(model, y0, 1e-2, 5.0, 2), _euler_221(model, y0, 1e-3, 5.0, 20)
    assert 5 < big / small < 20


def side_by_side():
    """Page 2.3's two double pendulums in one model, the second 2.5 m to the right."""
    double = chain(2)
    shift = np.eye(4)
    shift[0, 3] = 2.5
    return Model(list(double.bodies) + [replace(double.bodies[0], name="rod1'", T_parent_joint=shift),
                                        replace(double.bodies[1], name="rod2'", parent=2)])


def _twin_gap(q0, eps=1e-6, t_end=8.0):
    """Both releases as one model in one simulate call (rtol = atol = 1e-9, samples every 0.02 s)."""
    start = np.array([q0[0], q0[1], q0[0] + eps, q0[1]])
    tr = simulate(side_by_side(), start, np.zeros(4), (0.0, t_end), rtol=1e-9, atol=1e-9, sample_dt=0.02)
    return tr.t, np.abs(tr.q[:, :2] - tr.q[:, 2:]).max(axis=1)


def test_p2_3_side_by_side_copies_move_independently(rng):
    """Page 2.3: the second pendulum of the side-by-side model is an independent copy: the
    accelerations of each pair equal those of the double pendulum alone."""
    q, qdot = rng.uniform(-2, 2, 4), rng.standard_normal(4)
    qddot = forward_dynamics(side_by_side(), q, qdot)
    np.testing.assert_allclose(qddot[:2], forward_dynamics(chain(2), q[:2], qdot[:2]), atol=1e-12)
    np.testing.assert_allclose(qddot[2:], forward_dynamics(chain(2), q[2:], qdot[2:]), atol=1e-12)


def test_p2_3_double_pendulum_small_swings_stay_together_large_swings_separate():
    """Page 2.3, 'chaotic': releases 1e-6 rad apart stay within 2e-6 rad at (0.3, 0.3); at
    (2.0, 0.5) they end up more than 0.1 rad apart within 8 s, the gap growing by roughly a
    factor of ten per second (fitted slope of log10 gap over 1-7 s between 0.5 and 1.5)."""
    _, small = _twin_gap([0.3, 0.3])
    assert small.max() < 2e-6
    t, large = _twin_gap([2.0, 0.5])
    assert large.max() > 0.1
    window = (t >= 1) & (t <= 7)
    slope = np.polyfit(t[window], np.log10(large[window]), 1)[0]
    assert 0.5 < slope < 1.5
    # 'between six and seven seconds the difference reaches half a radian', 'part ways after
    # about six and a half seconds' (the gap first passes 0.1 rad between 6 and 7 s)
    assert 6 < t[np.argmax(large > 0.5)] < 7 and 6 < t[np.argmax(large > 0.1)] < 7


def test_p2_3_single_pendulum_exercise():
    """Page 2.3 exercise: one rod, (1/3) m L^2 qddot = -(1/2) m g L sin q."""
    for q in (0.3, 1.2, -2.0):
        assert forward_dynamics(chain(1), [q], [0.0])[0] == pytest.approx(-1.5 * 9.81 * np.sin(q))


# --- page 2.5-2.6: stiffness, damping, hyper-reduction ------------------------------------------


def test_p2_5_joint_forces_enter_the_reduced_force(rng):
    """Page 2.5, Eq. (2.79)-(2.81): joint_forces = -K (q - q_rest) - D qdot, added to f_r."""
    springy, bare = chain(3, stiffness=20.0, damping=0.5, q_rest=0.2), chain(3)
    q, qdot = rng.uniform(-1, 1, 3), rng.standard_normal(3)
    tau = -20.0 * (q - 0.2) - 0.5 * qdot
    np.testing.assert_allclose(joint_forces(springy, q, qdot), tau, atol=1e-14)
    np.testing.assert_allclose(reduced_forces(springy, q, qdot), reduced_forces(bare, q, qdot) + tau,
                               atol=1e-12)


def test_p2_5_linearly_implicit_euler_step_is_eq_2_84_by_hand():
    """Page 2.5: one rod, no gravity: (M + hD + h^2 K) v1 = M v0 - h K q0, q1 = q0 + h v1."""
    K, D, h = 50.0, 2.0, 0.05
    one = Model([rod("rod", -1, stiffness=K, damping=D)], gravity=[0, 0, 0])
    q0, v0 = np.array([0.7]), np.array([-1.3])
    v1 = (v0 / 3 - h * K * q0) / (1 / 3 + h * D + h * h * K)
    q1, v1_lib = linearly_implicit_euler_step(one, q0, v0, h)
    np.testing.assert_allclose(v1_lib, v1, rtol=1e-12)
    np.testing.assert_allclose(q1, q0 + h * v1, rtol=1e-12)


def _lie(model, q0, v0, h, t_end):
    tr = simulate(model, q0, v0, (0.0, t_end), method="euler", h=h)
    return tr.q, tr.qdot


def test_p2_5_linearly_implicit_euler_damps_numerically():
    """Page 2.5, 'Numerical damping' (K = 20, 4 s, h = 0.01): RK45 without dampers keeps energy
    to 1e-5 J; linearly implicit Euler loses more than 5 J; with dampers D = 0.5 it still ends
    lower than RK45."""
    q0, v0 = np.array([1.0, -0.5, 0.5]), np.zeros(3)
    free = chain(3, stiffness=20.0)
    _, qs, vs = rk45(free, q0, v0, 4.0)
    E = energy(free, qs, vs)
    assert np.abs(E - E[0]).max() < 1e-5
    E_lie = energy(free, *_lie(free, q0, v0, 0.01, 4.0))
    assert E_lie[0] - E_lie[-1] > 5
    damped = chain(3, stiffness=20.0, damping=0.5)
    _, qs, vs = rk45(damped, q0, v0, 4.0)
    assert energy(damped, *_lie(damped, q0, v0, 0.01, 4.0))[-1] < energy(damped, qs, vs)[-1]


def test_p2_5_linearly_implicit_euler_feeds_a_tumbling_top():
    """Page 2.5, 'Not always a loss': a free body (inertia diag(1, 2, 3), no gravity, no spring)
    spun at 3 rad/s about its intermediate axis gains energy at every step of linearly implicit
    Euler, more than 15% in 4 s at h = 0.01, and about half as much (0.4-0.6 of it) at h = 0.005;
    RK45 keeps it (to 1e-6 relative), so the gain is the integrator's."""
    top = Model([Body("top", -1, SphericalExp(), np.eye(4), np.eye(4), 1.0, np.diag([1.0, 2.0, 3.0]))],
                gravity=[0, 0, 0])
    spin, gain = np.array([0.1, 3.0, 0.1]), {}
    for h in (0.01, 0.005):
        E = energy(top, *_lie(top, np.zeros(3), spin, h, 4.0))
        assert np.all(np.diff(E) > 0)
        gain[h] = E[-1] / E[0] - 1
    assert gain[0.01] > 0.15 and 0.4 < gain[0.005] / gain[0.01] < 0.6
    _, qs, vs = rk45(top, np.zeros(3), spin, 4.0)
    E = energy(top, qs, vs)
    assert np.abs(E / E[0] - 1).max() < 1e-6


def test_p2_5_stiff_chain_stability_limits():
    """Page 2.5, 'Stiff springs' (K = 2000): 2/omega_max ~ 0.0087 s; Eq. (2.21) Euler stays below
    1 rad for steps under it and passes 1e3 above it; explicit Euler passes 1e3 at every step;
    linearly implicit Euler (simulate(method='euler')) never exceeds the initial 0.1 rad, even
    at 0.05 s, 'six times the limit' (5 to 6.5 times)."""
    stiff = chain(3, stiffness=2000.0)
    omega = np.sqrt(scipy.linalg.eigh(np.diag(stiff.stiffness), mass_matrix(stiff, np.zeros(3)),
                                      eigvals_only=True))
    h_limit = 2.0 / omega.max()
    assert round(h_limit, 4) == 0.0087
    assert 5 < 0.05 / h_limit < 6.5

    def explicit(model, q, v, h):
        return q + h * v, v + h * forward_dynamics(model, q, v)

    def euler_221(model, q, v, h):
        v = v + h * forward_dynamics(model, q, v)
        return q + h * v, v

    def peak(step, h):
        q, v, largest = np.array([0.1, -0.05, 0.05]), np.zeros(3), 0.0
        for _ in range(int(round(1.0 / h))):
            q, v = step(stiff, q, v, h)
            largest = max(largest, np.abs(q).max())
            if largest > 1e3:
                break
        return largest

    for h in (0.002, 0.004, 0.008, 0.0125, 0.02, 0.05):
        assert peak(explicit, h) > 1e3
        assert (peak(euler_221, h) < 1) if h < h_limit else (peak(euler_221, h) > 1e3)
        q_lie = simulate(stiff, [0.1, -0.05, 0.05], np.zeros(3), (0.0, 1.0), method="euler", h=h).q
        assert np.abs(q_lie).max() <= 0.1 + 1e-12


def test_p2_5_exercise_lie_never_increases_a_linear_springs_energy(rng):
    """Page 2.5 exercise: one hinge spring, no gravity or damping: energy never increases."""
    one = Model([rod("rod", -1, stiffness=50.0)], gravity=[0, 0, 0])
    for h in (0.001, 0.05, 0.5):
        qs, vs = _lie(one, rng.uniform(-1, 1, 1), rng.standard_normal(1), h, 50 * h)
        assert np.all(np.diff(energy(one, qs, vs)) <= 1e-12)


def test_p2_5_the_damper_is_taken_at_the_new_velocity_so_the_step_loses_its_power_exactly(rng):
    """Page 2.5, Eq. (2.83)-(2.84): the damper torque is evaluated at the new velocity and drops
    out of the right-hand side. For one rod with a joint spring and damper and no gravity (the
    page's hand check) the step then loses, to round-off, the damper's power at the new velocity
    over the step and what implicit Euler takes from the spring and the inertia:
    E1 - E0 = -h D v1^2 - M (v1 - v0)^2 / 2 - K (q1 - q0)^2 / 2. A damper taken at the old
    velocity, or of the wrong sign in the matrix, misses this by about h D v |v1 - v0|."""
    K, D, M = 50.0, 2.0, 1.0 / 3.0
    one = Model([rod("rod", -1, stiffness=K, damping=D, q_rest=0.1)], gravity=[0, 0, 0])
    for h in (0.001, 0.05, 0.5):
        q0, v0 = rng.uniform(-1, 1, 1), rng.standard_normal(1)
        q1, v1 = linearly_implicit_euler_step(one, q0, v0, h)
        E0, E1 = sum(energies(one, q0, v0)), sum(energies(one, q1, v1))
        loss = h * D * v1[0] ** 2 + M * (v1[0] - v0[0]) ** 2 / 2 + K * (q1[0] - q0[0]) ** 2 / 2
        assert E1 - E0 == pytest.approx(-loss, rel=1e-10, abs=1e-13 * E0)


def test_p2_6_hyper_reduced_equations_are_the_reduced_ones_projected(rng):
    """Page 2.6, Eq. (2.88)-(2.90): with constant J_rR = ones, M_R = J_rR^T M_r J_rR and
    f_R = J_rR^T f_r."""
    tail = chain(6, L=0.5, m=0.5)
    J_rR = np.ones((6, 1))
    theta, theta_dot = rng.uniform(-1, 1, 1), rng.standard_normal(1)
    q_r, v_r = J_rR @ theta, J_rR @ theta_dot
    J_mr, Jdot_mr = jacobian_and_derivative(tail, q_r, v_r)
    J_mR, Jdot_mR = hyper_reduce(J_mr, Jdot_mr, J_rR)
    M_m = scipy.linalg.block_diag(*tail.spatial_inertias)
    f_m = maximal_forces(tail, forward_kinematics(tail, q_r).E_wi, (J_mr @ v_r).reshape(6, 6))
    np.testing.assert_allclose(J_mR.T @ M_m @ J_mR, J_rR.T @ mass_matrix(tail, q_r) @ J_rR, atol=1e-12)
    np.testing.assert_allclose(J_mR.T @ (f_m - M_m @ Jdot_mR @ theta_dot),
                               J_rR.T @ reduced_forces(tail, q_r, v_r), atol=1e-10)


def test_p2_6_hyper_reduced_tail_keeps_energy_and_the_free_chain_does_not_keep_equal_angles():
    """Page 2.6: the one-coordinate tail (RK45, 1e-9) keeps its energy to 1e-6 J over 4 s; the
    free six-link chain from the same arc spreads its angles by more than 0.5 rad."""
    tail = chain(6, L=0.5, m=0.5)
    J_rR = np.ones((6, 1))

    def f(t, y):
        q_r, v_r = J_rR @ y[:1], J_rR @ y[1:]
        M_R = J_rR.T @ mass_matrix(tail, q_r) @ J_rR
        return np.concatenate([y[1:], np.linalg.solve(M_R, J_rR.T @ reduced_forces(tail, q_r, v_r))])
    sol = solve_ivp(f, (0.0, 4.0), [0.5, 0.0], t_eval=np.linspace(0, 4, 201), rtol=1e-9, atol=1e-9)
    E = energy(tail, sol.y[0][:, None] * np.ones(6), sol.y[1][:, None] * np.ones(6))
    assert np.abs(E - E[0]).max() < 1e-6
    _, q_full, _ = rk45(tail, np.full(6, 0.5), np.zeros(6), 4.0, tol=1e-7)
    assert np.ptp(q_full, axis=1).max() > 0.5
