"""Claims of the first Part 3 pages: book/03_differentiable/01_why_analytic (§3.1),
02_joint_derivatives (§3.2) and 03_inertia_force_derivatives (§3.3).

Each test recomputes one quantitative sentence of those pages with library calls (not by
running the notebooks) on the models the pages build, at the pages' states (the same draws
of ``np.random.default_rng(0)``) and, where the sentence is about "a random state", at other
seeds too. Each docstring names the page and the section that makes the claim.

Tolerances are the pages' printed bounds. The central-difference bound 1e-8 sits about a
hundred times above the best-step errors measured (1e-10 on the joints, 1e-9 on the 10-link
chain) and many orders below a wrong derivative (a sign flip gives 2, a dropped term 1e-3 or
more); the complex-step bound 1e-12 is a thousand times above its round-off. The Pinocchio
bound 1e-12 is about a hundred times the largest difference measured (1.1e-14,
tests/unit/test_derivatives.py).
"""

import json
from pathlib import Path

import numpy as np
import pytest
from scripts import load_tool

from redmax_edu.checks import check_derivative, numerical_derivative, step_sweep
from redmax_edu.derivatives import (
    force_derivatives,
    forward_dynamics_derivatives,
    inverse_dynamics_derivatives,
    inverse_mass_matrix_derivative,
    mass_matrix_derivative,
    maximal_force_derivatives,
    maximal_velocity_derivative,
    quadratic_velocity_derivatives,
)
from redmax_edu.dynamics import (
    forward_dynamics,
    inverse_dynamics,
    mass_matrix,
    quadratic_velocity_vector,
    reduced_forces,
)
from redmax_edu.jacobian import jacobian, jacobian_and_derivative, jacobian_derivatives
from redmax_edu.joints import (
    Free2D,
    Prismatic,
    Revolute,
    SphericalEuler,
    SphericalExp,
    Universal,
)
from redmax_edu.joints.base import SINGULAR_DET
from redmax_edu.joints.euler import CHART_NAMES
from redmax_edu.kinematics import forward_kinematics
from redmax_edu.lie import ad, adjoint, adjoint_dot, brac, inv_se3
from redmax_edu.maximal.forces import Attachment, PointSpring
from redmax_edu.model import Body, Model, model_from_dict
from redmax_edu.viz.joint_explorer import joint_presets

ROOT = Path(__file__).resolve().parents[2]
CENTRAL_TOL, COMPLEX_TOL, PINOCCHIO_TOL = 1e-8, 1e-12, 1e-12


def _offset(x, y, z):
    T = np.eye(4)
    T[:3, 3] = x, y, z
    return T


# --- the pages' models -------------------------------------------------------------------------
def hanging_chain(n):
    """01_why_analytic: n links 0.5 m below their hinges, hinges alternating about y and x."""
    below = _offset(0, 0, -0.5)
    return Model([Body(f"link{i}", i - 1, Revolute([0, 1, 0] if i % 2 == 0 else [1, 0, 0]),
                       _offset(0, 0, -1.0 if i else 0.0), below, 1.0, np.diag([0.1, 0.1, 0.02]))
                  for i in range(n)])


def ball():
    """01_why_analytic: one body on an XYZ Euler-angle joint."""
    return Model([Body("ball", -1, SphericalEuler("XYZ"), np.eye(4), _offset(0, 0, -0.5), 1.0,
                       np.diag([0.1, 0.2, 0.3]))])


BALL_RATE = np.array([0.5, -0.3, 0.4])
INERTIA = np.diag([0.05, 0.08, 0.1])


def five_joint_tree():
    """01_why_analytic: universal root, hinge and XYZ ball on it, slider below the ball, planar
    free joint below the hinge."""
    return Model([
        Body("base", -1, Universal(), np.eye(4), _offset(0, 0, -0.3), 1.0, INERTIA),
        Body("arm", 0, Revolute([0, 1, 0]), _offset(0.2, 0, -0.6), _offset(0.3, 0, 0), 1.0, INERTIA),
        Body("ball", 0, SphericalEuler("XYZ"), _offset(-0.2, 0, -0.6), _offset(0, 0, -0.3), 1.0, INERTIA),
        Body("slider", 2, Prismatic([0, 0, 1]), _offset(0, 0.1, -0.6), _offset(0, 0, -0.1), 0.5, INERTIA),
        Body("puck", 1, Free2D(), _offset(0.6, 0, 0), _offset(0.1, 0, 0), 0.5, INERTIA),
    ])


def forced_tree():
    """03_inertia_force_derivatives: four joints, joint springs and dampers, body damping,
    gravity and a damped spring from the world to the slider."""
    springs = dict(stiffness=2.0, damping=0.3, body_damping=0.05)
    return Model([
        Body("base", -1, Universal(), np.eye(4), _offset(0, 0, -0.3), 1.0, INERTIA, **springs),
        Body("arm", 0, Revolute([0, 1, 0]), _offset(0.2, 0, -0.6), _offset(0.3, 0, 0), 1.0, INERTIA,
             **springs),
        Body("ball", 0, SphericalExp(), _offset(-0.2, 0, -0.6), _offset(0, 0, -0.3), 1.0, INERTIA, **springs),
        Body("slider", 2, Prismatic([0, 0, 1]), _offset(0, 0.1, -0.6), _offset(0, 0, -0.1), 0.5, INERTIA,
             **springs),
    ], forces=[PointSpring(Attachment(-1, [0.5, 0.0, -1.0]), Attachment(3, [0.0, 0.05, 0.0]), 20.0, 1.0)])


CHAIN = hanging_chain(10)
TREE = five_joint_tree()
FORCED = forced_tree()


def page1_states():
    """The draws of 01_why_analytic: the chain's state, then the tree's."""
    rng = np.random.default_rng(0)
    q0, qdot0 = rng.uniform(-1, 1, CHAIN.nq), rng.uniform(-1, 1, CHAIN.nq)
    qt, vt = rng.uniform(-1, 1, TREE.nq), rng.standard_normal(TREE.nq)
    return q0, qdot0, qt, vt


def tree_states():
    """The page's state of the five-joint tree and states at two other seeds."""
    out = [page1_states()[2:]]
    for seed in (1, 2):
        rng = np.random.default_rng(seed)
        out.append((rng.uniform(-1, 1, TREE.nq), rng.standard_normal(TREE.nq)))
    return out


def page3_state():
    """The draws of 03_inertia_force_derivatives: q, qdot, tau, qddot."""
    rng = np.random.default_rng(0)
    return tuple(rng.uniform(-1, 1, FORCED.nq) if k == 0 else rng.standard_normal(FORCED.nq)
                 for k in range(4))


def forced_states():
    q, qdot, tau, acc = page3_state()
    out = [(q, qdot, tau, acc)]
    for seed in (5, 6):
        rng = np.random.default_rng(seed)
        out.append((rng.uniform(-1, 1, FORCED.nq),) + tuple(rng.standard_normal(FORCED.nq) for _ in range(3)))
    return out


# --- 01_why_analytic: what finite differences cost -----------------------------------------------
def test_difference_quotients_cost_nq_plus_1_or_2nq_forward_dynamics_calls():
    """01_why_analytic, 'What finite differences cost': n_q + 1 (forward) and 2 n_q (central)
    calls per matrix, 2 n_q + 2 and 4 n_q for both; forty for central differences of the
    10-link chain."""
    q0, qdot0, _, _ = page1_states()
    calls = []

    def qddot(q, qdot):
        calls.append(1)
        return forward_dynamics(CHAIN, q, qdot)

    counts = {}
    for method in ("forward", "central"):
        calls.clear()
        numerical_derivative(lambda x: qddot(x, qdot0), q0, 1e-6, method=method)
        in_q = len(calls)
        numerical_derivative(lambda v: qddot(q0, v), qdot0, 1e-6, method=method)
        counts[method] = (in_q, len(calls))
    nq = CHAIN.nq
    assert counts == {"forward": (nq + 1, 2 * nq + 2), "central": (2 * nq, 4 * nq)}
    assert counts["central"][1] == 40


def test_the_stored_benchmark_run_prices_the_analytic_pass_at_five_to_seven_forward_dynamics_calls():
    """01_why_analytic, against the run it quotes (benchmarks/results/derivatives.json): "For ten links
    the analytic pass costs about six forward-dynamics calls (five to seven over reruns ...), against the
    forty calls of central differences. From 5 to 20 links the calls of central differences grow fourfold
    ...; the analytic pass, in forward-dynamics calls, grows too, but by a factor of only 1.5 to 2.5."
    Reruns on the shared 2-core machine measured 4.8 to 6.5 calls at ten links and factors of 1.5 to 2.4."""
    stored = Path(__file__).resolve().parents[2] / "benchmarks/results/derivatives.json"
    bench = json.loads(stored.read_text(encoding="utf-8"))
    assert bench["date"] and bench["machine"]["cpu"] and bench["sizes"] == [5, 10, 20]
    ratio = dict(zip(bench["sizes"], bench["derivatives_over_forward_dynamics"], strict=True))
    seconds = bench["seconds"]
    assert ratio == {n: d / f for n, d, f in zip(bench["sizes"], seconds["derivatives"],
                                                  seconds["forward_dynamics"], strict=True)}
    assert 4.5 <= ratio[10] <= 7.5                          # "about six ... (five to seven)"
    calls = dict(zip(bench["sizes"], bench["central_difference_calls"], strict=True))
    assert calls[10] == 40 and calls[20] == 4 * calls[5]
    assert 1.5 <= ratio[20] / ratio[5] <= 2.5
    assert ratio[10] < calls[10]                            # the pass beats central differences


def test_the_analytic_pass_matches_central_differences_on_the_chain():
    """01_why_analytic: dqddot/dq and dqddot/dqdot of the 10-link chain pass the check at 1e-8."""
    q0, qdot0, _, _ = page1_states()
    d = forward_dynamics_derivatives(CHAIN, q0, qdot0)
    assert check_derivative(lambda x: forward_dynamics(CHAIN, x, qdot0), q0, d.dqddot_dq, rtol=CENTRAL_TOL).ok
    assert check_derivative(lambda v: forward_dynamics(CHAIN, q0, v), qdot0, d.dqddot_dqdot,
                            rtol=CENTRAL_TOL).ok


# --- 01_why_analytic: the V of the step sweep -----------------------------------------------------
def _chain_sweeps():
    q0, qdot0, _, _ = page1_states()
    exact = forward_dynamics_derivatives(CHAIN, q0, qdot0).dqddot_dq
    steps = np.logspace(-1, -12, 12)
    f = lambda x: forward_dynamics(CHAIN, x, qdot0)  # noqa: E731
    return steps, {m: step_sweep(f, q0, exact, steps, method=m)[1] for m in ("forward", "central")}


def test_the_step_sweep_has_the_bounds_the_page_prints():
    """01_why_analytic, 'Where finite differences fail': best central error below 1e-8, best
    forward error below 1e-5, above 1e-3 at h = 1e-1 (truncation) and above 1e-4 at h = 1e-12
    (round-off), best central step between 1e-7 and 1e-4."""
    assert abs(np.finfo(float).eps / 2.2e-16 - 1) < 0.01       # "machine precision 2.2e-16"
    steps, sweeps = _chain_sweeps()
    central = sweeps["central"]
    assert central.min() < 1e-8 and sweeps["forward"].min() < 1e-5
    assert central[0] > 1e-3 and central[-1] > 1e-4
    assert 1e-7 <= steps[np.argmin(central)] <= 1e-4


def test_the_truncation_branch_has_slope_1_forward_and_2_central():
    """01_why_analytic, 'The V': the error falls along a line of slope 1 (forward) or 2
    (central) from the large steps on (measured over h = 1e-1 ... 1e-3, within 0.2)."""
    steps, sweeps = _chain_sweeps()
    for method, order in (("forward", 1), ("central", 2)):
        slope = np.polyfit(np.log10(steps[:3]), np.log10(sweeps[method][:3]), 1)[0]
        assert abs(slope - order) < 0.2, (method, slope)


# --- 01_why_analytic: near a chart singularity -----------------------------------------------------
def _best_error_near_lock(delta):
    model = ball()
    q = np.array([0.3, np.pi / 2 - delta, 0.2])
    exact = forward_dynamics_derivatives(model, q, BALL_RATE).dqddot_dq
    steps = np.logspace(-1, -13, 25)
    h = steps[steps < delta / 3]
    return step_sweep(lambda x: forward_dynamics(model, x, BALL_RATE), q, exact, h)[1].min()


def test_differences_lose_accuracy_as_the_euler_chart_locks():
    """01_why_analytic, 'Near a chart singularity': best central error below 1e-8 at delta = 1e-1,
    above 1e-8 at 1e-3, above 1e-6 at 1e-5, growing, and more than a thousand times worse at
    1e-5 than at 1e-1."""
    near = {delta: _best_error_near_lock(delta) for delta in (1e-1, 1e-3, 1e-5)}
    assert near[1e-1] < 1e-8 and near[1e-3] > 1e-8 and near[1e-5] > 1e-6
    assert near[1e-1] < near[1e-3] < near[1e-5]
    assert near[1e-5] > 1e3 * near[1e-1]


def test_near_the_lock_det_S_is_delta_qddot_grows_like_1_over_delta_its_derivative_like_1_over_delta2():
    """01_why_analytic, 'Near a chart singularity': det S = cos q2 ~ delta; at fixed Euler-angle
    rates the accelerations grow like 1/delta and dqddot/dq like 1/delta^2 (fitted slopes
    within 0.1 over delta = 1e-2 ... 1e-5)."""
    model, joint = ball(), SphericalEuler("XYZ")
    deltas = np.logspace(-2, -5, 4)
    acc, der = [], []
    for delta in deltas:
        q = np.array([0.3, np.pi / 2 - delta, 0.2])
        assert abs(joint.det_S(q) - np.cos(q[1])) < 1e-15 and abs(joint.det_S(q) / delta - 1) < 1e-4
        d = forward_dynamics_derivatives(model, q, BALL_RATE)
        acc.append(np.abs(d.qddot).max())
        der.append(np.abs(d.dqddot_dq).max())
    assert abs(np.polyfit(np.log(deltas), np.log(acc), 1)[0] + 1) < 0.1
    assert abs(np.polyfit(np.log(deltas), np.log(der), 1)[0] + 2) < 0.1


def test_at_the_lock_the_analytic_derivatives_are_refused_naming_the_joint():
    """01_why_analytic: refused at the singularity with the body named and reparameterize
    suggested; the threshold is |det S| < sqrt(eps)."""
    assert SINGULAR_DET == np.sqrt(np.finfo(float).eps)
    with pytest.raises(ValueError, match=r"body 'ball'.*spherical_euler joint: chart XYZ is in gimbal "
                                         r"lock.*reparameterize\(q, qdot\)"):
        forward_dynamics_derivatives(ball(), [0.3, np.pi / 2, 0.2], BALL_RATE)


# --- 01_why_analytic: Algorithm 11 -----------------------------------------------------------------
@pytest.mark.parametrize("k", range(3))
def test_algorithm_11_matches_central_differences_on_the_five_joint_tree(k):
    """01_why_analytic, 'Algorithm 11, written out': dJ/dq and dJdot/dq pass the check at 1e-8,
    and Jdot = dJ/dq contracted with qdot."""
    q, v = tree_states()[k]
    d = jacobian_derivatives(TREE, q, v)
    assert check_derivative(lambda x: jacobian(TREE, x), q, d.dJ_dq, rtol=CENTRAL_TOL).ok
    Jdot_at = lambda x: jacobian_and_derivative(TREE, x, v)[1]  # noqa: E731
    assert check_derivative(Jdot_at, q, d.dJdot_dq, rtol=CENTRAL_TOL).ok
    assert np.allclose(d.dJ_dq @ v, d.Jdot, rtol=0, atol=1e-12)


@pytest.mark.parametrize("k", range(3))
def test_slices_off_the_path_from_the_root_are_zero_and_columns_ignore_the_joints_above(k):
    """01_why_analytic, 'The traversal, drawn': body i's slices vanish outside its ancestors'
    coordinates, and column j (of joint a) does not change with the coordinates of the joints
    above a."""
    q, _ = tree_states()[k]
    n, nq = TREE.n, TREE.nq
    dJ = jacobian_derivatives(TREE, q, np.zeros(nq)).dJ_dq.reshape(n, 6, nq, nq)
    owner = np.concatenate([[a] * b.joint.ndof for a, b in enumerate(TREE.bodies)])
    for i in range(n):
        anc = TREE.ancestors[i]
        assert not dJ[i][:, ~anc].any() and not dJ[i][:, :, ~anc].any()
        for j in np.flatnonzero(anc):
            above = TREE.ancestors[owner[j]] & (owner != owner[j])   # joints strictly above a
            assert not dJ[i][:, j, above].any(), (i, j)


def _line_19_as_printed(model, q, qdot):
    """dJdot/dq with line 19's last term Adot dJdot/dq (the transcription) in place of Adot dJ/dq."""
    kin = forward_kinematics(model, q, qdot)
    lib = jacobian_derivatives(model, q, qdot)
    n, nq = model.n, model.nq
    dJ, dJd = lib.dJ_dq.reshape(n, 6, nq, nq), lib.dJdot_dq.reshape(n, 6, nq, nq)
    wrong = dJd.copy()
    for i, body in enumerate(model.bodies):
        p, s = model.parents[i], model.dofs[i]
        if p < 0:
            continue
        A, A_ij = adjoint(body.joint.Q(q[s])), adjoint(inv_se3(model.T_joint_body[i]))
        A_inv = np.linalg.inv(A)
        A_jp = adjoint(inv_se3(model.T_parent_joint[i]) @ model.T_joint_body[p])
        Adot_ip = -A_ij @ A_inv @ (A @ ad(kin.S[i] @ qdot[s])) @ A_inv @ A_jp
        assert np.allclose(A_ij @ A_inv @ A_jp, kin.A_ip[i])   # Eq. (3.6), as the page forms it
        up = np.flatnonzero(model.ancestors[p])
        c, k = up[:, None], up[None, :]
        wrong[i][:, c, k] += np.einsum("ab,bjk->ajk", Adot_ip, dJd[p][:, c, k] - dJ[p][:, c, k])
    return wrong.reshape(6 * n, nq, nq)


def test_line_19_as_printed_fails_the_check():
    """01_why_analytic, 'Two slips of Algorithm 11 as printed': the check rejects line 19 as
    transcribed at every step of the sweep."""
    q, v = tree_states()[0]
    printed = _line_19_as_printed(TREE, q, v)
    assert not np.allclose(printed, jacobian_derivatives(TREE, q, v).dJdot_dq)
    check = check_derivative(lambda x: jacobian_and_derivative(TREE, x, v)[1], q, printed, rtol=CENTRAL_TOL)
    assert not check.ok and check.errors.min() > 1e-3


# --- 02_joint_derivatives --------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("joint", [Universal(), SphericalExp()], ids=["universal", "spherical_exp"])
def test_the_three_rules_and_the_bracket_hold(joint, seed):
    """02_joint_derivatives, 'Three rules that hold for every joint': dQ/dq_k = Q [S_k],
    dA/dq_k = A ad(S_k), dSdot/dqdot = dS/dq, dS_j/dq_k - dS_k/dq_j = ad(S_j) S_k."""
    rng = np.random.default_rng(seed)
    q, qdot = rng.uniform(-1, 1, joint.ndof), rng.standard_normal(joint.ndof)
    Q, S, H = joint.Q(q), joint.S(q), joint.dS_dq(q)
    for k in range(joint.ndof):
        assert np.allclose(joint.dQ_dq(q)[:, :, k], Q @ brac(S[:, k]))
        assert np.allclose(joint.dA_dq(q)[:, :, k], adjoint(Q) @ ad(S[:, k]))
        for j in range(joint.ndof):
            assert np.allclose(H[:, j, k] - H[:, k, j], ad(S[:, j]) @ S[:, k])
    assert np.array_equal(joint.dSdot_dqdot(q, qdot), H)


def test_eq_3_24_entry_is_minus_c1_c2_and_the_printed_entry_fails():
    """02_joint_derivatives, 'Euler angles': the generated entry (2, 3) of dR/dq1 is -c1 c2; the
    printed -c1 s2 fails the check; dS/dq has a zero first slice and a zero third column."""
    import sympy as sp

    gen = load_tool("gen_euler_joints")
    q1, q2, _ = gen.q
    dR, dS, _ = gen.chart_derivatives("XYZ")
    assert sp.simplify(dR[0][1, 2] + sp.cos(q1) * sp.cos(q2)) == 0
    assert dS[0] == sp.zeros(3, 3) and all(M[:, 2] == sp.zeros(3, 1) for M in dS)
    joint = SphericalEuler("XYZ")
    q = np.random.default_rng(3).uniform(-1.2, 1.2, 3)
    printed = joint.dQ_dq(q)
    printed[1, 2, 0] = -np.cos(q[0]) * np.sin(q[1])
    assert check_derivative(joint.Q, q, joint.dQ_dq(q), rtol=CENTRAL_TOL).ok
    assert not check_derivative(joint.Q, q, printed, rtol=CENTRAL_TOL).ok


@pytest.mark.parametrize("chart", CHART_NAMES)
def test_all_12_charts_generated_derivatives_match_central_differences(chart):
    """02_joint_derivatives: all 12 charts, dR/dq, dS/dq, dSdot/dq within 1e-8 (middle angle in
    (0.2, 1.2), away from every chart's lock)."""
    rng = np.random.default_rng(CHART_NAMES.index(chart))
    joint = SphericalEuler(chart)
    q, qd = rng.uniform(0.2, 1.2, 3), rng.standard_normal(3)
    for f, analytic in ((joint.Q, joint.dQ_dq(q)), (joint.S, joint.dS_dq(q)),
                        (lambda x: joint.Sdot(x, qd), joint.dSdot_dq(q, qd))):
        assert check_derivative(f, q, analytic, rtol=CENTRAL_TOL).ok


def test_eq_3_30_as_printed_fails_and_the_universal_hessian_passes():
    """02_joint_derivatives, 'The universal joint': dS/dq passes; with the printed extra column
    (0, 1, 0, 0, 0, 0) in dS/dq2 it fails."""
    joint = Universal()
    q = np.random.default_rng(4).uniform(-1.2, 1.2, 2)
    H = joint.dS_dq(q)
    printed = H.copy()
    printed[1, 1, 1] = 1.0
    assert check_derivative(joint.S, q, H, rtol=CENTRAL_TOL).ok
    assert not check_derivative(joint.S, q, printed, rtol=CENTRAL_TOL).ok


def _eq_3_32(joint, q):
    R = joint.Q(q)[:3, :3]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.stack([(q[k] * brac(q) + brac(brac(q) @ (np.eye(3) - R) @ np.eye(3)[k])) @ R / (q @ q)
                         for k in range(3)], axis=-1)


def test_exponential_coordinates_library_is_exact_and_eq_3_32_is_singular_at_rest():
    """02_joint_derivatives, 'Exponential coordinates': the library's dR/dq matches the complex
    step within 1e-12 at |q| = 1, 1e-4, 1e-8 and 0; Eq. (3.32) agrees to 1e-14 at |q| = 1, is off
    by more than 1e-10 at |q| = 1e-8 and is not finite at q = 0."""
    joint = SphericalExp()
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    R_of = lambda x: joint.Q(x)[:3, :3]  # noqa: E731
    for t in (1.0, 1e-4, 1e-8, 0.0):
        check = check_derivative(R_of, t * axis, joint.dQ_dq(t * axis)[:3, :3], method="complex",
                                 steps=[1e-20], rtol=COMPLEX_TOL)
        assert check.ok, t
    lib = lambda t: joint.dQ_dq(t * axis)[:3, :3]  # noqa: E731
    assert np.abs(_eq_3_32(joint, axis) - lib(1.0)).max() < 1e-14
    assert np.abs(_eq_3_32(joint, 1e-8 * axis) - lib(1e-8)).max() > 1e-10
    assert not np.isfinite(_eq_3_32(joint, np.zeros(3))).all()


@pytest.mark.parametrize("seed", range(3))
def test_eq_3_43_as_printed_fails_and_the_free2d_block_is_the_product_rule(seed):
    """02_joint_derivatives, 'Free joints': the bottom-left block of dAdot/dq3 is
    [pdot] dR/dq3 + [p] dRdot/dq3; with Eq. (3.43)'s [pdot] dRdot/dq3 the check fails."""
    rng = np.random.default_rng(seed)
    joint = Free2D()
    q, qd = rng.standard_normal(3), rng.standard_normal(3)
    s, c = np.sin(q[2]), np.cos(q[2])
    dR = np.array([[-s, -c, 0], [c, -s, 0], [0, 0, 0]])
    dRdot = np.array([[-c, s, 0], [-s, -c, 0], [0, 0, 0]]) * qd[2]
    p, pdot = np.array([q[0], q[1], 0.0]), np.array([qd[0], qd[1], 0.0])
    dAdot = joint.dAdot_dq(q, qd)
    assert np.allclose(dAdot[3:, :3, 2], brac(pdot) @ dR + brac(p) @ dRdot)
    printed = dAdot.copy()
    printed[3:, :3, 2] = brac(pdot) @ dRdot + brac(p) @ dRdot
    f = lambda x: adjoint_dot(joint.Q(x), joint.S(x) @ qd)  # noqa: E731
    assert check_derivative(f, q, dAdot, rtol=CENTRAL_TOL).ok
    assert not check_derivative(f, q, printed, rtol=CENTRAL_TOL).ok


def _derivative_cases(joint, q, qdot):
    return [
        (joint.Q, q, joint.dQ_dq(q)),
        (lambda x: adjoint(joint.Q(x)), q, joint.dA_dq(q)),
        (joint.S, q, joint.dS_dq(q)),
        (lambda x: joint.Sdot(x, qdot), q, joint.dSdot_dq(q, qdot)),
        (lambda x: joint.Sdot(q, x), qdot, joint.dSdot_dqdot(q, qdot)),
        (lambda x: adjoint_dot(joint.Q(x), joint.S(x) @ qdot), q, joint.dAdot_dq(q, qdot)),
    ]


PRESETS = joint_presets()


def test_the_spline_hessian_is_continuous_and_dSdot_dq_jumps_at_a_knot():
    """02_joint_derivatives, 'Composite and spline joints': S and dS/dq are continuous at a
    knot, dSdot/dq jumps there, and the library takes it from the right."""
    joint = PRESETS["spline_curve"][0]
    q, qdot, h = np.array([2.0]), np.array([1.3]), 1e-7
    assert check_derivative(joint.S, q, joint.dS_dq(q), rtol=1e-6).ok
    G = joint.dSdot_dq(q, qdot)
    sdot = lambda x: joint.Sdot(x, qdot)  # noqa: E731
    right = ((sdot(q + h) - sdot(q)) / h)[..., None]
    left = ((sdot(q) - sdot(q - h)) / h)[..., None]
    scale = np.abs(G).max()
    assert np.abs(right - G).max() < 1e-5 * scale and np.abs(left - G).max() > 1e-3 * scale


def test_the_table_covers_13_joint_types():
    """02_joint_derivatives, 'Every joint against finite differences': all 13 joint types."""
    assert len(PRESETS) == 13


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("name", list(PRESETS))
def test_every_joint_derivative_matches_central_differences_and_the_complex_step(name, seed):
    """02_joint_derivatives: every derivative of every joint type, central differences within
    1e-8 and the complex step within 1e-12, at the preset state and random velocities."""
    joint, q0, _ = PRESETS[name]
    qdot = np.random.default_rng(seed).standard_normal(joint.ndof)
    for f, x, analytic in _derivative_cases(joint, q0, qdot):
        assert check_derivative(f, x, analytic, rtol=CENTRAL_TOL).ok
        assert check_derivative(f, x, analytic, method="complex", steps=[1e-20], rtol=COMPLEX_TOL).ok


@pytest.mark.parametrize("name", list(PRESETS))
def test_a_sign_flipped_slice_is_caught_for_every_joint_type(name):
    """02_joint_derivatives: negating one slice of the Hessian (or of dA/dq where the Hessian
    is zero) fails the same check."""
    joint, q0, _ = PRESETS[name]
    H = joint.dS_dq(q0)
    f, analytic = (joint.S, H) if np.abs(H).max() > 0 else (lambda x: adjoint(joint.Q(x)), joint.dA_dq(q0))
    k = int(np.argmax([np.abs(analytic[..., i]).sum() for i in range(joint.ndof)]))
    wrong = analytic.copy()
    wrong[..., k] *= -1.0
    assert not check_derivative(f, q0, wrong, rtol=CENTRAL_TOL).ok


# --- 03_inertia_force_derivatives ------------------------------------------------------------------
def _pieces(q, qdot):
    jd = jacobian_derivatives(FORCED, q, qdot)
    M_m = np.zeros((6 * FORCED.n, 6 * FORCED.n))
    for i in range(FORCED.n):
        M_m[6 * i:6 * i + 6, 6 * i:6 * i + 6] = FORCED.spatial_inertias[i]
    return jd, M_m


@pytest.mark.parametrize("k", range(3))
def test_eq_3_54_and_3_55_with_J_transpose(k):
    """03_inertia_force_derivatives, 'The mass matrix': T_k = J^T M_m dJ/dq_k, dM/dq_k = T_k +
    T_k^T (the library's, symmetric, passing the check), and Eq. (3.55)."""
    q, _, _, _ = forced_states()[k]
    jd, M_m = _pieces(q, np.zeros(FORCED.nq))
    T = np.einsum("ai,ajk->ijk", M_m @ jd.J, jd.dJ_dq)
    dM = T + T.transpose(1, 0, 2)
    assert np.allclose(dM, mass_matrix_derivative(FORCED, q))
    assert np.allclose(dM, dM.transpose(1, 0, 2), rtol=0, atol=1e-14)
    assert check_derivative(lambda x: mass_matrix(FORCED, x), q, dM, rtol=CENTRAL_TOL).ok
    assert check_derivative(lambda x: np.linalg.inv(mass_matrix(FORCED, x)), q,
                            inverse_mass_matrix_derivative(FORCED, q), rtol=CENTRAL_TOL).ok


@pytest.mark.parametrize("k", range(3))
def test_eq_3_56_with_the_outer_product_of_eq_3_57(k):
    """03_inertia_force_derivatives, 'The quadratic velocity vector': the contraction is Jdot,
    the outer product is dqdot_m/dq; K_QVV and D_QVV pass the check, D_QVV read with the
    contraction (-2 J^T M_m Jdot) fails; D_QVV qdot = 2 f_QVV."""
    q, qdot, _, _ = forced_states()[k]
    jd, M_m = _pieces(q, qdot)
    outer = np.einsum("ajk,j->ak", jd.dJ_dq, qdot)
    assert np.allclose(jd.dJ_dq @ qdot, jd.Jdot)
    assert np.allclose(outer, maximal_velocity_derivative(FORCED, q, qdot))
    qvv = quadratic_velocity_derivatives(FORCED, q, qdot)
    MJ = M_m @ jd.J
    assert np.allclose(qvv.D, -MJ.T @ outer - MJ.T @ jd.Jdot)
    f_q = lambda x: quadratic_velocity_vector(FORCED, x, qdot)  # noqa: E731
    f_v = lambda v: quadratic_velocity_vector(FORCED, q, v)  # noqa: E731
    assert check_derivative(f_q, q, qvv.K, rtol=CENTRAL_TOL).ok
    assert check_derivative(f_v, qdot, qvv.D, rtol=CENTRAL_TOL).ok
    assert not check_derivative(f_v, qdot, -2 * MJ.T @ jd.Jdot, rtol=CENTRAL_TOL).ok
    assert np.allclose(qvv.D @ qdot, 2 * qvv.f)


def _K_terms(q, qdot):
    jd, M_m = _pieces(q, qdot)
    J, dJ = jd.J, jd.dJ_dq
    fm = maximal_force_derivatives(FORCED, q, qdot)
    outer = np.einsum("ajk,j->ak", dJ, qdot)
    return {
        "K_r": -np.diag(FORCED.stiffness),
        "J^T K_m J": J.T @ fm.K @ J,
        "dJ^T/dq f_m": np.einsum("aik,a->ik", dJ, fm.f),
        "J^T D_m (dJ/dq x qdot)": J.T @ fm.D @ outer,
        "K_QVV": quadratic_velocity_derivatives(FORCED, q, qdot).K,
    }, -np.diag(FORCED.damping) + J.T @ fm.D @ J + quadratic_velocity_derivatives(FORCED, q, qdot).D


@pytest.mark.parametrize("k", range(3))
def test_eq_3_58_assembled_from_its_terms_and_each_moving_jacobian_term_needed(k):
    """03_inertia_force_derivatives, 'All forces': f = f_r + J^T f_m + f_QVV; Eq. (3.58) from its
    terms equals force_derivatives and passes the check; dropping dJ^T/dq f_m or
    J^T D_m (dJ/dq x qdot) fails it."""
    q, qdot, _, _ = forced_states()[k]
    terms, D = _K_terms(q, qdot)
    K = sum(terms.values())
    lib = force_derivatives(FORCED, q, qdot)
    assert np.allclose(lib.f, reduced_forces(FORCED, q, qdot))
    assert np.allclose(K, lib.K) and np.allclose(D, lib.D)
    f_q = lambda x: reduced_forces(FORCED, x, qdot)  # noqa: E731
    assert check_derivative(f_q, q, K, rtol=CENTRAL_TOL).ok
    assert check_derivative(lambda v: reduced_forces(FORCED, q, v), qdot, D, rtol=CENTRAL_TOL).ok
    for dropped in ("dJ^T/dq f_m", "J^T D_m (dJ/dq x qdot)"):
        assert not check_derivative(f_q, q, K - terms[dropped], rtol=CENTRAL_TOL).ok, dropped


def test_both_moving_jacobian_terms_exceed_the_joint_springs_at_the_page_state():
    """03_inertia_force_derivatives, 'What the figure shows': J^T K_m J is the largest term, and
    both terms of the moving Jacobian are larger than K_r."""
    q, qdot, _, _ = page3_state()
    sizes = {name: np.abs(term).max() for name, term in _K_terms(q, qdot)[0].items()}
    assert max(sizes, key=sizes.get) == "J^T K_m J"
    assert sizes["dJ^T/dq f_m"] > sizes["K_r"] and sizes["J^T D_m (dJ/dq x qdot)"] > sizes["K_r"]


@pytest.mark.parametrize("k", range(3))
def test_forward_and_inverse_dynamics_derivatives(k):
    """03_inertia_force_derivatives, 'The derivatives of forward and inverse dynamics':
    dqddot/dq = M^-1 (K - dM/dq qddot), and all five derivatives pass the check."""
    q, qdot, tau, acc = forced_states()[k]
    fwd = forward_dynamics_derivatives(FORCED, q, qdot, tau)
    K = force_derivatives(FORCED, q, qdot).K
    dM = mass_matrix_derivative(FORCED, q)
    assert np.allclose(fwd.dqddot_dq, np.linalg.solve(mass_matrix(FORCED, q),
                                                      K - np.einsum("ijk,j->ik", dM, fwd.qddot)))
    for f, x, analytic in ((lambda x: forward_dynamics(FORCED, x, qdot, tau), q, fwd.dqddot_dq),
                           (lambda v: forward_dynamics(FORCED, q, v, tau), qdot, fwd.dqddot_dqdot),
                           (lambda t: forward_dynamics(FORCED, q, qdot, t), tau, fwd.dqddot_dtau)):
        assert check_derivative(f, x, analytic, rtol=CENTRAL_TOL).ok
    inv = inverse_dynamics_derivatives(FORCED, q, qdot, acc)
    assert check_derivative(lambda x: inverse_dynamics(FORCED, x, qdot, acc), q, inv.dtau_dq,
                            rtol=CENTRAL_TOL).ok
    assert check_derivative(lambda v: inverse_dynamics(FORCED, q, v, acc), qdot, inv.dtau_dqdot,
                            rtol=CENTRAL_TOL).ok


def test_the_derivatives_agree_with_pinocchio_within_1e_12():
    """03_inertia_force_derivatives, 'Against Pinocchio': Pinocchio 4.1, four models (a planar arm, two serial
    chains, a 12-body branching tree), every state, every derivative within 1e-12 of the
    reference vectors in max |a - b| / max(1, max |b|)."""
    paths = sorted((ROOT / "tests" / "reference" / "pinocchio").glob("*.json"))
    assert [p.stem for p in paths] == ["planar3_selftest", "serial_n3_revolute", "serial_n7_revprism",
                                       "tree_n12_branching"]
    for path in paths:
        case = json.loads(path.read_text())
        model = model_from_dict(case["model"])
        assert case["pinocchio_version"].startswith("4.1")
        if path.stem == "tree_n12_branching":
            assert model.n == 12 and "fixed" in case["joint_types"]
        for raw in case["states"]:
            s = {key: np.asarray(value, dtype=float) for key, value in raw.items()}
            fwd = forward_dynamics_derivatives(model, s["q"], s["qdot"], s["tau"])
            inv = inverse_dynamics_derivatives(model, s["q"], s["qdot"], s["qddot_in"])
            dJ = jacobian_derivatives(model, s["q"], s["qdot"]).dJ_dq
            for ours, key in ((fwd.dqddot_dq, "dqddot_dq"), (fwd.dqddot_dqdot, "dqddot_dqdot"),
                              (fwd.dqddot_dtau, "dqddot_dtau"), (inv.dtau_dq, "dtau_dq"),
                              (inv.dtau_dqdot, "dtau_dqdot"), (dJ, "dJmr_dq")):
                error = np.abs(ours - s[key]).max() / max(1.0, np.abs(s[key]).max())
                assert error < PINOCCHIO_TOL, (path.stem, key, error)
