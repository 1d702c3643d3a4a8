"""The adjoint method (redmax_edu.adjoint) and the objectives (redmax_edu.objectives).

* The objectives' partial derivatives against central differences in the states, torques and
  parameters they read.
* The adjoint gradient against central differences of the whole simulation (rebuilt and rerun
  for every perturbation), for BDF1, BDF2 and SDIRK2, on random trees of the basic joints, a
  tree holding the chart joints (Euler charts, exponential coordinates, splines) and a chain: in
  the initial positions and velocities, the per-step torques and every kind of model parameter.
  Each group is checked along a random direction (the derivative of Psi(x + e d) in e), and on a
  two-link chain entry by entry.
* The back-solve against a dense solve with the assembled Hbar.
* Mutants that must fail: a dropped off-diagonal block, the BDF2 startup blocks replaced by the
  steady-state coefficients, the dM/dp term of dg/dp dropped.
* Refusals: a chart switch, an active-set change, constraints, bad arguments.

Tolerance: Newton solves to 1e-13 (NEWTON_TOL, in rad/s), so a perturbed run differs from the
unperturbed one by round-off, not by the solver's tolerance; the best of central differences at
e = 1e-4, 1e-5, 1e-6 then agrees with the adjoint to 3e-9 relative (measured over these cases);
TOL = 1e-7. A mutant misses by 1e-3 or more.
"""

from functools import cache

import numpy as np
import pytest

from redmax_edu import adjoint as adjoint_module
from redmax_edu import implicit
from redmax_edu.adjoint import adjoint_gradient, assemble_hbar, run_states, simulate_run
from redmax_edu.checks import check_derivative, numerical_derivative, relative_error
from redmax_edu.objectives import ComeToRest, EndEffectorTarget, Regularizer, States, Tracking
from redmax_edu.parameters import ParameterDerivatives, model_parameters, parameter_values, with_parameters

from .random_trees import joint_group_trees, random_tree, with_springs

TOL = 1e-7
STEPS = [1e-3, 1e-4, 1e-5, 1e-6]
NEWTON_TOL = 1e-13
H = 0.01
N_STEPS = 6


def _case(rng, model, q0=None, qdot0=None, n_steps=N_STEPS):
    """A model with springs, a state, random torques and an objective touching every term."""
    model = with_springs(rng, model)
    nq = model.nq
    q0 = 0.3 * rng.standard_normal(nq) if q0 is None else q0
    qdot0 = 0.5 * rng.standard_normal(nq) if qdot0 is None else qdot0
    tau = rng.standard_normal((n_steps, nq))
    last = model.names[-1]
    params = model_parameters(model)
    objective = (EndEffectorTarget(last, [0.1, 0.0, 0.0], rng.standard_normal(3), 2.0)
                 + Tracking(0.3 * rng.standard_normal((n_steps + 1, nq)), 0.5)
                 + ComeToRest(0.7) + ComeToRest(0.2, kind="velocity", steps=[-3, -1])
                 + Regularizer(0.01) + Regularizer(0.05, "params", parameter_values(model, params) * 0.9))
    return model, q0, qdot0, tau, params, objective


def _cases():
    rng = np.random.default_rng(3)
    out = {"tree": _case(rng, random_tree(rng, 4)),
           "chain": _case(rng, random_tree(rng, 4, kinds=("revolute",), branching=False))}
    model, q, qdot = joint_group_trees(rng, 6)[2]
    out["charts"] = _case(rng, model, q, 0.3 * qdot, n_steps=4)
    return out


CASES = _cases()


def _psi(model, q0, qdot0, tau, params, objective, scheme, p=None):
    m = model if p is None else with_parameters(model, params, p)
    run = simulate_run(m, q0, qdot0, H, len(tau), scheme, tau, newton_tol=NEWTON_TOL)
    return objective(run_states(run, params)).value


def _gradient(case, scheme):
    model, q0, qdot0, tau, params, objective = case
    run = simulate_run(model, q0, qdot0, H, len(tau), scheme, tau, newton_tol=NEWTON_TOL)
    return adjoint_gradient(run, objective, params)


@cache
def _directional_numerics(name, scheme):
    """For each group of inputs of case ``name``: a random direction d and the central differences of
    Psi(x + e d) in e at every step of STEPS. Computed once per case and scheme: the correct gradient
    and every mutant are measured against the same differences."""
    model, q0, qdot0, tau, params, objective = CASES[name]
    rng = np.random.default_rng(5)
    p0 = parameter_values(model, params)
    kinds = sorted({p.kind for p in params})
    shapes = {"q0": q0.shape, "qdot0": qdot0.shape, "tau": tau.shape, **{kind: p0.shape for kind in kinds}}
    out = {}
    for group, shape in shapes.items():
        d = rng.standard_normal(shape)
        if group in kinds:
            d = np.where([p.kind == group for p in params], d * np.maximum(p0, 0.1), 0.0)

        def f(e, group=group, d=d):
            e = e[0]
            return _psi(model, q0 + e * d if group == "q0" else q0,
                        qdot0 + e * d if group == "qdot0" else qdot0, tau + e * d if group == "tau" else tau,
                        params, objective, scheme, p0 + e * d if group in kinds else p0)

        out[group] = (d, [numerical_derivative(f, [0.0], h) for h in STEPS])
    return out


def _directional_errors(name, scheme, g):
    """For each group of inputs, the best over STEPS of the relative error of d/de Psi(x + e d)
    against the gradient ``g`` (as :func:`redmax_edu.checks.check_derivative` measures it)."""
    params = CASES[name][4]
    grads = {"q0": g.q0, "qdot0": g.qdot0, "tau": g.tau}
    out = {}
    for group, (d, numerics) in _directional_numerics(name, scheme).items():
        grad = grads.get(group)
        if grad is None:
            grad = np.where([p.kind == group for p in params], g.params, 0.0)
        analytic = np.array([np.sum(grad * d)])
        out[group] = min(relative_error(analytic, numeric) for numeric in numerics)
    return out


#: The chart joints with BDF1 and BDF2 (SDIRK2's blocks are the same, stage by stage).
RUNS = [(name, scheme) for name in CASES for scheme in ("bdf1", "bdf2", "sdirk2")
        if (name, scheme) != ("charts", "sdirk2")]


@pytest.mark.slow  # 2-9 s each, a whole simulation per difference: make test runs them, make check does not
@pytest.mark.parametrize(("name", "scheme"), RUNS)
def test_the_adjoint_gradient_matches_central_differences_of_the_simulation(name, scheme):
    errors = _directional_errors(name, scheme, _gradient(CASES[name], scheme))
    assert {"q0", "qdot0", "tau", "stiffness", "damping", "body_damping", "mass", "length"} <= set(errors)
    assert max(errors.values()) < TOL, errors


@pytest.mark.parametrize("scheme", ["bdf1", "bdf2"])
def test_every_entry_of_the_gradient_of_a_two_link_chain(scheme):
    rng = np.random.default_rng(11)
    case = _case(rng, random_tree(rng, 2, kinds=("revolute",), branching=False), n_steps=5)
    model, q0, qdot0, tau, params, objective = case
    g = _gradient(case, scheme)
    p0 = parameter_values(model, params)
    sizes = [q0.size, qdot0.size, tau.size, p0.size]
    x0 = np.concatenate([q0, qdot0, tau.ravel(), p0])

    def f(x):
        a, b, c = np.cumsum(sizes[:3])
        return _psi(model, x[:a], x[a:b], x[b:c].reshape(tau.shape), params, objective, scheme, x[c:])

    analytic = np.concatenate([g.q0, g.qdot0, g.tau.ravel(), g.params])
    check = check_derivative(f, x0, analytic, steps=STEPS, rtol=TOL)
    assert check.ok, check.error


@pytest.mark.parametrize("scheme", ["bdf1", "bdf2"])
def test_the_back_solve_equals_a_dense_solve_with_hbar(scheme):
    model, q0, qdot0, tau, params, objective = CASES["chain"]
    run = simulate_run(model, q0, qdot0, H, len(tau), scheme, tau)
    observed = np.random.default_rng(2).standard_normal((len(tau) + 1, model.nq))
    g = adjoint_gradient(run, Tracking(observed))
    y = np.zeros_like(run.q)
    full = [0] + [s.stencil.index for s in run.solves if s.stencil.stage != "alpha"]
    y[full] = run_states(run).q - observed
    Hbar = assemble_hbar(run)
    z = np.linalg.solve(Hbar.T, y[1:].ravel())
    assert relative_error(g.z[1:].ravel(), z) < 1e-12
    nq = model.nq
    assert not Hbar[:nq, nq:].any()                                         # block lower triangular
    depth = 2 if scheme == "bdf1" else 4                                    # Eq. (3.93), (3.104)
    for r in range(depth + 1, len(run.solves)):
        assert not Hbar[r * nq:(r + 1) * nq, :(r - depth) * nq].any()
        assert Hbar[r * nq:(r + 1) * nq, (r - depth) * nq:(r - depth + 1) * nq].any()


def test_the_startup_blocks_of_bdf2_reach_back_to_the_alpha_stage():
    """Eq. (3.104): the SDIRK2 stage q^(alpha) (state 1) enters g^(1), g^(2) and g^(3)."""
    model, q0, qdot0, tau, params, objective = CASES["chain"]
    run = simulate_run(model, q0, qdot0, H, len(tau), "bdf2", tau)
    users = [s.stencil.index for s in run.solves if 1 in s.stencil.history]
    assert users == [2, 3, 4]


# --- mutants ---------------------------------------------------------------------------------
def _mutant_fails(name, scheme, monkeypatch, mutate, groups=None):
    correct = _gradient(CASES[name], scheme)
    mutate(monkeypatch)
    wrong = _gradient(CASES[name], scheme)
    monkeypatch.undo()
    errors = _directional_errors(name, scheme, wrong)
    errors = {k: v for k, v in errors.items() if groups is None or k in groups}
    ok = _directional_errors(name, scheme, correct)
    return max(errors.values()) > 1e-3 and max(ok.values()) < TOL


def _drop_oldest_block(monkeypatch):
    def dg_dq(self):
        history = self.stencil.history
        return {j: self.dg_dq_j(j) for j in history if j != min(history) or len(history) == 1}
    monkeypatch.setattr(implicit.StepResidual, "dg_dq", property(dg_dq))


def _steady_bdf2_startup(monkeypatch):
    """The first two BDF2 steps given the steady blocks of Eq. (3.100) at the previous states."""
    steady = {1: (-8 / 3, 8 / 9), 2: (22 / 9, -2 / 9), 3: (-8 / 9, 0.0), 4: (1 / 9, 0.0)}
    real = implicit.StepResidual.dg_dq

    def dg_dq(self):
        s = self.stencil
        if s.scheme != "bdf2" or s.stage != "step" or s.step > 2:
            return real.fget(self)
        return {s.index - k: a * self.M + b * s.h * self.D
                for k, (a, b) in steady.items() if s.index - k >= 0}
    monkeypatch.setattr(implicit.StepResidual, "dg_dq", property(dg_dq))


def _no_dM_dp(monkeypatch):
    real = adjoint_module.parameter_derivatives

    def wrong(*args):
        d = real(*args)
        return ParameterDerivatives(np.zeros_like(d.dM_dp), d.df_dp)
    monkeypatch.setattr(adjoint_module, "parameter_derivatives", wrong)


@pytest.mark.parametrize("scheme", ["bdf1", "bdf2"])
def test_a_dropped_off_diagonal_block_is_caught(scheme, monkeypatch):
    assert _mutant_fails("chain", scheme, monkeypatch, _drop_oldest_block)


def test_bdf2_startup_blocks_with_the_steady_coefficients_are_caught(monkeypatch):
    assert _mutant_fails("chain", "bdf2", monkeypatch, _steady_bdf2_startup)


def test_dropping_dM_dp_from_dg_dp_is_caught(monkeypatch):
    assert _mutant_fails("tree", "bdf2", monkeypatch, _no_dM_dp, groups=["mass", "length"])


# --- the objectives on their own -----------------------------------------------------------------
def test_the_objectives_partials_match_central_differences():
    model, q0, qdot0, tau, params, objective = CASES["tree"]
    run = simulate_run(model, q0, qdot0, H, len(tau), "bdf2", tau)
    s = run_states(run, params)
    t = objective(s)

    def value(**changes):
        fields = dict(model=s.model, t=s.t, q=s.q, qdot=s.qdot, tau=s.tau, params=s.params, p=s.p)
        if "p" in changes:
            fields["model"] = with_parameters(model, params, changes["p"])
        fields.update(changes)
        return objective(States(**fields)).value

    for name, analytic in (("q", t.dq), ("qdot", t.dqdot), ("tau", t.dtau), ("p", t.dp)):
        x0 = getattr(s, name)
        check = check_derivative(lambda x, n=name, shape=x0.shape: value(**{n: x.reshape(shape)}), x0.ravel(),
                                 analytic.ravel(), steps=STEPS, rtol=1e-8)
        assert check.ok, (name, check.error)


def test_a_wrong_end_effector_jacobian_is_caught(monkeypatch):
    model, q0, qdot0, tau, params, _ = CASES["tree"]
    run = simulate_run(model, q0, qdot0, H, len(tau), "bdf1", tau)
    s = run_states(run)
    target = EndEffectorTarget(model.names[-1], [0.1, 0.2, 0.0], [1.0, 0.0, 0.0])
    real = EndEffectorTarget.position
    monkeypatch.setattr(EndEffectorTarget, "position", lambda self, m, q: (real(self, m, q)[0],
                                                                            -real(self, m, q)[1]))
    analytic = target(s).dq[-1]
    def value(x):
        return target(States(model, s.t, np.vstack([s.q[:-1], x]), s.qdot, s.tau)).value

    check = check_derivative(value, s.q[-1], analytic, steps=STEPS)
    assert not check.ok


# --- refusals ------------------------------------------------------------------------------------
def test_a_chart_switch_is_refused_naming_the_time():
    from redmax_edu.scenes import scene

    s = scene(18)                       # a free cube in exponential coordinates, spinning
    w = s.qdot0[3:]
    q0 = np.concatenate([s.q0[:3], (1.5 * np.pi - 0.1) * w / np.linalg.norm(w)])   # the switch is at 1.5 pi
    run = simulate_run(s.model, q0, s.qdot0, 0.02, 20, "bdf1")
    assert run.restarts
    with pytest.raises(ValueError, match=r"switched chart at t = [\d.]+ s .*does not differentiate"):
        adjoint_gradient(run, ComeToRest())


def test_an_active_set_change_is_refused_naming_the_step():
    from redmax_edu.scenes import scene

    s = scene(6)
    run = simulate_run(s.model, s.q0, s.qdot0, 0.01, 100, "bdf2")
    assert run.active_set_changes
    with pytest.raises(ValueError, match=r"in step \d+ \(t = [\d.]+ s\) the active set of contacts"):
        adjoint_gradient(run, ComeToRest())


def test_constraints_and_bad_arguments_are_refused():
    from redmax_edu.constraints import CoordinateCoupling

    model, q0, qdot0, tau, params, objective = CASES["chain"]
    coupled = model.with_constraints([CoordinateCoupling(0, 1)])
    run = simulate_run(coupled, np.zeros(model.nq), np.zeros(model.nq), H, 3, "bdf1")
    with pytest.raises(ValueError, match="has constraints"):
        adjoint_gradient(run, objective)
    run = simulate_run(model, q0, qdot0, H, len(tau), "bdf1", tau)
    with pytest.raises(ValueError, match="argument 'objective' must be an Objective"):
        adjoint_gradient(run, lambda s: 0.0)
    with pytest.raises(ValueError, match="argument 'run' must be the ImplicitRun"):
        adjoint_gradient(None, objective)
    with pytest.raises(ValueError, match="argument 'scheme'"):
        simulate_run(model, q0, qdot0, H, 3, "rk45")
    with pytest.raises(ValueError, match="argument 'observed' has shape"):
        adjoint_gradient(run, Tracking(np.zeros((2, model.nq))))
    with pytest.raises(ValueError, match="argument 'steps' is 9"):
        adjoint_gradient(run, ComeToRest(steps=9))
    with pytest.raises(ValueError, match="no body named 'hand'"):
        adjoint_gradient(run, EndEffectorTarget("hand", [0, 0, 0], [0, 0, 0]))
    with pytest.raises(ValueError, match="argument 'reference' has shape"):
        adjoint_gradient(run, Regularizer(1.0, reference=np.zeros(3)))


# --- optimisation ------------------------------------------------------------------------------
def _pendulum():
    from redmax_edu.scenes import hanging_chain

    return hanging_chain(1, length=0.5, mass=1.0)


def test_optimize_prints_progress_only_when_asked(capsys):
    from redmax_edu.adjoint import optimize

    bob = _pendulum()
    args = (bob, [1.0], [0.0], 0.02, 10, ComeToRest() + Regularizer(1e-3))
    quiet = optimize(*args, maxiter=3)
    assert capsys.readouterr().out == ""
    loud = optimize(*args, maxiter=3, progress=True)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(loud.values) == len(quiet.values)
    assert lines[0].startswith("iteration   0: objective")
    assert np.array_equal(quiet.values, loud.values) and quiet.values[-1] < quiet.values[0]


def test_optimize_refuses_bad_arguments():
    from redmax_edu.adjoint import optimize

    bob = _pendulum()
    args = (bob, [1.0], [0.0], 0.02, 5, ComeToRest())
    for kwargs, message in [({"wrt": ["torques"]}, "'torques' is not one of"),
                            ({"wrt": []}, "at least one"),
                            ({"wrt": ["params"]}, "argument 'params' must list"),
                            ({"wrt": ["tau"], "params": [("mass", "rod0")]}, "argument 'params' must list"),
                            ({"wrt": ["tau"], "bounds": {"q0": (0, 1)}}, "'q0' is not varied")]:
        with pytest.raises(ValueError, match=message):
            optimize(*args, **kwargs)
