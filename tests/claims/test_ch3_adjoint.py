"""Claims of §3.5, the adjoint method and optimisation through a simulation: the pages
book/03_differentiable/05_adjoint (the first claim, its section "The gradient against central
differences", on the same chain, run and objective) and book/03_differentiable/06_optimisation
(the other three, each computed there as here). tests/claims/test_ch3_adjoint_pages.py holds
the other claims of 05_adjoint.

* The adjoint gradient equals central differences of the whole simulation: on a two-link
  chain (0.4 m, 1 kg rods, 50 BDF2 steps of 0.02 s from q = (1, -0.5) rad), in the initial
  state, every step's torques and the damping and mass parameters, to 1e-6 relative (measured
  about 1e-9 at the best of the steps 1e-3 ... 1e-6).
* Identification: from the 100 BDF2 steps (h = 0.01 s) of the same chain with hinge damping
  0.3 N m s/rad on the upper hinge and a lower rod of 1.5 kg, L-BFGS-B started at 0.1 N m s/rad
  and 1 kg recovers both within 1e-4 relative (measured 4e-6) in at most 20 iterations
  (measured 10).
* A pendulum (0.5 m, 1 kg) released at 1 rad comes to rest: per-step torques over 1.5 s (75
  BDF2 steps) chosen by L-BFGS-B cut its kinetic energy over the last ten steps by more than a
  factor 1000 (measured 9000).
* A two-link chain (0.4 m, 1 kg rods, hanging at rest) swings its tip to a target 0.71 m from
  its hinge in 0.8 s (40 BDF2 steps): the per-step torques (bounded by 1.5 N m) found by L-BFGS-B
  in 50 iterations reduce the objective of Eq. (3.82) by more than a factor 1000 (measured 2600;
  the tip ends within 1 mm of the target).
"""

from functools import cache

import numpy as np

from redmax_edu.adjoint import adjoint_gradient, optimize, run_states, simulate_run
from redmax_edu.checks import check_derivative
from redmax_edu.objectives import ComeToRest, EndEffectorTarget, Regularizer, Tracking
from redmax_edu.parameters import parameter_values, with_parameters
from redmax_edu.scenes import hanging_chain

PARAMS = [("damping", "rod0"), ("mass", "rod1")]
TRUE = [0.3, 1.5]
Q0, QDOT0 = np.array([1.0, -0.5]), np.zeros(2)


@cache
def _truth():
    return with_parameters(hanging_chain(2, length=0.4, mass=1.0), PARAMS, TRUE)


def test_the_adjoint_gradient_equals_finite_differences_of_the_simulation():
    model, n, h = _truth(), 50, 0.02
    tau = 0.2 * np.random.default_rng(0).standard_normal((n, 2))
    objective = EndEffectorTarget("rod1", [0, 0, -0.2], [0.5, 0.0, -0.5], 10.0) + Regularizer(1e-3)
    run = simulate_run(model, Q0, QDOT0, h, n, "bdf2", tau, newton_tol=1e-13)
    g = adjoint_gradient(run, objective, PARAMS)
    p0 = parameter_values(model, PARAMS)
    x0 = np.concatenate([Q0, QDOT0, tau.ravel(), p0])

    def psi(x):
        m = with_parameters(model, PARAMS, x[-2:])
        run = simulate_run(m, x[:2], x[2:4], h, n, "bdf2", x[4:-2].reshape(n, 2), newton_tol=1e-13)
        return objective(run_states(run, PARAMS)).value

    # every entry of the initial state and parameters, and a random direction through the 100 torques
    d = np.random.default_rng(1).standard_normal(tau.size)
    for k in [0, 1, 2, 3, 4 + tau.size, 5 + tau.size, None]:
        e = np.zeros_like(x0)
        if k is None:
            e[4:-2] = d
        else:
            e[k] = 1.0
        analytic = np.concatenate([g.q0, g.qdot0, g.tau.ravel(), g.params]) @ e
        check = check_derivative(lambda t, e=e: psi(x0 + t[0] * e), [0.0], [analytic],
                                 steps=[1e-3, 1e-4, 1e-5, 1e-6], rtol=1e-6)
        assert check.ok, (k, check.error)


def test_identification_recovers_a_damping_and_a_mass():
    model, n, h = _truth(), 100, 0.01
    observed = run_states(simulate_run(model, Q0, QDOT0, h, n)).q
    guess = with_parameters(model, PARAMS, [0.1, 1.0])
    result = optimize(guess, Q0, QDOT0, h, n, Tracking(observed), wrt=["params"], params=PARAMS, maxiter=50)
    assert np.all(np.abs(result.x - TRUE) / TRUE < 1e-4), result.x
    assert len(result.values) - 1 <= 20


def test_per_step_torques_bring_a_pendulum_to_rest():
    bob, n, h = hanging_chain(1, length=0.5, mass=1.0), 75, 0.02
    objective = ComeToRest(1.0, steps=range(-10, 0)) + Regularizer(1e-4)
    result = optimize(bob, [1.0], [0.0], h, n, objective, wrt=["tau"], maxiter=100,
                      bounds={"tau": (-1.0, 1.0)})
    free = ComeToRest(1.0, steps=range(-10, 0))(run_states(simulate_run(bob, [1.0], [0.0], h, n))).value
    rest = ComeToRest(1.0, steps=range(-10, 0))(run_states(result.run)).value
    assert free / rest > 1000, (free, rest)


def test_per_step_torques_swing_a_chain_to_a_target():
    chain, n, h = hanging_chain(2, length=0.4, mass=1.0), 40, 0.02
    objective = EndEffectorTarget("rod1", [0, 0, -0.2], [0.5, 0.0, -0.5], 100.0) + Regularizer(1e-4)
    result = optimize(chain, np.zeros(2), np.zeros(2), h, n, objective, wrt=["tau"], maxiter=50,
                      bounds={"tau": (-1.5, 1.5)})
    assert result.values[0] / result.value > 1000, result.values[[0, -1]]
