"""Claims of page 2.11 (book/02_reduced/11_friction): staggered projections and BISP (§2.11).

Each test repeats one quantitative sentence or check-cell verdict of the page with library
calls (no notebook is executed), under the page's section names: "Two convex problems instead
of one", "Friction inside the joints", "The reference scenes" and "Explore".

Tolerances: the staggered iteration stops at a relative change of 1e-6 of the contact forces,
so converged forces are compared to 1e-5 relative; the regulariser of Eq. (2.125) (1e-9 of the
mean mobility) biases BISP's joint loads by about 1e-9 of themselves, hence 1e-8 m/s^2 on the
accelerations of the slide; identities that hold exactly in exact arithmetic (the sweep over
the joints, S^T w = 0, J^T f_alpha) are compared to round-off, 1e-12 of loads of order 10.
"""

from functools import cache

import numpy as np
import pytest

from redmax_edu.dynamics import mass_matrix
from redmax_edu.friction.bisp import bisp_step
from redmax_edu.friction.patterns import Cylinder, JointFriction
from redmax_edu.friction.staggered import staggered_projections
from redmax_edu.jacobian import jacobian_and_derivative
from redmax_edu.joints import Revolute
from redmax_edu.kinematics import forward_kinematics, joint_twist_adjoints
from redmax_edu.model import Body, Model
from redmax_edu.scenes import scene
from redmax_edu.viz.friction import STUCK, frictional_steps, incline_box, incline_system, joint_rates, sp_rows
from redmax_edu.viz.slide_explorer import G, coulomb_slide, slide_model, slide_runs

H, MU = 0.01, 0.5
ANGLES = np.arange(10.0, 47.0, 4.0)


# ----------------------------------------------------------------------------- two convex problems
@cache
def passes(theta):
    """The page's table: one step from rest on the slope, with a budget of 1, 2, ... passes."""
    system, E0, _, downhill = incline_system(theta, MU)
    N, T, r_N, mus = sp_rows(system, E0, H)
    M, f = system.mass_matrix(), system.evaluate(E0, np.zeros((1, 6))).f
    to_slope = downhill @ E0[0, :3, :3]
    out = []
    for k in range(1, 21):
        step = staggered_projections(M, np.zeros(6), f, H, N, T, mus, r_N=r_N, max_iterations=k)
        out.append((to_slope @ step.v[3:], -to_slope @ step.f_beta[3:], step))
        if step.converged:
            break
    return out


def test_the_first_pass_has_no_friction_and_slides_at_h_g_sin():
    for theta in (20.0, 35.0):
        speed, friction, _ = passes(theta)[0]
        assert friction == 0.0
        assert speed == pytest.approx(H * G * np.sin(np.radians(theta)), rel=1e-9)


def test_on_20_degrees_the_box_stops_at_the_third_pass_with_m_g_sin():
    """"the second pass removes most of the slip, and the third lands on exactly the pull of
    gravity, m g sin, where the box stops; the fourth confirms it"."""
    table = passes(20.0)
    speeds = np.array([abs(s) for s, _, _ in table])
    assert len(table) == 4 and table[-1][2].converged
    assert speeds[1] < 0.2 * speeds[0] and speeds[2] < 1e-6 and speeds[3] < 1e-6
    assert table[2][1] == pytest.approx(G * np.sin(np.radians(20.0)), rel=1e-5)


def test_on_35_degrees_friction_reaches_mu_n_at_the_second_pass_and_converges_two_passes_later():
    table = passes(35.0)
    bound = MU * G * np.cos(np.radians(35.0))
    first = next(k for k, (_, f, _) in enumerate(table) if abs(f - bound) < 1e-9 * bound)
    assert first == 1 and len(table) == first + 3 and table[-1][2].converged   # passes 2 and 4
    assert table[-1][0] > 0.01                                 # still sliding (16 mm/s)


@cache
def sweep():
    return ({a: incline_box(a, MU, solver="sp") for a in ANGLES},
            {a: incline_box(a, MU, solver="qp") for a in ANGLES})


def test_the_incline_sweep_verdicts():
    sp, qp = sweep()
    n = 100
    accel = G * np.maximum(np.sin(np.radians(ANGLES)) - MU * np.cos(np.radians(ANGLES)), 0)
    discrete = accel * H ** 2 * n * (n + 1) / 2
    slid = np.array([sp[a].s[-1] for a in ANGLES])
    stuck = ANGLES < np.degrees(np.arctan(MU))
    assert np.abs(slid[stuck]).max() < 1e-6
    np.testing.assert_allclose(slid[~stuck], discrete[~stuck], rtol=1e-9)
    assert (discrete[~stuck] > accel[~stuck] / 2).all()        # "a hair above the line"
    assert max(np.abs(r.lift).max() for r in sp.values()) < 1e-9
    lifts = np.array([np.abs(qp[a].lift).max() for a in ANGLES[~stuck]])
    assert lifts.max() > 1e-3 and (np.diff(lifts) > 0).all()   # hovers, higher on steeper slopes
    assert max(r.iterations[0] for r in sp.values()) <= 15
    assert all(set(r.iterations[1:]) == {2} for r in sp.values())


# ----------------------------------------------------------------------------- BISP
def test_the_block_on_the_slide_reads_its_normal_force_off_the_step():
    for mu, accel, friction in ((0.0, -G / 2, 0.0), (0.8, 0.0, G / 2)):
        block = slide_model(30.0, mu)
        _, qdot1, info = bisp_step(block, [0.0], [0.0], H, block.friction)
        assert qdot1[0] / H == pytest.approx(accel, abs=1e-8)
        np.testing.assert_allclose(info.reactions[0], [0, 0, 0, 0, 0, G * np.cos(np.pi / 6)], atol=1e-8)
        assert info.beta.sum() / H == pytest.approx(friction, abs=1e-8)


def distribute(model, kin, f_alpha):
    """The page's backward sweep (Alg. 8, lines 11-13)."""
    W = f_alpha.reshape(model.n, 6).copy()
    for i in reversed(range(model.n)):
        p = model.parents[i]
        if p >= 0:
            W[p] += kin.A_ip[i].T @ W[i]
    return W


def _frame(p):
    E = np.eye(4)
    E[:3, 3] = p
    return E


@cache
def chain():
    bar = dict(joint=Revolute([0, 0, 1.0]), T_joint_body=_frame([0.2, 0, 0]), mass=1.0,
               inertia=np.diag([0.001, 0.01, 0.01]))
    return Model([Body("inner", -1, T_parent_joint=np.eye(4), **bar),
                  Body("outer", 0, T_parent_joint=_frame([0.4, 0, 0]), **bar)], gravity=[0, 0, 0])


NO_FRICTION = [JointFriction(i, 0.0, Cylinder(0.01, 0.02)) for i in range(2)]


def _printed(model, q, qdot, info):
    """Eq. (2.124) as printed: without M_m Jdot qdot."""
    _, Jdot = jacobian_and_derivative(model, q, qdot)
    return info.f_alpha - (model.spatial_inertias @ (Jdot @ qdot).reshape(model.n, 6, 1)).ravel()


def test_the_sweep_is_the_librarys_and_reactions_do_no_work_along_their_joints():
    model, q, qdot = chain(), np.array([0.0, 0.7]), np.array([3.0, 5.0])
    _, _, info = bisp_step(model, q, qdot, H, NO_FRICTION)
    kin = forward_kinematics(model, q, qdot)
    reactions = distribute(model, kin, info.f_alpha)
    np.testing.assert_allclose(reactions, info.reactions, rtol=0, atol=1e-12)
    for i in range(2):
        S = joint_twist_adjoints(model)[i] @ kin.S[i]
        assert abs(S.T @ reactions[i]).max() < 1e-12
    # the check can fail: a sweep that forgets the adjoint gives other reactions
    wrong = info.f_alpha.reshape(2, 6).copy()
    wrong[0] += wrong[1]
    assert np.abs(wrong - info.reactions).max() > 0.1


def test_the_outer_hinge_carries_the_centripetal_force_and_the_printed_eq_2124_does_not():
    model, q, qdot = chain(), np.zeros(2), np.array([3.0, 5.0])
    _, _, info = bisp_step(model, q, qdot, H, NO_FRICTION)
    kin = forward_kinematics(model, q, qdot)
    centripetal = 1.0 * (3.0 ** 2 * 0.4 + 8.0 ** 2 * 0.2)
    assert centripetal == pytest.approx(16.40)
    load = np.linalg.norm(distribute(model, kin, info.f_alpha)[1, 3:])
    assert abs(load / centripetal - 1) < 1e-9
    printed = np.linalg.norm(distribute(model, kin, _printed(model, q, qdot, info))[1, 3:])
    assert round(printed, 2) == 22.40 and round(100 * (printed / centripetal - 1)) == 37
    bent = np.array([0.0, 0.7])
    _, _, info = bisp_step(model, bent, qdot, H, NO_FRICTION)
    J, _ = jacobian_and_derivative(model, bent, qdot)
    assert np.abs(J.T @ info.f_alpha).max() < 1e-12
    assert np.abs(J.T @ _printed(model, bent, qdot, info)).max() > 0.1


@cache
def wheel():
    m, radius = 2.0, 0.1
    return Model([Body("wheel", -1, Revolute([0, 1.0, 0]), np.eye(4), np.eye(4), m,
                       np.diag([0.25, 0.5, 0.25]) * m * radius ** 2)])


def test_the_pin_holds_mu_r_m_g_and_spreads_the_weight_over_four_signed_rows():
    m, I, mu, r = 2.0, 0.5 * 2.0 * 0.1 ** 2, 0.4, 0.01
    holding = mu * r * m * G
    assert round(holding, 4) == 0.0785
    pin = [JointFriction(0, mu, Cylinder(r, 0.02))]
    for share in (0.9, 1.5):
        _, qdot1, info = bisp_step(wheel(), [0.0], [0.0], H, pin, tau=[share * holding])
        assert qdot1[0] / H == pytest.approx(max(0.0, (share - 1) * holding / I), abs=1e-7)
    alpha = info.alpha[0] / H
    loaded = np.abs(alpha) > 1e-6 * np.abs(alpha).max()
    assert loaded.sum() == 4
    np.testing.assert_allclose(np.sort(alpha[loaded]), [-m * G / 4] * 2 + [m * G / 4] * 2, rtol=1e-8)
    # the printed bound -mu alpha <= beta <= mu alpha is empty on the two negative rows
    assert np.count_nonzero(-mu * alpha[loaded] > mu * alpha[loaded]) == 2
    assert (info.bound >= 0).all()


def test_the_printed_line_26_would_double_a_motors_torque():
    tau, I = 0.5, 0.5 * 2.0 * 0.1 ** 2
    _, qdot1, info = bisp_step(wheel(), [0.0], [0.0], H, [JointFriction(0, 0.0, Cylinder(0.01, 0.02))],
                               tau=[tau])
    J, _ = jacobian_and_derivative(wheel(), [0.0], [0.0])
    assert abs((J.T @ info.f_alpha)[0] - tau) < 1e-12
    assert qdot1[0] / H == pytest.approx(tau / I, rel=1e-12)
    line26 = qdot1 + H * np.linalg.solve(mass_matrix(wheel(), [0.0]), J.T @ info.f_alpha)
    assert line26[0] / H == pytest.approx(2 * tau / I, rel=1e-12)


# ----------------------------------------------------------------------------- the reference scenes
@cache
def run(sid):
    return scene(sid).simulate("euler")


@pytest.mark.parametrize("sid", [27, 28, 29])
def test_joint_friction_scenes_lose_energy_stick_and_slip_within_few_passes(sid):
    tr, model = run(sid), scene(sid).model
    H_ = tr.T + tr.V
    assert np.diff(H_).max() <= 1e-9 * np.ptp(H_) and H_[-1] < H_[0]
    assert tr.friction_iterations.max() <= 20 and np.median(tr.friction_iterations) <= 6
    rates = joint_rates(model, tr.qdot[1:])
    assert (rates < STUCK).any() and (rates >= STUCK).any()   # some joint sticks, some slides
    # "a joint that sticks is held still, to within 1e-11": nothing between that and STUCK
    assert not ((rates > 1e-11) & (rates < STUCK)).any()


def test_a_step_with_nothing_changing_takes_two_passes():
    assert set(run(29).friction_iterations) == {2}
    tr = run(28)                       # both ball joints hold for the last half second
    still = (joint_rates(scene(28).model, tr.qdot[1:]) < STUCK).all(axis=1)
    assert still[-50:].all() and set(tr.friction_iterations[-50:]) == {2}


@cache
def scene31():
    s = scene(31)
    steps = int(round((s.t_span[1] - s.t_span[0]) / s.h))
    return s, frictional_steps(s.model, s.q0, s.qdot0, s.h, steps, baumgarte=s.baumgarte)


def test_scene31_lands_drags_at_the_bound_and_comes_to_rest():
    s, steps = scene31()
    tr = run(31)
    np.testing.assert_array_equal(steps.q, tr.q)
    floor = s.model.constraints[0]
    gap = (tr.E_wi[:, floor.body, :3, 3] - floor.plane[:3, 3]) @ floor.normal - floor.radius
    normal = np.array([info.lam_C[0] for info in steps.infos])
    beta = np.array([info.beta[-2:] for info in steps.infos])
    bound = np.array([info.bound[-2:] for info in steps.infos])
    sliding = np.array([np.abs(info.sliding[-2:]).max() for info in steps.infos])
    assert round(tr.t[1:][normal > 0][0], 2) == 0.11 and gap.min() > -1e-6
    assert (np.abs(beta) <= bound * (1 + 1e-9)).all()
    dragging = sliding > 1e-6
    assert dragging.sum() > 10
    np.testing.assert_allclose(np.abs(beta[dragging]).max(axis=1), bound[dragging, 0], rtol=1e-9)
    stuck = (joint_rates(s.model, tr.qdot) < STUCK).all(axis=1)
    rest = tr.t[np.flatnonzero(~stuck)[-1] + 1]
    assert round(rest, 2) == 0.90
    assert (np.abs(beta[-50:]).max(axis=1) < 0.5 * bound[-50:, 0]).all()   # well inside the bound
    H_ = tr.T + tr.V
    assert np.diff(H_).max() <= 1e-9 * np.ptp(H_)


def test_scene30_runs_with_friction_in_its_closing_hinge():
    tr = scene(30).simulate("euler", t_span=(0.0, 0.05))
    assert any(type(f).__name__ == "ClosureFriction" for f in scene(30).model.friction)
    assert len(tr.friction_iterations) == 10


# ----------------------------------------------------------------------------- explore
@cache
def slides():
    return slide_runs()


def test_the_slide_explorer_verdicts():
    runs = slides()
    assert sorted(runs.runs) == [(m, a) for m in (0.2, 0.4, 0.6, 0.8) for a in (15.0, 25.0, 35.0, 45.0)]
    for (mu, theta), r in runs.runs.items():
        s, c = np.sin(np.radians(theta)), np.cos(np.radians(theta))
        a = np.diff(r.v) / runs.h
        assert np.abs(a[r.v[1:] > STUCK] + G * (s + mu * c)).max() < 1e-8
        if mu >= np.tan(np.radians(theta)):
            assert np.abs(r.v[-10:]).max() < STUCK and abs(r.friction[-1] - G * s) < 1e-8
        else:
            assert abs(a[-1] + G * (s - mu * c)) < 1e-8
        assert (np.abs(r.friction) <= r.bound * (1 + 1e-12)).all()
        v, _ = coulomb_slide(mu, theta, runs.v0, r.t)
        assert np.abs(r.v - v).max() <= runs.h * G * (s + mu * c)
        assert set(r.iterations) == {2}


def test_the_static_panels_friction_switches_as_the_page_says():
    runs = slides()
    N = lambda theta: G * np.cos(np.radians(theta))  # noqa: E731
    low, high = runs.runs[(0.4, 15.0)], runs.runs[(0.4, 35.0)]
    # below the threshold: -mu N up the slope, then exactly m g sin theta, inside the bound
    assert low.friction[0] == pytest.approx(-0.4 * N(15.0), rel=1e-8)
    assert low.friction[-1] == pytest.approx(G * np.sin(np.radians(15.0)), rel=1e-8)
    assert low.friction[-1] < 0.7 * low.bound[-1]
    # above: from -mu N to +mu N as the block turns round
    assert high.friction[0] == pytest.approx(-0.4 * N(35.0), rel=1e-8)
    assert high.friction[-1] == pytest.approx(0.4 * N(35.0), rel=1e-8)
    assert round(np.degrees(np.arctan(0.4)), 1) == 21.8      # the threshold of the page
