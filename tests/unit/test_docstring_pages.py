"""Every "Taught in book/..." line of the library's docstrings points at a page that exists.

The library's docstrings end by naming the page that teaches them; a renamed or planned page
would leave readers (and the API reference) with a dead pointer.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TAUGHT = re.compile(r"Taught (?:with )?in\s+(book/[\w/]+)((?:\s+and\s+(?:book/)?[\w/]+)*)")


def taught_pages():
    """(module, page) for every page named by a "Taught in" sentence."""
    found = []
    for path in sorted((ROOT / "redmax_edu").rglob("*.py")):
        for first, rest in TAUGHT.findall(path.read_text(encoding="utf-8")):
            pages = [first.rstrip("/")]
            for extra in re.findall(r"and\s+((?:book/)?[\w/]+)", rest):
                pages.append(extra if extra.startswith("book/") else f"{first.rsplit('/', 1)[0]}/{extra}")
            found += [(path.relative_to(ROOT).as_posix(), page) for page in pages]
    return found


def page_exists(page):
    base = ROOT / page
    candidates = (base.with_suffix(".ipynb"), base.with_suffix(".md"), base / "index.md")
    return any(c.exists() for c in candidates)


def test_the_library_names_its_pages():
    assert len(taught_pages()) > 50


@pytest.mark.parametrize(("module", "page"), sorted(set(taught_pages())))
def test_taught_in_points_at_an_existing_page(module, page):
    assert page_exists(page), f"{module} says it is taught in {page}, which is not a page of the book"


def test_the_check_catches_a_dead_pointer():
    assert not page_exists("book/02_reduced/99_no_such_page")
