"""Text twins of the notebooks: each notebook as MyST Markdown, which diffs and reviews as text.

    python tools/sync_twins.py                 # write the twin of every notebook
    python tools/sync_twins.py NOTEBOOK ...    # write the twins of these notebooks
    python tools/sync_twins.py --check [NB ...]  # exit 1 if a twin is missing, stale or orphaned

The twin of ``book/01_maximal/01_position.ipynb`` is ``text/book/01_maximal/01_position.md``
(jupytext's ``md:myst`` format: markdown cells as they are, code cells as ``{code-cell}``
blocks with their tags; no outputs, no notebook metadata). The notebook stays the source
of truth; the twin is written from it, never the other way, so a review reads the diff of
the twin and ``tools/check_notebooks.py`` fails when a notebook changed without its twin.

The twins live in a mirrored top-level folder on purpose: a ``.md`` next to its ``.ipynb``
would be a second Sphinx document of the same name, and a ``.py`` twin under ``book/``
would be imported by ``pytest --doctest-modules`` and linted by ruff. ``text/`` is outside
the book's table of contents, pytest's test paths and (see pyproject.toml) ruff's files.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TWIN_ROOT = ROOT / "text"
FORMAT = "md:myst"
#: jupytext filters: no notebook metadata in the twin (the notebook holds it), cell tags kept
FILTERS = {"notebook_metadata_filter": "-all", "cell_metadata_filter": "tags"}

sys.path.insert(0, str(ROOT / "tools"))
from check_notebooks import all_notebooks, shown  # noqa: E402


def twin_path(notebook, root=ROOT, twin_root=None):
    """Where the twin of ``notebook`` (a path inside ``root``) lives."""
    twin_root = Path(twin_root) if twin_root else Path(root) / "text"
    return twin_root / Path(notebook).resolve().relative_to(Path(root).resolve()).with_suffix(".md")


def twin_text(notebook):
    """The twin's text of ``notebook`` (a path)."""
    import jupytext
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    nb.metadata["jupytext"] = dict(FILTERS)
    return jupytext.writes(nb, fmt=FORMAT)


def write_twin(notebook, root=ROOT, twin_root=None):
    """Write the twin of ``notebook`` if it changed; the path written, else None.

    A notebook outside ``root`` (a scratch copy) has no twin: nothing is written.
    """
    if not Path(notebook).resolve().is_relative_to(Path(root).resolve()):
        return None
    path = twin_path(notebook, root, twin_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = twin_text(notebook)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
        return path
    return None


def twin_problems(notebooks, root=ROOT, twin_root=None, orphans=True):
    """Missing or stale twins of ``notebooks``, and (``orphans``) twins without a notebook."""
    out = []
    notebooks = [nb for nb in notebooks if Path(nb).resolve().is_relative_to(Path(root).resolve())]
    for notebook in notebooks:  # (a notebook outside the repository has no twin)
        path = twin_path(notebook, root, twin_root)
        name = Path(notebook).resolve().relative_to(Path(root).resolve()).as_posix()
        if not path.exists():
            out.append(f"{name}: no text twin {path.relative_to(root).as_posix()} "
                       "(run tools/sync_twins.py)")
        elif path.read_text(encoding="utf-8") != twin_text(notebook):
            out.append(f"{name}: its text twin {path.relative_to(root).as_posix()} is stale "
                       "(run tools/sync_twins.py)")
    if orphans:
        twin_root = Path(twin_root) if twin_root else Path(root) / "text"
        expected = {twin_path(nb, root, twin_root) for nb in notebooks}
        for path in sorted(twin_root.rglob("*.md")) if twin_root.exists() else []:
            if path not in expected:
                out.append(f"{path.relative_to(root).as_posix()}: a twin without a notebook (delete it)")
    return out


def main(args):
    check = "--check" in args
    paths = [Path(a).resolve() for a in args if a != "--check"]
    notebooks = paths or all_notebooks()
    if check:
        found = twin_problems(notebooks, orphans=not paths)
        for problem in found:
            print(problem)
        print(f"sync_twins: {len(notebooks)} notebooks, {len(found)} twin problems")
        return 1 if found else 0
    for notebook in notebooks:
        written = write_twin(notebook)
        if written:
            print(f"wrote {shown(written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
