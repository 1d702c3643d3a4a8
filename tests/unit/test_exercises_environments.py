"""The assignments outside this checkout's environment: a student's ``pip install``, and Gradescope.

* **The student's side.** A fresh virtual environment gets the library's wheel and nothing
  else but what the wheel's own dependencies bring (at the versions of ``requirements.txt``);
  every generated student notebook runs in it top to bottom, blank (each check cell says the
  function is not answered yet) and with the solutions filled in (each says full marks).
* **Gradescope.** Each autograder zip's own ``setup.sh`` builds a fresh environment from what
  the zip carries (its pinned requirements and its wheel); its ``run_autograder`` then grades
  a correct and a wrong submission in Gradescope's folder layout (``source/``,
  ``submission/``, ``results/results.json``), and the results must be those of ``make grade``.

Each environment is built once and kept (``REDMAX_EDU_TEST_ENVS``, by default
``.venv/test-envs``, named by a hash of what it installs); later runs only reinstall the wheel
(``setup.sh`` does so itself). Building one needs the package index (or pip's cache).
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from redmax_edu.exercises import ASSIGNMENTS

from .conftest import FULL, ROOT, WRONG
from .exercise_submissions import autograder, fill, solutions, student

ENVS = Path(os.environ.get("REDMAX_EDU_TEST_ENVS", ROOT / ".venv" / "test-envs"))
PYTHON = getattr(sys, "_base_executable", sys.executable)
QUIET = {"capture_output": True, "text": True}


def environment(kind, what, build):
    """The environment ``kind`` for ``what`` (the text of what it installs), made by ``build(path)``."""
    version = sys.version.split()[0]
    key = hashlib.sha256(f"{version}\n{what}".encode()).hexdigest()[:12]
    path = ENVS / f"{kind}-{key}"
    if not (path / ".complete").exists():
        for stale in ENVS.glob(f"{kind}-*"):
            shutil.rmtree(stale, ignore_errors=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        done = build(path)
        if done.returncode != 0:
            shutil.rmtree(path, ignore_errors=True)
            output = f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            pytest.fail(f"building the {kind} environment failed:\n{output}", pytrace=False)
        (path / ".complete").touch()
    return path


# --- the student's side ------------------------------------------------------------------------------

RUN_NOTEBOOKS = """
import json, sys
from redmax_edu.exercises.remote import notebook_cells, run_cells
found = {}
for path in sys.argv[1:]:
    shown = []
    errors = run_cells(notebook_cells(path), {"__name__": "__main__"},
                       display=lambda value: shown.append(str(value)))
    found[path] = {"errors": errors, "shown": shown}
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def student_env(tool, tmp_path_factory):
    """A fresh venv with the library's wheel alone (its dependencies at requirements.txt's versions)."""
    wheel = tool.library_wheel(tmp_path_factory.mktemp("wheel"))
    with zipfile.ZipFile(wheel) as archive:
        meta = next(archive.read(n).decode() for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
    requires = "\n".join(line for line in meta.splitlines()
                         if line.startswith("Requires-Dist") and "extra" not in line)
    constraints = (ROOT / "requirements.txt").read_text(encoding="utf-8")

    def build(path):
        made = subprocess.run([PYTHON, "-m", "venv", str(path)], **QUIET)
        if made.returncode:
            return made
        return subprocess.run([str(path / "bin" / "python"), "-m", "pip", "install", "--quiet",
                               "--disable-pip-version-check", "-c", str(ROOT / "requirements.txt"),
                               str(wheel)], **QUIET)

    path = environment("student", requires + constraints, build)
    reinstall = subprocess.run([str(path / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                                "--force-reinstall", "--disable-pip-version-check", str(wheel)], **QUIET)
    assert reinstall.returncode == 0, reinstall.stderr
    return path


def test_the_library_alone_runs_every_student_notebook_blank_and_solved(student_env, generated, tmp_path):
    python = student_env / "bin" / "python"
    missing = subprocess.run([str(python), "-c", "import otter"], **QUIET)
    assert missing.returncode != 0, "the student's environment must not have otter (the package alone)"
    paths = {}
    for name in generated:
        paths[name, "blank"] = student(generated, name)
        paths[name, "solved"] = fill(student(generated, name), tmp_path / name / f"{name}.ipynb",
                                     solutions(name))
    env = {**os.environ, "MPLBACKEND": "Agg"}
    done = subprocess.run([str(python), "-c", RUN_NOTEBOOKS, *map(str, paths.values())], cwd=tmp_path,
                          env=env, **QUIET)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.splitlines()[-1])
    for (name, kind), path in paths.items():
        result = found[str(path)]
        assert result["errors"] == [], (name, kind, result["errors"])
        assignment = ASSIGNMENTS[name]
        reports = [text for text in result["shown"] if text.split(":")[0] in assignment.functions]
        assert [r.split(":")[0] for r in reports] == assignment.functions
        for text, function in zip(reports, assignment.functions, strict=True):
            total = f"{assignment.points(function):g}"
            if kind == "blank":
                assert text.startswith(f"{function}: 0 of {total} points"), text
                assert "is not answered yet" in text
            else:
                assert text.startswith(f"{function}: {total} of {total} points"), text


# --- Gradescope --------------------------------------------------------------------------------------


def unpack(zip_path, root):
    """Gradescope's layout under ``root``: the zip's files in source/ (modes kept), an empty submission/."""
    source = root / "source"
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(source)
        for info in archive.infolist():
            mode = info.external_attr >> 16
            if mode:
                (source / info.filename).chmod(mode)
    (root / "submission").mkdir()
    return root


@pytest.fixture(scope="module")
def gradescope_env(generated, tmp_path_factory):
    """The environment every zip's own setup.sh builds (they carry the same setup, requirements and wheel)."""
    contents = set()
    for name in generated:
        with zipfile.ZipFile(autograder(generated, name)) as archive:
            contents.add(tuple(hashlib.sha256(archive.read(n)).hexdigest()
                               for n in sorted(archive.namelist()) if n != "grading.json"))
    assert len(contents) == 1, "the zips differ in what they install"
    first = autograder(generated, next(iter(generated)))
    with zipfile.ZipFile(first) as archive:
        requirements = archive.read("requirements.txt").decode()
    layout = unpack(first, tmp_path_factory.mktemp("setup") / "autograder")

    def setup(path):
        env = {**os.environ, "AUTOGRADER": str(layout), "REDMAX_EDU_GRADING_VENV": str(path),
               "PYTHON": PYTHON}
        return subprocess.run(["bash", str(layout / "source" / "setup.sh")], env=env, **QUIET)

    path = environment("gradescope", requirements, setup)
    done = setup(path)  # the zip's setup again, on the kept environment: it reinstalls the zip's wheel
    assert done.returncode == 0, done.stderr[-3000:]
    return path


def run_on_gradescope(env, zip_path, notebook, root):
    layout = unpack(zip_path, root)
    shutil.copy(notebook, layout / "submission" / notebook.name)
    environment_vars = {**os.environ, "AUTOGRADER": str(layout), "REDMAX_EDU_GRADING_VENV": str(env)}
    done = subprocess.run([str(layout / "source" / "run_autograder")], env=environment_vars, **QUIET)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((layout / "results" / "results.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("kind", ["full", "wrong"])
def test_each_zip_grades_on_gradescope_as_make_grade_does(gradescope_env, generated, submissions, graded,
                                                         kind, tmp_path):
    entries, _ = graded
    for submission, name in (FULL if kind == "full" else WRONG).items():
        result = run_on_gradescope(gradescope_env, autograder(generated, name), submissions / submission,
                                   tmp_path / name)
        expected = entries[submission]["graded"]
        assert result["score"] == pytest.approx(expected.points)
        assert [t["name"] for t in result["tests"]] == ASSIGNMENTS[name].functions
        for test in result["tests"]:
            report = expected.reports[test["name"]]
            assert (test["score"], test["max_score"], test["output"]) == (report.points, report.max_points,
                                                                          str(report))
        if kind == "full":
            assert result["score"] == ASSIGNMENTS[name].points()
        else:
            assert result["score"] < ASSIGNMENTS[name].points()
