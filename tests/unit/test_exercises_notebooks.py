"""The assignments' notebooks: the sources, the generated student versions and autograders, grading a folder.

The source notebooks are checked without otter-grader. Generating the student versions
needs the grading extra (``requirements-grading.txt``; ``make test`` installs it): without it
those tests are skipped with that reason. Grading a folder (``make grade``) is the trusted
grading of :mod:`redmax_edu.exercises.remote`, at the seed of each assignment's autograder.

Outside this checkout's environment (one file with the above, so that one pytest worker
generates and grades once):

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

import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import numpy as np
import pytest

from redmax_edu import lie
from redmax_edu.exercises import ASSIGNMENTS, adjoint

from .conftest import BO, FULL, ROOT, TEST_SEED, WRONG
from .exercise_submissions import SOURCES, answer_cells, autograder, fill, solution_cells, solutions, student

# fresh environments and otter: make test runs these, make check leaves them out
pytestmark = pytest.mark.slow

# --- the source notebooks (no otter needed) ------------------------------------------------------


def questions(notebook):
    """``{question: points}`` from a source notebook's ``# BEGIN QUESTION`` cells, in order."""
    nb = nbformat.read(notebook, as_version=4)
    found = {}
    for cell in nb.cells:
        if cell.cell_type == "raw" and cell.source.startswith("# BEGIN QUESTION"):
            name = re.search(r"name: (\w+)", cell.source).group(1)
            found[name] = float(re.search(r"points: ([\d.]+)", cell.source).group(1))
    return found


def test_every_source_notebook_is_an_assignment_of_the_graders(tool):
    assert {p.stem for p in tool.source_notebooks()} == set(ASSIGNMENTS) == set(SOURCES)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_each_question_is_a_function_of_the_grader_with_its_points(name):
    assignment = ASSIGNMENTS[name]
    assert questions(SOURCES[name]) == {f: assignment.points(f) for f in assignment.functions}


def code_cells(name):
    return [c for c in nbformat.read(SOURCES[name], as_version=4).cells if c.cell_type == "code"]


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_stored_check_cells_show_full_marks_and_the_allow_list(name):
    assignment = ASSIGNMENTS[name]
    cells = code_cells(name)
    checks = [c for c in cells if re.fullmatch(r'\w+\.check\("\w+"\)', c.source.strip())]
    assert [re.search(r'"(\w+)"', c.source).group(1) for c in checks] == assignment.functions
    for cell, function in zip(checks, assignment.functions, strict=True):
        text = next(o.data["text/plain"] for o in cell.outputs if o.output_type == "execute_result")
        total = assignment.points(function)
        assert text.startswith(f"{function}: {total:g} of {total:g} points"), text
    shown = [o.text for c in cells if "allowed_text()" in c.source
             for o in c.outputs if o.output_type == "stream"]
    assert shown == [assignment.allowed_text() + "\n"]
    assert not any("BEGIN TESTS" in c.source or "require(" in c.source for c in cells)


def test_no_solution_ships_in_the_library_wheel(tool, tmp_path):
    # the wheel a student installs holds the library and its graders, which compare with the library's
    # own functions; the solutions live in the source notebooks, which stay with the instructor
    wheel = tool.library_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        code = " ".join(" ".join(archive.read(n).decode("utf-8", "replace") for n in names).split())
    assert all(n.startswith("redmax_edu/") or ".dist-info/" in n for n in names)  # the library, nothing else
    assert not [n for n in names if n.endswith(".ipynb") or "exercises/0" in n]
    bodies = [" ".join(cell.split("\n", 1)[1].split())
              for path in SOURCES.values() for cell in solution_cells(path) if cell.startswith("def ")]
    assert len(bodies) >= 20
    assert not [body for body in bodies if body in code]


# --- generated versions (otter) ------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_student_version_keeps_prompts_and_checks_and_drops_solutions(generated, name):
    nb = nbformat.read(student(generated, name), as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    assert "BEGIN SOLUTION" not in text and "import otter" not in text
    assert "return E" not in text and "brac(p) @ R" not in text  # no line of the solutions
    answers = answer_cells(nb)
    assert len(answers) == len(ASSIGNMENTS[name].functions)
    assert all("raise NotImplementedError" in c.source for c in answers)
    assert sum(".check(" in c.source for c in nb.cells) == len(ASSIGNMENTS[name].functions)
    assert sum("allowed_text()" in c.source for c in nb.cells) == 1
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


LINK = re.compile(r"\]\((?!https?:|#)([^)\s]+)\)")


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_links_of_the_generated_notebooks_work_from_where_they_are_written(generated, name):
    for notebook in (student(generated, name), generated[name] / "autograder" / f"{name}.ipynb"):
        nb = nbformat.read(notebook, as_version=4)
        links = [m for c in nb.cells if c.cell_type == "markdown" for m in LINK.findall(c.source)]
        assert links, "every assignment links to the pages it goes with"
        for link in links:
            target = notebook.parent / link.split("#")[0]
            assert target.exists(), f"{notebook.name}: {link} does not resolve"


def test_with_the_books_address_the_links_point_at_the_published_pages(tool, tmp_path):
    source = SOURCES["01_exp_log"]
    copy = tmp_path / "copy.ipynb"
    copy.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    tool.rewrite_links(copy, source.parent, "https://example.org/redmax")
    text = copy.read_text(encoding="utf-8")
    assert "](https://example.org/redmax/book/01_maximal/03_exp_log.html)" in text
    assert "](../../book/" not in text


def test_each_autograder_zip_carries_the_wheel_pinned_requirements_its_setup_and_a_seed(tool, generated):
    pinned = tool.pinned_requirements()
    assert any(p.startswith("sympy==") for p in pinned) and any(p.startswith("numpy==") for p in pinned)
    for name in SOURCES:
        with zipfile.ZipFile(autograder(generated, name)) as archive:
            names = set(archive.namelist())
            wheels = [n for n in names if n.startswith("redmax_edu-") and n.endswith(".whl")]
            assert len(wheels) == 1
            assert {"setup.sh", "run_autograder", "requirements.txt", "grading.json"} < names
            assert archive.read("requirements.txt").decode().split() == pinned
            assert all(archive.getinfo(s).external_attr >> 16 & 0o111 for s in ("setup.sh", "run_autograder"))
            assert json.loads(archive.read("grading.json"))["assignment"] == name
        assert tool.autograder_config(autograder(generated, name))["seed"] == TEST_SEED


def test_a_new_autograder_draws_a_new_secret_seed(tool, generated, tmp_path):
    made = tool.generate(SOURCES["01_exp_log"], tmp_path, check_solutions=False)
    assert tool.autograder_config(made / "autograder" / "autograder.zip")["seed"] not in (TEST_SEED, 0, 1)


# --- grading a folder of submissions -----------------------------------------------------------------

def scores(entry):
    return {f: r.points for f, r in entry["graded"].reports.items()}


def test_the_student_versions_with_their_solutions_earn_full_marks(graded):
    entries, _ = graded
    for submission, name in FULL.items():
        assignment = ASSIGNMENTS[name]
        assert scores(entries[submission]) == {f: assignment.points(f) for f in assignment.functions}
        assert not entries[submission]["graded"].notes


def test_a_wrong_function_loses_its_points_with_the_graders_message(graded):
    entries, _ = graded
    for submission, name in WRONG.items():
        assignment, entry = ASSIGNMENTS[name], entries[submission]
        first = assignment.functions[0]
        assert scores(entry)[first] < assignment.points(first) / 2, str(entry["graded"].reports[first])
        assert "wrong" in str(entry["graded"].reports[first])


def test_the_blank_student_version_scores_zero_with_unanswered_messages(graded):
    entry = graded[0]["dan/01_exp_log.ipynb"]
    assert scores(entry) == {"exp_se3": 0, "log_se3": 0}
    messages = [r.message for report in entry["graded"].reports.values() for r in report.results]
    assert len(messages) == 12 and all("is not answered yet" in message for message in messages)


def test_the_grade_is_the_checks_at_the_autograders_seed(graded):
    entry = graded[0]["bo/02_adjoint.ipynb"]
    namespace = {"np": np, "brac": lie.brac}
    exec(BO["adjoint"], namespace)
    expected = adjoint.check("adjoint", namespace["adjoint"], seed=TEST_SEED)
    got = entry["graded"].reports["adjoint"]
    assert [(r.points, r.message) for r in got.results] == [(r.points, r.message) for r in expected.results]
    assert got.points < got.max_points


def test_broken_and_stray_submissions_are_reported_not_crashed_on(graded):
    entries, _ = graded
    cy = entries["cy/my_02_adjoint_final.ipynb"]  # found by its file name
    assert sum(scores(cy).values()) == 0
    assert "adjoint is not defined: run the cell that defines it" in str(cy["graded"].reports["adjoint"])
    assert any("SyntaxError" in note for note in cy["graded"].notes)
    assert entries["dan/notes.ipynb"]["error"].startswith("not graded, not an assignment of exercises/")


def test_a_zip_of_one_notebook_is_graded_and_any_other_zip_is_refused_by_name(graded):
    entries, _ = graded
    eli = entries["eli_01_exp_log.zip/handin/01_exp_log.ipynb"]
    assert sum(scores(eli).values()) == ASSIGNMENTS["01_exp_log"].points()
    assert entries["fay/both.zip"]["error"] == ("refused: it holds 2 notebooks; hand in one notebook "
                                                "(.ipynb), or a zip of exactly one")
    assert entries["gus/02_adjoint.zip"]["error"] == "refused: it is not a readable zip file"


def test_the_report_the_table_of_grades_and_the_gradebook(graded):
    entries, out = graded
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "full/01_exp_log.ipynb (01_exp_log): 14 of 14 points" in report
    assert "    every check: adjoint is not defined" in report  # one cause, said once
    rows = list(csv.reader((out / "grades.csv").open(encoding="utf-8")))
    assert rows[0] == ["submission", "assignment", "question", "score", "max_score", "note"]
    graded_rows = sum(len(e["graded"].reports) for e in entries.values()
                      if "graded" in e and "error" not in e)
    assert len(rows) == 1 + graded_rows + sum("error" in e for e in entries.values())
    book = {row["student"]: row for row in csv.DictReader((out / "gradebook.csv").open(encoding="utf-8"))}
    assert set(book) == {"full", "wrong", "bo", "cy", "dan", "eli", "fay", "gus"}
    total = sum(a.points() for a in ASSIGNMENTS.values())
    assert float(book["full"]["total"]) == total
    assert book["eli"]["01_exp_log (14)"] == "14" and book["dan"]["01_exp_log (14)"] == "0"
    assert book["fay"]["total"] == "0"
    assert len(list((out / "results").glob("*.json"))) == sum("graded" in e for e in entries.values())


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="looks for the notebook's process in /proc (Linux)")
def test_a_notebook_that_never_finishes_is_stopped_and_leaves_no_process_behind(generated, zygote, tmp_path):
    from redmax_edu.exercises.remote import Submission, notebook_cells

    nb = nbformat.read(student(generated, "01_exp_log"), as_version=4)
    nb.cells.insert(2, nbformat.v4.new_code_cell("sum(range(10**15))"))  # a loop in C, holding the GIL
    nbformat.write(nb, tmp_path / "01_exp_log.ipynb")
    start = time.monotonic()
    with Submission(zygote, notebook_cells(tmp_path / "01_exp_log.ipynb"), timeout=2) as run:
        pid = run.pid
        assert run.unfinished
    assert time.monotonic() - start < 10
    assert not Path(f"/proc/{pid}").exists()


# --- outside this environment: a student's install, and Gradescope ------------------------------

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
