"""Claims of the home page (book/index.md) and the README: how many of the writeup's equations are functions.

"Of the writeup's 343 numbered equations, N are computed by a function of the library that a
test exercises and a page teaches; the other M are definitions or steps of a derivation, with
nothing of their own to compute. All 12 of its algorithms are functions, tested and taught."
The counts are those of the registry of tools/traceability.py (docstring citations, the tests
that name the cited functions, the pages that cite the equations); the home page and the table in the appendix
(book/appendix/traceability.md) must state what it gives today.
"""

import re
from pathlib import Path

import pytest
from scripts import load_tool

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def trace():
    return load_tool("traceability")


@pytest.fixture(scope="module")
def rows(trace):
    return trace.registry()


def prose(path):
    return " ".join((ROOT / path).read_text(encoding="utf-8").split())


def test_the_home_page_states_the_counts_of_the_registry(trace, rows):
    sentence = trace.summary_sentence(rows)
    assert "343 numbered equations" in sentence
    assert sentence in prose("book/index.md"), f"the home page should say: {sentence}"


def test_the_table_states_them_too(trace, rows):
    assert trace.summary_sentence(rows) in prose(trace.PAGE)


def test_the_check_catches_a_count_the_registry_no_longer_gives(trace, rows):
    changed = [trace.Row(r.key, list(r.functions), list(r.tests), list(r.pages), dict(r.via), r.reason)
               for r in rows]
    next(r for r in changed if r.key == "2.19").tests = []        # a test no longer names the function
    sentence = trace.summary_sentence(changed)
    assert sentence != trace.summary_sentence(rows) and sentence not in prose("book/index.md")


def test_the_readme_states_the_same_counts(trace, rows):
    c = trace.counts(rows)
    (done, derivation, total), (alg_done, _, alg_total) = c["equations"], c["algorithms"]
    assert alg_done == alg_total
    pattern = (r"Of its (\d+) numbered equations, (\d+) are functions .*?\(the other (\d+) are "
               r"definitions or steps of a derivation\), as are its (\d+) algorithms")
    said = re.search(pattern, prose("README.md"))
    assert said, "the README should state how many equations are functions"
    assert tuple(map(int, said.groups())) == (total, done, derivation, alg_total)


NUMBERS = {"one": 1, "five": 5, "six": 6, "seven": 7, "eight": 8, "eighteen": 18, "nineteen": 19,
           "twenty": 20, "twenty-one": 21, "twenty-two": 22, "twenty-three": 23, "twenty-four": 24}


def assignments_by_part():
    """How many assignments each folder of exercises/ holds, from the registry of the graders."""
    from redmax_edu.exercises import ASSIGNMENTS

    folders = {p.stem: p.parent.name for p in (ROOT / "exercises").glob("*/*.ipynb")}
    assert set(folders) == set(ASSIGNMENTS), "every source notebook is a registered assignment"
    return [sum(f.startswith(prefix) for f in folders.values()) for prefix in ("01", "02", "03", "04", "05")]


@pytest.mark.parametrize("path", ["README.md", "book/index.md"])
def test_the_assignments_are_counted_as_the_registry_has_them(path):
    part1, part2, part3, companion, variational = assignments_by_part()
    said = re.search(r"([\w-]+) classroom assignments.*?\((\w+) for each of Parts 1 and 2, (\w+) for Part 3, "
                     r"(\w+) on the companion chapter and (\w+) on chapter 5", prose(path))
    assert said, f"{path} should say how many assignments there are, part by part"
    assert [NUMBERS[w] for w in said.groups()] == [part1 + part2 + part3 + companion + variational,
                                                     part1, part3, companion, variational]
    assert part1 == part2
