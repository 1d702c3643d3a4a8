"""Sphinx extension of the book: page assets that Jupyter Book 1 does not get right by itself.

* plotly.js is served from the book (``_static/plotly/plotly.min.js``, copied there by
  tools/vendor_js.py) and added to exactly the pages that contain a plotly figure; the
  notebooks store their figures without the 4.7 MB library (see
  ``redmax_edu.viz.interactive.use_offline_renderer``). It must load before require.js:
  after it, plotly's UMD wrapper registers an anonymous AMD module instead of defining
  ``window.Plotly``.
* Inline configuration scripts that Jupyter Book's extensions add twice to every page are
  kept once: sphinx-thebe's ``const THEBE_JS_URL = ...``, declared twice, is a JavaScript
  error in every reader's console.
"""

PLOTLY_JS = "plotly/plotly.min.js"


def add_plotly_where_used(app, pagename, templatename, context, doctree):
    if "plotly-graph-div" in context.get("body", ""):
        app.add_js_file(PLOTLY_JS, priority=200)


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


def setup(app):
    app.connect("html-page-context", add_plotly_where_used)
    app.connect("html-page-context", drop_repeated_inline_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
