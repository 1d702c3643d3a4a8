"""Sphinx extension of the book: page assets that Jupyter Book 1 does not get right by itself.

* plotly.js is served from the book (``_static/plotly/plotly.min.js``, copied there by
  tools/vendor_js.py) and added to exactly the pages that contain a plotly figure; the
  notebooks store their figures without the 4.7 MB library (see
  ``redmax_edu.viz.interactive.use_offline_renderer``). Were require.js ever on a page
  again, plotly.js would have to load before it: after it, plotly's UMD wrapper registers an
  anonymous AMD module instead of defining ``window.Plotly`` (hence its early priority).
* No page loads the ipywidgets manager. The live layer of every explorer needs a kernel,
  which a published page does not have (a widget there moves its sliders and redraws
  nothing), so its cell is tagged ``remove-output`` and the page shows a kernel-free view
  instead. The notebooks keep their widget state for Jupyter, which myst-nb would copy into
  every page that has one (up to 0.1 MB each) together with the manager's 3.5 MB of
  JavaScript; the state is dropped here, the manager is not configured (``nb_ipywidgets_js``
  is empty in _config.yml), and a page that shows a widget after all is a build warning.
* Inline configuration scripts that Jupyter Book's extensions add twice to every page are
  kept once: sphinx-thebe's ``const THEBE_JS_URL = ...``, declared twice, is a JavaScript
  error in every reader's console.
* The offline MathJax (sphinx-mathjax-offline) is copied whole: nine combined bundles of
  which the pages load one (``mathjax_path``). The others (14 MB, a third of the site) are
  removed after the copy; the pieces the loaded bundle fetches on demand (TeX extensions,
  fonts, the SVG renderer and accessibility tools of the menu) stay. Of those, what the
  TeX-input bundle never fetches goes too: the AsciiMath input and the full TeX input
  component (the bundle has its own TeX input and autoloads single extensions), and the
  speech rules of languages other than English (3.2 MB of the 3.9 MB of ``sre/mathmaps``):
  the book is in English, and its speech and Nemeth braille stay.
* The themes' source maps (``*.map``, 3.4 MB) are for debugging the themes' own scripts and
  styles; browsers fetch them only with the developer tools open. They are removed too.
* The icon fonts come in two formats, WOFF2 first and TrueType as the fallback of browsers
  without WOFF2 (none since 2018); the stylesheet lists both, so a browser takes the first it
  can read. The TrueType copies (0.7 MB) of fonts that have a WOFF2 twin are removed.
* The site carries no copies of its sources (``html_copy_source: false``), so the theme's
  "download source" and "download notebook" buttons, which link into ``_sources/``, are
  dropped; the "print to PDF" button stays.
* API reference: the library documents its constants with ``#:`` prose comments. napoleon
  reads the text before a first colon of such a docstring as the constant's type (and
  Sphinx then looks up every word of it as a class): such docstrings are kept as written.
"""

from pathlib import Path

from sphinx.util import logging

LOGGER = logging.getLogger(__name__)

PLOTLY_JS = "plotly/plotly.min.js"
#: combined MathJax bundles and the node entry point: never fetched by another bundle
MATHJAX_BUNDLES = ("tex-chtml.js", "tex-chtml-full.js", "tex-chtml-full-speech.js", "tex-mml-chtml.js",
                   "tex-mml-svg.js", "tex-svg.js", "tex-svg-full.js", "mml-chtml.js", "mml-svg.js",
                   "node-main.js")
#: components the tex-chtml bundle never fetches (it carries its own TeX input)
MATHJAX_UNFETCHED = ("input/asciimath.js", "input/tex-full.js")
#: the speech-rule engine's locales kept (base rules, English speech, Nemeth braille)
MATHJAX_SPEECH_KEPT = ("base", "en", "nemeth")


def add_plotly_where_used(app, pagename, templatename, context, doctree):
    if "plotly-graph-div" in context.get("body", ""):
        app.add_js_file(PLOTLY_JS, priority=200)


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def leave_out_widgets(app, pagename, templatename, context, doctree):
    if WIDGET_VIEW in context.get("body", ""):
        LOGGER.warning(f"{pagename}: shows a live ipywidget, which a page without a kernel cannot run; "
                       "tag its cell remove-output and show a kernel-free view (a player) instead")
    scripts = context.get("script_files")
    if scripts:
        scripts[:] = [js for js in scripts if getattr(js, "attributes", {}).get("type") != WIDGET_STATE]


def drop_repeated_inline_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for js in scripts:
        body = getattr(js, "attributes", {}).get("body") if not getattr(js, "filename", None) else None
        if body is not None and body in seen:
            continue
        if body is not None:
            seen.add(body)
        kept.append(js)
    scripts[:] = kept


SOURCE_BUTTONS = {"download-source-button", "download-notebook-button"}


def drop_source_download_buttons(app, pagename, templatename, context, doctree):
    if app.config.html_copy_source:
        return
    for button in context.get("header_buttons", []):
        if button.get("type") == "group":
            button["buttons"] = [b for b in button.get("buttons", []) if b.get("label") not in SOURCE_BUTTONS]


_CONSTANT_DOCSTRINGS = {}


def remember_constant_docstring(app, what, name, obj, options, lines):
    if what in ("data", "attribute"):
        _CONSTANT_DOCSTRINGS[name] = list(lines)


def restore_constant_docstring(app, what, name, obj, options, lines):
    if what in ("data", "attribute") and name in _CONSTANT_DOCSTRINGS:
        lines[:] = _CONSTANT_DOCSTRINGS.pop(name)


def drop_unused_mathjax_bundles(app, exc):
    folder = Path(app.outdir) / "_static" / "mathjax"
    used = Path(str(app.config.mathjax_path or "")).name
    if exc is not None or not (folder / used).exists():
        return  # a failed build, or MathJax not offline: leave everything
    for name in MATHJAX_BUNDLES:
        if name != used:
            (folder / name).unlink(missing_ok=True)
    if used != "tex-chtml.js":
        return  # another bundle may fetch other parts
    for name in MATHJAX_UNFETCHED:
        (folder / name).unlink(missing_ok=True)
    for locale in (folder / "sre" / "mathmaps").glob("*.json"):
        if locale.stem not in MATHJAX_SPEECH_KEPT:
            locale.unlink()


def drop_source_maps(app, exc):
    if exc is None:
        for path in (Path(app.outdir) / "_static").rglob("*.map"):
            path.unlink()


def drop_font_fallbacks(app, exc):
    if exc is None:
        for path in (Path(app.outdir) / "_static").rglob("*.ttf"):
            if path.with_suffix(".woff2").exists():
                path.unlink()


def setup(app):
    if "sphinx.ext.autodoc" in app.extensions:
        # around napoleon's own docstring processing (priority 500)
        app.connect("autodoc-process-docstring", remember_constant_docstring, priority=400)
        app.connect("autodoc-process-docstring", restore_constant_docstring, priority=600)
    app.connect("html-page-context", add_plotly_where_used)
    app.connect("html-page-context", leave_out_widgets, priority=900)
    # after sphinx-mathjax-offline's copy, which runs at the default priority 500
    app.connect("build-finished", drop_unused_mathjax_bundles, priority=900)
    app.connect("build-finished", drop_source_maps, priority=900)
    app.connect("build-finished", drop_font_fallbacks, priority=900)
    app.connect("html-page-context", drop_repeated_inline_scripts, priority=900)
    # after sphinx-book-theme's add_header_buttons (priority 501)
    app.connect("html-page-context", drop_source_download_buttons, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
