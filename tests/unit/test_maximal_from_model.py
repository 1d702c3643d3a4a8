"""system_from_model: a reduced-coordinate model written as free bodies and joint rows (§1.10, §2.1)."""

from dataclasses import replace

import numpy as np
import pytest

from redmax_edu.jacobian import jacobian
from redmax_edu.joints import SphericalExp
from redmax_edu.maximal.constraints import Joint
from redmax_edu.maximal_model import system_from_model, z_along
from redmax_edu.model import Model
from tests.unit.random_trees import random_joint, random_state, random_tree


def rejoint(body, joint):
    return replace(body, joint=joint, stiffness=0.0, damping=0.0, q_rest=None)


def tree(rng, n=7):
    model = random_tree(rng, n, kinds=("revolute", "prismatic", "fixed"))
    bodies = list(model.bodies)
    bodies[-1] = rejoint(bodies[-1], SphericalExp())
    return Model(bodies)


def rows(system, E):
    return np.vstack([j.jacobian(E) for j in system.joints])


def test_joint_rows_annihilate_exactly_the_model_motions(rng):
    """The rows G of every joint vanish on the body twists J qdot the model allows (G J = 0), and
    they leave exactly nq free directions (rank G = 6n - nq): the maximal system moves as the model.
    Joints have random axes, so a frame whose z is not the axis (the mutant) breaks G J = 0."""
    for _ in range(5):
        model = tree(rng)
        q, qdot = random_state(rng, model)
        system, E, phi = system_from_model(model, q, qdot)
        G, J = rows(system, E), jacobian(model, q)
        scale = np.abs(G).max() * np.abs(J).max()
        assert np.abs(G @ J).max() < 1e-12 * scale
        assert np.linalg.matrix_rank(G) == 6 * model.n - model.nq
        np.testing.assert_allclose(phi.ravel(), J @ qdot, atol=1e-12)
        assert max(np.abs(j.error(E)).max() for j in system.joints) < 1e-12
        # mutant: revolute and prismatic frames left as the joint frame (z not along the axis)
        wrong = [Joint.at(j.kind, j.a, j.b, model_frame(model, q, j.a), E) for j in system.joints]
        G_wrong = np.vstack([j.jacobian(E) for j in wrong])
        assert np.abs(G_wrong @ J).max() > 1e-3 * scale


def model_frame(model, q, i):
    from redmax_edu.kinematics import forward_kinematics

    return forward_kinematics(model, q).E_wj[i]


def test_z_along_puts_the_axis_third(rng):
    for _ in range(10):
        axis = rng.standard_normal(3)
        R = z_along(axis)
        np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-14)
        assert np.linalg.det(R) > 0
        np.testing.assert_allclose(R[:, 2], axis / np.linalg.norm(axis), atol=1e-14)


@pytest.mark.parametrize(("change", "words"), [
    ("planar joint", "body 'b0': a planar joint"),
    ("non-diagonal inertia", "body 'b0': its inertia is not diagonal"),
    ("joint spring", "joint springs or dampers"),
])
def test_what_has_no_maximal_counterpart_is_a_value_error(rng, change, words):
    model = tree(rng, 3)
    first = model.bodies[0]
    if change == "planar joint":
        first = rejoint(first, random_joint(rng, "planar"))
    elif change == "non-diagonal inertia":
        first = replace(first, inertia=first.inertia + 0.01 * (np.ones((3, 3)) - np.eye(3)))
    else:
        first = replace(first, stiffness=np.ones(first.joint.ndof))
    model = Model([first, *model.bodies[1:]])
    with pytest.raises(ValueError, match=words):
        system_from_model(model, np.zeros(model.nq), np.zeros(model.nq))
