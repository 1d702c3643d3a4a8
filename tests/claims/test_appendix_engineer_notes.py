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


def test_every_section_has_a_page_and_every_link_exists():
    """'every one has a page'."""
    for row in rows():
        where = row.split("|")[3]
        links = re.findall(r"\]\(([^)]+)\)", where)
        assert links, f"{row}: no page"
        assert "not yet" not in where and "partly" not in where, row
        for link in links:
            assert (PAGE.parent / link).resolve().exists(), f"{row}: {link} is not a page"


def test_every_appendix_page_links_to_a_chapter_and_back():
    """'each appendix page links back to the chapter it deepens' (and the chapter to it)."""
    chapters = sorted(ROOT.glob("book/0[0-9]_*/*.ipynb")) + sorted(ROOT.glob("book/0[0-9]_*/*.md"))
    texts = {path: path.read_text(encoding="utf-8") for path in chapters}
    pages = sorted(PAGE.parent.glob("engineer_*.ipynb"))
    assert len(pages) >= 10
    for page in pages:
        assert re.search(r"\{doc\}`[^`]*\.\./0\d_", page.read_text(encoding="utf-8")), \
            f"{page.name} links to no chapter"
        back = re.compile(r"appendix/" + page.stem + r"[>`]")
        assert any(back.search(text) for text in texts.values()), f"no chapter links to {page.name}"
