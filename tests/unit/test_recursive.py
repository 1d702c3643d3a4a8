"""Unit tests of redmax_edu.recursive: the O(n) sweeps equal the dense path of redmax_edu.dynamics.

Error measure: ``max|a - b| / max(1, max|b|)``. Both paths are exact, so they agree to round-off
(~1e-14 here); 1e-10 leaves room for it, while a dropped term shows up at O(1e-1).
"""

from dataclasses import replace

import numpy as np
import pytest

from redmax_edu.dynamics import inverse_dynamics
from redmax_edu.jacobian import jacobian_and_derivative
from redmax_edu.lie import ad_unchecked, random_transform
from redmax_edu.maximal.forces import Attachment, PointSpring
from redmax_edu.model import Body, Model
from redmax_edu.recursive import body_accelerations, recursive_inverse_dynamics

from .random_trees import random_inertia, random_state, random_tree
from .test_joints import all_joints
from .test_joints import random_state as random_joint_state

TOL = 1e-10


def relative_error(a, b):
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def every_joint_tree(rng, **model_options):
    """A branching tree with one body on every joint type of the library (every chart too)."""
    bodies, q, qdot = [], [], []
    for i, (name, joint) in enumerate(sorted(all_joints(rng).items())):
        parent = -1 if i == 0 else int(rng.integers(i))
        mass, inertia = random_inertia(rng)
        bodies.append(Body(f"{name}", parent, joint, random_transform(rng, 0.3), random_transform(rng, 0.3),
                           mass, inertia))
        qi, vi = random_joint_state(joint, rng)
        q.append(qi)
        qdot.append(vi)
    return Model(bodies, **model_options), np.concatenate(q), np.concatenate(qdot)


@pytest.fixture(params=range(3), ids=lambda k: f"seed{k}")
def case(request):
    """A tree of every joint type with joint springs and dampers and a point spring, at a random state."""
    rng = np.random.default_rng(request.param)
    model, q, qdot = every_joint_tree(rng)
    bodies = [replace(b, stiffness=rng.uniform(0, 5, b.joint.ndof), damping=rng.uniform(0, 1, b.joint.ndof),
                      body_damping=0.1) for b in model.bodies]
    spring = PointSpring(Attachment(0, [0.1, 0, 0]), Attachment(model.n - 1, [0, 0.1, 0]), stiffness=20.0)
    model = Model(bodies, forces=[spring])
    return model, q, qdot, rng.standard_normal(model.nq)


def test_body_accelerations_are_j_qddot_plus_jdot_qdot(case):
    model, q, qdot, qddot = case
    J, Jdot = jacobian_and_derivative(model, q, qdot)
    phidot, _ = body_accelerations(model, q, qdot, qddot)
    assert relative_error(phidot.ravel(), J @ qddot + Jdot @ qdot) < TOL


def test_recursive_inverse_dynamics_equals_the_dense_one(case):
    model, q, qdot, qddot = case
    dense = inverse_dynamics(model, q, qdot, qddot)
    assert relative_error(recursive_inverse_dynamics(model, q, qdot, qddot), dense) < TOL


@pytest.mark.parametrize("seed", range(5))
def test_recursive_inverse_dynamics_on_random_chains_and_trees(seed):
    rng = np.random.default_rng(100 + seed)
    model = random_tree(rng, n=8, branching=seed % 2 == 0)
    q, qdot = random_state(rng, model)
    qddot = rng.standard_normal(model.nq)
    dense = inverse_dynamics(model, q, qdot, qddot)
    assert relative_error(recursive_inverse_dynamics(model, q, qdot, qddot), dense) < TOL


def test_the_comparison_catches_a_dropped_velocity_product(case, monkeypatch):
    """Without the -ad(psi) Ad phi_p term of the forward sweep, the torques are far off."""
    import redmax_edu.recursive as recursive

    model, q, qdot, qddot = case
    dense = inverse_dynamics(model, q, qdot, qddot)
    monkeypatch.setattr(recursive, "ad_unchecked", lambda psi: 0.0 * ad_unchecked(psi))
    assert relative_error(recursive.recursive_inverse_dynamics(model, q, qdot, qddot), dense) > 1e-3


@pytest.mark.parametrize(("args", "name"), [
    (([0.0], [0.0], [0.0, 1.0]), "qddot"),
    (([0.0], [0.0], [np.nan]), "qddot"),
    (([0.0], [0.0], ["a"]), "qddot"),
    (([0.0, 1.0], [0.0], [0.0]), "q"),
])
def test_bad_input_names_the_argument(args, name):
    T = np.eye(4)
    T[2, 3] = -1.0
    from redmax_edu.joints import Revolute

    pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    with pytest.raises(ValueError, match=name):
        recursive_inverse_dynamics(pendulum, *args)


def test_a_non_model_is_refused():
    with pytest.raises(ValueError, match="model"):
        recursive_inverse_dynamics("pendulum", [0.0], [0.0], [0.0])
