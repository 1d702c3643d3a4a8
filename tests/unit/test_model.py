"""Unit tests of redmax_edu.model: a validated tree of bodies and the JSON scene format.

Every malformed spec must raise a ValueError that names the body at fault and the field, so
each ``pytest.raises`` below matches both (a message naming only one would fail the test).
"""

import copy
import re
from dataclasses import replace

import numpy as np
import pytest

from redmax_edu.dynamics import forward_dynamics, mass_matrix, potential_energy, reduced_forces
from redmax_edu.joints import Revolute
from redmax_edu.kinematics import forward_kinematics
from redmax_edu.model import SCENE_FORMAT, Body, Model, model_from_dict

from .random_trees import random_state, random_tree

I4 = np.eye(4).tolist()


def spec_body(name, parent, **changes):
    body = {"name": name, "parent": parent,
            "joint": {"type": "revolute", "axis": [0, 0, 1], "T_parent_joint": I4},
            "T_joint_body": I4, "mass": 1.0, "inertia": np.eye(3).tolist()}
    body.update(changes)
    return body


@pytest.fixture
def spec():
    """A valid two-body scene; each test breaks one thing in body 'elbow' (or the scene)."""
    return {"format": SCENE_FORMAT, "gravity": [0, 0, -9.81],
            "bodies": [spec_body("shoulder", -1), spec_body("elbow", 0)]}


def raises(spec, *words):
    """model_from_dict(spec) fails with a message containing every word (in any order)."""
    pattern = "".join(f"(?=.*{re.escape(w)})" for w in words)
    with pytest.raises(ValueError, match=re.compile(pattern, re.DOTALL)):
        model_from_dict(spec)


def test_the_valid_spec_builds(spec):
    model = model_from_dict(spec)
    assert model.nq == 2 and model.names == ("shoulder", "elbow")


def test_unknown_joint_type_names_body_and_type(spec):
    spec["bodies"][1]["joint"]["type"] = "hinge"
    raises(spec, "'elbow'", "joint", "hinge")


@pytest.mark.parametrize("field", ["parent", "joint", "T_joint_body", "mass", "inertia"])
def test_missing_field_names_body_and_field(spec, field):
    del spec["bodies"][1][field]
    raises(spec, "'elbow'", "missing field", f"'{field}'")


@pytest.mark.parametrize("shape, words", [
    ("box", ["must be a dict"]),
    ({"type": "cube", "sides": [1, 1, 1]}, ["unknown type 'cube'", "cuboid"]),
    ({"type": "cuboid", "side": [1, 1, 1]}, ["a cuboid has the fields sides", "got side"]),
    ({"type": "cylinder", "radius": 0.1}, ["a cylinder has the fields radius, height"]),
    ({"type": "cuboid", "sides": [1, 2]}, ["'sides'", "(3,)", "(2,)"]),
    ({"type": "sphere", "radius": -0.1}, ["'radius' must be positive", "-0.1"]),
    ({"type": "capsule", "radius": 0.1, "length": float("nan")}, ["'length'", "NaN"]),
    ({"type": "sphere", "radius": 0.1, "E": np.eye(3).tolist()}, ["'E'", "(4, 4)"]),
    ({"type": "composite", "parts": []}, ["'parts' must be a non-empty list"]),
    ({"type": "composite", "parts": [{"type": "sphere", "radius": 0.1}, {"type": "blob"}]},
     ["part 1", "unknown type 'blob'"]),
])
def test_a_shape_that_would_draw_wrong_names_body_and_field(spec, shape, words):
    spec["bodies"][1]["shape"] = shape
    raises(spec, "'elbow'", "'shape'", *words)


@pytest.mark.parametrize("shape", [
    {"type": "cuboid", "sides": [0.1, 0.2, 0.3], "E": np.eye(4).tolist(), "source": "cuboid.obj"},
    {"type": "cylinder", "radius": 0.1, "height": 1}, {"type": "capsule", "radius": 0.1, "length": 1},
    {"type": "mesh", "source": "bunny.obj"},
    {"type": "composite", "parts": [{"type": "sphere", "radius": 0.1, "E": np.eye(4).tolist()}]},
])
def test_every_known_shape_is_accepted_and_kept(spec, shape):
    spec["bodies"][1]["shape"] = shape
    assert model_from_dict(spec).bodies[1].shape == shape


def test_missing_name_names_the_body_by_position(spec):
    del spec["bodies"][1]["name"]
    raises(spec, "bodies[1]", "missing field 'name'")


def test_missing_axis_names_body_and_axis(spec):
    del spec["bodies"][1]["joint"]["axis"]
    raises(spec, "'elbow'", "missing field 'axis'")


@pytest.mark.parametrize("field, value, words", [
    ("T_joint_body", np.eye(4)[:3].tolist(), ["(4, 4)", "(3, 4)"]),
    ("inertia", np.eye(2).tolist(), ["(3, 3)", "(2, 2)"]),
])
def test_wrong_matrix_shape_names_body_field_and_shapes(spec, field, value, words):
    spec["bodies"][1][field] = value
    raises(spec, "'elbow'", f"'{field}'", *words)


def test_wrong_joint_frame_shape_names_body_and_field(spec):
    spec["bodies"][1]["joint"]["T_parent_joint"] = np.eye(4)[:3].tolist()
    raises(spec, "'elbow'", "'T_parent_joint'", "(3, 4)")


@pytest.mark.parametrize("matrix, words", [
    (np.diag([2.0, 2.0, 2.0, 1.0]), ["not a rotation"]),                       # scaled rotation
    (np.diag([1.0, 1.0, -1.0, 1.0]), ["reflection"]),
    (np.vstack([np.eye(4)[:3], [0, 0, 1, 1]]), ["last row", "[0, 0, 0, 1]"]),
])
def test_non_rigid_transform_is_refused(spec, matrix, words):
    spec["bodies"][1]["T_joint_body"] = matrix.tolist()
    raises(spec, "'elbow'", "'T_joint_body'", *words)
    spec["bodies"][1]["T_joint_body"] = I4
    spec["bodies"][1]["joint"]["T_parent_joint"] = matrix.tolist()
    raises(spec, "'elbow'", "'T_parent_joint'", *words)


def test_parent_listed_after_child_is_refused(spec):
    spec["bodies"][0]["parent"] = 1
    raises(spec, "'shoulder'", "'parent'", "before their children", "-1 (the world)")


def test_self_parent_is_refused(spec):
    spec["bodies"][1]["parent"] = 1
    raises(spec, "'elbow'", "'parent'", "itself")


def test_cycle_is_refused(spec):
    # shoulder -> elbow -> shoulder: the first body of a cycle always has a later parent
    spec["bodies"][0]["parent"] = 1
    spec["bodies"][1]["parent"] = 0
    raises(spec, "'shoulder'", "'parent'", "cycle")


@pytest.mark.parametrize("parent", [-2, 7, "shoulder", 0.0, True])
def test_parent_must_be_an_earlier_index(spec, parent):
    spec["bodies"][1]["parent"] = parent
    raises(spec, "'elbow'", "'parent'")


@pytest.mark.parametrize("mass", [0.0, -1.0])
def test_non_positive_mass_is_refused(spec, mass):
    spec["bodies"][1]["mass"] = mass
    raises(spec, "'elbow'", "'mass'", "positive")


@pytest.mark.parametrize("inertia, words", [
    ([[1, 0.5, 0], [0, 1, 0], [0, 0, 1]], ["symmetric"]),
    ([[1, 0, 0], [0, -1, 0], [0, 0, 1]], ["positive definite"]),
    ([[1, 0, 0], [0, 0, 0], [0, 0, 1]], ["positive definite"]),
    ([1.0, 1.0, 3.0], ["triangle inequality"]),                 # a diagonal given as 3 moments
    ([[1, 0, 0], [0, 1, 0], [0, 0, 2.5]], ["triangle inequality"]),
])
def test_bad_inertia_is_refused(spec, inertia, words):
    spec["bodies"][1]["inertia"] = inertia
    raises(spec, "'elbow'", "'inertia'", *words)


def test_inertia_on_the_triangle_boundary_is_accepted(spec):
    spec["bodies"][1]["inertia"] = [1.0, 1.0, 2.0]  # a thin disc: I1 + I2 = I3 exactly
    assert model_from_dict(spec).bodies[1].inertia[2, 2] == 2.0


@pytest.mark.parametrize("where, field", [
    ("body", "mass"), ("body", "inertia"), ("body", "T_joint_body"), ("joint", "T_parent_joint"),
    ("joint", "axis"), ("joint", "stiffness"),
])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_values_are_refused(spec, where, field, bad):
    target = spec["bodies"][1] if where == "body" else spec["bodies"][1]["joint"]
    value = np.array(target.get(field, 1.0), dtype=float)
    value.flat[0] = bad
    target[field] = value.tolist()
    raises(spec, "'elbow'", field, "NaN or infinite")


def test_wrong_format_tag_is_refused(spec):
    spec["format"] = "redmax/0"
    raises(spec, "'format'", SCENE_FORMAT, "redmax/0")


def test_duplicate_names_are_refused(spec):
    spec["bodies"][1]["name"] = "shoulder"
    raises(spec, "'shoulder'", "'name'", "repeats")


@pytest.mark.parametrize("key, field", [("stiffness", "stiffness"), ("damping", "damping"),
                                        ("rest", "rest")])
def test_wrong_length_joint_parameter_is_refused(spec, key, field):
    spec["bodies"][1]["joint"][key] = [1.0, 2.0]
    raises(spec, "'elbow'", field, "(1,)", "(2,)")


def test_negative_stiffness_is_refused(spec):
    spec["bodies"][1]["joint"]["stiffness"] = -1.0
    raises(spec, "'elbow'", "'stiffness'", "non-negative")


def test_joint_frame_may_sit_in_the_body_but_not_twice(spec):
    T = np.eye(4)
    T[0, 3] = 0.7
    spec["bodies"][1]["joint"].pop("T_parent_joint")
    spec["bodies"][1]["T_parent_joint"] = T.tolist()
    np.testing.assert_array_equal(model_from_dict(spec).T_parent_joint[1], T)
    spec["bodies"][1]["joint"]["T_parent_joint"] = I4
    raises(spec, "'elbow'", "'T_parent_joint'", "twice")


def test_body_constructor_names_body_and_field():
    with pytest.raises(ValueError, match="'arm'.*'mass'"):
        Body("arm", -1, Revolute(), np.eye(4), np.eye(4), -2.0, np.eye(3))
    with pytest.raises(ValueError, match="'arm'.*'joint'"):
        Body("arm", -1, "revolute", np.eye(4), np.eye(4), 1.0, np.eye(3))


# --- the tree: DOF slices, ancestors, index, children -----------------------------------------

@pytest.fixture
def branching():
    """root(planar, 2) -> {left(revolute, 1) -> left_tip(translational, 3), right(fixed, 0)}."""
    spec = {"bodies": [
        spec_body("root", -1, joint={"type": "planar", "plane": [[1, 0], [0, 1], [0, 0]]}),
        spec_body("left", 0),
        spec_body("right", 0, joint={"type": "fixed"}),
        spec_body("left_tip", 1, joint={"type": "translational"}),
    ]}
    return model_from_dict(spec)


def test_dof_slices_follow_body_order(branching):
    assert branching.nq == 6
    assert branching.dofs == (slice(0, 2), slice(2, 3), slice(3, 3), slice(3, 6))


def test_ancestors_mark_the_joints_on_the_path_to_the_root(branching):
    expected = np.array([[1, 1, 0, 0, 0, 0],
                         [1, 1, 1, 0, 0, 0],
                         [1, 1, 0, 0, 0, 0],      # a fixed joint adds no column
                         [1, 1, 1, 1, 1, 1]], dtype=bool)
    np.testing.assert_array_equal(branching.ancestors, expected)


def test_ancestors_are_the_sparsity_of_the_jacobian(rng):
    from redmax_edu.jacobian import jacobian

    model = random_tree(rng, 8)
    J = jacobian(model, rng.standard_normal(model.nq)).reshape(model.n, 6, model.nq)
    nonzero = np.abs(J).max(axis=1) > 0
    np.testing.assert_array_equal(nonzero, model.ancestors)


def test_index_and_children(branching):
    assert branching.index("left_tip") == 3
    assert branching.children(0) == (1, 2)
    assert branching.children(1) == (3,)
    assert branching.children(3) == ()
    assert branching.children(-1) == (0,)
    with pytest.raises(ValueError, match="no body named 'elbow'.*root, left, right, left_tip"):
        branching.index("elbow")


def test_model_arrays_are_read_only(branching):
    with pytest.raises(ValueError):
        branching.ancestors[0, 0] = False
    with pytest.raises(ValueError):
        branching.spatial_inertias[0, 0, 0] = 5.0


# --- round trip and state checks ---------------------------------------------------------------

def test_to_dict_round_trip_gives_identical_dynamics(rng):
    model = random_tree(rng, 7, gravity=[0.3, -1.0, -9.0])
    bodies = list(model.bodies)
    assert bodies[2].joint.kind == "planar"
    bodies[2] = replace(bodies[2], stiffness=3.0, damping=0.5, q_rest=0.2, body_damping=0.1)
    model = Model(bodies, model.gravity)
    again = model_from_dict(copy.deepcopy(model.to_dict()))
    assert again.names == model.names and again.parents == model.parents
    q, qdot = random_state(rng, model)
    tau = rng.standard_normal(model.nq)
    # reading re-normalises joint axes, which may change their last bit: compare to 1e-13, not bitwise
    close = dict(rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(forward_kinematics(again, q).E_wi, forward_kinematics(model, q).E_wi, **close)
    np.testing.assert_allclose(mass_matrix(again, q), mass_matrix(model, q), **close)
    for f in (forward_dynamics, reduced_forces):
        np.testing.assert_allclose(f(again, q, qdot, tau), f(model, q, qdot, tau), **close)
    assert potential_energy(again, q) == pytest.approx(potential_energy(model, q), rel=1e-13)
    # the round trip is not vacuous: the joint spring made it through
    assert again.stiffness[model.dofs[2]].tolist() == [3.0, 3.0]


def test_check_state_accepts_the_right_shapes(branching):
    q = branching.check_state([0.0] * 6)
    assert q.dtype == float and q.shape == (6,)
    q, qdot = branching.check_state(np.zeros(6), np.ones(6))
    assert qdot.shape == (6,)


@pytest.mark.parametrize("q, qdot, words", [
    (np.zeros(5), None, ["'q'", "(6,)", "(5,)"]),
    (np.zeros(6), np.zeros(7), ["'qdot'", "(6,)", "(7,)"]),
    (np.full(6, np.nan), None, ["'q'", "NaN"]),
    (np.zeros(6), np.full(6, np.inf), ["'qdot'", "infinite"]),
    (np.zeros((6, 1)), None, ["'q'", "(6, 1)"]),
    (["a"] * 6, None, ["'q'", "numeric"]),
])
def test_check_state_errors_name_the_argument(branching, q, qdot, words):
    pattern = "".join(f"(?=.*{re.escape(w)})" for w in words)
    with pytest.raises(ValueError, match=pattern):
        branching.check_state(q, qdot)


def test_model_needs_bodies_of_the_right_type():
    with pytest.raises(ValueError, match="at least one body"):
        Model([])
    with pytest.raises(ValueError, match=r"bodies\[0\] must be a Body"):
        Model([{"name": "arm"}])
