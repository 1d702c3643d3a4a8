"""The autograder's entry point on Gradescope, and the unpacking of submitted zip files.

An autograder zip made by ``make exercises`` (``tools/exercises.py``) holds the library's
wheel, its dependencies' exact versions, ``setup.sh`` (which installs them into a virtual
environment), ``run_autograder`` and ``grading.json`` (the assignment's name and its secret
seed). Gradescope runs ``run_autograder``, which runs this module::

    python -m redmax_edu.exercises.gradescope [AUTOGRADER]

in Gradescope's folder layout under ``AUTOGRADER`` (default ``/autograder``): the zip's files
in ``source/``, the student's files in ``submission/``, and the result it writes,
``results/results.json``: one test per function the students write, with its points and the
grader's report of it. The notebook is graded by :func:`~redmax_edu.exercises.remote.grade_notebook`,
exactly as ``make grade`` grades it; run as root (Gradescope), the notebook runs as ``nobody``.

A submission is one notebook, or one zip file holding one notebook (:func:`notebooks_in`).
"""

import json
import os
import sys
import tempfile
import zipfile
from pathlib import Path

from . import ASSIGNMENTS, WATCHED
from .remote import Zygote, grade_notebook

#: The largest zip file a submission may unpack to, in bytes.
MAX_UNPACKED = 200 << 20


def unpack_zip(path, target):
    """Unpack the zip file ``path`` into ``target``: its notebooks, or a ValueError saying why not.

    Members with absolute paths or ``..`` are refused, and so is a zip that unpacks to more
    than :data:`MAX_UNPACKED` bytes.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            if sum(m.file_size for m in members) > MAX_UNPACKED:
                raise ValueError(f"it unpacks to more than {MAX_UNPACKED >> 20} MB")
            for member in members:
                parts = Path(member.filename).parts
                if member.filename.startswith(("/", "\\")) or ".." in parts:
                    raise ValueError(f"it holds a path outside the zip ({member.filename})")
            archive.extractall(target)
    except zipfile.BadZipFile:
        raise ValueError("it is not a readable zip file") from None
    return sorted(p for p in Path(target).rglob("*.ipynb")
                  if ".ipynb_checkpoints" not in p.parts and "__MACOSX" not in p.parts)


def notebooks_in(path, workdir):
    """The notebook to grade in ``path`` (a notebook or a zip of one, unpacked into ``workdir``), or a
    ValueError saying why there is none."""
    path = Path(path)
    if path.suffix == ".ipynb":
        return path
    found = unpack_zip(path, workdir)
    if len(found) != 1:
        raise ValueError(f"it holds {len(found) or 'no'} notebooks; hand in one notebook (.ipynb), or a zip "
                         "of exactly one")
    return found[0]


def results(graded, visibility="visible"):
    """Gradescope's ``results.json`` (a dict) of a :class:`~redmax_edu.exercises.remote.Graded`."""
    if graded.error:
        return {"score": 0, "output": f"Not graded: {graded.error}", "tests": []}
    tests = [{"name": function, "score": report.points, "max_score": report.max_points,
              "output": str(report), "visibility": visibility}
             for function, report in graded.reports.items()]
    out = {"score": graded.points, "tests": tests, "stdout_visibility": "hidden"}
    if graded.notes:
        out["output"] = "Notes on the run of the notebook:\n" + "\n".join(f"- {n}" for n in graded.notes)
    return out


def main(argv):
    root = Path(argv[0] if argv else os.environ.get("AUTOGRADER", "/autograder"))
    zygote = Zygote(WATCHED, drop_privileges=True)  # before the seed is read: the notebook runs in its copy
    (root / "results").mkdir(parents=True, exist_ok=True)
    target = root / "results" / "results.json"
    try:
        config = json.loads((root / "source" / "grading.json").read_text(encoding="utf-8"))
        assignment = ASSIGNMENTS[config["assignment"]]
        submitted = sorted(p for p in (root / "submission").iterdir() if p.suffix in (".ipynb", ".zip"))
        if len(submitted) != 1:
            raise ValueError(f"the submission holds {len(submitted) or 'no'} notebooks or zip files; "
                             "hand in one")
        with tempfile.TemporaryDirectory() as workdir:
            notebook = notebooks_in(submitted[0], workdir)
            graded = grade_notebook(notebook, assignment, seed=int(config["seed"]), zygote=zygote,
                                    time_limit=float(config.get("time_limit", 5.0)),
                                    timeout=float(config.get("timeout", 600.0)))
        out = results(graded, config.get("visibility", "visible"))
    except ValueError as exc:
        out = {"score": 0, "output": f"Not graded: {exc}", "tests": []}
    finally:
        zygote.close()
    target.write_text(json.dumps(out, indent=2), encoding="utf-8")
    print(f"{out['score']:g} points; results in {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
