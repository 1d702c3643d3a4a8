"""Physical laws the dynamics and the integrators must obey (issue 23, §5).

Nothing here compares one copy of a force formula with another. Each test measures the
library against a law written with quantities the code under test does not produce:

* **Dissipation.** A viscous damper (body damping ``-d phi``, a :class:`BodyDamping` force with
  its own linear coefficient, a joint damper ``-D qdot``) is the velocity gradient of Rayleigh's
  dissipation function ``R(q, qdot) = 1/2 sum_i phi_i^T C_i phi_i + 1/2 sum_j D_j qdot_j^2``,
  computed here from the body twists of one forward sweep and the coefficients the test chose.
  Without other non-conservative forces, the energy changes at the rate ``dE/dt = -2 R``
  (checked with the accelerations of the dense, the recursive and the derivative code); the
  damping part of ``f``, ``K = df/dq`` and ``D = df/dqdot`` of Eq. (3.58) is ``-dR/dqdot``,
  ``-d^2R/dq dqdot`` and ``-d^2R/dqdot^2``; the damping block of the linearly implicit Euler
  matrix (Eq. 2.84-2.86) is ``h d^2R/dqdot^2`` and drops out of its right-hand side (Eq. 2.83);
  and a run loses the energy the dampers dissipate, ``int 2 R dt``, up to an error of the
  order of its scheme.
* **Restarts.** A chart switch restarts the integrators inside a run (``Model.reparameterize``,
  §2.4.5): a tumbling, non-symmetric free body in Euler angles switches chart several times, and
  the run must keep the caller's settings through every switch: RK45's ``rtol``, ``atol`` and
  ``max_step`` (checked against the body's rotation integrated on its own, in rotation matrices,
  and against its conserved energy and angular momentum), the implicit schemes' ``newton_tol``
  and ``max_newton`` (checked on runs whose every solve follows a restart).

Models and runs are built once per module (the fixtures); states are drawn from seeded generators.
"""

from dataclasses import dataclass, replace

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from redmax_edu.derivatives import force_derivatives, forward_dynamics_derivatives
from redmax_edu.dynamics import assemble_unchecked, energies, euler_system, forward_dynamics
from redmax_edu.implicit import step_residual
from redmax_edu.integrators import simulate
from redmax_edu.joints import Free3DEuler, Prismatic, Revolute, SphericalEuler, SphericalExp
from redmax_edu.kinematics import forward_kinematics
from redmax_edu.lie import random_transform
from redmax_edu.maximal.forces import BodyDamping
from redmax_edu.model import Body, Model
from redmax_edu.recursive import recursive_forward_dynamics
from redmax_edu.simulation import SimulationError

from .random_trees import random_inertia, random_tree

# --- dissipation: the models and Rayleigh's function ------------------------------------------


@dataclass(frozen=True)
class Damped:
    """A model whose only non-conservative forces are viscous dampers, and what the test chose.

    ``C`` (n, 6) weighs each body's twist (body damping and BodyDamping forces), ``D`` (nq,) the
    joint dampers; ``undamped`` is the same model without any of them.
    """

    name: str
    model: Model
    undamped: Model
    C: np.ndarray
    D: np.ndarray

    def twist_map(self, q):
        """The body twists per unit joint velocity, column k = ``phi(q, e_k)`` (6n, nq) of one forward
        sweep each: the twists are linear in qdot."""
        eye = np.eye(self.model.nq)
        return np.column_stack([forward_kinematics(self.undamped, q, e).phi.ravel() for e in eye])

    def rayleigh(self, q, qdot):
        """``R = 1/2 sum_i phi_i^T C_i phi_i + 1/2 sum_j D_j qdot_j^2`` from the twists of one sweep."""
        phi = forward_kinematics(self.undamped, q, qdot).phi
        return 0.5 * float(np.sum(self.C * phi**2) + self.D @ qdot**2)

    def hessian(self, q):
        """``d^2R/dqdot^2 = A^T C A + diag(D)`` (nq, nq), ``A`` the twist map at q."""
        A = self.twist_map(q)
        return A.T @ (self.C.reshape(-1, 1) * A) + np.diag(self.D)

    def gradient(self, q, qdot):
        """``dR/dqdot`` (nq,): R is quadratic in qdot."""
        return self.hessian(q) @ qdot

    def states(self, rng, count):
        """``count`` random states away from the charts' singularities (Euler angles below 0.7 rad)."""
        nq = self.model.nq
        return [(rng.uniform(-0.7, 0.7, nq), rng.uniform(-1.5, 1.5, nq)) for _ in range(count)]


def _chart_tree(rng, gravity):
    """A free body in Euler angles carrying a ball joint in Euler angles, one in exponential
    coordinates and a prismatic and a revolute joint: J depends on every kind of coordinate."""
    joints = [Free3DEuler("ZYX"), SphericalEuler("YXZ"), SphericalExp(), Prismatic(rng.standard_normal(3)),
              Revolute(rng.standard_normal(3))]
    parents = [-1, 0, 1, 0, 3]
    bodies = []
    for k, (joint, parent) in enumerate(zip(joints, parents, strict=True)):
        mass, inertia = random_inertia(rng)
        bodies.append(Body(f"b{k}", parent, joint, random_transform(rng, 0.4), random_transform(rng, 0.4),
                           mass, inertia))
    return Model(bodies, gravity=gravity)


def _damped(name, base, rng, kind, springs=True):
    """``base`` with joint springs (conservative, random rest angles) and one kind of damper:
    ``"body"`` (body damping), ``"force"`` (BodyDamping forces, angular and linear apart),
    ``"joint"`` (joint dampers) or ``"all"``."""
    n, nq = base.n, base.nq
    bodies = [replace(b, stiffness=rng.uniform(1, 5, b.joint.ndof) if springs else 0.0,
                      q_rest=rng.uniform(-0.3, 0.3, b.joint.ndof)) for b in base.bodies]
    undamped = Model(bodies, base.gravity)
    C, D, forces = np.zeros((n, 6)), np.zeros(nq), []
    if kind in ("body", "all"):
        d = rng.uniform(0.2, 1.0, n)
        bodies = [replace(b, body_damping=float(di)) for b, di in zip(bodies, d, strict=True)]
        C += d[:, None]
    if kind in ("force", "all"):
        for i in range(0, n, 2):
            angular, linear = rng.uniform(0.2, 1.0, 2)
            forces.append(BodyDamping(i, angular, linear=linear))
            C[i] += np.repeat([angular, linear], 3)
    if kind in ("joint", "all"):
        D = rng.uniform(0.2, 1.0, nq)
        bodies = [replace(b, damping=D[s]) for b, s in zip(bodies, base.dofs, strict=True)]
    return Damped(name, Model(bodies, base.gravity, forces=forces), undamped, C, D)


GRAVITY = [0.0, 0.0, -9.81]
KINDS = ("body", "force", "joint")


@pytest.fixture(scope="module")
def damped_models():
    """Each kind of damper alone on a random tree of the basic joints and on the chart tree,
    with gravity and joint springs (conservative, part of the energy)."""
    rng = np.random.default_rng(2023)
    out = {}
    for kind in KINDS:
        out[f"tree-{kind}"] = _damped(f"tree-{kind}", random_tree(rng, 5, gravity=GRAVITY), rng, kind)
        out[f"charts-{kind}"] = _damped(f"charts-{kind}", _chart_tree(rng, GRAVITY), rng, kind)
    return out


CASES = [f"{tree}-{kind}" for kind in KINDS for tree in ("tree", "charts")]


def energy(model, q, qdot):
    T, V = energies(model, q, qdot)
    return T + V


def energy_rate(model, q, qdot, qddot, eps=1e-5):
    """``dE/dt`` along the motion through ``(q, qdot)`` with accelerations ``qddot``, by central
    differences of the energy along ``(q + s qdot, qdot + s qddot)`` (error O(eps^2))."""
    up = energy(model, q + eps * qdot, qdot + eps * qddot)
    down = energy(model, q - eps * qdot, qdot - eps * qddot)
    return (up - down) / (2 * eps)


ACCELERATIONS = {
    "dense": lambda model, q, qdot: forward_dynamics(model, q, qdot),
    "recursive": lambda model, q, qdot: recursive_forward_dynamics(model, q, qdot),
    "derivatives": lambda model, q, qdot: forward_dynamics_derivatives(model, q, qdot).qddot,
}


@pytest.mark.parametrize("source", ACCELERATIONS)
@pytest.mark.parametrize("case", CASES)
def test_dampers_remove_energy_at_twice_the_rate_of_rayleighs_function(damped_models, case, source):
    """dE/dt = -2 R at random states, with the accelerations of the dense solve (dynamics), of
    Algorithm 9 (recursive) and of the total force of Eq. (3.58) (derivatives). Gravity and the
    joint springs are in E; a damper of the wrong sign, a dropped one or one counted twice moves
    dE/dt by 2 R or more (R is of order 1 here, the central differences good to 1e-8)."""
    damped = damped_models[case]
    rng = np.random.default_rng(7)
    for q, qdot in damped.states(rng, 3):
        R = damped.rayleigh(q, qdot)
        rate = energy_rate(damped.model, q, qdot, ACCELERATIONS[source](damped.model, q, qdot))
        assert R > 0.05
        assert abs(rate + 2 * R) <= 1e-7 * (1.0 + 2 * R), (case, source, rate, -2 * R)


@pytest.mark.parametrize("case", CASES)
def test_the_damping_parts_of_f_K_and_D_are_derivatives_of_rayleighs_function(damped_models, case):
    """Eq. (3.58) with and without the dampers: the difference of the forces is -dR/dqdot (and its
    power qdot . df = -2 R), of D = df/dqdot is -d^2R/dqdot^2 (symmetric, negative semi-definite),
    of K = df/dq is -d^2R/dq dqdot, taken by central differences of the exact dR/dqdot in q
    (step 1e-5: error about 1e-9). A damping term of D or K dropped, of the wrong sign, or left
    out of the change of J with q (the J^T D_m (dJ/dq (x) qdot) and dJ^T/dq f_m of Eq. 3.58) fails."""
    damped = damped_models[case]
    rng, eps = np.random.default_rng(11), 1e-5
    for q, qdot in damped.states(rng, 2):
        with_, without = force_derivatives(damped.model, q, qdot), force_derivatives(damped.undamped, q, qdot)
        df, dK, dD = with_.f - without.f, with_.K - without.K, with_.D - without.D
        R, grad = damped.rayleigh(q, qdot), damped.gradient(q, qdot)
        assert qdot @ df == pytest.approx(-2 * R, rel=1e-10)
        np.testing.assert_allclose(df, -grad, atol=1e-10 * (1 + np.abs(grad).max()))
        hess = damped.hessian(q)
        np.testing.assert_allclose(dD, -hess, atol=1e-10 * (1 + np.abs(hess).max()))
        mixed = np.column_stack([(damped.gradient(q + eps * e, qdot) - damped.gradient(q - eps * e, qdot))
                                 / (2 * eps) for e in np.eye(len(q))])
        np.testing.assert_allclose(dK, -mixed, atol=1e-7 * (1 + np.abs(mixed).max()))


def euler_matrix(model, q, qdot, h):
    """``(A, b)`` of the linearly implicit Euler step from (q, qdot), Eq. (2.86)."""
    return euler_system(model, assemble_unchecked(model, q, qdot, derivatives=True), h, None)


@pytest.mark.parametrize("case", CASES)
def test_the_damping_block_of_the_linearly_implicit_euler_matrix_is_h_times_rayleighs_hessian(damped_models,
                                                                                                 case):
    """Eq. (2.84)-(2.86) with and without the dampers: A = M_r - h df/dqdot - h^2 df/dq gains
    exactly h d^2R/dqdot^2 (the damper is taken at the new velocity, Eq. 2.83), and the right-hand
    side b = M_r qdot0 + h (f_r - df/dqdot qdot0) does not change: the damper drops out of it."""
    damped = damped_models[case]
    rng, h = np.random.default_rng(13), 0.01
    for q, qdot in damped.states(rng, 2):
        A1, b1 = euler_matrix(damped.model, q, qdot, h)
        A0, b0 = euler_matrix(damped.undamped, q, qdot, h)
        hess = damped.hessian(q)
        np.testing.assert_allclose(A1 - A0, h * hess, atol=1e-12 * (1 + np.abs(A0).max()))
        np.testing.assert_allclose(b1, b0, atol=1e-12 * (1 + np.abs(b0).max()))


# --- dissipation over a run -------------------------------------------------------------------


@pytest.fixture(scope="module")
def dissipating():
    """Every kind of damper at once on a 3-body tree without gravity or springs: whatever the
    energy does besides what the dampers dissipate is the integrator's error."""
    rng = np.random.default_rng(5)
    damped = _damped("all", random_tree(rng, 3, gravity=[0.0, 0.0, 0.0]), rng, "all", springs=False)
    q0, qdot0 = rng.uniform(-0.7, 0.7, damped.model.nq), rng.uniform(-2, 2, damped.model.nq)
    return damped, q0, qdot0


def loss_mismatch(damped, tr):
    """``E(t1) - E(t0) + int 2 R dt`` (trapezoid over the samples) and the dissipated ``int 2 R dt``."""
    power = np.array([2 * damped.rayleigh(q, v) for q, v in zip(tr.q, tr.qdot, strict=True)])
    dissipated = float(np.sum(0.5 * (power[1:] + power[:-1]) * np.diff(tr.t)))
    E = [energy(damped.model, tr.q[k], tr.qdot[k]) for k in (0, -1)]
    return E[1] - E[0] + dissipated, dissipated


#: Each fixed-step family with the order of its energy error on a run, and the copy of the damping
#: terms it integrates: Euler the damping block of dynamics (Eq. 2.84-2.86), the implicit schemes
#: the total force of derivatives (Eq. 3.58) in their residual.
ORDERS = {"euler": 1, "bdf1": 1, "sdirk2": 2, "bdf2": 2}


@pytest.mark.parametrize("method", ORDERS)
def test_a_run_loses_the_energy_its_dampers_dissipate_to_the_order_of_its_scheme(dissipating, method):
    """Over 0.2 s the energy falls by int 2 R dt; the mismatch shrinks like h^p from h = 10 ms to
    5 ms (p the scheme's order: the observed ratio within a factor 1.5 of 2^p) and stays below
    5 % of the dissipated energy (measured at most 0.8 %). A damper of the wrong sign or dropped in
    the forces makes the mismatch as large as the dissipated energy itself, at every step size. (A
    wrong damping block of the Euler matrix changes the loss by O(h^2) per step only, like any
    consistent linearisation: the block's own test and the strong-damping test catch it.)"""
    damped, q0, qdot0 = dissipating
    mismatch = {}
    for h in (0.01, 0.005):
        tr = simulate(damped.model, q0, qdot0, (0.0, 0.2), method, h=h)
        mismatch[h], dissipated = loss_mismatch(damped, tr)
        assert dissipated > 0.5
        assert abs(mismatch[h]) < 0.05 * dissipated, (method, h, mismatch[h], dissipated)
    ratio = mismatch[0.01] / mismatch[0.005]
    assert 2 ** ORDERS[method] / 1.5 < ratio < 2 ** ORDERS[method] * 1.5, (method, ratio)


def test_strong_damping_at_a_large_step_drains_the_energy_without_overshoot(dissipating):
    """Linearly implicit Euler takes the dampers at the new velocity (Eq. 2.83), so a damping time
    far below the step (h d / m about 10) still drains the energy monotonically; taken at the old
    velocity (a damping block dropped from the matrix) the same step overshoots and blows up."""
    damped, q0, qdot0 = dissipating
    base = damped.model
    bodies = [replace(b, body_damping=50.0 * b.mass) for b in base.bodies]
    strong = Model(bodies, base.gravity, forces=base.forces)
    tr = simulate(strong, q0, qdot0, (0.0, 2.0), "euler", h=0.2)
    E = np.array([energy(strong, q, v) for q, v in zip(tr.q, tr.qdot, strict=True)])
    assert np.all(np.diff(E) <= 1e-12 * E[0])
    assert E[-1] < 1e-6 * E[0]


# --- restarts at chart switches -----------------------------------------------------------------

#: A box of principal moments 1, 2, 3 kg m^2 spinning mainly about its intermediate axis: it
#: tumbles (the axis flips over every few seconds), so its Euler angles reach gimbal lock again and
#: again and the integrators switch chart.
INERTIA = np.diag([1.0, 2.0, 3.0])
OMEGA0 = np.array([1.0, 4.0, 0.2])


def tumbling_body(chart="XYZ"):
    return Model([Body("box", -1, SphericalEuler(chart), np.eye(4), np.eye(4), 1.0, INERTIA)],
                 gravity=[0.0, 0.0, 0.0])


def tumbling_start(model, q0, twist=OMEGA0):
    """``qdot0`` of a one-body model for the body's angular velocity (3,) or twist (6,) at ``q0``
    (as many as the joint's coordinates): the twist is linear in qdot."""
    k = len(twist)
    A = np.column_stack([forward_kinematics(model, q0, e).phi[0, :k] for e in np.eye(k)])
    return np.linalg.solve(A, twist)


def rotation_reference(R0, t):
    """The box's rotation at the times ``t``, integrated on its own: ``Rdot = R [omega]``,
    ``I omegadot = I omega x omega`` (Euler's equations), by scipy's DOP853 at 1e-13."""
    I_inv = np.linalg.inv(INERTIA)

    def rhs(_, y):
        R, w = y[:9].reshape(3, 3), y[9:]
        W = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
        return np.concatenate([(R @ W).ravel(), I_inv @ np.cross(INERTIA @ w, w)])

    sol = solve_ivp(rhs, (t[0], t[-1]), np.concatenate([R0.ravel(), OMEGA0]), method="DOP853", t_eval=t,
                    rtol=1e-13, atol=1e-13)
    return sol.y[:9].T.reshape(-1, 3, 3)


def world_angular_momentum(tr):
    """``R I omega`` of every sample (N m s), omega from the sample's own model and coordinates."""
    out = []
    for q, qdot, model, E in zip(tr.q, tr.qdot, tr.models, tr.E_wi, strict=True):
        omega = forward_kinematics(model, q, qdot).phi[0, :3]
        out.append(E[0, :3, :3] @ INERTIA @ omega)
    return np.array(out)


SPAN = (0.0, 4.0)
Q0 = np.array([0.3, -0.2, 0.1])


@pytest.fixture(scope="module")
def tight_rk45():
    """RK45 at rtol = 1e-10, atol = 1e-10 over 4 s of tumbling, and the reference rotations."""
    model = tumbling_body()
    tr = simulate(model, Q0, tumbling_start(model, Q0), SPAN, "rk45", rtol=1e-10, atol=1e-10, sample_dt=0.1)
    return tr, rotation_reference(tr.E_wi[0, 0, :3, :3], tr.t)


def test_rk45_keeps_its_tolerances_through_every_chart_switch(tight_rk45):
    """The tumbling box switches chart at least three times; through all of them RK45 at 1e-10
    follows the rotation integrated on its own to 1e-7 (a restart at scipy's default rtol = 1e-3
    is off by more than 1e-3) and keeps the energy and the world angular momentum to 1e-8."""
    tr, R_ref = tight_rk45
    assert len(tr.reparameterized) >= 3
    assert len({m.bodies[0].joint.chart for m in tr.models}) >= 2
    error = np.abs(tr.E_wi[:, 0, :3, :3] - R_ref).max()
    assert error < 1e-7, error
    L = world_angular_momentum(tr)
    assert np.abs(L - L[0]).max() < 1e-8 * np.linalg.norm(L[0])
    assert np.abs(tr.T - tr.T[0]).max() < 1e-8 * tr.T[0]


def test_rk45_keeps_its_largest_step_through_every_chart_switch():
    """max_step = 20 ms at a loose rtol (where RK45 would take steps of about 0.1 s): 4 s need at
    least 200 steps, switches or not (a restart that forgot max_step takes far fewer)."""
    model = tumbling_body()
    tr = simulate(model, Q0, tumbling_start(model, Q0), SPAN, "rk45", rtol=1e-3, max_step=0.02)
    assert len(tr.reparameterized) >= 3
    assert tr.nsteps >= 200


#: Near gimbal lock of the XYZ chart (det S = cos q2 = 0.12 < 0.2): the implicit schemes switch
#: chart before their first solve, so every solve of the run follows a restart.
Q_LOCKED = np.array([0.3, 1.45, 0.1])


@pytest.mark.parametrize("scheme", ["bdf1", "sdirk2", "bdf2"])
def test_implicit_schemes_keep_max_newton_after_a_restart(scheme):
    """max_newton = 1 at newton_tol = 1e-12: one Newton iteration from the predictor cannot reach
    the tolerance, so the run must stop at its first solve, after the restart, naming the limit
    (a restart that fell back to the default 25 iterations would run on)."""
    model = tumbling_body()
    with pytest.raises(SimulationError, match="did not converge in 1 iterations"):
        simulate(model, Q_LOCKED, tumbling_start(model, Q_LOCKED), (0.0, 0.1), scheme, h=0.01,
                 newton_tol=1e-12, max_newton=1)


@pytest.fixture(scope="module")
def loose_newton_runs():
    """SDIRK2 and BDF2 (started by SDIRK2 at every restart) over 1 s of tumbling at h = 10 ms and
    newton_tol = 1e-4 rad/s. (The restart is one piece of code for the three schemes; BDF1's
    numerical damping at this step stops the tumbling before the first switch.)"""
    model = tumbling_body()
    qdot0 = tumbling_start(model, Q0)
    return {s: simulate(model, Q0, qdot0, (0.0, 1.0), s, h=0.01, newton_tol=1e-4) for s in ("sdirk2", "bdf2")}


@pytest.mark.parametrize("scheme", ["sdirk2", "bdf2"])
def test_implicit_schemes_keep_newton_tol_through_every_restart(loose_newton_runs, scheme):
    """The run restarts at least twice; every solve, before and after each restart, stops
    at the first iterate within the caller's 1e-4 (a default 1e-10 would iterate on past it), and
    the residual recomputed at each accepted position by step_residual is within it."""
    tol, tr = 1e-4, loose_newton_runs[scheme]
    run = tr.implicit
    assert len(run.restarts) >= 2
    iterated = 0
    for solve in run.solves:
        assert solve.residuals[-1] <= tol
        if solve.iterations:
            iterated += solve.stencil.index > run.restarts[-1]
            assert solve.residuals[-2] > tol
        r = step_residual(solve.model, solve.stencil, solve.q, run.q, run.anchors[solve.stencil.anchor])
        assert np.abs(r.g).max() / r.scale <= tol * (1 + 1e-9)
    assert iterated >= 10                         # solves after the last restart that needed Newton


def test_a_joint_spring_on_coordinates_that_switch_chart_is_refused():
    """A joint spring -K (q - q_rest) on a ball joint is a potential of the chart's coordinates:
    after a switch the same K and q_rest are another potential, and the tumbling box's energy
    jumped (by 17 J of 149 J in Euler angles, 40 J in exponential coordinates, before this was
    refused). The switch now stops the run with an error naming the body and the way out; a spring
    on the coordinates a switch leaves alone (a free joint's translation) still runs through every
    switch and keeps the energy to 1e-7."""
    omega = 3 * OMEGA0
    for joint in (SphericalEuler("XYZ"), SphericalExp()):
        ball = Model([Body("box", -1, joint, np.eye(4), np.eye(4), 1.0, INERTIA, stiffness=2.0)],
                     gravity=[0.0, 0.0, 0.0])
        with pytest.raises(ValueError, match="body 'box': its .* joint leaves a singular chart.*spring"):
            simulate(ball, Q0, tumbling_start(ball, Q0, omega), (0.0, 4.0), "rk45")
    free = Model([Body("box", -1, Free3DEuler("XYZ"), np.eye(4), np.eye(4), 1.0, INERTIA,
                       stiffness=[2.0, 2.0, 2.0, 0.0, 0.0, 0.0])], gravity=[0.0, 0.0, 0.0])
    q0 = np.r_[0.5, -0.2, 0.1, Q0]
    qdot0 = tumbling_start(free, q0, np.r_[omega, 0.3, 0.0, -0.2])
    tr = simulate(free, q0, qdot0, (0.0, 1.0), "rk45", rtol=1e-10, atol=1e-10, sample_dt=0.05)
    E = tr.T + tr.V
    assert len(tr.reparameterized) >= 2
    assert np.abs(E - E[0]).max() < 1e-7 * E[0]


def test_a_chart_switch_keeps_the_body_damping():
    """The tumbling box with body damping d = 0.05, RK45 at 1e-8 over 2 s: the chart switches three
    times, and the kinetic energy lost is what the damper dissipates, int 2 R dt with
    R = d |phi|^2 / 2 from the twists of each sample's own model, to 1e-5 (measured 6e-7, the
    trapezoid rule on a 10 ms grid). A switch to a model that lost the damper (or reset any field
    of the body) would stop the loss there. (Linearly implicit Euler cannot show this on a free
    body: its explicit gyroscopic term gains more energy than the damper removes at 5 ms.)"""
    d = 0.05
    box = Model([Body("box", -1, SphericalEuler("XYZ"), np.eye(4), np.eye(4), 1.0, INERTIA, body_damping=d)],
                gravity=[0.0, 0.0, 0.0])
    tr = simulate(box, Q0, tumbling_start(box, Q0), (0.0, 2.0), "rk45", rtol=1e-8, atol=1e-8, sample_dt=0.01)
    assert len(tr.reparameterized) >= 3
    power = np.array([d * np.sum(forward_kinematics(m, q, v).phi ** 2)
                      for q, v, m in zip(tr.q, tr.qdot, tr.models, strict=True)])
    dissipated = float(np.sum(0.5 * (power[1:] + power[:-1]) * np.diff(tr.t)))
    lost = tr.T[0] - tr.T[-1]
    assert dissipated > 0.05 * tr.T[0]
    assert abs(lost - dissipated) < 1e-5 * dissipated, (lost, dissipated)
