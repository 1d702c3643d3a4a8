"""Claims of page 2.7 (book/02_reduced/07_deformable): mass-spring chains in RedMax (§2.7).

Each test repeats one quantitative sentence or check-cell verdict of the page with library
calls (no notebook is executed). The page's models: a free four-node chain (section "Nodes and
springs"), the demo model (the triple pendulum of §2.3 with a cable from a world point to the
third rod's tip and a tail hanging from the first rod) and the reference scene 12.

Tolerances: ``check_derivative`` keeps the best step of a sweep, so 1e-6 (its default) accepts
the ~1e-10 of central differences on these smooth maps and refuses an O(1) error.
"""

from functools import cache

import numpy as np
import pytest
from scipy.linalg import block_diag

from redmax_edu import scenes
from redmax_edu.checks import check_derivative, numerical_derivative
from redmax_edu.deformable import DeformableSpring
from redmax_edu.dynamics import forward_dynamics, mass_matrix, maximal_forces, reduced_forces
from redmax_edu.jacobian import jacobian_and_derivative, node_kinematics
from redmax_edu.joints import Revolute
from redmax_edu.kinematics import forward_kinematics
from redmax_edu.lie import brac, gamma
from redmax_edu.maximal.forces import Attachment
from redmax_edu.model import Body, Model

# --- the page's models and helpers ---------------------------------------------------------------

REST = np.array([[0.0, 0, 0], [0.3, 0, 0], [0.6, 0, 0], [0.9, 0, 0]])
TIP = np.array([0.0, 0, -0.5])


def free_chain():
    """The page's free four-node chain: K = 5 J, 0.4 kg, damping 0.2."""
    return DeformableSpring(REST, stiffness=5.0, mass=0.4, damping=0.2)


def chain_state(rng):
    """Nodes moved by a few centimetres from rest, random velocities (as on the page)."""
    return REST + 0.05 * rng.standard_normal(REST.shape), rng.standard_normal(REST.shape)


def transverse_part(spring, x, v):
    """The page's (t / l)(I - u u^T) per segment, with the signs of Eq. (2.93)."""
    k = spring.nnodes
    out = np.zeros((3 * k, 3 * k))
    for s, L in enumerate(spring.rest_lengths):
        d, w = x[s + 1] - x[s], v[s + 1] - v[s]
        l = np.linalg.norm(d)
        u = d / l
        t = (spring.stiffness * (l - L) / L + spring.damping * (u @ w) / L) / L
        B = t / l * (np.eye(3) - np.outer(u, u))
        a, b = slice(3 * s, 3 * s + 3), slice(3 * s + 3, 3 * s + 6)
        out[a, a] -= B
        out[b, b] -= B
        out[a, b] += B
        out[b, a] += B
    return out


def rod(name, parent, L=1.0, m=1.0):
    top, com = np.eye(4), np.eye(4)
    if parent >= 0:
        top[2, 3] = -L
    com[2, 3] = -L / 2
    return Body(name, parent, Revolute([0, 1, 0]), top, com, m,
                np.diag([m * L**2 / 12, m * L**2 / 12, 1e-3 * m]))


def demo_model():
    """The page's demo: three rods, a 5-node cable world -> rod 3 tip, a 3-node tail on rod 1."""
    cable = DeformableSpring(np.linspace([2.0, 0, 0], [0.0, 0, -3.0], 5), stiffness=50.0, mass=0.5,
                             first=Attachment(-1, [2.0, 0, 0]), last=Attachment(2, TIP), name="cable")
    tail = DeformableSpring([[0.0, 0, -0.5], [-0.4, 0, -0.7], [-0.8, 0, -0.9]], stiffness=20.0,
                            mass=0.3, first=Attachment(0, np.zeros(3)), name="tail")
    return Model([rod(f"rod{i + 1}", i - 1) for i in range(3)], deformables=[cable, tail])


def demo_state(rng, model):
    q = model.coordinates(rng.uniform(-0.6, 0.6, model.nr)) + 0.05 * rng.standard_normal(model.nq)
    return q, rng.standard_normal(model.nq)


def attached(model):
    return [(d, a, att) for d, s in enumerate(model.deformables)
            for a, att in s.attachments.items() if att.body >= 0]


def attachment_jacobians(model, q, qdot):
    """J_am and Jdot_am of Eq. (2.94)-(2.95), as the page builds them."""
    kin = forward_kinematics(model, q, qdot)
    J_am, Jdot_am = [], []
    for _, _, att in attached(model):
        i, G = att.body, gamma(att.r)
        R, w = kin.E_wi[i][:3, :3], kin.phi[i][:3]
        row, row_dot = np.zeros((3, 6 * model.n)), np.zeros((3, 6 * model.n))
        row[:, 6 * i:6 * i + 6] = R @ G
        row_dot[:, 6 * i:6 * i + 6] = R @ brac(w) @ G
        J_am.append(row)
        Jdot_am.append(row_dot)
    return np.vstack(J_am), np.vstack(Jdot_am)


def combined_jacobian(model, q, qdot):
    """J_MR and Jdot_MR of Eq. (2.96) (corrected), rows (bodies, attached, free nodes)."""
    J, Jdot = jacobian_and_derivative(model, q, qdot)
    J_am, Jdot_am = attachment_jacobians(model, q, qdot)
    nf = model.nq - model.nr
    free = np.hstack([np.zeros((nf, model.nr)), np.eye(nf)])
    return (np.vstack([J, J_am @ J, free]),
            np.vstack([Jdot, Jdot_am @ J + J_am @ Jdot, 0 * free]))


@cache
def scene12_runs():
    s = scenes.scene(12)
    return s, {"rk45": s.simulate("rk45"), "euler": s.simulate("euler")}


@cache
def scene12_euler(h):
    return scenes.scene(12).simulate("euler", h=h)


def energy_scale(tr):
    return max(tr.T.max(), np.abs(tr.V - tr.V[0]).max())


# --- Nodes and springs: Eq. (2.91)-(2.93) ---------------------------------------------------------


def test_p2_7_spring_energy_and_forces_are_eq_2_92_2_93_by_hand(rng):
    """Page 2.7: 'energy and forces = Eq. (2.92)-(2.93) by hand: True'."""
    chain = free_chain()
    x, _ = chain_state(rng)
    still = chain.elastic(x, np.zeros_like(x))
    f, V = np.zeros_like(x), 0.0
    for s, L in enumerate(chain.rest_lengths):
        dx = x[s + 1] - x[s]
        l = np.linalg.norm(dx)
        eps = (l - L) / L
        V += 0.5 * 5.0 * eps**2
        f[s] += 5.0 * eps / L * dx / l
        f[s + 1] -= 5.0 * eps / L * dx / l
    assert still.energy == pytest.approx(V, rel=1e-12)
    np.testing.assert_allclose(still.f, f, atol=1e-12)


def test_p2_7_spring_force_is_minus_the_energy_gradient(rng):
    """Page 2.7: 'f = -dV/dx (central differences): True' (to 1e-8)."""
    chain = free_chain()
    x, _ = chain_state(rng)
    grad = numerical_derivative(lambda y: chain.elastic(y.reshape(-1, 3), np.zeros_like(x)).energy,
                                x.ravel())
    assert np.abs(grad + chain.elastic(x, np.zeros_like(x)).f.ravel()).max() < 1e-8


def test_p2_7_K_and_D_match_central_differences_and_K_without_the_transverse_term_does_not(rng):
    """Page 2.7: K and D match central differences; K without (t/l)(I - u u^T) does not, and is
    'off by tens of percent at every step' (best relative error above 0.1); the library's K
    reaches a relative error below 1e-9 at its best step, near 1e-6 (1e-7 to 1e-5); D's error,
    pure round-off, is smallest at the largest step."""
    chain = free_chain()
    x, v = chain_state(rng)
    terms = chain.elastic(x, v)

    def f_of_x(y):
        return chain.elastic(y.reshape(-1, 3), v).f.ravel()
    K = check_derivative(f_of_x, x.ravel(), terms.K)
    assert K.ok and K.error < 1e-9 and 1e-7 <= K.step <= 1e-5
    D = check_derivative(lambda w: chain.elastic(x, w.reshape(-1, 3)).f.ravel(), v.ravel(), terms.D)
    assert D.ok and D.step == D.steps.max()
    wrong = check_derivative(f_of_x, x.ravel(), terms.K - transverse_part(chain, x, v))
    assert not wrong.ok and wrong.errors.min() > 0.1


def test_p2_7_D_is_symmetric_and_K_is_symmetric_at_rest_but_not_for_a_moving_damped_spring(rng):
    """Page 2.7: 'D symmetric, and K symmetric for a spring at rest: True'; the text: a moving
    damped spring's K has a term that is not symmetric."""
    chain = free_chain()
    x, v = chain_state(rng)
    terms, at_rest = chain.elastic(x, v), chain.elastic(x, np.zeros_like(x))
    np.testing.assert_allclose(terms.D, terms.D.T, atol=1e-14)
    np.testing.assert_allclose(at_rest.K, at_rest.K.T, atol=1e-12)
    assert np.abs(terms.K - terms.K.T).max() > 1e-3


# --- Attaching nodes: Eq. (2.94)-(2.95) -----------------------------------------------------------


def test_p2_7_demo_model_has_3_joint_and_18_coordinates():
    """Page 2.7: nr = 3, nq = 3 + 3*5 = 18; free nodes (1, 2, 3) and (1, 2); slices 3:12, 12:18."""
    model = demo_model()
    assert (model.nr, model.nq) == (3, 18)
    assert [s.free for s in model.deformables] == [(1, 2, 3), (1, 2)]
    assert model.deformable_dofs == (slice(3, 12), slice(12, 18))


def test_p2_7_attached_node_position_velocity_and_jdot_am(rng):
    """Page 2.7, Eq. (2.94)-(2.95): the cable's end sits at R r + p, moves with R Gamma(r) phi_3,
    which matches differenced positions (1e-8), and Jdot_am = R [omega] Gamma matches central
    differences."""
    model = demo_model()
    q, qdot = demo_state(rng, model)
    kin = forward_kinematics(model, q, qdot)
    R, phi = kin.E_wi[2][:3, :3], kin.phi[2]
    end = node_kinematics(model, q, qdot)[0]
    np.testing.assert_allclose(end.x[-1], R @ TIP + kin.E_wi[2][:3, 3], atol=1e-14)
    np.testing.assert_allclose(end.v[-1], R @ gamma(TIP) @ phi, atol=1e-13)
    xdot = numerical_derivative(lambda t: node_kinematics(model, q + t[0] * qdot)[0].x[-1], [0.0])[:, 0]
    assert np.abs(xdot - end.v[-1]).max() < 1e-8

    def J_am(t):
        return forward_kinematics(model, q + t[0] * qdot).E_wi[2][:3, :3] @ gamma(TIP)
    assert check_derivative(J_am, [0.0], (R @ brac(phi[:3]) @ gamma(TIP))[..., None]).ok


# --- One Jacobian: Eq. (2.96)-(2.99) --------------------------------------------------------------


def test_p2_7_J_MR_has_39_rows_and_maps_to_twists_attached_and_free_velocities(rng):
    """Page 2.7, Eq. (2.97): J_MR is 39 x 18 and J_MR qdot_R = (twists, attached, free velocities)."""
    model = demo_model()
    q, qdot = demo_state(rng, model)
    J_MR, _ = combined_jacobian(model, q, qdot)
    assert J_MR.shape == (39, 18)
    nodes = node_kinematics(model, q, qdot)
    v_M = np.concatenate([forward_kinematics(model, q, qdot).phi.ravel(),
                          *[nodes[d].v[a] for d, a, _ in attached(model)], qdot[model.nr:]])
    np.testing.assert_allclose(J_MR @ qdot, v_M, atol=1e-12)


def test_p2_7_printed_eq_2_96_attached_row_fails_and_the_corrected_row_passes(rng):
    """Page 2.7, the typo: d/dt (J_am J_mr) matches Jdot_am J_mr + J_am Jdot_mr, not the printed
    row's J_am Jdot_mr; the library's Jdot_n qdot is the corrected row times qdot."""
    model = demo_model()
    q, qdot = demo_state(rng, model)

    def rows(t):
        qt = q + t[0] * qdot
        return attachment_jacobians(model, qt, qdot)[0] @ jacobian_and_derivative(model, qt, qdot)[0]
    J, Jdot = jacobian_and_derivative(model, q, qdot)
    J_am, Jdot_am = attachment_jacobians(model, q, qdot)
    assert not check_derivative(rows, [0.0], (J_am @ Jdot)[..., None]).ok
    assert check_derivative(rows, [0.0], (Jdot_am @ J + J_am @ Jdot)[..., None]).ok
    nodes = node_kinematics(model, q, qdot)
    lib = np.concatenate([nodes[d].Jdot_qdot[a] for d, a, _ in attached(model)])
    np.testing.assert_allclose(lib, (Jdot_am @ J + J_am @ Jdot) @ qdot, atol=1e-12)


def test_p2_7_eq_2_99_by_hand_is_the_librarys_mass_matrix_and_force(rng):
    """Page 2.7, Eq. (2.98)-(2.99): M_R = J_MR^T M_M J_MR = mass_matrix, f_R = reduced_forces,
    M_R symmetric positive definite."""
    model = demo_model()
    q, qdot = demo_state(rng, model)
    kin = forward_kinematics(model, q, qdot)
    J_MR, Jdot_MR = combined_jacobian(model, q, qdot)
    nodes = node_kinematics(model, q, qdot)
    springs = [s.elastic(n.x, n.v).f for s, n in zip(model.deformables, nodes, strict=True)]
    order = [(d, a) for d, a, _ in attached(model)]
    order += [(d, a) for d, s in enumerate(model.deformables) for a in s.free]
    masses = [model.deformables[d].node_mass for d, _ in order]
    M_M = block_diag(*model.spatial_inertias, *[m * np.eye(3) for m in masses])
    f_nodes = [m * model.gravity + springs[d][a] for m, (d, a) in zip(masses, order, strict=True)]
    f_M = np.concatenate([maximal_forces(model, kin.E_wi, kin.phi), *f_nodes])
    M_R = J_MR.T @ M_M @ J_MR
    np.testing.assert_allclose(M_R, mass_matrix(model, q), atol=1e-12)
    np.testing.assert_allclose(J_MR.T @ (f_M - M_M @ Jdot_MR @ qdot), reduced_forces(model, q, qdot),
                               atol=1e-10)
    assert np.allclose(M_R, M_R.T) and np.linalg.eigvalsh(M_R).min() > 0


def test_p2_7_block_pattern_of_J_MR_as_the_figure_describes(rng):
    """Page 2.7, J_MR figure: 18 body rows zero in the node columns; 6 attached rows, the tail's
    start (rod 1) depending only on joint 1 and the cable's end (rod 3) on all three; the free
    rows are the identity; Jdot_MR is zero in the free rows and the node columns; the y
    velocity rows of the attached nodes and the bodies' omega_x, omega_z, nu_y rows are empty."""
    model = demo_model()
    q, qdot = demo_state(rng, model)
    J_MR, Jdot_MR = combined_jacobian(model, q, qdot)
    nz = np.abs(J_MR) > 1e-12
    assert not nz[:18, 3:].any() and not nz[18:24, 3:].any()
    cable_end, tail_start = nz[18:21, :3], nz[21:24, :3]
    assert cable_end[[0, 2]].all() and tail_start[[0, 2], 0].all() and not tail_start[:, 1:].any()
    assert not cable_end[1].any() and not tail_start[1].any()
    np.testing.assert_array_equal(J_MR[24:], np.hstack([np.zeros((15, 3)), np.eye(15)]))
    assert not (np.abs(Jdot_MR[24:]) > 0).any() and not (np.abs(Jdot_MR[:, 3:]) > 0).any()
    body_rows = nz[:18].reshape(3, 6, -1).any(axis=2)
    assert not body_rows[:, [0, 2, 4]].any()


# --- Scene 12 -------------------------------------------------------------------------------------


def test_p2_7_scene12_is_two_links_and_two_chains_as_described():
    """Page 2.7, 'The reference scene': the reference's one mass-spring scene; two 10 x 1 x 1 cm
    links of 10 g; a three-node cable from (30, 0, 10) cm to the second link's far end and a
    two-node spring between the links' centres; 1 g per chain; K = 0.01 J; nr = 2, nq = 5
    against the reference's 17; span (0, 1) s, Euler step 5 ms; the cable's nodes weigh a third
    of a gram; everything starts at rest; nothing dissipates."""
    s, _ = scene12_runs()
    m = s.model
    assert [e.id for e in scenes.catalogue() if any("deformable" in f for f in e.features)] == [12]
    assert [b.shape for b in m.bodies] == [{"type": "cuboid", "sides": [0.1, 0.01, 0.01]}] * 2
    assert [b.mass for b in m.bodies] == pytest.approx([0.01, 0.01])
    cable, strut = m.deformables
    assert cable.nnodes == 3 and strut.nnodes == 2
    np.testing.assert_allclose(cable.attachments[0].r, [0.3, 0, 0.1])
    assert cable.attachments[0].body == -1 and cable.attachments[2].body == 1
    np.testing.assert_allclose(cable.attachments[2].r, [0.05, 0, 0])  # the far end of the link
    assert {a.body for a in strut.attachments.values()} == {0, 1}
    assert all(np.allclose(a.r, 0) for a in strut.attachments.values())  # the centres
    assert [c.mass for c in m.deformables] == pytest.approx([1e-3, 1e-3])
    assert [c.stiffness for c in m.deformables] == pytest.approx([0.01, 0.01])
    assert cable.node_mass == pytest.approx(1e-3 / 3)
    assert (m.nr, m.nq) == (2, 5) and m.nr + 3 * (cable.nnodes + strut.nnodes) == 17
    assert s.t_span == (0.0, 1.0) and s.h == 0.005 and s.conservative
    assert np.all(s.qdot0 == 0) and np.all(s.q0[:2] == 0)  # at rest, links in a row


def test_p2_7_scene12_run_lengths():
    """Page 2.7: 'rk45: 140 steps, 101 samples', 'euler: 200 steps, 201 samples'."""
    _, runs = scene12_runs()
    assert (runs["rk45"].nsteps, len(runs["rk45"].t)) == (140, 101)
    assert (runs["euler"].nsteps, len(runs["euler"].t)) == (200, 201)


def test_p2_7_scene12_cable_stretches_to_more_than_twice_its_rest_length():
    """Page 2.7: 'at times it is more than twice its rest length' (the cable, under RK45)."""
    s, runs = scene12_runs()
    cable = s.model.deformables[0]
    stretch = max((np.linalg.norm(np.diff(node_kinematics(s.model, q)[0].x, axis=0), axis=1)
                   / cable.rest_lengths).max() for q in runs["rk45"].q)
    assert stretch > 2


def test_p2_7_scene12_energy_rk45_flat_euler_loses_44_percent_first_order():
    """Page 2.7, energy plot: peak T about 9 mJ (8.5-9.5), the scale of what moves
    (max |V - V0| within 0.1% of it); RK45 keeps |H| below 1e-4 of the
    energy in motion; Euler at 5 ms ends 44% of it lower ('almost half'); halving the step cuts
    the loss by a factor between 1.5 and 2, closer to 2 for the smaller step."""
    s, runs = scene12_runs()
    rk, eu = runs["rk45"], runs["euler"]
    scale = energy_scale(rk)
    assert 8.5e-3 < rk.T.max() < 9.5e-3 and scale == pytest.approx(rk.T.max(), rel=1e-3)
    assert np.abs(rk.H).max() < 1e-4 * scale
    assert round(-eu.H[-1] / scale, 2) == 0.44
    loss = [-eu.H[-1], -scene12_euler(s.h / 2).H[-1], -scene12_euler(s.h / 4).H[-1]]
    ratios = [a / b for a, b in zip(loss, loss[1:], strict=False)]
    assert all(1.5 < r < 2 for r in ratios) and ratios[1] > ratios[0]


@pytest.mark.parametrize("method", ["rk45", "euler"])
def test_p2_7_scene12_attached_ends_stay_on_their_points(method):
    """Page 2.7: 'attached ends on their points (gap < 1e-15 m): True' for both integrators."""
    s, runs = scene12_runs()
    tr, gap = runs[method], 0.0
    for q, E in zip(tr.q, tr.E_wi, strict=True):
        for spring, nodes in zip(s.model.deformables, node_kinematics(s.model, q), strict=True):
            for a, att in spring.attachments.items():
                point = att.r if att.body < 0 else (E[att.body] @ [*att.r, 1])[:3]
                gap = max(gap, np.linalg.norm(nodes.x[a] - point))
    assert gap < 1e-15


def test_p2_7_try_this_explicit_euler_blows_up_within_half_a_second_at_5_ms():
    """Page 2.7, 'Try this': plain explicit Euler on scene 12 blows up within 0.5 s at h = 5 ms."""
    s, _ = scene12_runs()
    q, v, h = s.q0.copy(), s.qdot0.copy(), s.h
    for _ in range(int(0.5 / h)):
        q, v = q + h * v, v + h * forward_dynamics(s.model, q, v)
        if not np.abs(q).max() < 1e3:
            break
    assert not np.abs(q).max() < 1e3
