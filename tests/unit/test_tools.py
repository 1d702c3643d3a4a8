"""Unit tests of the repository tools: notebook hygiene and the offline-HTML check.

The tools are scripts, not part of the package, so they are imported from their paths.
"""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from scripts import load_tool


@pytest.fixture(scope="module")
def check_notebooks():
    return load_tool("check_notebooks")


@pytest.fixture(scope="module")
def check_offline_html():
    return load_tool("check_offline_html")


# --- check_notebooks --------------------------------------------------------------------------


def clean_notebook():
    """A notebook that follows every rule: setup first, counts 1, 2, known tags, bare metadata."""
    nb = new_notebook(metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    })
    nb.cells = [
        new_code_cell("from redmax_edu._book import setup\nrng = setup(seed=0)", execution_count=1,
                      outputs=[new_output("stream", name="stdout", text="redmax_edu 0.1.0; seed 0\n")]),
        new_markdown_cell("The figure shows ...", metadata={"tags": ["hide-input"]}),
        new_code_cell("x = 1 + 1\nx", execution_count=2, metadata={"tags": ["nbval-ignore-output"]},
                      outputs=[new_output("execute_result", data={"text/plain": "2"}, execution_count=2)]),
    ]
    return nb


def problems_of(module, nb, tmp_path):
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    return module.problems(path)


def test_clean_notebook_has_no_problems(check_notebooks, tmp_path):
    assert problems_of(check_notebooks, clean_notebook(), tmp_path) == []


def break_error_output(nb):
    nb.cells[2].outputs.append(new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                                          traceback=[]))


def break_execution_count(nb):
    nb.cells[2].execution_count = 5
    nb.cells[2].outputs[0].execution_count = 5


def break_unexecuted(nb):
    nb.cells[2].execution_count = None
    nb.cells[2].outputs = []


def break_tag(nb):
    nb.cells[1].metadata["tags"] = ["hide_input"]


def break_notebook_metadata(nb):
    nb.metadata["toc"] = {"number_sections": True}


def break_cell_metadata(nb):
    nb.cells[2].metadata["collapsed"] = False


def break_setup(nb):
    nb.cells[0].source = "import numpy as np"


def break_setup_not_first(nb):
    nb.cells.insert(0, new_code_cell("import numpy as np", execution_count=1))
    nb.cells[1].execution_count, nb.cells[3].execution_count = 2, 3
    nb.cells[3].outputs[0].execution_count = 3


def break_memory_address(nb):
    nb.cells[2].outputs[0].data["text/plain"] = "<Figure size 640x480 with 1 Axes at 0x7f3a2b1c9d50>"


def break_local_path(nb):
    nb.cells[0].outputs[0].text = "saved to /tmp/figure.png\n"


def break_kernel(nb):
    nb.metadata["kernelspec"]["name"] = "julia-1.10"


DEFECTS = [
    (break_error_output, "cell 2: error output ZeroDivisionError: division by zero"),
    (break_execution_count, "cell 2: execution count 5, expected 2"),
    (break_unexecuted, "cell 2: execution count None, expected 2"),
    (break_tag, "cell 1: unknown tags ['hide_input']"),
    (break_notebook_metadata, "stray notebook metadata ['toc']"),
    (break_cell_metadata, "cell 2: stray cell metadata ['collapsed']"),
    (break_setup, "the first code cell must call setup(seed=...)"),
    (break_setup_not_first, "the first code cell must call setup(seed=...)"),
    (break_memory_address, "cell 2: output contains a memory address"),
    (break_local_path, "cell 0: output contains a local path"),
    (break_kernel, "kernelspec is not python3"),
]


@pytest.mark.parametrize("defect, message", DEFECTS,
                         ids=[defect.__name__.removeprefix("break_") for defect, _ in DEFECTS])
def test_problems_reports_each_defect_once(check_notebooks, tmp_path, defect, message):
    nb = clean_notebook()
    defect(nb)
    found = problems_of(check_notebooks, nb, tmp_path)
    assert len(found) == 1, found
    assert found[0].startswith(message)


def test_problems_reports_several_defects_together(check_notebooks, tmp_path):
    nb = clean_notebook()
    for defect in (break_error_output, break_tag, break_setup):
        defect(nb)
    assert len(problems_of(check_notebooks, nb, tmp_path)) == 3


def test_main_returns_1_and_lists_problems_of_a_repository_notebook(check_notebooks, tmp_path, monkeypatch,
                                                                    capsys):
    root = tmp_path / "repo"
    (root / "book").mkdir(parents=True)
    bad = clean_notebook()
    break_tag(bad)
    nbformat.write(bad, root / "book" / "bad.ipynb")
    nbformat.write(clean_notebook(), root / "book" / "good.ipynb")
    sync_twins = load_tool("sync_twins")
    for name in ("bad", "good"):
        sync_twins.write_twin(root / "book" / f"{name}.ipynb", root)
    monkeypatch.setattr(check_notebooks, "ROOT", root)
    assert check_notebooks.main([]) == 1
    out = capsys.readouterr().out
    assert "book/bad.ipynb: cell 1: unknown tags" in out and "good.ipynb" not in out
    assert "2 notebooks, 1 problems" in out


def test_main_lists_problems_of_a_notebook_outside_the_repository(check_notebooks, tmp_path, capsys):
    nb = clean_notebook()
    break_tag(nb)
    nbformat.write(nb, tmp_path / "nb.ipynb")
    assert check_notebooks.main([str(tmp_path / "nb.ipynb")]) == 1
    assert "unknown tags" in capsys.readouterr().out


# --- check_offline_html -----------------------------------------------------------------------


@pytest.mark.parametrize("tag", [
    '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"></script>',
    "<script defer src='http://cdn.example.org/require.min.js'></script>",
    '<script src="//unpkg.com/@jupyter-widgets/html-manager/dist/embed-amd.js"></script>',
    '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Lato">',
    '<link href="https://cdn.example.org/theme.css" rel="stylesheet" />',
    '<link rel="preload" as="script" href="https://cdn.example.org/app.js">',
], ids=["script https", "script http", "script protocol-relative", "stylesheet", "stylesheet href first",
        "preload"])
def test_offenders_flags_remote_scripts_and_stylesheets(check_offline_html, tag):
    page = f"<html><head>{tag}</head><body><p>text</p></body></html>"
    found = check_offline_html.offenders(page)
    assert len(found) == 1
    assert found[0] in tag


@pytest.mark.parametrize("tag", [
    '<script src="_static/widgets/require.js"></script>',
    '<script src="../_static/scripts/bootstrap.js?digest=abc"></script>',
    "<script>var url = 'https://example.org';</script>",
    '<link rel="stylesheet" href="_static/pygments.css" />',
    '<link rel="canonical" href="https://example.org/book/intro.html" />',
    '<a href="https://github.com/example/redmax_edu">source</a>',
], ids=["local script", "relative script", "inline script", "local stylesheet", "canonical link",
        "anchor"])
def test_offenders_ignores_local_assets_and_plain_links(check_offline_html, tag):
    assert check_offline_html.offenders(f"<html><head>{tag}</head><body></body></html>") == []


def test_offenders_lists_every_remote_asset_of_a_page(check_offline_html):
    page = ('<script src="https://a.example/x.js"></script><script src="_static/y.js"></script>'
            '<link rel="stylesheet" href="https://b.example/z.css"><a href="https://c.example">c</a>')
    assert len(check_offline_html.offenders(page)) == 2
