"""The implicit integrators of §3.4 (redmax_edu.implicit): the positions-only residual of every
solve and its derivatives, Newton's method with a line search, constraints, charts, bad input.

Tolerances. The residual's Jacobian ``H`` and the stencil blocks are checked against central
differences at the best of h = 1e-4, 1e-5, 1e-6 on the five random trees that hold every joint
type, with joint springs and dampers, body damping and one force of every class: they agree to
better than 1e-8 (CENTRAL_TOL, that of the §3.3 derivatives they are built from). A wrong block
misses by orders of magnitude (the mutation tests): dropping ``dM/dq`` from ``H`` or the ``D``
term from a block, or a wrong coefficient, gives relative errors of 1e-3 to 1.
"""

import numpy as np
import pytest
import scipy.linalg

from redmax_edu.checks import check_derivative
from redmax_edu.constrained import constraint_errors, constraint_rows
from redmax_edu.implicit import ALPHA, SCHEMES, Stencil, scheme_stencils, step_residual
from redmax_edu.integrators import SimulationError, simulate
from redmax_edu.model import Body, Model
from redmax_edu.scenes import scene

from .random_trees import joint_group_trees, with_every_force

CENTRAL_TOL = 1e-8
STEPS = [1e-4, 1e-5, 1e-6]
H_STEP = 0.05          # large enough that the c h D and c h^2 K terms weigh in every block


def _trees(seed, groups=10):
    rng = np.random.default_rng(seed)
    return [(with_every_force(rng, model), q, qdot) for model, q, qdot in joint_group_trees(rng, groups)]


#: Every joint type over 10 trees, with every force.
TREES = _trees(3)
#: The tree the stencil blocks are checked on (the smallest: the blocks are made of M and D, whose
#: derivatives on every joint type test_derivatives checks; what varies here is the stencil).
SMALL = int(np.argmin([model.nq for model, _, _ in TREES]))


def _history(rng, q, stencil):
    """Random earlier positions near q for every state of the stencil."""
    return {j: q + 0.05 * rng.standard_normal(len(q)) for j in stencil.history}


def _setup(g, stencil, seed=0):
    model, q, qdot = TREES[g]
    rng = np.random.default_rng(seed)
    positions = _history(rng, q, stencil)
    q_new = q + 0.05 * rng.standard_normal(len(q))
    return model, q_new, positions, qdot.copy(), rng.standard_normal(len(q))


def _check(f, x, analytic):
    check = check_derivative(f, x, analytic, rtol=CENTRAL_TOL, steps=STEPS)
    return check


def _residual_in(model, stencil, q_new, positions, v, tau, which):
    """g as a function of one argument: "q_new", a state index j, "v" or "tau"."""
    def g(x):
        args = {"q_new": q_new, "positions": dict(positions), "v": v, "tau": tau}
        if which == "q_new":
            args["q_new"] = x
        elif which == "v":
            args["v"] = x
        elif which == "tau":
            args["tau"] = x
        else:
            args["positions"][which] = x
        return step_residual(model, stencil, args["q_new"], args["positions"], args["v"], args["tau"]).g
    return g


def _distinct_stencils():
    """One of every kind of solve: BDF1 first and steady, SDIRK2 both stages first and steady,
    BDF2's SDIRK2 start, its startup steps k = 1, 2, 3 and a steady step (Eq. 3.92, 3.103)."""
    out = []
    for scheme, picks in (("bdf1", (0, 1)), ("sdirk2", (0, 1, 2, 3)), ("bdf2", (0, 1, 2, 3, 4, 5))):
        stencils = scheme_stencils(scheme, H_STEP, 6)
        out += [pytest.param(stencils[k], id=f"{scheme}-{stencils[k].index}-{stencils[k].stage}")
                for k in picks]
    return out


# --- H and the blocks against central differences --------------------------------------------------
@pytest.mark.parametrize("g", range(len(TREES)), ids=lambda g: f"tree{g}")
def test_H_matches_central_differences_of_g_on_every_joint_type(g):
    scheme = SCHEMES[g % len(SCHEMES)]
    stencil = scheme_stencils(scheme, H_STEP, 4)[-1]
    model, q_new, positions, v, tau = _setup(g, stencil, seed=g)
    r = step_residual(model, stencil, q_new, positions, v, tau)
    check = _check(_residual_in(model, stencil, q_new, positions, v, tau, "q_new"), q_new, r.H)
    assert check.ok, check.errors


@pytest.mark.parametrize("stencil", _distinct_stencils())
def test_every_stencil_block_matches_central_differences(stencil):
    model, q_new, positions, v, tau = _setup(SMALL, stencil, seed=stencil.index)
    r = step_residual(model, stencil, q_new, positions, v, tau)
    check = _check(_residual_in(model, stencil, q_new, positions, v, tau, "q_new"), q_new, r.H)
    assert check.ok, ("H", check.errors)
    for j, block in r.dg_dq.items():
        check = _check(_residual_in(model, stencil, q_new, positions, v, tau, j), positions[j], block)
        assert check.ok, (j, check.errors)
    check = _check(_residual_in(model, stencil, q_new, positions, v, tau, "v"), v, r.dg_dv)
    if stencil.uses_velocity:
        assert check.ok, ("v", check.errors)
    else:  # v does not enter: g does not change with it and the block is zero
        assert not np.any(r.dg_dv) and check.error == 0.0
    check = _check(_residual_in(model, stencil, q_new, positions, v, tau, "tau"), tau, r.dg_dtau)
    assert check.ok, ("tau", check.errors)


# --- mutants: each check catches a wrong derivative ----------------------------------------------------
def test_H_without_the_dM_dq_term_is_caught():
    stencil = scheme_stencils("bdf2", H_STEP, 4)[-1]
    model, q_new, positions, v, tau = _setup(SMALL, stencil)
    r = step_residual(model, stencil, q_new, positions, v, tau)
    wrong = r.M - stencil.c * stencil.h * stencil.b_new * r.D - stencil.c * stencil.h ** 2 * r.K
    check = _check(_residual_in(model, stencil, q_new, positions, v, tau, "q_new"), q_new, wrong)
    assert not check.ok and check.error > 1e3 * CENTRAL_TOL


@pytest.mark.parametrize("mutation", ["no D term", "wrong coefficient", "flipped sign"])
def test_a_wrong_block_is_caught(mutation):
    stencil = scheme_stencils("bdf2", H_STEP, 4)[-1]    # the startup step k = 2 (Eq. 3.102)
    model, q_new, positions, v, tau = _setup(SMALL, stencil)
    r = step_residual(model, stencil, q_new, positions, v, tau)
    j = max(stencil.b)                                  # q_k: both M and D enter
    right = r.dg_dq[j]
    wrong = {"no D term": -stencil.a[j] * r.M,
             "wrong coefficient": right - 0.1 * r.M,
             "flipped sign": -right}[mutation]
    f = _residual_in(model, stencil, q_new, positions, v, tau, j)
    assert _check(f, positions[j], right).ok
    check = _check(f, positions[j], wrong)
    assert not check.ok and check.error > 1e3 * CENTRAL_TOL


# --- the stencils are the writeup's equations -------------------------------------------------------------
def _g_coefficients(stencil):
    """The coefficients of the positions in ``M(...)`` as the writeup prints them (``-a_j``)."""
    return {j: -a for j, a in stencil.a.items()}


def test_the_stencils_reproduce_the_writeups_coefficients():
    """Eq. (3.91), (3.97), (3.99), (3.101), (3.102): the positions-only forms, with the SDIRK2
    velocity in the first two BDF2 steps. States: 0 = q0, 1 = q_alpha, 2 = q1, 3 = q2, ..."""
    A, h = ALPHA, 0.1
    bdf1 = scheme_stencils("bdf1", h, 3)
    assert _g_coefficients(bdf1[0]) == {0: -1.0} and bdf1[0].a_v == 1.0 and bdf1[0].b == {0: -1.0}
    assert _g_coefficients(bdf1[2]) == {2: -2.0, 1: 1.0} and bdf1[2].a_v == 0.0      # Eq. (3.91)
    s = scheme_stencils("bdf2", h, 6)
    final = s[1]                                                                      # Eq. (3.97)
    assert np.isclose(final.a[1], 2 * (1 - A) / A) and np.isclose(final.a_v, 2 * A - 1)
    assert np.isclose(final.b_new, 1 / A) and np.isclose(final.b[1], -(1 - A) / A ** 2)
    assert np.isclose(final.b[0], (1 / A - 2) / A)
    k1 = _g_coefficients(s[2])                                                        # Eq. (3.101)
    assert np.isclose(k1[2], -(8 / (9 * A) + 4 / 3)) and np.isclose(k1[1], -8 * (A - 1) / (9 * A ** 2))
    assert np.isclose(k1[0], (3 * A ** 2 + 16 * A - 8) / (9 * A ** 2)) and np.isclose(s[2].a_v, -2 / 9)
    k2 = _g_coefficients(s[3])                                                        # Eq. (3.102)
    assert np.isclose(k2[3], -8 / 3) and np.isclose(k2[2], 2 / (9 * A) + 19 / 9)
    assert np.isclose(k2[1], 2 * (A - 1) / (9 * A ** 2))
    assert np.isclose(k2[0], -(4 * A ** 2 + 4 * A - 2) / (9 * A ** 2)) and s[3].a_v == 0.0
    steady = _g_coefficients(s[-1])                                                   # Eq. (3.99)
    n = s[-1].index
    assert np.allclose([steady[n - 1], steady[n - 2], steady[n - 3], steady[n - 4]],
                       [-8 / 3, 22 / 9, -8 / 9, 1 / 9])
    assert s[-1].b == {n - 1: -2.0, n - 2: 0.5} and s[-1].b_new == 1.5 and np.isclose(s[-1].c, 4 / 9)


def test_the_blocks_are_the_writeups_eq_3_103():
    """dg/dq_j = -a_j M - c h b_j D against the typeset blocks of Eq. (3.98) and (3.103)."""
    A, h = ALPHA, 0.1
    M, D = np.diag([2.0, 3.0]), np.array([[-0.5, 0.1], [0.2, -0.7]])
    s = scheme_stencils("bdf2", h, 6)

    def block(stencil, j):
        from redmax_edu.implicit import StepResidual
        z = np.zeros(2)
        return StepResidual(stencil, z, z, z, M, M, D, M).dg_dq_j(j)

    # Eq. (3.98) prints (1 - alpha) / alpha h D; differentiating its own Eq. (3.97) gives (1 - alpha) h D
    # (dqdot1/dq_alpha = -(1 - alpha) / (alpha^2 h), times -alpha^2 h^2 D), which central differences
    # confirm (test_every_stencil_block_matches_central_differences)
    assert np.allclose(block(s[1], 1), -2 * (1 - A) / A * M + (1 - A) * h * D)
    assert np.allclose(block(s[2], 2), -(8 / (9 * A) + 4 / 3) * M + 8 / 9 * h * D)         # k = 1
    assert np.allclose(block(s[2], 1), -(8 * (A - 1) / (9 * A ** 2)) * M)
    assert np.allclose(block(s[3], 3), -8 / 3 * M + 8 / 9 * h * D)                           # k = 2
    assert np.allclose(block(s[3], 2), (2 / (9 * A) + 19 / 9) * M - 2 / 9 * h * D)
    assert np.allclose(block(s[3], 1), 2 * (A - 1) / (9 * A ** 2) * M)
    assert np.allclose(block(s[4], 2), -8 / 9 * M)                                           # k = 3
    n = s[-1].index                                                                          # k >= 4
    assert np.allclose(block(s[-1], n - 1), -8 / 3 * M + 8 / 9 * h * D)
    assert np.allclose(block(s[-1], n - 2), 22 / 9 * M - 2 / 9 * h * D)
    assert np.allclose(block(s[-1], n - 3), -8 / 9 * M) and np.allclose(block(s[-1], n - 4), M / 9)
    bdf1 = scheme_stencils("bdf1", h, 3)[2]                                                  # Eq. (3.92)
    assert np.allclose(block(bdf1, 2), -2 * M + h * D) and np.allclose(block(bdf1, 1), M)


# --- bad input to step_residual ------------------------------------------------------------------------
def test_step_residual_refuses_bad_input_by_name():
    model, q, qdot = TREES[0]
    first = scheme_stencils("bdf1", 0.01, 1)[0]
    with pytest.raises(ValueError, match="argument 'v'"):
        step_residual(model, first, q, {0: q})
    with pytest.raises(ValueError, match="argument 'positions'"):
        step_residual(model, first, q, {}, v=qdot)
    with pytest.raises(ValueError, match="argument 'stencil'"):
        step_residual(model, "bdf1", q, {0: q}, v=qdot)
    with pytest.raises(ValueError, match="'q_new'"):
        step_residual(model, first, q[:-1], {0: q}, v=qdot)
    with pytest.raises(ValueError, match="argument 'scheme'"):
        scheme_stencils("bdf3", 0.01, 1)
    assert isinstance(first, Stencil)


# --- simulate(method="bdf1" | "sdirk2" | "bdf2"): Newton, records, constraints, charts -------------------
@pytest.fixture(scope="module")
def double_pendulum():
    from .test_integrators import _link

    return Model([_link("upper", -1), _link("lower", 0, axis=(0, 0.6, 0.8), offset=0.3)])


Q0, QDOT0 = np.array([0.4, -0.3]), np.array([0.0, 1.0])


def _quadratic_constants(residuals, floor=1e-12):
    """``e_k+1 / e_k^2`` for successive residuals while the next is above round-off: bounded for
    quadratic convergence, growing like ``rate / e_k`` for linear convergence."""
    e = np.asarray(residuals)
    return [e[k + 1] / e[k] ** 2 for k in range(len(e) - 1) if e[k + 1] > floor]


#: e_k+1 <= C e_k^2 with this C (s/rad): measured at most 0.6 on the runs below.
QUADRATIC_C = 5.0


def test_newton_converges_quadratically(double_pendulum):
    """From the predictor of a large step (h = 0.05 s, residuals from 1 rad/s down to 1e-15),
    every iteration squares the residual: e_k+1 <= C e_k^2 with one constant C."""
    tr = simulate(double_pendulum, Q0, [0.0, 8.0], (0.0, 0.2), "bdf1", h=0.05, newton_tol=1e-13)
    constants = [c for s in tr.implicit.solves for c in _quadratic_constants(s.residuals)]
    assert len(constants) >= 8 and max(constants) < QUADRATIC_C, constants
    assert all(s.residuals[0] > 0.5 and s.residuals[-1] < 1e-13 for s in tr.implicit.solves)


def test_the_quadratic_check_catches_a_linearly_converging_newton(double_pendulum, monkeypatch):
    """Mutant: H without dM/dq (a quasi-Newton matrix) converges only linearly."""
    import redmax_edu.implicit as implicit
    from redmax_edu.derivatives import mass_matrix_derivative

    right = implicit._residual

    def without_dM(free, stencil, q_new, positions, v, tau):
        r = right(free, stencil, q_new, positions, v, tau)
        x = stencil.inertial(q_new, positions, v)
        H = r.H - np.einsum("ijk,j->ik", mass_matrix_derivative(free, q_new), x)
        return implicit.StepResidual(stencil, r.q, r.qdot, r.g, H, r.M, r.D, r.K)

    monkeypatch.setattr(implicit, "_residual", without_dM)
    tr = simulate(double_pendulum, Q0, [0.0, 8.0], (0.0, 0.2), "bdf1", h=0.05, newton_tol=1e-13)
    constants = [c for s in tr.implicit.solves for c in _quadratic_constants(s.residuals)]
    assert max(constants) > 100 * QUADRATIC_C


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_run_records_every_solve(double_pendulum, scheme):
    tr = simulate(double_pendulum, Q0, QDOT0, (0.0, 0.1), scheme, h=0.01, sample_dt=0.02)
    run = tr.implicit
    assert tr.method == scheme and tr.h == 0.01 and tr.nsteps == 10 and len(tr.t) == 6
    per_step = {"bdf1": 1, "sdirk2": 2, "bdf2": 1}[scheme]
    assert len(run.solves) == 10 * per_step + (scheme == "bdf2")
    assert [s.stencil.index for s in run.solves] == list(range(1, len(run.solves) + 1))
    assert run.q.shape == (len(run.solves) + 1, 2) and np.allclose(run.t[-1], 0.1)
    assert run.anchors.keys() == {0} and run.restarts == () and run.iterations.shape == (10,)
    assert tr.nfev >= sum(1 + s.iterations for s in run.solves)     # + line-search trials
    for s in run.solves:
        assert len(s.residuals) == s.iterations + 1 and len(s.step_lengths) == s.iterations
        assert s.residuals[-1] <= 1e3 * 1e-10        # the tolerance, or round-off just above it
        assert np.allclose(scipy.linalg.lu_solve(s.lu, s.residual.H @ np.ones(2)), 1.0)
        assert np.allclose(s.residual.q, s.q) and s.model is double_pendulum
    # the samples are the full-step states and the scheme's own velocities
    finals = [s for s in run.solves if s.stencil.stage != "alpha"]
    np.testing.assert_array_equal(tr.q[1:], np.array([s.q for s in finals])[1::2])
    np.testing.assert_array_equal(tr.qdot[1:], np.array([s.qdot for s in finals])[1::2])
    if scheme == "bdf1":                                              # Eq. (3.61)
        np.testing.assert_allclose(finals[3].qdot, (finals[3].q - finals[2].q) / 0.01, rtol=1e-12)


def test_the_velocity_is_the_schemes_and_g_vanishes_at_the_solution(double_pendulum):
    tr = simulate(double_pendulum, Q0, QDOT0, (0.0, 0.1), "bdf2", h=0.01)
    run = tr.implicit
    for s in run.solves:
        r = step_residual(double_pendulum, s.stencil, s.q, run.q, run.anchors[0], s.tau)
        np.testing.assert_allclose(r.qdot, s.qdot, rtol=1e-13, atol=1e-13)
        assert np.abs(r.g).max() <= 1e-10 * r.scale * 1.0001


def test_per_step_controls_equal_the_same_piecewise_constant_callable(double_pendulum):
    n, h = 8, 0.01
    controls = np.random.default_rng(1).standard_normal((n, 2))
    by_rows = simulate(double_pendulum, Q0, QDOT0, (0.0, n * h), "sdirk2", h=h, tau=controls)

    def piecewise(t):   # step k covers (k h, (k + 1) h]; both stages of step k use row k
        return controls[min(int(np.ceil(t / h - 1e-9)) - 1, n - 1)]

    by_time = simulate(double_pendulum, Q0, QDOT0, (0.0, n * h), "sdirk2", h=h, tau=piecewise)
    np.testing.assert_allclose(by_rows.q, by_time.q, rtol=0, atol=1e-14)
    assert [s.stencil.step for s in by_rows.implicit.solves] == [k for k in range(n) for _ in range(2)]
    np.testing.assert_array_equal(by_rows.implicit.solves[5].tau, controls[2])
    free = simulate(double_pendulum, Q0, QDOT0, (0.0, n * h), "sdirk2", h=h)
    assert np.abs(free.q[-1] - by_rows.q[-1]).max() > 1e-6


# --- constraints -----------------------------------------------------------------------------------------
def _scene_model(sid):
    s = scene(sid)
    return s, s.model.with_friction(())


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_four_bar_loop_closes_at_the_end_of_every_step(scheme):
    s, model = _scene_model(30)
    tr = simulate(model, s.q0, s.qdot0, (0.0, 0.3), scheme, h=0.01)
    gaps = [np.abs(constraint_errors(model, q)[0]).max() for q in tr.implicit.q[1:]]
    assert max(gaps) < 1e-10                                    # m; the links are 4-14 cm
    assert all(s.G is not None and s.G.shape == (2, model.nq) for s in tr.implicit.solves)
    assert np.ptp(tr.q[:, 1]) > 0.05                            # and the linkage does move


def test_a_velocity_level_constraint_holds_on_the_new_velocity():
    """Scene 32: the crank's velocity prescribed through a maximal constraint (no position error)."""
    s, model = _scene_model(32)
    tr = simulate(model, s.q0, s.qdot0, (0.0, 0.1), "bdf2", h=0.005)
    velocity_only = [b for c, b in zip(model.constraints, constraint_rows(model, s.q0, s.qdot0).blocks,
                                       strict=True) if not c.positional]
    assert velocity_only
    for solve in tr.implicit.solves:
        rows = constraint_rows(model, solve.q, solve.qdot, solve.stencil.t)
        for b in velocity_only:
            assert np.abs(rows.G[b] @ solve.qdot - rows.w[b]).max() < 1e-8   # rad/s, against 4 pi
        assert np.abs(rows.error).max() < 1e-10                             # the scene's loop closes


def test_a_joint_limit_is_held_by_the_active_set_and_its_changes_are_recorded():
    s, model = _scene_model(6)
    tr = simulate(model, s.q0, s.qdot0, (0.0, 1.0), "bdf2", h=0.01)
    lower, upper = model.constraints[0].lower, model.constraints[0].upper
    assert tr.q[:, 1].min() > lower - 1e-9 and tr.q[:, 1].max() < upper + 1e-9
    assert np.isclose(tr.q[:, 1], [lower, upper][0], atol=1e-9).any() or np.isclose(tr.q[:, 1], upper).any()
    run = tr.implicit
    assert run.active_set_changes and all(run.solves[k].active is not None for k in range(3))
    for solve in run.solves:
        if solve.multipliers is not None and len(solve.multipliers):
            assert solve.multipliers.min() > -1e-6                  # a limit only pushes
    changed = [solve.stencil.step for solve in run.solves if solve.active_set_changed]
    assert changed == list(run.active_set_changes)


def test_a_frictionless_floor_contact_stops_the_falling_tip():
    from redmax_edu.constraints import FloorContact

    s, model = _scene_model(31)
    floor = [FloorContact(c.body, c.radius, c.point, c.plane, 0.0) for c in model.constraints]
    model = model.with_constraints(floor)
    tr = simulate(model, s.q0, s.qdot0, (0.0, 0.6), "bdf1", h=0.01)
    gaps = np.array([constraint_errors(model, q)[0][0] for q in tr.implicit.q])
    assert gaps.min() > -1e-9 and np.isclose(gaps, 0.0, atol=1e-9).sum() >= 2
    assert tr.implicit.active_set_changes


# --- charts ------------------------------------------------------------------------------------------------
def test_a_chart_switch_restarts_bdf2_with_an_sdirk2_step():
    """Scene 18: a free cube in exponential coordinates whose rotation passes 1.5 pi (a chart switch)
    under gravity; its centre follows z = vz t - g t^2 / 2 in every chart, which BDF2 and SDIRK2
    integrate exactly (both are exact on quadratics, so only the Newton tolerance remains)."""
    s = scene(18)
    tr = simulate(s.model, s.q0, s.qdot0, (0.0, 7.0), "bdf2", h=0.02)
    run = tr.implicit
    assert len(tr.reparameterized) >= 1 and len(run.restarts) == len(tr.reparameterized)
    for anchor in run.restarts:
        after = [x for x in run.solves if x.stencil.index in (anchor + 1, anchor + 2)]
        assert [x.stencil.stage for x in after] == ["alpha", "final"]
        assert all(x.stencil.anchor == anchor and min(x.stencil.history) == anchor for x in after)
    t = tr.t
    z = tr.E_wi[:, 0, 2, 3] - tr.E_wi[0, 0, 2, 3]
    g, vz = -s.model.gravity[2], s.qdot0[2]
    assert np.abs(z - (vz * t - g * t ** 2 / 2)).max() < 1e-9


def test_a_joint_at_gimbal_lock_is_refused_naming_it():
    from redmax_edu.joints import SphericalEuler

    ball = Model([Body("ball", -1, SphericalEuler("XYZ"), np.eye(4), np.eye(4), 1.0, np.eye(3))])
    with pytest.raises(ValueError, match="'ball'.*gimbal lock"):
        simulate(ball, [0.0, np.pi / 2, 0.0], [0.1, 0.0, 0.0], (0.0, 0.1), "bdf2", h=0.01,
                 reparameterize=False)
    tr = simulate(ball, [0.0, np.pi / 2, 0.0], [0.1, 0.0, 0.0], (0.0, 0.1), "bdf2", h=0.01)
    assert len(tr.reparameterized) >= 1 and np.isfinite(tr.q).all()


# --- bad input ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, message", [
    ({}, "argument 'h'"),
    ({"h": 0.03}, "argument 'h'"),
    ({"h": 0.01, "tau": np.zeros((3, 2))}, "'tau'"),
    ({"h": 0.01, "newton_tol": -1.0}, "'newton_tol'"),
    ({"h": 0.01, "max_newton": 0}, "'max_newton'"),
])
def test_bad_arguments_are_refused_by_name(double_pendulum, kwargs, message):
    with pytest.raises(ValueError, match=message):
        simulate(double_pendulum, Q0, QDOT0, (0.0, 0.1), "bdf2", **kwargs)


def test_friction_is_refused_pointing_to_euler():
    s = scene(30)
    with pytest.raises(ValueError, match="method='euler'"):
        simulate(s.model, s.q0, s.qdot0, (0.0, 0.1), "bdf1", h=0.01)


def test_a_newton_failure_names_the_time_step_and_residual(double_pendulum):
    with pytest.raises(SimulationError, match=r"BDF1 Newton solve failed in step 1, t = 0\.1 s: .*residual"):
        simulate(double_pendulum, Q0, [0.0, 30.0], (0.0, 0.2), "bdf1", h=0.1, max_newton=1)
