"""Unit tests of redmax_edu.maximal.forces: every force's wrench, stiffness K and damping D (§1.9).

K = df/dq is checked against central differences along body twists (``E_k exp([dq_k])``,
the perturbation of Eq. 1.11, through ``check_derivative(..., space="se3")`` on the stack of
the three bodies' poses) and D = df/dphi against differences in the twists. Each check is
paired with a deliberately wrong derivative (one block with its sign flipped) that must fail,
so the comparison is known to have teeth. Potentials are checked the same way: -dV/dq = f.

Tolerances: ``check_derivative``'s default rtol = 1e-6 sits between the ~1e-10 a central
difference reaches on these smooth forces (best step of the sweep) and the O(1) relative error
of a wrong block.
"""

import numpy as np
import pytest

from redmax_edu.checks import check_derivative
from redmax_edu.lie import brac, exp_se3, gamma, log_so3, random_transform
from redmax_edu.maximal.forces import (
    Attachment,
    BodyDamping,
    CableLaw,
    Coriolis,
    ForceTerms,
    FrameSpring,
    Gravity,
    GroundPenalty,
    LinearSpringDamper,
    PointForce,
    PointSpring,
    Spring,
    assemble_point_forces,
)

N_BODIES = 3
M_BODY = np.diag([0.2, 0.3, 0.4, 2.0, 2.0, 2.0])
#: Points of the ground-contact body in its own coordinates.
GROUND_POINTS = np.array([[0.3, 0.2, -0.1], [-0.3, 0.2, -0.1], [0.3, -0.2, 0.1], [-0.3, -0.2, 0.1],
                          [0.0, 0.25, 0.2]])
GROUND_NORMAL = np.array([0.2, -0.1, 1.0]) / np.linalg.norm([0.2, -0.1, 1.0])
KN = 200.0
#: Steps of the finite-difference sweeps: central differences bottom out near eps^(1/3) ~ 6e-6,
#: so 1e-3 ... 1e-7 brackets the best step (the full default sweep costs 2.4x more evaluations).
SWEEP = np.logspace(-3, -7, 5)


def draw_state(rng, k):
    """Random poses (3, 4, 4) and twists (3, 6) from child generator number k of the seeded rng."""
    child = rng.spawn(k + 1)[-1]
    E = np.stack([random_transform(child) for _ in range(N_BODIES)])
    phi = child.standard_normal((N_BODIES, 6))
    return E, phi


@pytest.fixture(params=[0, 1, 2], ids=["state0", "state1", "state2"])
def state(rng, request):
    return draw_state(rng, request.param)


# --- independent kinematics (recomputed here, not taken from the library) ---------------------


def world_point(E, att):
    """x = R r + p, or r itself for a world point."""
    if att.body < 0:
        return att.r
    return E[att.body, :3, :3] @ att.r + E[att.body, :3, 3]


def world_velocity(E, phi, body, r):
    """v = R (omega x r + nu) (Eq. 1.12); zero for a world point (body -1)."""
    if body < 0:
        return np.zeros(3)
    return E[body, :3, :3] @ (np.cross(phi[body, :3], r) + phi[body, 3:])


def path_length(E, points):
    x = np.array([world_point(E, a) for a in points])
    return float(np.linalg.norm(np.diff(x, axis=0), axis=1).sum())


def ground_state(force, E, phi):
    """Signed distances d of the contact points, and the tangential speeds |a| = |T v|."""
    d, speed = [], []
    for att in force.points:
        x = world_point(E, att)
        v = world_velocity(E, phi, att.body, att.r)
        d.append(float(force.n @ (x - force.xg)))
        speed.append(float(np.linalg.norm(v - (v @ force.n) * force.n)))
    return np.array(d), np.array(speed)


# --- the forces under test -------------------------------------------------------------------

FOUR_POINTS = ([0, [0.1, 0.2, -0.3]], [-1, [1.0, -0.5, 0.8]], [1, [-0.2, 0.1, 0.3]], [2, [0.3, 0.0, -0.2]])


def four_point_path():
    return [Attachment(b, r) for b, r in FOUR_POINTS]


def ground_penalty(E, kt, mu, kd):
    """Penalty ground under body 1, through the mean of its contact points: some are below."""
    x = GROUND_POINTS @ E[1, :3, :3].T + E[1, :3, 3]
    return GroundPenalty(1, GROUND_POINTS, kn=KN, kd=kd, kt=kt, mu=mu, plane_point=x.mean(axis=0),
                         plane_normal=GROUND_NORMAL)


def frame_spring(b, damped):
    E_a_1 = exp_se3([0.3, -0.2, 0.5, 0.1, 0.2, -0.1])  # fixed frames; the state varies
    E_b_2 = exp_se3([-0.4, 0.1, 0.2, -0.2, 0.0, 0.15])
    return FrameSpring(0, E_a_1, b, E_b_2, kt=15.0, kr=4.0, dt=1.5 * damped, dr=0.7 * damped)


#: name -> builder(E, phi, damped): the force at that state, with damping unless damped=False.
FORCES = {
    "gravity": lambda E, phi, damped: Gravity(1, 2.5),
    "point_force": lambda E, phi, damped: PointForce(2, [0.1, -0.4, 0.2], [0.3, 1.0, -0.5], k=3.0),
    "body_damping": lambda E, phi, damped: BodyDamping(0, 0.7),
    "body_damping_split": lambda E, phi, damped: BodyDamping(2, 0.7, linear=4.0),
    "coriolis": lambda E, phi, damped: Coriolis(1, M_BODY),
    "point_spring": lambda E, phi, damped: PointSpring(
        Attachment(0, [0.1, 0.2, 0.3]), Attachment(2, [-0.3, 0.1, 0.2]), 20.0, 1.5 * damped),
    "point_spring_to_world": lambda E, phi, damped: PointSpring(
        Attachment(1, [0.2, -0.1, 0.1]), Attachment(-1, [0.5, 0.5, 2.0]), 20.0, 1.5 * damped),
    "spring_2_points": lambda E, phi, damped: Spring(
        [Attachment(0, [0.1, 0.2, 0.3]), Attachment(2, [-0.3, 0.1, 0.2])],
        LinearSpringDamper(15.0, 2.0 * damped, rest_length=0.5)),
    "spring_4_points_via_world": lambda E, phi, damped: Spring(
        four_point_path(), LinearSpringDamper(15.0, 2.0 * damped, rest_length=0.5)),
    "cable_stretched": lambda E, phi, damped: Spring(
        four_point_path(), CableLaw(15.0, 2.0 * damped, rest_length=0.6 * path_length(E, four_point_path()))),
    "cable_slack": lambda E, phi, damped: Spring(
        four_point_path(), CableLaw(15.0, 2.0 * damped, rest_length=1.5 * path_length(E, four_point_path()))),
    "ground_static_friction": lambda E, phi, damped: ground_penalty(E, kt=1.0, mu=1.0, kd=5.0 * damped),
    "ground_dynamic_friction": lambda E, phi, damped: ground_penalty(E, kt=1e3, mu=0.2, kd=5.0 * damped),
    "frame_spring": lambda E, phi, damped: frame_spring(2, damped),
    "frame_spring_to_world": lambda E, phi, damped: frame_spring(-1, damped),
}
#: Forces whose K or D is nonzero, so that a flipped block exists (a slack cable exerts nothing).
ACTIVE = [name for name in FORCES if name != "cable_slack"]
#: Forces with a potential energy: gravity and the elastic ones (their damping is switched off).
CONSERVATIVE = ["gravity", "point_force", "point_spring", "point_spring_to_world", "spring_2_points",
                "spring_4_points_via_world", "cable_stretched", "ground_static_friction",
                "frame_spring", "frame_spring_to_world"]


def stiffness_check(force, E, phi, K):
    return check_derivative(lambda X: force.evaluate(X, phi).f, E, K, space="se3", steps=SWEEP)


def damping_check(force, E, phi, D):
    return check_derivative(lambda p: force.evaluate(E, p.reshape(N_BODIES, 6)).f, phi.ravel(), D,
                            steps=SWEEP)


def flip_largest_block(A):
    """A copy of the (6n, 6n) matrix A with its largest 6x6 block negated: a wrong sign."""
    norms = np.linalg.norm(A.reshape(N_BODIES, 6, N_BODIES, 6), axis=(1, 3))
    i, j = np.unravel_index(np.argmax(norms), norms.shape)
    wrong = A.copy()
    wrong[6 * i: 6 * i + 6, 6 * j: 6 * j + 6] *= -1
    return wrong


# --- K and D against finite differences ------------------------------------------------------


@pytest.mark.parametrize("name", list(FORCES))
def test_stiffness_matrix_matches_finite_differences_along_body_twists(state, name):
    E, phi = state
    force = FORCES[name](E, phi, True)
    terms = force.evaluate(E, phi)
    assert terms.f.shape == (6 * N_BODIES,) and terms.K.shape == terms.D.shape == (18, 18)
    check = stiffness_check(force, E, phi, terms.K)
    assert check.ok, f"{name}: K relative error {check.error:.1e}"


@pytest.mark.parametrize("name", list(FORCES))
def test_damping_matrix_matches_finite_differences_in_the_twists(state, name):
    E, phi = state
    force = FORCES[name](E, phi, True)
    check = damping_check(force, E, phi, force.evaluate(E, phi).D)
    assert check.ok, f"{name}: D relative error {check.error:.1e}"


@pytest.mark.parametrize("name", list(FORCES))
def test_wrench_alone_is_the_f_of_evaluate(state, name):
    """What the explicit integrators ask for (Force.wrench, no K or D) is exactly evaluate's f."""
    E, phi = state
    force = FORCES[name](E, phi, True)
    np.testing.assert_array_equal(force.wrench(E, phi), force.evaluate(E, phi).f)


@pytest.mark.parametrize("name", ACTIVE)
def test_a_flipped_block_of_k_or_d_fails_the_check(rng, name):
    E, phi = draw_state(rng, 0)  # one state suffices: a wrong sign is wrong everywhere
    force = FORCES[name](E, phi, True)
    terms = force.evaluate(E, phi)
    flipped = 0
    if np.any(terms.K):
        assert not stiffness_check(force, E, phi, flip_largest_block(terms.K)).ok
        flipped += 1
    if np.any(terms.D):
        assert not damping_check(force, E, phi, flip_largest_block(terms.D)).ok
        flipped += 1
    assert flipped >= 1  # every active force has a nonzero K or D to get wrong


def test_slack_cable_exerts_nothing_and_has_zero_derivatives(state):
    E, phi = state
    force = FORCES["cable_slack"](E, phi, True)
    terms = force.evaluate(E, phi)
    for array in (terms.f, terms.K, terms.D):
        np.testing.assert_array_equal(array, 0.0)
    # while the stretched cable on the same path pulls
    assert np.linalg.norm(FORCES["cable_stretched"](E, phi, True).evaluate(E, phi).f) > 1.0


@pytest.mark.parametrize("name", ["ground_static_friction", "ground_dynamic_friction"])
def test_ground_penalty_states_are_in_the_intended_friction_regime(state, name):
    """Recompute k_t |a| against mu k_n |d| for each penetrating point (Eq. 1.56 vs 1.59)."""
    E, phi = state
    force = FORCES[name](E, phi, True)
    d, speed = ground_state(force, E, phi)
    inside = d < 0
    assert inside.any() and (~inside).any()  # the plane goes through the points: both kinds
    # no point sits within the finite-difference reach of a switch (d = 0 or the friction kink)
    assert np.abs(d).min() > 1e-3
    static = force.kt * speed[inside] <= force.mu * force.kn * np.abs(d[inside])
    if name == "ground_static_friction":
        assert static.all()
    else:
        assert not static.any()


# --- wrench values against the closed forms of the writeup -------------------------------------------


def wrench_of(E, body, r, F):
    """The body wrench Gamma(r)^T R^T F of a world force F at body point r (Eq. 1.13)."""
    Rt_F = E[body, :3, :3].T @ F
    return np.concatenate([np.cross(r, Rt_F), Rt_F])


def test_gravity_wrench_is_eq_1_34(state):
    E, phi = state
    f = Gravity(1, 2.5).evaluate(E, phi).f
    expected = np.zeros(18)
    expected[9:12] = E[1, :3, :3].T @ [0.0, 0.0, -2.5 * 9.81]
    np.testing.assert_allclose(f, expected, rtol=0, atol=1e-14)


@pytest.mark.parametrize("name", ["point_spring", "point_spring_to_world"])
def test_point_spring_wrenches_are_eq_1_40_and_eq_1_45(state, name):
    E, phi = state
    force = FORCES[name](E, phi, True)
    (p1, p2), ks, kd = force.points, 20.0, 1.5
    dx = world_point(E, p2) - world_point(E, p1)
    dv = world_velocity(E, phi, p2.body, p2.r) - world_velocity(E, phi, p1.body, p1.r)
    F1 = ks * dx + kd * dv  # pulls point 1 toward point 2
    expected = np.zeros(18)
    for att, F in ((p1, F1), (p2, -F1)):
        if att.body >= 0:
            expected[6 * att.body: 6 * att.body + 6] += wrench_of(E, att.body, att.r, F)
    np.testing.assert_allclose(force.evaluate(E, phi).f, expected, rtol=0, atol=1e-12)  # O(10) values


def test_multi_point_spring_pulls_every_point_toward_its_neighbours_with_one_tension(state):
    E, phi = state
    law = LinearSpringDamper(15.0, 2.0, rest_length=0.5)
    points = four_point_path()
    x = np.array([world_point(E, a) for a in points])
    v = np.array([world_velocity(E, phi, a.body, a.r) for a in points])
    seg = np.diff(x, axis=0)
    lk = np.linalg.norm(seg, axis=1)
    u = seg / lk[:, None]
    l, ldot = lk.sum(), float(np.sum(u * np.diff(v, axis=0)))  # Eq. (1.73)-(1.74)
    tension = (15.0 * (l - 0.5) + 2.0 * ldot) / 0.5
    expected = np.zeros(18)
    for k, att in enumerate(points):
        pull = (u[k] if k < len(u) else 0.0) - (u[k - 1] if k > 0 else 0.0)
        if att.body >= 0:
            expected[6 * att.body: 6 * att.body + 6] += wrench_of(E, att.body, att.r, tension * pull)
    spring = Spring(points, law)
    assert spring.length(E, phi) == pytest.approx((l, ldot), rel=1e-13)
    np.testing.assert_allclose(spring.evaluate(E, phi).f, expected, rtol=0, atol=1e-11)  # O(100) values


@pytest.mark.parametrize("b", [2, -1], ids=["two bodies", "to the world"])
def test_frame_spring_wrench_is_a_point_spring_plus_the_torque_k_r_theta(state, b):
    E, phi = state
    force = frame_spring(b, False)
    F1 = E[0] @ force.E_a_1
    F2 = (E[b] if b >= 0 else np.eye(4)) @ force.E_b_2
    theta = log_so3(F1[:3, :3].T @ F2[:3, :3])  # rotation of frame 2 relative to frame 1
    pull = 15.0 * (F2[:3, 3] - F1[:3, 3])
    expected = np.zeros(18)
    expected[0:6] = wrench_of(E, 0, force.E_a_1[:3, 3], pull)
    expected[0:3] += 4.0 * force.E_a_1[:3, :3] @ theta  # torque k_r theta about frame 1's axes
    if b >= 0:
        expected[6 * b: 6 * b + 6] = wrench_of(E, b, force.E_b_2[:3, 3], -pull)
        expected[6 * b: 6 * b + 3] -= 4.0 * force.E_b_2[:3, :3] @ theta
    np.testing.assert_allclose(force.evaluate(E, phi).f, expected, rtol=0, atol=1e-12)


# --- potentials -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CONSERVATIVE)
def test_force_is_minus_the_gradient_of_its_potential_energy(state, name):
    E, phi = state
    force = FORCES[name](E, phi, False)
    if isinstance(force, GroundPenalty):  # friction off: the elastic normal force alone
        force = ground_penalty(E, kt=0.0, mu=0.0, kd=0.0)
    f = force.evaluate(E, phi).f
    assert np.linalg.norm(f) > 0.1  # a nonzero force, so that the sign matters
    assert check_derivative(force.potential_energy, E, -f, space="se3", steps=SWEEP).ok
    assert not check_derivative(force.potential_energy, E, f, space="se3", steps=SWEEP).ok


@pytest.mark.parametrize("name", ["body_damping", "coriolis"])
def test_forces_without_a_potential_report_zero_energy(state, name):
    E, phi = state
    assert FORCES[name](E, phi, True).potential_energy(E) == 0.0


def test_gravity_potential_is_minus_m_g_dot_p(state):
    E, _ = state
    # one dot product: a few ulps
    assert Gravity(1, 2.5).potential_energy(E) == pytest.approx(2.5 * 9.81 * E[1, 2, 3], rel=1e-14)


def test_frame_spring_energy_is_the_sum_of_its_two_quadratic_terms(state):
    E, _ = state
    force = frame_spring(2, False)
    x1 = E[0] @ force.E_a_1
    x2 = E[2] @ force.E_b_2
    theta = log_so3(x1[:3, :3].T @ x2[:3, :3])
    expected = 0.5 * 15.0 * np.sum((x2[:3, 3] - x1[:3, 3]) ** 2) + 0.5 * 4.0 * theta @ theta
    assert force.potential_energy(E) == pytest.approx(expected, rel=1e-12)  # one log, a few ulps


# --- ground penalty: the physics of each term -------------------------------------------------------


def single_point_ground(E, phi, r, depth, kt=0.0, mu=0.0, kd=0.0):
    """A ground plane placed so that body 1's point r is `depth` below it (negative: above)."""
    x = E[1, :3, :3] @ r + E[1, :3, 3]
    return GroundPenalty(1, [r], kn=KN, kd=kd, kt=kt, mu=mu, plane_point=x + depth * GROUND_NORMAL,
                         plane_normal=GROUND_NORMAL)


def world_force_at_the_point(force, E, phi):
    """Gamma^T R^T F has R^T F as its linear part: rotate it back to the world."""
    return E[1, :3, :3] @ force.evaluate(E, phi).f[9:12]


def test_ground_penalty_is_zero_above_the_ground(state):
    E, phi = state
    x = GROUND_POINTS @ E[1, :3, :3].T + E[1, :3, 3]
    below_all = x.min(axis=0) - 0.05  # a horizontal plane under every point
    force = GroundPenalty(1, GROUND_POINTS, kn=KN, kd=5.0, kt=10.0, mu=0.5, plane_point=below_all)
    terms = force.evaluate(E, phi)
    for array in (terms.f, terms.K, terms.D):
        np.testing.assert_array_equal(array, 0.0)
    assert force.potential_energy(E) == 0.0


def test_ground_penalty_normal_force_pushes_out_with_k_n_times_depth(state):
    E, phi = state
    force = single_point_ground(E, phi, np.array([0.2, 0.1, -0.3]), depth=0.05)
    F = world_force_at_the_point(force, E, phi)
    # one rotation each way: round-off ~1e-15 on a force of 10
    np.testing.assert_allclose(F, KN * 0.05 * GROUND_NORMAL, rtol=0, atol=1e-12)
    assert F @ GROUND_NORMAL > 0


def test_ground_penalty_normal_damping_resists_the_normal_velocity(state):
    E, phi = state
    r = np.array([0.2, 0.1, -0.3])
    force = single_point_ground(E, phi, r, depth=0.05, kd=5.0)
    v = world_velocity(E, phi, 1, r)
    F = world_force_at_the_point(force, E, phi)
    expected = KN * 0.05 * GROUND_NORMAL - 5.0 * (v @ GROUND_NORMAL) * GROUND_NORMAL
    np.testing.assert_allclose(F, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("kt", "mu", "regime"), [(1.0, 1.0, "static"), (1e3, 0.2, "dynamic")])
def test_ground_penalty_friction_opposes_the_tangential_velocity(state, kt, mu, regime):
    E, phi = state
    r = np.array([0.2, 0.1, -0.3])
    force = single_point_ground(E, phi, r, depth=0.05, kt=kt, mu=mu)
    v = world_velocity(E, phi, 1, r)
    a = v - (v @ GROUND_NORMAL) * GROUND_NORMAL
    is_static = kt * np.linalg.norm(a) <= mu * KN * 0.05
    assert is_static == (regime == "static")
    F = world_force_at_the_point(force, E, phi)
    friction = F - (F @ GROUND_NORMAL) * GROUND_NORMAL
    assert friction @ a < 0
    np.testing.assert_allclose(np.cross(friction, a), 0.0, atol=1e-12)  # antiparallel
    magnitude = kt * np.linalg.norm(a) if is_static else mu * KN * 0.05  # Eq. (1.56) / (1.59)
    assert np.linalg.norm(friction) == pytest.approx(magnitude, rel=1e-12)


# --- scalar spring laws -----------------------------------------------------------------------------


def law_check(law, l, ldot):
    """check_derivative of f(l, ldot) against the law's own (df/dl, df/dldot)."""
    _, f_l, f_ldot = law(l, ldot)
    return check_derivative(lambda x: law(x[0], x[1])[0], np.array([l, ldot]), np.array([f_l, f_ldot]))


def test_linear_spring_damper_value_is_k_strain_plus_d_strain_rate():
    law = LinearSpringDamper(k=12.0, d=3.0, rest_length=0.8)
    f, f_l, f_ldot = law(1.1, -0.4)
    assert f == pytest.approx((12.0 * 0.3 + 3.0 * -0.4) / 0.8, rel=1e-14)
    assert (f_l, f_ldot) == pytest.approx((12.0 / 0.8, 3.0 / 0.8), rel=1e-14)
    assert law(0.8, 0.0)[0] == 0.0  # no force at rest length and rest
    assert law(0.5, 0.0)[0] < 0 < law(1.0, 0.0)[0]  # pushes when compressed, pulls when stretched


@pytest.mark.parametrize("l", [0.5, 1.1])
def test_linear_spring_damper_derivatives_match_finite_differences(l):
    law = LinearSpringDamper(k=12.0, d=3.0, rest_length=0.8)
    assert law_check(law, l, -0.4).ok
    _, f_l, f_ldot = law(l, -0.4)
    wrong = check_derivative(lambda x: law(x[0], x[1])[0], np.array([l, -0.4]), np.array([-f_l, f_ldot]))
    assert not wrong.ok


def test_cable_law_is_the_spring_law_when_stretched_and_zero_when_slack():
    spring, cable = LinearSpringDamper(12.0, 3.0, 0.8), CableLaw(12.0, 3.0, 0.8)
    assert cable(1.1, -0.4) == spring(1.1, -0.4)
    assert cable(0.7, 5.0) == (0.0, 0.0, 0.0)  # slack, even while shortening fast
    assert cable(0.8, 1.0) == (0.0, 0.0, 0.0)  # exactly at rest length: still slack
    assert law_check(cable, 1.1, -0.4).ok
    assert law_check(cable, 0.7, 0.3).ok  # zero against zero differences away from the kink


def test_spring_law_energy_derivative_is_the_elastic_force():
    for law, l in [(LinearSpringDamper(12.0, 3.0, 0.8), 0.6), (LinearSpringDamper(12.0, 3.0, 0.8), 1.1),
                   (CableLaw(12.0, 3.0, 0.8), 1.1), (CableLaw(12.0, 3.0, 0.8), 0.6)]:
        elastic = law(l, 0.0)[0]
        assert check_derivative(lambda x, law=law: law.energy(x[0]), np.array([l]), np.array([elastic])).ok
    assert CableLaw(12.0, 3.0, 0.8).energy(0.6) == 0.0


# --- assemble_point_forces: the closed forms of Eq. (1.30) and (1.32) -------------------------------


def test_constant_world_force_at_a_body_point_gives_eq_1_30_and_eq_1_32(state):
    E, phi = state
    r, a, k = np.array([0.3, -0.2, 0.5]), np.array([0.4, -1.0, 0.7]), 2.5
    terms = assemble_point_forces(E, phi, [Attachment(1, r)], (k * a)[None])
    Rta = E[1, :3, :3].T @ a
    wrench = k * gamma(r).T @ Rta  # Eq. (1.30): k Gamma^T R^T a = k ([r] R^T a, R^T a)
    np.testing.assert_allclose(wrench[:3], k * np.cross(r, Rta), rtol=0, atol=1e-14)
    K_block = np.zeros((6, 6))  # Eq. (1.32)
    K_block[:3, :3] = k * brac(r) @ brac(Rta)
    K_block[3:, :3] = k * brac(Rta)
    expected_f, expected_K = np.zeros(18), np.zeros((18, 18))
    expected_f[6:12], expected_K[6:12, 6:12] = wrench, K_block
    np.testing.assert_allclose(terms.f, expected_f, rtol=0, atol=1e-13)  # O(1) products: round-off
    np.testing.assert_allclose(terms.K, expected_K, rtol=0, atol=1e-13)
    np.testing.assert_array_equal(terms.D, 0.0)
    # and the closed form is itself the derivative
    assert stiffness_check(PointForce(1, r, a, k), E, phi, expected_K).ok


def test_force_at_a_world_point_exerts_no_wrench(state):
    E, phi = state
    terms = assemble_point_forces(E, phi, [Attachment(-1, [1.0, 2.0, 3.0])], np.array([[1.0, 0.0, 0.0]]))
    for array in (terms.f, terms.K, terms.D):
        np.testing.assert_array_equal(array, 0.0)


# --- ForceTerms and Attachment ----------------------------------------------------------------------


def test_force_terms_add_field_by_field(rng):
    a = ForceTerms(rng.standard_normal(12), rng.standard_normal((12, 12)), rng.standard_normal((12, 12)))
    b = ForceTerms(rng.standard_normal(12), rng.standard_normal((12, 12)), rng.standard_normal((12, 12)))
    total = a + b
    np.testing.assert_array_equal(total.f, a.f + b.f)
    np.testing.assert_array_equal(total.K, a.K + b.K)
    np.testing.assert_array_equal(total.D, a.D + b.D)
    zero = ForceTerms.zeros(2)
    assert zero.f.shape == (12,) and zero.K.shape == zero.D.shape == (12, 12)
    same = a + zero
    np.testing.assert_array_equal(same.f, a.f)
    np.testing.assert_array_equal(same.K, a.K)


def test_attachment_stores_a_float_point_and_defaults_to_the_origin():
    att = Attachment(2, [1, 2, 3])
    assert att.r.dtype == float and att.r.shape == (3,)
    np.testing.assert_array_equal(Attachment(0).r, np.zeros(3))
    assert Attachment(-1, [0.0, 0.0, 1.0]).body == -1  # the world


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"body": -2}, "body"),
    ({"body": 1.0}, "body"),
    ({"body": 0, "r": [1.0, 2.0]}, "'r'"),
    ({"body": 0, "r": [1.0, np.nan, 2.0]}, "'r'"),
], ids=["body -2", "float body", "r of shape (2,)", "NaN in r"])
def test_attachment_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Attachment(**kwargs)


# --- bad arguments --------------------------------------------------------------------------------


def zero_length_spring():
    spring = Spring([Attachment(0, [0.1, 0.0, 0.0]), Attachment(1, [0.1, 0.0, 0.0])], LinearSpringDamper(1.0))
    spring.evaluate(np.stack([np.eye(4)] * 3), np.zeros((3, 6)))


@pytest.mark.parametrize(("make", "match"), [
    (lambda: PointSpring(Attachment(0), Attachment(1), stiffness=-1.0), "'stiffness'"),
    (lambda: PointSpring(Attachment(0), Attachment(1), stiffness=1.0, damping=-0.1), "'damping'"),
    (lambda: PointForce(0, [0, 0, 0], [1.0, np.nan, 0.0]), "'direction'"),
    (lambda: Attachment(-2), "body"),
    (lambda: Gravity(-2, 1.0), "'body'"),
    (lambda: Gravity(0, 0.0), "'mass'"),
    (lambda: BodyDamping(0, np.nan), "'d'"),
    (lambda: BodyDamping(0, 1.0, linear=-2.0), "'linear'"),
    (lambda: Coriolis(0, np.eye(5)), "'M'"),
    (lambda: GroundPenalty(0, [[0, 0, 0]], kn=1.0, plane_normal=[0, 0, 0]), "'plane_normal'"),
    (lambda: GroundPenalty(0, [[0, 0, 0]], kn=-1.0), "'kn'"),
    (lambda: GroundPenalty(0, [[0, 0, 0]], kn=1.0, mu=-0.5), "'mu'"),
    (lambda: Spring([Attachment(0)], LinearSpringDamper(1.0)), "'points'"),
    (lambda: LinearSpringDamper(-1.0), "'k'"),
    (lambda: LinearSpringDamper(1.0, rest_length=0.0), "'rest_length'"),
    (lambda: FrameSpring(0, np.eye(4), -2, np.eye(4), 1.0, 1.0), "'b'"),
    (lambda: FrameSpring(0, np.eye(4), 1, np.eye(4), 1.0, -1.0), "'kr'"),
    (zero_length_spring, "zero length"),
], ids=["negative stiffness", "negative damping", "NaN direction", "attachment body -2", "gravity body -2",
        "zero mass", "NaN damping", "negative linear damping", "M of shape (5, 5)", "zero plane normal",
        "negative kn", "negative mu",
        "spring with 1 point", "negative k", "zero rest length", "frame spring b -2",
        "negative kr", "zero-length segment"])
def test_bad_force_arguments_raise_value_error_naming_them(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_frame_spring_rejects_a_frame_that_is_not_rigid():
    with pytest.raises(ValueError, match="E_a_1"):
        FrameSpring(0, 2.0 * np.eye(4), 1, np.eye(4), 1.0, 1.0)


def test_point_force_rejects_a_nan_stiffness():
    with pytest.raises(ValueError, match="'k'"):
        PointForce(0, [0, 0, 0], [1.0, 0.0, 0.0], k=np.nan)
