"""Unit tests of redmax_edu.maximal.simulate: Euler steps with joints and contacts (§1.8, §1.10-1.13).

The references are closed forms: the discrete sums that Euler's method produces for constant
accelerations (free fall, a box sliding down an incline), the continuous parabola they
converge to, and the conservation laws of torque-free motion (with scipy's RK45 at tight
tolerances as the integrator). Step counts are kept small so that the file runs in seconds.
"""

import numpy as np
import pytest

from redmax_edu.lie import exp_se3
from redmax_edu.maximal.body import RigidBody
from redmax_edu.maximal.constraints import GroundContact, Joint, pyramid_directions
from redmax_edu.maximal.forces import Attachment, PointSpring
from redmax_edu.maximal.simulate import simulate, simulate_rk45, step
from redmax_edu.maximal.system import System

G = 9.81


def ball():
    return System([RigidBody("ball", 1.0, [0.4, 0.4, 0.4])])


def box_body(half=(0.2, 0.15, 0.1), mass=2.0):
    """A solid box: I_x = m (b^2 + c^2) / 3 with half sizes a, b, c (Eq. 1.24)."""
    a, b, c = half
    moments = mass / 3.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    return RigidBody("box", mass, moments, half_sizes=half)


# --- bad arguments --------------------------------------------------------------------------------


def hinged_system():
    E = np.eye(4)[None]
    hinge = Joint.at("revolute", 0, -1, np.eye(4), E)
    return System([RigidBody("bob", 1.0, [0.1, 0.1, 0.1])], joints=[hinge])


def contact_and_joint_system():
    E = np.eye(4)[None]
    return System([box_body()], joints=[Joint.at("revolute", 0, -1, np.eye(4), E)],
                  contacts=[GroundContact(0, box_body().corners())])


@pytest.mark.parametrize(("call", "match"), [
    (lambda: simulate(ball(), *ball().rest_state(), 0.01, 3, method="rk4"), "'method'"),
    (lambda: step(ball(), *ball().rest_state(), 0.01, method="Implicit"), "'method'"),
    (lambda: simulate(ball(), *ball().rest_state(), 0.0, 3), "'h'"),
    (lambda: simulate(ball(), *ball().rest_state(), -0.01, 3), "'h'"),
    (lambda: simulate(ball(), *ball().rest_state(), np.nan, 3), "'h'"),
    (lambda: simulate(hinged_system(), *hinged_system().rest_state(), 0.01, 3, method="explicit"),
     "method='symplectic'"),
    (lambda: simulate(ball(), *ball().rest_state(), 0.01, -1), "'steps'"),
    (lambda: simulate(ball(), *ball().rest_state(), 0.01, 2.5), "'steps'"),
    (lambda: simulate(contact_and_joint_system(), *contact_and_joint_system().rest_state(), 0.01, 1,
                      contact_solver="lcp"), "'contact_solver'"),
    (lambda: simulate(contact_and_joint_system(), *contact_and_joint_system().rest_state(), 0.01, 1,
                      contact_solver="pgs"), "contact_solver='pgs'"),
    (lambda: simulate_rk45(hinged_system(), *hinged_system().rest_state(), 1.0), "unconstrained"),
    (lambda: step(ball(), *ball().rest_state(), 0.01, "implicit", stiffness="sym"), "'stiffness'"),
], ids=["unknown method", "method in capitals", "h = 0", "h < 0", "h NaN", "explicit with joints",
        "negative steps", "fractional steps", "unknown contact solver", "pgs with joints",
        "rk45 with joints", "unknown stiffness"])
def test_bad_simulation_arguments_raise_value_error_naming_them(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("kwargs", [{"h": -0.01}, {"h": 0.01, "method": "bogus"}], ids=["h < 0", "bogus"])
def test_simulate_validates_its_arguments_even_for_zero_steps(kwargs):
    with pytest.raises(ValueError):
        simulate(ball(), *ball().rest_state(), steps=0, **kwargs)


# --- free fall -------------------------------------------------------------------------------------


def test_free_fall_follows_the_discrete_symplectic_euler_sum_exactly():
    h, N = 0.02, 50
    traj = simulate(ball(), *ball().rest_state(), h, N)
    k = np.arange(N + 1)
    # v_k = -g h k, and positions move with the new velocity: z_k = -g h^2 k (k + 1) / 2
    np.testing.assert_allclose(traj.phi[:, 0, 5], -G * h * k, rtol=1e-13, atol=0)
    np.testing.assert_allclose(traj.E[:, 0, 2, 3], -G * h * h * k * (k + 1) / 2, rtol=1e-13, atol=0)
    np.testing.assert_array_equal(traj.E[:, 0, :2, 3], 0.0)  # straight down


def test_explicit_free_fall_moves_with_the_old_velocity():
    h, N = 0.02, 50
    traj = simulate(ball(), *ball().rest_state(), h, N, method="explicit")
    k = np.arange(N + 1)
    # rounding of a sum of N terms: 1e-13 relative
    expected = -G * h * h * k[1:] * (k[1:] - 1) / 2
    np.testing.assert_allclose(traj.E[1:, 0, 2, 3], expected, rtol=1e-13, atol=1e-18)


def test_free_fall_converges_to_g_t2_over_2_at_first_order():
    T = 1.0
    steps = np.array([0.1, 0.05, 0.025, 0.0125])
    errors = []
    for h in steps:
        traj = simulate(ball(), *ball().rest_state(), h, int(round(T / h)))
        errors.append(abs(traj.E[-1, 0, 2, 3] + G * T * T / 2))
    order = np.polyfit(np.log(steps), np.log(errors), 1)[0]
    # the error is exactly g h T / 2 in exact arithmetic: slope 1 up to round-off
    assert order == pytest.approx(1.0, abs=1e-6)
    assert errors[-1] == pytest.approx(G * 0.0125 * T / 2, rel=1e-9)


# --- torque-free rotation ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def racket_runs():
    """RK45 runs of 10 s of a free body spun about each principal axis with a small wobble."""
    free = System([RigidBody("racket", 1.0, [0.1, 0.2, 0.25])], gravity=np.zeros(3))
    runs = []
    for axis in range(3):
        phi0 = np.zeros((1, 6))
        phi0[0, axis] = 3.0
        phi0[0, (axis + 1) % 3] = 0.01
        phi0[0, 3:] = [0.3, -0.2, 0.1]
        runs.append(simulate_rk45(free, exp_se3([0.2, -0.1, 0.3, 0.5, 0, 0])[None], phi0, 10.0, samples=201))
    return free, runs


@pytest.mark.parametrize("axis", [0, 2], ids=["smallest", "largest"])
def test_spin_about_the_extreme_principal_axes_stays_near_the_axis(racket_runs, axis):
    _, runs = racket_runs
    w = runs[axis].phi[:, 0, :3]
    cosine = w[:, axis] / np.linalg.norm(w, axis=1)
    assert cosine.min() > 0.999  # the wobble 0.01 / 3 stays a few milliradians


def test_spin_about_the_intermediate_axis_flips_over(racket_runs):
    _, runs = racket_runs
    w = runs[1].phi[:, 0, 1]
    assert w[0] > 2.9 and w.min() < -2.9  # the spin reverses in the body frame: the racket flips


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_rk45_conserves_energy_and_world_angular_momentum(racket_runs, axis):
    free, runs = racket_runs
    traj = runs[axis]
    assert traj.t[-1] == 10.0
    energy = traj.energy
    L = np.array([free.momentum(E, p)[:3] for E, p in zip(traj.E, traj.phi, strict=True)])
    # RK45 at rtol 1e-10 drifts ~1e-11 over 10 s (measured); 1e-8 leaves a wide margin
    assert np.abs(energy - energy[0]).max() / energy[0] < 1e-8
    assert np.abs(L - L[0]).max() / np.linalg.norm(L[0]) < 1e-8
    # while the body-frame angular momentum I omega itself moves (the test has teeth)
    body_L = traj.phi[:, 0, :3] * free.bodies[0].moments
    assert np.abs(body_L - body_L[0]).max() > 1e-3


# --- energy behaviour of the three Euler methods --------------------------------------------------------


def test_implicit_euler_loses_energy_and_explicit_euler_gains_it_on_a_hanging_spring():
    body = RigidBody("bob", 1.0, [0.1, 0.1, 0.1])
    spring = PointSpring(Attachment(0, [0.0, 0.0, 0.05]), Attachment(-1, [0.0, 0.0, 1.0]), stiffness=100.0)
    system = System([body], forces=[spring])
    E0 = np.eye(4)[None].copy()
    E0[0, :3, 3] = [0.1, 0.0, 0.5]  # off the rest position: it swings and bounces
    phi0 = np.array([[0.0, 0.0, 0.0, 0.3, 0.0, 0.0]])
    h, steps = 0.005, 1000  # 5 s; h omega = 0.05 for the spring's omega = 10 rad/s
    final = {m: simulate(system, E0, phi0, h, steps, method=m).energy[-1]
             for m in ("explicit", "symplectic", "implicit")}
    E_start = system.energy(E0, phi0)
    # per step, explicit Euler multiplies the oscillator's energy by ~(1 + h^2 omega^2) and the
    # implicit one by ~1 / (1 + h^2 omega^2): over 1000 steps, factors far from 1
    assert final["explicit"] > 2.0 * E_start
    assert final["implicit"] < 0.8 * E_start
    assert abs(final["symplectic"] - E_start) < 0.05 * E_start  # bounded error, no drift


def test_implicit_step_with_the_symmetric_stiffness_solves_with_the_symmetric_part(rng):
    """stiffness="symmetric" (notes §0.23) replaces K by (K + K^T) / 2 in A = M - h D - h^2 K and nothing
    else: the new twist matches a solve written out here, and differs from the full-K step (a step that
    ignored the option, or symmetrised D too, would fail one of the two)."""
    bodies = [RigidBody("a", 1.0, [0.1, 0.2, 0.25]), RigidBody("b", 2.0, [0.2, 0.3, 0.4])]
    spring = PointSpring(Attachment(0, [0.1, 0.0, 0.05]), Attachment(1, [0.0, -0.1, 0.0]), 50.0, 0.5)
    system = System(bodies, forces=[spring])
    E = np.stack([exp_se3(rng.standard_normal(6)) for _ in range(2)])
    phi = rng.standard_normal((2, 6))
    h = 0.05
    terms, M = system.evaluate(E, phi), system.mass_matrix()
    A = M - h * terms.D - h * h * 0.5 * (terms.K + terms.K.T)
    expected = np.linalg.solve(A, M @ phi.ravel() + h * (terms.f - terms.D @ phi.ravel()))
    _, sym, _ = step(system, E, phi, h, "implicit", stiffness="symmetric")
    _, full, _ = step(system, E, phi, h, "implicit")
    np.testing.assert_allclose(sym.ravel(), expected, rtol=1e-12, atol=1e-12)
    assert np.abs(full - sym).max() > 1e-4  # K is far from symmetric here: the option matters
    # the explicit methods do not use K: the option changes nothing
    assert np.array_equal(step(system, E, phi, h, stiffness="symmetric")[1], step(system, E, phi, h)[1])


# --- joints: drift and Baumgarte stabilisation -------------------------------------------------------


def link(name):
    return RigidBody(name, 1.0, [0.01, 0.09, 0.09], half_sizes=[0.5, 0.05, 0.05])


def pendulum(n_links, **joint_options):
    """Horizontal links along x, hinged about the world y axis (the joint z axis)."""
    E = np.stack([np.eye(4)] * n_links)
    for i in range(n_links):
        E[i, 0, 3] = 0.5 + i
    joints = []
    for i in range(n_links):
        frame = exp_se3([-np.pi / 2, 0, 0, i, 0, 0])  # rotates joint z onto world y, at x = i
        joints.append(Joint.at("revolute", i, i - 1, frame, E, name=f"hinge{i}", **joint_options))
    return System([link(f"link{i}") for i in range(n_links)], joints=joints), E


def test_single_pendulum_keeps_its_pivot_to_round_off():
    system, E = pendulum(1)
    traj = simulate(system, E, np.zeros((1, 6)), 0.005, 1000)
    pivot = np.array([(Ek[0] @ system.joints[0].E_a_j)[:3, 3] for Ek in traj.E])
    # each step is an exact rotation about the fixed axis: only round-off accumulates
    assert np.abs(pivot).max() < 1e-12
    assert traj.joint_error.max() < 1e-12
    assert np.abs(traj.E[:, 0, 2, 3]).max() > 0.4  # and it does swing down


@pytest.fixture(scope="module")
def double_pendulum_runs():
    system, E = pendulum(2)
    plain = simulate(system, E, np.zeros((2, 6)), 0.005, 2000)
    stabilised = simulate(system, E, np.zeros((2, 6)), 0.005, 2000, baumgarte=10.0)
    return plain, stabilised


def test_double_pendulum_drifts_without_baumgarte(double_pendulum_runs):
    plain, _ = double_pendulum_runs
    assert plain.joint_error[0] < 1e-13
    assert plain.joint_error.max() > 1e-2  # velocity-level constraints only: the elbow comes apart


def test_baumgarte_stabilisation_keeps_the_drift_five_times_smaller(double_pendulum_runs):
    plain, stabilised = double_pendulum_runs
    assert stabilised.joint_error.max() * 5 < plain.joint_error.max()
    assert stabilised.joint_error[-1] * 5 < plain.joint_error[-1]


def test_step_reports_the_joint_error_before_the_step(double_pendulum_runs):
    plain, _ = double_pendulum_runs
    errors = np.array([info.joint_error for info in plain.info])
    np.testing.assert_allclose(errors, plain.joint_error[:-1], rtol=0, atol=1e-15)


# --- contact: an inclined plane ----------------------------------------------------------------------

MU = 0.5


def box_on_incline(theta):
    """A box resting on a plane tilted by theta about the world x axis (it slides along -t2)."""
    box = box_body()
    normal = np.array([0.0, -np.sin(theta), np.cos(theta)])
    E0 = exp_se3([theta, 0, 0, 0, 0, 0])
    E0[:3, 3] = E0[:3, :3] @ [0.0, 0.0, box.half_sizes[2]]  # bottom face on the plane
    system = System([box], contacts=[GroundContact(0, box.corners(), mu=MU, plane_normal=normal)])
    downhill = -pyramid_directions(normal)[1]  # a friction-box axis: PGS's box is exact along it
    assert np.allclose(downhill, [0.0, -np.cos(theta), -np.sin(theta)])
    return system, E0, downhill


@pytest.mark.parametrize(("solver", "tol"), [("pgs", 1e-8), ("qp", 1e-7)])
def test_box_on_an_incline_below_the_friction_angle_stays_put(solver, tol):
    # tolerance: PGS converges to 1e-12 per step; the interior point stops at ~1e-8 relative
    # on impulses of ~0.1 N s, which leaves ~5e-9 m after 100 steps
    system, E0, _ = box_on_incline(0.8 * np.arctan(MU))
    traj = simulate(system, E0[None], np.zeros((1, 6)), 0.01, 100, contact_solver=solver)
    assert np.linalg.norm(traj.E[-1, 0, :3, 3] - E0[:3, 3]) < tol


def test_box_on_an_incline_above_the_friction_angle_slides_the_discrete_distance_under_pgs():
    theta, h, N = 1.3 * np.arctan(MU), 0.01, 100
    system, E0, downhill = box_on_incline(theta)
    traj = simulate(system, E0[None], np.zeros((1, 6)), h, N, contact_solver="pgs")
    a = G * (np.sin(theta) - MU * np.cos(theta))
    distance = (traj.E[-1, 0, :3, 3] - E0[:3, 3]) @ downhill
    # symplectic Euler with a constant acceleration: x_N = a h^2 N (N + 1) / 2, to PGS's tolerance
    assert distance == pytest.approx(a * h * h * N * (N + 1) / 2, rel=1e-9)


def test_box_on_an_incline_above_the_friction_angle_slides_about_a_t2_over_2_under_the_qp():
    theta, h, N = 1.3 * np.arctan(MU), 0.01, 100
    system, E0, downhill = box_on_incline(theta)
    traj = simulate(system, E0[None], np.zeros((1, 6)), h, N, contact_solver="qp")
    a = G * (np.sin(theta) - MU * np.cos(theta))
    distance = (traj.E[-1, 0, :3, 3] - E0[:3, 3]) @ downhill
    # Euler's O(h) error is 1% here; the QP's friction relaxation (lift-off at mu |v_t|) adds less
    assert distance == pytest.approx(a * (N * h) ** 2 / 2, rel=0.02)


# --- contact: a dropped box --------------------------------------------------------------------------


def dropped_box(mu, lateral_speed):
    box = box_body()
    E0 = exp_se3([0.0, 0.0, 0.3, 0.0, 0.0, 0.0])  # yawed, bottom face level
    E0[:3, 3] = [0.0, 0.0, box.half_sizes[2] + 0.05]
    phi0 = np.zeros((1, 6))
    phi0[0, 3:] = E0[:3, :3].T @ [lateral_speed, 0.4 * lateral_speed, 0.0]
    return System([box], contacts=[GroundContact(0, box.corners(), mu=mu)]), E0[None], phi0


@pytest.fixture(scope="module")
def drops():
    """60 steps of 10 ms of a box dropped from 5 cm, for each solver, without and with friction."""
    runs = {}
    for mu, speed in ((0.0, 0.0), (0.5, 0.5)):
        system, E0, phi0 = dropped_box(mu, speed)
        for solver in ("qp", "pgs"):
            runs[mu, solver] = system, simulate(system, E0, phi0, 0.01, 60, contact_solver=solver)
    return runs


@pytest.mark.parametrize("solver", ["qp", "pgs"])
@pytest.mark.parametrize("mu", [0.0, 0.5], ids=["frictionless", "friction"])
def test_a_dropped_box_comes_to_rest_without_penetrating(drops, mu, solver):
    system, traj = drops[mu, solver]
    depth = np.array([system.contacts[0].distances(E).min() for E in traj.E])
    assert depth.min() > -1e-6
    assert np.abs(traj.phi[-10:]).max() < 1e-6  # at rest over the last 0.1 s
    assert traj.E[-1, 0, 2, 3] == pytest.approx(0.1, abs=1e-6)  # resting on its bottom face
    assert any(info.active_contacts for info in traj.info)


@pytest.mark.parametrize("solver", ["qp", "pgs"])
def test_friction_stops_a_box_that_lands_with_a_sideways_velocity(drops, solver):
    _, traj = drops[0.5, solver]
    travelled = np.linalg.norm(traj.E[-1, 0, :2, 3])
    # about 0.1 s in the air at 0.54 m/s covers ~5 cm; on landing, friction (mu times the impact
    # impulse, then mu g = 4.9 m/s^2) stops it within a few cm more, where without friction it
    # would go on to 0.54 m/s * 0.6 s = 32 cm
    assert 0.04 < travelled < 0.1


def test_frictionless_qp_and_pgs_trajectories_agree(drops):
    _, qp = drops[0.0, "qp"]
    _, pgs = drops[0.0, "pgs"]
    # the same frictionless LCP, solved to ~1e-8 (interior point) and 1e-12 (Gauss-Seidel)
    np.testing.assert_allclose(qp.E, pgs.E, rtol=0, atol=1e-6)
    np.testing.assert_allclose(qp.phi, pgs.phi, rtol=0, atol=1e-6)
