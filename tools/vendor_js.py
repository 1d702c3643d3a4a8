"""Copy the view-time JavaScript of the book from node_modules into _offline_static/widgets.

The built pages load require.js and the ipywidgets HTML manager from the book's own static
folder (configured in _config.yml under nb_ipywidgets_js), so widgets render without a CDN.
The folder is deliberately not called ``_static``: Jupyter Book 1 adds every .js found
there to every page. Run by ``make`` after ``npm ci``.
"""

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEST = ROOT / "_offline_static" / "widgets"
MANAGER = ROOT / "node_modules" / "@jupyter-widgets" / "html-manager" / "dist"
REQUIRE = ROOT / "node_modules" / "requirejs" / "require.js"
FONTS = (".woff", ".woff2", ".ttf", ".eot", ".svg")  # icon fonts the manager's CSS points at


def main():
    if not (MANAGER / "embed-amd.js").exists() or not REQUIRE.exists():
        sys.exit("vendor_js: node_modules is missing the widget JavaScript; run `npm ci` first")
    if DEST.exists():
        shutil.rmtree(DEST)
    DEST.mkdir(parents=True)
    shutil.copy2(REQUIRE, DEST / "require.js")
    shutil.copy2(MANAGER / "embed-amd.js", DEST / "embed-amd.js")
    for font in MANAGER.iterdir():
        if font.suffix in FONTS:
            shutil.copy2(font, DEST / font.name)
    print(f"vendor_js: {len(list(DEST.iterdir()))} files in {DEST.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
