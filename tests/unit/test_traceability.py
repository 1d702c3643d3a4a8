"""Every numbered equation and algorithm of the writeup: its function, its tests, its page.

``tools/traceability.py`` reads the citations of the library's docstrings, the tests' source and
the pages' prose, and writes book/appendix/traceability.md. These tests fail when

* a citation anywhere (library, tests, pages) names an equation or algorithm the writeup does
  not have (an equation past the end of its part, an algorithm past the twelfth);
* a function a docstring cites for an equation is exercised by no test;
* a row of the committed page loses its function, its tests or its page;
* an equation is neither computed, tested and taught nor a listed derivation step;
* the committed page is not what the code gives today;

and each check is shown to catch its case on a small repository written for the purpose.
"""

import re
from pathlib import Path

import pytest
from scripts import load_tool

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT.parent / "shared" / "seeds"
WRITEUP = "000_4c4c3b38ce186faf.txt"


@pytest.fixture(scope="module")
def trace():
    return load_tool("traceability")


@pytest.fixture(scope="module")
def rows(trace):
    return trace.registry()


def write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def small_repository(root, core=None, tests=None, page=None):
    """A repository of one library module, one test module and one page, for the checks to read."""
    return write(root, {
        "redmax_edu/__init__.py": "",
        "redmax_edu/core.py": core or (
            '"""A module."""\n\n\n'
            'def computed():\n    """The mass matrix (Eq. 2.19)."""\n\n\n'
            'def untested():\n    """Euler\'s step (Eq. (2.20))."""\n\n\n'
            'def door():\n    """Checks, then calls the core."""\n    return core_unchecked()\n\n\n'
            'def core_unchecked():\n    """The force, Eq. 2.21."""\n'),
        "tests/unit/test_core.py": tests or "from redmax_edu.core import computed, door\n",
        "tests/claims/test_nothing.py": "",
        "book/00_intro/map.md": "# Map\n",
        "book/02_reduced/03_dynamics.md": page or "# 2.3 Dynamics\n\nThe equations $(2.19)$-$(2.21)$.\n",
    })


# --- the writeup's numbers ------------------------------------------------------------------------


def test_the_writeup_numbers_343_equations_and_12_algorithms(trace):
    keys = trace.writeup_numbers()
    assert sum(trace.EQUATIONS.values()) == 343 and trace.ALGORITHMS == 12
    assert len(keys) == len(set(keys)) == 355
    assert keys[0] == "1.1" and "1.103" in keys and "2.134" in keys and keys[-13] == "3.106"
    assert keys[-1] == "Algorithm 12"


@pytest.mark.skipif(not (SEEDS / WRITEUP).exists(), reason="no copy of the writeup's text on this machine")
def test_the_counts_are_those_of_the_writeups_text(trace):
    highest, algorithms, gaps = trace.count_writeup((SEEDS / WRITEUP).read_text(encoding="utf-8"))
    assert highest == trace.EQUATIONS
    assert algorithms == list(range(1, trace.ALGORITHMS + 1))
    # a few labels were lost by the transcription (they sit between labelled neighbours)
    assert sum(len(g) for g in gaps.values()) < 20


def test_the_writeup_count_sees_a_missing_part(trace):
    highest, _, gaps = trace.count_writeup("$$ a \\tag{1.1} $$ $$ b $$ (1.3) see Eq. (1.9); \\tag{2.2} "
                                           "\\tag{3.1}\n## Algorithm 1 Newton")
    assert highest == {1: 3, 2: 2, 3: 1} and gaps[1] == [2] and gaps[2] == [1]


# --- the citation parser ---------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "keys"), [
    ("Eq. 2.19", ["2.19"]),
    ("(Eq. (2.19))", ["2.19"]),
    ("Eqs. 2.5-2.8", ["2.5", "2.6", "2.7", "2.8"]),
    ("Eq. (3.53)-(3.55) and (2.16)", ["3.53", "3.54", "3.55", "2.16"]),
    ("Eq. 3.64, 3.69, 3.74", ["3.64", "3.69", "3.74"]),
    ("Eq. (3.27) for Euler angles, (3.30) for the universal joint", ["3.27", "3.30"]),
    ("the prose cites $(1.8)$ inline", ["1.8"]),
    ("$$ x = y \\tag{2.5-2.7} $$", ["2.5", "2.6", "2.7"]),
    ("$$ x \\tag{2.117, our sign} $$", ["2.117"]),
    ("Eq. (3.60a)", ["3.60"]),
    ("Alg. 5-6 and Algorithms 9 and 11; Algorithm 12.", ["Algorithm 5", "Algorithm 6", "Algorithm 9",
                                                       "Algorithm 11", "Algorithm 12"]),
    ("the notes' Eq. 0.3, f(1.5), figsize=(5, 3.5), Algorithms B.1-B.2, Eq. (D.3), measured (5.6)", []),
])
def test_the_parser_reads_each_form_of_citation(trace, text, keys):
    assert trace.citations(text) == keys


# --- 1. no citation names a number the writeup does not have --------------------------------------


def test_no_citation_names_a_number_the_writeup_does_not_have(trace):
    found = trace.cited_anywhere()
    assert len(found) > 3000                       # the library, the tests and the pages all cite
    bad = [f"{where}: {key}" for where, key in found if trace.unknown([key])]
    assert not bad, "citations of numbers the writeup does not have:\n" + "\n".join(bad)


@pytest.mark.parametrize(("text", "bad"), [
    (f"the reduced force (Eq. {2}.{140})", ["2.140"]),
    (f"by Algorithm {13}", [f"Algorithm {13}"]),
    (f"the BDF2 Hessian ({3}.{107})", ["3.107"]),
    (f"$$ x \\tag{{1.{104}}} $$", ["1.104"]),
    (f"as in Eq. {4}.{2}", ["4.2"]),
])
def test_the_check_catches_a_bad_citation(trace, text, bad):
    assert trace.unknown(trace.citations(text)) == bad


@pytest.mark.parametrize("where", ["library", "test", "page"])
def test_the_scan_finds_a_bad_citation_in_the_library_the_tests_and_the_pages(trace, tmp_path, where):
    bad = f"Eq. {2}.{140}"
    small_repository(tmp_path, core=f'"""{bad}."""\n' if where == "library" else None,
                     tests=f"# {bad}\n" if where == "test" else None,
                     page=f"# 2.3 Dynamics\n\n{bad}\n" if where == "page" else None)
    found = [w for w, key in trace.cited_anywhere(tmp_path) if trace.unknown([key])]
    expected = {"library": "redmax_edu/core.py", "test": "tests/unit/test_core.py",
                "page": "book/02_reduced/03_dynamics"}[where]
    assert found == [expected]


# --- 2. every cited function is exercised by a test -------------------------------------------------


def test_every_function_a_docstring_cites_is_exercised_by_a_test(rows):
    untested = sorted({f"{f} ({r.key})" for r in rows for f in r.untested})
    assert not untested, "cited functions no test exercises, even through a caller:\n" + "\n".join(untested)


def test_the_check_catches_a_cited_function_no_test_calls(trace, tmp_path):
    small_repository(tmp_path)
    by_key = {r.key: r for r in trace.registry(tmp_path)}
    assert by_key["2.20"].untested == ["redmax_edu.core.untested"]
    assert by_key["2.19"].tests == ["tests/unit/test_core.py"] and not by_key["2.19"].untested
    # a core behind a door counts the door's tests, and says so
    assert by_key["2.21"].tests == ["tests/unit/test_core.py"]
    assert by_key["2.21"].via == {"redmax_edu.core.core_unchecked": ["redmax_edu.core.door"]}


def test_a_method_is_exercised_through_its_class_and_its_name(trace, tmp_path):
    core = 'class Joint:\n    def dS_dq(self):\n        """Eq. 3.10."""\n'
    small_repository(tmp_path, core=core,
                     tests="from redmax_edu.core import Joint\n\n\ndef test_x():\n    Joint().dS_dq()\n")
    by_key = {r.key: r for r in trace.registry(tmp_path)}
    assert by_key["3.10"].functions == ["redmax_edu.core.Joint.dS_dq"]
    assert by_key["3.10"].tests == ["tests/unit/test_core.py"]
    small_repository(tmp_path, core=core, tests="from redmax_edu.core import Joint\n")  # no dS_dq read
    assert {r.key: r for r in trace.registry(tmp_path)}["3.10"].untested == ["redmax_edu.core.Joint.dS_dq"]


# --- 3. no row loses its function, tests or page; every row is complete or a derivation step ------


def test_no_row_loses_what_the_committed_page_shows(trace, rows):
    before = trace.page_rows((ROOT / trace.PAGE).read_text(encoding="utf-8"))
    assert set(before) == set(trace.writeup_numbers())
    lost = trace.losses(before, rows)
    assert not lost, "rows that lost what the committed page shows:\n" + "\n".join(lost)


@pytest.mark.parametrize("what", ["function", "test", "page"])
def test_the_check_catches_a_row_that_loses_one(trace, rows, what):
    before = trace.page_rows((ROOT / trace.PAGE).read_text(encoding="utf-8"))
    changed = [trace.Row(r.key, list(r.functions), list(r.tests), list(r.pages), dict(r.via), r.reason)
               for r in rows]
    row = next(r for r in changed if r.key == "2.19")
    setattr(row, {"function": "functions", "test": "tests", "page": "pages"}[what], [])
    assert trace.losses(before, changed) == [f"2.19: {what}"]


def test_every_equation_is_computed_tested_and_taught_or_a_derivation_step(trace, rows):
    counts = trace.counts(rows)
    assert not counts["without"], f"rows without a function, a test or a page: {counts['without']}"
    assert counts["equations"][0] + counts["equations"][1] == 343 and counts["algorithms"][0] == 12


def test_the_derivation_steps_are_few_and_computed_by_nothing(trace, rows):
    assert set(trace.DERIVATION) <= set(trace.writeup_numbers()) and len(trace.DERIVATION) <= 20
    cited = [r.key for r in rows if r.reason and r.functions]
    assert not cited, f"now cited by a function, remove them from DERIVATION: {cited}"
    assert all(len(reason) < 200 for reason in trace.DERIVATION.values())


def test_algorithm_12_is_cited_by_the_newton_solve_and_its_callers(rows):
    row = next(r for r in rows if r.key == "Algorithm 12")
    assert {"redmax_edu.implicit.integrate", "redmax_edu.implicit.NewtonSolve",
            "redmax_edu.integrators.simulate", "redmax_edu.adjoint.simulate_run"} <= set(row.functions)


# --- 4. the committed page is current ---------------------------------------------------------------


def test_the_page_is_what_the_code_gives_today(trace, rows):
    committed = (ROOT / trace.PAGE).read_text(encoding="utf-8")
    assert committed == trace.render(rows), "the page is stale: run python tools/traceability.py --write"


def test_the_page_is_in_the_table_of_contents(trace):
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    assert re.search(rf"file: {trace.PAGE.with_suffix('').as_posix()}\n", toc)


def test_the_page_links_only_functions_the_api_reference_documents(trace):
    lib = trace.read_library()
    targets = trace.api_targets(lib)
    assert targets["redmax_edu.dynamics.forward_dynamics"] == "redmax_edu.dynamics.forward_dynamics"
    assert targets["redmax_edu.variational.residual.del_residual"] == "redmax_edu.variational.del_residual"
    assert "redmax_edu.implicit.integrate" not in targets          # not in implicit's __all__
    assert "redmax_edu.lie._hat3" not in targets
