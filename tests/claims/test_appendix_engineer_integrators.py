"""Claims of book/appendix/engineer_integrators (ArtiSynth notes §0.9-0.10): the four integrators on a stiff
pinned chain (energy, stability, observed order) and constraints with box friction."""

import numpy as np
import pytest

from redmax_edu.deformable import DeformableSpring
from redmax_edu.particles import METHODS, ParticleChain, chain_step, simulate_chain

K_NODES = 6
NODES = np.column_stack([np.linspace(0.0, 0.5, K_NODES), np.zeros(K_NODES), np.zeros(K_NODES)])
SPRING = DeformableSpring(NODES, stiffness=50.0, mass=0.6)
CHAIN = ParticleChain(SPRING, pin=[0.0, 0.0, 0.0])
REST = np.zeros((K_NODES, 3))


@pytest.fixture(scope="module")
def runs():
    """The page's grid: 2 s from the straight horizontal chain, diverged runs stopped."""
    return {(m, h): simulate_chain(CHAIN, NODES, REST, h, int(round(2.0 / h)), m, stop_on_divergence=True)
            for m in METHODS for h in (0.01, 0.005, 0.002)}


def test_trapezoidal_step_is_the_two_sided_form_and_the_printed_f_hat_is_not(rng):
    """'trapezoidal step = the two-sided form, to 1e-12'; 'the printed f-hat differs by more than 1e-3'."""
    free = ParticleChain(SPRING)
    for _ in range(5):
        x, v, h = NODES + 0.01 * rng.standard_normal((K_NODES, 3)), rng.standard_normal((K_NODES, 3)), 0.002
        M = np.diag(free.mass)
        f, K, D = free.forces(x, v)
        A = M - h / 2 * D - h**2 / 4 * K
        two_sided = np.linalg.solve(A, (M - h / 2 * D + h**2 / 4 * K) @ v.ravel() + h * f)
        printed = np.linalg.solve(A, M @ v.ravel() + h * (f - D @ v.ravel() / 2 + h**2 / 4 * K @ v.ravel()))
        step = chain_step(free, x, v, h, "trapezoidal")[1].ravel()
        assert np.abs(step - two_sided).max() < 1e-12
        assert np.abs(printed - two_sided).max() > 1e-3


def test_energy_behaviour_at_2_ms(runs):
    """'implicit Euler loses more than 0.4 J', 'trapezoidal loses less than 0.03 J', 'symplectic Euler
    stays within 0.1 J', 'Bridson-Marino stays within 0.01 J' (over 2 s)."""
    drift = {m: runs[m, 0.002].energy - runs[m, 0.002].energy[0] for m in METHODS}
    assert len(runs["symplectic", 0.002].t) == 1001
    assert drift["implicit"][-1] < -0.4
    assert abs(drift["trapezoidal"][-1]) < 0.03
    assert np.abs(drift["symplectic"]).max() < 0.1
    assert np.abs(drift["bridson_marino"]).max() < 0.01


def test_stability_limit_near_4_5_ms(runs):
    """'stable only for h omega < 2, about 4.5 ms': the explicit-spring methods diverge at 5 and 10 ms,
    the implicit ones finish; omega ~ 2 sqrt(k/m) with k = 5000 N/m and m = 0.1 kg."""
    assert abs(2 / (2 * np.sqrt(5000 / 0.1)) - 0.0045) < 1e-4
    for h in (0.005, 0.01):
        full = round(2.0 / h) + 1
        assert len(runs["symplectic", h].t) < full and len(runs["bridson_marino", h].t) < full
        assert len(runs["implicit", h].t) == full and len(runs["trapezoidal", h].t) == full


def test_trapezoidal_loses_less_than_implicit_at_every_step(runs):
    for h in (0.01, 0.005, 0.002):
        lost = {m: abs(runs[m, h].energy[-1] - runs[m, h].energy[0]) for m in ("implicit", "trapezoidal")}
        assert lost["trapezoidal"] < lost["implicit"]


def test_observed_orders_1_1_2_2():
    T = 0.25
    reference = simulate_chain(CHAIN, NODES, REST, T / 8000, 8000, "trapezoidal").x[-1]
    expected = {"symplectic": 1, "implicit": 1, "trapezoidal": 2, "bridson_marino": 2}
    for m in METHODS:
        errors = np.array([np.abs(simulate_chain(CHAIN, NODES, REST, T / n, n, m).x[-1] - reference).max()
                           for n in (250, 500, 1000)])
        assert np.all(np.abs(np.log2(errors[:-1] / errors[1:]) - expected[m]) < 0.1), m


def test_pin_floor_and_box_friction(runs):
    """'node 0 stays on the pin in every run, to 1e-12 m'; the thrown chain slides on at 1 m/s without
    friction and stops with mu = 0.5; energy lost is m g (5 cm) (+ 0.3 J); no node below the floor
    except the trapezoid's dip of less than 1 mm."""
    assert max(np.abs(r.x[:, 0]).max() for r in runs.values()) < 1e-12
    lifted, thrown = NODES + [0.0, 0.0, 0.05], np.tile([1.0, 0.0, 0.0], (K_NODES, 1))
    drop = 0.6 * 9.81 * 0.05
    for mu in (0.0, 0.5):
        floor = ParticleChain(SPRING, floor=0.0, mu=mu)
        for m in METHODS:
            run = simulate_chain(floor, lifted, thrown, 0.002, 300, m)
            speed, lost = run.v[-1, :, 0].mean(), run.energy[0] - run.energy[-1]
            assert abs(speed - (1.0 if mu == 0 else 0.0)) < 1e-6
            assert abs(lost - drop - (0.0 if mu == 0 else 0.3)) < 1e-6
            lowest = run.x[:, :, 2].min()
            assert (-1e-3 < lowest < 0) if m == "trapezoidal" else lowest > -1e-12
