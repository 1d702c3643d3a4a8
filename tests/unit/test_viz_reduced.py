"""Unit tests of redmax_edu.viz.reduced: pictures of a Model at q, and animations of a motion."""

import numpy as np
import pytest

from redmax_edu.joints import Prismatic, Revolute
from redmax_edu.kinematics import forward_kinematics
from redmax_edu.model import Body, Model
from redmax_edu.viz.draw import draw_scene
from redmax_edu.viz.reduced import (
    body_strokes,
    draw_model_planar,
    model_length_scale,
    model_scene,
    trajectory_animation,
    trajectory_scenes,
)
from redmax_edu.viz.scene import Frame, Path


def _T(x=0.0, y=0.0, z=0.0):
    E = np.eye(4)
    E[:3, 3] = [x, y, z]
    return E


def _tree(shape=None):
    """A root rod with two children (a branching tree), the second on a sliding joint."""
    inertia = np.diag([0.1, 0.1, 0.02])
    return Model([
        Body("root", -1, Revolute([0, 1, 0]), _T(), _T(z=-0.5), 1.0, inertia, shape=shape),
        Body("left", 0, Revolute([1, 0, 0]), _T(z=-1.0), _T(z=-0.4), 1.0, inertia),
        Body("slider", 0, Prismatic([1, 0, 0]), _T(x=0.2, z=-1.0), _T(z=-0.3), 1.0, inertia),
    ])


def _strokes(points):
    """Split a NaN-separated polyline into its strokes."""
    breaks = np.flatnonzero(np.isnan(points[:, 0]))
    starts = np.concatenate([[0], breaks + 1])
    return [points[a:b] for a, b in zip(starts, np.concatenate([breaks, [len(points)]]), strict=True)
            if b > a]


def test_items_keep_their_order_and_labels_for_every_q(rng):
    model = _tree()
    labels = None
    for _ in range(4):
        scene = model_scene(model, rng.standard_normal(model.nq), body_frames=True)
        now = [(type(item).__name__, item.label) for item in scene.items]
        assert labels is None or now == labels
        labels = now
    assert labels[:4] == [("Frame", "0"), ("Path", "root"), ("Frame", "J1"), ("Frame", "B1")]


def test_frames_are_the_forward_kinematics_frames(rng):
    model = _tree()
    q = rng.standard_normal(model.nq)
    kin = forward_kinematics(model, q)
    frames = {item.label: item.E for item in model_scene(model, q, body_frames=True).items
              if isinstance(item, Frame)}
    for i in range(model.n):
        np.testing.assert_allclose(frames[f"J{i + 1}"], kin.E_wj[i], atol=1e-14)
        np.testing.assert_allclose(frames[f"B{i + 1}"], kin.E_wi[i], atol=1e-14)


def test_sticks_join_joint_centre_of_mass_and_children(rng):
    model = _tree()
    q = rng.standard_normal(model.nq)
    kin = forward_kinematics(model, q)
    root = _strokes(body_strokes(model, kin, 0))
    # joint -> centre of mass, then one stroke to each child's attachment point
    np.testing.assert_allclose(root[0][1], kin.E_wj[0][:3, 3], atol=1e-14)
    np.testing.assert_allclose(root[0][2], kin.E_wi[0][:3, 3], atol=1e-14)
    np.testing.assert_allclose(root[1][1], kin.E_wj[1][:3, 3], atol=1e-14)  # revolute: same point
    attach = (kin.E_wj[0] @ model.T_parent_joint[2])[:3, 3]
    np.testing.assert_allclose(root[2][1], attach, atol=1e-14)
    # the slider's first stroke runs from its attachment to its (slid) joint: length |q_slider|
    slider = _strokes(body_strokes(model, kin, 2))
    assert np.linalg.norm(slider[0][1] - slider[0][0]) == pytest.approx(abs(q[2]), abs=1e-12)
    # a leaf is a rod centred on its centre of mass
    leaf = _strokes(body_strokes(model, kin, 1))
    joint, com, end = leaf[0][1], leaf[0][2], leaf[1][1]
    np.testing.assert_allclose(0.5 * (joint + end), com, atol=1e-14)


def test_a_cuboid_shape_is_drawn_as_its_box_at_the_body_pose(rng):
    sides = [0.2, 0.4, 1.0]
    model = _tree(shape={"type": "cuboid", "sides": sides})
    q = rng.standard_normal(model.nq)
    kin = forward_kinematics(model, q)
    pts = body_strokes(model, kin, 0)
    pts = pts[~np.isnan(pts[:, 0])]
    local = (pts - kin.E_wi[0][:3, 3]) @ kin.E_wi[0][:3, :3]
    np.testing.assert_allclose(np.abs(local).max(axis=0), 0.5 * np.array(sides), atol=1e-12)
    assert len(pts) == 24  # 12 edges


@pytest.mark.parametrize("shape", [{"type": "sphere", "radius": 0.1},
                                   {"type": "cylinder", "radius": 0.1, "height": 1.0},
                                   {"type": "capsule", "radius": 0.1, "length": 0.8},
                                   {"type": "mesh", "source": "bunny.obj"}])
def test_other_shapes_stay_within_their_size_of_the_centre_of_mass(shape, rng):
    model = _tree(shape=shape)
    kin = forward_kinematics(model, rng.standard_normal(model.nq))
    pts = body_strokes(model, kin, 0)
    dist = np.linalg.norm(pts[~np.isnan(pts[:, 0])] - kin.E_wi[0][:3, 3], axis=1)
    reach = {"sphere": 0.1, "cylinder": np.hypot(0.1, 0.5), "capsule": 0.5,
             "mesh": np.hypot(0.2, 0.5)}  # no wireframe: a stick to the farthest child
    assert dist.max() <= reach[shape["type"]] + 1e-12
    assert dist.max() >= reach[shape["type"]] - 0.02  # the whole shape, not a point of it


def test_length_scale_and_bounds_contain_everything():
    model = _tree()
    assert model_length_scale(model) == pytest.approx(np.median([1.0, np.hypot(0.2, 1.0), 0.5, 0.4,
                                                                  0.3]))
    scene = model_scene(model, np.zeros(3))
    b = scene.bounds
    for item in scene.items:
        if isinstance(item, Path):
            pts = item.points[~np.isnan(item.points[:, 0])]
            assert np.all(pts >= b[:, 0] - 1e-12) and np.all(pts <= b[:, 1] + 1e-12)
    draw_scene(scene)  # renders


def test_trajectory_scenes_share_one_box_and_pick_at_most_max_frames():
    model = _tree()
    t = np.linspace(0.0, 1.0, 101)
    q = np.column_stack([np.sin(t), t, 0.3 * t])
    scenes = trajectory_scenes(model, t, q, max_frames=11)
    assert len(scenes) == 11
    assert scenes[-1].notes == ("t = 1.00 s",)
    assert all(np.array_equal(s.bounds, scenes[0].bounds) for s in scenes)
    with pytest.raises(ValueError, match="shape"):
        trajectory_scenes(model, t, q[:, :2])


def test_trajectory_animation_is_a_kernel_free_player():
    model = _tree()
    t = np.linspace(0.0, 0.5, 6)
    html = trajectory_animation(model, t, np.outer(t, [1.0, -1.0, 0.2]), max_frames=6)
    assert "<img" in html and "animation" in html.lower()
    assert "cdnjs" not in html and "font-awesome" not in html


def test_planar_drawing_is_the_projection_of_the_sticks(rng):
    model = _tree()
    q = rng.standard_normal(model.nq)
    kin = forward_kinematics(model, q)
    ax = draw_model_planar(model, q, plane="xz", color="k", label="tree")
    lines = ax.get_lines()
    assert len(lines) == model.n
    for i, line in enumerate(lines):
        pts = body_strokes(model, kin, i)
        np.testing.assert_array_equal(line.get_xdata(), pts[:, 0])
        np.testing.assert_array_equal(line.get_ydata(), pts[:, 2])
    assert [ln.get_label() for ln in lines][0] == "tree"
    with pytest.raises(ValueError, match="plane"):
        draw_model_planar(model, q, plane="xw")


def _with_springs():
    """The tree with a cable from a world point to the slider (3 nodes, 1 free) and a strut
    between the root and the left body (2 nodes, none free)."""
    from redmax_edu.deformable import DeformableSpring
    from redmax_edu.maximal.forces import Attachment

    cable = DeformableSpring([[1.0, 0.0, 0.0], [0.8, 0.0, -0.7], [0.2, 0.0, -1.3]], 10.0, 0.3,
                             first=Attachment(-1, [1.0, 0.0, 0.0]), last=Attachment(2, [0.0, 0.0, 0.0]),
                             name="cable")
    strut = DeformableSpring([[0.0, 0.0, -0.5], [0.0, 0.0, -1.4]], 10.0, 0.2,
                             first=Attachment(0, [0.0, 0.0, 0.0]), last=Attachment(1, [0.0, 0.0, 0.0]),
                             name="strut")
    return _tree().with_deformables([cable, strut])


def test_deformables_are_drawn_through_their_nodes_with_a_marker_on_each(rng):
    from redmax_edu.jacobian import node_kinematics
    from redmax_edu.viz.scene import Marker

    model = _with_springs()
    q = model.coordinates(rng.uniform(-0.5, 0.5, model.nr)) + 0.05 * rng.standard_normal(model.nq)
    scene = model_scene(model, q)
    nodes = node_kinematics(model, q)
    paths = {item.label: item for item in scene.items if isinstance(item, Path)}
    markers = [item.position for item in scene.items if isinstance(item, Marker)]
    for spring, kin in zip(model.deformables, nodes, strict=True):
        np.testing.assert_array_equal(paths[spring.name].points, kin.x)
    np.testing.assert_array_equal(np.array(markers), np.concatenate([k.x for k in nodes]))
    # the attached node of the cable sits on the slider's body point; the bounds contain every node
    E = forward_kinematics(model, q).E_wi
    np.testing.assert_allclose(paths["cable"].points[-1], E[2][:3, 3], atol=1e-14)
    b = scene.bounds
    assert np.all(np.array(markers) >= b[:, 0]) and np.all(np.array(markers) <= b[:, 1])
    # the same items in the same order for every q, and none without deformables=True
    labels = [(type(i).__name__, i.label) for i in scene.items]
    again = model_scene(model, model.coordinates(rng.uniform(-0.5, 0.5, model.nr)))
    assert [(type(i).__name__, i.label) for i in again.items] == labels
    bare = model_scene(model, q, deformables=False)
    assert not any(isinstance(i, Marker) for i in bare.items) and "cable" not in [i.label for i in bare.items]
    draw_scene(scene)  # renders
    t = np.linspace(0.0, 0.2, 3)
    html = trajectory_animation(model, t, np.tile(q, (3, 1)), max_frames=3)
    assert "<img" in html


def test_planar_drawing_adds_one_line_per_deformable_through_its_nodes(rng):
    from redmax_edu.jacobian import node_kinematics

    model = _with_springs()
    q = model.coordinates(rng.uniform(-0.5, 0.5, model.nr))
    lines = draw_model_planar(model, q, plane="xz").get_lines()
    assert len(lines) == model.n + len(model.deformables)
    for line, kin in zip(lines[model.n:], node_kinematics(model, q), strict=True):
        np.testing.assert_array_equal(line.get_xdata(), kin.x[:, 0])
        np.testing.assert_array_equal(line.get_ydata(), kin.x[:, 2])
        assert line.get_marker() == "o"
