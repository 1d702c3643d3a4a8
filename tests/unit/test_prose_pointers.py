"""Every pointer in the book's prose names a page that exists, or says that it does not yet.

The book holds Part 1, Part 2 (with Appendix A and the gallery), Part 3 from §3.1 to §3.3, a
companion chapter and the appendix; the rest of Part 3 and the other companions are planned.
Prose must not send a reader to a page that is not there. This scans the markdown cells of
every notebook and every markdown page of the book (and the READMEs) for

* paths ``book/...`` (a page, with or without suffix, or a file such as an image),
* relative links ``[text](page.ipynb)`` (Sphinx checks them in the built pages; the READMEs
  are not built),
* section and part pointers: ``§2.8``, ``page 2.8``, ``section 3.4``, ``chapter 2.9``,
  ``Part 3``. They must name a section whose page exists (the numbers in the pages' titles)
  or say, in the same sentence, that it is planned / not yet written, or that the writeup's
  section is meant ("Part 3 of the writeup").

Pages are found by the same rule as the docstrings' "Taught in" pointers
(tests/unit/test_docstring_pages.py).
"""

import functools
import re

import nbformat
import pytest

from .test_docstring_pages import ROOT, page_exists

PROSE_FILES = ["README.md", "exercises/README.md"]
PATH = re.compile(r"(?<![\w/.])book/[\w./-]*[\w]")
LINK = re.compile(r"\]\((?!https?:|mailto:|#)([^)\s#]+)(?:#[^)]*)?\)")
SECTION = re.compile(r"(?:§\s?|\b(?:[Ss]ection|[Pp]age|[Cc]hapter)s?\s+)"
                     r"(\d)\.(\d+)(?:\s*(?:-|–|to)\s*(?:\d\.)?(\d+))?")
PART = re.compile(r"\bPart\s+(\d)\b")
EXCUSED = re.compile(r"planned|not (?:yet )?written|not written yet|writeup|in preparation", re.I)
ABBREVIATIONS = re.compile(r"(?:\bEq|\bEqs|\bAlg|\be\.g|\bi\.e|\bcf|\bFig|\bvs|\bSec)\.$")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


def prose_sources():
    """(name, markdown text, folder) of every piece of prose the book shows or ships."""
    found = []
    for folder in ("book", "exercises"):
        for path in sorted((ROOT / folder).rglob("*.ipynb")):
            if ".ipynb_checkpoints" in path.parts or "_build" in path.parts:
                continue
            nb = nbformat.read(path, as_version=4)
            for index, cell in enumerate(nb.cells):
                if cell.cell_type == "markdown":
                    name = f"{path.relative_to(ROOT).as_posix()} cell {index}"
                    found.append((name, cell.source, path.parent))
        for path in sorted((ROOT / folder).rglob("*.md")):
            if "_build" not in path.parts:
                text = path.read_text(encoding="utf-8")
                found.append((path.relative_to(ROOT).as_posix(), text, path.parent))
    for name in PROSE_FILES:
        path = ROOT / name
        found.append((name, path.read_text(encoding="utf-8"), path.parent))
    return found


@functools.cache
def written_sections():
    """Section numbers ("1.10", "2.5") and parts (1, 2) that have a page, from the pages' titles."""
    sections, parts = set(), set()
    for folder in sorted((ROOT / "book").glob("0[1-9]_*")):
        if (folder / "index.md").exists():
            parts.add(int(folder.name[1]))
    for source, text, _ in prose_sources():
        title = re.search(r"^# (.*)$", text, re.M)
        if title is None or not source.startswith("book/"):
            continue
        head = re.match(r"((?:\d\.\d+(?:-\d\.\d+)?(?:\s+and\s+)?)+)", title.group(1))
        for first, last in re.findall(r"(\d\.\d+)(?:-(\d\.\d+))?", head.group(1) if head else ""):
            major, low = first.split(".")
            high = last.split(".")[1] if last else low
            sections |= {f"{major}.{k}" for k in range(int(low), int(high) + 1)}
    return sections, parts


def sentences(text):
    """Split prose into sentences (and table rows), keeping "Eq. 2.3" and "e.g. x" whole."""
    pieces, current = [], ""
    for line in text.split("\n"):
        if line.lstrip().startswith(("|", "#", "- ", "* ")) or not line.strip():
            pieces += [current] if current else []
            current = ""
            if line.strip():
                pieces.append(line)
            continue
        for fragment in re.split(r"(?<=[.!?])\s+", line):
            current = f"{current} {fragment}".strip()
            if re.search(r"[.!?]$", current) and not ABBREVIATIONS.search(current):
                pieces.append(current)
                current = ""
    return pieces + ([current] if current else [])


def target_exists(target, folder):
    """A ``book/...`` path (page or file) or a link relative to ``folder`` names something real."""
    if target.startswith("book/"):
        base = ROOT / target
        return base.exists() or page_exists(target.removesuffix(".ipynb").removesuffix(".md"))
    path = (folder / target).resolve()
    return path.exists()


def dead_pointers(text, folder, written=None):
    """The pointers of ``text`` (markdown found in ``folder``) that name no existing page."""
    sections, parts = written or written_sections()
    dead = []
    for target in PATH.findall(text):
        if "..." not in target and not target_exists(target.rstrip("."), folder):  # not a placeholder
            dead.append(target)
    prose = FENCE.sub("", text)
    for target in LINK.findall(prose):
        if not target_exists(target, folder):
            dead.append(target)
    for sentence in sentences(prose):
        if EXCUSED.search(sentence):
            continue
        for match in SECTION.finditer(sentence):
            major, low, high = match.group(1), int(match.group(2)), match.group(3)
            numbers = range(low, int(high) + 1) if high else [low]
            if major in "123" and any(f"{major}.{k}" not in sections for k in numbers):
                dead.append(match.group(0).strip())
        for match in PART.finditer(sentence):
            if int(match.group(1)) not in parts:
                dead.append(match.group(0))
    return dead


SOURCES = prose_sources()


def test_the_scan_reads_the_book():
    assert len(SOURCES) > 200
    sections, parts = written_sections()
    assert {"1.1", "1.10", "1.12", "1.13", "2.0", "2.2", "2.6", "2.7", "2.8", "2.9"} <= sections
    assert {"2.10", "2.11", "2.12", "2.13"} <= sections
    assert {"3.1", "3.2", "3.3"} <= sections
    assert {1, 2, 3} <= parts


@pytest.mark.parametrize(("source", "text", "folder"), SOURCES, ids=[s[0] for s in SOURCES])
def test_every_pointer_names_a_page_that_exists(source, text, folder):
    dead = dead_pointers(text, folder)
    assert not dead, (f"{source} points at pages that do not exist: {dead}. Link an existing page, or "
                      "say the section is planned (not yet written) without a page path.")


WRITTEN = ({"1.1", "1.8", "2.4", "2.5", "2.6"}, {1, 2})


@pytest.mark.parametrize("bad", [
    "The details are on page 2.8.",
    "See §3.4 for the BDF integrators.",
    "Staggered projections (§2.11) fix this.",
    "Section 2.9 derives the hybrid solver.",
    "A structure-preserving integrator (Part 3) is the better one.",
    "Open book/02_reduced/14_contact.ipynb to continue.",
    "As [the contact page](12_contact.ipynb) explains.",
])
def test_the_scan_catches_a_bad_pointer(bad):
    assert dead_pointers(f"Some prose.\n{bad}\nMore prose.", ROOT / "book" / "02_reduced", WRITTEN)


@pytest.mark.parametrize("good", [
    "The details are on the §2.5 page, and §2.4.5 switches charts.",
    "See [the joints](04_joints.ipynb) and book/02_reduced/04_joints.ipynb.",
    "Part 3 of the writeup turns this into BDF integrators.",
    "Constraints (§2.8-2.13) are planned, not written yet.",
    "A later chapter (not yet written) covers Part 3.",
    "Eq. 2.33 is used in §1.8. It holds.",
    "The ArtiSynth notes, §0.9.2, say so.",
])
def test_the_scan_accepts_good_pointers(good):
    assert dead_pointers(good, ROOT / "book" / "02_reduced", WRITTEN) == []


# --- the source texts by the names a reader knows -----------------------------------------------

SEED_LABEL = re.compile(r"\bseeds?\s*0\d\d\b", re.I)
READER_CODE = ["redmax_edu", "benchmarks", "tools", "tests"]


def seed_labels(text):
    """The places where ``text`` names a source by the workspace's internal label ("seed 003")."""
    return [m.group(0) for m in SEED_LABEL.finditer(text)]


def test_no_page_docstring_or_message_names_a_source_by_its_internal_label():
    """Issue 23: a reader knows the sources as Liu and Jain's tutorial, the RedMax supplemental
    material, Fan, Schultz and Murphey's appendix and the ArtiSynth notes, not as "seed 001" to
    "seed 004". Prose, notebooks (code cells too: their messages reach the page), the library's
    docstrings and error messages, the benchmarks, the tools and the tests."""
    found = [(name, seed_labels(text)) for name, text, _ in SOURCES if seed_labels(text)]
    files = [path for folder in ("book", "exercises") for path in sorted((ROOT / folder).rglob("*.ipynb"))]
    files += [path for folder in READER_CODE for path in sorted((ROOT / folder).rglob("*.py"))
              if path.name != "test_prose_pointers.py"]
    for path in files:
        labels = seed_labels(path.read_text(encoding="utf-8"))
        if labels and "_build" not in path.parts:
            found.append((path.relative_to(ROOT).as_posix(), labels))
    assert not found, f"name the source as a reader knows it, with its citation: {found}"


@pytest.mark.parametrize(("text", "caught"), [("the recursions of seed 003 assume", True),
                                              ("(Seed 002, §1)", True), ("seeds 001", True),
                                              ("random seed 0", False), ("seed=3", False)])
def test_the_label_scan_catches_a_seed_label_and_not_a_random_seed(text, caught):
    assert bool(seed_labels(text)) is caught
