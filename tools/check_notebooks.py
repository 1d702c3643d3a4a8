"""Notebook hygiene: every committed notebook of the book and the exercises must pass.

    python tools/check_notebooks.py [NOTEBOOK ...]

Checks that each notebook
* uses the ``python3`` kernel and carries no metadata beyond kernelspec, language name and
  widget state (no timings, no editor state),
* has been executed top to bottom on a fresh kernel: execution counts 1, 2, 3, ... in
  order, with no error outputs,
* uses only known cell tags,
* starts with a code cell calling ``setup(seed=...)``,
* prints no local paths or memory addresses,
* has an up-to-date text twin under ``text/`` (see tools/sync_twins.py), and no twin is
  left without its notebook.

Exits with status 1 and one line per problem when something is wrong.
"""

import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
NOTEBOOK_DIRS = ("book", "exercises")
KNOWN_TAGS = {"nbval-ignore-output", "hide-input", "hide-output", "hide-cell", "remove-input",
              "remove-output", "remove-cell", "solution", "student"}
NOTEBOOK_METADATA = {"kernelspec", "language_info", "widgets"}
CELL_METADATA = {"tags"}
ADDRESS = re.compile(r"at 0x[0-9a-fA-F]{6,}")


def all_notebooks():
    """Every notebook under book/ and exercises/, checkpoints and build output excluded."""
    found = []
    for folder in NOTEBOOK_DIRS:
        found += [p for p in sorted((ROOT / folder).rglob("*.ipynb"))
                  if ".ipynb_checkpoints" not in p.parts and "_build" not in p.parts]
    return found


def clean_metadata(nb):
    """Drop editor and timing metadata in place (used by refresh_notebooks.py)."""
    nb.metadata = {k: v for k, v in nb.metadata.items() if k in NOTEBOOK_METADATA}
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    for cell in nb.cells:
        cell.metadata = {k: v for k, v in cell.metadata.items() if k in CELL_METADATA}
        for out in cell.get("outputs", []):
            out.get("metadata", {}).pop("execution", None)


def _text_of(output):
    if output.output_type == "stream":
        return output.text
    data = output.get("data", {})
    return "".join(data.get(m, "") for m in ("text/plain", "text/html") if isinstance(data.get(m, ""), str))


def problems(path):
    """A list of human-readable problems with one notebook (empty when it is clean)."""
    nb = nbformat.read(path, as_version=4)
    out = []
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as exc:
        out.append(f"invalid notebook: {exc.message}")
    extra = set(nb.metadata) - NOTEBOOK_METADATA
    if extra:
        out.append(f"stray notebook metadata {sorted(extra)}")
    if nb.metadata.get("kernelspec", {}).get("name") != "python3":
        out.append("kernelspec is not python3")
    code = [c for c in nb.cells if c.cell_type == "code"]
    if not code or "setup(" not in code[0].source:
        out.append("the first code cell must call setup(seed=...)")
    expected = 1
    for index, cell in enumerate(nb.cells):
        where = f"cell {index}"
        extra = set(cell.metadata) - CELL_METADATA
        if extra:
            out.append(f"{where}: stray cell metadata {sorted(extra)}")
        unknown = set(cell.metadata.get("tags", [])) - KNOWN_TAGS
        if unknown:
            out.append(f"{where}: unknown tags {sorted(unknown)}")
        if cell.cell_type != "code":
            continue
        if cell.execution_count != expected:
            out.append(f"{where}: execution count {cell.execution_count}, expected {expected} "
                       "(refresh the notebook top to bottom)")
        expected += 1
        for output in cell.outputs:
            if output.output_type == "error":
                out.append(f"{where}: error output {output.ename}: {output.evalue}")
            text = _text_of(output)
            if str(ROOT) in text or "/tmp/" in text:
                out.append(f"{where}: output contains a local path")
            if ADDRESS.search(text):
                out.append(f"{where}: output contains a memory address (end plotting lines with ';')")
    return out


def shown(path):
    """``path`` relative to the repository when it is inside it, else as given."""
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def main(args):
    paths = [Path(a).resolve() for a in args] or all_notebooks()
    bad = 0
    for path in paths:
        for problem in problems(path):
            print(f"{shown(path)}: {problem}")
            bad += 1
    from sync_twins import twin_problems  # imports this module: not at the top

    for problem in twin_problems(paths, root=ROOT, orphans=not args):
        print(problem)
        bad += 1
    print(f"check_notebooks: {len(paths)} notebooks, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
