"""Unit tests of redmax_edu.units: cgs to SI conversion."""

import numpy as np
import pytest

from redmax_edu.units import CGS_TO_SI, from_cgs


@pytest.mark.parametrize(("quantity", "cgs", "si"), [
    ("length", 100.0, 1.0), ("mass", 1000.0, 1.0), ("density", 1.0, 1000.0),
    ("inertia", 1e7, 1.0), ("force", 1e5, 1.0), ("torque", 1e7, 1.0), ("energy", 1e7, 1.0),
    ("acceleration", -980.0, -9.8), ("stiffness", 1e3, 1.0), ("damping", 1e3, 1.0),
])
def test_from_cgs_converts_round_numbers_exactly(quantity, cgs, si):
    assert from_cgs(cgs, quantity) == si


def test_derived_factors_follow_from_length_and_mass():
    cm, g = CGS_TO_SI["length"], CGS_TO_SI["mass"]
    # written as literals in the module; here rebuilt from the base units (to round-off)
    for quantity, factor in (("inertia", g * cm**2), ("force", g * cm), ("density", g / cm**3),
                             ("torque", g * cm**2), ("stiffness", g), ("damping", g)):
        assert CGS_TO_SI[quantity] == pytest.approx(factor, rel=1e-15)


def test_from_cgs_converts_arrays_elementwise():
    np.testing.assert_array_equal(from_cgs([[100.0, 200.0]], "length"), [[1.0, 2.0]])


@pytest.mark.parametrize(("value", "quantity", "named"), [
    (1.0, "speed of light", "'quantity'"),
    (np.nan, "length", "'value'"),
    ("ten", "length", "'value'"),
])
def test_from_cgs_bad_input_names_the_argument(value, quantity, named):
    with pytest.raises(ValueError, match=named):
        from_cgs(value, quantity)
