"""Copy the view-time JavaScript of the book into _offline_static/ (served as _static/).

* ``widgets/``: require.js and the ipywidgets HTML manager, from node_modules (configured in
  _config.yml under nb_ipywidgets_js), so widgets render without a CDN. (The manager's icon
  fonts are not copied: it requests them relative to each page, and the explorers' sliders
  do not use icons.)
* ``plotly/plotly.min.js``: the plotly.js that ships inside the installed plotly package
  (so it always matches the Python side), added by book/_ext/book_assets.py to the pages
  with plotly figures.

The folder is deliberately not called ``_static``: Jupyter Book 1 adds every .js found
there to every page. Run by ``make`` after ``npm ci``.
"""

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STATIC = ROOT / "_offline_static"
DEST = STATIC / "widgets"
MANAGER = ROOT / "node_modules" / "@jupyter-widgets" / "html-manager" / "dist"
REQUIRE = ROOT / "node_modules" / "requirejs" / "require.js"


def main():
    if not (MANAGER / "embed-amd.js").exists() or not REQUIRE.exists():
        sys.exit("vendor_js: node_modules is missing the widget JavaScript; run `npm ci` first")
    if DEST.exists():
        shutil.rmtree(DEST)
    DEST.mkdir(parents=True)
    shutil.copy2(REQUIRE, DEST / "require.js")
    shutil.copy2(MANAGER / "embed-amd.js", DEST / "embed-amd.js")
    import plotly

    plotly_js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    (STATIC / "plotly").mkdir(exist_ok=True)
    shutil.copy2(plotly_js, STATIC / "plotly" / "plotly.min.js")
    print(f"vendor_js: require.js, the widget manager and plotly.js {plotly.__version__} "
          f"in {STATIC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
