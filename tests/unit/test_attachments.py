"""Null-space reduction of attachments (redmax_edu.maximal.attachments, ArtiSynth notes §0.17)."""

import numpy as np
import pytest

from redmax_edu.lie import brac, material_jacobian, random_transform
from redmax_edu.maximal.attachments import (
    attachment_kkt,
    prescribed_kkt,
    project_one_dimensional,
    reduce_attachments,
    reduce_prescribed,
)


def random_problem(rng, n=10, p=2, attached=(2, 5, 7)):
    B = rng.standard_normal((n, n))
    M = B @ B.T + n * np.eye(n)
    q = len(attached)
    return (M, rng.standard_normal(n), rng.standard_normal((p, n)), rng.standard_normal(p), list(attached),
            rng.standard_normal((q, n - q)), rng.standard_normal(q))


def test_reduced_solution_equals_the_unreduced_kkt_solve(rng):
    for _ in range(20):
        problem = random_problem(rng)
        full = attachment_kkt(*problem)
        red = reduce_attachments(*problem)
        for a, b in zip(red.solve(), full, strict=True):
            np.testing.assert_allclose(a, b, atol=1e-11)
        assert red.M.shape == (7, 7)
        np.testing.assert_allclose(red.M, red.M.T, atol=1e-12)


def test_regularised_constraints_and_zero_attachment_rhs(rng):
    M, f, G, g, att, G_ba, _ = random_problem(rng)
    R = np.abs(rng.standard_normal(2))
    for a, b in zip(reduce_attachments(M, f, G, g, att, G_ba, None, R).solve(),
                    attachment_kkt(M, f, G, g, att, G_ba, None, R), strict=True):
        np.testing.assert_allclose(a, b, atol=1e-11)
    red = reduce_attachments(M, f, G, g, att, G_ba)
    active = np.setdiff1d(np.arange(10), att)
    np.testing.assert_allclose(red.f, f[active] - G_ba.T @ f[att], atol=1e-14)  # g_b = 0: f' simplifies
    np.testing.assert_allclose(red.gamma, g, atol=1e-14)


def test_a_point_mass_glued_to_a_body_adds_its_spatial_inertia(rng):
    """G_ba = -J (material Jacobian): M' - M_body = m Gamma^T Gamma, the notes' §0.1 inertia with J = 0."""
    E, r, m = random_transform(rng), rng.standard_normal(3), 0.7
    M = np.zeros((9, 9))
    M[:6, :6] = np.diag([0.1, 0.2, 0.25, 2.0, 2.0, 2.0])
    M[6:, 6:] = m * np.eye(3)
    red = reduce_attachments(M, np.zeros(9), None, None, [6, 7, 8], -material_jacobian(E, r))
    C = brac(r)
    point = m * np.block([[-C @ C, C], [-C, np.eye(3)]])
    np.testing.assert_allclose(red.M - M[:6, :6], point, atol=1e-12)


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"attached": [1, 1]}, "argument 'attached'"),
    ({"attached": [12]}, "argument 'attached'"),
    ({"G_ba": np.zeros((3, 6))}, "argument 'G_ba'"),
    ({"f": np.zeros(9)}, "arguments M"),
    ({"G": np.zeros((2, 9))}, "arguments G"),
])
def test_bad_input_names_the_argument(rng, kwargs, words):
    M, f, G, g, att, G_ba, g_b = random_problem(rng)
    args = {"M": M, "f": f, "G": G, "g": g, "attached": att, "G_ba": G_ba, "g_b": g_b}
    args.update(kwargs)
    with pytest.raises(ValueError) as err:
        reduce_attachments(**args)
    assert words in str(err.value)


# --- §0.21: prescribed ("parametrically controlled") coordinates -----------------------------------

def prescribed_problem(rng, n=12, p=3, attached=(1, 4, 8, 9), prescribed=(2, 6, 10)):
    """A random system whose attachments have prescribed coordinates among their masters."""
    M, f, G, g, att, G_ba, g_b = random_problem(rng, n, p, attached)
    R = np.abs(rng.standard_normal(p))
    return M, f, G, g, att, G_ba, list(prescribed), rng.standard_normal(len(prescribed)), g_b, R


def test_prescribed_reduction_equals_the_unreduced_kkt_solve(rng):
    """v, lam, lam_b and the driving force u agree with the unreduced solve (rows v_r = v_prescribed);
    relative 1e-10 covers round-off of a 20-unknown solve with condition numbers ~1e3."""
    for _ in range(20):
        problem = prescribed_problem(rng)
        red, full = reduce_prescribed(*problem), prescribed_kkt(*problem)
        for a, b in zip(red.solve(), full, strict=True):
            np.testing.assert_allclose(a, b, atol=1e-10 * max(1.0, np.abs(b).max()))
        assert red.reduced.M.shape == (5, 5)  # 12 - 4 attached - 3 prescribed
        np.testing.assert_allclose(red.solve()[0][problem[6]], problem[7], atol=1e-12)


def test_the_driving_force_u_makes_the_prescribed_coordinates_move_as_prescribed(rng):
    """Independent of the reduction: adding u to f and solving with no prescription reproduces v."""
    M, f, G, g, att, G_ba, pres, v_r, g_b, R = prescribed_problem(rng)
    v, lam, lam_b, u = reduce_prescribed(M, f, G, g, att, G_ba, pres, v_r, g_b, R).solve()
    driven = f.copy()
    driven[pres] += u
    v_free, lam_free, _ = attachment_kkt(M, driven, G, g, att, G_ba, g_b, R)
    np.testing.assert_allclose(v_free, v, atol=1e-10)
    np.testing.assert_allclose(lam_free, lam, atol=1e-10)


def _blocks(M, G, G_ba, att, pres, n):
    """The seed's blocks over a (free), r (prescribed) and b (attached), G_ba split by column."""
    masters = np.setdiff1d(np.arange(n), att)
    a = np.setdiff1d(masters, pres)
    col = {c: i for i, c in enumerate(masters)}
    return a, np.asarray(pres), np.asarray(att), G_ba[:, [col[c] for c in a]], G_ba[:, [col[c] for c in pres]]


def test_reduced_blocks_are_the_notes_formulas_with_the_minus_sign_on_g_b(rng):
    """M'_aa, M'_ar, G'_sa, G'_sr of §0.21 as printed; f'_a with the minus sign of Eq. (0.23). The
    notes' §0.21 prints + (M_ab - G_ba^T M_bb) g_b: that version misses the unreduced solve by far
    (the mutant check), and agrees only when g_b = 0."""
    n = 12
    M, f, G, g, att, G_ba, pres, v_r, g_b, R = prescribed_problem(rng, n)
    a, r, b, G_bA, G_bR = _blocks(M, G, G_ba, att, pres, n)
    B = lambda x, y: M[np.ix_(x, y)]  # noqa: E731
    M_aa = B(a, a) - B(a, b) @ G_bA - G_bA.T @ B(b, a) + G_bA.T @ B(b, b) @ G_bA
    M_ar = B(a, r) - B(a, b) @ G_bR - G_bA.T @ B(b, r) + G_bA.T @ B(b, b) @ G_bR
    G_sa, G_sr = G[:, a] - G[:, b] @ G_bA, G[:, r] - G[:, b] @ G_bR
    red = reduce_prescribed(M, f, G, g, att, G_ba, pres, v_r, g_b, R).reduced
    np.testing.assert_allclose(red.M, M_aa, atol=1e-12)
    np.testing.assert_allclose(red.G, G_sa, atol=1e-12)
    np.testing.assert_allclose(red.gamma, g - G[:, b] @ g_b - G_sr @ v_r, atol=1e-12)
    for sign, agrees in ((-1.0, True), (+1.0, False)):  # Eq. (0.23); the notes' §0.21
        f_a = f[a] - G_bA.T @ f[b] + sign * (B(a, b) - G_bA.T @ B(b, b)) @ g_b
        rhs = np.concatenate([f_a - M_ar @ v_r, red.gamma])
        y = np.linalg.solve(np.block([[M_aa, G_sa.T], [G_sa, np.diag(R)]]), rhs)
        miss = np.abs(y[: len(a)] - prescribed_kkt(M, f, G, g, att, G_ba, pres, v_r, g_b, R)[0][a]).max()
        assert (miss < 1e-10) == agrees, (sign, miss)
    # with g_b = 0 both signs agree: the term vanishes
    red0 = reduce_prescribed(M, f, G, g, att, G_ba, pres, v_r, None, R)
    np.testing.assert_allclose(red0.reduced.f, f[a] - G_bA.T @ f[b] - M_ar @ v_r, atol=1e-12)


def test_recovered_driving_force_is_the_notes_formula_with_a_plus_on_g_b(rng):
    """The force on the prescribed components, u_r + f_r = M'_ra v_a + M'_rr v_r + G'_sr^T lam
    + G_br^T f_b + (M_rb - G_br^T M_bb) g_b: the notes print - before the last term (the mutant), which
    misses the unreduced solve's force whenever g_b != 0."""
    n = 12
    M, f, G, g, att, G_ba, pres, v_r, g_b, R = prescribed_problem(rng, n)
    a, r, b, G_bA, G_bR = _blocks(M, G, G_ba, att, pres, n)
    B = lambda x, y: M[np.ix_(x, y)]  # noqa: E731
    M_ra = B(r, a) - B(r, b) @ G_bA - G_bR.T @ B(b, a) + G_bR.T @ B(b, b) @ G_bA
    M_rr = B(r, r) - B(r, b) @ G_bR - G_bR.T @ B(b, r) + G_bR.T @ B(b, b) @ G_bR
    G_sr = G[:, r] - G[:, b] @ G_bR
    v, lam, _, u = prescribed_kkt(M, f, G, g, att, G_ba, pres, v_r, g_b, R)
    common = M_ra @ v[a] + M_rr @ v_r + G_sr.T @ lam + G_bR.T @ f[b]
    term = (B(r, b) - G_bR.T @ B(b, b)) @ g_b
    np.testing.assert_allclose(u + f[r], common + term, atol=1e-10 * np.abs(u).max())
    assert np.abs(u + f[r] - (common - term)).max() > 1e-3 * np.abs(u).max()


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"prescribed": [4]}, "also attached"),
    ({"prescribed": [2, 2]}, "argument 'prescribed'"),
    ({"prescribed": [15]}, "argument 'prescribed'"),
    ({"v_prescribed": np.zeros(2)}, "argument 'v_prescribed'"),
])
def test_prescribed_bad_input_names_the_argument(rng, kwargs, words):
    M, f, G, g, att, G_ba, pres, v_r, g_b, R = prescribed_problem(rng)
    args = {"M": M, "f": f, "G": G, "g": g, "attached": att, "G_ba": G_ba, "prescribed": pres,
            "v_prescribed": v_r, "g_b": g_b, "R": R}
    args.update(kwargs)
    for function in (reduce_prescribed, prescribed_kkt):
        with pytest.raises(ValueError, match=words):
            function(**args)


# --- §0.20: one constraint row, projected one component at a time -------------------------------------

def random_components(rng, sizes=(6, 3, 6, 3)):
    """A block-diagonal SPD mass matrix over components of the given sizes, and the index sets."""
    n = sum(sizes)
    M, blocks, start = np.zeros((n, n)), [], 0
    for size in sizes:
        B = rng.standard_normal((size, size))
        M[start: start + size, start: start + size] = B @ B.T + size * np.eye(size)
        blocks.append(list(range(start, start + size)))
        start += size
    return M, blocks


def test_one_dimensional_projection_equals_the_kkt_projection(rng):
    """v = v0 + M^-1 G^T (G M^-1 G^T)^-1 (gamma - G v0), solved as the KKT system [[M, G^T], [G, 0]]:
    the per-component sums reproduce it to round-off. The mutant that divides by a component's own
    effective inverse inertia instead of the sum is caught."""
    for _ in range(20):
        M, blocks = random_components(rng)
        n = len(M)
        G, v0, gamma = rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal()
        v, w = project_one_dimensional(M, G, v0, gamma, blocks)
        y = np.linalg.solve(np.block([[M, G[:, None]], [G[None], np.zeros((1, 1))]]),
                            np.concatenate([M @ v0, [gamma]]))
        np.testing.assert_allclose(v, y[:n], atol=1e-12 * max(1.0, np.abs(y).max()))
        assert abs(G @ v - gamma) < 1e-12 * max(1.0, abs(gamma))
        np.testing.assert_allclose(w.sum(), G @ np.linalg.solve(M, G), rtol=1e-12)
        b = blocks[0]
        wrong = v0[b] + np.linalg.solve(M[np.ix_(b, b)], G[b]) * (gamma - G @ v0) / w[0]
        assert np.abs(wrong - v[b]).max() > 1e-3


def test_one_dimensional_projection_after_attachments_equals_the_unreduced_solve(rng):
    """Points glued to one body each (so M' stays block diagonal), a row on the points only: projecting
    with M' and G' = -G_b G_ba matches attachment_kkt on the full system with f = M v0."""
    for _ in range(10):
        E = [random_transform(rng), random_transform(rng)]
        r = [rng.standard_normal(3) * 0.2, rng.standard_normal(3) * 0.2]
        M = np.diag(np.concatenate([rng.uniform(0.05, 0.2, 3), [2.0] * 3, rng.uniform(0.05, 0.2, 3),
                                    [3.0] * 3, [0.5] * 3, [0.7] * 3]))
        G_ba = np.zeros((6, 12))
        G_ba[:3, :6], G_ba[3:, 6:] = -material_jacobian(E[0], r[0]), -material_jacobian(E[1], r[1])
        G = np.zeros((1, 18))
        normal = rng.standard_normal(3)
        G[0, 12:15], G[0, 15:] = -normal, normal  # relative velocity of the points along a direction
        v_a0 = rng.standard_normal(12)
        v0 = np.concatenate([v_a0, -G_ba @ v_a0])  # the points move with their bodies
        gamma = rng.standard_normal()
        red = reduce_attachments(M, M @ v0, G, [gamma], list(range(12, 18)), G_ba)
        v, _ = project_one_dimensional(red.M, red.G, v_a0, gamma, [range(6), range(6, 12)])
        full = attachment_kkt(M, M @ v0, G, [gamma], list(range(12, 18)), G_ba)[0]
        np.testing.assert_allclose(v, full[:12], atol=1e-11)


def test_effective_inverse_inertia_of_a_particle_and_of_a_body_point(rng):
    """w = |g|^2 / m for a particle; for a row n^T J on a body point, w = n^T (1/m I - [r] I^-1 [r]) n."""
    m = 2.5
    g = rng.standard_normal(3)
    _, w = project_one_dimensional(m * np.eye(3), g, np.zeros(3), 1.0, [[0, 1, 2]])
    np.testing.assert_allclose(w[0], g @ g / m, rtol=1e-14)
    moments, mass = np.array([0.1, 0.2, 0.25]), 3.0
    r, normal = rng.standard_normal(3), rng.standard_normal(3)
    row = normal @ material_jacobian(np.eye(4), r)  # body at the origin, unrotated
    body = np.diag(np.concatenate([moments, [mass] * 3]))
    _, w = project_one_dimensional(body, row, np.zeros(6), 1.0, [range(6)])
    C = brac(r)
    expected = normal @ (np.eye(3) / mass - C @ np.diag(1 / moments) @ C) @ normal
    np.testing.assert_allclose(w[0], expected, rtol=1e-12)


@pytest.mark.parametrize(("change", "words"), [
    ("couple", "couples components 0 and 1"),
    ("overlap", "argument 'components'"),
    ("missing", "argument 'components'"),
    ("zero row", "argument 'G' is zero"),
    ("short v0", "argument 'v0'"),
    ("singular block", "singular block"),
])
def test_one_dimensional_bad_input_names_the_argument(rng, change, words):
    M, blocks = random_components(rng, (3, 3))
    G, v0 = rng.standard_normal(6), rng.standard_normal(6)
    if change == "couple":
        M[0, 4] = M[4, 0] = 0.5
    elif change == "overlap":
        blocks = [[0, 1, 2, 3], [3, 4, 5]]
    elif change == "missing":
        blocks = [[0, 1, 2]]
    elif change == "zero row":
        G = np.zeros(6)
    elif change == "singular block":
        M[:3, :3] = 0.0
    else:
        v0 = v0[:5]
    with pytest.raises(ValueError, match=words):
        project_one_dimensional(M, G, v0, 0.0, blocks)
