"""Regenerate the committed pictures of the README and the book's front page.

    python tools/make_figures.py

They are drawn by the same library functions as the twist explorer's static figure in
book/01_maximal/02_velocity.ipynb.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from redmax_edu.viz.draw import draw_panels  # noqa: E402
from redmax_edu.viz.explorers import TWIST_PRESETS, twist_scene  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main():
    fig = draw_panels([twist_scene(phi, 1.0) for phi in TWIST_PRESETS.values()], list(TWIST_PRESETS))
    out = ROOT / "book" / "images" / "twist_explorer.png"
    fig.savefig(out, dpi=80, metadata={"Software": None})
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
