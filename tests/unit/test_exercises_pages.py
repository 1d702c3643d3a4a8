"""An exercise with a check cell on the section pages of Parts 1-3 and chapter 5 (issue 22, item 4).

A page's exercise is graded by the checks of a classroom assignment: a code cell imports the
assignment's grader module from ``redmax_edu.exercises`` and calls ``grader.check`` on the
page's folded solution, whose stored output is full marks. The galleries and Part 2's appendix
on code generation are not sections of the writeup and are not counted.
"""

import re

import nbformat
import pytest

from redmax_edu import exercises
from redmax_edu.exercises import ASSIGNMENTS

from .conftest import ROOT

PARTS = ("01_maximal", "02_reduced", "03_differentiable", "05_variational")
NOT_SECTIONS = re.compile(r"^(gallery|appendix_)")
IMPORT = re.compile(r"from redmax_edu\.exercises import (\w+) as grader")
CHECK = re.compile(r"grader\.check\(\"(\w+)\", (\w+)\)")


def section_pages():
    """The section pages of Parts 1-3 and chapter 5, in the order of _toc.yml."""
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    found = re.findall(r"- file: book/(" + "|".join(PARTS) + r")/(\w+)", toc)
    return [f"{part}/{page}" for part, page in found if page != "index" and not NOT_SECTIONS.match(page)]


def graded_exercises(page):
    """``(module, function, stored report)`` of every check cell of the page, in order."""
    nb = nbformat.read(ROOT / "book" / f"{page}.ipynb", as_version=4)
    module, found = None, []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        module = (IMPORT.search(cell.source) or [None, module])[1]
        for function, _ in CHECK.findall(cell.source):
            text = "".join(o.get("data", {}).get("text/plain", "") for o in cell.outputs
                           if o.get("output_type") == "execute_result")
            found.append((module, function, text))
    return found


def test_the_section_pages_are_found():
    pages = section_pages()
    assert len(pages) == 35 and "01_maximal/01_position" in pages and "05_variational/03_explorer" in pages
    assert not any("gallery" in p or "appendix_a" in p for p in pages)


@pytest.mark.parametrize("page", section_pages())
def test_each_section_page_has_an_exercise_graded_by_an_assignment(page):
    graded = graded_exercises(page)
    assert graded, f"{page} has no exercise with a check cell"
    module, function, text = graded[0]
    assignment = getattr(exercises, module).ASSIGNMENT
    assert assignment is ASSIGNMENTS[assignment.name] and function in assignment.functions
    total = f"{assignment.points(function):g}"
    assert text.startswith(f"{function}: {total} of {total} points"), f"{page}: the solution's check\n{text}"
