"""Unit tests of redmax_edu.integrators: simulate() with RK45 and linearly implicit Euler."""

from dataclasses import replace

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from redmax_edu.dynamics import energies, forward_dynamics, linearly_implicit_euler_step
from redmax_edu.integrators import SimulationError, Trajectory, simulate
from redmax_edu.joints import Revolute, SphericalExp
from redmax_edu.kinematics import forward_kinematics
from redmax_edu.model import Body, Model


def _link(name, parent, axis=(0, 1, 0), offset=0.0, joint=None):
    """A 0.3 m x 0.02 m x 0.02 m rod of 0.5 kg hinged at one end (its joint at ``offset`` along x)."""
    T_pj, T_jb = np.eye(4), np.eye(4)
    T_pj[0, 3], T_jb[0, 3] = offset, 0.15
    m, L = 0.5, 0.3
    inertia = [m * 0.02**2 / 6, m * (L**2 + 0.02**2) / 12, m * (L**2 + 0.02**2) / 12]
    return Body(name, parent, joint or Revolute(axis), T_pj, T_jb, m, inertia)


@pytest.fixture(scope="module")
def double_pendulum():
    return Model([_link("upper", -1), _link("lower", 0, axis=(0, 0.6, 0.8), offset=0.3)])


Q0, QDOT0 = np.array([0.4, -0.3]), np.array([0.0, 1.0])


def _final_state_error(a, b):
    return np.abs(np.concatenate([a.q[-1] - b.q[-1], a.qdot[-1] - b.qdot[-1]])).max()


# --- shapes and bookkeeping ---------------------------------------------------------------------

@pytest.mark.parametrize("method, options", [("rk45", {}), ("euler", {"h": 0.01})])
def test_trajectory_has_one_row_per_sample(double_pendulum, method, options):
    tr = simulate(double_pendulum, Q0, QDOT0, (0.0, 0.5), method, **options)
    assert isinstance(tr, Trajectory) and tr.method == method
    assert tr.t.shape == (51,) and np.allclose(tr.t, np.linspace(0, 0.5, 51), atol=1e-12)
    assert tr.q.shape == tr.qdot.shape == (51, 2)
    assert tr.T.shape == tr.V.shape == tr.H.shape == (51,)
    assert tr.E_wi.shape == (51, 2, 4, 4) and len(tr.models) == 51 and len(tr) == 51
    assert tr.model is double_pendulum and tr.final_model is double_pendulum
    np.testing.assert_array_equal(tr.q[0], Q0)
    np.testing.assert_array_equal(tr.E_wi[-1], forward_kinematics(double_pendulum, tr.q[-1]).E_wi)
    np.testing.assert_allclose(tr.H, tr.T + tr.V - tr.V[0], rtol=0, atol=0)
    assert tr.H[0] == pytest.approx(tr.T[0], rel=1e-12)
    assert (tr.h is None) == (method == "rk45") and tr.nsteps > 0 and tr.nfev >= tr.nsteps


@pytest.mark.parametrize("method, options", [("rk45", {}), ("euler", {"h": 0.005})])
def test_recorded_energies_and_poses_are_those_of_the_public_functions(spinning_ball, method, options):
    """T, V and E_wi (evaluated on first access, in each sample's model) equal energies() and
    forward_kinematics() bit for bit, across a reparameterisation."""
    tr = simulate(spinning_ball, np.zeros(3), [12.0, 0.0, 0.3], (0.0, 0.6), method, **options)
    assert len(tr.reparameterized) >= 1
    for k in range(0, len(tr), 7):
        T, V = energies(tr.models[k], tr.q[k], tr.qdot[k])
        assert (tr.T[k], tr.V[k]) == (T, V)
        np.testing.assert_array_equal(tr.E_wi[k], forward_kinematics(tr.models[k], tr.q[k]).E_wi)


def test_rk45_samples_every_sample_dt_and_ends_at_t1(double_pendulum):
    tr = simulate(double_pendulum, Q0, QDOT0, (0.0, 0.25), sample_dt=0.1)
    np.testing.assert_allclose(tr.t, [0.0, 0.1, 0.2, 0.25], atol=1e-15)
    assert simulate(double_pendulum, Q0, QDOT0, (1.0, 1.5), h=0.05).t.shape == (11,)  # h sets the grid


def test_euler_sample_dt_keeps_every_kth_step(double_pendulum):
    every = simulate(double_pendulum, Q0, QDOT0, (0.0, 0.2), "euler", h=0.01)
    fifth = simulate(double_pendulum, Q0, QDOT0, (0.0, 0.2), "euler", h=0.01, sample_dt=0.05)
    np.testing.assert_allclose(fifth.t, every.t[::5], atol=1e-15)
    np.testing.assert_array_equal(fifth.q, every.q[::5])


def test_rk45_equals_solve_ivp_with_the_reference_tolerances(double_pendulum):
    """Driving scipy's RK45 step by step is solve_ivp(method='RK45', t_eval=grid), bit for bit: the
    same steps, and the samples of each step read from its interpolant at once, as solve_ivp does."""
    tr = simulate(double_pendulum, Q0, QDOT0, (0.0, 1.0))

    def rhs(t, y):
        return np.concatenate([y[2:], forward_dynamics(double_pendulum, y[:2], y[2:])])

    sol = solve_ivp(rhs, (0.0, 1.0), np.concatenate([Q0, QDOT0]), method="RK45", t_eval=tr.t,
                    rtol=1e-4, atol=1e-6, max_step=0.1)  # ode45's default MaxStep, a tenth of the span
    np.testing.assert_array_equal(tr.q, sol.y[:2].T)
    np.testing.assert_array_equal(tr.qdot, sol.y[2:].T)
    assert tr.nfev == sol.nfev


def test_progress_bar_does_not_change_the_result(double_pendulum, capsys):
    quiet = simulate(double_pendulum, Q0, QDOT0, (0.0, 0.2), "euler", h=0.01)
    shown = simulate(double_pendulum, Q0, QDOT0, (0.0, 0.2), "euler", h=0.01, progress=True)
    np.testing.assert_array_equal(quiet.q, shown.q)
    assert "simulate (euler)" in capsys.readouterr().err


# --- argument errors --------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, name", [
    (dict(q0=[0.0]), "q0"),
    (dict(qdot0=[[0.0, 0.0]]), "qdot0"),
    (dict(t_span=(1.0, 0.0)), "t_span"),
    (dict(t_span=(0.0, 0.0)), "t_span"),
    (dict(t_span=(0.0, 1.0, 2.0)), "t_span"),
    (dict(method="ode45"), "method"),
    (dict(method="euler"), "h"),
    (dict(method="euler", h=-0.01), "h"),
    (dict(h=0.0), "h"),
    (dict(method="euler", h=0.3), "h"),                    # 1 s is not a whole number of 0.3 s steps
    (dict(method="euler", h=0.01, sample_dt=0.015), "sample_dt"),
    (dict(sample_dt=-1.0), "sample_dt"),
    (dict(rtol=0.0), "rtol"),
    (dict(atol=[1e-6, 1e-6]), "atol"),
    (dict(tau=[1.0, 2.0, 3.0]), "tau"),
    (dict(tau=lambda t: [t]), "tau"),
    (dict(tau="motor"), "tau"),
    (dict(max_steps=0), "max_steps"),
])
def test_bad_arguments_raise_value_errors_naming_them(double_pendulum, kwargs, name):
    args = dict(q0=Q0, qdot0=QDOT0, t_span=(0.0, 1.0))
    args.update(kwargs)
    with pytest.raises(ValueError, match=f"'{name}'"):
        simulate(double_pendulum, **args)


def test_a_model_is_required():
    with pytest.raises(ValueError, match="'model'"):
        simulate({"bodies": []}, [0.0], [0.0], (0.0, 1.0))


@pytest.mark.parametrize("method", ["rk45", "euler"])
def test_a_blow_up_is_reported_with_its_time(method):
    """A hinge (I = 0.015 kg m^2, no gravity) driven by the torque exp(200 t) N m spins at
    qdot = exp(200 t) / (200 I), which passes 1e10 rad/s at t = ln(3e10) / 200 = 0.12 s."""
    hinge = Model([_link("rod", -1, axis=(0, 0, 1))], gravity=np.zeros(3))
    with pytest.raises(SimulationError, match=r"blew up at t = 0\.12\d* s"):
        simulate(hinge, [0.0], [0.0], (0.0, 1.0), method, h=0.0005, tau=lambda t: [np.exp(200.0 * t)])


def test_rk45_gives_up_on_too_many_steps_and_suggests_euler(double_pendulum):
    with pytest.raises(SimulationError, match="method='euler'"):
        simulate(double_pendulum, Q0, QDOT0, (0.0, 1.0), max_steps=3)


def test_simulation_errors_are_value_errors():
    assert issubclass(SimulationError, ValueError)


# --- accuracy --------------------------------------------------------------------------------------

def test_rk45_conserves_energy_to_about_its_tolerance(double_pendulum):
    """No damping: the exact H is constant. At the reference tolerances (rtol 1e-4) the measured
    drift is 1.5e-5 of the largest kinetic energy (bound: rtol itself); at rtol 1e-8 it is 1.2e-9,
    so it must fall by three orders of magnitude: the drift is the solver's, not the model's."""
    loose = simulate(double_pendulum, Q0, QDOT0, (0.0, 2.0))
    tight = simulate(double_pendulum, Q0, QDOT0, (0.0, 2.0), rtol=1e-8, atol=1e-10)
    drift = [np.abs(tr.H - tr.H[0]).max() / tr.T.max() for tr in (loose, tight)]
    assert drift[0] < 1e-4
    assert drift[1] < 1e-3 * drift[0]


def test_recursive_rk45_follows_the_dense_rk45_on_a_chain():
    """Reference type 1 against type 2 on a damped, sprung four-link chain: the two right-hand
    sides agree to round-off (1e-14), so the solver takes the same steps and the trajectories
    agree far inside its tolerances (atol 1e-6); 1e-9 would still catch any wrong term."""
    links = [_link("l0", -1)] + [_link(f"l{k}", k - 1, axis=(0, 0.6, 0.8) if k % 2 else (1, 0, 0), offset=0.3)
                                 for k in range(1, 4)]
    links = [replace(b, stiffness=0.5, damping=0.05, body_damping=0.01) for b in links]
    chain = Model(links)
    q0, qdot0 = np.array([0.4, -0.3, 0.2, 0.5]), np.array([0.0, 1.0, -0.5, 0.3])
    dense = simulate(chain, q0, qdot0, (0.0, 1.0))
    recursive = simulate(chain, q0, qdot0, (0.0, 1.0), "rk45_recursive")
    assert recursive.method == "rk45_recursive" and recursive.nsteps == dense.nsteps
    np.testing.assert_allclose(recursive.q, dense.q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(recursive.qdot, dense.qdot, rtol=0, atol=1e-9)
    assert np.abs(dense.q[-1] - q0).max() > 0.1  # the chain does move


@pytest.mark.parametrize("sid", [4, 7, 8, 9, 15, 30, 34])
def test_recursive_rk45_follows_the_dense_rk45_on_the_constrained_scenes(sid):
    """Reference type 1 on the scenes with loops, couplings, gears and a prescribed joint (scene
    9), which the reference runs with it: the recursive dual solve of §2.12 and the dense KKT
    solve agree to round-off, so over 0.3 s the solver takes the same steps and the states agree
    far inside its tolerance (about 1e-13 measured; 1e-9 still catches a wrong term)."""
    from redmax_edu import scenes

    scene = scenes.scene(sid)
    assert "rk45_recursive" in scene.integrators and scene.model.constraints
    t0 = scene.spans["rk45_recursive"][0]
    dense = scene.simulate("rk45", t_span=(t0, t0 + 0.3))
    recursive = scene.simulate("rk45_recursive", t_span=(t0, t0 + 0.3))
    assert recursive.nsteps == dense.nsteps
    np.testing.assert_allclose(recursive.q, dense.q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(recursive.qdot, dense.qdot, rtol=0, atol=1e-9)
    assert np.abs(dense.q[-1] - dense.q[0]).max() > 1e-3  # the mechanism does move


def test_recursive_rk45_refuses_deformable_bodies_by_name():
    from .test_deformable import deformable_model

    model = deformable_model(np.random.default_rng(0))
    with pytest.raises(ValueError, match="'method'.*deformable"):
        simulate(model, model.coordinates(), np.zeros(model.nq), (0.0, 0.1), "rk45_recursive")


def test_linearly_implicit_euler_is_first_order(double_pendulum):
    """Global error at t = 0.5 s against a tight RK45 solution halves when h halves (ratio -> 2)."""
    ref = simulate(double_pendulum, Q0, QDOT0, (0.0, 0.5), rtol=1e-11, atol=1e-12)
    errors = [_final_state_error(simulate(double_pendulum, Q0, QDOT0, (0.0, 0.5), "euler", h=h), ref)
              for h in (0.01, 0.005, 0.0025)]
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    # first order: the ratio tends to 2; 1.7-2.3 leaves room for the O(h^2) term at these steps
    # and would reject a second-order (ratio 4) or non-convergent (ratio 1) scheme
    assert np.all((ratios > 1.7) & (ratios < 2.3)), ratios


def test_euler_evaluates_tau_at_the_end_of_each_step(double_pendulum):
    calls = []

    def tau(t):
        calls.append(t)
        return [0.1 * np.sin(3 * t), 0.05]

    tr = simulate(double_pendulum, Q0, QDOT0, (0.0, 0.1), "euler", h=0.02, tau=tau)
    np.testing.assert_allclose(calls[1:], [0.02, 0.04, 0.06, 0.08, 0.1], atol=1e-15)  # calls[0]: the check
    q, qdot = Q0, QDOT0
    for t in (0.02, 0.04, 0.06, 0.08, 0.1):
        q, qdot = linearly_implicit_euler_step(double_pendulum, q, qdot, 0.02, tau(t))
    np.testing.assert_array_equal(tr.q[-1], q)
    # torques evaluated at the START would give a different motion: the test can tell them apart
    q_start, qdot_start = Q0, QDOT0
    for t in (0.0, 0.02, 0.04, 0.06, 0.08):
        q_start, qdot_start = linearly_implicit_euler_step(double_pendulum, q_start, qdot_start, 0.02, tau(t))
    assert np.abs(q_start - q).max() > 1e-8


def test_constant_and_callable_tau_agree(double_pendulum):
    a = simulate(double_pendulum, Q0, QDOT0, (0.0, 0.3), tau=[0.02, -0.01])
    b = simulate(double_pendulum, Q0, QDOT0, (0.0, 0.3), tau=lambda t: np.array([0.02, -0.01]))
    np.testing.assert_array_equal(a.q, b.q)
    assert np.abs(a.q - simulate(double_pendulum, Q0, QDOT0, (0.0, 0.3)).q).max() > 1e-6


# --- reparameterisation ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def spinning_ball():
    """A rod on a ball joint (exponential coordinates) spinning at 12 rad/s about its own axis,
    without gravity: |r| passes the reparameterisation threshold (about 1.5 pi) within 0.5 s."""
    return Model([_link("rod", -1, joint=SphericalExp())], gravity=np.zeros(3))


@pytest.mark.parametrize("method", ["rk45", "euler"])
def test_exponential_coordinates_are_reparameterised_and_the_motion_stays_the_same(spinning_ball, method):
    q0, qdot0 = np.zeros(3), np.array([12.0, 0.0, 0.0])
    options = {"h": 0.005} if method == "euler" else {"rtol": 1e-9, "atol": 1e-11}
    on = simulate(spinning_ball, q0, qdot0, (0.0, 1.0), method, **options)
    off = simulate(spinning_ball, q0, qdot0, (0.0, 1.0), method, reparameterize=False, **options)
    assert len(on.reparameterized) >= 1 and len(off.reparameterized) == 0
    # kept short (RK45 samples inside a step of at most 0.1 s are in the step's old coordinates) ...
    longest = 1.5 * np.pi + (0.06 if method == "euler" else 1.2)
    assert np.linalg.norm(on.q, axis=1).max() < longest
    assert np.linalg.norm(off.q, axis=1).max() > 2.0 * np.pi         # ... and would not be otherwise
    # the same rotation either way (Euler: both coordinate choices follow the same O(h) path only
    # approximately, so compare the spin angle, which Euler keeps exactly for this symmetric motion)
    tol = 1e-6 if method == "rk45" else 1e-9
    np.testing.assert_allclose(on.E_wi[:, 0, :3, :3], off.E_wi[:, 0, :3, :3], atol=tol)


def test_observed_order_fits_the_last_runs_and_refuses_bad_sweeps():
    from redmax_edu.integrators import observed_order, reference_run
    from redmax_edu.scenes import hanging_chain

    rods, q0, v0 = hanging_chain(2, length=1.0), np.array([0.5, -0.3]), np.zeros(2)
    ref = reference_run(rods, q0, v0, 0.2)
    study = observed_order(rods, q0, v0, 0.2, "bdf1", [0.004, 0.002, 0.001], reference=ref, fit=2)
    h, e = study.steps, study.errors
    assert study.fitted == 2 and len(e) == 3 and np.all(np.diff(e) < 0)
    assert study.order == pytest.approx(np.log(e[-1] / e[-2]) / np.log(h[-1] / h[-2]), rel=1e-12)
    assert abs(study.order - 1.0) < 0.15
    for kwargs, name in [({"method": "rk45"}, "method"), ({"steps": [0.01]}, "steps"),
                         ({"steps": [0.005, 0.01]}, "steps"), ({"steps": [0.01, -0.005]}, "steps"),
                         ({"fit": 4}, "fit"), ({"fit": 1}, "fit"), ({"reference": rods}, "reference")]:
        args = {"method": "bdf1", "steps": [0.01, 0.005, 0.0025], "reference": ref, **kwargs}
        with pytest.raises(ValueError, match=f"'{name}'"):
            observed_order(rods, q0, v0, 0.2, **args)
