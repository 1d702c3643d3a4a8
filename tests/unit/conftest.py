"""Fixtures shared by the tests of the assignments: the tool, a grading zygote, the generated assignments,
a folder of submissions graded as ``make grade`` grades it.

Generating the assignments needs otter-grader (the grading extra, ``requirements-grading.txt``);
without it the tests that use :func:`generated` are skipped with that reason.
"""

import importlib.util
import os
import zipfile
from pathlib import Path

import pytest
from scripts import load_tool

from .exercise_submissions import SOURCES, doubled, fill, solutions, student

ROOT = Path(__file__).resolve().parents[2]
HAS_OTTER = importlib.util.find_spec("otter") is not None
#: The grading seed of the autograders generated for the tests (``make exercises`` draws a secret one).
TEST_SEED = 7
os.environ.setdefault("JUPYTER_PREFER_ENV_PATH", "1")


@pytest.fixture(scope="session")
def zygote():
    """One grading zygote for the session (:class:`redmax_edu.exercises.remote.Zygote`)."""
    from redmax_edu.exercises import WATCHED
    from redmax_edu.exercises.remote import Zygote

    made = Zygote(WATCHED)
    yield made
    made.close()


@pytest.fixture(scope="session")
def tool():
    """``tools/exercises.py`` as a module."""
    return load_tool("exercises")


@pytest.fixture(scope="session")
def generated(tool, tmp_path_factory, zygote):
    """Every assignment generated once (student version, autograder at :data:`TEST_SEED`): name -> folder."""
    if not HAS_OTTER:
        pytest.skip("otter-grader is not installed (the grading extra: pip install -r "
                    "requirements-grading.txt, or make test / make exercises)")
    build = tmp_path_factory.mktemp("build")
    return {path.stem: tool.generate(path, build, check_solutions=False, seed=TEST_SEED)
            for path in tool.source_notebooks()}


#: Submissions graded in the folder: the solutions (full), the first function doubled (wrong).
FULL = {f"full/{name}.ipynb": name for name in SOURCES}
WRONG = {f"wrong/{name}.ipynb": name for name in SOURCES}
BO = {"adjoint": "def adjoint(E):\n    R, p = E[:3, :3], E[:3, 3]\n"  # off by a frame: R [p]
                 "    return np.block([[R, np.zeros((3, 3))], [R @ brac(p), R]])",
      "ad": "def ad(phi):\n    W, N = brac(phi[:3]), brac(phi[3:])\n"  # transposed
            "    return np.block([[W, np.zeros((3, 3))], [N, W]]).T"}


@pytest.fixture(scope="session")
def submissions(generated, tmp_path_factory):
    """A folder of submissions as an instructor collects them (see :func:`graded`)."""
    folder = tmp_path_factory.mktemp("submissions")
    for submission, name in FULL.items():
        fill(student(generated, name), folder / submission, solutions(name))
    for submission, name in WRONG.items():
        fill(student(generated, name), folder / submission, doubled(name))
    fill(student(generated, "02_adjoint"), folder / "bo" / "02_adjoint.ipynb",
         {**solutions("02_adjoint"), **BO})
    fill(student(generated, "02_adjoint"), folder / "cy" / "my_02_adjoint_final.ipynb",
         {"adjoint": "def adjoint(E)\n    return E"})  # a syntax error
    fill(student(generated, "01_exp_log"), folder / "dan" / "01_exp_log.ipynb", {})  # blank
    (folder / "dan" / "notes.ipynb").write_text("{not a notebook", encoding="utf-8")
    inner = fill(student(generated, "01_exp_log"), folder / "tmp" / "01_exp_log.ipynb",
                 solutions("01_exp_log"))
    with zipfile.ZipFile(folder / "eli_01_exp_log.zip", "w") as archive:  # a zip of one notebook
        archive.write(inner, "handin/01_exp_log.ipynb")
    (folder / "fay").mkdir()
    with zipfile.ZipFile(folder / "fay" / "both.zip", "w") as archive:  # two notebooks: refused
        archive.write(inner, "01_exp_log.ipynb")
        archive.write(inner, "02_adjoint.ipynb")
    inner.unlink()
    inner.parent.rmdir()
    (folder / "gus").mkdir()
    (folder / "gus" / "02_adjoint.zip").write_bytes(b"not a zip")
    return folder


@pytest.fixture(scope="session")
def graded(tool, generated, submissions, zygote, tmp_path_factory):
    """The folder graded by the tool as ``make grade`` does: the entries by submission, the report folder."""
    out = tmp_path_factory.mktemp("grades")
    build = next(iter(generated.values())).parent
    with open(os.devnull, "w") as quiet:
        entries = tool.grade(submissions, out, 300, build, stream=quiet, zygote=zygote)
    return {e["submission"]: e for e in entries}, out
