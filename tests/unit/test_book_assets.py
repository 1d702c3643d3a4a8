"""The book's Sphinx extension (book/_ext/book_assets.py): what it removes from the built site."""

from types import SimpleNamespace

from scripts import load_script

book_assets = load_script("book/_ext/book_assets.py")

FILES = ["tex-chtml.js", "tex-svg.js", "input/tex-full.js", "input/asciimath.js", "input/tex.js",
         "input/tex/extensions/boldsymbol.js", "input/mml.js", "output/svg.js", "output/chtml/fonts/tex.js",
         "a11y/semantic-enrich.js", "sre/mathmaps/base.json", "sre/mathmaps/en.json",
         "sre/mathmaps/nemeth.json", "sre/mathmaps/de.json", "sre/mathmaps/hi.json"]


def built_site(tmp_path):
    folder = tmp_path / "_static" / "mathjax"
    for name in FILES:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("//", encoding="utf-8")
    return folder


def left(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_the_tex_chtml_site_keeps_what_its_bundle_and_menu_fetch(tmp_path):
    folder = built_site(tmp_path)
    app = SimpleNamespace(outdir=str(tmp_path), config=SimpleNamespace(mathjax_path="mathjax/tex-chtml.js"))
    book_assets.drop_unused_mathjax_bundles(app, None)
    assert left(folder) == sorted(
        ["tex-chtml.js", "input/tex.js", "input/tex/extensions/boldsymbol.js", "input/mml.js",
         "output/svg.js", "output/chtml/fonts/tex.js", "a11y/semantic-enrich.js", "sre/mathmaps/base.json",
         "sre/mathmaps/en.json", "sre/mathmaps/nemeth.json"])


def test_a_failed_build_or_another_bundle_keeps_the_parts(tmp_path):
    folder = built_site(tmp_path)
    app = SimpleNamespace(outdir=str(tmp_path), config=SimpleNamespace(mathjax_path="mathjax/tex-chtml.js"))
    book_assets.drop_unused_mathjax_bundles(app, RuntimeError("build failed"))
    assert left(folder) == sorted(FILES)
    app.config.mathjax_path = "mathjax/tex-svg.js"
    book_assets.drop_unused_mathjax_bundles(app, None)
    assert left(folder) == sorted(set(FILES) - {"tex-chtml.js"})


def test_truetype_fonts_go_only_where_a_woff2_twin_stays(tmp_path):
    fonts = tmp_path / "_static" / "vendor" / "webfonts"
    fonts.mkdir(parents=True)
    for name in ["solid.ttf", "solid.woff2", "brands.ttf", "only.ttf"]:
        (fonts / name).write_bytes(b"\0")
    app = SimpleNamespace(outdir=str(tmp_path))
    book_assets.drop_font_fallbacks(app, RuntimeError("build failed"))
    assert len(list(fonts.iterdir())) == 4
    book_assets.drop_font_fallbacks(app, None)
    assert sorted(p.name for p in fonts.iterdir()) == ["brands.ttf", "only.ttf", "solid.woff2"]


def script(type_=None, filename=None):
    return SimpleNamespace(filename=filename, attributes={"type": type_} if type_ else {})


def test_widget_state_is_dropped_from_every_page_and_other_scripts_stay(caplog):
    scripts = [script(filename="_static/scripts/bootstrap.js"), script(type_=book_assets.WIDGET_STATE),
               script(type_="text/javascript")]
    context = {"body": "<p>a page whose explorer cell shows its code only</p>", "script_files": scripts}
    book_assets.leave_out_widgets(None, "book/01_maximal/02_velocity", "page.html", context, None)
    assert [js.attributes.get("type") for js in context["script_files"]] == [None, "text/javascript"]
    assert not caplog.records


def test_a_page_that_shows_a_widget_is_a_build_warning_naming_it(caplog):
    body = f'<script type="{book_assets.WIDGET_VIEW}">{{"model_id": "1"}}</script>'
    book_assets.leave_out_widgets(None, "book/05_variational/03_explorer", "page.html",
                                  {"body": body, "script_files": []}, None)
    assert any("book/05_variational/03_explorer: shows a live ipywidget" in r.getMessage()
               for r in caplog.records)
