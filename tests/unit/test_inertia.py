"""Unit tests of redmax_edu.inertia: shapes, meshes, composite bodies, principal axes (§1.7).

The references are independent of the code under test: textbook values computed by hand,
clouds of point masses (whose mass properties are plain sums), meshes that converge to the
smooth shapes, and the library's own functions cross-checked against each other only where
they take different routes (divergence theorem vs closed form, adjoint sums vs point sums).
"""

import numpy as np
import pytest

from redmax_edu.inertia import (
    MassProperties,
    box_mesh,
    capsule,
    composite,
    cuboid,
    cylinder,
    from_spatial_inertia,
    mesh,
    sphere,
)
from redmax_edu.lie import adjoint, exp_se3, gamma, inv_se3, random_transform

# --- helpers: point clouds, meshes ------------------------------------------------------------


def cloud_properties(points, masses):
    """Mass, centre of mass and inertia about it of point masses, summed directly."""
    m = masses.sum()
    c = masses @ points / m
    s = points - c
    J = sum(mk * (sk @ sk * np.eye(3) - np.outer(sk, sk)) for mk, sk in zip(masses, s, strict=True))
    return m, c, J


def cloud_spatial_inertia(points, masses):
    """Kinetic-energy matrix of point masses: sum of m_k Gamma(r_k)^T Gamma(r_k) (Eq. 1.12)."""
    return sum(mk * gamma(r).T @ gamma(r) for mk, r in zip(masses, points, strict=True))


def random_cloud(rng, n=40, spread=(1.0, 0.6, 0.3)):
    points = rng.standard_normal((n, 3)) * spread + rng.standard_normal(3)
    masses = rng.uniform(0.1, 1.0, n)
    return points, masses


def random_properties(rng, name=""):
    """Valid mass properties with a full (non-diagonal) inertia, from a random point cloud."""
    return MassProperties(*cloud_properties(*random_cloud(rng)), name=name)


def icosphere(radius, levels):
    """A closed, outward-oriented triangle mesh of a sphere: an icosahedron subdivided ``levels`` times."""
    t = (1 + 5**0.5) / 2
    V = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t),
         (0, -1, -t), (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    F = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4),
         (11, 10, 2), (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8),
         (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    V = [np.array(v, float) / np.linalg.norm(v) for v in V]
    for _ in range(levels):
        midpoints, finer = {}, []

        def mid(i, j, V=V, midpoints=midpoints):
            key = (min(i, j), max(i, j))
            if key not in midpoints:
                p = V[i] + V[j]
                V.append(p / np.linalg.norm(p))
                midpoints[key] = len(V) - 1
            return midpoints[key]

        for a, b, c in F:
            ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
            finer += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        F = finer
    return radius * np.array(V), np.array(F)


def prism_mesh(radius, height, n):
    """A closed mesh of the regular n-gon prism inscribed in a cylinder (axis z, centred)."""
    angles = 2 * np.pi * np.arange(n) / n
    ring = np.column_stack([radius * np.cos(angles), radius * np.sin(angles)])
    V = np.vstack([np.column_stack([ring, np.full(n, -height / 2)]),
                   np.column_stack([ring, np.full(n, height / 2)]),
                   [[0, 0, -height / 2], [0, 0, height / 2]]])
    bottom, top = 2 * n, 2 * n + 1
    F = []
    for i in range(n):
        j = (i + 1) % n
        F += [(i, j, n + j), (i, n + j, n + i), (bottom, j, i), (top, n + i, n + j)]
    return V, np.array(F)


def moved(V, E):
    return V @ E[:3, :3].T + E[:3, 3]


# --- shapes against textbook values --------------------------------------------------------------


def test_cuboid_matches_hand_computed_values():
    # 1 x 2 x 3 box of mass 12: Ixx = 12 (4 + 9) / 12 = 13, Iyy = 9 + 1 = 10, Izz = 1 + 4 = 5
    box = cuboid([1.0, 2.0, 3.0], mass=12.0)
    assert box.mass == 12.0
    np.testing.assert_allclose(box.inertia, np.diag([13.0, 10.0, 5.0]), rtol=1e-15, atol=0)
    np.testing.assert_array_equal(box.com, 0.0)
    # with a density: m = rho V = 500 * 6
    assert cuboid([1.0, 2.0, 3.0], density=500.0).mass == pytest.approx(3000.0, rel=1e-15)


def test_cylinder_matches_hand_computed_values():
    # m = 2, r = 0.5, h = 3: Izz = m r^2 / 2 = 0.25, Ixx = m (3 r^2 + h^2) / 12 = 2 (0.75 + 9) / 12
    rod = cylinder(0.5, 3.0, mass=2.0)
    np.testing.assert_allclose(rod.inertia, np.diag([1.625, 1.625, 0.25]), rtol=1e-15, atol=0)
    # density: m = rho pi r^2 h
    assert cylinder(0.5, 3.0, density=2.0).mass == pytest.approx(2.0 * np.pi * 0.75, rel=1e-15)


def test_sphere_matches_hand_computed_values():
    # m = 5, r = 2: I = 2/5 m r^2 = 8 about every axis; m = rho 4/3 pi r^3
    ball = sphere(2.0, mass=5.0)
    np.testing.assert_allclose(ball.inertia, 8.0 * np.eye(3), rtol=1e-15, atol=0)
    assert sphere(2.0, density=3.0).mass == pytest.approx(3.0 * 4 / 3 * np.pi * 8, rel=1e-15)


def test_prism_meshes_converge_to_the_cylinder_with_order_2_in_the_number_of_sides():
    # The inscribed n-gon loses area ~ (2 pi^2 / 3) / n^2 of the disc: error ratio 4 per doubling.
    ref = cylinder(0.3, 1.1, density=1.0)
    errors = []
    for n in (16, 32, 64, 128):
        body = mesh(*prism_mesh(0.3, 1.1, n), density=1.0)
        errors.append(np.abs(body.inertia - ref.inertia).max() / ref.inertia.max())
    orders = np.log2(np.array(errors[:-1]) / errors[1:])
    np.testing.assert_allclose(orders, 2.0, atol=0.02)  # observed 1.999-2.000


def test_icosphere_converges_to_the_sphere_with_order_2_in_the_edge_length():
    # Each subdivision halves the edge length. Observed orders (inertia error, levels 1..5):
    # 1.48, 1.85, 1.96, 1.99, 2.00 -- second order, as for the volume of an inscribed polyhedron.
    ref = sphere(0.7, density=1.0)
    errors = []
    for level in range(1, 6):
        body = mesh(*icosphere(0.7, level), density=1.0)
        errors.append(np.abs(body.inertia - ref.inertia).max() / ref.inertia.max())
        assert np.abs(body.com).max() < 1e-15  # symmetric mesh: the COM is at the centre up to round-off
    orders = np.log2(np.array(errors[:-1]) / errors[1:])
    assert orders[-1] == pytest.approx(2.0, abs=0.01)
    assert np.all(np.diff(orders) > 0)  # the order settles from below
    assert errors[-1] < 1e-3


# --- meshes ---------------------------------------------------------------------------------------


def test_mesh_of_a_box_equals_the_cuboid_to_1e_12(rng):
    for _ in range(20):
        sides = rng.uniform(0.1, 3.0, 3)
        box, body = cuboid(sides, density=700.0), mesh(*box_mesh(sides), density=700.0)
        scale = box.inertia.max()
        assert body.mass == pytest.approx(box.mass, rel=1e-13)  # a sum of 12 terms: a few ulps
        assert np.abs(body.com).max() < 1e-12 * sides.max()
        assert np.abs(body.inertia - box.inertia).max() < 1e-12 * scale


def test_mesh_of_a_moved_box_gives_the_transformed_properties(rng):
    for _ in range(20):
        sides, E = rng.uniform(0.1, 2.0, 3), random_transform(rng, scale=5.0)
        V, F = box_mesh(sides)
        body = mesh(moved(V, E), F, mass=3.0)
        expected = cuboid(sides, mass=3.0).transformed(E)
        # the vertices carry round-off ~1e-15 of the translation (~5); the COM and the inertia
        # (computed about the mean vertex) agree far below 1e-12
        np.testing.assert_allclose(body.com, expected.com, rtol=0, atol=1e-12)
        scale = expected.inertia.max()
        np.testing.assert_allclose(body.inertia, expected.inertia, rtol=0, atol=1e-12 * scale)


def test_mesh_far_from_the_origin_keeps_its_accuracy():
    # A box 1e4 from the origin: summing about the mean vertex keeps the inertia accurate where
    # tetrahedra with the origin would cancel terms ~1e8 times larger than the result. Storing
    # 1e4 + 0.15 already rounds the sides by ~1e-12 relative; 1e-9 leaves room for that.
    sides = np.array([0.3, 0.2, 0.1])
    V, F = box_mesh(sides)
    far = mesh(V + 1e4, F, mass=1.0)
    ref = cuboid(sides, mass=1.0).inertia
    np.testing.assert_allclose(far.inertia, ref, rtol=0, atol=1e-9 * ref.max())


def test_box_mesh_is_closed_and_outward():
    V, F = box_mesh([1.0, 2.0, 4.0])
    normals = np.cross(V[F[:, 1]] - V[F[:, 0]], V[F[:, 2]] - V[F[:, 0]])
    centres = V[F].mean(axis=1)
    assert np.all(np.einsum("ij,ij->i", normals, centres) > 0)  # every normal points away from the centre
    assert mesh(V, F, density=1.0).mass == pytest.approx(8.0, rel=1e-15)


# --- capsule ---------------------------------------------------------------------------------------


def hemisphere_about_its_com(radius, density):
    """Textbook values: m = rho 2/3 pi r^3, COM 3r/8 from the flat face, I_axial = 2/5 m r^2,
    I_transverse = (2/5 - 9/64) m r^2 = 83/320 m r^2 about the COM."""
    m = density * 2 / 3 * np.pi * radius**3
    J = m * radius**2 * np.diag([83 / 320, 83 / 320, 2 / 5])
    return MassProperties(m, np.zeros(3), J), 3 * radius / 8


@pytest.mark.parametrize(("radius", "length"), [(0.1, 0.5), (0.4, 0.1), (1.0, 3.0)])
def test_capsule_closed_form_equals_cylinder_plus_two_hemispheres(radius, length):
    rho = 900.0
    cap, offset = hemisphere_about_its_com(radius, rho)
    top, bottom, flip = np.eye(4), np.eye(4), np.diag([1.0, -1.0, -1.0, 1.0])  # flip: dome toward -z
    top[2, 3] = length / 2 + offset
    bottom = flip.copy()
    bottom[2, 3] = -(length / 2 + offset)
    parts = [(cylinder(radius, length, density=rho), np.eye(4)), (cap, top), (cap, bottom)]
    glued, closed = composite(parts), capsule(radius, length, density=rho)
    assert closed.mass == pytest.approx(glued.mass, rel=1e-14)
    assert np.abs(glued.com).max() < 1e-14 * length
    # composite sums three terms through adjoints: round-off ~1e-15 relative
    np.testing.assert_allclose(closed.inertia, glued.inertia, rtol=0, atol=1e-13 * closed.inertia.max())


def test_capsule_of_zero_length_is_a_sphere_and_mass_is_shared_by_volume():
    np.testing.assert_allclose(capsule(0.3, 0.0, mass=2.0).inertia, sphere(0.3, mass=2.0).inertia, rtol=1e-15)
    # with a given total mass, the density is mass / total volume
    r, L, m = 0.2, 0.6, 5.0
    rho = m / (np.pi * r * r * L + 4 / 3 * np.pi * r**3)
    np.testing.assert_allclose(capsule(r, L, mass=m).inertia, capsule(r, L, density=rho).inertia, rtol=1e-14)


# --- spatial inertia ------------------------------------------------------------------------------


def test_spatial_inertia_equals_the_point_cloud_sum_of_gamma_products(rng):
    for _ in range(10):
        points, masses = random_cloud(rng)
        props = MassProperties(*cloud_properties(points, masses))
        # both are sums of 40 terms of size ~10: agreement to ~1e-13 relative
        np.testing.assert_allclose(props.spatial_inertia(), cloud_spatial_inertia(points, masses),
                                   rtol=0, atol=1e-12)


def test_spatial_inertia_kinetic_energy_equals_the_sum_over_points(rng):
    points, masses = random_cloud(rng)
    M = MassProperties(*cloud_properties(points, masses)).spatial_inertia()
    for _ in range(10):
        phi = rng.standard_normal(6)
        omega, nu = phi[:3], phi[3:]
        speeds2 = np.sum((np.cross(omega, points) + nu) ** 2, axis=1)  # |omega x r_k + nu|^2
        T_points = 0.5 * masses @ speeds2
        assert 0.5 * phi @ M @ phi == pytest.approx(T_points, rel=1e-12)  # sums of ~40 positive terms


def test_spatial_inertia_at_the_com_on_principal_axes_is_diagonal(rng):
    props = random_properties(rng)
    moments, E_f_p = props.principal()
    M_p = props.transformed(inv_se3(E_f_p)).spatial_inertia()
    np.testing.assert_allclose(M_p, np.diag(np.concatenate([moments, np.full(3, props.mass)])),
                               rtol=0, atol=1e-13 * moments.max())  # eigen-decomposition round-off


def test_offset_spatial_inertia_is_the_diagonal_one_moved_by_an_adjoint(rng):
    # M_F = A^T M_p A with A = adjoint(E_p_F): kinetic energy computed in either frame
    props = random_properties(rng)
    moments, E_f_p = props.principal()
    A = adjoint(inv_se3(E_f_p))
    M_diag = np.diag(np.concatenate([moments, np.full(3, props.mass)]))
    np.testing.assert_allclose(props.spatial_inertia(), A.T @ M_diag @ A, rtol=0,
                               atol=1e-12 * np.abs(props.spatial_inertia()).max())


def test_from_spatial_inertia_inverts_spatial_inertia(rng):
    for _ in range(10):
        props = random_properties(rng)
        back = from_spatial_inertia(props.spatial_inertia())
        assert back.mass == pytest.approx(props.mass, rel=1e-15)
        np.testing.assert_allclose(back.com, props.com, rtol=0, atol=1e-14)
        # J - m[c][c] + m[c][c] cancels terms of size m|c|^2 ~ 30: round-off ~1e-14
        np.testing.assert_allclose(back.inertia, props.inertia, rtol=0, atol=1e-12)


def test_spatial_inertia_of_a_point_mass_has_the_gamma_form():
    # a tiny sphere is nearly a point: its coupling block is m [c] with the sign of Eq. (1.12)
    c = np.array([0.0, 0.0, 2.0])
    M = MassProperties(1.0, c, 1e-6 * np.eye(3)).spatial_inertia()
    np.testing.assert_allclose(M - np.diag([1e-6] * 3 + [0.0] * 3), gamma(c).T @ gamma(c), atol=1e-15)


# --- transformed and principal --------------------------------------------------------------------


def test_transformed_moves_the_com_and_turns_the_inertia(rng):
    points, masses = random_cloud(rng)
    E = random_transform(rng, scale=2.0)
    before = MassProperties(*cloud_properties(points, masses))
    after = MassProperties(*cloud_properties(moved(points, E), masses))
    moved_props = before.transformed(E)
    np.testing.assert_allclose(moved_props.com, after.com, rtol=0, atol=1e-13)
    np.testing.assert_allclose(moved_props.inertia, after.inertia, rtol=0, atol=1e-12)
    # and transformed(inv(E)) undoes it
    np.testing.assert_allclose(moved_props.transformed(inv_se3(E)).inertia, before.inertia, atol=1e-12)


def _principal_cases(rng):
    R = random_transform(rng)[:3, :3]
    yield "random", random_properties(rng)
    yield "two equal moments", MassProperties(1.0, [0.5, -1.0, 2.0], R @ np.diag([1.0, 1.0, 1.5]) @ R.T)
    yield "two equal moments, largest", MassProperties(1.0, np.zeros(3), R @ np.diag([0.7, 1.0, 1.0]) @ R.T)
    yield "sphere", sphere(0.3, density=1000.0)
    yield "cylinder", cylinder(0.1, 1.0, mass=1.0)


def test_principal_frame_diagonalizes_and_is_right_handed(rng):
    for label, props in _principal_cases(rng):
        moments, E = props.principal()
        R = E[:3, :3]
        assert np.all(np.diff(moments) >= 0), label
        assert np.linalg.det(R) == pytest.approx(1.0, abs=1e-14), label
        np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-14, err_msg=label)
        # R^T J R = diag(moments) up to eigen-solver round-off (~1e-15 of the largest moment)
        np.testing.assert_allclose(R.T @ props.inertia @ R, np.diag(moments), rtol=0,
                                   atol=1e-13 * moments.max(), err_msg=label)
        np.testing.assert_array_equal(E[:3, 3], props.com)
        np.testing.assert_array_equal(E[3], [0, 0, 0, 1])


def test_principal_fixes_left_handed_eigenvector_bases(rng):
    # diag(3, 2, 1): eigh sorts the moments ascending, so its eigenvectors are (e3, e2, e1), a
    # reflection; the principal frame must flip an axis
    props = MassProperties(1.0, np.zeros(3), np.diag([3.0, 2.0, 1.0]))
    assert np.linalg.det(np.linalg.eigh(props.inertia)[1]) < 0
    assert np.linalg.det(props.principal()[1][:3, :3]) == pytest.approx(1.0, abs=1e-15)
    # and for inertias in random orientations, where eigh returns a reflection about a third of the time
    raw_left, ours_left = 0, 0
    for _ in range(60):
        R = random_transform(rng)[:3, :3]
        props = MassProperties(1.0, np.zeros(3), R @ np.diag(rng.uniform(1.0, 2.0, 3)) @ R.T)
        raw_left += np.linalg.det(np.linalg.eigh(props.inertia)[1]) < 0
        ours_left += np.linalg.det(props.principal()[1][:3, :3]) < 0
    assert raw_left > 5  # the branch is exercised, so this test would catch its removal
    assert ours_left == 0


def test_principal_frame_does_not_depend_on_the_eigen_solver_signs(rng):
    # the first two axes have a positive largest component, the third is their cross product;
    # so J and the same J with eigenvectors of other signs give the same frame
    for _ in range(20):
        props = random_properties(rng)
        _, E = props.principal()
        R = E[:3, :3]
        for k in (0, 1):
            assert R[np.argmax(np.abs(R[:, k])), k] > 0
        np.testing.assert_allclose(R[:, 2], np.cross(R[:, 0], R[:, 1]), atol=1e-15)
        moments, V = np.linalg.eigh(props.inertia)
        flipped = V * rng.choice([-1.0, 1.0], 3)
        J_again = flipped @ np.diag(moments) @ flipped.T  # the same matrix up to round-off
        R_again = MassProperties(props.mass, props.com, J_again).principal()[1][:3, :3]
        np.testing.assert_allclose(R_again, R, atol=1e-12)  # eigenvector round-off ~1e-15 / gap


# --- composite --------------------------------------------------------------------------------------


def test_two_half_cuboids_make_the_whole_cuboid(rng):
    sides = np.array([0.4, 0.25, 0.1])
    for axis in range(3):
        half_sides = sides.copy()
        half_sides[axis] /= 2
        half = cuboid(half_sides, density=2700.0)
        left, right = np.eye(4), np.eye(4)
        left[axis, 3], right[axis, 3] = -sides[axis] / 4, sides[axis] / 4
        whole = composite([(half, left), (half, right)])
        ref = cuboid(sides, density=2700.0)
        assert whole.mass == pytest.approx(ref.mass, rel=1e-15)
        np.testing.assert_allclose(whole.com, 0.0, atol=1e-17)
        np.testing.assert_allclose(whole.inertia, ref.inertia, rtol=0, atol=1e-14 * ref.inertia.max())


def test_composite_of_random_parts_equals_the_point_cloud_of_their_union(rng):
    parts, union_points, union_masses = [], [], []
    for _ in range(4):
        points, masses = random_cloud(rng, n=30)  # part k in its own frame k
        E_c_k = random_transform(rng, scale=2.0)
        parts.append((MassProperties(*cloud_properties(points, masses)), E_c_k))
        union_points.append(moved(points, E_c_k))
        union_masses.append(masses)
    points, masses = np.concatenate(union_points), np.concatenate(union_masses)
    glued = composite(parts, name="union")
    m, c, J = cloud_properties(points, masses)
    assert glued.mass == pytest.approx(m, rel=1e-14)
    # point sums and adjoint sums of terms ~10-100 in size agree to round-off
    np.testing.assert_allclose(glued.com, c, rtol=0, atol=1e-13)
    np.testing.assert_allclose(glued.inertia, J, rtol=0, atol=1e-11)
    M_cloud = cloud_spatial_inertia(points, masses)
    np.testing.assert_allclose(glued.spatial_inertia(), M_cloud, rtol=0, atol=1e-11)


def test_composite_uses_the_part_com_not_the_part_frame_origin(rng):
    # a part whose COM is off its frame's origin, placed by a rotation only
    part = MassProperties(2.0, [1.0, 0.0, 0.0], np.diag([0.1, 0.2, 0.3]))
    E = exp_se3([0, 0, np.pi / 2, 0, 0, 0])
    glued = composite([(part, E)])
    np.testing.assert_allclose(glued.com, [0.0, 1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(glued.inertia, np.diag([0.2, 0.1, 0.3]), atol=1e-15)


def test_add_glues_two_bodies_in_the_same_frame(rng):
    a, b = random_properties(rng, "a"), random_properties(rng, "b")
    total = a + b
    ref = composite([(a, np.eye(4)), (b, np.eye(4))])
    assert total.name == "a+b"
    assert total.mass == ref.mass
    np.testing.assert_allclose(total.inertia, ref.inertia, rtol=0, atol=0)
    with pytest.raises(TypeError):
        a + 1.0


def test_composite_far_from_the_origin_keeps_its_accuracy():
    # frame c's origin 1e4 away from the parts: the sum is done at the COM, so no cancellation
    far = np.eye(4)
    far[:3, 3] = 1e4
    box = cuboid([0.2, 0.1, 0.05], mass=1.0)
    glued = composite([(box, far)])
    np.testing.assert_allclose(glued.inertia, box.inertia, rtol=0, atol=1e-12 * box.inertia.max())


# --- validation -------------------------------------------------------------------------------------

GOOD_J = np.diag([0.2, 0.3, 0.4])
DEGENERATE = "inertia must be positive definite.*point mass or a thin rod"
TRIANGLE = r"inertia violates the triangle inequality \(I1 \+ I2 = 2 < I3 = 3\)"


@pytest.mark.parametrize(("mass", "com", "inertia", "match"), [
    (0.0, np.zeros(3), GOOD_J, "mass must be positive"),
    (-1.0, np.zeros(3), GOOD_J, "mass must be positive"),
    (np.nan, np.zeros(3), GOOD_J, "mass must be positive"),
    (np.inf, np.zeros(3), GOOD_J, "mass must be positive"),
    ("heavy", np.zeros(3), GOOD_J, "mass must be a positive number"),
    (1.0, np.zeros(2), GOOD_J, "argument 'com' must have shape"),
    (1.0, [0.0, np.nan, 0.0], GOOD_J, "argument 'com' contains NaN"),
    (1.0, np.zeros(3), np.eye(2), "argument 'inertia' must have shape"),
    (1.0, np.zeros(3), [[0.2, 0.1, 0], [0, 0.3, 0], [0, 0, 0.4]], "inertia is not symmetric"),
    (1.0, np.zeros(3), np.diag([0.2, -0.3, 0.4]), "inertia must be positive definite"),
    (1.0, np.zeros(3), [[1.0, 2.0, 0], [2.0, 1.0, 0], [0, 0, 1.5]], "inertia must be positive definite"),
    (1.0, np.zeros(3), np.zeros((3, 3)), DEGENERATE),
    (1.0, np.zeros(3), np.diag([0.0, 1.0, 1.0]), DEGENERATE),
    (1.0, np.zeros(3), np.diag([1.0, 1.0, 3.0]), TRIANGLE),
    (1.0, np.zeros(3), np.diag([3.0, 1.0, 1.0]), TRIANGLE),
    (1.0, np.zeros(3), np.full((3, 3), np.nan), "argument 'inertia' contains NaN"),
], ids=["zero mass", "negative mass", "NaN mass", "infinite mass", "string mass", "2-vector com",
        "NaN com", "2x2 inertia", "asymmetric", "negative moment", "indefinite", "point mass",
        "thin rod", "I3 too large", "I1 too large", "NaN inertia"])
def test_mass_properties_reject_unphysical_values_naming_the_field_and_body(mass, com, inertia, match):
    # every message starts with the field (after the body, when it has a name)
    with pytest.raises(ValueError, match=f"^body 'head': {match}"):
        MassProperties(mass, com, inertia, name="head")
    with pytest.raises(ValueError, match=f"^{match}"):
        MassProperties(mass, com, inertia)


def test_triangle_inequality_accepts_its_limit_within_the_tolerance():
    MassProperties(1.0, np.zeros(3), np.diag([1.0, 2.0, 3.0]))  # a thin plate: I1 + I2 = I3
    MassProperties(1.0, np.zeros(3), np.diag([1.0, 2.0, 3.0 * (1 + 1e-12)]))  # round-off beyond it
    with pytest.raises(ValueError, match="triangle inequality"):
        MassProperties(1.0, np.zeros(3), np.diag([1.0, 2.0, 3.0 * (1 + 1e-6)]))


def test_mass_properties_are_read_only_copies():
    J = GOOD_J.copy()
    props = MassProperties(1.0, np.zeros(3), J)
    J[0, 0] = 5.0
    assert props.inertia[0, 0] == 0.2
    with pytest.raises(ValueError, match="read-only"):
        props.com[0] = 1.0


SHAPES = {
    "cuboid": lambda **kw: cuboid([0.1, 0.2, 0.3], **kw),
    "cylinder": lambda **kw: cylinder(0.1, 0.5, **kw),
    "sphere": lambda **kw: sphere(0.2, **kw),
    "capsule": lambda **kw: capsule(0.1, 0.4, **kw),
    "mesh": lambda **kw: mesh(*box_mesh([0.1, 0.2, 0.3]), **kw),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(("kwargs", "match"), [
    ({}, "arguments 'density' and 'mass': give exactly one of them, got neither"),
    ({"density": 1.0, "mass": 1.0}, "arguments 'density' and 'mass': give exactly one of them, got both"),
    ({"density": -1.0}, "argument 'density' must be positive"),
    ({"density": np.nan}, "argument 'density' must be positive"),
    ({"mass": 0.0}, "argument 'mass' must be positive"),
])
def test_shapes_need_exactly_one_positive_density_or_mass(shape, kwargs, match):
    with pytest.raises(ValueError, match=f"^body 'part': {match}"):
        SHAPES[shape](name="part", **kwargs)


@pytest.mark.parametrize(("make", "match"), [
    (lambda: cuboid([0.1, -0.2, 0.3], mass=1.0), "argument 'sides' must be positive"),
    (lambda: cuboid([0.1, 0.2], mass=1.0), "argument 'sides' must have shape"),
    (lambda: cylinder(0.0, 1.0, mass=1.0), "argument 'radius' must be positive"),
    (lambda: cylinder(0.1, np.inf, mass=1.0), "argument 'height' must be positive"),
    (lambda: sphere(-1.0, mass=1.0), "argument 'radius' must be positive"),
    (lambda: capsule(0.1, -0.1, mass=1.0), "argument 'length' must be finite and >= 0"),
    (lambda: capsule(0.1, "long", mass=1.0), "argument 'length' must be a number"),
    (lambda: box_mesh([1.0, 0.0, 1.0]), "argument 'sides' must be positive"),
])
def test_shapes_reject_bad_dimensions_naming_the_argument(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def _box():
    return box_mesh([1.0, 2.0, 3.0])


def _with_face(F, k, face):
    F = F.copy()
    F[k] = face
    return F


@pytest.mark.parametrize(("vertices_faces", "match"), [
    (lambda V, F: (V, F[:-1]), r"not describe a closed surface: the edge \(\d+, \d+\) has no opposite"),
    (lambda V, F: (V, F[:, ::-1]), "faces appear to be oriented inward"),
    (lambda V, F: (V, _with_face(F, 3, F[3, ::-1])), r"directed edge \(\d+, \d+\) appears 2 times"),
    (lambda V, F: (V, _with_face(F, 0, [0, 1, 8])), r"face 0 \[0, 1, 8\] has an index outside 0..7"),
    (lambda V, F: (V, _with_face(F, 0, [0, -1, 2])), "has an index outside"),
    (lambda V, F: (V, _with_face(F, 5, [2, 2, 3])), r"face 5 \[2, 2, 3\] is degenerate"),
    (lambda V, F: (V, F.astype(float)), "must hold integer vertex indices"),
    (lambda V, F: (V, F[:, :2]), r"'faces' must have shape \(m, 3\)"),
    (lambda V, F: (V[:, :2], F), r"'vertices' must be a real array of shape \(n, 3\)"),
    (lambda V, F: (np.where(V > 0, np.nan, V), F), "'vertices' contains NaN"),
    (lambda V, F: (np.zeros_like(V), F), "encloses no volume"),
], ids=["open", "inward", "one face flipped", "index too large", "negative index", "repeated index",
        "float faces", "two columns", "2D vertices", "NaN vertex", "flat"])
def test_mesh_rejects_bad_meshes_naming_the_faces(vertices_faces, match):
    V, F = vertices_faces(*_box())
    with pytest.raises(ValueError, match="^body 'bracket': argument '(faces|vertices)'") as err:
        mesh(V, F, density=1.0, name="bracket")
    assert err.match(match)


@pytest.mark.parametrize(("parts", "match"), [
    ([], "argument 'parts' is empty"),
    (None, "argument 'parts' must be a sequence"),
    ([(cuboid([1, 1, 1], mass=1.0),)], r"parts\[0\] must be a pair"),
    ([(np.eye(3), np.eye(4))], r"parts\[0\] must be a pair"),
    ([(cuboid([1, 1, 1], mass=1.0), 2 * np.eye(4))], r"'parts\[0\]\[1\]' is not a"),
])
def test_composite_rejects_bad_parts_naming_them(parts, match):
    with pytest.raises(ValueError, match=match):
        composite(parts, name="hammer")


@pytest.mark.parametrize(("change", "match"), [
    (lambda M: M + np.triu(np.full((6, 6), 0.1), 1), "not symmetric"),
    (lambda M: M + np.diag([0, 0, 0, 0, 0, 0.5]), "translational block"),
    (lambda M: M - np.diag([0, 0, 0, 3, 3, 3]), "translational block"),
    (lambda M: M + np.kron([[0, 1], [1, 0]], np.eye(3)), "skew-symmetric"),
    (lambda M: M - np.diag([5, 0, 0, 0, 0, 0]), "inertia must be positive definite"),
], ids=["asymmetric", "anisotropic mass", "negative mass", "symmetric coupling", "negative moment"])
def test_from_spatial_inertia_rejects_matrices_of_the_wrong_form(change, match):
    M = MassProperties(2.0, [0.1, 0.2, 0.3], np.diag([0.5, 0.6, 0.7])).spatial_inertia()
    with pytest.raises(ValueError, match=match):
        from_spatial_inertia(change(M), name="slab")
