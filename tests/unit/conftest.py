"""Fixtures shared by the tests of the assignments: the tool, a grading zygote, the generated assignments.

Generating the assignments needs otter-grader (the grading extra, ``requirements-grading.txt``);
without it the tests that use :func:`generated` are skipped with that reason.
"""

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HAS_OTTER = importlib.util.find_spec("otter") is not None
#: The grading seed of the autograders generated for the tests (``make exercises`` draws a secret one).
TEST_SEED = 7
os.environ.setdefault("JUPYTER_PREFER_ENV_PATH", "1")


def load_tool():
    """``tools/exercises.py`` as a module."""
    spec = importlib.util.spec_from_file_location("exercises_tool", ROOT / "tools" / "exercises.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def zygote():
    """One grading zygote for the session (:class:`redmax_edu.exercises.remote.Zygote`)."""
    from redmax_edu.exercises.remote import Zygote

    made = Zygote()
    yield made
    made.close()


@pytest.fixture(scope="session")
def tool():
    return load_tool()


@pytest.fixture(scope="session")
def generated(tool, tmp_path_factory, zygote):
    """Every assignment generated once (student version, autograder at :data:`TEST_SEED`): name -> folder."""
    if not HAS_OTTER:
        pytest.skip("otter-grader is not installed (the grading extra: pip install -r "
                    "requirements-grading.txt, or make test / make exercises)")
    build = tmp_path_factory.mktemp("build")
    return {path.stem: tool.generate(path, build, check_solutions=False, seed=TEST_SEED)
            for path in tool.source_notebooks()}
