"""Check that the built book needs no network: no page loads a script or stylesheet over http(s).

    python tools/check_offline_html.py [_build/html]

Scans every HTML page for ``<script src=...>`` and ``<link href=...>`` (stylesheets,
preloads, module preloads) pointing at ``http://`` or ``https://``, and checks that the
local assets the pages rely on (MathJax, plotly.js) were copied into the build, and that
every page with a plotly figure loads the book's own plotly.js.
Exits with status 1 and lists the offenders otherwise.
"""

import re
import sys
from pathlib import Path

REMOTE_SCRIPT = re.compile(r"<script\b[^>]*\bsrc\s*=\s*[\"']?(https?:)?//", re.I)
REMOTE_LINK = re.compile(r"<link\b[^>]*\bhref\s*=\s*[\"']?(https?:)?//[^>]*>", re.I)
LOCAL_ASSETS = ("_static/plotly/plotly.min.js",)
LOCAL_PLOTLY = re.compile(r"<script\b[^>]*\bsrc\s*=\s*[\"'][./]*_static/plotly/plotly\.min\.js", re.I)


def offenders(html):
    """The remote script and stylesheet tags of one page."""
    found = [m.group(0) for m in REMOTE_SCRIPT.finditer(html)]
    found += [m.group(0) for m in REMOTE_LINK.finditer(html)
              if re.search(r"rel\s*=\s*[\"']?(stylesheet|preload|modulepreload)", m.group(0), re.I)]
    return found


def main(args):
    root = Path(args[0] if args else "_build/html")
    pages = sorted(root.rglob("*.html"))
    if not pages:
        print(f"check_offline_html: no HTML pages under {root}; build the book first")
        return 1
    bad = 0
    for page in pages:
        html = page.read_text(encoding="utf-8", errors="replace")
        for tag in offenders(html):
            print(f"{page.relative_to(root)}: remote asset {tag[:120]}")
            bad += 1
        if "plotly-graph-div" in html and not LOCAL_PLOTLY.search(html):
            print(f"{page.relative_to(root)}: has a plotly figure but does not load the book's plotly.js")
            bad += 1
    for asset in LOCAL_ASSETS:
        if not (root / asset).exists():
            print(f"missing local asset {asset}")
            bad += 1
    if not list((root / "_static").rglob("tex-chtml*.js")):
        print("missing local MathJax (sphinx-mathjax-offline)")
        bad += 1
    print(f"check_offline_html: {len(pages)} pages, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
