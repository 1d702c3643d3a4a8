"""The Pinocchio vectors the tests use are unchanged copies of the workspace's shared reference.

(The packaged scene catalogue has the same check in test_scenes.py.) So are the reference code's
wall times under Octave that benchmarks/catalogue.py compares with.

Skipped on a machine without the workspace's ``shared/`` folder next to the repository.
"""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "reference"
COPIES = ROOT / "tests" / "reference" / "pinocchio"
OCTAVE_TIMES = "redmax_scenes/octave_wall_times.json"

needs_shared = pytest.mark.skipif(not SHARED.exists(), reason="no shared reference data on this machine")


def test_the_pinocchio_copies_are_all_there():
    assert len(sorted(COPIES.glob("*.json"))) == 4


@needs_shared
@pytest.mark.parametrize("name", sorted(p.name for p in COPIES.glob("*.json")))
def test_each_pinocchio_copy_equals_the_shared_file(name):
    assert json.loads((COPIES / name).read_text()) == json.loads((SHARED / "pinocchio" / name).read_text())


@needs_shared
def test_no_shared_pinocchio_case_is_missing_here():
    assert {p.name for p in (SHARED / "pinocchio").glob("*.json")} <= {p.name for p in COPIES.glob("*.json")}


def test_the_benchmarks_octave_times_are_there():
    runs = json.loads((ROOT / "benchmarks" / "octave_wall_times.json").read_text())["runs"]
    assert {r["itype"] for r in runs} == {1, 2, 3} and all(r["wall_s"] > 0 for r in runs)


@needs_shared
def test_the_benchmarks_octave_times_equal_the_shared_file():
    copy = json.loads((ROOT / "benchmarks" / "octave_wall_times.json").read_text())
    assert copy == json.loads((SHARED / OCTAVE_TIMES).read_text())
