"""Claims of pages 2.10 (book/02_reduced/10_jacobian_products) and 2.12-2.13
(book/02_reduced/12_recursive_dynamics): the O(n) products, recursive hybrid dynamics, the
inverse inertia, the dual problem of constraints, and the scaling figure.

Each test repeats one quantitative sentence or check-cell verdict of a page with library
calls (no notebook is executed). The models are the pages' own: the "figure on a turntable"
(seven bodies, twelve coordinates), the cart with a pendulum, the sprung chain of the
preconditioner section. The scaling claims are checked against the measurements the page
draws, ``benchmarks/results/forward_dynamics.json``: when the benchmark is run again and
the file changes, these tests say which sentences of page 2.12-2.13 must change with it.

Tolerances: the products and the recursive solves are exact, so they equal the dense path
to round-off (~1e-15 relative for the products, ~1e-13 for solves with ``M_r``, whose
condition number is ~1e2 here); the pages state 1e-12 and 1e-10, which a dropped term
(an O(1) error) could never meet.
"""

import json
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse.linalg as spla

import redmax_edu
from redmax_edu.constrained import constraint_rows
from redmax_edu.constraints import Loop
from redmax_edu.dynamics import (
    constrained_dynamics,
    forward_dynamics,
    inverse_dynamics,
    joint_forces,
    linearly_implicit_euler_step,
    mass_matrix,
    maximal_forces,
    reduced_forces,
)
from redmax_edu.integrators import simulate
from redmax_edu.jacobian import (
    jacobian,
    jacobian_and_derivative,
    jacobian_product,
    jacobian_transpose_product,
)
from redmax_edu.joints import Prismatic, Revolute, SphericalExp, Universal
from redmax_edu.kinematics import forward_kinematics
from redmax_edu.maximal.forces import Attachment, PointSpring
from redmax_edu.model import Body, Model
from redmax_edu.recursive import (
    inverse_inertia,
    recursive_forward_dynamics,
    recursive_hybrid_dynamics,
    recursive_inverse_dynamics,
)
from redmax_edu.viz.tree import traversal_order

ROOT = Path(__file__).resolve().parents[2]
PAGE_10 = "book/02_reduced/10_jacobian_products"
PAGE_12 = "book/02_reduced/12_recursive_dynamics"
LIBRARY = str(Path(redmax_edu.__file__).resolve().parent)


def relative_error(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


# --- the pages' models ---------------------------------------------------------------------------

def _link(name, parent, joint, joint_at, com, m=1.0):
    T_pj, T_jb = np.eye(4), np.eye(4)
    T_pj[:3, 3], T_jb[:3, 3] = joint_at, com
    return Body(name, parent, joint, T_pj, T_jb, m, m * np.diag([0.02, 0.03, 0.015]))


@cache
def turntable_figure():
    """Both pages' example: a torso on a hinge, ball-joint shoulders, hinged elbows, a universal
    neck and a hinged head."""
    return Model([
        _link("torso", -1, Revolute([0, 0, 1]), [0, 0, 0], [0, 0, 0.4], m=4.0),
        _link("l.upper", 0, SphericalExp(), [0, 0.25, 0.7], [0, 0.15, 0]),
        _link("l.fore", 1, Revolute([1, 0, 0]), [0, 0.3, 0], [0, 0.15, 0]),
        _link("r.upper", 0, SphericalExp(), [0, -0.25, 0.7], [0, -0.15, 0]),
        _link("r.fore", 3, Revolute([1, 0, 0]), [0, -0.3, 0], [0, -0.15, 0]),
        _link("neck", 0, Universal(), [0, 0, 0.8], [0, 0, 0.05], m=0.3),
        _link("head", 5, Revolute([0, 0, 1]), [0, 0, 0.1], [0, 0, 0.1]),
    ])


@pytest.fixture(params=range(3), ids=lambda k: f"seed{k}")
def state(request):
    """The figure at a random state (the pages draw one; the claims hold at any)."""
    rng = np.random.default_rng(request.param)
    model = turntable_figure()
    return (model, 0.5 * rng.standard_normal(model.nq), rng.standard_normal(model.nq),
            rng.standard_normal(model.nq), rng)


def shape_model(n, parent_of):
    """Page 2.10's table: n hinged unit boxes, body i hanging from parent_of(i)."""
    T = np.eye(4)
    T[2, 3] = -0.5
    return Model([Body(f"b{i}", parent_of(i) if i else -1, Revolute([0, 1, 0]), T, T, 1.0, 0.1 * np.eye(3))
                  for i in range(n)])


def chain_of(n):
    return shape_model(n, lambda i: i - 1)


def binary_tree_of(n):
    return shape_model(n, lambda i: (i - 1) // 2)


def lines_executed(fn, *args):
    """Lines of the library's own code that a call executes (the pages' count)."""
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if not frame.f_code.co_filename.startswith(LIBRARY):
            return None
        count += event == "line"
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        fn(*args)
    finally:
        sys.settrace(previous)
    return count


# --- page 2.10: the cost of forming J, the traversals, the products -------------------------------

def test_j_has_n_n_plus_1_over_2_blocks_in_a_chain_and_far_fewer_in_a_binary_tree():
    """Page 2.10, "The cost of forming J": the table of blocks Algorithm 1 fills."""
    table = {4: (10, 8), 16: (136, 54), 64: (2080, 328), 256: (32896, 1802)}
    for n, (in_chain, in_tree) in table.items():
        assert chain_of(n).ancestors.sum() == in_chain == n * (n + 1) // 2
        assert binary_tree_of(n).ancestors.sum() == in_tree
        assert in_tree <= n * (np.log2(n) + 1)          # the n log2 n growth of a balanced tree


def test_forward_visits_parents_first_and_backward_children_first():
    """Page 2.10, "The tree and its two traversal orders": both verdicts; one visit per body."""
    model = turntable_figure()
    assert model.parents == (-1, 0, 1, 0, 3, 0, 5) and model.nq == 12
    forward, backward = traversal_order(model, "forward"), traversal_order(model, "backward")
    assert sorted(forward) == sorted(backward) == list(range(model.n))
    for i, p in enumerate(model.parents):
        if p >= 0:
            assert forward.index(p) < forward.index(i) and backward.index(i) < backward.index(p)


def test_products_equal_the_dense_jacobian_and_its_derivative(state):
    """Page 2.10, Algorithms 5 and 6: J x, Jdot x, J^T y equal the dense products to 1e-12."""
    model, q, qdot, x, rng = state
    kin = forward_kinematics(model, q, qdot)
    J, Jdot = jacobian_and_derivative(model, q, qdot)
    y, z = jacobian_product(model, kin, x, with_derivative=True)
    assert relative_error(y, J @ x) < 1e-12
    assert relative_error(z, Jdot @ x) < 1e-12
    wrenches = rng.standard_normal(6 * model.n)
    assert relative_error(jacobian_transpose_product(model, kin, wrenches), J.T @ wrenches) < 1e-12


def test_j_qdot_is_the_twists_and_the_identity_columns_give_j(state):
    """Page 2.10: "With x = qdot, y is the body twists"; "run it for every k and you have built J"."""
    model, q, qdot, _, _ = state
    kin = forward_kinematics(model, q, qdot)
    assert relative_error(jacobian_product(model, kin, qdot), kin.phi.ravel()) < 1e-12
    assert relative_error(jacobian_product(model, kin, np.eye(model.nq)), jacobian(model, q)) < 1e-12


def test_virtual_power_of_wrenches_on_twists_equals_that_of_joint_forces(state):
    """Page 2.10: y . (J x) = (J^T y) . x, to round-off."""
    model, q, qdot, x, rng = state
    kin = forward_kinematics(model, q, qdot)
    wrenches = rng.standard_normal(6 * model.n)
    bodies = wrenches @ jacobian_product(model, kin, x)
    joints = jacobian_transpose_product(model, kin, wrenches) @ x
    assert abs(bodies - joints) < 1e-12 * abs(bodies)


def test_redmax_force_vector_from_the_two_products(state):
    """Page 2.10, "RedMax's force vector without J": f_r = J^T (f_m - M_m Jdot qdot) + tau_joint, 1e-12."""
    model, q, qdot, _, _ = state
    kin = forward_kinematics(model, q, qdot)
    _, z = jacobian_product(model, kin, qdot, with_derivative=True)
    f_m = maximal_forces(model, kin.E_wi, kin.phi)
    M_z = (model.spatial_inertias @ z.reshape(model.n, 6, 1)).ravel()
    f_r = jacobian_transpose_product(model, kin, f_m - M_z) + joint_forces(model, q, qdot)
    assert relative_error(f_r, reduced_forces(model, q, qdot)) < 1e-12


@pytest.mark.parametrize("shape", [chain_of, binary_tree_of], ids=["chain", "binary tree"])
def test_the_products_do_a_fixed_amount_of_work_per_body(shape):
    """Page 2.10: "two small products per body, whatever the depth": the library's code runs the
    same number of lines for every body added, in a chain and in a tree alike (O(n))."""
    for product in (lambda m, k, x: jacobian_product(m, k, x, with_derivative=True),
                    lambda m, k, x: jacobian_transpose_product(m, k, np.ones(6 * m.n))):
        sizes = (8, 16, 32, 64)
        lines = []
        for n in sizes:
            model = shape(n)
            kin = forward_kinematics(model, np.zeros(n), np.ones(n))
            lines.append(lines_executed(product, model, kin, np.ones(n)))
        per_body = np.diff(lines) / np.diff(sizes)
        assert np.all(per_body == per_body[0]) and 0 < per_body[0] < 50


# --- page 2.12-2.13: inverse dynamics, Algorithm 9, hybrid dynamics ---------------------------------

def test_recursive_inverse_dynamics_equals_the_dense_one_and_round_trips(state):
    """Page 2.12, "Recap": recursive inverse dynamics = M_r qddot - f_r, and forward dynamics of that
    torque gives qddot back, both to 1e-10."""
    model, q, qdot, qddot, _ = state
    tau = recursive_inverse_dynamics(model, q, qdot, qddot)
    assert relative_error(tau, inverse_dynamics(model, q, qdot, qddot)) < 1e-10
    assert relative_error(forward_dynamics(model, q, qdot, tau), qddot) < 1e-10


def test_algorithm_9_equals_dense_forward_dynamics(state):
    """Page 2.12, "Algorithm 9": recursive forward dynamics = the dense solve, to 1e-10."""
    model, q, qdot, tau, _ = state
    assert relative_error(recursive_forward_dynamics(model, q, qdot, tau),
                          forward_dynamics(model, q, qdot, tau)) < 1e-10


@pytest.mark.parametrize("shape", [chain_of, binary_tree_of], ids=["chain", "binary tree"])
def test_the_recursive_and_dense_paths_run_a_fixed_number_of_lines_per_body(shape):
    """Page 2.12, last cell: both paths execute the same number of library lines per added body
    ("a few dozen each, and the dense one fewer"): the dense path's growth is in numpy."""
    sizes = (8, 16, 32, 64)
    per_body = {}
    for fn in (recursive_forward_dynamics, forward_dynamics):
        lines = [lines_executed(fn, shape(n), np.zeros(n), np.ones(n)) for n in sizes]
        steps = np.diff(lines) / np.diff(sizes)
        assert np.all(steps == steps[0])
        per_body[fn] = steps[0]
    assert 10 <= per_body[forward_dynamics] < per_body[recursive_forward_dynamics] <= 100


def test_hybrid_dynamics_equals_the_dense_kkt_of_eq_2_113(state):
    """Page 2.12, "Prescribed joints": the turntable and the left elbow prescribed; accelerations and
    the prescribed joints' torques equal the KKT solution (torque = tau + lambda), to 1e-10."""
    model, q, qdot, tau, _ = state
    prescribed = {0: np.array([0.7]), 2: np.array([-1.3])}
    qddot, torques = recursive_hybrid_dynamics(model, q, qdot, tau, prescribed=prescribed)
    cols = np.concatenate([np.arange(model.nq)[model.dofs[i]] for i in prescribed])
    P = np.eye(model.nq)[cols]
    K = np.block([[mass_matrix(model, q), -P.T], [P, np.zeros((len(cols), len(cols)))]])
    sol = np.linalg.solve(K, np.concatenate([reduced_forces(model, q, qdot, tau), [0.7, -1.3]]))
    assert relative_error(qddot, sol[:model.nq]) < 1e-10
    torque = np.concatenate([torques[i] for i in prescribed])
    assert relative_error(torque, tau[cols] + sol[model.nq:]) < 1e-10


def test_every_joint_prescribed_gives_inverse_dynamics(state):
    """Page 2.12: with every joint prescribed the torques are recursive inverse dynamics, 1e-10."""
    model, q, qdot, tau, rng = state
    qddot = rng.standard_normal(model.nq)
    _, torques = recursive_hybrid_dynamics(model, q, qdot, tau,
                                           prescribed={i: qddot[model.dofs[i]] for i in range(model.n)})
    tau_all = np.concatenate([torques[i] for i in range(model.n)])
    assert relative_error(tau_all, recursive_inverse_dynamics(model, q, qdot, qddot)) < 1e-10


def _cart_pendulum(m_cart=1.0, m_bob=0.5, bob_inertia=1e-6):
    below = np.eye(4)
    below[2, 3] = -1.0
    return Model([Body("cart", -1, Prismatic([1, 0, 0]), np.eye(4), np.eye(4), m_cart, 0.01 * np.eye(3)),
                  Body("bob", 0, Revolute([0, 1, 0]), np.eye(4), below, m_bob, bob_inertia * np.eye(3))])


def test_the_cart_feels_m_c_plus_m_b_sin_squared_and_never_more_than_both_masses():
    """Page 2.12, "How heavy is a subtree?": the felt mass 1/(M_r^-1)_11 = m_c + m_b sin^2(theta) to
    1e-5 (1 kg hanging or upright, 1.5 kg horizontal), and (M_r)_11 = m_c + m_b when locked."""
    cart = _cart_pendulum()
    angles = np.linspace(-np.pi, np.pi, 73)
    felt = np.array([1.0 / (inverse_inertia(cart, [0.0, a]) @ [1.0, 0.0])[0] for a in angles])
    assert np.abs(felt - (1.0 + 0.5 * np.sin(angles) ** 2)).max() < 1e-5
    assert np.allclose([mass_matrix(cart, [0.0, a])[0, 0] for a in angles], 1.5)
    # "why never above m_c + m_b" (a try-this prompt): a free joint can only make a subtree lighter
    heavy = _cart_pendulum(bob_inertia=0.05)
    felt = [1.0 / (inverse_inertia(heavy, [0.0, a]) @ [1.0, 0.0])[0] for a in angles]
    assert max(felt) <= 1.5 * (1 + 1e-12) and min(felt) >= 1.0 - 1e-12


# --- page 2.12-2.13: Algorithm 10 and the preconditioner ---------------------------------------------

def test_inverse_inertia_solves_with_m_r_and_its_identity_columns_are_the_inverse(state):
    """Page 2.13: inv @ x solves M_r y = x; M_r^-1 M_r = I to 1e-10; M_r^-1 symmetric."""
    model, q, _, x, _ = state
    inv, M_r = inverse_inertia(model, q), mass_matrix(model, q)
    assert relative_error(M_r @ (inv @ x), x) < 1e-10
    M_inv = inv @ np.eye(model.nq)
    assert np.abs(M_inv @ M_r - np.eye(model.nq)).max() < 1e-10
    assert np.abs(M_inv - M_inv.T).max() < 1e-10 * np.abs(M_inv).max()


def sprung_chain(n, spring=0.0):
    """Page 2.13's chain: rods with joint springs, dampers and body damping; a spring end to end."""
    below, top = np.eye(4), np.eye(4)
    below[2, 3], top[2, 3] = -0.5, -1.0
    bodies = [Body(f"rod{i}", i - 1, Revolute([0, 1, 0] if i % 2 else [1, 0, 0]), top if i else np.eye(4),
                   below, 1.0, np.diag([0.09, 0.09, 0.01]), stiffness=2.0, damping=0.5, body_damping=0.2)
              for i in range(n)]
    ends = [Attachment(0, [0, 0, 0]), Attachment(n - 1, [0, 0, 0])]
    return Model(bodies, forces=[PointSpring(*ends, stiffness=spring)] if spring else [])


def euler_matrix(model, q, qdot, h):
    kin = forward_kinematics(model, q, qdot)
    terms = maximal_forces(model, kin.E_wi, kin.phi, derivatives=True)
    J = jacobian(model, q)
    return (mass_matrix(model, q) + h * np.diag(model.damping) + h * h * np.diag(model.stiffness)
            - J.T @ (h * terms.D + h * h * terms.K) @ J)


def test_the_preconditioner_is_the_exact_euler_matrix_for_forces_on_single_bodies():
    """Page 2.13: with joint springs, dampers and body damping, Alg. 10 with h applies the inverse of
    the Euler step's matrix, and that matrix is the library step's (both 1e-10)."""
    rng = np.random.default_rng(7)
    chain, h = sprung_chain(8), 0.01
    q, v = 0.3 * rng.standard_normal(chain.nq), rng.standard_normal(chain.nq)
    A, precond = euler_matrix(chain, q, v, h), inverse_inertia(chain, q, v, h=h)
    x = rng.standard_normal(chain.nq)
    assert relative_error(precond @ (A @ x), x) < 1e-10
    J = jacobian(chain, q)
    dfdv = -np.diag(chain.damping) - 0.2 * J.T @ J
    b = mass_matrix(chain, q) @ v + h * (reduced_forces(chain, q, v) - dfdv @ v)
    assert relative_error(precond @ b, linearly_implicit_euler_step(chain, q, v, h)[1]) < 1e-10


def _gmres_iterations(A, b, preconditioner=None):
    residuals = []
    M = None if preconditioner is None else spla.LinearOperator(A.shape, matvec=lambda v: preconditioner @ v)
    _, info = spla.gmres(A, b, M=M, rtol=1e-10, restart=len(b), maxiter=len(b), callback=residuals.append,
                         callback_type="pr_norm")
    return len(residuals), info == 0


@pytest.mark.parametrize("n", [10, 40])
def test_gmres_with_the_preconditioner_needs_a_handful_of_iterations_without_it_about_n(n):
    """Page 2.13: a 500 N/m spring between the first and last link; GMRES converges within 5
    iterations with Alg. 10 as preconditioner, and needs at least n - 2 without."""
    rng = np.random.default_rng(n)
    ring, h = sprung_chain(n, spring=500.0), 0.01
    q, v = 0.3 * rng.standard_normal(n), rng.standard_normal(n)
    A, b = euler_matrix(ring, q, v, h), rng.standard_normal(n)
    better, ok = _gmres_iterations(A, b, inverse_inertia(ring, q, v, h=h))
    assert ok and better <= 5
    plain, ok = _gmres_iterations(A, b)
    assert ok and plain >= n - 2
    # the preconditioner is not the exact inverse once a force couples two bodies
    x = rng.standard_normal(n)
    assert relative_error(inverse_inertia(ring, q, v, h=h) @ (A @ x), x) > 1e-6


# --- page 2.12: constraints by the dual problem ---------------------------------------------------

def test_the_dual_problem_by_the_sweeps_equals_the_dense_kkt_solve(state):
    """Page 2.12, Eq. (2.128)-(2.131): the clasped hands; G = G_m J by Alg. 6 (1e-12), and the
    Delassus route gives the accelerations and multipliers of constrained_dynamics (1e-10)."""
    model, q, qdot, tau, _ = state
    hands = Loop(2, [0, 0.15, 0], 4, [0, -0.15, 0], name="hands")
    clasped = model.with_constraints([hands])
    rows = constraint_rows(clasped, q, qdot)
    G, rhs = rows.G, rows.acceleration_rhs(qdot, 5.0, 5.0)
    kin = forward_kinematics(model, q, qdot)
    G_m = np.zeros((len(G), 6 * model.n))
    for body, block in hands.rows(clasped, q, qdot, kin, 0.0).G_m.items():
        G_m[:, 6 * body:6 * body + 6] = block
    assert relative_error(jacobian_transpose_product(model, kin, G_m.T).T, G) < 1e-12
    free = recursive_forward_dynamics(model, q, qdot, tau)
    lam = np.linalg.solve(G @ (inverse_inertia(model, q) @ G.T), rhs - G @ free)
    qddot = recursive_forward_dynamics(model, q, qdot, tau + G.T @ lam)
    dense = constrained_dynamics(clasped, q, qdot, tau)
    assert relative_error(qddot, dense.x) < 1e-10
    assert relative_error(lam, dense.lam) < 1e-10


def test_the_recursive_path_takes_the_models_constraints_as_the_page_says():
    """Page 2.12, "What the library does": recursive_constrained_dynamics equals the three steps
    written out and the dense KKT solve (accelerations and multipliers, 1e-10), and
    recursive_forward_dynamics and simulate(method="rk45_recursive") take the constrained model."""
    from redmax_edu.dynamics import constrained_dynamics
    from redmax_edu.recursive import recursive_constrained_dynamics

    model = turntable_figure()
    clasped = model.with_constraints([Loop(2, [0, 0.15, 0], 4, [0, -0.15, 0], name="hands")])
    rng = np.random.default_rng(0)
    q = 0.5 * rng.standard_normal(model.nq)   # the hands' rows independent
    qdot = rng.standard_normal(model.nq)
    recursive = recursive_constrained_dynamics(clasped, q, qdot)
    dense = constrained_dynamics(clasped, q, qdot)
    assert np.abs(recursive.x - dense.x).max() < 1e-10 * np.abs(dense.x).max()
    assert np.abs(recursive.lam - dense.lam).max() < 1e-10 * np.abs(dense.lam).max()
    assert np.allclose(recursive_forward_dynamics(clasped, q, qdot), dense.x, rtol=0,
                       atol=1e-10 * np.abs(dense.x).max())
    run = simulate(clasped, q, 0 * q, (0.0, 0.05), method="rk45_recursive")
    assert np.isfinite(run.q).all()


# --- page 2.12: the scaling figure, against the measurements it draws --------------------------------

@cache
def measured():
    return json.loads((ROOT / "benchmarks/results/forward_dynamics.json").read_text(encoding="utf-8"))


def _shape(name):
    return measured()["shapes"][name]


def _local_slope(run, method, k):
    """Slope of log(time) over log(n) between sizes k - 1 and k."""
    n, t = run["sizes"], run["seconds"][method]
    return float(np.log(t[k] / t[k - 1]) / np.log(n[k] / n[k - 1]))


def test_the_file_says_when_and_where_it_was_measured_with_every_method_and_size():
    """Page 2.12: "one run ... with the date and the machine"; 4 to 256 bodies, Pinocchio beside."""
    bench = measured()
    assert bench["date"] and bench["machine"]["cpu"] and bench["timer"] and "pinocchio" in bench["machine"][
        "versions"]
    assert bench["fit_from"] == 16
    for name in ("chain", "binary tree"):
        run = _shape(name)
        assert run["sizes"] == [4, 8, 16, 32, 64, 128, 256]
        assert set(run["seconds"]) == {"dense", "recursive", "pin.aba"}
        # the three computed the same accelerations (the chain of 256 has cond(M_r) ~1e6)
        assert max(run["largest_relative_difference"].values()) < 1e-9


@pytest.mark.parametrize(("name", "stated"), [("chain", 0.94), ("binary tree", 0.96)])
def test_the_recursive_fitted_slope_is_close_to_one(name, stated):
    """Page 2.12: "The recursive line has slope close to 1 (0.94 for chains, 0.96 for trees)"."""
    slope = _shape(name)["exponents"]["recursive"]
    assert abs(slope - 1.0) <= 0.15
    assert round(slope, 2) == stated


@pytest.mark.parametrize("name", ["chain", "binary tree"])
def test_the_dense_line_bends_up_from_a_fitted_1_2_to_1_8_or_more_over_the_last_doubling(name):
    """Page 2.12: the dense "fitted slope is only about 1.2"; "between 128 and 256 bodies the dense time
    grows by a factor 2^1.8 to 2^1.9, while the recursive time roughly doubles"."""
    run = _shape(name)
    assert 1.15 <= run["exponents"]["dense"] <= 1.3
    assert 1.75 <= _local_slope(run, "dense", -1) <= 1.95
    assert 0.8 <= _local_slope(run, "recursive", -1) <= 1.25


@pytest.mark.parametrize("name", ["chain", "binary tree"])
def test_the_curves_cross_near_100_bodies_and_recursive_is_twice_as_fast_at_256(name):
    """Page 2.12: "The curves cross near 100 bodies ...; from 128 bodies on the recursive algorithm is
    faster, at 256 about twice as fast"."""
    run = _shape(name)
    assert 80 <= run["curves_cross_near"] <= 120
    assert run["recursive_faster_from"] == 128
    dense, recursive = run["seconds"]["dense"], run["seconds"]["recursive"]
    assert 1.7 <= dense[-1] / recursive[-1] <= 2.3


@pytest.mark.parametrize("name", ["chain", "binary tree"])
def test_pinocchio_runs_the_same_linear_algorithm_70_to_110_times_faster(name):
    """Page 2.12: "Pinocchio runs the same O(n) algorithm (slope 1) in compiled code, about 70 to 110
    times faster than our Python sweeps at every size"."""
    run = _shape(name)
    assert abs(run["exponents"]["pin.aba"] - 1.0) <= 0.1
    ratios = run["recursive_over_aba"]
    assert 65 <= min(ratios) and max(ratios) <= 115
