"""Check the weight of the built book: the whole site and every page stay light.

    python tools/check_weight.py [_build/html] [--site-mb 40] [--page-mb 1.5]

A page's weight is its HTML file, which holds its animations and figures inline (plotly
frames, ``to_jshtml`` players); the site's weight is every file under the build folder.
Prints the site's size and the heaviest pages, and exits with status 1 naming each page over
the page limit, or when the site is over its limit.
"""

import argparse
import sys
from pathlib import Path

MB = 1_000_000
SITE_LIMIT_MB = 40.0
PAGE_LIMIT_MB = 1.5


def site_bytes(root):
    return sum(p.stat().st_size for p in Path(root).rglob("*") if p.is_file())


def page_sizes(root):
    """(bytes, relative path) of every HTML page, heaviest first."""
    root = Path(root)
    return sorted(((p.stat().st_size, p.relative_to(root).as_posix()) for p in root.rglob("*.html")),
                  reverse=True)


def problems(root, site_limit_mb=SITE_LIMIT_MB, page_limit_mb=PAGE_LIMIT_MB):
    """A list of human-readable problems (empty when the site is light enough)."""
    out = [f"{page}: {size / MB:.2f} MB, over the {page_limit_mb} MB page limit"
           for size, page in page_sizes(root) if size > page_limit_mb * MB]
    total = site_bytes(root)
    if total > site_limit_mb * MB:
        out.append(f"the site is {total / MB:.1f} MB, over the {site_limit_mb} MB limit")
    return out


def main(args):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default="_build/html")
    parser.add_argument("--site-mb", type=float, default=SITE_LIMIT_MB)
    parser.add_argument("--page-mb", type=float, default=PAGE_LIMIT_MB)
    opts = parser.parse_args(args)
    root = Path(opts.root)
    pages = page_sizes(root)
    if not pages:
        print(f"check_weight: no HTML pages under {root}; build the book first")
        return 1
    heaviest = ", ".join(f"{page} {size / MB:.2f} MB" for size, page in pages[:3])
    print(f"check_weight: site {site_bytes(root) / MB:.1f} MB in {len(pages)} pages; heaviest: {heaviest}")
    found = problems(root, opts.site_mb, opts.page_mb)
    for problem in found:
        print(f"check_weight: {problem}")
    print(f"check_weight: {len(found)} problems (limits: site {opts.site_mb} MB, page {opts.page_mb} MB)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
