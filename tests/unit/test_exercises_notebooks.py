"""The assignments' notebooks: source, generated student version, autograder, and grading a folder.

The source notebooks are checked without otter-grader (their test cells cover every check with
its points). Generating the student and autograder versions and grading need the grading
extra (``requirements-grading.txt``; ``make test`` installs it): without it those tests are
skipped with that reason.
"""

import importlib.util
import os
import re
import time
import uuid
from pathlib import Path

import nbformat
import numpy as np
import pytest

from redmax_edu import lie
from redmax_edu.exercises import ASSIGNMENTS, GRADING_SEED, adjoint

from .exercise_submissions import SOURCES, solution_cells

ROOT = Path(__file__).resolve().parents[2]
HAS_OTTER = importlib.util.find_spec("otter") is not None
needs_otter = pytest.mark.skipif(
    not HAS_OTTER, reason="otter-grader is not installed (the grading extra: pip install -r "
    "requirements-grading.txt, or make test / make exercises)")
os.environ.setdefault("JUPYTER_PREFER_ENV_PATH", "1")  # nbclient and otter: this environment's kernel


def load_tool():
    spec = importlib.util.spec_from_file_location("exercises_tool", ROOT / "tools" / "exercises.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tool():
    return load_tool()


# --- the source notebooks (no otter needed) ------------------------------------------------------

TEST_CALL = re.compile(r'grader\.require\("(\w+)", "(\w+)", (\w+)\)')


def questions(notebook):
    """{question: (points, [(function, key, points), ...])} from a source notebook's raw cells and tests."""
    nb = nbformat.read(notebook, as_version=4)
    found, current = {}, None
    for cell in nb.cells:
        if cell.cell_type == "raw" and cell.source.startswith("# BEGIN QUESTION"):
            name = re.search(r"name: (\w+)", cell.source).group(1)
            points = float(re.search(r"points: ([\d.]+)", cell.source).group(1))
            current = found.setdefault(name, (points, []))
        elif cell.cell_type == "code" and "# BEGIN TEST CONFIG" in cell.source:
            function, key, argument = TEST_CALL.search(cell.source).groups()
            points = float(re.search(r"points: ([\d.]+)", cell.source).group(1))
            assert "hidden: true" in cell.source, "the autograder's tests are hidden (graded at another seed)"
            current[1].append((function, key, points))
    return found


def test_every_source_notebook_is_an_assignment_of_the_graders(tool):
    assert {p.stem for p in tool.source_notebooks()} == set(ASSIGNMENTS) == set(SOURCES)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_each_question_tests_every_check_of_its_function_with_its_points(name):
    assignment = ASSIGNMENTS[name]
    found = questions(SOURCES[name])
    assert list(found) == assignment.functions
    for function, (points, tests) in found.items():
        assert points == assignment.points(function)
        checks = assignment.checks_of(function)
        assert tests == [(c.function, c.key, c.points) for c in checks]


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_stored_check_cells_show_full_marks(name):
    nb = nbformat.read(SOURCES[name], as_version=4)
    checks = [cell for cell in nb.cells if cell.cell_type == "code" and ".check(" in cell.source]
    shown = [out.data["text/plain"] for cell in checks for out in cell.outputs
             if out.output_type == "execute_result"]
    assert len(shown) == len(ASSIGNMENTS[name].functions)
    for text, function in zip(shown, ASSIGNMENTS[name].functions, strict=True):
        total = ASSIGNMENTS[name].points(function)
        assert text.startswith(f"{function}: {total:g} of {total:g} points"), text


# --- generated versions (otter) ------------------------------------------------------------------


@pytest.fixture(scope="module")
def generated(tool, tmp_path_factory):
    if not HAS_OTTER:
        pytest.skip("otter-grader is not installed (the grading extra)")
    build = tmp_path_factory.mktemp("build")
    # otter's own grading of the solutions is skipped: the filled-in student versions are graded below
    return {name: tool.generate(path, build, check_solutions=False) for name, path in SOURCES.items()}


def student(generated, name):
    return generated[name] / "student" / f"{name}.ipynb"


def autograder(generated, name):
    return generated[name] / "autograder" / "autograder.zip"


def answer_cells(nb):
    return [c for c in nb.cells if "otter_answer_cell" in c.metadata.get("tags", [])]


def fill(student, target, sources):
    """A copy of the student notebook with the answer cells that define ``sources``' functions replaced."""
    nb = nbformat.read(student, as_version=4)
    for cell in answer_cells(nb):
        name = re.search(r"def (\w+)\(", cell.source).group(1)
        if name in sources:
            cell.source = sources[name]
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)
    return target


def solutions(name):
    """{function: the source notebook's solution cell}: the answers filled back in."""
    return {re.search(r"def (\w+)\(", code).group(1): code for code in solution_cells(SOURCES[name])}


def execute(path):
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    resources = {"metadata": {"path": str(path.parent)}}
    NotebookClient(nb, kernel_name="python3", timeout=300, resources=resources).execute()
    return nb


@needs_otter
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_student_version_keeps_prompts_and_checks_and_drops_solutions_and_tests(generated, name):
    nb = nbformat.read(student(generated, name), as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    assert "BEGIN SOLUTION" not in text and "require(" not in text and "import otter" not in text
    assert "return E" not in text and "brac(p) @ R" not in text  # no line of the solutions
    answers = answer_cells(nb)
    assert len(answers) == len(ASSIGNMENTS[name].functions)
    assert all("raise NotImplementedError" in c.source for c in answers)
    assert sum(".check(" in c.source for c in nb.cells) == len(ASSIGNMENTS[name].functions)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    assert (generated[name] / "autograder" / "autograder.zip").exists()


@needs_otter
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_student_version_runs_top_to_bottom_and_reports_unanswered_parts(generated, name):
    nb = execute(student(generated, name))
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    reports = [o.data["text/plain"] for c in nb.cells if ".check(" in c.source for o in c.outputs]
    for text, function in zip(reports, ASSIGNMENTS[name].functions, strict=True):
        assert text == (f"{function}: 0 of {ASSIGNMENTS[name].points(function):g} points\n"
                        f"  every check: {function} is not answered yet (it raises NotImplementedError).")


@pytest.fixture(scope="module")
def graded(tool, generated, tmp_path_factory):
    """A folder of submissions graded by the tool as an instructor would: the entries and the report folder.

    ada and eve hand in the solutions (and "full" those of every other assignment), bo an
    adjoint off by a frame and a transposed ad, cy a syntax error, dan the blank student
    version, and a stray file is not a notebook at all.
    """
    folder = tmp_path_factory.mktemp("submissions")
    for submission, name in FILLED.items():
        fill(student(generated, name), folder / submission, solutions(name))
    bo = {**solutions("02_adjoint"), **BO}
    fill(student(generated, "02_adjoint"), folder / "bo" / "02_adjoint.ipynb", bo)
    syntax_error = {"adjoint": "def adjoint(E)\n    return E"}
    fill(student(generated, "02_adjoint"), folder / "cy" / "my_02_adjoint_final.ipynb", syntax_error)
    fill(student(generated, "01_exp_log"), folder / "dan" / "01_exp_log.ipynb", {})
    (folder / "dan" / "notes.ipynb").write_text("{not a notebook", encoding="utf-8")
    out = tmp_path_factory.mktemp("grades")
    with open(os.devnull, "w") as quiet:
        entries = tool.grade(folder, out, 300, generated["01_exp_log"].parent, stream=quiet)
    return {e["submission"]: e for e in entries}, out


#: The student versions with their solutions filled back in: submission -> assignment.
FILLED = {"ada/01_exp_log.ipynb": "01_exp_log", "eve/02_adjoint.ipynb": "02_adjoint",
          **{f"full/{name}.ipynb": name for name in SOURCES if name not in ("01_exp_log", "02_adjoint")}}

BO = {"adjoint": "def adjoint(E):\n    R, p = E[:3, :3], E[:3, 3]\n"  # off by a frame: R [p]
                 "    return np.block([[R, np.zeros((3, 3))], [R @ brac(p), R]])",
      "ad": "def ad(phi):\n    W, N = brac(phi[:3]), brac(phi[3:])\n"  # transposed
            "    return np.block([[W, np.zeros((3, 3))], [N, W]]).T"}


def scores(entry):
    return {q["name"]: q["score"] for q in entry["questions"]}


@needs_otter
def test_the_student_versions_with_their_solutions_filled_back_in_earn_full_marks(graded):
    entries, _ = graded
    for submission, name in FILLED.items():
        assignment = ASSIGNMENTS[name]
        assert scores(entries[submission]) == {f: assignment.points(f) for f in assignment.functions}
        assert not any(q["failures"] for q in entries[submission]["questions"])


@needs_otter
def test_the_blank_student_version_scores_zero_with_unanswered_messages(graded):
    entry = graded[0]["dan/01_exp_log.ipynb"]
    assert scores(entry) == {"exp_se3": 0, "log_se3": 0}
    messages = [message for q in entry["questions"] for _, _, message in q["failures"]]
    assert len(messages) == 12 and all("is not answered yet" in message for message in messages)


@needs_otter
def test_the_autograder_gives_the_partial_credit_and_messages_of_the_graders(graded):
    entry = graded[0]["bo/02_adjoint.ipynb"]
    namespace = {"np": np, "brac": lie.brac}
    exec(BO["adjoint"], namespace)
    expected = adjoint.check("adjoint", namespace["adjoint"], seed=GRADING_SEED)
    bo = {q["name"]: q for q in entry["questions"]}
    assert bo["adjoint"]["score"] == pytest.approx(expected.points) == 3
    lost = [f"{r.title}: {r.message}" for r in expected.results if not r.full_marks]
    assert [m for _, _, m in bo["adjoint"]["failures"]] == lost
    # bo's adjoint_dot is the solution's A ad(phi), on bo's own wrong adjoint and ad: right only at rest
    assert scores(entry) == {"adjoint": 3, "ad": 1, "adjoint_dot": 1}


@needs_otter
def test_broken_and_stray_submissions_are_reported_not_crashed_on(graded):
    entries, _ = graded
    cy = {q["name"]: q for q in entries["cy/my_02_adjoint_final.ipynb"]["questions"]}  # found by file name
    assert sum(q["score"] for q in cy.values()) == 0
    assert "adjoint is not defined: run the cell that defines it" in cy["adjoint"]["failures"][0][2]
    assert entries["dan/notes.ipynb"]["error"].startswith("not an assignment of exercises/")


@needs_otter
def test_the_report_and_the_table_of_grades(graded):
    _, out = graded
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "bo/02_adjoint.ipynb (02_adjoint): 5 of 14 points" in report
    assert "ada/01_exp_log.ipynb (01_exp_log): 14 of 14 points" in report
    assert "    0/5  every check: adjoint is not defined" in report  # one cause, said once
    rows = (out / "grades.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0] == "submission,assignment,question,score,max_score,note"
    filled = sum(len(ASSIGNMENTS[name].functions) for name in FILLED.values())
    assert len(rows) == 1 + filled + 3 + 3 + 2 + 1  # the filled-in ones, bo, cy, dan, the stray file
    assert len(list((out / "results").glob("*.json"))) == len(FILLED) + 3  # otter's, one per graded notebook


def processes_marked(marker):
    """The processes whose environment holds ``marker`` (inherited from this test, at any depth)."""
    found = set()
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker.encode() in environ.read_bytes():
                found.add(int(environ.parent.name))
        except OSError:  # another user's process, or one that just ended
            pass
    return found - {os.getpid()}


@needs_otter
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the kernel through /proc (Linux)")
def test_a_notebook_that_never_finishes_is_stopped_and_leaves_no_kernel_behind(tool, generated, tmp_path,
                                                                              monkeypatch):
    nb = nbformat.read(student(generated, "01_exp_log"), as_version=4)
    # a loop in C that never lets go of the GIL: the kernel's own watch on its parent (a thread)
    # cannot run, so only killing the kernel with otter ends it
    nb.cells.insert(2, nbformat.v4.new_code_cell("sum(range(10**15))"))
    nbformat.write(nb, tmp_path / "01_exp_log.ipynb")
    marker = f"REDMAX_EDU_TEST_RUN={uuid.uuid4().hex}"  # inherited by otter and its kernel
    monkeypatch.setenv("REDMAX_EDU_TEST_RUN", marker.split("=")[1])
    start = time.monotonic()
    graded = tool.grade_one(tmp_path / "01_exp_log.ipynb", autograder(generated, "01_exp_log"), timeout=4)
    assert time.monotonic() - start < 15
    assert graded["error"].startswith("grading did not finish within 4 s")
    time.sleep(0.5)
    assert not processes_marked(marker)
