"""Null-space reduction of attachments (redmax_edu.maximal.attachments, ArtiSynth notes §0.17)."""

import numpy as np
import pytest

from redmax_edu.lie import brac, material_jacobian, random_transform
from redmax_edu.maximal.attachments import attachment_kkt, reduce_attachments


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
