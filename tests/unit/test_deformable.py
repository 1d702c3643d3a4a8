"""Unit tests of redmax_edu.deformable and its place in the RedMax equations (§2.7, Eq. 2.91-2.99).

The spring forces are checked against their energy (f = -dV/dx), their stiffness and damping
matrices against central differences, the node Jacobians ``J_n`` (Eq. 2.94, 2.96) against
differences of the node positions, their velocity products (Eq. 2.95) against differences of
``J_n`` along qdot, and the whole reduced system against the Lagrangian: ``M_R`` is the Hessian
of T, and ``f_R = -(Mdot qdot - 1/2 d/dq(qdot^T M qdot)) - dV/dq``.

Tolerances: ``check_derivative`` keeps the best step of a sweep (central differences reach
~1e-10 relative on these smooth maps); rtol = 1e-7 accepts that and refuses the O(1) error of
a wrong derivative (see the dropped-term tests).
"""

import re

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from redmax_edu.checks import check_derivative, numerical_derivative
from redmax_edu.deformable import DeformableSpring
from redmax_edu.dynamics import (
    _assemble,
    forward_dynamics,
    inverse_dynamics,
    kinetic_energy,
    linearly_implicit_euler_step,
    mass_matrix,
    potential_energy,
    quadratic_velocity_vector,
    reduced_forces,
)
from redmax_edu.jacobian import node_kinematics
from redmax_edu.kinematics import body_twists, forward_kinematics
from redmax_edu.lie import gamma
from redmax_edu.maximal.forces import Attachment
from redmax_edu.model import Model, model_from_dict

from .random_trees import random_tree

RTOL = 1e-7


def _chain(rng, k, first=None, last=None, damping=0.0, stiffness=40.0, name="spring"):
    nodes = np.cumsum(rng.uniform(0.3, 0.6, (k, 3)), axis=0) + rng.standard_normal(3)
    return DeformableSpring(nodes, stiffness, mass=0.2 * k, first=first, last=last, damping=damping,
                            name=name)


def deformable_model(rng, damping=0.0, gravity=(0.0, 0.0, -9.81)):
    """A random 4-body tree with three chains: world -> body 3 (4 nodes, 2 free), body 0 -> body 2
    (2 nodes, none free), and a chain hanging from body 1 with a free end (3 nodes, 2 free)."""
    model = random_tree(rng, 4, kinds=("revolute", "prismatic", "revolute", "planar"), gravity=gravity)
    chains = [_chain(rng, 4, Attachment(-1, rng.standard_normal(3)), Attachment(3, rng.standard_normal(3)),
                     damping, name="cable"),
              _chain(rng, 2, Attachment(0, rng.standard_normal(3)), Attachment(2, rng.standard_normal(3)),
                     damping, name="strut"),
              _chain(rng, 3, Attachment(1, rng.standard_normal(3)), None, damping, name="tail")]
    return model.with_deformables(chains)


def random_state(rng, model, scale=0.5):
    q = model.coordinates(scale * rng.standard_normal(model.nr)) + 0.1 * scale * rng.standard_normal(model.nq)
    return q, scale * rng.standard_normal(model.nq)


@pytest.fixture(params=range(3))
def system(request):
    rng = np.random.default_rng(500 + request.param)
    model = deformable_model(rng, damping=0.3)
    q, qdot = random_state(rng, model)
    return model, q, qdot


# --- the coordinates ---------------------------------------------------------------------------

def test_coordinates_are_joints_then_free_nodes(system):
    model, _, _ = system
    assert model.nr == 5 and model.nq == 5 + 3 * (2 + 0 + 2)      # joints 1 + 1 + 1 + 2
    assert model.deformable_dofs == (slice(5, 11), slice(11, 11), slice(11, 17))
    assert [s.free for s in model.deformables] == [(1, 2), (), (1, 2)]
    q0 = model.coordinates()
    np.testing.assert_array_equal(q0[model.deformable_dofs[2]], model.deformables[2].nodes[1:].ravel())


# --- node-space mechanics: Eq. (2.92)-(2.93) ---------------------------------------------------

@pytest.fixture
def chain_state(rng):
    spring = _chain(rng, 5, damping=0.7)
    x = spring.nodes + 0.2 * rng.standard_normal(spring.nodes.shape)   # stretched and bent
    return spring, x, rng.standard_normal(x.shape)


def test_spring_force_is_minus_the_energy_gradient(chain_state):
    spring, x, v = chain_state
    no_damping = DeformableSpring(spring.nodes, spring.stiffness, spring.mass)
    f = no_damping.elastic(x, v).f
    check = check_derivative(lambda y: no_damping.elastic(y.reshape(-1, 3), v).energy, x.ravel(), -f.ravel(),
                             rtol=RTOL)
    assert check.ok, check.error


def test_single_segment_force_is_eq_2_93():
    spring = DeformableSpring([[0, 0, 0], [2.0, 0, 0]], stiffness=10.0, mass=1.0)
    x = np.array([[0, 0, 0], [0, 3.0, 0]])
    f = spring.elastic(x, np.zeros((2, 3))).f
    eps = (3.0 - 2.0) / 2.0
    np.testing.assert_allclose(f[0], 10.0 * eps / 2.0 * np.array([0, 1.0, 0]), atol=1e-15)
    np.testing.assert_allclose(f[1], -f[0], atol=0)
    assert spring.elastic(x, np.zeros((2, 3))).energy == pytest.approx(0.5 * 10.0 * eps**2)


def test_spring_stiffness_matches_finite_differences(chain_state):
    spring, x, v = chain_state
    K = spring.elastic(x, v).K
    check = check_derivative(lambda y: spring.elastic(y.reshape(-1, 3), v).f.ravel(), x.ravel(), K, rtol=RTOL)
    assert check.ok, check.error
    np.testing.assert_allclose(spring.elastic(x, np.zeros_like(v)).K, spring.elastic(x, np.zeros_like(v)).K.T,
                               atol=1e-12)  # without velocity the stiffness is a Hessian: symmetric


def test_spring_damping_matches_finite_differences(chain_state):
    spring, x, v = chain_state
    D = spring.elastic(x, v).D
    check = check_derivative(lambda w: spring.elastic(x, w.reshape(-1, 3)).f.ravel(), v.ravel(), D, rtol=RTOL)
    assert check.ok, check.error
    assert np.abs(D).max() > 0


def test_a_stiffness_without_its_transverse_term_fails_the_check(chain_state):
    """Dropping ``tension (I - u u^T)/l`` (the rotation of the spring direction) is caught."""
    spring, x, v = chain_state
    terms = spring.elastic(x, v)
    wrong = terms.K.copy()
    for s in range(spring.nnodes - 1):
        d = x[s + 1] - x[s]
        l, L = np.linalg.norm(d), spring.rest_lengths[s]
        u = d / l
        tension = (spring.stiffness * (l - L) / L + spring.damping * (u @ (v[s + 1] - v[s])) / L) / L
        P = tension * (np.eye(3) - np.outer(u, u)) / l
        a, b = slice(3 * s, 3 * s + 3), slice(3 * s + 3, 3 * s + 6)
        wrong[a, b] -= P
        wrong[a, a] += P
        wrong[b, b] += P
        wrong[b, a] -= P
    check = check_derivative(lambda y: spring.elastic(y.reshape(-1, 3), v).f.ravel(), x.ravel(), wrong,
                             rtol=RTOL)
    assert not check.ok


# --- node kinematics: Eq. (2.94)-(2.96) --------------------------------------------------------

def test_attached_nodes_move_exactly_with_their_body_points(system):
    model, q, qdot = system
    E = forward_kinematics(model, q).E_wi
    phi = body_twists(model, q, qdot)
    for spring, nodes in zip(model.deformables, node_kinematics(model, q, qdot), strict=True):
        for a, att in spring.attachments.items():
            if att.body < 0:
                np.testing.assert_array_equal(nodes.x[a], att.r)
                np.testing.assert_array_equal(nodes.v[a], 0.0)
                continue
            R, p = E[att.body, :3, :3], E[att.body, :3, 3]
            np.testing.assert_allclose(nodes.x[a], R @ att.r + p, rtol=0, atol=1e-14)
            np.testing.assert_allclose(nodes.v[a], R @ gamma(att.r) @ phi[att.body], rtol=0, atol=1e-13)
        free = q[model.deformable_dofs[model.deformables.index(spring)]].reshape(-1, 3)
        np.testing.assert_array_equal(nodes.x[list(spring.free)], free)


def _node_positions(model, q):
    return np.concatenate([n.x.ravel() for n in node_kinematics(model, q)])


def _node_jacobian(model, q, qdot=None):
    return np.concatenate([n.J.reshape(-1, model.nq) for n in node_kinematics(model, q, qdot)])


def test_node_jacobian_matches_finite_differences(system):
    model, q, qdot = system
    check = check_derivative(lambda x: _node_positions(model, x), q, _node_jacobian(model, q), rtol=RTOL)
    assert check.ok, check.error
    v = np.concatenate([n.v.ravel() for n in node_kinematics(model, q, qdot)])
    np.testing.assert_allclose(_node_jacobian(model, q) @ qdot, v, atol=1e-12)


def test_node_velocity_product_matches_finite_differences_of_the_jacobian(system):
    """``Jdot_n qdot`` (Eq. 2.95-2.96) against d/dt (J_n(q + t qdot) qdot)."""
    model, q, qdot = system
    product = np.concatenate([n.Jdot_qdot.ravel() for n in node_kinematics(model, q, qdot)])
    check = check_derivative(lambda t: _node_jacobian(model, q + t[0] * qdot) @ qdot, [0.0], product[:, None],
                             rtol=RTOL)
    assert check.ok, check.error
    assert np.abs(product).max() > 1e-2


def test_the_velocity_product_as_printed_in_eq_2_96_would_be_caught(system):
    """Eq. (2.96) prints the attached row as ``Jdot_mr + J_am Jdot_mr``; the derivative of
    ``J_am J_mr`` is ``Jdot_am J_mr + J_am Jdot_mr`` (Eq. 2.95). Leaving out ``Jdot_am J_mr``
    fails the check, so the library's version is the one that is right."""
    model, q, qdot = system
    E = forward_kinematics(model, q).E_wi
    phi = body_twists(model, q, qdot)
    wrong = []
    for spring, nodes in zip(model.deformables, node_kinematics(model, q, qdot), strict=True):
        acc = nodes.Jdot_qdot.copy()
        for a, att in spring.attachments.items():
            if att.body >= 0:
                R, w = E[att.body, :3, :3], phi[att.body, :3]
                acc[a] -= R @ np.cross(w, gamma(att.r) @ phi[att.body])
        wrong.append(acc.ravel())
    check = check_derivative(lambda t: _node_jacobian(model, q + t[0] * qdot) @ qdot, [0.0],
                             np.concatenate(wrong)[:, None], rtol=RTOL)
    assert not check.ok


# --- the reduced equations with deformables: Eq. (2.99) ----------------------------------------

def test_mass_matrix_is_the_hessian_of_kinetic_energy(system):
    model, q, _ = system
    M = mass_matrix(model, q)
    e = np.eye(model.nq)
    H = np.array([[kinetic_energy(model, q, e[i] + e[j]) - kinetic_energy(model, q, e[i])
                   - kinetic_energy(model, q, e[j]) for j in range(model.nq)] for i in range(model.nq)])
    np.testing.assert_allclose(H, M, atol=1e-12 * np.abs(M).max())
    assert np.linalg.eigvalsh(M)[0] > 0
    free = model.deformable_dofs[0]
    np.testing.assert_allclose(np.diag(M)[free], model.deformables[0].node_mass)  # identity rows, Eq. (2.96)


def test_conservative_forces_are_minus_the_energy_gradient(system):
    model, q, _ = system
    f = reduced_forces(model, q, np.zeros(model.nq))
    check = check_derivative(lambda x: potential_energy(model, x), q, -f, rtol=RTOL)
    assert check.ok, check.error
    assert not check_derivative(lambda x: potential_energy(model, x), q, f, rtol=RTOL).ok


def test_reduced_forces_are_the_lagrangian_forces():
    """Without damping, f_R = -(Mdot qdot - 1/2 d/dq (qdot^T M qdot)) - dV/dq (central differences
    with step 1e-6: error ~1e-9 relative, hence 1e-6)."""
    rng = np.random.default_rng(7)
    model = deformable_model(rng)
    q, qdot = random_state(rng, model)
    dM = numerical_derivative(lambda x: mass_matrix(model, x), q)
    c = (dM @ qdot) @ qdot - 0.5 * np.einsum("i,ijk,j->k", qdot, dM, qdot)
    dV = numerical_derivative(lambda x: potential_energy(model, x), q)
    expected = -c - dV
    f = reduced_forces(model, q, qdot)
    assert np.abs(f - expected).max() < 1e-6 * np.abs(expected).max()
    # the node velocity products matter: without them the identity fails
    rigid = quadratic_velocity_vector(model.with_deformables(()), q[:model.nr], qdot[:model.nr])
    rigid = np.concatenate([rigid, np.zeros(model.nq - model.nr)])
    without = f - quadratic_velocity_vector(model, q, qdot) + rigid
    assert np.abs(without - expected).max() > 1e-3 * np.abs(expected).max()


def test_forward_and_inverse_dynamics_are_inverses(system):
    model, q, qdot = system
    tau = np.random.default_rng(1).standard_normal(model.nq)
    np.testing.assert_allclose(inverse_dynamics(model, q, qdot, forward_dynamics(model, q, qdot, tau)), tau,
                               atol=1e-9)


def test_energy_is_conserved_by_an_accurate_integrator(rng):
    """Without damping T + V is constant; RK45 at rtol 1e-10 over 0.3 s keeps the drift near 1e-10
    of the kinetic-energy scale (measured), so 1e-6 has room and still catches a missing term (a
    spring force left out of f_R, below, breaks it at O(1) within 0.1 s)."""
    model = deformable_model(rng)
    q0, qdot0 = random_state(rng, model)
    n = model.nq

    def drift(accel, t_end):
        sol = solve_ivp(lambda t, y: np.concatenate([y[n:], accel(y[:n], y[n:])]), (0.0, t_end),
                        np.concatenate([q0, qdot0]), rtol=1e-10, atol=1e-12,
                        t_eval=np.linspace(0, t_end, 11))
        assert sol.success
        H = np.array([kinetic_energy(model, y[:n], y[n:]) + potential_energy(model, y[:n]) for y in sol.y.T])
        return np.abs(H - H[0]).max() / max(kinetic_energy(model, y[:n], y[n:]) for y in sol.y.T)

    assert drift(lambda q, v: forward_dynamics(model, q, v), 0.3) < 1e-6
    stiff = model.deformables[0]
    no_cable = model.with_deformables([DeformableSpring(stiff.nodes, 0.0, stiff.mass, stiff.attachments[0],
                                                        stiff.attachments[3], name="cable")]
                                      + list(model.deformables[1:]))
    # the energy still counts the spring that the dynamics left out
    assert drift(lambda q, v: forward_dynamics(no_cable, q, v), 0.1) > 1e-3


# --- linearly implicit Euler -------------------------------------------------------------------

def _free_chain_model(rng, damping):
    """One body (a pendulum) and a chain of 4 entirely free nodes: J_n is the identity there, so
    the reduced node stiffness and damping are exactly the derivatives of f_R."""
    model = random_tree(rng, 1, kinds=("revolute",))
    return model.with_deformables([_chain(rng, 4, damping=damping, name="rope")])


def test_node_stiffness_and_damping_in_the_implicit_step_match_finite_differences(rng):
    model = _free_chain_model(rng, damping=0.5)
    q, qdot = random_state(rng, model)
    terms = _assemble(model, q, qdot, derivatives=True)
    nodes = model.deformable_dofs[0]
    dq = numerical_derivative(lambda x: reduced_forces(model, np.concatenate([q[:model.nr], x]), qdot),
                              q[nodes])
    dv = numerical_derivative(lambda x: reduced_forces(model, q, np.concatenate([qdot[:model.nr], x])),
                              qdot[nodes])
    np.testing.assert_allclose(terms.dfdq[nodes, nodes], dq[nodes], atol=1e-6 * np.abs(dq).max())
    np.testing.assert_allclose(terms.dfdv[nodes, nodes], dv[nodes], atol=1e-6 * np.abs(dv).max())


def test_linearly_implicit_euler_with_deformables_is_first_order_and_dissipative(rng):
    model = deformable_model(rng, damping=0.3)
    q, qdot = random_state(rng, model)
    qddot = forward_dynamics(model, q, qdot)
    errors = [np.abs((linearly_implicit_euler_step(model, q, qdot, h)[1] - qdot) / h - qddot).max()
              for h in (1e-4, 5e-5)]
    assert errors[0] / errors[1] == pytest.approx(2.0, rel=0.05)
    calm = deformable_model(np.random.default_rng(3), damping=0.3, gravity=(0.0, 0.0, 0.0))
    q, qdot = random_state(np.random.default_rng(4), calm)
    energy = [sum(_energies(calm, q, qdot))]
    for _ in range(50):
        q, qdot = linearly_implicit_euler_step(calm, q, qdot, 0.005)
        energy.append(sum(_energies(calm, q, qdot)))
    assert energy[-1] < energy[0]


def _energies(model, q, qdot):
    return kinetic_energy(model, q, qdot), potential_energy(model, q)


# --- scene format and bad input ----------------------------------------------------------------

def test_round_trip_through_the_scene_format(system):
    model, q, qdot = system
    again = model_from_dict(model.to_dict())
    assert again.to_dict()["deformables"] == model.to_dict()["deformables"]
    # joint axes are re-normalised on reading, which may move their last bit: hence 1e-12
    np.testing.assert_allclose(forward_dynamics(again, q, qdot), forward_dynamics(model, q, qdot), rtol=1e-12,
                               atol=1e-12)


def _raises(words, build):
    pattern = "".join(f"(?=.*{re.escape(w)})" for w in words)
    with pytest.raises(ValueError, match=pattern):
        build()


@pytest.mark.parametrize("kwargs, words", [
    (dict(nodes=[[0, 0, 0]]), ["'rope'", "'nodes'", "k >= 2"]),
    (dict(nodes=[[0, 0], [1, 1]]), ["'rope'", "'nodes'", "(k, 3)"]),
    (dict(nodes=[[0, 0, 0], [np.nan, 0, 0]]), ["'rope'", "'nodes'", "NaN"]),
    (dict(nodes=[[0, 0, 0], [0, 0, 0]]), ["'rope'", "'rest_lengths'", "positive"]),
    (dict(rest_lengths=[1.0, 2.0]), ["'rope'", "'rest_lengths'", "(1,)"]),
    (dict(stiffness=-1.0), ["'rope'", "'stiffness'", "non-negative"]),
    (dict(mass=0.0), ["'rope'", "'mass'", "positive"]),
    (dict(damping=np.inf), ["'rope'", "'damping'", "infinite"]),
    (dict(first=(0, [0, 0, 0])), ["'rope'", "'first'", "Attachment"]),
])
def test_bad_deformables_are_refused(kwargs, words):
    args = dict(nodes=[[0, 0, 0], [1.0, 0, 0]], stiffness=1.0, mass=1.0, name="rope") | kwargs
    _raises(words, lambda: DeformableSpring(**args))


def test_attachment_to_a_missing_body_is_refused(rng):
    model = random_tree(rng, 2)
    spring = DeformableSpring([[0, 0, 0], [1.0, 0, 0]], 1.0, 1.0, last=Attachment(5, [0, 0, 0]), name="rope")
    _raises(["'rope'", "'last'", "body 5", "0..1"], lambda: model.with_deformables([spring]))
    _raises(["deformables[0]", "DeformableSpring"], lambda: model.with_deformables(["rope"]))


def test_bad_deformable_specs_name_the_field(system):
    model = system[0]
    spec = model.to_dict()
    for change, words in [
        (lambda d: d.pop("stiffness"), ["'cable'", "missing field 'stiffness'"]),
        (lambda d: d.update(type="membrane"), ["'cable'", "membrane"]),
        (lambda d: d.update(first={"body": "arm", "r": [0, 0, 0]}), ["'cable'", "'first'", "integer"]),
        (lambda d: d.update(first=[0, 0, 0]), ["'cable'", "'first'", "'body'"]),
    ]:
        bad = model_from_dict(spec).to_dict()
        change(bad["deformables"][0])
        _raises(words, lambda bad=bad: model_from_dict(bad))


def test_state_must_include_the_free_nodes(system):
    model, q, qdot = system
    _raises(["'q'", f"({model.nq},)", f"({model.nr},)"], lambda: forward_dynamics(model, q[:model.nr], qdot))


def test_models_without_deformables_are_unchanged(rng):
    model = random_tree(rng, 4)
    assert model.nq == model.nr and model.deformable_dofs == () and model.deformables == ()
    assert Model(model.bodies, model.gravity, deformables=()).to_dict() == model.to_dict()
    assert "deformables" not in model.to_dict()
