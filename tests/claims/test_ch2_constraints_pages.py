"""Claims of pages 2.8 (book/02_reduced/08_constraints) and 2.9 (book/02_reduced/09_hybrid_dynamics).

Each test repeats one quantitative sentence or check-cell verdict of the pages with library
calls (no notebook is executed), and names the page and the sentence. The pages' models: the
four-bar linkage of page 2.8 (scene 30's proportions, ground 1 m), the servo-driven double
pendulum of page 2.9, and the reference scenes 6, 7, 8, 9, 13, 20, 32 and 34.

Tolerances: the pages' own (their verdicts print bounds, e.g. "to 1e-10 relative"), repeated
here; ``check_derivative`` keeps the best step of a sweep, so its default 1e-6 accepts central
differences (~1e-10 on these smooth maps) and refuses an O(1) error. Measured numbers quoted in
the prose ("about 0.12 rad", "56 deg") are checked to the digits quoted.
"""

from functools import cache

import numpy as np
import pytest

from redmax_edu import scenes
from redmax_edu.checks import check_derivative
from redmax_edu.constrained import assemble_constraints, constraint_errors
from redmax_edu.constraints import Loop, PrescribedJoint
from redmax_edu.dynamics import (
    constrained_dynamics,
    forward_dynamics,
    inverse_dynamics,
    linearly_implicit_euler_step,
    mass_matrix,
    reduced_forces,
)
from redmax_edu.integrators import simulate
from redmax_edu.jacobian import jacobian_and_derivative
from redmax_edu.joints import Fixed, Revolute
from redmax_edu.kinematics import forward_kinematics
from redmax_edu.lie import brac, gamma
from redmax_edu.model import Body, Model
from redmax_edu.viz.linkage import close_loop, closure_velocity, constraint_drift, crank_sweep

# --- page 2.8's four-bar -----------------------------------------------------------------------------

GROUND, CRANK, COUPLER, ROCKER = 1.0, 0.4, 1.4, 1.2


def bar(name, parent, length, at, width=0.05):
    mass = 1.0 * length
    inertia = mass / 12 * np.diag([2 * width**2, length**2 + width**2, length**2 + width**2])
    hinge, centre = np.eye(4), np.eye(4)
    hinge[0, 3] = at
    centre[0, 3] = 0.0 if parent < 0 else length / 2
    joint = Fixed() if parent < 0 else Revolute([0, -1, 0])
    return Body(name, parent, joint, hinge, centre, mass, inertia,
                shape={"type": "cuboid", "sides": [length, width, width]})


def tree():
    return Model([bar("ground", -1, GROUND, 0.0), bar("crank", 0, CRANK, -GROUND / 2),
                  bar("coupler", 1, COUPLER, CRANK), bar("rocker", 2, ROCKER, COUPLER)])


def closure(model):
    return Loop.hinge(model, 3, [ROCKER / 2, 0, 0], 0, [GROUND / 2, 0, 0], name="rocker-ground")


def four_bar():
    t = tree()
    return t.with_constraints([closure(t)])


GUESS = np.array([np.radians(45), 0.6, -2.5])


@cache
def closed():
    return close_loop(four_bar(), GUESS, driven=[0])


def rows_at(model, q, qdot, t=0.0):
    kin = forward_kinematics(model, q, qdot)
    J, Jdot = jacobian_and_derivative(model, q, qdot)
    return kin, J, Jdot, assemble_constraints(model, q, qdot, kin, J, Jdot, t)


@cache
def page_sweep():
    model = four_bar()
    return crank_sweep(model, close_loop(model, [0.0, 1.0, -2.7], driven=[0]), crank=0, samples=73,
                       coupler=(2, [0.0, 0.0, 0.3]))


@cache
def drift_run(method, gain):
    """The page's drift experiment: released from rest, crank straight up, 5 s."""
    model = four_bar()
    q_up = close_loop(model, [np.pi / 2, -1.0, -2.3], driven=[0])
    if method == "rk45":
        run = simulate(model, q_up, np.zeros(3), (0.0, 5.0), "rk45", sample_dt=0.02,
                       baumgarte=(gain, gain, 0.0))
    else:
        run = simulate(model, q_up, np.zeros(3), (0.0, 5.0), "euler", h=0.01, sample_dt=0.02,
                       baumgarte=(0.0, 0.0, gain))
    return constraint_drift(model, run.t, run.q)


# --- page 2.8: the four-bar, its rows, its explorer ---------------------------------------------------


def test_p2_8_the_four_bar_has_three_coordinates_two_rows_one_freedom_and_is_grashof():
    """Page 2.8: 'joint coordinates of the tree: 3', 'rows of the closure: 2', 'degrees of
    freedom left: 1'; Grübler 3(4 - 1) - 2*4 = 1; 0.4 + 1.4 <= 1.0 + 1.2."""
    t = tree()
    assert (t.nq, closure(t).nrows, t.nq - closure(t).nrows) == (3, 2, 1)
    assert 3 * (4 - 1) - 2 * 4 == 1
    assert CRANK + COUPLER <= GROUND + ROCKER


def test_p2_8_newton_closes_the_loop_from_a_guess_half_a_metre_off():
    """Page 2.8: 'closure error at the guess (m): 0.49', 'after Newton below 1e-12 m: True',
    and the crank stays at 45 degrees."""
    model = four_bar()
    assert np.abs(constraint_errors(model, GUESS)[0]).max().round(2) == 0.49
    assert np.abs(constraint_errors(model, closed())[0]).max() < 1e-12
    assert closed()[0] == GUESS[0]


def test_p2_8_three_rows_are_singular_and_the_library_names_the_closure():
    """Page 2.8: 'rank of the 3 x 3 rows G: 2', 'the y row is identically zero: True', and the
    solve refuses the three-row closure by name."""
    t = tree()
    ball = Loop(3, [ROCKER / 2, 0, 0], 0, [GROUND / 2, 0, 0], name="rocker-ground, 3 rows")
    model = t.with_constraints([ball])
    G3 = rows_at(model, closed(), np.zeros(3))[3].G
    assert np.linalg.matrix_rank(G3) == 2 and not np.any(G3[1])
    named = r"constraints\[0\], loop closure 'rocker-ground, 3 rows': its 3 rows are not independent"
    with pytest.raises(ValueError, match=named):
        constrained_dynamics(model, closed(), np.zeros(3))
    # the two-row closure of the same loop solves
    constrained_dynamics(four_bar(), closed(), np.zeros(3))


def orthonormal_pair(a):
    v1 = np.zeros(3)
    v1[np.argmin(np.abs(a))] = 1.0
    v2 = np.cross(a, v1) / np.linalg.norm(np.cross(a, v1))
    v1 = np.cross(v2, a) / np.linalg.norm(np.cross(v2, a))
    return np.column_stack([v1, v2])


def test_p2_8_rows_are_eq_2_102_and_2_104_turned_by_a_rotation():
    """Page 2.8: 'C is a rotation', 'library G_m = C (Eq. 2.102)', 'G = G_m J_mr',
    'Gdot qdot = C (Gdot_m J + G_m Jdot) qdot (Eq. 2.104)', at the closed pose with the crank at
    3 rad/s."""
    model = four_bar()
    loop = model.constraints[0]
    q = closed()
    qdot = closure_velocity(model, q, [0], [3.0])
    kin, J, Jdot, rows = rows_at(model, q, qdot)
    A, B = 3, 0
    R_A, R_B = kin.E_wi[A][:3, :3], kin.E_wi[B][:3, :3]
    V = orthonormal_pair(R_A @ loop.axis)
    G_m = V.T @ np.hstack([R_A @ gamma(loop.point_a), -R_B @ gamma(loop.point_b)])
    Gdot_m = V.T @ np.hstack([R_A @ brac(kin.phi[A][:3]) @ gamma(loop.point_a),
                              -R_B @ brac(kin.phi[B][:3]) @ gamma(loop.point_b)])
    lib = loop.rows(model, q, qdot, kin, 0.0)
    C = (R_A @ loop.V).T @ V
    J_AB = np.vstack([J[6 * A:6 * A + 6], J[6 * B:6 * B + 6]])
    Jdot_AB = np.vstack([Jdot[6 * A:6 * A + 6], Jdot[6 * B:6 * B + 6]])
    phi_AB = np.concatenate([kin.phi[A], kin.phi[B]])
    assert np.allclose(C.T @ C, np.eye(2)) and np.isclose(np.linalg.det(C), 1.0)
    assert not np.allclose(C, np.eye(2))  # the directions really are turned (the rocker is not level)
    assert np.allclose(np.hstack([lib.G_m[A], lib.G_m[B]]), C @ G_m)
    assert np.allclose(rows.G, C @ G_m @ J_AB)
    assert np.allclose(rows.Gdot_qdot, C @ (Gdot_m @ phi_AB + G_m @ Jdot_AB @ qdot))


def test_p2_8_G_and_Gdot_qdot_match_central_differences_where_the_loop_is_open(rng):
    """Page 2.8: 'G = dg/dq matches central differences: True', 'Gdot qdot = d/dt(G) qdot
    matches ...: True', 'a flipped Gdot qdot is caught: True'."""
    model = four_bar()
    q, qdot = rng.uniform(-np.pi, np.pi, 3), rng.standard_normal(3)
    rows = rows_at(model, q, qdot)[3]
    assert np.abs(constraint_errors(model, q)[0]).max() > 1e-2  # really open
    assert check_derivative(lambda x: constraint_errors(model, x)[0], q, rows.G).ok

    def G_qdot(s):
        return rows_at(model, q + s[0] * qdot, qdot)[3].G @ qdot

    assert check_derivative(G_qdot, [0.0], rows.Gdot_qdot[:, None]).ok
    assert not check_derivative(G_qdot, [0.0], -rows.Gdot_qdot[:, None]).ok


def coupler_end_by_circles(theta):
    b_end = np.array([-GROUND / 2 + CRANK * np.cos(theta), CRANK * np.sin(theta)])
    pin = np.array([GROUND / 2, 0.0])
    d = np.linalg.norm(pin - b_end)
    u = (pin - b_end) / d
    along = (COUPLER**2 - ROCKER**2 + d**2) / (2 * d)
    across = np.sqrt(COUPLER**2 - along**2)
    return b_end + along * u + across * np.array([-u[1], u[0]])


def test_p2_8_the_crank_sweep_equals_plane_geometry_at_73_angles():
    """Page 2.8: 'poses along the sweep: 73', 'Newton on the loop's rows = the two circles'
    intersection (1e-10 m): True'."""
    sweep = page_sweep()
    newton = np.array([forward_kinematics(sweep.model, q).E_wj[3][[0, 2], 3] for q in sweep.q])
    circles = np.array([coupler_end_by_circles(a) for a in sweep.angles])
    assert len(sweep.angles) == 73
    assert np.abs(newton - circles).max() < 1e-10


def test_p2_8_the_rocker_swings_56_degrees_with_extremes_near_40_and_250():
    """Page 2.8: 'the rocker swings through 56 deg'; its extremes are reached with crank and
    coupler in line, 'near 40 degrees, stretched out, and 250 degrees, folded back'; 'the
    coupler's joint angle falls by a full 360 degrees over the turn while the rocker's returns'."""
    sweep = page_sweep()
    rocker = np.degrees(sweep.q.sum(axis=1))
    assert int(round(np.ptp(rocker))) == 56
    fine = crank_sweep(sweep.model, sweep.q[0], crank=0, samples=721)
    rocker = np.degrees(fine.q.sum(axis=1))
    crank = np.degrees(fine.angles)
    assert abs(crank[np.argmin(rocker)] - 40) < 5 and abs(crank[np.argmax(rocker)] - 250) < 5
    coupler_world = np.degrees(fine.q[:, 0] + fine.q[:, 1])
    lag = (coupler_world - crank + 180) % 360 - 180  # coupler against crank: 0 in line, 180 folded
    assert abs(lag[np.argmin(rocker)]) < 1 and abs(abs(lag[np.argmax(rocker)]) - 180) < 1
    assert np.isclose(sweep.q[-1, 1] - sweep.q[0, 1], -2 * np.pi, atol=1e-9)
    assert np.isclose(sweep.q[-1, 2], sweep.q[0, 2], atol=1e-9)


def test_p2_8_the_crank_widget_starts_at_the_static_figures_first_panel():
    """Page 2.8: the live slider 'starts at 45 degrees, the first panel of the static figure'."""
    pytest.importorskip("ipywidgets")
    from redmax_edu.viz.linkage import crank_widget

    assert crank_widget(page_sweep(), angle=np.radians(45)).children[0].value == 45.0


def test_p2_8_kkt_by_hand_equals_the_library_at_both_levels():
    """Page 2.8: 'Eq. (2.105) by hand = constrained_dynamics', 'Eq. (2.106) by hand =
    linearly_implicit_euler_step', 'the step keeps G qdot = 0'."""
    model = four_bar()
    q = closed()
    qdot = closure_velocity(model, q, [0], [3.0])
    rows = rows_at(model, q, qdot)[3]
    M, f = mass_matrix(model, q), reduced_forces(model, q, qdot)
    K = np.block([[M, -rows.G.T], [rows.G, np.zeros((2, 2))]])
    acc = np.linalg.solve(K, np.concatenate([f, -rows.Gdot_qdot]))
    sol = constrained_dynamics(model, q, qdot, baumgarte=(0, 0, 0))
    assert np.allclose(acc[:3], sol.x) and np.allclose(acc[3:], sol.lam)
    h = 0.01
    vel = np.linalg.solve(K, np.concatenate([M @ qdot + h * f, np.zeros(2)]))
    q1, qdot1 = linearly_implicit_euler_step(model, q, qdot, h, baumgarte=(0, 0, 0))
    assert np.allclose(vel[:3], qdot1) and np.allclose(q1, q + h * qdot1)
    assert np.abs(rows.G @ qdot1).max() < 1e-12


def test_p2_8_without_stabilisation_the_loop_opens_by_millimetres_and_centimetres():
    """Page 2.8: 'no stabilisation: the loop opens by over 1 mm (RK45) and 1 cm (Euler)'."""
    assert drift_run("rk45", 0.0).max() > 1e-3 and drift_run("euler", 0.0).max() > 1e-2


def test_p2_8_reference_gains_keep_rk45_within_a_tenth_of_a_millimetre():
    """Page 2.8: 'RK45 with alpha = beta = 5: largest gap below 0.1 mm: True' ('better than a
    tenth of a millimetre')."""
    assert drift_run("rk45", 5.0).max() < 1e-4


def test_p2_8_euler_gap_shrinks_with_every_gain_and_stays_under_5_mm_at_one_over_h():
    """Page 2.8: 'Euler: every larger gain gives a smaller largest gap', 'Euler with gamma =
    1/h = 100: largest gap below 5 mm', and gamma h = 5% at gamma = 5, h = 10 ms; with gamma = 5
    the gap 'stays large' (centimetres)."""
    worst = [drift_run("euler", g).max() for g in (0.0, 1.0, 5.0, 10.0, 30.0, 100.0)]
    assert np.all(np.diff(worst) < 0)
    assert worst[-1] < 5e-3 and worst[2] > 1e-2
    assert np.isclose(5.0 * 0.01, 0.05)


def test_p2_8_couplings_of_scenes_7_and_34_do_not_drift_and_the_tooth_torque_changes_sign():
    """Page 2.8: 'scene 7: couplings hold to 1e-12 rad', 'scene 34: gears hold to 1e-12 rad',
    ratios 1 : 1/2 : 1/4 at every instant, and 'the tooth torque changes sign'."""
    tail = scenes.scene(7)
    run = tail.simulate("rk45")
    assert constraint_drift(tail.model, run.t, run.q).max() < 1e-12
    assert np.allclose(run.q[:, 1], run.q[:, 0] / 2, atol=1e-12)
    assert np.allclose(run.q[:, 2], run.q[:, 0] / 4, atol=1e-12)
    gears = scenes.scene(34)
    run = gears.simulate("rk45")
    assert constraint_drift(gears.model, run.t, run.q).max() < 1e-12
    tooth = np.array([constrained_dynamics(gears.model, q, v, t=t).lam[0]
                      for t, q, v in zip(run.t, run.q, run.qdot, strict=True)])
    assert tooth.max() > 0 > tooth.min()
    assert 1e-6 < np.abs(tooth).max() < 1e-4  # plotted in micro-newton-metres


def test_p2_8_couplings_are_preserved_exactly_by_euler_too():
    """Page 2.8: 'The same holds for Euler's q + h qdot': linear couplings do not drift."""
    tail = scenes.scene(7)
    run = tail.simulate("euler", baumgarte=(0, 0, 0))
    assert constraint_drift(tail.model, run.t, run.q).max() < 1e-12


def test_p2_8_scene_8_stacks_two_loop_rows_and_one_coupling_row_and_holds_both():
    """Page 2.8: 'coordinates: 6 rows: 3', '2 row(s) from the loop closure', '1 row(s) from the
    coupling', 'loop closed to 1e-6 m', 'coupling held to 1e-12 rad'."""
    linkage = scenes.scene(8)
    rows = rows_at(linkage.model, linkage.q0, linkage.qdot0)[3]
    assert (linkage.model.nq, len(rows.G)) == (6, 3)
    assert [rows.owners.count(o) for o in dict.fromkeys(rows.owners)] == [2, 1]
    assert rows.owners[0].startswith("loop closure") and rows.owners[2].startswith("coupling")
    run = linkage.simulate("rk45")
    assert max(np.abs(constraint_errors(linkage.model, q)[0]).max() for q in run.q) < 1e-6
    assert max(np.abs(constraint_errors(linkage.model, q)[1]).max() for q in run.q) < 1e-12
    assert linkage.model.parents == (-1, 0, 1, 2, 3, 4, 3)  # the tree the page describes


@cache
def limit_run(h):
    return scenes.scene(6).simulate("euler", h=h)


def stops(run, lower, upper):
    c = np.minimum(run.q[:, 1] - lower, upper - run.q[:, 1])
    return np.flatnonzero((np.abs(c[1:]) < 1e-9) & (c[:-1] > 1e-9)) + 1


def test_p2_8_each_stop_of_scene_6_is_perfectly_inelastic_and_costs_carnots_energy():
    """Page 2.8: 'stops in 2 s: 4', 'each stop loses 1/2 dqdot^T M dqdot (Carnot), within 2%'
    over the two steps of the stop, 'the limited joint keeps under 1% of its speed at a stop'
    (h = 1 ms; measured: within 1%, and the joint's speed after the stop is zero)."""
    limited = scenes.scene(6)
    c = limited.model.constraints[0]
    run = limit_run(0.001)
    ks = stops(run, c.lower, c.upper)
    assert len(ks) == 4
    E = run.T + run.V
    for k in ks:
        dv = run.qdot[k + 1] - run.qdot[k - 1]
        carnot = 0.5 * dv @ mass_matrix(limited.model, run.q[k]) @ dv
        assert abs((E[k - 1] - E[k + 1]) - carnot) < 0.02 * carnot
        assert abs(run.qdot[k + 1, 1]) < 0.01 * abs(run.qdot[k - 1, 1])


def test_p2_8_the_joint_never_passes_its_bound():
    """Page 2.8: 'never past a bound (by more than 1e-12 rad)' at h = 10 ms and 1 ms, and it
    does reach the bound ('stops at their edges, exactly on them')."""
    c = scenes.scene(6).model.constraints[0]
    for h in (0.01, 0.001):
        run = limit_run(h)
        past = np.maximum(np.maximum(c.lower - run.q[:, 1], run.q[:, 1] - c.upper), 0.0).max()
        assert past < 1e-12
        assert np.isclose(np.abs(run.q[:, 1]).max(), c.upper)


# --- page 2.9: hybrid dynamics --------------------------------------------------------------------


def rod(name, parent, L=1.0, m=1.0):
    top, com = np.eye(4), np.eye(4)
    if parent >= 0:
        top[2, 3] = -L
    com[2, 3] = -L / 2
    inertia = np.diag([m * L**2 / 12, m * L**2 / 12, 1e-3 * m])
    return Body(name, parent, Revolute([0, 1, 0]), top, com, m, inertia)


def servo(t):
    return [0.6 * np.sin(2 * t)], [1.2 * np.cos(2 * t)], [-2.4 * np.sin(2 * t)]


def servo_arm():
    arm = Model([rod("upper", -1), rod("lower", 0)])
    return arm, arm.with_constraints([PrescribedJoint(0, servo, name="shoulder servo")])


def test_p2_9_the_prescribed_torque_is_inverse_dynamics_and_round_trips(rng):
    """Page 2.9: 'the shoulder accelerates as prescribed', 'the torque lies on the shoulder only',
    'torque = inverse dynamics of the result, to 1e-10 relative', 'that torque applied to the
    free arm gives the same accelerations'."""
    arm, driven = servo_arm()
    for _ in range(5):
        t = rng.uniform(0, 6)
        q = np.array([servo(t)[0][0], rng.uniform(-1, 1)])
        qdot = np.array([servo(t)[1][0], rng.standard_normal()])
        sol = constrained_dynamics(driven, q, qdot, t=t)
        tau = sol.generalized_force(0)
        assert np.isclose(sol.x[0], servo(t)[2][0], atol=1e-12) and tau[1] == 0.0
        assert np.abs(inverse_dynamics(arm, q, qdot, sol.x) - tau).max() < 1e-10 * np.abs(tau).max()
        assert np.allclose(forward_dynamics(arm, q, qdot, tau=tau), sol.x, rtol=1e-10, atol=1e-12)


def test_p2_9_the_servo_keeps_the_shoulder_on_its_path():
    """Page 2.9: 'the shoulder stays on its path to 1e-6 rad' (RK45 at 1e-8, 6 s)."""
    _, driven = servo_arm()
    run = simulate(driven, [0.0, 0.0], [1.2, 0.0], (0.0, 6.0), rtol=1e-8, atol=1e-8, sample_dt=0.02)
    assert np.abs(run.q[:, 0] - 0.6 * np.sin(2 * run.t)).max() < 1e-6


@cache
def scene9():
    chain = scenes.scene(9)
    run = chain.simulate("rk45")
    sols = [constrained_dynamics(chain.model, q, v, t=t, baumgarte=chain.baumgarte)
            for t, q, v in zip(run.t, run.q, run.qdot, strict=True)]
    return chain, run, sols


def test_p2_9_scene_9_torque_is_inverse_dynamics_at_every_sample():
    """Page 2.9: 'torque = inverse dynamics at every sample, to 1e-10 relative'."""
    chain, run, sols = scene9()
    torque = np.array([s.generalized_force(0) for s in sols])
    by_id = np.array([inverse_dynamics(chain.model, q, v, s.x)
                      for q, v, s in zip(run.q, run.qdot, sols, strict=True)])
    assert np.abs(by_id - torque).max() < 1e-10 * np.abs(torque).max()


def test_p2_9_scene_9_work_of_the_torque_is_the_kinetic_energy_and_the_story_of_the_plot():
    """Page 2.9: 'the torque's work = the kinetic energy gained, within 1% of its peak'; 'the bars
    are light (10 g each)'; the torque is small until about 3.5 s, then spikes; 'q_2 keeps
    growing' (the second bar goes round); no work once the joint holds still."""
    chain, run, sols = scene9()
    tau = np.array([s.generalized_force(0)[0] for s in sols])
    power = tau * run.qdot[:, 0]
    work = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * np.diff(run.t))])
    assert np.abs(work - (run.T - run.T[0])).max() < 0.01 * run.T.max()
    assert all(b.mass == pytest.approx(0.01) for b in chain.model.bodies)
    early, late = np.abs(tau[run.t < 3.5]).max(), np.abs(tau[run.t > 4.0]).max()
    assert early < 0.1 * late
    assert run.q[-1, 1] - run.q[run.t.searchsorted(5.0), 1] > 2 * np.pi
    held = run.t > 7.5
    assert np.ptp((run.T)[held]) < 0.01 * run.T.max()


def test_p2_9_the_reference_ramp_is_off_by_4_3_mrad_at_both_ends():
    """Page 2.9: 'it starts at b/(1 + e^a) ~ 4.3 mrad ... and at t1 it jumps by as much'."""
    ramp = scenes.scene(9).model.constraints[0].motion
    start = ramp(0.0)[0][0]
    jump = ramp(7.0)[0][0] - ramp(7.0 - 1e-12)[0][0]
    assert round(1e3 * start, 1) == 4.3 and round(1e3 * jump, 1) == 4.3


def test_p2_9_velocity_level_step_is_the_library_target_and_eq_2_114_on_the_path():
    """Page 2.9: 'the library's step = the KKT system with this target', 'the joint's new velocity
    is the target', 'on the path the library's step = Eq. (2.114)'s'."""
    chain = scenes.scene(9)
    ramp = chain.model.constraints[0].motion
    t, h, gamma_ = 2.0, chain.h, chain.baumgarte[2]
    q_p, qdot_p, qddot_p = (x[0] for x in ramp(t))
    G = np.array([[1.0, 0.0, 0.0]])
    for off_q, off_v in ((0.01, -0.08), (0.0, 0.0)):
        q = np.array([q_p + off_q, 0.3, -0.2])
        qdot = np.array([qdot_p + off_v, 0.1, 0.4])
        M, f = mass_matrix(chain.model, q), reduced_forces(chain.model, q, qdot)
        K = np.block([[M, -G.T], [G, np.zeros((1, 1))]])
        target = qdot_p + h * qddot_p - gamma_ * off_q
        by_hand = np.linalg.solve(K, np.concatenate([M @ qdot + h * f, [target]]))[:3]
        _, qdot1 = linearly_implicit_euler_step(chain.model, q, qdot, h, t=t, baumgarte=chain.baumgarte)
        assert np.allclose(qdot1, by_hand) and np.isclose(qdot1[0], target)
        eq_2114 = np.linalg.solve(K, np.concatenate([M @ qdot + h * f, [h * qddot_p + qdot[0]]]))[:3]
        assert np.allclose(qdot1, eq_2114) == (off_q == 0.0 and off_v == 0.0)


def twist_rows(model, t, q, qdot):
    _, J, _, rows = rows_at(model, q, qdot, t)
    return J, rows


def test_p2_9_prescribed_twist_rows_are_jacobian_rows_and_kink_errors_decay_at_2_alpha():
    """Page 2.9: 'held twist components of body4: omega_y, nu_x, nu_z', 'the reduced rows are
    rows of the body's Jacobian block', 'after each kink the error decays like exp(-2 alpha t)
    (rates within 5%)', 'at the rate 2 alpha = 10 1/s'."""
    hand = scenes.scene(13)
    held = hand.model.constraints[0]
    run = hand.simulate("rk45")
    J, rows = twist_rows(hand.model, 1.0, run.q[100], run.qdot[100])
    assert held.components == (1, 3, 5) and hand.model.names[held.body] == "body4"
    assert np.allclose(rows.G, J[6 * held.body + np.array(held.components)])
    residual = []
    for t, q, v in zip(run.t, run.q, run.qdot, strict=True):
        r = twist_rows(hand.model, t, q, v)[1]
        residual.append(np.abs(r.G @ v - r.w).max())
    residual = np.array(residual)
    alpha = hand.baumgarte[0]
    assert 2 * alpha == 10.0
    for kink in (2.0, 4.0, 6.0, 8.0):
        after = (run.t > kink + 0.05) & (run.t < kink + 0.8)
        rate = -np.polyfit(run.t[after], np.log(residual[after]), 1)[0]
        assert rate == pytest.approx(2 * alpha, rel=0.05)


def test_p2_9_scene_20_holds_joint_3_and_stacks_four_rows():
    """Page 2.9: 'from t = 2 s until the hold, joint 3 follows its ramp to 1e-5 rad', 'rows of
    the stacked set: 4 (3 on the body's twist, 1 on joint 3)', the hold at t1 = 10 s."""
    both = scenes.scene(20)
    run = both.simulate("rk45")
    gap = constraint_drift(both.model, run.t, run.q)
    middle = (run.t >= 2.0) & (run.t < 10.0)
    assert gap[middle].max() < 1e-5
    rows = twist_rows(both.model, 5.0, run.q[500], run.qdot[500])[1]
    assert [b.stop - b.start for b in rows.blocks] == [3, 1]
    assert both.model.constraints[1].motion.t1 == 10.0 == run.t[-1]


def test_p2_9_a_joint_velocity_through_a_maximal_constraint_is_the_row_e_k(rng):
    """Page 2.9: 'at 20 random states its row is e_k, its velocity product 0 (to 1e-14)', 'the
    crank turns at exactly -4 pi rad/s after the first step', 'the loop gap stays under 1.5 mm
    (Euler, h = 5 ms, gamma = 20)', 'about a millimetre at worst, 1% of the 10 cm ground bar',
    'two turns of the crank' in the second, and the motor 'rocks the whole linkage ... about that
    hinge, by up to a third of a radian' (the ground bar's hinge at its middle, 10 cm up)."""
    crank = scenes.scene(32)
    motor = crank.model.constraints[1]
    k = crank.model.dofs[motor.body].start
    for _ in range(20):
        q, v = rng.uniform(-np.pi, np.pi, crank.model.nq), rng.standard_normal(crank.model.nq)
        rows = twist_rows(crank.model, 0.0, q, v)[1]
        assert np.abs(rows.G[rows.blocks[1]][0] - np.eye(crank.model.nq)[k]).max() < 1e-14
        assert abs(rows.Gdot_qdot[rows.blocks[1]][0]) < 1e-14
    run = crank.simulate("euler")
    assert np.abs(run.qdot[1:, k] + 4 * np.pi).max() < 1e-10
    gap = constraint_drift(crank.model, run.t, run.q).max()
    assert 0.5e-3 < gap < 1.5e-3
    assert (crank.h, crank.baumgarte[2], crank.spans["euler"]) == (0.005, 20.0, (0.0, 1.0))
    assert abs(run.q[-1, k] - run.q[0, k]) == pytest.approx(4 * np.pi, rel=1e-6)
    ground = crank.model.bodies[0]
    assert ground.joint.kind == "revolute" and crank.model.parents[0] == -1
    assert np.allclose(ground.T_parent_joint[:3, 3], [0.0, 0.0, 0.1])  # 10 cm up
    assert np.isclose(ground.shape["sides"][0], 0.1)  # a 10 cm bar
    assert np.allclose(ground.T_joint_body[:3, 3], 0.0)  # the hinge at the bar's middle
    rock = np.abs(run.q[:, 0] - np.pi).max()
    assert 0.25 < rock < 0.36
