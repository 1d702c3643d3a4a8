"""Claims of book/01_maximal/07_inertia (§1.7 of the writeup): each test cites the sentence it checks.

The page's hammer and L bracket are rebuilt here from the same numbers; the last test checks
that the page still uses them.
"""

import json
from pathlib import Path

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
from redmax_edu.lie import adjoint, gamma, inv_se3, random_transform

PAGE = Path(__file__).resolve().parents[2] / "book" / "01_maximal" / "07_inertia.ipynb"

# --- the page's bodies ------------------------------------------------------------------------------

HEAD_LENGTH, HEAD_OFFSET, SIDE_SHIFT = 0.11, 0.135, 0.015
L_OUTLINE = np.array([[0.02, 0.02], [0.02, 0.08], [0.0, 0.08], [0.0, 0.0], [0.12, 0.0], [0.12, 0.02]])
RHO_AL = 2700.0


def hammer_parts(head_length=HEAD_LENGTH, head_offset=HEAD_OFFSET, side_shift=SIDE_SHIFT):
    handle = cylinder(0.016, 0.30, density=700.0, name="handle")
    head = cuboid([head_length, 0.028, 0.028], density=7850.0)
    E_c_head = np.eye(4)
    E_c_head[:3, 3] = [side_shift, 0.0, head_offset]
    return [(handle, np.eye(4)), (head, E_c_head)]


def tilt_degrees(head_length=HEAD_LENGTH, head_offset=HEAD_OFFSET):
    """Angle between the axis of smallest moment and the handle (z), as printed on the page."""
    _, E = composite(hammer_parts(head_length, head_offset)).principal()
    return np.degrees(np.arccos(min(1.0, abs(E[2, 0]))))


def extrude(outline, depth):
    n = len(outline)
    vertices = np.vstack([np.column_stack([outline, np.zeros(n)]),
                          np.column_stack([outline, np.full(n, depth)])])
    faces = []
    for i in range(1, n - 1):
        faces += [(0, i + 1, i), (n, n + i, n + i + 1)]
    for i in range(n):
        j = (i + 1) % n
        faces += [(i, j, n + j), (i, n + j, n + i)]
    return vertices, np.array(faces)


def bracket_mesh():
    return extrude(L_OUTLINE, 0.03)


def bracket_as_two_boxes():
    foot, upright = np.eye(4), np.eye(4)
    foot[:3, 3] = [0.06, 0.01, 0.015]
    upright[:3, 3] = [0.01, 0.05, 0.015]
    return composite([(cuboid([0.12, 0.02, 0.03], density=RHO_AL), foot),
                      (cuboid([0.02, 0.06, 0.03], density=RHO_AL), upright)])


# --- where the spatial inertia comes from -------------------------------------------------------------

def test_s1_7_block_formula_equals_the_sum_over_point_masses(rng):
    """§1.7: 'the sum collapses to M = [[J - m[c][c], m[c]], [-m[c], m I]]', printed as
    'block formula = sum of m_k Gamma^T Gamma: True' (atol 1e-14 on the page)."""
    for _ in range(20):
        points = rng.standard_normal((50, 3)) * [0.3, 0.2, 0.1] + rng.standard_normal(3)
        masses = rng.uniform(0.01, 0.05, 50)
        m = masses.sum()
        c = masses @ points / m
        s = points - c
        J = sum(mk * (sk @ sk * np.eye(3) - np.outer(sk, sk)) for mk, sk in zip(masses, s, strict=True))
        M_sum = sum(mk * gamma(r).T @ gamma(r) for mk, r in zip(masses, points, strict=True))
        np.testing.assert_allclose(MassProperties(m, c, J).spatial_inertia(), M_sum, rtol=0, atol=1e-14)


def test_s1_7_body_frame_inertia_is_the_same_in_every_pose(rng):
    """§1.7: 'Because the twist is measured in body coordinates, this matrix is the same at every
    instant, however the body tumbles': the kinetic energy of the points, with their world
    velocities R Gamma(r) phi, is 1/2 phi^T M phi for one M at every pose."""
    points = rng.standard_normal((30, 3)) * 0.2
    masses = rng.uniform(0.1, 1.0, 30)
    M = MassProperties(masses.sum(), masses @ points / masses.sum(),
                       _inertia_about_com(points, masses)).spatial_inertia()
    for _ in range(10):
        R, phi = random_transform(rng)[:3, :3], rng.standard_normal(6)
        T = 0.5 * sum(mk * np.sum((R @ gamma(r) @ phi) ** 2) for mk, r in zip(masses, points, strict=True))
        assert T == pytest.approx(0.5 * phi @ M @ phi, rel=1e-12)


def _inertia_about_com(points, masses):
    s = points - masses @ points / masses.sum()
    return sum(mk * (sk @ sk * np.eye(3) - np.outer(sk, sk)) for mk, sk in zip(masses, s, strict=True))


def test_s1_7_brick_spatial_inertia_is_eq_1_24():
    """§1.7: 'brick M = Eq. (1.24): True' for the 0.2 x 0.1 x 0.05 m brick of 1000 kg/m^3, mass 1 kg."""
    brick = cuboid([0.2, 0.1, 0.05], density=1000.0)
    m, (dx, dy, dz) = brick.mass, (0.2, 0.1, 0.05)
    assert m == pytest.approx(1.0, rel=1e-12)
    moments = m / 12 * np.array([dy**2 + dz**2, dz**2 + dx**2, dx**2 + dy**2])
    expected = np.diag([*moments, m, m, m])
    np.testing.assert_allclose(brick.spatial_inertia(), expected, rtol=1e-15, atol=0)


# --- shapes ---------------------------------------------------------------------------------------------

def test_s1_7_every_shape_frame_is_at_the_com_on_principal_axes():
    """§1.7: 'the frame's origin is at the centre of every shape and its axes are the shape's
    symmetry axes, so each frame is principal'."""
    for body in (cuboid([0.3, 0.2, 0.1], mass=1.0), cylinder(0.05, 0.3, mass=1.0), sphere(0.1, mass=1.0),
                 capsule(0.05, 0.2, mass=1.0)):
        np.testing.assert_array_equal(body.com, 0.0)
        np.testing.assert_array_equal(body.inertia, np.diag(np.diag(body.inertia)))


def test_s1_7_capsule_of_length_zero_is_the_sphere():
    """§1.7: 'a capsule with no cylinder is a sphere'."""
    for r in (0.01, 0.1, 2.0):
        np.testing.assert_allclose(capsule(r, 0.0, mass=1.0).inertia, sphere(r, mass=1.0).inertia,
                                   rtol=1e-15, atol=0)


@pytest.mark.parametrize(("radius", "length"), [(0.05, 0.2), (0.3, 0.05), (0.1, 1.0)])
def test_s1_7_capsule_sits_between_the_two_cylinders(radius, length):
    """§1.7: 'a capsule sits between the cylinder of the same length and the cylinder that also
    covers its caps' (same density; each solid contains the previous one)."""
    inner = cylinder(radius, length, density=1000.0)
    between = capsule(radius, length, density=1000.0)
    outer = cylinder(radius, length + 2 * radius, density=1000.0)
    assert inner.mass < between.mass < outer.mass
    for k in (0, 2):
        assert inner.inertia[k, k] < between.inertia[k, k] < outer.inertia[k, k]


def test_s1_7_capsule_closed_form_is_the_composite_of_its_three_parts():
    """§1.7: 'The composite machinery ... rebuilds it from the three parts': hemispheres of mass
    rho 2/3 pi r^3 with COM 3r/8 from the flat face and transverse moment (2/5 - 9/64) m_h r^2."""
    r, L, rho = 0.05, 0.2, 1000.0
    m_h = rho * 2 / 3 * np.pi * r**3
    cap = MassProperties(m_h, np.zeros(3), m_h * r * r * np.diag([2 / 5 - 9 / 64, 2 / 5 - 9 / 64, 2 / 5]))
    top, bottom = np.eye(4), np.diag([1.0, -1.0, -1.0, 1.0])
    top[2, 3], bottom[2, 3] = L / 2 + 3 * r / 8, -(L / 2 + 3 * r / 8)
    glued = composite([(cylinder(r, L, density=rho), np.eye(4)), (cap, top), (cap, bottom)])
    closed = capsule(r, L, density=rho)
    assert closed.mass == pytest.approx(glued.mass, rel=1e-14)
    np.testing.assert_allclose(closed.inertia, glued.inertia, rtol=0, atol=1e-13 * closed.inertia.max())


# --- meshes --------------------------------------------------------------------------------------------

def test_s1_7_inline_signed_tetrahedra_equal_mesh():
    """§1.7: the page's loop over signed tetrahedra (origin as reference) prints
    'inline sums = mesh(): True' (rtol 1e-12 on the mass, atol 1e-15 on COM and inertia)."""
    V, F = bracket_mesh()
    volume, first, second = 0.0, np.zeros(3), np.zeros((3, 3))
    for i, j, k in F:
        a, b, c = V[i], V[j], V[k]
        v = a @ np.cross(b, c) / 6
        s = a + b + c
        volume += v
        first += v * s / 4
        second += v / 20 * sum(np.outer(x, x) for x in (a, b, c, s))
    m = RHO_AL * volume
    com = first / volume
    C = RHO_AL * second - m * np.outer(com, com)
    J = np.trace(C) * np.eye(3) - C
    body = mesh(V, F, density=RHO_AL)
    assert body.mass == pytest.approx(m, rel=1e-12)
    assert round(1e3 * body.mass, 3) == 291.6  # "bracket mass (g): 291.6"
    np.testing.assert_allclose(body.com, com, rtol=0, atol=1e-15)
    np.testing.assert_allclose(body.inertia, J, rtol=0, atol=1e-15)


def test_s1_7_bracket_mesh_and_two_boxes_agree_to_1e_12():
    """§1.7: 'mesh and two boxes agree to 1e-12' (the L bracket as a mesh and as a composite)."""
    body, boxes = mesh(*bracket_mesh(), density=RHO_AL), bracket_as_two_boxes()
    assert body.mass == pytest.approx(boxes.mass, rel=1e-12)
    np.testing.assert_allclose(body.com, boxes.com, rtol=0, atol=1e-12)
    np.testing.assert_allclose(body.inertia, boxes.inertia, rtol=0, atol=1e-12 * boxes.inertia.max())


def test_s1_7_mesh_of_a_box_and_eq_1_24_agree_to_1e_12(rng):
    """§1.7: 'mesh of a box and Eq. (1.24) agree to 1e-12' (the page's 0.3 x 0.2 x 0.1 box of
    2 kg, and random boxes)."""
    for sides in [np.array([0.3, 0.2, 0.1])] + [rng.uniform(0.05, 2.0, 3) for _ in range(20)]:
        by_mesh, by_formula = mesh(*box_mesh(sides), mass=2.0), cuboid(sides, mass=2.0)
        np.testing.assert_allclose(by_mesh.inertia, by_formula.inertia, rtol=0, atol=1e-12)
        np.testing.assert_allclose(by_mesh.com, 0.0, atol=1e-12)


def test_s1_7_reversed_and_open_meshes_are_refused():
    """§1.7: 'Listing every triangle backwards turns all the normals inward, which makes the volume
    negative; dropping a triangle leaves a hole' -- both refused with a message that says so."""
    V, F = bracket_mesh()
    inward = r"body 'bracket': argument 'faces': the enclosed volume is -0.000108 < 0, so the faces appear"
    with pytest.raises(ValueError, match=inward):
        mesh(V, F[:, ::-1], density=RHO_AL, name="bracket")
    hole = r"does not describe a closed surface: the edge \(0, 1\) has no opposite edge \(1, 0\)"
    with pytest.raises(ValueError, match=hole):
        mesh(V, F[1:], density=RHO_AL, name="bracket")


def test_s1_7_bracket_com_is_outside_the_metal():
    """§1.7: 'the centre of mass (black dot) is not inside the metal: it sits in the empty corner
    of the L' (both legs are 2 cm thick)."""
    com = mesh(*bracket_mesh(), density=RHO_AL).com
    assert com[0] > 0.02 and com[1] > 0.02  # beyond both legs' inner faces
    assert com[0] < 0.12 and com[1] < 0.08  # but within the L's bounding box: the notch


def test_s1_7_bracket_principal_axes_are_tilted_from_the_legs():
    """§1.7: 'the principal axes are tilted away from the legs because the L has no symmetry in
    the xy plane' (z, normal to the mirror plane z = 1.5 cm, stays principal)."""
    _, E = mesh(*bracket_mesh(), density=RHO_AL).principal()
    R = E[:3, :3]
    along_z = np.argmax(np.abs(R[2]))
    assert abs(R[2, along_z]) == pytest.approx(1.0, abs=1e-12)
    for k in set(range(3)) - {along_z}:
        angle_to_x = np.degrees(np.arccos(abs(R[0, k])))
        assert 5 < angle_to_x < 85  # neither along x nor along y


# --- composite bodies -----------------------------------------------------------------------------------

def test_s1_7_inline_composite_has_zero_coupling_and_equals_composite_to_1e_12():
    """§1.7: 'coupling blocks vanish', 'translational block is m I', and 'inline Eq. (1.25)-(1.26)
    = composite() to 1e-12'; the mass prints as 0.8459 kg and the COM as (1.2, 0, 10.8) cm."""
    parts = hammer_parts()
    m_k = np.array([p.mass for p, _ in parts])
    p_k = np.array([E[:3, :3] @ p.com + E[:3, 3] for p, E in parts])
    m_c = m_k.sum()
    p_c = m_k @ p_k / m_c
    E_c = np.eye(4)
    E_c[:3, 3] = p_c
    M_c = sum(adjoint(inv_se3(E) @ E_c).T @ p.spatial_inertia() @ adjoint(inv_se3(E) @ E_c) for p, E in parts)
    np.testing.assert_allclose(M_c[:3, 3:], 0, atol=1e-15)
    np.testing.assert_allclose(M_c[3:, 3:], m_c * np.eye(3), rtol=1e-15)
    hammer = composite(parts)
    assert hammer.mass == pytest.approx(m_c, rel=1e-12)
    np.testing.assert_allclose(hammer.com, p_c, rtol=0, atol=1e-12)
    np.testing.assert_allclose(hammer.inertia, M_c[:3, :3], rtol=0, atol=1e-12)
    assert round(m_c, 4) == 0.8459
    np.testing.assert_array_equal(np.round(100 * p_c, 2) + 0.0, [1.2, 0.0, 10.8])


def test_s1_7_off_centre_head_couples_x_and_z_only():
    """§1.7: 'The rotational block is not diagonal: the off-centre head couples spin about x with
    spin about z'; and (Try this) with SIDE_SHIFT = 0 that coupling vanishes."""
    J = composite(hammer_parts()).inertia
    assert abs(J[0, 2]) > 1e-2 * J.max()
    assert J[0, 1] == 0 and J[1, 2] == 0
    J_centred = composite(hammer_parts(side_shift=0.0)).inertia
    assert abs(J_centred[0, 2]) < 1e-15 * J_centred.max()


def test_s1_7_principal_frame_is_right_handed_and_diagonalizes_the_hammer():
    """§1.7: 'right-handed: True', 'third axis = first x second: True', 'V^T J V is diagonal: True'
    and 'in the principal frame M is diagonal: True' (atol 1e-15 kg m^2 on the page)."""
    hammer = composite(hammer_parts())
    moments, E = hammer.principal()
    R = E[:3, :3]
    assert np.isclose(np.linalg.det(R), 1.0)
    np.testing.assert_allclose(R[:, 2], np.cross(R[:, 0], R[:, 1]), atol=1e-15)
    np.testing.assert_allclose(R.T @ hammer.inertia @ R, np.diag(moments), rtol=0, atol=1e-15)
    M_p = hammer.transformed(inv_se3(E)).spatial_inertia()
    np.testing.assert_allclose(M_p, np.diag(np.diag(M_p)), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(np.round(moments * 1e4, 2), [7.55, 38.54, 44.98])


def test_s1_7_smallest_axis_runs_along_the_handle_tilted_a_few_degrees_towards_the_long_side():
    """§1.7: 'The axis of smallest moment runs nearly along the handle, tilted by a few degrees
    towards the head's long side' (printed: 5.1 deg); in the figure 'the red axis (smallest
    moment) points up the handle and leans the same way'."""
    _, E = composite(hammer_parts()).principal()
    assert round(tilt_degrees(), 1) == 5.1
    assert 2 < tilt_degrees() < 10
    assert E[2, 0] > 0  # up the handle, as drawn (principal() fixes the signs)
    assert E[0, 0] > 0  # towards +x, the side the head is shifted to


def test_s1_7_hammer_com_is_high_and_towards_the_long_side_and_largest_axis_is_normal():
    """§1.7: 'the centre of mass sits high on the handle, close to the heavy head, and slightly
    towards the head's long side (+x) ... the blue axis (largest moment) is normal to the plane of
    the hammer'."""
    hammer = composite(hammer_parts())
    assert HEAD_OFFSET / 2 < hammer.com[2] < HEAD_OFFSET  # nearer the head than the handle's middle
    assert 0 < hammer.com[0] < SIDE_SHIFT
    _, E = hammer.principal()
    assert abs(E[1, 2]) == pytest.approx(1.0, abs=1e-14)  # third (largest) axis along +-y


def test_s1_7_offset_spatial_inertia_is_the_diagonal_one_moved_by_an_adjoint(rng):
    """§1.7: 'M_offset = A^T M_diag A: True' (atol 1e-14), 'same kinetic energy in both frames', and
    'from_spatial_inertia recovers m, c, J' (atol 1e-15); also for random bodies and frames."""
    bodies = [composite(hammer_parts())]
    for _ in range(10):
        J = _inertia_about_com(rng.standard_normal((20, 3)), rng.uniform(0.1, 1, 20))
        bodies.append(MassProperties(rng.uniform(0.5, 2), rng.standard_normal(3), J))
    for body in bodies:
        moments, E = body.principal()
        A = adjoint(inv_se3(E))
        M_diag = np.diag(np.concatenate([moments, np.full(3, body.mass)]))
        M_offset = body.spatial_inertia()
        scale = np.abs(M_offset).max()
        np.testing.assert_allclose(M_offset, A.T @ M_diag @ A, rtol=0, atol=1e-14 * max(scale, 1.0))
        phi = rng.standard_normal(6)
        assert phi @ M_offset @ phi == pytest.approx((A @ phi) @ M_diag @ (A @ phi), rel=1e-12)
    hammer = bodies[0]
    back = from_spatial_inertia(hammer.spatial_inertia())
    assert back.mass == pytest.approx(hammer.mass, rel=1e-15)
    np.testing.assert_allclose(back.com, hammer.com, rtol=0, atol=1e-15)
    np.testing.assert_allclose(back.inertia, hammer.inertia, rtol=0, atol=1e-15)


# --- the composite body builder ----------------------------------------------------------------------

def test_s1_7_builder_tilt_is_zero_at_the_middle_peaks_near_6_degrees_and_falls_near_the_top():
    """§1.7 (builder): 'With the head at the middle of the handle (offset 0) the hammer is
    symmetric about the plane z = 0, and the axes are the handle frame's; as the head rises the
    tilt grows to about 6 degrees, then falls again when the head nears the top.'"""
    offsets = np.linspace(0.0, 0.15, 11)  # the player's frames
    tilts = np.array([tilt_degrees(HEAD_LENGTH, off) for off in offsets])
    assert tilts[0] < 1e-6
    _, E0 = composite(hammer_parts(head_offset=0.0)).principal()
    np.testing.assert_allclose(np.abs(E0[:3, :3]).max(axis=0), 1.0, atol=1e-12)  # axes along c's axes
    peak = int(np.argmax(tilts))
    assert 5.5 < tilts[peak] < 7.0
    assert 0 < peak < len(offsets) - 1
    assert np.all(np.diff(tilts[: peak + 1]) > 0)
    assert tilts[-1] < tilts[peak] - 1.0


def test_s1_7_builder_com_rises_with_the_head():
    """§1.7 (builder): 'Watch the centre of mass rise with the head'."""
    heights = [composite(hammer_parts(head_offset=off)).com[2] for off in np.linspace(0, 0.15, 11)]
    assert np.all(np.diff(heights) > 0)


def test_s1_7_long_head_turns_the_smallest_axis_from_the_handle_to_the_head():
    """§1.7 (Try this): 'make the head long (16 cm) and move it from the top to the middle. The
    axis of smallest moment turns from the handle's direction to the head's. It turns fastest,
    about ten times faster than near either end, where the two smaller moments are closest'."""
    assert tilt_degrees(0.16, 0.15) < 10  # at the top: along the handle
    assert tilt_degrees(0.16, 0.0) == pytest.approx(90.0, abs=1e-6)  # at the middle: along the head
    offsets = np.linspace(0.0, 0.15, 31)  # 5 mm steps
    tilts = np.array([tilt_degrees(0.16, off) for off in offsets])
    rate = np.abs(np.diff(tilts))
    gaps = []
    for off in offsets:
        I, _ = composite(hammer_parts(0.16, off)).principal()
        gaps.append((I[1] - I[0]) / I[2])
    fastest, closest = int(np.argmax(rate)), int(np.argmin(gaps))
    assert closest in (fastest, fastest + 1)  # the fastest step ends or starts at the closest moments
    assert rate[fastest] > 10 * max(rate[0], rate[-1])


def test_s1_7_principal_moments_obey_the_triangle_inequality_with_equality_for_plates(rng):
    """§1.7 (exercise): 'I1 + I2 - I3 = 2 * integral of z^2 dm >= 0', with equality for a flat body."""
    for _ in range(20):
        points, masses = rng.standard_normal((30, 3)), rng.uniform(0.1, 1, 30)
        I = np.linalg.eigvalsh(_inertia_about_com(points, masses))
        assert I[0] + I[1] >= I[2]
    points = np.column_stack([rng.standard_normal((30, 2)), np.zeros(30)])  # a plate in z = 0
    I = np.linalg.eigvalsh(_inertia_about_com(points, np.ones(30)))
    assert I[0] + I[1] == pytest.approx(I[2], rel=1e-12)
    MassProperties(1.0, np.zeros(3), np.diag(I))  # accepted: the limit is physical


def test_s1_7_page_uses_the_bodies_rebuilt_here_and_the_widget_starts_at_the_static_figure():
    """§1.7: 'its first state is the static figure above' -- the live sliders start at HEAD_LENGTH
    and HEAD_OFFSET, which the static figure draws; and the page's hammer and bracket are the
    ones these tests check."""
    cells = [c["source"] if isinstance(c["source"], str) else "".join(c["source"])
             for c in json.loads(PAGE.read_text())["cells"] if c["cell_type"] == "code"]
    code = "".join("".join(cells).split())  # without whitespace: the formatter may wrap lines
    for line in ("HEAD_LENGTH = 0.11", "HEAD_OFFSET = 0.135", "SIDE_SHIFT = 0.015",
                 "cylinder(0.016, 0.30, density=700.0", "[head_length, 0.028, 0.028], density=7850.0",
                 "extrude(L_outline, 0.03)", "rho_al = 2700.0",
                 "draw_hammer(HEAD_LENGTH, HEAD_OFFSET)",
                 "def show_hammer(head_length, head_offset): draw_hammer(",
                 "value=HEAD_LENGTH", "value=HEAD_OFFSET"):
        assert "".join(line.split()) in code, line
    outline = "[0.02, 0.02], [0.02, 0.08], [0.0, 0.08], [0.0, 0.0], [0.12, 0.0], [0.12, 0.02]"
    assert "".join(outline.split()) in code
