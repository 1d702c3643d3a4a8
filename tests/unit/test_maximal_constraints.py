"""Unit tests of redmax_edu.maximal.constraints: joints as adjoint rows, contacts, friction pyramids.

The joint rows are recomputed here from Eq. (1.84) with the library's adjoint, and then
checked by their meaning: the motions a joint allows (its free directions, written out below
independently of the library's JOINT_ROWS table) give ``G Phi = 0`` and every other motion
does not.
"""

import numpy as np
import pytest

from redmax_edu.checks import check_derivative
from redmax_edu.lie import adjoint, exp_se3, gamma, inv_se3, log_se3, random_transform
from redmax_edu.maximal.constraints import (
    JOINT_ROWS,
    BodyContact,
    GroundContact,
    Joint,
    log_se3_unchecked,
    pyramid_directions,
)

#: Free directions of each joint in its own frame, indices into (omega_x, omega_y, omega_z,
#: nu_x, nu_y, nu_z): the joint's z axis is its axis (§1.10).
FREE = {
    "fixed": (),
    "revolute": (2,),
    "prismatic": (5,),
    "cylindrical": (2, 5),
    "spherical": (0, 1, 2),
    "planar": (2, 3, 4),
}
KINDS = list(FREE)


def constrained(kind):
    return [k for k in range(6) if k not in FREE[kind]]


def random_poses(rng, n=3):
    return np.stack([random_transform(rng) for _ in range(n)])


def assembled(rng, kind, a=0, b=2, n=3):
    """A joint assembled at random poses, with the joint frame at a random world pose."""
    E = random_poses(rng, n)
    return Joint.at(kind, a, b, random_transform(rng), E, name="j"), E


def relative_twist_rows(E, joint):
    """Eq. (1.84): delta_phi_j = A_j_a phi_a - A_j_a A_a_0 A_0_b phi_b, all six rows."""
    n = len(E)
    G = np.zeros((6, 6 * n))
    A_j_a = adjoint(inv_se3(joint.E_a_j))
    G[:, 6 * joint.a: 6 * joint.a + 6] = A_j_a
    if joint.b >= 0:
        A_a_0, A_0_b = adjoint(inv_se3(E[joint.a])), adjoint(E[joint.b])
        G[:, 6 * joint.b: 6 * joint.b + 6] = -A_j_a @ A_a_0 @ A_0_b
    return G


def test_joint_table_frees_the_directions_of_the_text():
    assert set(JOINT_ROWS) == set(FREE)
    for kind in KINDS:
        assert list(JOINT_ROWS[kind]) == constrained(kind)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("b", [2, -1], ids=["body-body", "world"])
def test_joint_jacobian_is_eq_1_84_restricted_to_the_constrained_rows(rng, kind, b):
    joint, E = assembled(rng, kind, a=1, b=b)
    G = joint.jacobian(E)
    assert G.shape == (len(constrained(kind)), 18)
    # the same products in the same order: agreement to round-off of O(1) entries
    np.testing.assert_allclose(G, relative_twist_rows(E, joint)[constrained(kind)], rtol=0, atol=1e-13)
    # bodies other than a and b have zero columns
    others = [i for i in range(3) if i not in (1, b)]
    for i in others:
        np.testing.assert_array_equal(G[:, 6 * i: 6 * i + 6], 0.0)


def twist_of_b_relative_to_a(E, joint, direction, phi_a):
    """Body twists (3, 6) with body a moving by phi_a and body b moving with it plus a unit motion
    along `direction` of the joint frame (as carried by b)."""
    phi = np.zeros((3, 6))
    phi[joint.a] = phi_a
    E_w_j = E[joint.a] @ joint.E_a_j
    # a's motion seen in the world, then in b's coordinates: b follows a rigidly
    V = adjoint(E[joint.a]) @ phi_a
    phi[joint.b] = adjoint(inv_se3(E[joint.b])) @ V
    unit = np.eye(6)[direction]
    phi[joint.b] += adjoint(inv_se3(E[joint.b]) @ E_w_j) @ unit  # a joint-frame twist in b's coordinates
    return phi


@pytest.mark.parametrize("kind", KINDS)
def test_motions_the_joint_allows_satisfy_g_phi_zero_and_others_do_not(rng, kind):
    joint, E = assembled(rng, kind)
    G = joint.jacobian(E)
    phi_a = rng.standard_normal(6)  # body a moves arbitrarily: only the relative motion counts
    for direction in range(6):
        residual = G @ twist_of_b_relative_to_a(E, joint, direction, phi_a).ravel()
        if direction in FREE[kind]:
            # adjoints of O(1) poses times O(1) twists: round-off ~1e-14
            np.testing.assert_allclose(residual, 0.0, atol=1e-12)
        else:
            assert np.abs(residual).max() > 0.5  # a unit relative motion along a constrained row


@pytest.mark.parametrize("kind", KINDS)
def test_common_rigid_motion_of_both_bodies_satisfies_every_joint(rng, kind):
    joint, E = assembled(rng, kind)
    V = rng.standard_normal(6)  # one world twist for every body
    phi = np.stack([adjoint(inv_se3(Ei)) @ V for Ei in E])
    np.testing.assert_allclose(joint.jacobian(E) @ phi.ravel(), 0.0, atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_world_joint_allows_only_its_free_motions_of_body_a(rng, kind):
    joint, E = assembled(rng, kind, a=1, b=-1)
    G = joint.jacobian(E)
    E_w_j = E[1] @ joint.E_a_j
    np.testing.assert_allclose(E_w_j, joint.E_b_j, atol=1e-14)  # assembled: the same world frame
    for direction in range(6):
        phi = np.zeros((3, 6))
        phi[1] = adjoint(inv_se3(E[1]) @ E_w_j) @ np.eye(6)[direction]
        residual = G @ phi.ravel()
        if direction in FREE[kind]:
            np.testing.assert_allclose(residual, 0.0, atol=1e-12)
        else:
            assert np.abs(residual).max() > 0.5


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("b", [2, -1], ids=["body-body", "world"])
def test_joint_error_is_zero_at_assembly(rng, kind, b):
    joint, E = assembled(rng, kind, a=1, b=b)
    # log of a product of O(1) transforms that cancel: round-off ~1e-15
    np.testing.assert_allclose(joint.error(E), 0.0, atol=1e-13)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("b", [2, -1], ids=["body-body", "world"])
def test_joint_error_rate_is_jacobian_times_twist_at_assembly(rng, kind, b):
    joint, E = assembled(rng, kind, a=1, b=b)
    phi = rng.standard_normal((3, 6))
    rate = joint.jacobian(E) @ phi.ravel()
    assert np.abs(rate).max() > 0.1  # a random motion breaks the joint

    def error_along(t):
        return joint.error(np.stack([E[i] @ exp_se3(t[0] * phi[i]) for i in range(3)]))

    assert check_derivative(error_along, np.array([0.0]), rate[:, None]).ok
    assert not check_derivative(error_along, np.array([0.0]), -rate[:, None]).ok


@pytest.mark.parametrize("angle", [0.0, 1e-9, 0.0099, 0.0101, 1.0, np.pi / 2 - 1e-9, np.pi / 2 + 1e-9,
                                   3.0, np.pi - 1e-8, np.pi])
def test_unchecked_log_is_log_se3_on_every_branch(rng, angle):
    # the series and closed form of sin(t)/t meet at 1e-2; skew and symmetric parts at pi/2
    for _ in range(20):
        axis = rng.standard_normal(3)
        E = exp_se3(np.r_[angle * axis / np.linalg.norm(axis), rng.standard_normal(3)])
        np.testing.assert_array_equal(log_se3_unchecked(E), log_se3(E))


@pytest.mark.parametrize("kind", KINDS)
def test_finite_motions_along_the_free_directions_keep_the_error_zero(rng, kind):
    joint, E = assembled(rng, kind)
    E_w_j = E[joint.a] @ joint.E_a_j
    for direction in range(6):
        motion = np.zeros(6)
        motion[direction] = 0.7  # a finite rotation or translation in the joint frame
        moved = E.copy()
        moved[joint.b] = E_w_j @ exp_se3(motion) @ inv_se3(E_w_j) @ E[joint.b]
        error = np.abs(joint.error(moved)).max()
        if direction in FREE[kind]:
            assert error < 1e-12  # log of an exact free motion: round-off
        else:
            assert error > 0.1


def test_joint_at_stores_the_frame_in_each_body(rng):
    E = random_poses(rng)
    E_w_j = random_transform(rng)
    joint = Joint.at("revolute", 0, 2, E_w_j, E)
    np.testing.assert_allclose(E[0] @ joint.E_a_j, E_w_j, atol=1e-13)
    np.testing.assert_allclose(E[2] @ joint.E_b_j, E_w_j, atol=1e-13)
    world = Joint.at("revolute", 0, -1, E_w_j, E)
    np.testing.assert_array_equal(world.E_b_j, E_w_j)


# --- validation -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"kind": "hinge"}, "joint 'elbow': unknown kind 'hinge'"),
    ({"b": 0}, "joint 'elbow': body 'b'"),
    ({"a": -1}, "joint 'elbow': body 'a'"),
    ({"b": -2}, "joint 'elbow': body 'b'"),
    ({"E_a_j": np.diag([2.0, 1.0, 1.0, 1.0])}, "joint 'elbow': argument 'E_a_j' is not a rotation"),
    ({"E_b_j": np.diag([-1.0, 1.0, 1.0, 1.0])}, "joint 'elbow': argument 'E_b_j' is a reflection"),
    ({"compliance": -1e-3}, "joint 'elbow': compliance"),
    ({"damping": np.nan}, "joint 'elbow': damping"),
], ids=["unknown kind", "a == b", "a = -1", "b = -2", "scaled frame", "mirrored frame",
        "negative compliance", "NaN damping"])
def test_joint_validation_errors_name_the_joint(kwargs, match):
    args = {"kind": "revolute", "a": 0, "b": 1, "E_a_j": np.eye(4), "E_b_j": np.eye(4), "name": "elbow"}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        Joint(**args)


def test_unnamed_joint_is_named_by_its_kind_and_bodies():
    with pytest.raises(ValueError, match="prismatic joint between bodies 2 and 2"):
        Joint("prismatic", 2, 2, np.eye(4), np.eye(4))


# --- friction pyramid ---------------------------------------------------------------------------------


@pytest.mark.parametrize("normal", [[0, 0, 1.0], [0, 0, -1.0], [0.3, -0.5, 0.8], [1.0, 0, 0], [0, 2.0, 1e-9]],
                         ids=["up", "down", "tilted", "x", "nearly y"])
def test_pyramid_directions_are_unit_tangent_and_opposite_in_pairs(normal):
    n = np.asarray(normal) / np.linalg.norm(normal)
    dirs = pyramid_directions(normal)
    assert dirs.shape == (4, 3)
    np.testing.assert_allclose(np.linalg.norm(dirs, axis=1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(dirs @ n, 0.0, atol=1e-15)
    np.testing.assert_array_equal(dirs[2], -dirs[0])
    np.testing.assert_array_equal(dirs[3], -dirs[1])
    assert abs(dirs[0] @ dirs[1]) < 1e-15  # the two axes are orthogonal
    np.testing.assert_allclose(np.cross(dirs[0], dirs[1]), n, atol=1e-15)  # right-handed with n


# --- ground contact -------------------------------------------------------------------------------------


POINTS = np.array([[0.3, 0.2, -0.1], [-0.3, 0.2, -0.1], [0.3, -0.2, 0.1], [-0.3, -0.2, 0.1], [0.0, 0.0, 0.4]])


def contact_for(E, margin=0.05, body=1):
    """A contact whose plane passes near some of body `body`'s points: some in margin, some not."""
    normal = np.array([0.1, 0.2, 1.0])
    normal /= np.linalg.norm(normal)
    x = POINTS @ E[body, :3, :3].T + E[body, :3, 3]
    d_median = float(np.median(x @ normal))
    return GroundContact(body, POINTS, mu=0.4, plane_point=d_median * normal, plane_normal=normal,
                         margin=margin)


def test_ground_contact_distances_are_signed_distances_to_the_plane(rng):
    E = random_poses(rng)
    contact = contact_for(E)
    x = POINTS @ E[1, :3, :3].T + E[1, :3, 3]
    np.testing.assert_allclose(contact.distances(E), (x - contact.plane_point) @ contact.plane_normal,
                               rtol=0, atol=1e-14)


def test_ground_contact_rows_give_normal_and_tangent_point_speeds(rng):
    for _ in range(5):
        E = random_poses(rng)
        phi = rng.standard_normal((3, 6))
        contact = contact_for(E, margin=1.0)
        N, T, d = contact.rows(E)
        d_all = contact.distances(E)
        active = np.flatnonzero(d_all < 1.0)
        assert N.shape == (len(active), 18) and T.shape == (4 * len(active), 18)
        np.testing.assert_array_equal(d, d_all[active])
        dirs = pyramid_directions(contact.plane_normal)
        for k, i in enumerate(active):
            v = E[1, :3, :3] @ (np.cross(phi[1, :3], POINTS[i]) + phi[1, 3:])  # Eq. (1.90)
            # a few products of O(1) numbers: round-off ~1e-15
            assert N[k] @ phi.ravel() == pytest.approx(v @ contact.plane_normal, abs=1e-13)
            np.testing.assert_allclose(T[4 * k: 4 * k + 4] @ phi.ravel(), dirs @ v, rtol=0, atol=1e-13)
        for rows in (N, T):  # only the contact's body has columns
            np.testing.assert_array_equal(rows[:, :6], 0.0)
            np.testing.assert_array_equal(rows[:, 12:], 0.0)


def test_ground_contact_returns_only_points_within_the_margin(rng):
    E = random_poses(rng)
    d_all = contact_for(E).distances(E)
    above = np.sort(d_all[d_all > 0])
    assert len(above) >= 2  # the plane through the median point leaves two points above it
    for k, gap in enumerate(above):
        # a margin just above / just below this point's distance includes / excludes it
        for margin, count in ((gap * (1 + 1e-9), k + 1), (gap * (1 - 1e-9), k)):
            N, T, d = contact_for(E, margin=margin).rows(E)
            inside = d_all < margin
            assert inside.sum() == np.sum(d_all <= 0) + count
            assert len(N) == inside.sum() and len(T) == 4 * inside.sum()
            np.testing.assert_array_equal(d, d_all[inside])
    far = GroundContact(1, POINTS, plane_point=[0, 0, -100.0])
    N, T, d = far.rows(E)
    assert N.shape == (0, 18) and T.shape == (0, 18) and d.shape == (0,)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"body": -1}, "'body'"),
    ({"mu": -0.1}, "'mu'"),
    ({"points": [[0.0, 0.0]]}, "'points'"),
    ({"plane_point": [0.0, np.nan, 0.0]}, "'plane_point'"),
], ids=["world body", "negative mu", "2d points", "NaN plane point"])
def test_ground_contact_rejects_bad_arguments(kwargs, match):
    args = {"body": 0, "points": [[0.0, 0.0, 0.0]]}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        GroundContact(**args)


def test_ground_contact_rejects_a_zero_plane_normal():
    with pytest.raises(ValueError, match="'plane_normal'"):
        GroundContact(0, [[0.0, 0.0, 0.0]], plane_normal=[0.0, 0.0, 0.0])


# --- contact between two bodies (Eq. 1.92-1.93) -----------------------------------------------

def _stack():
    from redmax_edu.maximal.body import RigidBody
    from redmax_edu.maximal.system import System

    lower = RigidBody("lower", 2.0, [0.02, 0.02, 0.02], half_sizes=[0.2, 0.2, 0.1])
    upper = RigidBody("upper", 1.0, [0.01, 0.01, 0.01], half_sizes=[0.1, 0.1, 0.05])
    E = np.stack([np.eye(4), np.eye(4)])
    E[0, 2, 3], E[1, 2, 3] = 0.1, 0.25
    ground = GroundContact(0, lower.corners()[lower.corners()[:, 2] < 0])
    touching = [BodyContact.at(1, 0, [sx * 0.1, sy * 0.1, 0.2], [0, 0, 1.0], E)
                for sx in (-1, 1) for sy in (-1, 1)]
    return System([lower, upper], contacts=[ground, *touching]), E


def test_body_contact_row_is_the_relative_normal_speed(rng):
    system, E = _stack()
    contact = system.contacts[1]
    phi = rng.standard_normal((2, 6))
    N, T, d = contact.rows(E)
    x = np.array([0.1 * -1, 0.1 * -1, 0.2])
    v_upper = E[1, :3, :3] @ gamma(contact.r_i) @ phi[1]
    v_lower = E[0, :3, :3] @ gamma(contact.r_j) @ phi[0]
    assert np.allclose(E[1, :3, :3] @ contact.r_i + E[1, :3, 3], x)
    np.testing.assert_allclose(N @ phi.ravel(), [v_upper[2] - v_lower[2]], atol=1e-12)
    np.testing.assert_allclose(T[0] @ phi.ravel(), (v_upper - v_lower)[0], atol=1e-12)
    assert abs(d[0]) < 1e-15


def test_stacked_boxes_stay_at_rest_and_carry_their_weights():
    from redmax_edu.maximal.simulate import simulate

    system, E = _stack()
    run = simulate(system, E, np.zeros((2, 6)), 0.01, 20)
    assert np.abs(run.phi).max() < 1e-8  # the QP solves to ~1e-9 per step
    alpha = run.info[-1].solution.alpha
    # contact impulses per step: the ground carries both weights, the upper box its own
    assert alpha[:4].sum() == pytest.approx(3.0 * 9.81 * 0.01, rel=1e-6)
    assert alpha[4:].sum() == pytest.approx(1.0 * 9.81 * 0.01, rel=1e-6)


def test_body_contact_rejects_a_body_touching_itself():
    with pytest.raises(ValueError, match="'i' and 'j'"):
        BodyContact.at(0, 0, [0, 0, 0], [0, 0, 1.0], np.stack([np.eye(4)]))
