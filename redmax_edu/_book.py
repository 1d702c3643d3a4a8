"""Notebook plumbing for the book: printing, seeding, figure format, fast mode.

Nothing taught lives here. Every notebook starts with ``rng = setup(seed=0)``.
"""

import os

import numpy as np

from . import __version__

#: Environment variable that shortens long runs (set by ``make test``).
FAST_ENV = "REDMAX_EDU_FAST"


def setup(seed=0):
    """Prepare a notebook: compact printing, PNG figures, offline plotly, a seeded generator.

    Parameters
    ----------
    seed : int
        Seed of the returned generator; every random draw in a notebook comes from it.

    Returns
    -------
    numpy.random.Generator
    """
    np.set_printoptions(precision=4, suppress=True, linewidth=100)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 96, "savefig.dpi": 96, "figure.figsize": (6.4, 4.0),
                         "axes.grid": True, "grid.alpha": 0.3})
    try:  # PNG, not SVG: SVG output carries ids and dates that change on every run
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        if get_ipython() is not None:  # outside a kernel it would start a shell and its history thread
            set_matplotlib_formats("png")
    except ImportError:  # without IPython
        pass
    try:  # plotly.js embedded in the page (once per notebook), nothing fetched from a CDN
        from .viz.interactive import use_offline_renderer

        use_offline_renderer()
    except ImportError:
        pass
    print(f"redmax_edu {__version__}; random seed {seed}")
    return np.random.default_rng(seed)


def fast_mode():
    """True when long runs should be shortened (``REDMAX_EDU_FAST=1``, as under ``make test``)."""
    return os.environ.get(FAST_ENV, "") not in ("", "0")
