"""Shared test fixtures: a seeded generator, and matplotlib on the non-interactive Agg backend."""

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")  # before any test module imports pyplot: no windows, same pixels everywhere


@pytest.fixture
def rng():
    """A fresh generator with a fixed seed for each test, so tests do not depend on their order."""
    return np.random.default_rng(20240601)
