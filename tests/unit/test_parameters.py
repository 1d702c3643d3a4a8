"""Model parameters (redmax_edu.parameters): dM/dp and df/dp against central differences of
models rebuilt by with_parameters, on random trees holding every joint type (with joint springs
and dampers, body damping and random spring rest positions) and on random trees of the basic
joints (fixed joints among them, whose children's lengths are the slider that replaces the fixed
joint); every kind of parameter; bad parameters refused by name; each check shown to catch a
wrong derivative.

Tolerance: the best of central differences at h = 1e-4, 1e-5, 1e-6 agrees to 1.2e-11 relative
(measured over these trees, per kind); TOL = 1e-8 is that of the other derivative tests. Some
length columns are exactly zero (the offset of a joint whose ancestors have no coordinates only
translates the subtree rigidly: M and f do not change), so errors are measured over all the
columns of one kind together, relative to their size.
"""

import numpy as np
import pytest

from redmax_edu import parameters
from redmax_edu.checks import numerical_derivative, relative_error
from redmax_edu.constraints import CoordinateCoupling
from redmax_edu.dynamics import mass_matrix, reduced_forces
from redmax_edu.jacobian import jacobian
from redmax_edu.joints import Revolute
from redmax_edu.model import Body, Model
from redmax_edu.parameters import (
    KINDS,
    Parameter,
    model_parameters,
    parameter_derivatives,
    parameter_values,
    with_parameters,
)

from .random_trees import joint_group_trees, random_state, random_tree, with_springs

TOL = 1e-8
STEPS = [1e-4, 1e-5, 1e-6]


def _with_rest(rng, model):
    """Joint springs with random rest coordinates, so that q_rest enters df/dk."""
    from dataclasses import replace

    bodies = [replace(b, q_rest=rng.uniform(-0.5, 0.5, b.joint.ndof)) for b in model.bodies]
    return Model(bodies, model.gravity, model.forces)


def _cases():
    rng = np.random.default_rng(21)
    out = [(_with_rest(rng, with_springs(rng, m)), q, qd) for m, q, qd in joint_group_trees(rng, 5)]
    for n in (6, 8):
        model = _with_rest(rng, with_springs(rng, random_tree(rng, n)))
        out.append((model, *random_state(rng, model)))
    return out


CASES = _cases()


def _numeric(model, params, q, qdot, h):
    """Central differences of (M, f) in the parameters, as (nq*nq + nq, np)."""
    v0 = parameter_values(model, params)

    def F(v):
        m = with_parameters(model, params, v)
        return np.concatenate([mass_matrix(m, q).ravel(), reduced_forces(m, q, qdot)])

    return numerical_derivative(F, v0, h)


def _stack(d):
    return np.concatenate([d.dM_dp.reshape(-1, d.df_dp.shape[1]), d.df_dp])


def _errors_per_kind(model, params, q, qdot, analytic):
    """For each kind, the best over STEPS of the relative error of its columns together."""
    numeric = [_numeric(model, params, q, qdot, h) for h in STEPS]
    out = {}
    for kind in KINDS:
        cols = [k for k, p in enumerate(params) if p.kind == kind]
        if cols:
            out[kind] = min(relative_error(analytic[:, cols], n[:, cols]) for n in numeric)
    return out


@pytest.mark.parametrize("c", range(len(CASES)))
def test_parameter_derivatives_match_central_differences_of_rebuilt_models(c):
    model, q, qdot = CASES[c]
    params = model_parameters(model)
    assert {p.kind for p in params} == set(KINDS)
    errors = _errors_per_kind(model, params, q, qdot, _stack(parameter_derivatives(model, params, q, qdot)))
    assert all(e < TOL for e in errors.values()), errors


def test_every_joint_type_has_its_length_checked():
    from .test_joints import JOINT_NAMES

    lengths = {p.body for model, _, _ in CASES[:5] for p in model_parameters(model, ["length"])}
    assert lengths == set(JOINT_NAMES)
    assert any(b.joint.kind == "fixed" and b.parent >= 0 for model, _, _ in CASES[5:] for b in model.bodies)


def test_a_subset_in_any_order_gives_the_same_columns():
    model, q, qdot = CASES[5]
    params = model_parameters(model)
    full = parameter_derivatives(model, params, q, qdot)
    pick = [7, 2, len(params) - 1]
    part = parameter_derivatives(model, [params[k] for k in pick], q, qdot)
    # (the length columns come from an augmented model with other sliders: equal up to round-off)
    assert np.allclose(part.df_dp, full.df_dp[:, pick], rtol=0, atol=1e-13)
    assert np.allclose(part.dM_dp, full.dM_dp[:, :, pick], rtol=0, atol=1e-13)


def test_with_parameters_round_trips_and_keeps_the_inertia_shape():
    model, _, _ = CASES[5]
    params = model_parameters(model)
    v = parameter_values(model, params) * 1.5
    new = with_parameters(model, params, v)
    assert np.allclose(parameter_values(new, params), v)
    for b0, b1 in zip(model.bodies, new.bodies, strict=True):
        assert np.allclose(b1.inertia / b1.mass, b0.inertia / b0.mass)              # same shape
        t0, t1 = b0.T_parent_joint[:3, 3], b1.T_parent_joint[:3, 3]
        assert np.allclose(np.cross(t0, t1), 0) and np.allclose(b1.T_parent_joint[:3, :3],
                                                                  b0.T_parent_joint[:3, :3])
        assert np.array_equal(b1.T_joint_body, b0.T_joint_body)                     # the mass stays


def test_the_examples_in_closed_form():
    """A pendulum: M = I + m L^2, the gravity torque -m g L sin q."""
    T = np.eye(4)
    T[2, 3] = -1.0
    bob = Model([Body("hinge", -1, Revolute([0, 1, 0]), np.eye(4), np.eye(4), 1.0, 0.01 * np.eye(3)),
                 Body("bob", 0, Revolute([0, 1, 0]), T, np.eye(4), 2.0, 0.01 * np.eye(3))])
    # body 'bob' at distance L = 1 below the first hinge: dM_00/dL = 2 m L, df_0/dL = -m g sin(q0)
    q, qdot = np.array([0.3, 0.2]), np.zeros(2)
    d = parameter_derivatives(bob, [("length", "bob")], q, qdot)
    assert np.isclose(d.dM_dp[0, 0, 0], 2 * 2.0 * 1.0)
    assert np.isclose(d.df_dp[0, 0], -2.0 * 9.81 * np.sin(0.3))


# --- each check catches a wrong derivative -----------------------------------------------------
def _fails(model, params, q, qdot, analytic, kind):
    return _errors_per_kind(model, params, q, qdot, analytic)[kind] > 1e-3


@pytest.mark.parametrize("kind", KINDS)
def test_a_flipped_sign_is_caught_for_every_kind(kind):
    model, q, qdot = CASES[5]
    params = model_parameters(model)
    analytic = _stack(parameter_derivatives(model, params, q, qdot))
    cols = [k for k, p in enumerate(params) if p.kind == kind]
    analytic[:, cols] *= -1
    assert _fails(model, params, q, qdot, analytic, kind)


def test_ignoring_the_rest_position_of_the_spring_is_caught():
    model, q, qdot = CASES[5]
    params = model_parameters(model, ["stiffness"])
    analytic = _stack(parameter_derivatives(model, params, q, qdot))
    for k, p in enumerate(params):
        analytic[model.nq ** 2 + p.index + model.dofs[model.index(p.body)].start, k] = -q[
            p.index + model.dofs[model.index(p.body)].start]
    assert _fails(model, params, q, qdot, analytic, "stiffness")


def test_a_mass_that_leaves_the_rotational_inertia_alone_is_caught():
    model, q, qdot = CASES[5]
    params = model_parameters(model, ["mass"])
    analytic = _stack(parameter_derivatives(model, params, q, qdot))
    J = jacobian(model, q).reshape(model.n, 6, model.nq)
    P = np.diag([0, 0, 0, 1.0, 1.0, 1.0])
    for k, p in enumerate(params):
        i = model.index(p.body)
        analytic[:model.nq ** 2, k] = (J[i].T @ P @ J[i]).ravel()
    assert _fails(model, params, q, qdot, analytic, "mass")


@pytest.mark.parametrize("c", [0, 5])
def test_a_slider_along_the_offset_in_the_parent_frame_is_caught(c, monkeypatch):
    """The slider of a length must point along R^T u (the offset's direction seen after the fixed
    rotation of T_parent_joint), not along u itself."""
    model, q, qdot = CASES[c]
    params = model_parameters(model, ["length"])
    monkeypatch.setattr(parameters, "_slider_axis", lambda T: T[:3, 3] / np.linalg.norm(T[:3, 3]))
    analytic = _stack(parameter_derivatives(model, params, q, qdot))
    assert _fails(model, params, q, qdot, analytic, "length")


# --- bad input ---------------------------------------------------------------------------------
def test_bad_parameters_are_refused_naming_the_body():
    model, q, qdot = CASES[5]
    fixed = next(b.name for b in model.bodies if b.joint.kind == "fixed")
    planar = next(b.name for b in model.bodies if b.joint.kind == "planar")
    cases = [
        ([("mass", "nobody")], "no body named 'nobody'"),
        ([("inertia", "b0")], "kind 'inertia' is not one of"),
        ([("stiffness", fixed)], f"body '{fixed}' hangs from a fixed joint"),
        ([("damping", planar)], f"the joint of body '{planar}' (planar) has 2 coordinates"),
        ([("damping", planar, 2)], "index must be an integer from 0 to 1"),
        ([("mass", "b0", 0)], "only joint stiffness and damping take an index"),
        ([("mass", "b1"), Parameter("mass", "b1")], "given twice"),
        (["mass"], "must be a Parameter or a tuple"),
        ([("mass", 3)], "the body must be given by its name"),
    ]
    for params, message in cases:
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            parameter_values(model, params)
    with pytest.raises(ValueError, match="argument 'params' must be a list"):
        parameter_values(model, Parameter("mass", "b1"))
    at_origin = model.with_body(1, T_parent_joint=np.eye(4))
    with pytest.raises(ValueError, match="'b1' sits at the origin of its parent's joint frame"):
        parameter_values(at_origin, [("length", "b1")])


def test_bad_values_are_refused_naming_the_parameter():
    model, q, qdot = CASES[5]
    with pytest.raises(ValueError, match="mass of body 'b1' must be positive"):
        with_parameters(model, [("mass", "b1")], [0.0])
    with pytest.raises(ValueError, match="length of body 'b2' must be positive"):
        with_parameters(model, [("length", "b2")], [-1.0])
    moving = next(b.name for b in model.bodies if b.joint.ndof)
    with pytest.raises(ValueError, match=f"body '{moving}': field 'damping' must be non-negative"):
        with_parameters(model, [("damping", moving, 0)], [-1.0])
    with pytest.raises(ValueError, match="argument 'values' contains NaN"):
        with_parameters(model, [("mass", "b1")], [np.nan])
    with pytest.raises(ValueError, match="values"):
        with_parameters(model, [("mass", "b1")], [1.0, 2.0])
    with pytest.raises(ValueError, match="has constraints"):
        a, b = [i for i, body in enumerate(model.bodies) if body.joint.ndof == 1][:2]
        parameter_derivatives(model.with_constraints([CoordinateCoupling(a, b)]),
                              [("mass", "b1")], q, qdot)
    with pytest.raises(ValueError, match="'kinds'"):
        model_parameters(model, ["masses"])
