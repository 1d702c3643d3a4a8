"""Unit tests of redmax_edu.friction: staggered projections and BISP (§2.11, Algorithms 7-8).

The frictional answers are checked against Coulomb's law where it has a closed form: a block on
an incline sticks below ``arctan mu`` and slides with ``g (sin - mu cos)`` above; a wheel on an
axle of radius ``r`` needs the torque ``mu r m g`` to turn; a rod whose tip drags on the floor
decelerates by ``mu N L / I``. Energy never grows, the impulses stay in their bounds, and with
``mu = 0`` a BISP step is the linearly implicit Euler step of Eq. (2.86).

Tolerances: a velocity-level step from rest is exact arithmetic on Coulomb's law (no
discretisation error), so the closed forms hold to round-off except where something stops
short of exact: the staggered iteration, whose last change of the normal impulses (at most
``tol`` relative) leaves a sliding velocity of the same relative size, and the regulariser of
Eq. (2.125) (``reg = 1e-9`` relative), which biases the joint loads by about that much.
"""

import numpy as np
import pytest

from redmax_edu.constraints import FloorContact, Loop
from redmax_edu.dynamics import _assemble, energies, linearly_implicit_euler_step
from redmax_edu.friction import bisp, external, staggered
from redmax_edu.friction.bisp import bisp_step
from redmax_edu.friction.external import ExternalConstraints, LoopFriction, tangent_rows
from redmax_edu.friction.patterns import Box, Cylinder, JointFriction, Sphere
from redmax_edu.friction.staggered import friction_qp, staggered_projections
from redmax_edu.joints import Fixed, Free2D, Planar, Prismatic, Revolute, SphericalExp, Universal
from redmax_edu.kinematics import body_poses, forward_kinematics
from redmax_edu.lie import adjoint, exp_so3, random_transform
from redmax_edu.maximal.constraints import GroundContact
from redmax_edu.maximal.solve import contact_qp
from redmax_edu.model import Body, Model

G = 9.81
H = 0.01


def _frame(R=None, p=(0.0, 0.0, 0.0)):
    E = np.eye(4)
    E[:3, :3] = np.eye(3) if R is None else R
    E[:3, 3] = p
    return E


# ----------------------------------------------------------------------------- joint geometry
GEOMETRIES = [
    (Revolute([0.3, -0.5, 0.8]), Cylinder(0.02, 0.03)),
    (Revolute([0.0, 1.0, 0.0]), Cylinder(0.02, 0.03)),
    (Prismatic([0.0, 1.0, 0.0]), Box((0.1, 0.04, 0.02))),
    (Prismatic([0.0, 0.0, -1.0]), Box((0.1, 0.04, 0.02))),
    (SphericalExp(), Sphere(0.05)),
]


@pytest.mark.parametrize(("joint", "geometry"), GEOMETRIES)
def test_joint_normals_never_resist_the_joint_motion_and_span_its_constraints(joint, geometry):
    rng = np.random.default_rng(0)
    contacts = JointFriction(0, 0.5, geometry).contacts(joint)
    for _ in range(3):
        q = rng.standard_normal(joint.ndof)
        moving = adjoint(joint.Q(q)) @ joint.S(q)      # the joint's motion seen from the parent side
        # exact zeros up to round-off of O(1) numbers
        assert np.abs(contacts.normals @ moving).max() < 1e-12
        assert np.linalg.matrix_rank(contacts.normals) == 6 - joint.ndof
        # every tangent row slides when the joint moves
        assert (np.abs(contacts.tangents @ moving).max(axis=1) > 1e-6).all()


def _load_sum(contacts, wrench):
    """Sum over the points of the magnitude of their normal impulses in the minimum-norm fit of
    ``wrench`` (Eq. 2.125 without regularisation): the friction bound over ``mu``."""
    alpha = np.linalg.lstsq(contacts.normals.T, wrench, rcond=None)[0]
    assert np.allclose(contacts.normals.T @ alpha, wrench, atol=1e-12)
    return np.sqrt(np.bincount(contacts.normal_point, alpha ** 2)).sum()


def test_pin_friction_is_mu_r_times_the_radial_load_along_the_pattern_and_at_most_sqrt2_between():
    contacts = JointFriction(0, 1.0, Cylinder(0.02, 0.03)).contacts(Revolute([0, 0, 1.0]))
    # exact sums of a few O(1) numbers: round-off only
    assert _load_sum(contacts, [0, 0, 0, 5.0, 0, 0]) == pytest.approx(5.0, rel=1e-12)
    assert _load_sum(contacts, [0, 0, 0, 0, -5.0, 0]) == pytest.approx(5.0, rel=1e-12)
    diagonal = 5.0 * np.array([0, 0, 0, 1, 1, 0]) / np.sqrt(2)
    assert _load_sum(contacts, diagonal) == pytest.approx(5.0 * np.sqrt(2), rel=1e-12)
    assert _load_sum(contacts, [0, 0, 0, 0, 0, 5.0]) == pytest.approx(5.0, rel=1e-12)   # thrust


def test_slider_friction_is_mu_times_the_load_across_the_slide_in_any_direction():
    contacts = JointFriction(0, 1.0, Box((0.1, 0.04, 0.02))).contacts(Prismatic([1.0, 0, 0]))
    for direction in ([0, 1.0, 0], [0, 0.6, 0.8], [0, -0.8, 0.6]):
        assert _load_sum(contacts, np.r_[0, 0, 0, 3.0 * np.array(direction)]) == pytest.approx(3.0, rel=1e-12)


def test_ball_joint_friction_is_mu_r_times_the_load_along_an_axis():
    contacts = JointFriction(0, 1.0, Sphere(0.05)).contacts(SphericalExp())
    assert _load_sum(contacts, [0, 0, 0, 0, 2.0, 0]) == pytest.approx(2.0, rel=1e-12)


def test_joint_friction_reads_the_reference_scenes_contact_geometry():
    from redmax_edu.scenes import reference_setup

    expected = {27: Cylinder(0.005, 0.01), 28: Sphere(0.01), 29: Box((0.05, 0.005, 0.05))}
    for sid, geometry in expected.items():
        setup = reference_setup(sid, "euler")
        joints = setup["joints"]
        friction = [JointFriction.from_reference(j, i, setup["mu"][0], 0.01) for i, j in enumerate(joints)]
        # cm to m: exact decimal scalings up to one rounding
        assert all(np.allclose(np.hstack(f.geometry), np.hstack(geometry), rtol=1e-15) for f in friction)
        assert all(f.mu == setup["mu"][0] for f in friction)
    fixed = reference_setup(31, "euler")["joints"][2]
    with pytest.raises(ValueError, match=r"body 2: the reference joint class 'redmax.JointFixed' has no"):
        JointFriction.from_reference(fixed, 2, 0.1, 0.01)


# ----------------------------------------------------------------------------- friction stage
def test_friction_qp_agrees_with_an_interior_point_solve_and_splits_parallel_rows_by_bound():
    import qpsolvers
    from scipy import sparse

    rng = np.random.default_rng(1)
    for rank in (1, 3, 6):
        B = rng.standard_normal((rank, 3))
        T = np.vstack([B, 2.0 * B[:1], -B[:1]])          # with rows parallel to the first
        W = T @ T.T
        c = T @ rng.standard_normal(3)
        bound = rng.uniform(0.05, 0.5, len(T))
        beta = friction_qp(W, c, bound)
        ref = qpsolvers.solve_qp(sparse.csc_matrix(W + 1e-12 * np.eye(len(W))), c, lb=-bound, ub=bound,
                                 solver="clarabel")
        mine, theirs = (0.5 * b @ W @ b + c @ b for b in (beta, ref))
        # same optimum (Clarabel's ~1e-8 accuracy) and inside the box
        assert mine <= theirs + 1e-8 * max(1.0, abs(theirs))
        assert (np.abs(beta) <= bound * (1 + 1e-12)).all()
    # parallel rows share an impulse in proportion to their bounds
    beta = friction_qp(np.ones((3, 3)), np.full(3, 0.3), np.array([0.1, 0.2, 0.3]))
    assert np.allclose(beta, -0.3 * np.array([1, 2, 3]) / 6, rtol=1e-12)


# ----------------------------------------------------------------------------- Algorithm 7
M_BOX, SIDE = 2.0, 0.2


def _box_on_incline(theta, mu):
    """Maximal rows of a 0.2 m cube resting on a plane tilted by theta about y (body x downhill)."""
    R = exp_so3([0, theta, 0])
    n = R[:, 2]
    E = _frame(R, 0.5 * SIDE * n)
    corners = np.array([[x, y, -SIDE / 2] for x in (-SIDE / 2, SIDE / 2) for y in (-SIDE / 2, SIDE / 2)])
    N, T4, _ = GroundContact(0, corners, mu, plane_normal=n).rows(E[None])
    M = np.diag([M_BOX * SIDE ** 2 / 6] * 3 + [M_BOX] * 3)
    f = np.concatenate([np.zeros(3), M_BOX * R.T @ [0, 0, -G]])
    T2 = T4.reshape(-1, 4, 6)[:, :2].reshape(-1, 6)         # t1, t2 of each contact's pyramid
    return R, M, f, N, T2, T4


def test_sp_box_sticks_below_arctan_mu():
    theta, mu = np.radians(20), 0.5                     # tan 20 deg = 0.36 < 0.5
    R, M, f, N, T2, T4 = _box_on_incline(theta, mu)
    out = staggered_projections(M, np.zeros(6), f, H, N, T2, mu, tol=1e-6)
    assert out.converged
    # at rest up to the last staggered change (tol relative) of a speed h g sin(theta) ~ 0.03 m/s
    assert np.abs(out.v).max() < 10 * 1e-6 * H * G
    sticking = contact_qp(M, H * f, N=N, r_N=np.zeros(4), T=T4, mu=np.full(4, mu))
    assert np.abs(sticking.phi).max() < 10 * 1e-6 * H * G   # the single QP agrees: at rest


def test_sp_box_slides_with_coulomb_acceleration_and_without_lifting_off():
    theta, mu = np.radians(35), 0.5                     # tan 35 deg = 0.70 > 0.5
    R, M, f, N, T2, T4 = _box_on_incline(theta, mu)
    out = staggered_projections(M, np.zeros(6), f, H, N, T2, mu, tol=1e-8)
    v = R @ out.v[3:]
    coulomb = G * (np.sin(theta) - mu * np.cos(theta))
    assert out.converged
    assert v @ R[:, 0] / H == pytest.approx(coulomb, rel=1e-12)  # exact QPs: round-off
    assert abs(v @ R[:, 2]) < 1e-12 * H * G                      # stays on the plane
    # beta is bounded by the last friction stage's normal impulses, which differ from the final
    # ones by at most tol = 1e-8 relative (a corner the final stage leaves unloaded may keep ~1e-18)
    assert (np.abs(out.beta) <= np.repeat(mu * out.alpha, 2) + 1e-8 * mu * out.alpha.max()).all()
    # Anitescu and Hart's single QP (contact_qp) slides too, but its cone complementarity lifts
    # the box off the plane at mu |v_t|: the relaxation that staggered projections avoid
    single = contact_qp(M, H * f, N=N, r_N=np.zeros(4), T=np.vstack([T2, -T2]).reshape(2, 4, 2, 6)
                        .transpose(1, 0, 2, 3).reshape(16, 6), mu=np.full(4, mu))
    v1 = R @ single.phi[3:]
    assert v1 @ R[:, 2] == pytest.approx(mu * abs(v1 @ R[:, 0]), rel=1e-5)


def test_sp_refuses_a_negative_friction_coefficient():
    R, M, f, N, T2, _ = _box_on_incline(0.3, 0.5)
    with pytest.raises(ValueError, match="'mu' must be >= 0"):
        staggered_projections(M, np.zeros(6), f, H, N, T2, -0.1)


# ----------------------------------------------------------------------------- BISP: sliders
def _slider(theta, d=0.0, n=1, side=0.1, step=0.1):
    """n cubes on prismatic-x joints in a frame tilted by theta (x downhill), each joint ``step``
    along the slide from its parent's; each body's centre sits d along the slide from its box."""
    tilt = _frame(exp_so3([0, theta, 0]))
    offset = _frame(p=(d, 0, 0))
    step = _frame(p=(step, 0, 0))
    bodies = [Body(f"block{i}", i - 1, Prismatic([1.0, 0, 0]), tilt if i == 0 else step, offset, 1.0,
                   np.eye(3) * side ** 2 / 6) for i in range(n)]
    return Model(bodies)


@pytest.mark.parametrize("mu", [0.8, 2.0])
def test_two_blocks_on_an_incline_slide_with_coulomb_acceleration_below_tan_and_stick_above(mu):
    # scene 29's slope, tan 60 deg = 1.73, with the second block on the first (the same place, so
    # no load falls outside a box: see the cantilever test); its slide grips harder (mu + 0.5),
    # so that the pair moves as one (with equal mu it is exactly at the limit)
    theta = np.pi / 3
    model = _slider(theta, n=2, step=0.0)
    friction = [JointFriction(i, mu + 0.5 * i, Box((0.1, 0.05, 0.1))) for i in range(2)]
    q, qdot, beta = np.zeros(2), np.zeros(2), None
    expected = max(0.0, G * (np.sin(theta) - mu * np.cos(theta)))
    for _ in range(50):
        v0 = qdot.copy()
        q, qdot, info = bisp_step(model, q, qdot, H, friction, beta=beta)
        beta = info.beta
        assert info.converged and info.iterations <= 10
        # the pair moves as one at Coulomb's acceleration, to the regulariser's bias (reg = 1e-9)
        assert (qdot[0] - v0[0]) / H == pytest.approx(expected, abs=1e-8 * G)
        assert abs(qdot[1]) < 1e-9
        assert (np.abs(info.beta) <= info.bound * (1 + 1e-12)).all()
    if expected == 0.0:
        assert np.abs(q).max() < 1e-9


def test_a_cantilevered_slider_binds_with_twice_the_friction():
    # the centre one box length beyond the box (scene 29's layout): the weight's moment presses
    # the box's two ends against opposite walls, and the friction doubles (JointFriction's note)
    theta, mu, side = np.pi / 3, 0.3, 0.1
    model = _slider(theta, d=side, side=side)
    _, qdot, info = bisp_step(model, [0.0], [0.0], H, [JointFriction(0, mu, Box((side, 0.05, 0.1)))])
    # to the regulariser's bias (reg = 1e-9 of the mean mobility, amplified by the spread of the
    # mobilities of the fit)
    assert qdot[0] / H == pytest.approx(G * (np.sin(theta) - 2 * mu * np.cos(theta)), rel=1e-7)


# ----------------------------------------------------------------------------- BISP: hinges
def test_wheel_on_an_axle_turns_only_beyond_the_coulomb_torque():
    m, r, radius = 2.0, 0.01, 0.1
    wheel = Model([Body("wheel", -1, Revolute([0, 1.0, 0]), np.eye(4), np.eye(4), m,
                        np.diag([0.25, 0.5, 0.25]) * m * radius ** 2)])
    I = 0.5 * m * radius ** 2
    mu = 0.4
    friction = [JointFriction(0, mu, Cylinder(r, 0.02))]
    holding = mu * r * m * G
    for tau in (0.9 * holding, 1.5 * holding):
        for q0 in (0.0, np.pi / 2):                     # the load m g along a direction of the pattern
            _, qdot, info = bisp_step(wheel, [q0], [0.0], H, friction, tau=[tau])
            assert info.converged
            # to the regulariser's bias on the load (reg = 1e-9 relative)
            assert qdot[0] / H == pytest.approx(max(0.0, (tau - holding) / I), abs=1e-7 * holding / I)
    # between two directions of the four-point pattern the pin grips harder, up to sqrt(2) times
    _, qdot, _ = bisp_step(wheel, [np.pi / 4], [0.0], H, friction, tau=[1.5 * holding])
    assert qdot[0] / H == pytest.approx((1.5 - np.sqrt(2)) * holding / I, rel=1e-6)


def _pendulum(L=0.5, m=1.0):
    T = _frame(p=(0, 0, -L / 2))
    inertia = m * L ** 2 / 12 * np.diag([1, 1, 0.01])
    return Model([Body("rod", -1, Revolute([0, 1.0, 0]), np.eye(4), T, m, inertia)])


def test_pendulum_with_joint_friction_loses_energy_every_step_and_stops():
    model, mu, r = _pendulum(), 0.5, 0.03
    friction = [JointFriction(0, mu, Cylinder(r, 0.02))]
    q, qdot, beta = np.array([1.0]), np.array([0.0]), None
    E, speeds = [sum(energies(model, q, qdot))], []
    for _ in range(500):                                # it comes to rest after about 4 s
        q, qdot, info = bisp_step(model, q, qdot, H, friction, beta=beta)
        beta = info.beta
        assert info.converged
        E.append(sum(energies(model, q, qdot)))
        speeds.append(abs(qdot[0]))
    # friction outweighs the O(h^2) energy error of the step here: no step gains energy
    assert np.diff(E).max() <= 1e-12 * abs(E[0])
    assert max(speeds[-50:]) < 1e-12                    # stuck for the last half second
    # where it stopped, gravity's torque is below the friction the hinge can give
    assert 1.0 * G * 0.25 * abs(np.sin(q[0])) <= np.sqrt(2) * mu * r * G


def _tilted_chain():
    """Scene 27 in SI units: two 10 cm bars on hinges about z, the root frame tilted 45 degrees about x."""
    tilt = _frame(exp_so3([np.pi / 4, 0, 0]))
    T = _frame(p=(0.05, 0, 0))
    link = dict(joint=Revolute([0, 0, 1.0]), T_joint_body=T, mass=0.01,
                inertia=np.diag([1.6667e-7, 8.4167e-6, 8.4167e-6]))
    return Model([Body("body1", -1, T_parent_joint=tilt, **link),
                  Body("body2", 0, T_parent_joint=_frame(p=(0.1, 0, 0)), **link)])


def test_frictional_run_never_gains_energy_and_every_impulse_is_coulomb():
    model = _tilted_chain()
    friction = [JointFriction(i, 0.6, Cylinder(0.005, 0.01)) for i in range(2)]
    q, qdot, beta = np.array([0.3, -0.5]), np.zeros(2), None
    E = [sum(energies(model, q, qdot))]
    for _ in range(100):
        q0, v0 = q, qdot
        q, qdot, info = bisp_step(model, q, qdot, H, friction, beta=beta)
        beta = info.beta
        assert info.converged and info.iterations <= 10
        E.append(sum(energies(model, q, qdot)))
        # within the bounds, and opposing the sliding wherever a point slides
        assert (np.abs(info.beta) <= info.bound * (1 + 1e-12)).all()
        assert (info.beta * info.sliding <= 1e-12 * np.abs(info.bound).max()).all()
        # friction only removes kinetic energy: ||qdot1||_A <= that of the frictionless step
        terms = _assemble(model, q0, v0, derivatives=True)
        A = terms.M
        free = linearly_implicit_euler_step(model, q0, v0, H)[1]
        assert qdot @ A @ qdot <= free @ A @ free * (1 + 1e-12)
    assert np.diff(E).max() <= 0.0


def test_bisp_without_friction_is_the_linearly_implicit_euler_step():
    rng = np.random.default_rng(3)
    joints = [Revolute(rng.standard_normal(3)), Prismatic([0, 1.0, 0]), SphericalExp(), Revolute([1.0, 0, 0])]
    bodies = [Body(f"b{i}", i - 1, j, random_transform(rng, 0.3), random_transform(rng, 0.3), 1.0 + i,
                   np.diag([0.02, 0.03, 0.04]), stiffness=2.0, damping=0.3, body_damping=0.1)
              for i, j in enumerate(joints)]
    model = Model(bodies)
    geometry = [Cylinder(0.01, 0.02), Box((0.1, 0.1, 0.1)), Sphere(0.02), Cylinder(0.01, 0.02)]
    friction = [JointFriction(i, 0.0, g) for i, g in enumerate(geometry)]
    for _ in range(3):
        q, qdot, tau = rng.standard_normal((3, model.nq))
        q1, qdot1, info = bisp_step(model, q, qdot, H, friction, tau=tau)
        ref_q, ref_qdot = linearly_implicit_euler_step(model, q, qdot, H, tau=tau)
        # the same solve of the same system: equal to the last bit
        assert np.array_equal(qdot1, ref_qdot) and np.array_equal(q1, ref_q)
        assert info.converged and info.iterations == 2 and not info.beta.any()


def test_an_unloaded_joint_converges_at_once_and_a_budget_of_one_stops_there():
    # zero gravity, coasting: no reaction, so the first contact stage already agrees with itself
    model = Model([Body("block", -1, Prismatic([1.0, 0, 0]), np.eye(4), np.eye(4), 1.0, 0.01 * np.eye(3))],
                  gravity=[0, 0, 0])
    friction = [JointFriction(0, 0.5, Box((0.1, 0.1, 0.1)))]
    _, qdot, info = bisp_step(model, [0.0], [2.0], H, friction)
    assert info.converged and info.iterations == 1 and qdot[0] == 2.0
    _, _, info = bisp_step(_slider(0.5), [0.0], [0.0], H, friction, max_iterations=1)
    assert info.iterations == 1 and not info.converged and not info.beta.any()


def test_joint_reactions_transmit_exactly_the_joint_forces():
    # J^T f_alpha = the joint forces of the step (springs, dampers, tau, linearised as in
    # Eq. 2.86); each joint's distributed wrench carries its own share along S
    rng = np.random.default_rng(4)
    model = Model([Body(f"b{i}", i - 1, Revolute(rng.standard_normal(3)), random_transform(rng, 0.3),
                        random_transform(rng, 0.3), 1.0, np.diag([0.02, 0.03, 0.04]), stiffness=3.0,
                        damping=0.2) for i in range(3)])
    friction = [JointFriction(i, 0.5, Cylinder(0.01, 0.02)) for i in range(3)]
    q, qdot, tau = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3)
    q1, qdot1, info = bisp_step(model, q, qdot, H, friction, tau=tau, tol=1e-12)
    terms = _assemble(model, q, qdot)
    joint_forces = -3.0 * (q + H * qdot1) - 0.2 * qdot1 + tau      # end-of-step springs and dampers
    # round-off relative to the wrenches (~ m g L ~ 10)
    assert np.allclose(terms.J.T @ info.f_alpha, joint_forces, atol=1e-10)
    kin = forward_kinematics(model, q)
    from redmax_edu.kinematics import joint_twist_adjoints
    for i in range(3):
        S_body = joint_twist_adjoints(model)[i] @ kin.S[i]
        assert S_body.T @ info.reactions[i] == pytest.approx(joint_forces[i], abs=1e-10)


def _spinning_chain():
    """Two bars on parallel hinges about z, in zero gravity, straight along x."""
    T = _frame(p=(0.2, 0, 0))
    link = dict(joint=Revolute([0, 0, 1.0]), T_joint_body=T, mass=1.0, inertia=np.diag([0.001, 0.01, 0.01]))
    return Model([Body("inner", -1, T_parent_joint=np.eye(4), **link),
                  Body("outer", 0, T_parent_joint=_frame(p=(0.4, 0, 0)), **link)], gravity=[0, 0, 0])


def _outer_bearing_load(model, qdot):
    friction = [JointFriction(1, 0.0, Cylinder(0.01, 0.02))]
    _, _, info = bisp_step(model, [0.0, 0.0], qdot, H, friction)
    alpha = info.alpha[0]
    return np.sqrt(np.bincount(JointFriction(1, 0.0, Cylinder(0.01, 0.02)).contacts(model.bodies[1].joint)
                               .normal_point, alpha ** 2)).sum() / H


def test_bearing_load_of_a_spinning_chain_is_its_centripetal_force_and_a_dropped_jdot_is_caught(monkeypatch):
    model, w1, w2 = _spinning_chain(), 3.0, 5.0
    # the outer bar's centre, 0.4 + 0.2 m out, turns at w1 about the root and w1 + w2 about its
    # hinge: its centripetal force m (w1^2 L1 + (w1 + w2)^2 c), all carried by the outer hinge,
    # whose radial pattern lies along it (load sum = the force, test_pin_friction...)
    centripetal = 1.0 * (w1 ** 2 * 0.4 + (w1 + w2) ** 2 * 0.2)
    # to the regulariser's bias (reg = 1e-9 relative)
    assert _outer_bearing_load(model, [w1, w2]) == pytest.approx(centripetal, rel=1e-7)
    # Eq. (2.124) as printed compares J qdot_con with the maximal velocity, without h Jdot qdot:
    # it misses the Coriolis acceleration of the relative motion and gets the load wrong
    monkeypatch.setattr(bisp, "_body_accelerations", lambda J, Jdot_qdot, v0, v1, h: J @ (v1 - v0) / h)
    wrong = _outer_bearing_load(model, [w1, w2])
    assert abs(wrong - centripetal) > 0.1 * centripetal


def test_eq_2127_as_printed_would_count_the_quadratic_velocity_vector_twice():
    # Eq. (2.127) adds J^T f_alpha to the final solve; with Eq. (2.124) as printed,
    # J^T f_alpha = -J^T M_m Jdot qdot, so even without friction the step would change
    model, q, qdot = _spinning_chain(), np.array([0.0, 0.7]), np.array([3.0, 5.0])   # bent: Jdot qdot != 0
    friction = [JointFriction(i, 0.0, Cylinder(0.01, 0.02)) for i in range(2)]
    _, qdot1, info = bisp_step(model, q, qdot, H, friction)
    terms = _assemble(model, q, qdot)
    printed_f_alpha = info.f_alpha - (model.spatial_inertias @ (terms.Jdot @ qdot).reshape(2, 6, 1)).ravel()
    printed = qdot1 + H * np.linalg.solve(terms.M, terms.J.T @ printed_f_alpha)
    assert np.array_equal(qdot1, linearly_implicit_euler_step(model, q, qdot, H)[1])
    assert np.abs(printed - qdot1).max() > 0.1 * H * np.abs(qdot).max()


# ----------------------------------------------------------------------------- BISP: external rows
def _floor_rows(model, q, body, centre, radius, plane_z, mu, gamma_=0.0):
    """A ball (centre in body coordinates) above the plane z = plane_z: an inequality row, two tangents."""
    E = body_poses(model, q)
    row = np.zeros(6 * model.n)
    R = E[body, :3, :3]
    from redmax_edu.lie import gamma
    row[6 * body: 6 * body + 6] = R[2] @ gamma(np.asarray(centre, float))
    gap = (R @ centre + E[body, :3, 3])[2] - radius - plane_z
    lowest = np.asarray(centre, float) - radius * R[2]            # R^T e_z in body coordinates
    return ExternalConstraints(model.n, C=row[None], c=[-gamma_ * gap],
                               tangents=tangent_rows(E, body, lowest, [0, 0, 1.0]), tangent_of=[0, 0], mu=mu)


def test_a_block_on_the_floor_sticks_below_mu_m_g_and_slides_above():
    plane = np.array([[1.0, 0], [0, 0], [0, 1.0]])           # translation in x and z
    m, radius, mu = 2.0, 0.05, 0.4
    model = Model([Body("ball", -1, Planar(plane), _frame(p=(0, 0, radius)), np.eye(4), m, 1e-3 * np.eye(3))])
    ext = _floor_rows(model, [0.0, 0.0], 0, [0, 0, 0], radius, 0.0, mu)
    for push in (0.5 * mu * m * G, 2.0 * mu * m * G):
        _, qdot, info = bisp_step(model, [0.0, 0.0], [0.0, 0.0], H, [], tau=[push, 0.0], external=ext)
        assert info.converged
        # the contact by an active-set QP, exact: round-off
        assert info.lam_C[0] == pytest.approx(H * m * G, rel=1e-12)
        assert qdot[0] / H == pytest.approx(max(0.0, push - mu * m * G) / m, abs=1e-12)
        assert abs(qdot[1]) < 1e-12


def test_a_spinning_rod_dragging_its_tip_on_the_floor_slows_by_coulomb_friction():
    # a hub turning about the vertical carries a rod on a horizontal hinge; the rod lies flat,
    # its tip ball on the floor, which carries half the rod's weight: N = m g / 2
    L, m, radius, mu, w = 0.6, 1.5, 0.02, 0.3, 4.0
    rod_inertia = m * L ** 2 / 12 * np.diag([0.001, 1, 1])
    model = Model([Body("hub", -1, Revolute([0, 0, 1.0]), np.eye(4), np.eye(4), 0.5, 0.001 * np.eye(3)),
                   Body("rod", 0, Revolute([0, 1.0, 0]), np.eye(4), _frame(p=(L / 2, 0, 0)), m, rod_inertia)])
    friction = [JointFriction(1, 0.0, Cylinder(0.01, 0.02))]
    ext = _floor_rows(model, [0.0, 0.0], 1, [L / 2, 0, 0], radius, -radius, mu)
    _, qdot, info = bisp_step(model, [0.0, 0.0], [w, 0.0], H, friction, external=ext)
    I_z = 0.001 + rod_inertia[2, 2] + m * (L / 2) ** 2
    assert info.converged
    # the contact is solved exactly (an active-set QP): round-off
    assert info.lam_C[0] / H == pytest.approx(m * G / 2, rel=1e-12)
    assert (qdot[0] - w) / H == pytest.approx(-mu * (m * G / 2) * L / I_z, rel=1e-12)
    assert abs(qdot[1]) < 1e-12                                   # the rod stays on the floor


def _loop_rows(model, q, qdot, loop, h, gamma_):
    """ExternalConstraints from a Loop's rows at the velocity level (as the Euler step uses them)."""
    kin = forward_kinematics(model, q, qdot)
    r = loop.rows(model, q, qdot, kin, 0.0)
    G_m = np.zeros((len(r.bias), 6 * model.n))
    for body, block in r.G_m.items():
        G_m[:, 6 * body: 6 * body + 6] = block
    return ExternalConstraints(model.n, G=G_m, g=r.w + h * r.wdot - gamma_ * r.error)


def _four_bar():
    """A crank-rocker: ground hinge, crank, coupler, rocker, closed by a hinge loop to the world."""
    T = [_frame(p=(0, 0, -0.5 * length)) for length in (0.4, 0.6, 0.5)]
    links = [Body("crank", -1, Revolute([0, 1.0, 0]), np.eye(4), T[0], 1.0, 0.02 * np.eye(3)),
             Body("coupler", 0, Revolute([0, 1.0, 0]), _frame(p=(0, 0, -0.4)), T[1], 1.0, 0.03 * np.eye(3)),
             Body("rocker", 1, Revolute([0, 1.0, 0]), _frame(p=(0, 0, -0.6)), T[2], 1.0, 0.025 * np.eye(3))]
    model = Model(links)
    q = np.array([0.6, -1.9, -1.6])
    tip = body_poses(model, q)[2] @ [0, 0, -0.25, 1]
    return model, q, Loop(2, [0, 0, -0.25], -1, tip[:3], axis=[0, 1.0, 0])


def test_bisp_with_a_loop_and_no_friction_is_the_constrained_euler_step():
    model, q, loop = _four_bar()
    qdot = np.array([1.0, 0.0, 0.0])
    qdot -= np.linalg.pinv(_loop_G(model, q, loop)) @ (_loop_G(model, q, loop) @ qdot)   # consistent
    friction = [JointFriction(i, 0.0, Cylinder(0.01, 0.02)) for i in range(3)]
    ext = _loop_rows(model, q, qdot, loop, H, 5.0)
    q1, qdot1, info = bisp_step(model, q, qdot, H, friction, external=ext)
    ref_q, ref_qdot = linearly_implicit_euler_step(model.with_constraints([loop]), q, qdot, H)
    assert np.allclose(qdot1, ref_qdot, rtol=1e-12, atol=1e-12)    # the same KKT solve
    assert info.converged


def _loop_G(model, q, loop):
    terms = _assemble(model, q, np.zeros(model.nq))
    ext = _loop_rows(model, q, np.zeros(model.nq), loop, H, 0.0)
    return ext.reduced(terms.J)[0]


def test_four_bar_with_friction_in_every_hinge_loses_energy_and_keeps_its_loop():
    model, q, loop = _four_bar()                      # scene 30's set-up: the closing hinge grips too
    friction = [JointFriction(i, 0.5, Cylinder(0.02, 0.02)) for i in range(3)]
    qdot, beta = np.zeros(3), None
    E = [sum(energies(model, q, qdot))]
    for _ in range(60):
        rows = _loop_rows(model, q, qdot, loop, H, 5.0)
        closing = LoopFriction.hinge(body_poses(model, q), (0, 1), 2, loop.point_a, [0, 1.0, 0], -1, 0.5,
                                     Cylinder(0.02, 0.02))
        ext = ExternalConstraints(model.n, G=rows.G, g=rows.g, loops=[closing])
        J = _assemble(model, q, qdot).J
        q, qdot, info = bisp_step(model, q, qdot, H, friction, external=ext, beta=beta)
        beta = info.beta
        assert info.converged
        assert (np.abs(info.beta) <= info.bound * (1 + 1e-12)).all()
        E.append(sum(energies(model, q, qdot)))
        # the loop's impulse is not a joint's: the reactions still carry only the joint forces
        # (none here); round-off relative to wrenches of order m g = 10 N
        assert np.allclose(J.T @ info.f_alpha, 0.0, atol=1e-12)
    assert np.diff(E).max() <= 1e-12 * abs(E[0])
    assert np.abs(loop.rows(model, q, qdot, forward_kinematics(model, q, qdot), 0.0).error).max() < 1e-3


def test_a_wheel_on_a_loop_axle_grips_like_one_on_a_joint():
    # the wheel moves freely in the plane (Free2D); a hinge closure to the world is its axle, with
    # the friction of the same cylinder as the wheel-on-a-joint test: the Coulomb torque mu r m g
    m, radius, r, mu = 2.0, 0.1, 0.01, 0.4
    I = 0.5 * m * radius ** 2
    inertia = np.diag([0.25, 0.25, 0.5]) * m * radius ** 2
    wheel = Model([Body("wheel", -1, Free2D(), np.eye(4), np.eye(4), m, inertia)], gravity=[0, -G, 0])
    q, qdot = np.zeros(3), np.zeros(3)
    axle = Loop(0, [0, 0, 0], -1, [0, 0, 0], axis=[0, 0, 1.0])
    E = body_poses(wheel, q)
    loop = LoopFriction.hinge(E, (0, 1), 0, [0, 0, 0], [0, 0, 1.0], -1, mu, Cylinder(r, 0.02))
    holding = mu * r * m * G
    for tau in (0.9 * holding, 1.5 * holding):
        ext = _loop_rows(wheel, q, qdot, axle, H, 5.0)
        ext = ExternalConstraints(1, G=ext.G, g=ext.g, loops=[loop])
        _, qdot1, info = bisp_step(wheel, q, qdot, H, [], tau=[0, 0, tau], external=ext)
        assert info.converged
        # the regulariser's bias (reg = 1e-9 relative) and round-off
        assert qdot1[2] / H == pytest.approx(max(0.0, (tau - holding) / I), abs=1e-7 * holding / I)
        assert np.abs(qdot1[:2]).max() < 1e-12                   # the axle holds the centre
        assert np.sqrt(np.bincount(loop.normal_point, info.alpha[0] ** 2)).sum() == pytest.approx(
            H * m * G, rel=1e-7)                                  # the axle's load is the weight


def _scene31(mu_floor):
    """Scene 31 in SI units: two 10 cm bars on hinges about y, a 1 cm ball fixed at the tip, above
    the floor z = -15 cm (a FloorContact of the constraint API)."""
    T = _frame(p=(0.05, 0, 0))
    link = dict(joint=Revolute([0, 1.0, 0]), T_joint_body=T, mass=0.01,
                inertia=np.diag([1.6667e-7, 8.4167e-6, 8.4167e-6]))
    tip = Body("ball", 1, Fixed(), _frame(p=(0.1, 0, 0)), np.eye(4), 4.18879e-3, 1.6755e-7 * np.eye(3))
    model = Model([Body("body1", -1, T_parent_joint=np.eye(4), **link),
                   Body("body2", 0, T_parent_joint=_frame(p=(0.1, 0, 0)), **link), tip])
    floor = FloorContact(2, radius=0.01, plane=_frame(p=(0, 0, -0.15)), mu=mu_floor)
    return model.with_constraints([floor])


def test_bisp_with_the_models_constraints_and_no_friction_is_the_constrained_euler_step():
    # the adapter external_constraints gives the Euler step's own rows and BISP solves them the
    # same way: a loop (a KKT solve) and a floor contact that pushes (the active-set QP); the
    # same arithmetic up to the order of a few sums (round-off)
    model, q, loop = _four_bar()
    closed = model.with_constraints([loop])
    qdot = np.zeros(3)
    for _ in range(5):
        ext = external.external_constraints(closed, q, qdot, H)
        q1, qdot1, info = bisp_step(closed, q, qdot, H, [], external=ext)
        ref_q, ref_qdot = linearly_implicit_euler_step(closed, q, qdot, H)
        assert np.allclose(qdot1, ref_qdot, rtol=1e-12, atol=1e-12)
        q, qdot = q1, qdot1
    model = _scene31(0.0)
    q, qdot, pushed = np.array([np.pi / 4, -np.pi / 4]), np.zeros(2), False
    for _ in range(60):                                  # falls 7 cm onto the floor and stays
        ext = external.external_constraints(model, q, qdot, H, gamma_=10.0)
        q1, qdot1, info = bisp_step(model, q, qdot, H, [], external=ext)
        ref_q, ref_qdot = linearly_implicit_euler_step(model, q, qdot, H, baumgarte=(5, 5, 10.0))
        assert np.allclose(qdot1, ref_qdot, rtol=1e-12, atol=1e-12 * np.abs(ref_qdot).max())
        if info.lam_C.any():
            pushed = True
            C = ext.reduced(_assemble(model, q, qdot).J)[1]
            assert C @ qdot1 == pytest.approx(ext.c, rel=1e-9, abs=1e-12)       # the QP's accuracy
        q, qdot = q1, qdot1
    assert pushed


def test_scene31_with_floor_and_joint_friction_loses_energy_and_rests_on_the_floor():
    model = _scene31(0.2)
    friction = [JointFriction(i, 0.1, Cylinder(0.01, 0.01)) for i in range(2)]
    q, qdot, beta = np.array([np.pi / 4, -np.pi / 4]), np.zeros(2), None
    E, slid = [sum(energies(model, q, qdot))], False
    for _ in range(200):
        ext = external.external_constraints(model, q, qdot, H, gamma_=10.0)
        q, qdot, info = bisp_step(model, q, qdot, H, friction, external=ext, beta=beta)
        beta = info.beta
        assert info.converged
        assert (np.abs(info.beta) <= info.bound * (1 + 1e-12)).all()
        slid |= bool(len(info.lam_C) and info.lam_C.any() and np.abs(info.beta[-2:]).max() > 0)
        E.append(sum(energies(model, q, qdot)))
    # the impact removes energy and friction never adds any; Baumgarte's push out of the floor
    # (gamma = 10/s on a millimetre gap) is the only source, far below the rest
    assert np.diff(E).max() <= 1e-3 * (E[0] - E[-1])
    assert slid
    gap = external.external_constraints(model, q, qdot, H).c   # the touching rows' -gamma g
    assert np.abs(qdot).max() < 1e-3 and len(gap) == 1


# ----------------------------------------------------------------------------- bad input
def test_joint_friction_refuses_bad_specs_naming_the_body():
    with pytest.raises(ValueError, match=r"joint friction of body 2: argument 'mu' must be >= 0"):
        JointFriction(2, -0.5, Cylinder(0.01, 0.02))
    with pytest.raises(ValueError, match=r"joint friction of body 1: the cylinder's radius must be positive"):
        JointFriction(1, 0.5, Cylinder(0.0, 0.02))
    with pytest.raises(ValueError, match=r"joint friction of body 1: the box's sides\[2\] must be positive"):
        JointFriction(1, 0.5, Box((0.1, 0.1, -0.1)))
    with pytest.raises(ValueError, match=r"joint friction of body 0: unknown geometry 'cone'"):
        JointFriction(0, 0.5, "cone")
    with pytest.raises(ValueError, match=r"argument 'body' must be >= 0"):
        JointFriction(-1, 0.5, Sphere(0.01))


def test_bisp_refuses_friction_a_joint_cannot_have():
    model = Model([Body("base", -1, Fixed(), np.eye(4), np.eye(4), 1.0, np.eye(3)),
                   Body("arm", 0, Universal(), np.eye(4), np.eye(4), 1.0, np.eye(3)),
                   Body("slide", 1, Prismatic([1.0, 1.0, 0]), np.eye(4), np.eye(4), 1.0, np.eye(3)),
                   Body("hinge", 2, Revolute([0, 0, 1.0]), np.eye(4), np.eye(4), 1.0, np.eye(3))])
    q, qdot = np.zeros(model.nq), np.zeros(model.nq)
    cases = [
        (JointFriction(0, 0.5, Cylinder(0.01, 0.02)), r"body 'base' \(index 0\): its joint is fixed"),
        (JointFriction(1, 0.5, Sphere(0.01)), r"body 'arm' \(index 1\): a universal joint has no contact"),
        (JointFriction(2, 0.5, Box((0.1, 0.1, 0.1))), r"body 'slide' \(index 2\): a Box geometry needs"),
        (JointFriction(3, 0.5, Sphere(0.01)), r"body 'hinge' \(index 3\): a revolute joint takes a Cylinder"),
        (JointFriction(7, 0.5, Sphere(0.01)), r"joint friction of body 7: the model has 4 bodies"),
    ]
    for friction, message in cases:
        with pytest.raises(ValueError, match=message):
            bisp_step(model, q, qdot, H, [friction])
    twice = [JointFriction(3, 0.5, Cylinder(0.01, 0.02))] * 2
    with pytest.raises(ValueError, match=r"body 'hinge' \(index 3\): given twice"):
        bisp_step(model, q, qdot, H, twice)
    with pytest.raises(ValueError, match="argument 'friction' must be a list of JointFriction"):
        bisp_step(model, q, qdot, H, twice[0])


def test_bisp_refuses_bad_external_rows_and_unpassed_constraints():
    model = _pendulum()
    with pytest.raises(ValueError, match="rows for 2 bodies, but the model has 1"):
        bisp_step(model, [0.0], [0.0], H, [], external=ExternalConstraints(2))
    with pytest.raises(ValueError, match="'tangent_of' must hold"):
        ExternalConstraints(1, C=np.zeros((1, 6)), tangents=np.zeros((2, 6)), tangent_of=[0, 1])
    with pytest.raises(ValueError, match="argument 'mu' must be >= 0"):
        ExternalConstraints(1, C=np.zeros((1, 6)), mu=-0.2)
    E = body_poses(model, [0.0])
    with pytest.raises(ValueError, match="bodies 0 and -1: a hinge takes a Cylinder geometry, got Sphere"):
        LoopFriction.hinge(E, (0, 1), 0, [0, 0, 0], [0, 1.0, 0], -1, 0.3, Sphere(0.01))
    with pytest.raises(ValueError, match="bodies 0 and -1: the cylinder's height must be positive"):
        LoopFriction.hinge(E, (0, 1), 0, [0, 0, 0], [0, 1.0, 0], -1, 0.3, Cylinder(0.01, 0.0))
    with pytest.raises(ValueError, match="bodies 0 and -1: argument 'mu' must be >= 0"):
        LoopFriction.hinge(E, (0, 1), 0, [0, 0, 0], [0, 1.0, 0], -1, -0.3, Cylinder(0.01, 0.02))
    loop = LoopFriction.hinge(E, (0, 1), 0, [0, 0, 0], [0, 1.0, 0], -1, 0.3, Cylinder(0.01, 0.02))
    with pytest.raises(ValueError, match=r"loops\[0\] must have rows .* name rows of G \(0 to 0\)"):
        ExternalConstraints(1, G=np.zeros((1, 6)), loops=[loop])
    closed = model.with_constraints([FloorContact(0, mu=0.3)])
    with pytest.raises(ValueError, match="has 1 constraints, which bisp_step takes as argument 'external'"):
        bisp_step(closed, [0.0], [0.0], H, [])


# ----------------------------------------------------------------------------- the exact friction stage
def test_friction_qp_is_exact_on_a_singular_mobility():
    # more rows than motions and no two parallel: the sticking rows' sliding is round-off and the
    # sliding rows sit exactly on their bounds, opposing their sliding (Coulomb's law, exactly)
    rng = np.random.default_rng(7)
    for rank in (2, 4):
        B = rng.standard_normal((7, rank))
        W, c = B @ B.T, B @ rng.standard_normal(rank)
        bound = rng.uniform(0.05, 0.3, 7)
        beta = friction_qp(W, c, bound)
        slide = W @ beta + c
        at = np.abs(beta) == bound
        assert at.any() and not at.all()
        # round-off relative to the speeds c ~ 1
        assert np.abs(slide[~at]).max() < 1e-12 * np.abs(c).max()
        assert (beta[at] * slide[at] <= 0).all()


def test_friction_qp_weighs_a_groups_speeds_by_its_split_and_lets_fixed_rows_slide():
    # two parallel rows whose speeds differ (a constraint's target moves them apart): the group's
    # speed is (0.5 * 1.0 + 1.0 * 1.4) / 1.5, the objective restricted to impulses split 1 : 2
    beta = friction_qp(np.ones((2, 2)), np.array([1.0, 1.4]), np.array([0.5, 1.0]))
    assert np.allclose(beta, -(1.9 / 1.5) * np.array([1, 2]) / 3, rtol=1e-14)
    # rows friction cannot move keep their speed: at the bound against it, or none at round-off
    W = np.diag([2.0, 0.0, 0.0])
    beta = friction_qp(W, np.array([0.1, -3.0, 1e-17]), np.array([1.0, 0.5, 0.5]))
    assert np.array_equal(beta, [-0.05, 0.5, 0.0])


# ----------------------------------------------------------------------------- the contact stage
def _scene33_stage():
    """The contact stage of scene 33's first step (the car: a loop, a prescribed crank, four floor
    contacts, two of them pushing), its rows and the step's exact solve."""
    from redmax_edu import scenes
    from redmax_edu.constrained import solve_rows
    from redmax_edu.dynamics import assemble_unchecked, euler_system

    s = scenes.scene(33)
    model, q, qdot = s.model, np.array(s.q0, float), np.array(s.qdot0, float)
    terms = assemble_unchecked(model, q, qdot, derivatives=True)
    A, b = euler_system(model, terms, s.h, None)
    loops = {f.constraint: (f.mu, f.geometry) for f in model.friction[3:]}          # the closing hinge
    ext, _ = external.external_rows(model, q, qdot, terms.kin, terms.J, terms.Jdot, s.h, 0.0, s.baumgarte[2],
                               loops)
    joints = bisp._joint_constants(model, tuple(model.friction[:3]), s.h, bisp.REG)
    T_r, _ = bisp._joint_tangent_rows(model, terms.kin, joints)
    on_twists = np.vstack([loop.tangents for loop in ext.loops] + [ext.tangents])
    F = np.vstack([T_r, on_twists @ terms.J])
    G, C = ext.reduced(terms.J)

    def solve(rhs):
        return solve_rows(model, q, A, rhs, G, ext.g, C, ext.c, "the step")
    return staggered.ContactStage(solve, A, b, F, G, C, ext.c), solve, A, b, F, G, C, ext


def test_contact_stage_response_is_the_finite_difference_of_the_exact_solve_and_a_wrong_one_is_caught():
    stage, solve, A, b, F, G, C, ext = _scene33_stage()
    beta = np.zeros(len(F))
    x0, _, lam0 = stage(beta)
    assert (lam0 > 0).sum() == 2                              # two wheels push, two do not
    X, L_G, L_C = stage._response()
    # central differences of the exact solve (a QP here) along every friction row, a step of
    # 1e-3 of the largest normal impulse: the solve is linear while the same contacts push, so
    # the differences only meet the QP's accuracy (~1e-12 of the speeds ~ 10 m/s, over the step)
    eps = 1e-3 * np.abs(lam0).max()
    for j in range(len(F)):
        e = np.zeros(len(F))
        e[j] = eps
        (xp, _, cp), (xm, _, cm) = solve(b + F.T @ e), solve(b - F.T @ e)
        assert np.allclose((xp - xm) / (2 * eps), X[:, j], rtol=1e-6, atol=1e-6 * np.abs(X).max())
        assert np.allclose((cp - cm) / (2 * eps), L_C[:, j], rtol=1e-6, atol=1e-6 * np.abs(L_C).max())
    # the step's matrix without the constraints (A^-1 F^T) is not the response
    assert np.abs(np.linalg.solve(A, F.T) - X).max() > 0.1 * np.abs(X).max()


def test_contact_stage_predicts_the_exact_solve_and_resolves_when_a_contact_lets_go():
    stage, solve, A, b, F, G, C, ext = _scene33_stage()
    x0, _, lam0 = stage(np.zeros(len(F)))
    rng = np.random.default_rng(2)
    small = 1e-3 * np.abs(lam0).max() * rng.standard_normal(len(F))
    x, lam_G, lam_C = stage(small)
    ref = solve(b + F.T @ small)
    # the same solution, the prediction by the response (round-off relative to the speeds ~ 0.1 m/s)
    assert np.allclose(x, ref[0], atol=1e-12) and np.allclose(lam_C, ref[2], atol=1e-12 * np.abs(lam0).max())
    # friction that would pull a pushing wheel's impulse to minus itself lifts that wheel
    k = int(np.argmax(lam0))
    L_C = stage._response()[2]
    lift = -2 * lam0[k] * L_C[k] / (L_C[k] @ L_C[k])
    before = stage._ref
    x, lam_G, lam_C = stage(lift)
    ref = solve(b + F.T @ lift)
    assert stage._ref is not before                             # the QP again, and a new response
    assert lam_C[k] == 0.0 and np.array_equal(x, ref[0]) and np.array_equal(lam_C, ref[2])


# ----------------------------------------------------------------------------- constants per model
@pytest.mark.parametrize("joint,geometry", [(Revolute([0.3, -0.5, 0.8]), Cylinder(0.02, 0.03)),
                                            (Prismatic([0, 0, 1.0]), Box((0.1, 0.04, 0.02))),
                                            (SphericalExp(), Sphere(0.05))])
def test_joint_constants_once_per_model_equal_the_fit_at_any_state(joint, geometry):
    # Eq. (2.125) without the actuation along S, at random states: the joint's range of motion
    # is fixed in its frame, so the cached fit holds at every state (round-off)
    rng = np.random.default_rng(5)
    model = Model([Body("a", -1, Revolute([0, 1.0, 0]), np.eye(4), random_transform(rng, 0.3), 1.0,
                        np.diag([0.02, 0.03, 0.04])),
                   Body("b", 0, joint, random_transform(rng, 0.3), random_transform(rng, 0.3), 2.0,
                        np.diag([0.03, 0.02, 0.05]))])
    friction = (JointFriction(1, 0.4, geometry),)
    (const,) = bisp._joint_constants(model, friction, H, 1e-9)
    assert bisp._joint_constants(model, friction, H, 1e-9)[0] is const
    Minv = np.linalg.inv(model.spatial_inertias[1])
    A_ji = adjoint(model.T_joint_body[1])
    A_ij = adjoint(np.linalg.inv(model.T_joint_body[1]))        # body-frame wrench -> joint frame: A_ij^T
    L = np.linalg.cholesky(A_ji @ Minv @ A_ji.T)
    for _ in range(3):
        q = rng.standard_normal(model.nq)
        S = forward_kinematics(model, q).S[1]
        without_actuation = np.eye(6) - S @ np.linalg.pinv(S)
        fit = bisp._impulse_fit(const.contacts.normals, L, H, 1e-9) @ without_actuation @ A_ij.T
        assert np.allclose(const.fit, fit, rtol=1e-9, atol=1e-12 * np.abs(fit).max())


def test_contact_impulses_carry_the_bending_moment_about_the_hinge():
    """Two bars held out horizontally on hinges about the vertical, gravity along the hinges: at
    rest, the root hinge's contact impulses (Eq. 2.125) must rebuild the wrench it holds the bars
    with, taken about the hinge: lift (m1 + m2) g and the moment -g (m1 x1 + m2 x2) about y
    (x1 = 0.05 m, x2 = 0.15 m, the bars' centres). Taking the body-frame reaction into the joint
    frame with Ad(E_j_i)^T instead of Ad(E_i_j)^T takes the moment about the wrong point (a sign
    or an offset away from the truth), which this catches."""
    m1, m2, g = 0.01, 0.01, 9.81
    centre, elbow = np.eye(4), np.eye(4)
    centre[0, 3], elbow[0, 3] = 0.05, 0.1
    bars = Model([Body("b1", -1, Revolute([0, 0, 1.0]), np.eye(4), centre, m1, np.diag([1e-6, 1e-5, 1e-5])),
                  Body("b2", 0, Revolute([0, 0, 1.0]), elbow, centre, m2, np.diag([1e-6, 1e-5, 1e-5]))],
                 gravity=[0, 0, -g])
    friction = [JointFriction(0, 0.0, Cylinder(0.005, 0.01)), JointFriction(1, 0.0, Cylinder(0.005, 0.01))]
    _, qdot1, info = bisp_step(bars, [0.0, 0.0], [0.0, 0.0], H, friction, tol=1e-12)
    assert np.abs(qdot1).max() < 1e-12                         # nothing turns: gravity is along the axes
    normals = [f.contacts(bars.bodies[f.body].joint).normals for f in friction]
    root, outer = (n.T @ a / H for n, a in zip(normals, info.alpha, strict=True))
    assert root[5] == pytest.approx((m1 + m2) * g, rel=1e-6)
    assert root[1] == pytest.approx(-g * (m1 * 0.05 + m2 * 0.15), rel=1e-6)
    assert outer[1] == pytest.approx(-g * m2 * 0.05, rel=1e-6)


def test_twist_rows_of_the_constraints_give_the_reduced_rows():
    # G = G_r + G_m J: scene 33's loop, floor contacts and maximal crank act on the twists only
    from redmax_edu import scenes
    from redmax_edu.constrained import assemble_constraints
    from redmax_edu.constraints import CoordinateCoupling
    from redmax_edu.jacobian import fill_jacobian

    s = scenes.scene(33)
    model, q = s.model, np.array(s.q0, float)
    kin = forward_kinematics(model, q, np.zeros(model.nq))
    J, Jdot = fill_jacobian(model, kin, with_derivative=True)
    rows = assemble_constraints(model, q, np.zeros(model.nq), kin, J, Jdot, 0.0, twists=True)
    assert rows.G_m.shape == (len(rows.G), 6 * model.n)
    assert np.allclose(rows.G, rows.G_m @ J, atol=1e-15)
    assert assemble_constraints(model, q, np.zeros(model.nq), kin, J, Jdot, 0.0).G_m is None
    # a coupling of two joint coordinates acts on qdot directly: no twist part
    coupled = _four_bar()[0].with_constraints([CoordinateCoupling(0, 1)])
    kin = forward_kinematics(coupled, np.zeros(3), np.zeros(3))
    J, Jdot = fill_jacobian(coupled, kin, with_derivative=True)
    rows = assemble_constraints(coupled, np.zeros(3), np.zeros(3), kin, J, Jdot, 0.0, twists=True)
    assert not rows.G_m.any() and rows.G.any()


def test_the_free_bodies_mobility_overestimates_the_articulated_one_at_scene27s_root_hinge():
    # the module notes' figure: T_m M_m^-1 T_m^T is 250 to 1400 times T_r A^-1 T_r^T there
    from redmax_edu import scenes
    from redmax_edu.dynamics import assemble_unchecked, euler_system

    s = scenes.scene(27)
    q, qdot = np.array(s.q0, float), np.array(s.qdot0, float)
    terms = assemble_unchecked(s.model, q, qdot, derivatives=True)
    A, _ = euler_system(s.model, terms, s.h, None)
    joints = bisp._joint_constants(s.model, s.model.friction, s.h, bisp.REG)
    T_r, T_m = bisp._joint_tangent_rows(s.model, terms.kin, joints)
    assert np.allclose(T_m @ terms.J, T_r, atol=1e-15)
    free = np.diag(T_m @ bisp._block_diag(np.linalg.inv(s.model.spatial_inertias)) @ T_m.T)
    ratio = free[:8] / np.diag(T_r @ np.linalg.solve(A, T_r.T))[:8]     # the root hinge's eight rows
    assert 240 < ratio.min() < 260 and 1400 < ratio.max() < 1450


# ----------------------------------------------------------------------------- iterations of the scenes
def _iterations(scene_id, steps=None):
    from redmax_edu import scenes

    s = scenes.scene(scene_id)
    t0, t1 = s.spans["euler"]
    return s.simulate("euler", t_span=(t0, t1 if steps is None else t0 + steps * s.h)).friction_iterations


def test_the_friction_stage_with_the_constraints_response_converges_where_the_steps_matrix_alone_stalls(
        monkeypatch):
    # scene 30's four-bar: 200 steps, on average 4.9 iterations and at most 7; with the step's
    # matrix alone (T_r A^-1 T_r^T, blind to the loop closure) 11.1 and 6 steps at the budget of 100
    iterations = _iterations(30)
    assert 4.5 < iterations.mean() < 5.5 and iterations.max() <= 8

    def blind(stage, x, beta):
        W = stage.F @ np.linalg.solve(stage.A, stage.F.T)
        return staggered.FrictionQP(0.5 * (W + W.T)), stage.F @ x - W @ beta
    monkeypatch.setattr(staggered.ContactStage, "friction_problem", blind)
    iterations = _iterations(30)
    assert iterations.mean() > 10.0 and (iterations == 100).sum() >= 5


def test_anderson_acceleration_shortens_the_slow_staggered_iterations(monkeypatch):
    # scene 28's ball joints (mu = 5) and scene 33's car (mu = 0.8 everywhere): friction raises
    # the loads that bound it; accelerated, 3.5 iterations per step on average (at most 9) and 7.0
    # (at most 14); plain, scene 28 takes 5.8 (at most 17)
    iterations = _iterations(28)
    assert 3.3 < iterations.mean() < 3.7 and iterations.max() <= 10
    iterations = _iterations(33)
    assert 6.5 < iterations.mean() < 7.5 and iterations.max() <= 16
    monkeypatch.setattr(bisp._Anderson, "__call__", lambda self, g: g)
    iterations = _iterations(28)
    assert 5.7 < iterations.mean() < 5.9 and iterations.max() == 17


# ----------------------------------------------------------------------------- bad input
def test_the_constraint_qp_tells_an_infeasible_set_from_an_unstable_step():
    from redmax_edu.constrained import inequality_qp
    from redmax_edu.singularity import SingularMassMatrixError

    A, b, none = np.eye(2), np.zeros(2), np.zeros((0, 2))
    G, C = np.array([[1.0, 0.0]]), np.array([[1.0, 0.0]])
    with pytest.raises(ValueError, match="has no solution: the active inequalities"):
        inequality_qp(A, b, G, np.array([0.0]), C, np.array([1.0]))       # x0 = 0 and x0 >= 1
    with pytest.raises(SingularMassMatrixError, match="not positive definite"):
        inequality_qp(np.diag([1.0, -1.0]), b, none, np.zeros(0), C, np.array([1.0]))


def test_frictional_euler_step_refuses_a_warm_start_of_the_wrong_size():
    from redmax_edu import scenes

    s = scenes.scene(27)
    with pytest.raises(ValueError, match="argument 'beta'"):
        bisp.frictional_euler_step(s.model, s.q0, s.qdot0, s.h, beta=np.zeros(3))
    with pytest.raises(ValueError, match="argument 'beta'"):
        bisp_step(s.model, s.q0, s.qdot0, s.h, s.model.friction, beta=np.zeros(17))
