"""Unit tests of redmax_edu.maximal.body and .system: rigid bodies, Newton-Euler, momentum (§1.6-1.7).

References are the classic forms of the writeup (Eq. 1.23: the Euler equations written with
cross products) and closed forms written out here (angular momentum ``R I omega + p x m v``),
independent of the adjoint machinery the library uses.
"""

import numpy as np
import pytest

from redmax_edu.lie import adjoint, exp_se3, inv_se3, random_transform
from redmax_edu.maximal.body import RigidBody, kinetic_energy, newton_euler_acceleration, spatial_momentum
from redmax_edu.maximal.constraints import GroundContact, Joint
from redmax_edu.maximal.forces import (
    Attachment,
    BodyDamping,
    Coriolis,
    ForceTerms,
    Gravity,
    PointForce,
    PointSpring,
)
from redmax_edu.maximal.simulate import simulate_rk45
from redmax_edu.maximal.system import System

MOMENTS = np.array([0.2, 0.5, 0.6])
MASS = 2.0


def body(name="brick", mass=MASS, moments=MOMENTS, **kwargs):
    return RigidBody(name, mass, moments, **kwargs)


# --- RigidBody ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("mass", "moments", "half_sizes", "match"), [
    (0.0, MOMENTS, None, "mass"),
    (-1.0, MOMENTS, None, "mass"),
    (np.nan, MOMENTS, None, "mass"),
    (np.inf, MOMENTS, None, "mass"),
    (1.0, [0.2, 0.0, 0.2], None, "positive"),
    (1.0, [0.2, -0.1, 0.2], None, "positive"),
    (1.0, [1.0, 1.0, 3.0], None, "triangle inequality I1 \\+ I2 >= I3"),
    (1.0, [3.0, 1.0, 1.0], None, "triangle inequality I2 \\+ I3 >= I1"),
    (1.0, [0.2, 0.2], None, "'moments'"),
    (1.0, [0.2, np.nan, 0.2], None, "'moments'"),
    (1.0, MOMENTS, [0.1, 0.1], "'half_sizes'"),
], ids=["zero mass", "negative mass", "NaN mass", "infinite mass", "zero moment", "negative moment",
        "I3 too large", "I1 too large", "2 moments", "NaN moment", "2 half sizes"])
def test_rigid_body_rejects_unphysical_values_naming_the_body(mass, moments, half_sizes, match):
    with pytest.raises(ValueError, match="body 'slab'") as err:
        RigidBody("slab", mass, moments, half_sizes=half_sizes)
    assert err.match(match)


def test_rigid_body_accepts_the_limit_of_the_triangle_inequality():
    # a thin plate: I3 = I1 + I2 exactly, the limiting physical case
    RigidBody("plate", 1.0, [0.25, 0.5, 0.75])


def test_rigid_body_mass_matrix_is_diag_of_moments_and_mass():
    M = body().M
    np.testing.assert_array_equal(M, np.diag([0.2, 0.5, 0.6, 2.0, 2.0, 2.0]))


def test_rigid_body_corners_are_the_box_of_its_half_sizes():
    corners = body(half_sizes=[0.3, 0.2, 0.1]).corners()
    assert corners.shape == (8, 3)
    np.testing.assert_array_equal(np.abs(corners), np.tile([0.3, 0.2, 0.1], (8, 1)))
    assert len({tuple(c) for c in corners}) == 8
    with pytest.raises(ValueError, match="body 'brick'"):
        body().corners()


# --- Newton-Euler -----------------------------------------------------------------------------------


def test_newton_euler_acceleration_equals_the_classic_euler_equations_eq_1_23(rng):
    M = body().M
    for _ in range(10):
        phi, wrench = 2.0 * rng.standard_normal(6), rng.standard_normal(6)
        w, v = phi[:3], phi[3:]
        # Eq. (1.23): M phidot = -(w x I w, w x m v) + (tau, f)
        rhs = -np.concatenate([np.cross(w, MOMENTS * w), np.cross(w, MASS * v)]) + wrench
        expected = np.concatenate([rhs[:3] / MOMENTS, rhs[3:] / MASS])
        # one solve of a diagonal system and a few products: round-off ~1e-15 on O(10) values
        np.testing.assert_allclose(newton_euler_acceleration(M, phi, wrench), expected, rtol=0, atol=1e-12)


def test_steady_spin_about_a_principal_axis_has_no_acceleration():
    for axis in range(3):
        phi = np.zeros(6)
        phi[axis] = 3.0
        np.testing.assert_array_equal(newton_euler_acceleration(body().M, phi, np.zeros(6)), 0.0)
    # off-axis spin is not steady
    assert np.abs(newton_euler_acceleration(body().M, [1.0, 1.0, 0, 0, 0, 0], np.zeros(6))).max() > 0.1


def test_kinetic_energy_is_rotational_plus_translational(rng):
    phi = rng.standard_normal(6)
    expected = 0.5 * (MOMENTS @ phi[:3] ** 2) + 0.5 * MASS * phi[3:] @ phi[3:]
    assert kinetic_energy(body().M, phi) == pytest.approx(expected, rel=1e-14)


# --- spatial momentum -------------------------------------------------------------------------------


def test_spatial_momentum_is_r_i_omega_plus_p_cross_m_v_and_m_v(rng):
    for _ in range(5):
        E, phi = random_transform(rng), rng.standard_normal(6)
        R, p = E[:3, :3], E[:3, 3]
        linear = MASS * R @ phi[3:]  # world velocity of the centre of mass is R nu
        angular = R @ (MOMENTS * phi[:3]) + np.cross(p, linear)
        np.testing.assert_allclose(spatial_momentum(E, body().M, phi), np.concatenate([angular, linear]),
                                   rtol=0, atol=1e-13)


def test_spatial_momentum_pairs_with_world_twists_like_a_wrench(rng):
    # power pairing: h_w . V = (M phi) . (twist V seen in body coordinates)
    for _ in range(5):
        E, phi, V = random_transform(rng), rng.standard_normal(6), rng.standard_normal(6)
        V_body = adjoint(inv_se3(E)) @ V
        h = spatial_momentum(E, body().M, phi)
        assert h @ V == pytest.approx((body().M @ phi) @ V_body, rel=1e-12)


def test_spatial_momentum_is_conserved_along_a_torque_free_motion():
    free = System([body()], gravity=np.zeros(3))
    E0 = exp_se3([0.3, -0.2, 0.1, 0.5, 1.0, -0.4])
    phi0 = np.array([[1.0, 3.0, 0.2, 0.4, -0.3, 0.2]])  # near the unstable middle axis: a lively motion
    traj = simulate_rk45(free, E0[None], phi0, 5.0, samples=51)
    M = free.bodies[0].M
    h = np.array([spatial_momentum(E[0], M, p[0]) for E, p in zip(traj.E, traj.phi, strict=True)])
    body_h = traj.phi[:, 0] @ M
    assert np.abs(body_h - body_h[0]).max() > 0.1  # M phi itself changes ...
    # ... while the world momentum stays put up to RK45's rtol 1e-10 (times O(10) steps of drift)
    assert np.abs(h - h[0]).max() / np.linalg.norm(h[0]) < 1e-8


# --- System ------------------------------------------------------------------------------------------


def two_bodies(**kwargs):
    return System([body("a"), body("b", mass=1.0, moments=[0.1, 0.1, 0.15])], **kwargs)


def random_state(rng, n):
    return np.stack([random_transform(rng) for _ in range(n)]), rng.standard_normal((n, 6))


def assert_terms_equal(a, b):
    # sums of the same terms in possibly different order: round-off only
    for x, y in ((a.f, b.f), (a.K, b.K), (a.D, b.D)):
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-12)


def test_system_evaluate_adds_gravity_and_coriolis_to_the_given_forces(rng):
    spring = PointSpring(Attachment(0, [0.1, 0, 0]), Attachment(1, [0, 0.2, 0]), 10.0, 0.5)
    damping = BodyDamping(1, 0.3)
    system = two_bodies(forces=[spring, damping])
    E, phi = random_state(rng, 2)
    expected = ForceTerms.zeros(2)
    for i, b in enumerate(system.bodies):
        expected = expected + Coriolis(i, b.M).evaluate(E, phi) + Gravity(i, b.mass).evaluate(E, phi)
    expected = expected + spring.evaluate(E, phi) + damping.evaluate(E, phi)
    assert_terms_equal(system.evaluate(E, phi), expected)


def test_system_without_gravity_has_coriolis_only(rng):
    system = two_bodies(gravity=np.zeros(3))
    E, phi = random_state(rng, 2)
    expected = ForceTerms.zeros(2)
    for i, b in enumerate(system.bodies):
        expected = expected + Coriolis(i, b.M).evaluate(E, phi)
    assert_terms_equal(system.evaluate(E, phi), expected)


def test_system_energy_is_kinetic_plus_gravity_plus_force_potentials(rng):
    pull = PointForce(0, [0.1, 0.2, 0.3], [0, 1.0, 0], k=2.0)
    system = two_bodies(forces=[pull])
    E, phi = random_state(rng, 2)
    kinetic = sum(kinetic_energy(b.M, p) for b, p in zip(system.bodies, phi, strict=True))
    gravity = sum(b.mass * 9.81 * E[i, 2, 3] for i, b in enumerate(system.bodies))
    assert system.energy(E, phi) == pytest.approx(kinetic + gravity + pull.potential_energy(E), rel=1e-13)


def test_system_momentum_is_the_sum_of_body_momenta(rng):
    system = two_bodies()
    E, phi = random_state(rng, 2)
    expected = sum(spatial_momentum(E[i], b.M, phi[i]) for i, b in enumerate(system.bodies))
    np.testing.assert_allclose(system.momentum(E, phi), expected, rtol=0, atol=1e-14)


def test_system_mass_matrix_is_block_diagonal_in_the_body_inertias():
    system = two_bodies()
    M = system.mass_matrix()
    assert M.shape == (12, 12)
    np.testing.assert_array_equal(M[:6, :6], system.bodies[0].M)
    np.testing.assert_array_equal(M[6:, 6:], system.bodies[1].M)
    np.testing.assert_array_equal(M[:6, 6:], 0.0)
    np.testing.assert_array_equal(M[6:, :6], 0.0)


def test_system_rest_state_is_identity_poses_and_zero_twists():
    E, phi = two_bodies().rest_state()
    np.testing.assert_array_equal(E, np.stack([np.eye(4)] * 2))
    np.testing.assert_array_equal(phi, np.zeros((2, 6)))


def test_check_state_rejects_a_pose_that_is_not_rigid_naming_the_body(rng):
    system = two_bodies()
    E, phi = random_state(rng, 2)
    system.check_state(E, phi)  # valid
    sheared = E.copy()
    sheared[1, 0, 1] += 1e-3
    with pytest.raises(ValueError, match="body 'b': pose is not a rigid transform"):
        system.check_state(sheared, phi)
    mirrored = E.copy()
    mirrored[0, :3, 0] *= -1  # orthonormal, det -1
    with pytest.raises(ValueError, match="body 'a': pose is not a rigid transform"):
        system.check_state(mirrored, phi)


def test_check_state_rejects_nan_naming_the_body(rng):
    system = two_bodies()
    E, phi = random_state(rng, 2)
    bad_phi = phi.copy()
    bad_phi[1, 4] = np.nan
    with pytest.raises(ValueError, match="body 'b'.*NaN"):
        system.check_state(E, bad_phi)
    bad_E = E.copy()
    bad_E[0, 1, 3] = np.inf
    with pytest.raises(ValueError, match="body 'a'.*NaN or infinite"):
        system.check_state(bad_E, phi)


def test_check_state_rejects_wrong_shapes(rng):
    E, phi = random_state(rng, 3)
    with pytest.raises(ValueError, match="shape"):
        two_bodies().check_state(E, phi)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"forces": [Gravity(2, 1.0)]}, "body 2"),
    ({"forces": [PointSpring(Attachment(0), Attachment(5), 1.0)]}, "body 5"),
    ({"forces": ["not a force"]}, "Force"),
    ({"joints": [Joint("revolute", 0, 2, np.eye(4), np.eye(4), name="knee")]}, "joint 'knee'"),
    ({"joints": [Joint("revolute", 3, -1, np.eye(4), np.eye(4), name="hip")]}, "joint 'hip'"),
    ({"contacts": [GroundContact(4, [[0, 0, 0]])]}, "body 4"),
], ids=["gravity on body 2", "spring to body 5", "a string as force", "joint to body 2", "joint on body 3",
        "contact on body 4"])
def test_system_rejects_forces_joints_and_contacts_on_missing_bodies(kwargs, match):
    with pytest.raises(ValueError, match=match):
        two_bodies(**kwargs)


def test_system_rejects_duplicate_body_names_and_non_bodies():
    with pytest.raises(ValueError, match="unique"):
        System([body("twin"), body("twin")])
    with pytest.raises(ValueError, match="at least one body"):
        System([])
    with pytest.raises(ValueError, match=r"bodies\[1\]"):
        System([body("a"), "b"])


def test_body_from_mass_properties_sits_at_the_principal_frame():
    from redmax_edu.inertia import composite, cuboid

    parts = [(cuboid([0.1, 0.2, 0.3], mass=1.0), exp_se3([0.3, 0, 0, 0.1, 0, 0])),
             (cuboid([0.2, 0.1, 0.1], mass=2.0), exp_se3([0, 0.2, 0, -0.1, 0.1, 0]))]
    props = composite(parts)
    body, E_f_b = RigidBody.from_mass_properties("lump", props)
    assert body.mass == pytest.approx(3.0)
    # the spatial inertia of the properties, moved to the body frame, is diag(moments, m, m, m)
    A = adjoint(E_f_b)
    np.testing.assert_allclose(A.T @ props.spatial_inertia() @ A, body.M, atol=1e-12)
