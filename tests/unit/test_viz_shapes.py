"""Unit tests of redmax_edu.viz.shapes: wireframes lie on the surfaces they draw."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from redmax_edu.inertia import box_mesh
from redmax_edu.lie import inv_se3, random_transform
from redmax_edu.viz.draw import draw_scene
from redmax_edu.viz.scene import Path, Scene, cube_bounds
from redmax_edu.viz.shapes import capsule_wireframe, cylinder_wireframe, mesh_edges


def local_points(pts, E):
    """The non-gap points of a placed polyline, back in the shape's own frame."""
    pts = pts[~np.isnan(pts).any(axis=1)]
    Einv = inv_se3(E)
    return pts @ Einv[:3, :3].T + Einv[:3, 3]


def test_cylinder_wireframe_lies_on_the_cylinder_surface(rng):
    E = random_transform(rng)
    local = local_points(cylinder_wireframe(E, 0.3, 1.2, segments=16, lines=6), E)
    # every drawn point is on the side (rho = r) and within the caps; round-off of the transform ~1e-15
    np.testing.assert_allclose(np.hypot(local[:, 0], local[:, 1]), 0.3, atol=1e-12)
    assert np.all(np.abs(local[:, 2]) <= 0.6 + 1e-12)
    assert np.isclose(local[:, 2].max(), 0.6) and np.isclose(local[:, 2].min(), -0.6)


@pytest.mark.parametrize("length", [0.0, 0.8])
def test_capsule_wireframe_lies_on_the_capsule_surface(rng, length):
    E, r = random_transform(rng), 0.25
    local = local_points(capsule_wireframe(E, r, length), E)
    # distance to the axis segment from -L/2 to L/2 is r for every point of a capsule's surface
    z = np.clip(local[:, 2], -length / 2, length / 2)
    dist = np.linalg.norm(local - np.column_stack([np.zeros((len(z), 2)), z]), axis=1)
    np.testing.assert_allclose(dist, r, atol=1e-12)
    assert np.isclose(local[:, 2].max(), length / 2 + r)


def test_mesh_edges_draws_each_undirected_edge_once():
    V, F = box_mesh([1.0, 2.0, 3.0])
    pts = mesh_edges(V, F)
    assert pts.shape == (3 * 18, 3)  # 12 box edges + 6 diagonals
    assert np.isnan(pts[2::3]).all()
    ends = {tuple(sorted(map(tuple, pts[k:k + 2]))) for k in range(0, len(pts), 3)}
    assert len(ends) == 18


def test_wireframes_are_drawable_scene_paths():
    pts = cylinder_wireframe(np.eye(4), 0.1, 0.5)
    scene = Scene(items=(Path(pts, "rod"),), bounds=cube_bounds(pts[~np.isnan(pts).any(axis=1)]))
    ax = draw_scene(scene)
    (line,) = ax.get_lines()
    assert np.isnan(line.get_data_3d()[0]).sum() == np.isnan(pts[:, 0]).sum()  # the gaps survive
    plt.close("all")


@pytest.mark.parametrize(("make", "match"), [
    (lambda: cylinder_wireframe(np.eye(4), -0.1, 1.0), "'radius' must be positive"),
    (lambda: cylinder_wireframe(np.eye(4), 0.1, 0.0), "'height' must be positive"),
    (lambda: capsule_wireframe(np.eye(4), 0.1, -1.0), "'length' must be >= 0"),
    (lambda: capsule_wireframe(2 * np.eye(4), 0.1, 1.0), "'E' is not a rigid transform"),
    (lambda: mesh_edges(np.zeros((3, 2)), [[0, 1, 2]]), "'vertices' must have shape"),
    (lambda: mesh_edges(np.zeros((3, 3)), [[0.0, 1.0, 2.0]]), "'faces' must be integers"),
])
def test_wireframes_reject_bad_arguments(make, match):
    with pytest.raises(ValueError, match=match):
        make()
