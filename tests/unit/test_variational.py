"""Unit tests of redmax_edu.variational: quadrature, the dense DEL and their derivatives, refusals, runs."""

from dataclasses import replace

import numpy as np
import pytest

import redmax_edu.variational as va
from redmax_edu.checks import check_derivative
from redmax_edu.derivatives import dynamics_derivatives_unchecked
from redmax_edu.dynamics import energies, mass_matrix
from redmax_edu.integrators import simulate
from redmax_edu.joints import Free3DEuler, Prismatic, Revolute, Translational
from redmax_edu.maximal.forces import Attachment, PointSpring
from redmax_edu.model import Body, Model
from redmax_edu.scenes import hanging_chain

from .random_trees import every_joint_tree, random_tree
from .test_joints import JOINT_NAMES, all_joints
from .test_joints import random_state as random_joint_state

#: The joints of the library that are not products of exponentials in their coordinates.
REFUSED = ("composite_mixed", "composite_with_spline", "free3d_exp", "free3d_exp_rotate_first",
           "spherical_exp", "spline_curve", "spline_surface")
COVERED = [name for name in JOINT_NAMES if name not in REFUSED]
GROUPS = 5
STEPS = np.logspace(-3, -7, 5)
FEW_STEPS = np.logspace(-4, -6, 3)       # the residual's checks: each step costs 2 (s nq) residuals


def covered_trees(rng, groups=GROUPS):
    """Random trees that together hold one body on every covered joint type (every chart), with
    random joint springs, rest positions and dampers, at a random state: a list of (model, q, qdot)."""
    out = []
    for g in range(groups):
        skip = list(REFUSED) + [name for k, name in enumerate(COVERED) if k % groups != g]
        model, q, qdot = every_joint_tree(rng, skip=skip, away_from_singularities=True)
        bodies = [replace(b, stiffness=rng.uniform(0, 5, b.joint.ndof),
                          damping=rng.uniform(0, 1, b.joint.ndof),
                          q_rest=rng.uniform(-0.3, 0.3, b.joint.ndof))
                  for b in model.bodies]
        out.append((Model(bodies, model.gravity), q, qdot))
    return out


@pytest.fixture(scope="module")
def trees():
    return covered_trees(np.random.default_rng(14))


def test_the_groups_cover_every_covered_joint(trees):
    names = sorted(b.name for model, _, _ in trees for b in model.bodies)
    assert names == sorted(COVERED)


# --- quadrature --------------------------------------------------------------------------------

@pytest.mark.parametrize("s", [1, 2, 3, 4])
def test_lobatto_integrates_and_differentiates_polynomials_exactly(s):
    quad = va.lobatto(s)
    assert quad.c[0] == 0.0 and quad.c[-1] == 1.0
    for degree in range(2 * s):                      # Lobatto with s+1 nodes: exact to degree 2s-1
        assert abs(quad.w @ quad.c ** degree - 1.0 / (degree + 1)) < 1e-13
    assert abs(quad.w @ quad.c ** (2 * s) - 1.0 / (2 * s + 1)) > 1e-6
    for degree in range(s + 1):                      # interpolation of degree s is exact
        want = degree * quad.c ** (degree - 1) if degree else np.zeros(s + 1)
        assert np.allclose(quad.B @ quad.c ** degree, want, atol=1e-12)
    assert np.allclose(quad.A, quad.w[:, None] * quad.B)


@pytest.mark.parametrize("bad", [0, 9, 1.5, True, "2"])
def test_lobatto_refuses_a_bad_s(bad):
    with pytest.raises(ValueError, match="argument 's'"):
        va.lobatto(bad)


# --- derivatives against central differences ------------------------------------------------------

def kinetic_gradient(model, v):
    """dT/dq from the library's dM/dq: ``1/2 qdot^T dM/dq_k qdot``."""
    return lambda x: 0.5 * np.einsum("jki,j,k->i", dynamics_derivatives_unchecked(model, x, v).dM_dq, v, v)


def potential_gradient(model):
    return lambda x: va._potential_gradient(va._spatial(model, x, np.zeros(model.nq)))


def gravity_potential(model):
    """The library's potential energy without the joint springs."""
    bare = Model([replace(b, stiffness=0.0) for b in model.bodies], model.gravity)
    return lambda x: np.array([energies(bare, x, np.zeros(model.nq))[1]])


def test_kinetic_gradient_of_the_world_frame_sweep_equals_the_library(trees):
    for model, q, v in trees:
        sp = va._spatial(model, q, v)
        Tq = np.einsum("di,di->d", sp.mu[sp.body], va._ad_apply(sp.u, sp.S))   # mu_b . ad(u_d) Sbar_d
        assert np.allclose(Tq, kinetic_gradient(model, v)(q), rtol=1e-10, atol=1e-10)


def test_kinetic_hessian_matches_central_differences(trees):
    for model, q, v in trees:
        H = va._kinetic_hessian(va._spatial(model, q, v), va._order(model))
        assert np.allclose(H, H.T)
        assert check_derivative(kinetic_gradient(model, v), q, H, steps=STEPS).ok


def test_potential_gradient_and_hessian_match_central_differences(trees):
    for model, q, _ in trees:
        sp = va._spatial(model, q, np.zeros(model.nq))
        assert check_derivative(gravity_potential(model), q, va._potential_gradient(sp)[None], steps=STEPS).ok
        Vqq = va._potential_hessian(sp, model.gravity, va._order(model))
        assert check_derivative(potential_gradient(model), q, Vqq, steps=STEPS).ok


def test_the_derivative_checks_catch_wrong_hessians(trees):
    model, q, v = trees[0]
    sp = va._spatial(model, q, v)
    H = va._kinetic_hessian(sp, va._order(model))
    wrong = H.copy()
    wrong[-1, 0] += 0.1 * abs(H).max()
    assert not check_derivative(kinetic_gradient(model, v), q, wrong, steps=STEPS).ok
    # the mutant: the subtree momentum's own rotation (the ad(Sbar_j)^T mu_b term) left out
    H_wrong = va._kinetic_hessian(replace(sp, mu=0 * sp.mu), va._order(model))
    assert not check_derivative(kinetic_gradient(model, v), q, H_wrong, steps=STEPS).ok
    Vqq = va._potential_hessian(sp, model.gravity, va._order(model))
    assert not check_derivative(potential_gradient(model), q, Vqq - np.diag(np.diag(Vqq)), steps=STEPS).ok


def residual_function(model, q0, p0, h, s, tau):
    return lambda x: va.del_residual(model, q0, p0, x.reshape(s, -1), h, s=s, tau=tau).r.ravel()


@pytest.mark.parametrize("s", [1, 2])
def test_del_jacobian_matches_central_differences_on_every_covered_joint(trees, s):
    rng = np.random.default_rng(s)
    for model, q, v in trees[:1] if s == 2 else trees:
        h = 0.05
        X = q[None] + np.outer(va.lobatto(s).c[1:], h * v) + 1e-3 * rng.standard_normal((s, model.nq))
        p0, tau = rng.standard_normal(model.nq), rng.standard_normal(model.nq)
        res = va.del_residual(model, q, p0, X, h, s=s, tau=tau)
        check = check_derivative(residual_function(model, q, p0, h, s, tau), X.ravel(), res.jacobian,
                                 steps=FEW_STEPS)
        assert check.ok, check.error


def test_the_jacobian_check_catches_a_missing_term(trees, monkeypatch):
    model, q, v = trees[1]
    rng = np.random.default_rng(0)
    h, p0 = 0.05, rng.standard_normal(model.nq)
    X = q[None] + h * v[None]
    point = va._point

    def without_dp_dq(*args):                       # the mutant: dp/dq left out (M treated as constant)
        pt = point(*args)
        return replace(pt, Pq=np.zeros_like(pt.Pq))

    monkeypatch.setattr(va, "_point", without_dp_dq)
    wrong = va.del_residual(model, q, p0, X, h).jacobian
    monkeypatch.undo()
    f = residual_function(model, q, p0, h, 1, None)
    assert check_derivative(f, X.ravel(), va.del_residual(model, q, p0, X, h).jacobian, steps=FEW_STEPS).ok
    assert not check_derivative(f, X.ravel(), wrong, steps=FEW_STEPS).ok


def test_del_of_a_free_slider_are_the_momentum_difference():
    slider = Model([Body("slider", -1, Prismatic([1, 0, 0]), np.eye(4), np.eye(4), 2.0, np.eye(3))],
                   gravity=[0, 0, 0])
    for s in (1, 2, 3):
        quad = va.lobatto(s)
        X = (0.1 * quad.c[1:])[:, None]          # uniform motion at 1 m/s over h = 0.1 s
        res = va.del_residual(slider, [0.0], [2.0], X, 0.1, s=s)
        assert np.abs(res.r).max() < 1e-12 and abs(res.p_next[0] - 2.0) < 1e-12


# --- refusals ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", REFUSED)
def test_a_joint_that_is_not_a_product_of_exponentials_is_refused_by_name(name):
    rng = np.random.default_rng(1)
    joint = all_joints(rng)[name]
    model = Model([Body("arm", -1, Revolute([0, 0, 1]), np.eye(4), np.eye(4), 1.0, np.eye(3)),
                   Body(f"the_{name}", 0, joint, np.eye(4), np.eye(4), 1.0, np.eye(3))])
    q, v = np.r_[0.2, random_joint_state(joint, rng)[0]], np.zeros(model.nq)
    with pytest.raises(ValueError, match=f"body 'the_{name}': the {joint.kind} joint is not a product"):
        simulate(model, q, v, (0.0, 0.1), "vi2", h=0.05)
    with pytest.raises(ValueError, match="spherical_euler"):
        va.check_variational_model(model)


def test_forces_other_than_gravity_springs_dampers_and_tau_are_refused_by_name():
    rng = np.random.default_rng(2)
    model = random_tree(rng, 3, kinds=("revolute",))
    spring = PointSpring(Attachment(0, [0.1, 0, 0]), Attachment(2, [0, 0.1, 0]), stiffness=5.0)
    with pytest.raises(ValueError, match="extra forces \\(PointSpring\\)"):
        va.check_variational_model(model.with_forces([spring]))
    damped = model.with_body(1, body_damping=0.2)
    with pytest.raises(ValueError, match="body 'b1': body damping"):
        simulate(damped, np.zeros(3), np.zeros(3), (0.0, 0.1), "vi4", h=0.05)


def test_constraints_are_refused():
    from redmax_edu.constraints import JointLimit

    limited = hanging_chain(2).with_constraints([JointLimit(1, -0.5, 0.5)])
    with pytest.raises(ValueError, match="has constraints.*bdf2"):
        simulate(limited, np.zeros(2), np.zeros(2), (0.0, 0.02), "vi2", h=0.01)


def test_bad_arguments_are_named():
    model = hanging_chain(2)
    with pytest.raises(ValueError, match="argument 'control'"):
        va.del_residual(model, np.zeros(2), np.zeros(2), np.zeros((1, 3)), 0.01)
    with pytest.raises(ValueError, match="argument 'h'"):
        va.del_residual(model, np.zeros(2), np.zeros(2), np.zeros((1, 2)), -0.01)
    with pytest.raises(ValueError, match="argument 'h'"):
        simulate(model, np.zeros(2), np.zeros(2), (0.0, 0.1), "vi2")
    with pytest.raises(ValueError, match="argument 'residual'"):
        va.newton_direction(np.zeros(2))
    with pytest.raises(ValueError, match="argument 'p'"):
        va.energy(model, np.zeros(2), np.zeros(3))
    with pytest.raises(ValueError, match="single root body whose joint has 6"):
        va.momentum_map(model, np.zeros(2), np.zeros(2))


def test_a_singular_euler_chart_is_reported_by_joint():
    from redmax_edu.joints import SphericalEuler

    inertia = np.diag([1.0, 2.0, 3.0])
    ball = Model([Body("ball", -1, SphericalEuler("XYZ"), np.eye(4), np.eye(4), 1.0, inertia)])
    with pytest.raises(ValueError, match="ball"):
        simulate(ball, [0.0, np.pi / 2, 0.0], np.zeros(3), (0.0, 0.1), "vi2", h=0.05)


# --- runs --------------------------------------------------------------------------------------

def test_a_run_records_momenta_velocities_and_newton_histories():
    model = hanging_chain(3)
    q0, v0 = np.array([0.5, -0.3, 0.2]), np.array([0.1, 0.0, -0.2])
    tr = simulate(model, q0, v0, (0.0, 0.2), "vi4", h=0.02, sample_dt=0.04)
    run = tr.variational
    assert tr.method == "vi4" and run.quadrature.s == 2 and len(run.solves) == 10 and len(tr.t) == 6
    assert np.allclose(run.p[0], mass_matrix(model, q0) @ v0)
    assert np.allclose(tr.qdot[-1], np.linalg.solve(mass_matrix(model, run.q[-1]), run.p[-1]))
    assert np.allclose(tr.q[-1], run.q[-1]) and np.allclose(run.solves[-1].q[-1], run.q[-1])
    assert (run.iterations >= 1).all() and (run.final_residuals <= 1e-10).all()
    assert np.isclose(va.energy(model, run.q[-1], run.p[-1]), tr.T[-1] + tr.V[-1])
    assert tr.nfev == int(sum(run.iterations + 1))


def test_joint_forces_enter_as_the_discrete_forcing():
    """A torque that holds a pendulum's weight keeps it where it is (per-step rows, constant and callable)."""
    T = np.eye(4)
    T[2, 3] = -1.0
    bob = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    hold = 2.0 * 9.81 * np.sin(0.4)
    for tau in ([hold], lambda t: [hold], np.full((5, 1), hold)):
        tr = simulate(bob, [0.4], [0.0], (0.0, 0.05), "vi2", h=0.01, tau=tau)
        assert abs(tr.q[-1, 0] - 0.4) < 1e-12 and abs(tr.qdot[-1, 0]) < 1e-10


def test_joint_damping_dissipates_and_translational_momentum_is_conserved():
    rng = np.random.default_rng(3)
    bodies = [Body("base", -1, Translational(), np.eye(4), np.eye(4), 1.5, np.eye(3))]
    bodies += [replace(b, parent=b.parent + 1 if b.parent >= 0 else 0, damping=3.0)
               for b in random_tree(rng, 3, kinds=("revolute", "prismatic")).bodies]
    model = Model(bodies, gravity=[0, 0, 0])
    q0, v0 = rng.standard_normal(model.nq), rng.standard_normal(model.nq)
    tr = simulate(model, q0, v0, (0.0, 0.5), "vi2", h=0.01)
    p = tr.variational.p
    assert np.abs(p[:, :3] - p[0, :3]).max() < 1e-12 * np.abs(p[0, :3]).max()
    assert tr.T[-1] < 0.95 * tr.T[0]


def test_momentum_map_is_the_world_spatial_momentum():
    rng = np.random.default_rng(4)
    bodies = [Body("box", -1, Free3DEuler("ZYX"), np.eye(4), np.eye(4), 2.0, np.diag([1.0, 2.0, 2.5]))]
    bodies += [replace(b, parent=b.parent + 1 if b.parent >= 0 else 0)
               for b in random_tree(rng, 2, kinds=("revolute",)).bodies]
    model = Model(bodies, gravity=[0, 0, 0])
    q, v = 0.5 * rng.standard_normal(model.nq), rng.standard_normal(model.nq)
    sp = va._spatial(model, q, v)
    assert np.allclose(va.momentum_map(model, q, va.discrete_momentum(model, q, v)), sp.mu[0])


# --- the O(n) residual and Newton direction ------------------------------------------------------

def random_step(rng, model, q, v, s, h=0.05):
    X = q[None] + np.outer(va.lobatto(s).c[1:], h * v) + 1e-3 * rng.standard_normal((s, model.nq))
    return X, rng.standard_normal(model.nq), rng.standard_normal(model.nq)


@pytest.mark.parametrize("s", [1, 2, 3])
def test_recursive_residual_and_direction_equal_the_dense_ones_on_every_covered_joint(trees, s):
    rng = np.random.default_rng(10 + s)
    for model, q, v in trees if s < 3 else trees[:1]:
        X, p0, tau = random_step(rng, model, q, v, s)
        dense = va.del_residual(model, q, p0, X, 0.05, s=s, tau=tau)
        fast = va.del_residual(model, q, p0, X, 0.05, s=s, tau=tau, method="recursive")
        assert fast.jacobian is None and fast.method == "recursive"
        scale = np.abs(dense.r).max()
        assert np.abs(fast.r - dense.r).max() <= 1e-10 * scale
        assert np.abs(fast.p_next - dense.p_next).max() <= 1e-10 * np.abs(dense.p_next).max()
        assert abs(fast.scale - dense.scale) <= 1e-12 * dense.scale
        d_dense, d_fast = va.newton_direction(dense), va.newton_direction(fast)
        assert np.abs(d_fast - d_dense).max() <= 1e-10 * np.abs(d_dense).max()


def test_recursive_direction_solves_the_finite_difference_jacobian(trees):
    """Against the residual itself: J_fd d = -r, with J_fd by central differences of the O(n) residual."""
    rng = np.random.default_rng(21)
    model, q, v = trees[2]
    s, h = 2, 0.05
    X, p0, tau = random_step(rng, model, q, v, s, h)
    res = va.del_residual(model, q, p0, X, h, s=s, tau=tau, method="recursive")

    def f(x):
        return va.del_residual(model, q, p0, x.reshape(s, -1), h, s=s, tau=tau, method="recursive").r.ravel()

    d = va.newton_direction(res).ravel()
    for step in (1e-4, 1e-5, 1e-6):
        fd = (f(X.ravel() + step * d) - f(X.ravel() - step * d)) / (2 * step)      # J d along d
        if np.abs(fd + res.r.ravel()).max() <= 1e-7 * np.abs(res.r).max():
            break
    else:
        pytest.fail("J_fd d differs from -r at every step")


@pytest.mark.parametrize("mutant", ["no gravity variation", "no own inertia", "no subtree momentum"])
def test_the_direction_checks_catch_a_wrong_recursion(trees, mutant):
    rng = np.random.default_rng(31)
    model, q, v = trees[3]
    X, p0, tau = random_step(rng, model, q, v, 2)
    dense = va.del_residual(model, q, p0, X, 0.05, s=2, tau=tau)
    fast = va.del_residual(model, q, p0, X, 0.05, s=2, tau=tau, method="recursive")
    field = {"no gravity variation": "Kg", "no own inertia": "Mb", "no subtree momentum": "mu"}[mutant]
    sweeps = replace(fast.sweeps, **{field: 0 * getattr(fast.sweeps, field)})
    wrong = va.newton_direction(replace(fast, sweeps=sweeps))
    d = va.newton_direction(dense)
    assert np.abs(wrong - d).max() > 1e-6 * np.abs(d).max()


@pytest.mark.parametrize("scheme", ["vi2", "vi4"])
def test_newton_with_the_recursive_direction_follows_the_dense_trajectory(trees, scheme):
    model, q, v = trees[4]
    runs = [simulate(model, q, 0.3 * v, (0.0, 0.04), scheme, h=0.01, del_method=m)
            for m in ("dense", "recursive")]
    a, b = (r.variational for r in runs)
    assert np.array_equal(a.iterations, b.iterations)
    assert np.abs(a.q - b.q).max() <= 1e-10 and np.abs(a.p - b.p).max() <= 1e-10 * np.abs(a.p).max()
    assert np.abs(runs[0].qdot - runs[1].qdot).max() <= 1e-9


def test_a_bad_del_method_is_named():
    model = hanging_chain(2)
    with pytest.raises(ValueError, match="argument 'method'"):
        va.del_residual(model, np.zeros(2), np.zeros(2), np.zeros((1, 2)), 0.01, method="sparse")
    with pytest.raises(ValueError, match="argument 'del_method'"):
        simulate(model, np.zeros(2), np.zeros(2), (0.0, 0.02), "vi2", h=0.01, del_method="sparse")
