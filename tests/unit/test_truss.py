"""Two-node springs formulated with stress (redmax_edu.truss, ArtiSynth notes §0.13)."""

import numpy as np
import pytest

from redmax_edu.checks import check_derivative
from redmax_edu.truss import STRAINS, truss_spring


def forces(y, k, rest, strain):
    f1 = truss_spring(y[:3], y[3:], k, rest, strain)[0]
    return np.concatenate([f1, -f1])


@pytest.mark.parametrize("strain", STRAINS)
def test_stiffness_matches_central_differences_and_a_missing_geometric_term_is_caught(rng, strain):
    for _ in range(10):
        y, k, rest = rng.standard_normal(6), rng.uniform(0.5, 5.0), rng.uniform(0.2, 2.0)
        f1, K, parts = truss_spring(y[:3], y[3:], k, rest, strain)
        assert check_derivative(lambda z, k=k, rest=rest: forces(z, k, rest, strain), y, K).ok
        M = parts["material"]
        wrong = np.block([[M, -M], [-M, M]])
        assert not check_derivative(lambda z, k=k, rest=rest: forces(z, k, rest, strain), y, wrong).ok
        np.testing.assert_allclose(K[:3, :3], parts["material"] + parts["geometric"], atol=1e-14)


def test_linear_law_is_the_ordinary_spring_and_zero_rest_length_gives_minus_k_identity(rng):
    for _ in range(10):
        x1, x2, k, rest = rng.standard_normal(3), rng.standard_normal(3), 2.0, 0.7
        l = np.linalg.norm(x2 - x1)  # noqa: E741
        f1, _, _ = truss_spring(x1, x2, k, rest)
        np.testing.assert_allclose(f1, k * (l - rest) * (x2 - x1) / l, atol=1e-14)  # tension k (l - r)
        np.testing.assert_allclose(truss_spring(x1, x2, k, 0.0)[1][:3, :3], -k * np.eye(3), atol=1e-14)


def test_green_stress_and_the_geometric_term_vanishing_at_rest_length():
    f1, K, parts = truss_spring([0.0, 0, 0], [1.5, 0, 0], 4.0, 1.0, "green")
    np.testing.assert_allclose(f1, [4.0 * 0.5 * (2.25 - 1.0) * 1.5, 0, 0])
    _, _, at_rest = truss_spring([0.0, 0, 0], [0.0, 0.6, 0.8], 4.0, 1.0, "green")
    np.testing.assert_allclose(at_rest["geometric"], 0, atol=1e-15)


@pytest.mark.parametrize(("args", "words"), [
    (([0.0, 0, 0], [0.0, 0, 0], 1.0, 1.0), "coincide"),
    (([0.0, 0, 0], [1.0, 0, 0], 1.0, 0.0, "green"), "argument 'rest'"),
    (([0.0, 0, 0], [1.0, 0, 0], -1.0, 1.0), "argument 'k'"),
    (([0.0, 0, 0], [1.0, 0, 0], 1.0, 1.0, "neo-hookean"), "argument 'strain'"),
    (([0.0, 0], [1.0, 0, 0], 1.0, 1.0), "argument 'x1'"),
])
def test_bad_input_names_the_argument(args, words):
    with pytest.raises(ValueError) as err:
        truss_spring(*args)
    assert words in str(err.value)
