"""Re-execute notebooks top to bottom on a fresh kernel and store their outputs in place.

    python tools/refresh_notebooks.py                 # every notebook of the book and exercises
    python tools/refresh_notebooks.py book/01_maximal/05_adjoint.ipynb

Timing metadata is not recorded and the widget state is stored, so that Jupyter shows a
notebook's widgets before it is run (the built pages leave them out: book/_ext/book_assets.py).
Plotly figures are stored without plotly.js, which the built page supplies
(REDMAX_EDU_PLOTLY=page). BLAS runs single-threaded, as under test, so that the stored outputs
are what ``pytest --nbval`` reproduces. Long runs are not shortened here (fast mode off).
Each refreshed notebook's text twin (tools/sync_twins.py) is rewritten too.
"""

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
os.environ.setdefault("JUPYTER_PREFER_ENV_PATH", "1")
os.environ.setdefault("PYTHONHASHSEED", "0")
os.environ.pop("REDMAX_EDU_FAST", None)
os.environ["REDMAX_EDU_PLOTLY"] = "page"  # the built page supplies plotly.js; outputs stay small

import nbformat  # noqa: E402
from nbclient import NotebookClient  # noqa: E402

sys.path.insert(0, str(ROOT / "tools"))
from check_notebooks import all_notebooks, clean_metadata, shown  # noqa: E402
from sync_twins import write_twin  # noqa: E402


def refresh(path):
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, kernel_name="python3", timeout=1800, record_timing=False,
                            store_widget_state=True, resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    clean_metadata(nb)
    nbformat.write(nb, path)
    write_twin(path)  # the text twin follows its notebook (tools/sync_twins.py)


def main(args):
    paths = [Path(a).resolve() for a in args] or all_notebooks()
    for path in paths:
        start = time.perf_counter()
        refresh(path)
        print(f"refreshed {shown(path)} in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
