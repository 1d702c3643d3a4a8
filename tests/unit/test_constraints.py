"""Constraints of §2.8-2.9: rows against finite differences, the solves, and bad input.

The rows of a position-level constraint are the derivative of its error: along a motion
``q(s) = q + s qdot`` (and ``t + s``), ``d g / ds = G qdot - w`` and
``d (G qdot) / ds = Gdot qdot`` (Eq. 2.103). Central differences with a step of 1e-6 have a
truncation error of order 1e-12 relative to these smooth functions and a round-off error of
order 1e-16 / 1e-6 = 1e-10, so 1e-6 relative leaves a wide margin and still catches any
missing term (those are of order one).
"""

import numpy as np
import pytest

from redmax_edu.constrained import (
    assemble_constraints,
    check_constraint_set,
    constraint_errors,
    constraint_rows,
)
from redmax_edu.constraints import (
    CoordinateCoupling,
    FloorContact,
    JointLimit,
    Loop,
    NodeAttachment,
    PrescribedBody,
    PrescribedJoint,
    PrescribedJointVelocity,
    Rows,
)
from redmax_edu.deformable import DeformableSpring
from redmax_edu.dynamics import (
    constrained_dynamics,
    forward_dynamics,
    inverse_dynamics,
    linearly_implicit_euler_step,
)
from redmax_edu.hyper_reduced import hyper_reduced_dynamics
from redmax_edu.jacobian import fill_jacobian
from redmax_edu.joints import Revolute, SphericalExp
from redmax_edu.kinematics import body_poses, forward_kinematics
from redmax_edu.maximal.forces import Attachment
from redmax_edu.model import Body, Model

from .random_trees import random_state, random_tree

STEP = 1e-6
RTOL = 1e-6


def _rows(model, q, qdot, t=0.0):
    return constraint_rows(model, q, qdot, t)


def _check_rows_against_differences(model, q, qdot, t=0.0):
    """G qdot - w = dg/ds and Gdot qdot = d(G qdot)/ds along (q + s qdot, t + s)."""
    r0 = _rows(model, q, qdot, t)
    plus, minus = _rows(model, q + STEP * qdot, qdot, t + STEP), _rows(model, q - STEP * qdot, qdot, t - STEP)
    dg = (plus.error - minus.error) / (2 * STEP)
    dGqdot = (plus.G @ qdot - minus.G @ qdot) / (2 * STEP)
    scale = 1.0 + np.abs(r0.G @ qdot).max()
    np.testing.assert_allclose(r0.G @ qdot - r0.w, dg, rtol=0, atol=RTOL * scale)
    np.testing.assert_allclose(r0.Gdot_qdot, dGqdot, rtol=0, atol=RTOL * (1.0 + np.abs(dGqdot).max()))
    return r0


def _pendulum_chain(n=3, L=1.0, axis=(0, 1, 0)):
    """n uniform links of length L hinged about ``axis`` at their top ends, hanging along -z."""
    com, top = np.eye(4), np.eye(4)
    com[2, 3], top[2, 3] = -L / 2, -L
    bodies = [Body(f"link{i + 1}", i - 1, Revolute(axis), np.eye(4) if i == 0 else top, com, 1.0,
                   np.diag([L**2 / 12, L**2 / 12, 1e-3])) for i in range(n)]
    return Model(bodies)


@pytest.fixture(params=range(3))
def tree(request):
    rng = np.random.default_rng(300 + request.param)
    model = random_tree(rng, 6)
    q, qdot = random_state(rng, model)
    return rng, model, q, qdot


def _first_with_dofs(model, start=0):
    return next(i for i in range(start, model.n) if model.bodies[i].joint.ndof)


# --- rows against finite differences ----------------------------------------------------------------

@pytest.mark.parametrize("axis", [None, "random"])
def test_loop_rows_are_the_derivative_of_the_gap_on_random_trees(tree, axis):
    rng, model, q, qdot = tree
    a, b = model.n - 1, int(rng.integers(model.n - 1))
    ax = None if axis is None else rng.standard_normal(3)
    closed = model.with_constraints([Loop(a, rng.standard_normal(3), b, rng.standard_normal(3), axis=ax)])
    r = _check_rows_against_differences(closed, q, qdot)
    assert np.abs(r.error).max() > 1e-3  # away from the closed configuration: every term counts


def test_loop_to_a_world_point_rows_are_the_derivative_of_the_gap(tree):
    rng, model, q, qdot = tree
    closed = model.with_constraints([Loop(model.n - 1, rng.standard_normal(3), -1, rng.standard_normal(3))])
    _check_rows_against_differences(closed, q, qdot)


def test_coupling_limit_and_prescribed_joint_rows_are_derivatives(tree):
    rng, model, q, qdot = tree
    i = _first_with_dofs(model)
    j = _first_with_dofs(model, i + 1)
    motion = lambda t: (np.full(model.bodies[j].joint.ndof, np.sin(t)),  # noqa: E731
                        np.full(model.bodies[j].joint.ndof, np.cos(t)),
                        np.full(model.bodies[j].joint.ndof, -np.sin(t)))
    constrained = model.with_constraints([CoordinateCoupling(i, j, ratio=-0.7, offset=0.2),
                                          JointLimit(i, -0.3, 0.4), PrescribedJoint(j, motion)])
    _check_rows_against_differences(constrained, q, qdot, t=0.7)


def test_floor_contact_rows_are_the_derivative_of_the_gap(tree):
    rng, model, q, qdot = tree
    plane = np.eye(4)
    plane[:3, :3] = np.linalg.qr(rng.standard_normal((3, 3)))[0] * np.array([1, 1, 1])
    if np.linalg.det(plane[:3, :3]) < 0:
        plane[:3, 0] *= -1
    plane[:3, 3] = rng.standard_normal(3)
    floor = FloorContact(model.n - 1, radius=0.3, point=rng.standard_normal(3), plane=plane, mu=0.5)
    _check_rows_against_differences(model.with_constraints([floor]), q, qdot)


def test_node_attachment_rows_are_the_derivative_of_the_gap(rng):
    model = _pendulum_chain(2)
    chain = DeformableSpring([[1.0, 0, 0], [1.5, 0, -0.5], [2.0, 0, -1.0]], stiffness=50.0, mass=0.3)
    model = model.with_deformables([chain]).with_constraints(
        [NodeAttachment(0, 0, -1, [1.0, 0, 0]), NodeAttachment(0, 2, 1, [0.1, 0.0, -0.4])])
    q = model.coordinates(rng.standard_normal(2)) + 0.1 * np.r_[0, 0, rng.standard_normal(9)]
    qdot = rng.standard_normal(model.nq)
    _check_rows_against_differences(model, q, qdot)


def test_velocity_constraints_become_the_expected_reduced_rows(tree):
    """A joint velocity measured between two bodies is exactly the joint's coordinate row
    (Eq. 2.105's G_m J_mr), and a prescribed twist picks rows of J and Jdot qdot."""
    rng, model, q, qdot = tree
    i = next(k for k in range(1, model.n) if model.bodies[k].joint.kind in ("revolute", "prismatic"))
    comps = [1, 3, 5]
    model = model.with_constraints([
        PrescribedJointVelocity(i, lambda t: (2.0, 0.0)),
        PrescribedBody(model.n - 1, comps, lambda t, E, phi: (np.zeros(3), np.zeros(3)))])
    rows = _rows(model, q, qdot)
    e = np.zeros(model.nq)
    e[model.dofs[i].start] = 1.0
    np.testing.assert_allclose(rows.G[0], e, atol=1e-12)
    assert abs(rows.Gdot_qdot[0]) < 1e-10 * (1 + np.abs(qdot).max() ** 2)
    kin = forward_kinematics(model, q, qdot)
    J, Jdot = fill_jacobian(model, kin, with_derivative=True)
    last = slice(6 * (model.n - 1), 6 * model.n)
    np.testing.assert_allclose(rows.G[1:], J[last][comps], atol=1e-12)
    np.testing.assert_allclose(rows.Gdot_qdot[1:], (Jdot @ qdot)[last][comps], atol=1e-12)


def test_rows_without_the_jacobian_equal_the_dense_ones(tree):
    """With J = Jdot = None the maximal rows are mapped by Algorithms 5 and 6 (J^T G_m^T and
    Jdot qdot in O(n)): the same rows as G_m J and G_m Jdot qdot, to round-off (1e-12)."""
    rng, model, q, qdot = tree
    i = next(k for k in range(1, model.n) if model.bodies[k].joint.kind in ("revolute", "prismatic"))
    model = model.with_constraints([
        Loop(model.n - 1, rng.standard_normal(3), 1, rng.standard_normal(3)),
        PrescribedJointVelocity(i, lambda t: (2.0, 0.5)),
        CoordinateCoupling(i, _first_with_dofs(model), ratio=2.0),
        FloorContact(2, radius=0.1, point=rng.standard_normal(3))])
    kin = forward_kinematics(model, q, qdot)
    dense = assemble_constraints(model, q, qdot, kin, *fill_jacobian(model, kin, with_derivative=True), 0.3)
    products = assemble_constraints(model, q, qdot, kin, None, None, 0.3)
    np.testing.assert_allclose(products.G, dense.G, rtol=0, atol=1e-12)
    scale = 1 + np.abs(qdot).max() ** 2                     # Gdot qdot is quadratic in the velocities
    np.testing.assert_allclose(products.Gdot_qdot, dense.Gdot_qdot, rtol=0, atol=1e-12 * scale)
    for name in ("error", "w", "wdot", "inequality", "owners", "blocks"):
        np.testing.assert_array_equal(getattr(products, name), getattr(dense, name))


class _LoopWithoutFrameRotation(Loop):
    """A wrong Loop: drops the velocity product of body a's turning frame from Gdot qdot."""

    def rows(self, model, q, qdot, kin, t):
        r = super().rows(model, q, qdot, kin, t)
        w_a = kin.phi[self.a][:3]
        E = kin.E_wi[self.a]
        u = E[:3, :3].T @ ((E[:3, :3] @ self.point_a + E[:3, 3]) - self._other(kin))
        wrong = r.bias + self.V.T @ np.cross(w_a, np.cross(u, w_a))
        return Rows(r.G_r, r.G_m, wrong, r.error, r.w, r.wdot)

    def _other(self, kin):
        E = kin.E_wi[self.b]
        return E[:3, :3] @ self.point_b + E[:3, 3]


def test_the_difference_check_catches_a_dropped_term(tree):
    rng, model, q, qdot = tree
    wrong = _LoopWithoutFrameRotation(model.n - 1, rng.standard_normal(3), 0, rng.standard_normal(3))
    with pytest.raises(AssertionError):
        _check_rows_against_differences(model.with_constraints([wrong]), q, qdot)


# --- the solves --------------------------------------------------------------------------------

def test_coupled_chain_moves_as_its_hyper_reduced_model():
    """Two couplings q2 = q1 / 2, q3 = q2 / 2 (the reference's scene 7) by KKT equal the
    hyper-reduced model with J_rR = (1, 1/2, 1/4) (Eq. 2.90), on a consistent state."""
    chain = _pendulum_chain(3)
    model = chain.with_constraints([CoordinateCoupling(0, 1, 0.5), CoordinateCoupling(1, 2, 0.5)])
    J_rR = np.array([[1.0], [0.5], [0.25]])
    q, qdot = J_rR[:, 0] * 0.7, J_rR[:, 0] * -1.3
    qddot = forward_dynamics(model, q, qdot)
    qddot_R = hyper_reduced_dynamics(chain, J_rR, q, qdot)
    np.testing.assert_allclose(qddot, J_rR @ qddot_R, rtol=1e-12, atol=1e-12)


def test_prescribed_joint_gets_its_acceleration_and_the_inverse_dynamics_torque(rng):
    """Hybrid dynamics (Eq. 2.113): on the prescribed track the joint accelerates as told,
    and its multiplier is the torque inverse dynamics gives for the resulting motion."""
    model = _pendulum_chain(3)
    motion = lambda t: ([0.4 * t**2], [0.8 * t], [0.8])  # noqa: E731
    t = 0.5
    q_p, qdot_p, _ = motion(t)
    q, qdot = np.array([q_p[0], 0.3, -0.2]), np.array([qdot_p[0], 0.5, 1.0])
    sol = constrained_dynamics(model.with_constraints([PrescribedJoint(0, motion)]), q, qdot, t=t)
    assert sol.x[0] == pytest.approx(0.8, abs=1e-12)
    tau = inverse_dynamics(model, q, qdot, sol.x)
    np.testing.assert_allclose(sol.generalized_force(0), tau, atol=1e-10)
    # the same prescription through a maximal constraint between the bodies gives the same motion
    via_bodies = constrained_dynamics(
        model.with_constraints([PrescribedJointVelocity(0, lambda s: motion(s)[1:])]), q, qdot, t=t)
    np.testing.assert_allclose(via_bodies.x, sol.x, atol=1e-10)


def test_four_bar_accelerations_keep_the_loop_closed():
    """A planar four-bar (three links hinged to the world, the last closed to a world pin):
    at a closed, consistent state the accelerations satisfy G qddot = -Gdot qdot (Eq. 2.105)."""
    chain = _pendulum_chain(3)
    q = np.array([0.4, -0.9, 0.8])
    tip = body_poses(chain, q)[2] @ [0, 0, -0.5, 1]
    model = chain.with_constraints([Loop(2, [0, 0, -0.5], -1, tip[:3], axis=[0, 1, 0])])
    G = _rows(model, q, np.zeros(3)).G
    qdot = np.linalg.svd(G)[2][-1] * 2.0                     # a velocity in G's null space
    rows = _rows(model, q, qdot)
    assert np.abs(rows.error).max() < 1e-12 and np.abs(rows.G @ qdot).max() < 1e-12
    qddot = forward_dynamics(model, q, qdot)
    np.testing.assert_allclose(rows.G @ qddot, -rows.Gdot_qdot, atol=1e-10)


def test_euler_step_meets_the_velocity_level_rows():
    model = _pendulum_chain(3).with_constraints([CoordinateCoupling(0, 2, -1.0)])
    q, qdot, h = np.array([0.3, 0.1, -0.25]), np.array([1.0, 0.0, -0.9]), 0.01
    q1, qdot1 = linearly_implicit_euler_step(model, q, qdot, h, baumgarte=(5, 5, 5))
    rows = _rows(model, q, qdot)
    np.testing.assert_allclose(rows.G @ qdot1, rows.velocity_rhs(h, 5.0), atol=1e-12)


def test_joint_limit_acts_only_when_reached():
    chain = _pendulum_chain(2)
    limited = chain.with_constraints([JointLimit(1, -0.5, 0.5)])
    q, qdot, h = np.array([0.2, 0.1]), np.array([0.0, 1.0]), 0.01
    np.testing.assert_allclose(linearly_implicit_euler_step(limited, q, qdot, h)[1],
                               linearly_implicit_euler_step(chain, q, qdot, h)[1], atol=1e-14)
    at = np.array([0.2, 0.5])                               # on the upper bound, moving into it
    free = linearly_implicit_euler_step(chain, at, qdot, h)[1]
    stopped = linearly_implicit_euler_step(limited, at, qdot, h)[1]
    assert free[1] > 0.5 and stopped[1] <= 1e-7             # the QP keeps qdot1 from entering
    sol = constrained_dynamics(limited, at, np.zeros(2))
    assert sol.x[1] <= 1e-9 and sol.lam[1] >= -1e-9          # pushes back, never pulls


def test_constraint_errors_measure_the_drift():
    chain = _pendulum_chain(2)
    model = chain.with_constraints([CoordinateCoupling(0, 1, 2.0), JointLimit(0, -1.0, 1.0)])
    errors = constraint_errors(model, [0.1, 0.3])
    np.testing.assert_allclose(errors[0], [0.1])
    np.testing.assert_allclose(errors[1], [1.1, 0.9])


# --- redundant sets and bad input -----------------------------------------------------------------

def test_a_repeated_prescription_is_named():
    chain = _pendulum_chain(2)
    motion = lambda t: ([0.0], [0.0], [0.0])  # noqa: E731
    model = chain.with_constraints([PrescribedJoint(0, motion), PrescribedJoint(0, motion, name="again")])
    with pytest.raises(ValueError, match=r"constraints\[1\], prescribed joint 'again': its rows repeat"):
        forward_dynamics(model, [0.0, 0.0], [0.0, 0.0])
    rows = _rows(model, np.zeros(2), np.zeros(2))
    with pytest.raises(ValueError, match="prescribed joint of 'link1'"):
        check_constraint_set(model, rows)


@pytest.mark.parametrize("build, match", [
    (lambda m: Loop(0, [0, 0, 0], 0, [0, 0, 0]), "same body"),
    (lambda m: Loop(5, [0, 0, 0], 0, [0, 0, 0]), "field 'a' is 5, but the model has 2 bodies"),
    (lambda m: JointLimit(0, 1.0, -1.0), "'lower' = 1 is above 'upper' = -1"),
    (lambda m: JointLimit(0, 0.0, 1.0, dof=1), "field 'dof' is 1, but the revolute joint of body 'link1'"),
    (lambda m: PrescribedJoint(4, lambda t: ([0], [0], [0])), "field 'body' is 4"),
    (lambda m: PrescribedJoint(0, "fast"), "argument 'motion' must be a function"),
    (lambda m: CoordinateCoupling(0, 1, dof_b=2), "field 'dof_b' is 2"),
    (lambda m: FloorContact(1, mu=-0.2), "'mu' must be >= 0"),
    (lambda m: FloorContact(1, radius=-1.0), "'radius' must be >= 0"),
    (lambda m: PrescribedBody(1, [0, 7], lambda t, E, p: ([0, 0], [0, 0])), "distinct indices 0-5"),
    (lambda m: NodeAttachment(0, 0, 1, [0, 0, 0]), "field 'deformable' is 0, but the model has 0"),
])
def test_bad_constraints_are_refused_naming_them(build, match):
    chain = _pendulum_chain(2)
    with pytest.raises(ValueError, match=match):
        chain.with_constraints([build(chain)])


def test_prescribed_joint_velocity_needs_a_constant_joint_jacobian():
    T = np.eye(4)
    T[2, 3] = -0.5
    ball = Model([Body("ball", -1, SphericalExp(), np.eye(4), T, 1.0, 0.01 * np.eye(3))])
    with pytest.raises(ValueError, match="joint of body 'ball' is spherical_exp"):
        ball.with_constraints([PrescribedJointVelocity(0, lambda t: (1.0, 0.0))])


def test_a_prescribed_joint_on_a_fixed_joint_is_refused():
    from redmax_edu.joints import Fixed

    model = Model([Body("base", -1, Fixed(), np.eye(4), np.eye(4), 1.0, np.eye(3))])
    with pytest.raises(ValueError, match="fixed joint of body 'base' has no coordinate to prescribe"):
        model.with_constraints([PrescribedJoint(0, lambda t: ([], [], []))])


def test_a_motion_function_of_the_wrong_shape_is_named():
    model = _pendulum_chain(2).with_constraints([PrescribedJoint(1, lambda t: ([0.0, 1.0], [0.0], [0.0]))])
    with pytest.raises(ValueError, match="prescribed joint of 'link2'"):
        forward_dynamics(model, [0.0, 0.0], [0.0, 0.0])


def test_attaching_an_attached_node_is_refused():
    chain = DeformableSpring([[0.0, 0, 0], [1.0, 0, 0]], 10.0, 1.0, first=Attachment(-1, [0, 0, 0]))
    model = _pendulum_chain(1).with_deformables([chain])
    with pytest.raises(ValueError, match="node 0 is not a free node"):
        model.with_constraints([NodeAttachment(0, 0, 0, [0, 0, 0])])


def test_model_keeps_its_constraints_through_copies():
    model = _pendulum_chain(2).with_constraints([CoordinateCoupling(0, 1)])
    assert model.with_body(0, mass=2.0).constraints == model.constraints
    assert model.with_forces([]).constraints == model.constraints
    assert "constraints=1" in repr(model)
    with pytest.raises(ValueError, match=r"constraints\[0\] must be a Constraint"):
        model.with_constraints(["loop"])


def test_simulated_four_bar_stays_closed_with_baumgarte_and_drifts_without():
    """Both integrators keep the loop closed to a small drift with the reference's gains;
    without stabilisation the drift of RK45 is larger (§1.12)."""
    from redmax_edu.integrators import simulate

    chain = _pendulum_chain(3)
    q0 = np.array([0.4, -0.9, 0.8])
    tip = body_poses(chain, q0)[2] @ [0, 0, -0.5, 1]
    model = chain.with_constraints([Loop(2, [0, 0, -0.5], -1, tip[:3], axis=[0, 1, 0])])

    def drift(traj):
        return max(np.abs(constraint_errors(traj.models[k], traj.q[k])[0]).max() for k in range(len(traj.t)))

    stabilised = drift(simulate(model, q0, np.zeros(3), (0.0, 2.0)))
    loose = drift(simulate(model, q0, np.zeros(3), (0.0, 2.0), baumgarte=(0.0, 0.0, 0.0)))
    euler = drift(simulate(model, q0, np.zeros(3), (0.0, 2.0), method="euler", h=0.01))
    assert stabilised < 1e-4 and euler < 1e-2
    assert loose > 3 * stabilised


def test_simulate_refuses_a_redundant_set_before_it_starts():
    from redmax_edu.integrators import simulate

    chain = _pendulum_chain(2)
    model = chain.with_constraints([CoordinateCoupling(0, 1), CoordinateCoupling(0, 1, name="twice")])
    for method, h in (("rk45", None), ("euler", 0.01)):
        with pytest.raises(ValueError, match=r"constraints\[1\], coupling 'twice': its rows repeat"):
            simulate(model, [0.1, 0.1], [0.0, 0.0], (0.0, 1.0), method=method, h=h)


def test_an_euler_run_never_crosses_a_joint_limit():
    """At the velocity level a limit that still holds only keeps the step from crossing it
    (``C qdot1 >= -c / h``), so the joint stops on the bound instead of overshooting."""
    from redmax_edu.integrators import simulate

    model = _pendulum_chain(2).with_constraints([JointLimit(1, -0.3, 0.3)])
    tr = simulate(model, [1.2, 0.0], [0.0, 0.0], (0.0, 2.0), method="euler", h=0.01)
    assert np.abs(tr.q[:, 1]).max() <= 0.3 + 1e-12
    assert np.isclose(np.abs(tr.q[:, 1]).max(), 0.3)  # it does reach the bound


def test_a_joint_limit_with_an_infinite_bound_has_one_row():
    chain = _pendulum_chain(2)
    model = chain.with_constraints([JointLimit(1, -0.3, np.inf)])
    rows = _rows(model, np.array([0.0, 0.5]), np.zeros(2))
    assert rows.G.shape == (1, 2) and rows.G[0, 1] == 1.0 and rows.error[0] == pytest.approx(0.8)
    from redmax_edu.integrators import simulate

    tr = simulate(model, [1.2, 0.0], [0.0, 0.0], (0.0, 1.0), method="euler", h=0.01)
    assert tr.q[:, 1].min() >= -0.3 - 1e-12
    with pytest.raises(ValueError, match="'lower' = inf is above"):
        JointLimit(1, np.inf, np.inf)
    with pytest.raises(ValueError, match="argument 'upper' must be a number"):
        JointLimit(1, 0.0, "high")
