"""Claims of book/appendix/engineer_notes: the map lists all 23 sections of the ArtiSynth notes."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "book" / "appendix" / "engineer_notes.md"


def rows():
    return [line for line in PAGE.read_text(encoding="utf-8").splitlines() if line.startswith("| §0.")]


def test_the_map_lists_the_23_sections_in_order():
    """'for each of the 23 sections ... in the notes' order'."""
    numbers = [re.match(r"\| §0\.(\d+) \|", row).group(1) for row in rows()]
    assert numbers == [str(k) for k in range(1, 24)]


def test_every_row_says_where_and_every_link_exists():
    for row in rows():
        where = row.split("|")[3]
        links = re.findall(r"\]\(([^)]+)\)", where)
        assert links or "not yet" in where, row
        for link in links:
            assert (PAGE.parent / link).resolve().exists(), f"{row}: {link} is not a page"
