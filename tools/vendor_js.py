"""Copy the view-time JavaScript of the book into _offline_static/ (served as _static/).

``plotly/plotly.min.js`` is the plotly.js that ships inside the installed plotly package (so
it always matches the Python side); book/_ext/book_assets.py adds it to the pages with plotly
figures. (MathJax comes from the sphinx-mathjax-offline package. No page needs the ipywidgets
manager: live widgets are left out of the published pages, see book/_ext/book_assets.py.)

The folder is deliberately not called ``_static``: Jupyter Book 1 adds every .js found
there to every page. Run by ``make``.
"""

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STATIC = ROOT / "_offline_static"


def main():
    import plotly

    plotly_js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    (STATIC / "plotly").mkdir(parents=True, exist_ok=True)
    shutil.copy2(plotly_js, STATIC / "plotly" / "plotly.min.js")
    print(f"vendor_js: plotly.js {plotly.__version__} in {STATIC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
