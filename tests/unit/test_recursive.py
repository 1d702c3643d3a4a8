"""Unit tests of redmax_edu.recursive: the O(n) sweeps equal the dense path of redmax_edu.dynamics.

Error measure: ``max|a - b| / max(1, max|b|)``. Both paths are exact, so they agree to round-off
(~1e-14 here); 1e-10 leaves room for it, while a dropped term shows up at O(1e-1).
Forward dynamics, hybrid dynamics and the inverse inertia solve with ``M_r``, so their round-off
grows with its condition number: their trees keep every joint away from its chart
singularities (``cond M_r`` ~1e6, differences ~1e-12; at gimbal lock it reaches 1e8 and more).
The constrained solves (§2.12) add a small dense solve or QP on the multipliers: the recursive
dual and the dense primal agree to ~1e-14 where the multipliers are unique and to ~1e-11 where
an active inequality repeats the equalities (the degenerate QP), inside 1e-10.
"""

from dataclasses import replace

import numpy as np
import pytest

import redmax_edu.recursive as recursive
from redmax_edu.constrained import check_constraint_set, constraint_rows
from redmax_edu.constraints import (
    CoordinateCoupling,
    FloorContact,
    JointLimit,
    Loop,
    PrescribedJoint,
    PrescribedJointVelocity,
)
from redmax_edu.dynamics import (
    _assemble,
    constrained_dynamics,
    forward_dynamics,
    inverse_dynamics,
    mass_matrix,
    reduced_forces,
)
from redmax_edu.jacobian import jacobian, jacobian_and_derivative
from redmax_edu.joints import Free3DExp, Revolute
from redmax_edu.kinematics import forward_kinematics
from redmax_edu.lie import ad_unchecked
from redmax_edu.model import Body, Model
from redmax_edu.recursive import (
    body_accelerations,
    inverse_inertia,
    inverse_inertia_product,
    recursive_constrained_dynamics,
    recursive_forward_dynamics,
    recursive_hybrid_dynamics,
    recursive_inverse_dynamics,
)
from redmax_edu.singularity import SingularMassMatrixError

from .random_trees import every_joint_tree, random_state, random_tree, with_springs
from .test_deformable import deformable_model

#: The 7-coordinate composite moves a body along only 6 directions: M_r is singular with it.
DEPENDENT = ("composite_mixed",)

TOL = 1e-10


def relative_error(a, b):
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


@pytest.fixture(params=range(3), ids=lambda k: f"seed{k}")
def case(request):
    """A tree of every joint type with joint springs and dampers and a point spring, at a random state."""
    rng = np.random.default_rng(request.param)
    model, q, qdot = every_joint_tree(rng)
    model = with_springs(rng, model)
    return model, q, qdot, rng.standard_normal(model.nq)


def test_body_accelerations_are_j_qddot_plus_jdot_qdot(case):
    model, q, qdot, qddot = case
    J, Jdot = jacobian_and_derivative(model, q, qdot)
    phidot, _ = body_accelerations(model, q, qdot, qddot)
    assert relative_error(phidot.ravel(), J @ qddot + Jdot @ qdot) < TOL


def test_recursive_inverse_dynamics_equals_the_dense_one(case):
    model, q, qdot, qddot = case
    dense = inverse_dynamics(model, q, qdot, qddot)
    assert relative_error(recursive_inverse_dynamics(model, q, qdot, qddot), dense) < TOL


@pytest.mark.parametrize("seed", range(5))
def test_recursive_inverse_dynamics_on_random_chains_and_trees(seed):
    rng = np.random.default_rng(100 + seed)
    model = random_tree(rng, n=8, branching=seed % 2 == 0)
    q, qdot = random_state(rng, model)
    qddot = rng.standard_normal(model.nq)
    dense = inverse_dynamics(model, q, qdot, qddot)
    assert relative_error(recursive_inverse_dynamics(model, q, qdot, qddot), dense) < TOL


def test_the_comparison_catches_a_dropped_velocity_product(case, monkeypatch):
    """Without the -ad(psi) Ad phi_p term of the forward sweep, the torques are far off."""
    import redmax_edu.recursive as recursive

    model, q, qdot, qddot = case
    dense = inverse_dynamics(model, q, qdot, qddot)
    monkeypatch.setattr(recursive, "ad_unchecked", lambda psi: 0.0 * ad_unchecked(psi))
    assert relative_error(recursive.recursive_inverse_dynamics(model, q, qdot, qddot), dense) > 1e-3


@pytest.mark.parametrize(("args", "name"), [
    (([0.0], [0.0], [0.0, 1.0]), "qddot"),
    (([0.0], [0.0], [np.nan]), "qddot"),
    (([0.0], [0.0], ["a"]), "qddot"),
    (([0.0, 1.0], [0.0], [0.0]), "q"),
])
def test_bad_input_names_the_argument(args, name):
    T = np.eye(4)
    T[2, 3] = -1.0
    pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    with pytest.raises(ValueError, match=name):
        recursive_inverse_dynamics(pendulum, *args)


def test_a_non_model_is_refused():
    with pytest.raises(ValueError, match="model"):
        recursive_inverse_dynamics("pendulum", [0.0], [0.0], [0.0])


# --- Algorithm 9: recursive forward and hybrid dynamics -----------------------------------------
@pytest.fixture(params=range(3), ids=lambda k: f"seed{k}")
def solvable(request):
    """A tree of every joint type with independent coordinates, every kind of force, a random
    state away from chart singularities and random joint forces."""
    rng = np.random.default_rng(10 + request.param)
    model, q, qdot = every_joint_tree(rng, skip=DEPENDENT, away_from_singularities=True)
    model = with_springs(rng, model)
    return model, q, qdot, rng.standard_normal(model.nq), rng


def test_recursive_forward_dynamics_equals_the_dense_one(solvable):
    model, q, qdot, tau, _ = solvable
    dense = forward_dynamics(model, q, qdot, tau)
    assert relative_error(recursive_forward_dynamics(model, q, qdot, tau), dense) < TOL


@pytest.mark.parametrize("seed", range(4))
def test_recursive_forward_dynamics_on_random_chains_and_trees(seed):
    rng = np.random.default_rng(300 + seed)
    model = random_tree(rng, n=10, branching=seed % 2 == 0)
    q, qdot = random_state(rng, model)
    assert relative_error(recursive_forward_dynamics(model, q, qdot), forward_dynamics(model, q, qdot)) < TOL


def _prescribed_rows(model, bodies):
    """The coordinates of the joints of ``bodies`` (a boolean mask of length nq)."""
    rows = np.zeros(model.nq, dtype=bool)
    for i in bodies:
        rows[model.dofs[i]] = True
    return rows


def _dense_hybrid(model, q, qdot, tau, rows, accelerations):
    """Eq. (2.113), G the identity rows of the prescribed coordinates: M a = f + tau + G^T lam, G a = a_p."""
    M, f = mass_matrix(model, q), reduced_forces(model, q, qdot, tau)
    G = np.eye(model.nq)[rows]
    kkt = np.block([[M, -G.T], [G, np.zeros((len(G), len(G)))]])
    solution = np.linalg.solve(kkt, np.concatenate([f, accelerations]))
    return solution[:model.nq], solution[model.nq:]


def _some_joints(model, rng):
    """A third of the moving joints, the root's among them (its torque carries the whole tree)."""
    moving = [i for i in range(model.n) if model.bodies[i].joint.ndof]
    return sorted({0, *rng.choice(moving, len(moving) // 3, replace=False).tolist()})


def test_hybrid_dynamics_equals_the_dense_kkt_solution(solvable):
    model, q, qdot, tau, rng = solvable
    bodies = _some_joints(model, rng)
    given = {model.names[i]: rng.standard_normal(model.bodies[i].joint.ndof) for i in bodies}
    rows = _prescribed_rows(model, bodies)
    a_p = np.concatenate([given[model.names[i]] for i in bodies])
    dense, multipliers = _dense_hybrid(model, q, qdot, tau, rows, a_p)
    qddot, torques = recursive_hybrid_dynamics(model, q, qdot, tau, prescribed=given)
    assert relative_error(qddot, dense) < TOL
    assert np.array_equal(qddot[rows], a_p)
    needed = np.concatenate([torques[model.names[i]] for i in bodies])
    # the torques are what inverse dynamics asks of those joints; the KKT multiplier is the part
    # beyond the torque tau already applied there
    assert relative_error(needed, inverse_dynamics(model, q, qdot, qddot)[rows]) < TOL
    assert relative_error(needed - tau[rows], multipliers) < TOL


def test_hybrid_dynamics_with_every_joint_prescribed_is_inverse_dynamics(solvable):
    model, q, qdot, tau, rng = solvable
    qddot_in = rng.standard_normal(model.nq)
    given = {i: qddot_in[model.dofs[i]] for i in range(model.n)}
    qddot, torques = recursive_hybrid_dynamics(model, q, qdot, tau, prescribed=given)
    assert np.array_equal(qddot, qddot_in)
    tau_id = np.concatenate([torques[i] for i in range(model.n)])
    assert relative_error(tau_id, recursive_inverse_dynamics(model, q, qdot, qddot_in)) < TOL


def test_the_comparison_catches_an_unprojected_articulated_inertia(solvable, monkeypatch):
    """Pi_j = M_hat_j for a free joint too (line 14 without its projection): the accelerations are off."""
    model, q, qdot, tau, _ = solvable
    dense = forward_dynamics(model, q, qdot, tau)
    right = recursive._articulated_inertias

    def unprojected(model, q, kin, prescribed=(), P_m=None, P_r=None):
        art = right(model, q, kin, prescribed=range(model.n))            # Pi_i = M_hat_i everywhere
        SM = [S.T @ M for S, M in zip(art.S, art.M_hat, strict=True)]
        Psi = [np.linalg.inv(SM_i @ S) for SM_i, S in zip(SM, art.S, strict=True)]
        U = [M @ S @ P for M, S, P in zip(art.M_hat, art.S, Psi, strict=True)]
        return replace(art, Psi=Psi, U=U, SM=SM)

    monkeypatch.setattr(recursive, "_articulated_inertias", unprojected)
    assert relative_error(recursive.recursive_forward_dynamics(model, q, qdot, tau), dense) > 1e-3


def test_a_joint_with_dependent_coordinates_is_named():
    """Seven coordinates for six directions of motion: S^T M_hat S is singular at that joint
    (and the dense path says the same)."""
    model, q, qdot = every_joint_tree(np.random.default_rng(0))
    with pytest.raises(SingularMassMatrixError, match="'composite_mixed' has dependent coordinates"):
        forward_dynamics(model, q, qdot)
    with pytest.raises(SingularMassMatrixError, match="'composite_mixed' has dependent coordinates .* "
                                                      "has rank 6 < 7"):
        recursive_forward_dynamics(model, q, qdot)
    with pytest.raises(SingularMassMatrixError, match="'composite_mixed'"):
        inverse_inertia(model, q)


@pytest.mark.parametrize("D", [[[2.5]], [[2.0, 0.5], [0.3, 1.0]], np.zeros((0, 0))],
                         ids=["1x1", "2x2", "0x0"])
def test_small_inverse_is_the_inverse(D):
    D = np.array(D)
    np.testing.assert_allclose(recursive._small_inverse(D) @ D, np.eye(len(D)), atol=1e-15)


def test_small_inverse_of_a_zero_pivot_raises_like_lapack():
    """A zero 1x1 pivot is left to LAPACK, which raises (a division would return inf silently)."""
    with pytest.raises(np.linalg.LinAlgError):
        recursive._small_inverse(np.zeros((1, 1)))


def _pendulum():
    T = np.eye(4)
    T[2, 3] = -1.0
    return Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3)),
                  Body("tip", 0, Revolute([0, 1, 0]), T, T, 1.0, 0.01 * np.eye(3))])


@pytest.mark.parametrize(("prescribed", "words"), [
    ({"elbow": [1.0]}, "no body named 'elbow'"),
    ({2: [1.0]}, "body index 2 does not exist"),
    ({-1: [1.0]}, "'prescribed' must be >= 0"),
    ({1.0: [1.0]}, "'prescribed' must be an integer"),
    ({0: [1.0, 2.0]}, r"'prescribed\[0\]' must have shape \(1,\)"),
    ({"tip": [np.nan]}, r"'prescribed\['tip'\]' contains NaN"),
    ({0: [1.0], "bob": [1.0]}, "names body 'bob' twice"),
    ([1.0, 2.0], "'prescribed' must be a dict"),
])
def test_a_bad_prescription_is_named(prescribed, words):
    with pytest.raises(ValueError, match=words):
        recursive_hybrid_dynamics(_pendulum(), [0.0, 0.0], [0.0, 0.0], prescribed=prescribed)


def test_bad_joint_forces_are_named():
    with pytest.raises(ValueError, match="'tau'"):
        recursive_forward_dynamics(_pendulum(), [0.0, 0.0], [0.0, 0.0], [1.0])


@pytest.mark.parametrize("call", [
    lambda m, q, v: recursive_forward_dynamics(m, q, v),
    lambda m, q, v: recursive_hybrid_dynamics(m, q, v, prescribed={0: [0.0]}),
    lambda m, q, v: recursive_inverse_dynamics(m, q, v, np.zeros(m.nq)),
    lambda m, q, v: inverse_inertia(m, q),
], ids=["forward", "hybrid", "inverse", "inverse_inertia"])
def test_deformable_bodies_are_refused_by_name(call):
    model = deformable_model(np.random.default_rng(0))
    with pytest.raises(ValueError, match="argument 'model' has deformable bodies"):
        call(model, model.coordinates(), np.zeros(model.nq))


# --- Algorithm 10: the inverse inertia ----------------------------------------------------------
def test_inverse_inertia_product_solves_with_the_mass_matrix(solvable):
    model, q, _, x, rng = solvable
    M = mass_matrix(model, q)
    assert relative_error(inverse_inertia_product(model, q, x), np.linalg.solve(M, x)) < TOL
    X = rng.standard_normal((model.nq, 3))
    assert relative_error(inverse_inertia(model, q) @ X, np.linalg.solve(M, X)) < TOL


def test_inverse_inertia_of_identity_columns_is_the_inverse_mass_matrix(solvable):
    model, q, *_ = solvable
    M_inv = np.linalg.inv(mass_matrix(model, q))
    assert relative_error(inverse_inertia(model, q) @ np.eye(model.nq), M_inv) < TOL


def _implicit_euler_matrix(model, q, qdot, h, body_blocks_only=False):
    """``M_r - h df/dqdot - h^2 df/dq`` of the linearly implicit Euler step (Eq. 2.86); with
    ``body_blocks_only``, the maximal K and D keep only each body's own 6x6 block (Alg. 10)."""
    terms = _assemble(model, q, qdot, derivatives=True)
    A = terms.M - h * terms.dfdv - h * h * terms.dfdq
    if body_blocks_only:
        from redmax_edu.dynamics import maximal_forces

        kin = terms.kin
        maximal = maximal_forces(model, kin.E_wi, kin.phi, derivatives=True)
        coupling = np.kron(1 - np.eye(model.n), np.ones((6, 6)))   # the blocks between two bodies
        J = jacobian(model, q)
        A = A + J.T @ ((h * maximal.D + h * h * maximal.K) * coupling) @ J
    return A


def test_preconditioner_is_the_implicit_euler_matrix_with_body_damping(solvable):
    """Joint springs and dampers and body damping only: the maximal D is block-diagonal, K zero."""
    model, q, qdot, x, _ = solvable
    model = model.with_forces([])
    h = 0.01
    A = _implicit_euler_matrix(model, q, qdot, h)
    assert relative_error(inverse_inertia_product(model, q, x, qdot, h=h), np.linalg.solve(A, x)) < TOL


def test_preconditioner_keeps_the_body_blocks_of_a_spring_between_bodies(solvable):
    """With a spring between two bodies, Alg. 10 solves with the matrix whose maximal K and D
    lose their off-diagonal blocks; the step's full matrix differs."""
    model, q, qdot, x, _ = solvable
    h = 0.05
    approximate = inverse_inertia(model, q, qdot, h=h) @ x
    A_blocks = _implicit_euler_matrix(model, q, qdot, h, body_blocks_only=True)
    assert relative_error(approximate, np.linalg.solve(A_blocks, x)) < TOL
    exact = np.linalg.solve(_implicit_euler_matrix(model, q, qdot, h), x)
    assert relative_error(approximate, exact) > 1e-6


def test_preconditioner_needs_the_velocities():
    with pytest.raises(ValueError, match="'qdot'"):
        inverse_inertia(_pendulum(), [0.0, 0.0], h=0.01)
    with pytest.raises(ValueError, match="'h'"):
        inverse_inertia(_pendulum(), [0.0, 0.0], [0.0, 0.0], h=-0.01)


def test_inverse_inertia_names_a_right_hand_side_of_the_wrong_length():
    with pytest.raises(ValueError, match="'x'"):
        inverse_inertia(_pendulum(), [0.0, 0.0]) @ np.zeros(3)


# --- §2.12: constraints by the dual problem -----------------------------------------------------
def _penetrating_floor(model, q, body, depth=0.05):
    """A floor contact of ``body`` whose plane lies ``depth`` above the body's centre (c < 0, active)."""
    plane = np.eye(4)
    plane[:3, 3] = forward_kinematics(model, q).E_wi[body, :3, 3] + [0.0, 0.0, depth]
    return FloorContact(body, radius=0.0, plane=plane)


def _wave(ndof, scale=1.0):
    """A prescribed motion ``t -> (q, qdot, qddot)`` of ndof coordinates."""
    return lambda t: (scale * np.full(ndof, np.sin(t)), scale * np.full(ndof, np.cos(t)),
                      -scale * np.full(ndof, np.sin(t)))


def _constrained_random_tree(seed):
    """Eight bodies of the basic joint families with a loop closed about an axis (2 rows), a
    coupling, a whole prescribed joint, an active and an inactive joint limit and a floor contact
    that a body penetrates; a random state and joint forces."""
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 8)
    q, qdot = random_state(rng, model)
    moving = [i for i in range(model.n) if model.bodies[i].joint.ndof]
    single = [i for i in moving if model.bodies[i].joint.ndof == 1]
    a, b = model.n - 1, int(rng.integers(model.n - 1))
    loop = Loop(a, rng.standard_normal(3), b, rng.standard_normal(3), axis=rng.standard_normal(3))
    i, j = (int(k) for k in rng.choice(single, 2, replace=False))
    p = int(rng.choice([k for k in moving if k not in (i, j)]))
    k = int(rng.choice(single))
    limit = model.dofs[k].start
    floor = _penetrating_floor(model, q, int(rng.integers(model.n)))
    constraints = [loop, CoordinateCoupling(i, j, ratio=-0.7, offset=0.1),
                   PrescribedJoint(p, _wave(model.bodies[p].joint.ndof)),
                   JointLimit(k, q[limit] + 0.1, q[limit] + 1.0),      # below its lower bound: active
                   JointLimit(k, -10.0, 10.0), floor]                    # never reached
    return model.with_constraints(constraints), q, qdot, rng.standard_normal(model.nq)


def _every_joint_constrained(solvable):
    """The tree of every joint type with springs, closed by a 3-row loop, with a coupling, a
    prescribed multi-coordinate joint, one coordinate of the planar joint prescribed (a row of
    the dual problem), a prescribed joint velocity through a maximal constraint, an active and
    an inactive limit and a penetrating floor contact."""
    model, q, qdot, tau, rng = solvable
    idx = {b.name: i for i, b in enumerate(model.bodies)}
    multi = [i for i, b in enumerate(model.bodies) if b.joint.ndof >= 3]
    p = multi[int(rng.integers(len(multi)))]
    r = idx["revolute"]
    lower = q[model.dofs[r].start] + 0.05
    loop = Loop(model.n - 1, rng.standard_normal(3), int(rng.integers(model.n - 1)), rng.standard_normal(3))
    constraints = [loop,
                   CoordinateCoupling(idx["spline_curve"], idx["universal"], ratio=0.5, offset=-0.2, dof_b=1),
                   PrescribedJoint(p, _wave(model.bodies[p].joint.ndof, 0.1)),
                   PrescribedJoint(idx["planar"], lambda t: ([0.2], [0.1], [0.0]), dofs=[1]),
                   JointLimit(r, lower, 20.0), JointLimit(r, -10.0, 10.0),
                   _penetrating_floor(model, q, int(rng.integers(model.n))),
                   PrescribedJointVelocity(idx["prismatic"], lambda t: ([0.3 * t], [0.3]))]
    return model.with_constraints(constraints), q, qdot, tau


def _agreement(model, q, qdot, tau, t=0.4):
    """(recursive, dense) solutions at time t; the equality set is checked to be independent first."""
    rows = constraint_rows(model, q, qdot, t)
    check_constraint_set(model, rows, ~rows.inequality)
    return (recursive_constrained_dynamics(model, q, qdot, tau, t=t),
            constrained_dynamics(model, q, qdot, tau, t=t))


# seeds whose floor contact or limit pushes (the QP of Eq. 2.134 decides) and some where
# neither does (the equality rows alone); 28 has an active limit that the coupling and the
# loop already decide (a singular Delassus operator, the QP's degenerate case)
@pytest.mark.parametrize(("seed", "pushes"), [(0, True), (3, False), (7, True), (8, False), (12, True),
                                              (16, True), (28, True)])
def test_constrained_dynamics_equals_the_dense_solve_on_random_trees(seed, pushes):
    model, q, qdot, tau = _constrained_random_tree(seed)
    recursive_solution, dense = _agreement(model, q, qdot, tau)
    assert relative_error(recursive_solution.x, dense.x) < TOL
    assert relative_error(recursive_solution.lam, dense.lam) < TOL
    rows = dense.rows
    assert rows.active[rows.inequality].sum() == 2            # the lower limit and the contact
    assert bool(np.any(dense.lam[rows.inequality] > 1e-6)) == pushes
    prescribed = next(k for k, c in enumerate(model.constraints) if isinstance(c, PrescribedJoint))
    assert relative_error(recursive_solution.generalized_force(prescribed),
                          dense.generalized_force(prescribed)) < TOL


def test_constrained_dynamics_equals_the_dense_solve_with_every_joint_type(solvable):
    recursive_solution, dense = _agreement(*_every_joint_constrained(solvable))
    assert relative_error(recursive_solution.x, dense.x) < TOL
    assert relative_error(recursive_solution.lam, dense.lam) < TOL


def test_repeated_contacts_give_the_dense_motion():
    """Four corners of a free box sunk into the floor: the four rows remove only three motions,
    so the Delassus operator is singular and the multipliers are not unique; the accelerations
    and the total contact force G^T lambda are, and equal the dense QP's."""
    box = Model([Body("box", -1, Free3DExp(), np.eye(4), np.eye(4), 2.0, np.diag([0.1, 0.2, 0.25]))])
    q = np.array([0.0, 0.0, 0.18, 0.02, -0.03, 0.0])    # every corner 7 to 33 mm deep
    corners = [FloorContact(0, point=[x, y, -0.2]) for x in (-0.3, 0.3) for y in (-0.2, 0.2)]
    model = box.with_constraints(corners)
    recursive_solution, dense = _agreement(model, q, np.zeros(6), None)
    assert relative_error(recursive_solution.x, dense.x) < TOL
    G = dense.rows.G
    assert np.linalg.matrix_rank(G) == 3 and np.all(dense.rows.active)
    assert relative_error(G.T @ recursive_solution.lam, G.T @ dense.lam) < TOL
    assert np.all(recursive_solution.lam >= -1e-12)


def test_prescribed_joints_are_taken_by_algorithm_9_with_the_stabilised_acceleration(rng):
    """A prescribed joint off its track accelerates as Baumgarte's target says, exactly as the dense
    row does, and its multiplier is the torque inverse dynamics gives beyond the applied one."""
    model = _constrained_random_tree(3)[0]
    q, qdot = random_state(rng, model)
    tau = rng.standard_normal(model.nq)
    k, c = next((k, c) for k, c in enumerate(model.constraints) if isinstance(c, PrescribedJoint))
    only = model.with_constraints([c])
    t, (alpha, beta) = 0.7, (3.0, 4.0)
    solution = recursive_constrained_dynamics(only, q, qdot, tau, t=t, baumgarte=(alpha, beta, 0.0))
    cols = c.columns(model)
    q_p, qdot_p, qddot_p = c.motion(t)
    target = qddot_p - 2 * alpha * (qdot[cols] - qdot_p) - beta**2 * (q[cols] - q_p)
    assert relative_error(solution.x[cols], target) < TOL
    needed = inverse_dynamics(model, q, qdot, solution.x)
    assert relative_error(solution.generalized_force(0), needed - tau) < TOL
    free = np.ones(model.nq, dtype=bool)
    free[cols] = False
    assert relative_error(needed[free], tau[free]) < TOL       # the other joints feel only tau


@pytest.mark.parametrize("gains", [None, (2.0, 3.0, 0.0)])
def test_recursive_forward_dynamics_takes_the_constraints_into_account(gains):
    model, q, qdot, tau = _constrained_random_tree(7)
    options = {} if gains is None else {"baumgarte": gains}
    assert relative_error(recursive_forward_dynamics(model, q, qdot, tau, t=0.4, **options),
                          forward_dynamics(model, q, qdot, tau, t=0.4, **options)) < TOL


def test_a_limit_on_a_prescribed_joint_cannot_push():
    """The row of a limit on a prescribed joint moves nothing the solve can change: where the
    prescription keeps to the limit it takes no force, where it drives through it both solves refuse."""
    chain = _pendulum()
    hold = PrescribedJoint(0, lambda t: ([0.0], [0.0], [0.0]))
    q = np.array([0.0, 0.5])                                   # on the limit, the tip bent out
    model = chain.with_constraints([hold, JointLimit(0, 0.0, 1.0), _penetrating_floor(chain, q, 1)])
    recursive_solution, dense = _agreement(model, q, np.zeros(2), None)
    assert relative_error(recursive_solution.x, dense.x) < TOL
    assert recursive_solution.lam[1] == 0.0 and recursive_solution.lam[3] > 0.1   # the floor pushes
    drive = PrescribedJoint(0, lambda t: ([0.0], [-1.0], [-5.0]))
    into = chain.with_constraints([drive, JointLimit(0, 0.0, 1.0)])
    for solve in (recursive_constrained_dynamics, constrained_dynamics):
        with pytest.raises(ValueError, match="constraint QP of Eq. \\(2.112\\) has no solution"):
            solve(into, np.zeros(2), np.zeros(2))


def test_a_repeated_prescription_is_named_by_the_recursive_solve():
    motion = lambda t: ([0.0], [0.0], [0.0])  # noqa: E731
    again = PrescribedJoint(0, motion, name="again")
    model = _pendulum().with_constraints([PrescribedJoint(0, motion), again])
    with pytest.raises(ValueError, match=r"constraints\[1\], prescribed joint 'again': its rows repeat"):
        recursive_constrained_dynamics(model, [0.0, 0.0], [0.0, 0.0])


def test_the_comparison_catches_a_dropped_jdot_term(monkeypatch):
    """Without G_m Jdot qdot in the rows' velocity products the loop's accelerations are off."""
    model, q, qdot, tau = _constrained_random_tree(3)
    dense = constrained_dynamics(model, q, qdot, tau, t=0.4).x
    monkeypatch.setattr(recursive, "_bias_accelerations", lambda model, kin, eta: 0.0 * eta)
    assert relative_error(recursive_constrained_dynamics(model, q, qdot, tau, t=0.4).x, dense) > 1e-3


def test_the_comparison_catches_transposed_adjoints_in_the_delassus_columns(monkeypatch):
    """Carrying the rows' wrenches to the parents by Ad(E_i_p) instead of Ad(E_i_p)^T (Alg. 6)
    gives wrong columns J^T G_m^T, hence a wrong Delassus operator and wrong accelerations."""
    import redmax_edu.constrained as rows_module  # the rows are reduced there, by Alg. 6

    model, q, qdot, tau = _constrained_random_tree(3)
    dense = constrained_dynamics(model, q, qdot, tau, t=0.4).x
    right = rows_module.jacobian_transpose_product
    monkeypatch.setattr(rows_module, "jacobian_transpose_product",
                        lambda model, kin, y: right(model, replace(kin, A_ip=np.swapaxes(kin.A_ip, 1, 2)), y))
    assert relative_error(recursive_constrained_dynamics(model, q, qdot, tau, t=0.4).x, dense) > 1e-3


def test_hybrid_dynamics_refuses_a_model_with_constraints():
    model = _pendulum().with_constraints([CoordinateCoupling(0, 1)])
    with pytest.raises(ValueError, match="has constraints.*recursive_constrained_dynamics"):
        recursive_hybrid_dynamics(model, [0.0, 0.0], [0.0, 0.0])


@pytest.mark.parametrize(("options", "name"), [
    (dict(t=np.nan), "'t'"), (dict(baumgarte=(5.0, -1.0, 5.0)), "'baumgarte'"), (dict(tau=[1.0]), "'tau'")])
def test_constrained_dynamics_names_a_bad_argument(options, name):
    model = _pendulum().with_constraints([CoordinateCoupling(0, 1)])
    with pytest.raises(ValueError, match=name):
        recursive_constrained_dynamics(model, [0.0, 0.0], [0.0, 0.0], **options)
