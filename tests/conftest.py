"""Shared test fixtures: a seeded generator, matplotlib on the non-interactive Agg backend, figures closed."""

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")  # before any test module imports pyplot: no windows, same pixels everywhere


@pytest.fixture
def rng():
    """A fresh generator with a fixed seed for each test, so tests do not depend on their order."""
    return np.random.default_rng(20240601)


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every matplotlib figure a test opened, so figures do not pile up across tests."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")
