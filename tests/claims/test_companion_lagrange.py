"""Claims of the companion page book/04_companions/01_lagrangian_arm (after Liu and Jain's tutorial).

Each test repeats one quantitative sentence or check-cell verdict of the page with library
calls (the notebook is not executed). The arms are the page's own: uniform links along x,
hinged at their start, each hinge at the previous link's tip.
"""

import numpy as np
import pytest
import sympy as sp

from redmax_edu.dynamics import (
    forward_dynamics,
    inverse_dynamics,
    mass_matrix,
    potential_energy,
    reduced_forces,
)
from redmax_edu.joints import Revolute
from redmax_edu.kinematics import body_poses
from redmax_edu.lagrange import chain_lagrangian, model_links, planar_two_link
from redmax_edu.model import Body, Model
from redmax_edu.recursive import recursive_inverse_dynamics


def arm(axes, lengths, masses, gravity=(0.0, -9.81, 0.0)):
    bodies = []
    for i, (axis, L, m) in enumerate(zip(axes, lengths, masses, strict=True)):
        top, com = np.eye(4), np.eye(4)
        if i > 0:
            top[0, 3] = lengths[i - 1]
        com[0, 3] = L / 2
        inertia = np.diag([1e-3 * m, m * L**2 / 12, m * L**2 / 12])
        bodies.append(Body(f"link{i + 1}", i - 1, Revolute(axis), top, com, m, inertia))
    return Model(bodies, gravity=gravity)


@pytest.fixture(scope="module")
def arms():
    models = {
        "planar two-link": arm([[0, 0, 1]] * 2, [1.0, 0.8], [2.0, 1.0]),
        "planar three-link": arm([[0, 0, 1]] * 3, [1.0, 0.8, 0.5], [2.0, 1.0, 0.5]),
        "3D three-link": arm([[0, 0, 1], [0, 1, 0], [1, 1, 0]], [1.0, 0.8, 0.5], [2.0, 1.0, 0.5],
                             gravity=(0.0, 0.0, -9.81)),
    }
    terms = {k: chain_lagrangian(model_links(m), gravity=m.gravity) for k, m in models.items()}
    return models, terms, {k: t.numeric() for k, t in terms.items()}


@pytest.fixture(scope="module")
def two():
    links, s = planar_two_link()
    return chain_lagrangian(links, simplify=True), s


def test_two_link_mass_matrix_is_the_hand_derivation(two):
    """Page, exercise solution: M of the planar two-link arm; only q2 appears."""
    t, s = two
    m1, m2, l1, r1, r2, I1, I2 = (s[k] for k in ("m1", "m2", "l1", "r1", "r2", "I1", "I2"))
    c2 = sp.cos(t.q[1])
    off = I2 + m2 * (r2**2 + l1 * r2 * c2)
    hand = sp.Matrix([[I1 + I2 + m1 * r1**2 + m2 * (l1**2 + r2**2 + 2 * l1 * r2 * c2), off],
                      [off, I2 + m2 * r2**2]])
    assert sp.simplify(t.M - hand) == sp.zeros(2, 2)
    assert t.q[0] not in t.M.free_symbols and t.q[1] in t.M.free_symbols


def test_two_link_m11_largest_stretched_smallest_folded(two):
    """Page: M_11 is largest at q2 = 0 and smallest folded back (q2 = pi)."""
    t, s = two
    values = {s["m1"]: 2, s["m2"]: 1, s["l1"]: 1, s["r1"]: sp.Rational(1, 2), s["r2"]: sp.Rational(2, 5),
              s["I1"]: sp.Rational(1, 6), s["I2"]: sp.Rational(1, 15)}
    m11 = sp.lambdify(t.q[1], t.M[0, 0].subs(values))
    grid = np.linspace(-np.pi, np.pi, 721)
    vals = np.array([m11(x) for x in grid])
    assert grid[np.argmax(vals)] == pytest.approx(0.0, abs=1e-12)
    assert abs(grid[np.argmin(vals)]) == pytest.approx(np.pi)


def test_two_link_coriolis_carries_sin_q2(two):
    """Page: only dM/dq2 is non-zero; every non-zero entry of C carries m2 l1 r2 sin q2."""
    t, s = two
    assert sp.diff(t.M, t.q[0]) == sp.zeros(2, 2)
    assert sp.simplify(sp.diff(t.M, t.q[1])) != sp.zeros(2, 2)
    factor = s["m2"] * s["l1"] * s["r2"] * sp.sin(t.q[1])
    C = sp.simplify(t.C)
    nonzero = [c for c in C if c != 0]
    assert len(nonzero) == 3
    for c in nonzero:
        ratio = sp.simplify(c / factor)
        assert not ratio.has(sp.sin) and not ratio.has(sp.cos)


def test_symbolic_terms_equal_redmax(arms):
    """Page, check cell: M = M_r, -(C qdot + g) = f_r and Mdot - 2C skew, to 1e-10, 20 states per arm."""
    models, _, numeric = arms
    rng = np.random.default_rng(0)
    for name, model in models.items():
        f = numeric[name]
        for _ in range(20):
            q, qdot = rng.uniform(-np.pi, np.pi, model.nq), rng.standard_normal(model.nq)
            assert np.abs(f["M"](q) - mass_matrix(model, q)).max() < 1e-10, name
            fl = -(f["C"](q, qdot) @ qdot + f["g"](q))
            assert np.abs(fl - reduced_forces(model, q, qdot)).max() < 1e-10, name
            N = f["Mdot"](q, qdot) - 2 * f["C"](q, qdot)
            assert np.abs(N + N.T).max() < 1e-10, name
            assert abs(qdot @ N @ qdot) < 1e-10  # the velocity terms do no work


def test_velocity_terms_do_not_change_energy(arms):
    """Page: with tau = 0, T + V is conserved (dE/dt = qdot.(M qddot + 1/2 Mdot qdot + g) = 0)."""
    models, _, numeric = arms
    model, f = models["3D three-link"], numeric["3D three-link"]
    q, qdot = np.array([0.4, -0.3, 1.2]), np.array([1.0, 0.5, -2.0])
    qddot = forward_dynamics(model, q, qdot)
    dE = qdot @ (f["M"](q) @ qddot + 0.5 * f["Mdot"](q, qdot) @ qdot + f["g"](q))
    assert abs(dE) < 1e-10


@pytest.fixture(scope="module")
def tip_setup(arms):
    models, terms, numeric = arms
    model, t3 = models["planar three-link"], terms["planar three-link"]
    x = t3.positions[-1] + t3.rotations[-1] * sp.Matrix([0.25, 0, 0])
    Jx = sp.lambdify(t3.q, x.jacobian(sp.Matrix(t3.q)), "numpy")

    def tip(q):
        E = body_poses(model, q)[-1]
        return E[:3, :3] @ [0.25, 0.0, 0.0] + E[:3, 3]

    q = np.array([0.6, -0.9, 0.7])
    return model, numeric["planar three-link"], tip, q, np.array(Jx(*q), dtype=float)


def test_tip_jacobian_and_velocity(tip_setup):
    """Page, Cartesian velocities: J_x and v = J_x qdot match finite differences to 1e-8."""
    _, _, tip, q, J = tip_setup
    qdot, h = np.array([0.5, -1.0, 2.0]), 1e-6
    J_fd = np.column_stack([(tip(q + h * e) - tip(q - h * e)) / (2 * h) for e in np.eye(3)])
    assert np.abs(J - J_fd).max() < 1e-8
    assert np.abs(J @ qdot - (tip(q + h * qdot) - tip(q - h * qdot)) / (2 * h)).max() < 1e-8


def test_holding_torques(tip_setup):
    """Page: tau = g - J^T F equals inverse dynamics - J^T F; virtual work below 1e-6; the figure's
    torques 31.5, 8.4 and 2.1 N m, the first hinge by far the largest."""
    model, f, tip, q, J = tip_setup
    F, zero, h = np.array([5.0, 0.0, 0.0]), np.zeros(3), 1e-6
    tau = f["g"](q) - J.T @ F
    assert np.allclose(tau, inverse_dynamics(model, q, zero, zero) - J.T @ F, atol=1e-10, rtol=0)
    rng = np.random.default_rng(3)
    for _ in range(5):
        dq = rng.standard_normal(3)
        dx = (tip(q + h * dq) - tip(q - h * dq)) / (2 * h)
        dV = (potential_energy(model, q + h * dq) - potential_energy(model, q - h * dq)) / (2 * h)
        assert abs(tau @ dq + F @ dx - dV) < 1e-6
    assert np.allclose(tau, [31.5, 8.4, 2.1], atol=0.03)  # rounded at least 0.02 from a boundary
    assert tau[0] > 3 * tau[1:].max()


def test_recursive_inverse_dynamics_round_trip(arms):
    """Page, two passes and a round trip: the recursive tau equals the dense one and
    M qddot + C qdot + g, and forward(tau) = qddot, all to 1e-10."""
    models, _, numeric = arms
    rng = np.random.default_rng(1)
    for name, model in models.items():
        f = numeric[name]
        for _ in range(20):
            q, qdot = rng.uniform(-np.pi, np.pi, model.nq), rng.standard_normal(model.nq)
            qddot = rng.standard_normal(model.nq)
            tau = recursive_inverse_dynamics(model, q, qdot, qddot)
            assert np.abs(tau - inverse_dynamics(model, q, qdot, qddot)).max() < 1e-10, name
            assert np.abs(forward_dynamics(model, q, qdot, tau) - qddot).max() < 1e-10, name
            lag = f["M"](q) @ qddot + f["C"](q, qdot) @ qdot + f["g"](q)
            assert np.abs(tau - lag).max() < 1e-10, name
