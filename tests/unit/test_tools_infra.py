"""Unit tests of the tools of issue 9: text twins, numeric-kernel variants, the weight check."""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell
from scripts import load_tool

from .test_tools import clean_notebook


@pytest.fixture(scope="module")
def sync_twins():
    return load_tool("sync_twins")


@pytest.fixture(scope="module")
def numeric_kernels():
    return load_tool("numeric_kernels")


@pytest.fixture(scope="module")
def check_weight():
    return load_tool("check_weight")


# --- sync_twins ---------------------------------------------------------------------------------


def repo_with_notebook(tmp_path):
    root = tmp_path / "repo"
    (root / "book" / "ch").mkdir(parents=True)
    nb = clean_notebook()
    nb.cells.insert(1, new_markdown_cell("# A title\n\nSome prose."))
    path = root / "book" / "ch" / "page.ipynb"
    nbformat.write(nb, path)
    return root, path


def test_the_twin_mirrors_the_notebook_as_myst_markdown(sync_twins, tmp_path):
    root, path = repo_with_notebook(tmp_path)
    written = sync_twins.write_twin(path, root)
    assert written == root / "text" / "book" / "ch" / "page.md"
    text = written.read_text()
    assert "```{code-cell}" in text and "rng = setup(seed=0)" in text and "# A title" in text
    assert "nbval-ignore-output" in text  # cell tags are kept
    assert "redmax_edu 0.1.0; seed 0" not in text  # outputs are not
    assert sync_twins.twin_problems([path], root) == []
    assert sync_twins.write_twin(path, root) is None  # already current: not rewritten


def test_a_changed_cell_makes_the_check_fail(sync_twins, tmp_path):
    root, path = repo_with_notebook(tmp_path)
    sync_twins.write_twin(path, root)
    nb = nbformat.read(path, as_version=4)
    nb.cells[3].source = "x = 1 + 2\nx"
    nbformat.write(nb, path)
    found = sync_twins.twin_problems([path], root)
    assert len(found) == 1 and "book/ch/page.ipynb: its text twin text/book/ch/page.md is stale" in found[0]
    sync_twins.write_twin(path, root)
    assert sync_twins.twin_problems([path], root) == []


def test_missing_and_orphaned_twins_are_reported(sync_twins, tmp_path):
    root, path = repo_with_notebook(tmp_path)
    assert "no text twin" in sync_twins.twin_problems([path], root)[0]
    sync_twins.write_twin(path, root)
    orphan = root / "text" / "book" / "ch" / "gone.md"
    orphan.write_text("# gone\n")
    found = sync_twins.twin_problems([path], root)
    assert found == ["text/book/ch/gone.md: a twin without a notebook (delete it)"]
    assert sync_twins.twin_problems([path], root, orphans=False) == []


def test_check_notebooks_fails_on_a_stale_twin(tmp_path, monkeypatch, capsys):
    check_notebooks = load_tool("check_notebooks")
    sync_twins = load_tool("sync_twins")
    root, path = repo_with_notebook(tmp_path)
    sync_twins.write_twin(path, root)
    monkeypatch.setattr(check_notebooks, "ROOT", root)
    assert check_notebooks.main([]) == 0
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(new_code_cell("y = 3", execution_count=3))
    nbformat.write(nb, path)
    assert check_notebooks.main([]) == 1
    assert "is stale" in capsys.readouterr().out


def test_the_repository_twins_are_current(sync_twins):
    assert sync_twins.twin_problems(sync_twins.all_notebooks()) == []


# --- numeric_kernels ----------------------------------------------------------------------------

NEW_NUMPY = (["X86_V2"], ["X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"],
             {"SSE42", "X86_V2", "AVX", "AVX2", "FMA3", "X86_V3", "X86_V4", "AVX512_ICL"})
AVX2_MACHINE = (["X86_V2"], ["X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"],
                {"SSE42", "X86_V2", "AVX", "AVX2", "FMA3", "X86_V3"})
OLD_NUMPY = (["SSE", "SSE2", "SSE3"], ["SSSE3", "SSE41", "POPCNT", "SSE42", "AVX", "F16C", "FMA3", "AVX2",
                                       "AVX512F", "AVX512_SKX"],
             {"SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42", "AVX", "F16C", "FMA3", "AVX2",
              "AVX512F", "AVX512_SKX"})


def test_the_disable_lists_of_the_avx512_machine(numeric_kernels):
    assert numeric_kernels.variant_env("avx2", NEW_NUMPY, "x86") == {
        "OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL"}
    assert numeric_kernels.variant_env("sse42", NEW_NUMPY, "x86") == {
        "OPENBLAS_CORETYPE": "Sandybridge", "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL"}


def test_features_the_cpu_lacks_are_not_disabled(numeric_kernels):
    # numpy dispatches AVX512_SPR, but this CPU lacks it; an AVX2 machine has nothing above V3
    assert numeric_kernels.variant_env("avx2", AVX2_MACHINE, "x86") == {"OPENBLAS_CORETYPE": "Haswell"}
    assert numeric_kernels.disable_list(("X86_V2",), AVX2_MACHINE) == ["X86_V3"]


def test_older_numpy_names_its_levels_differently(numeric_kernels):
    assert numeric_kernels.disable_list(("X86_V3", "AVX2"), OLD_NUMPY) == ["AVX512F", "AVX512_SKX"]
    assert numeric_kernels.disable_list(("X86_V2", "SSE42"), OLD_NUMPY) == [
        "AVX", "F16C", "FMA3", "AVX2", "AVX512F", "AVX512_SKX"]


def test_variants_that_cannot_run_are_skipped_with_a_reason(numeric_kernels):
    old_cpu = (["X86_V2"], ["X86_V3", "X86_V4"], {"SSE42", "X86_V2", "AVX"})
    assert "lacks AVX2 FMA3" in numeric_kernels.variant_env("avx2", old_cpu, "x86")
    assert "not an x86 machine" in numeric_kernels.variant_env("avx2", NEW_NUMPY, "arm")
    assert "not an arm machine" in numeric_kernels.variant_env("arm-baseline", NEW_NUMPY, "x86")
    arm = (["NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"], ["ASIMDHP", "ASIMDDP", "SVE"],
           {"NEON", "ASIMD", "ASIMDHP", "ASIMDDP"})
    assert numeric_kernels.variant_env("arm-baseline", arm, "arm") == {
        "OPENBLAS_CORETYPE": "ARMV8", "NPY_DISABLE_CPU_FEATURES": "ASIMDHP ASIMDDP"}


def test_a_baseline_feature_is_never_disabled(numeric_kernels):
    for cpu in (NEW_NUMPY, AVX2_MACHINE, OLD_NUMPY):
        for name in ("avx2", "sse42"):
            env = numeric_kernels.variant_env(name, cpu, "x86")
            disabled = set(env.get("NPY_DISABLE_CPU_FEATURES", "").split())
            assert not disabled & set(cpu[0])
            assert disabled <= set(cpu[1]) & cpu[2]


def test_run_all_treats_exit_5_as_success_and_reports_failures(numeric_kernels, monkeypatch, capsys):
    monkeypatch.setattr(numeric_kernels, "variant_env",
                        lambda name: "skipped here" if name == "arm-baseline" else {"X": name})
    calls = []
    monkeypatch.setattr(numeric_kernels.subprocess, "call",
                        lambda command, env: calls.append(env["X"]) or (5 if env["X"] == "avx2" else 0))
    assert numeric_kernels.run_all(["pytest"]) == 0
    assert calls == ["avx2", "sse42"]
    assert "skip variant arm-baseline: skipped here" in capsys.readouterr().out
    monkeypatch.setattr(numeric_kernels.subprocess, "call", lambda command, env: 1)
    assert numeric_kernels.run_all(["pytest"]) == 1
    assert "failed under avx2 (exit 1), sse42 (exit 1)" in capsys.readouterr().out


# --- check_weight -------------------------------------------------------------------------------


def test_check_weight_names_the_heavy_page_and_the_heavy_site(check_weight, tmp_path, capsys):
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "light.html").write_bytes(b"x" * 1000)
    (tmp_path / "book" / "heavy.html").write_bytes(b"x" * 1_600_000)
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "big.js").write_bytes(b"x" * 500_000)
    assert check_weight.problems(tmp_path) == ["book/heavy.html: 1.60 MB, over the 1.5 MB page limit"]
    assert check_weight.problems(tmp_path, site_limit_mb=2.0) == [
        "book/heavy.html: 1.60 MB, over the 1.5 MB page limit",
        "the site is 2.1 MB, over the 2.0 MB limit"]
    assert check_weight.main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "site 2.1 MB in 2 pages; heaviest: book/heavy.html 1.60 MB" in out
    (tmp_path / "book" / "heavy.html").write_bytes(b"x" * 1_400_000)
    assert check_weight.main([str(tmp_path)]) == 0


def test_check_weight_fails_without_a_build(check_weight, tmp_path):
    assert check_weight.main([str(tmp_path)]) == 1


# --- light player frames (redmax_edu.viz.animate) -----------------------------------------------


def test_player_frames_are_palette_pngs_and_lighter():
    import base64
    import io
    import re

    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation
    from PIL import Image

    from redmax_edu.viz import animate

    def player(light):
        fig, ax = plt.subplots(figsize=(2, 2), dpi=72)
        (line,) = ax.plot([0, 1], [0, 1])
        animation = FuncAnimation(fig, lambda k: line.set_ydata([0, k / 3]) or [line], frames=4)
        if not light:
            return animation.to_jshtml()
        return animate.offline_player_html(animation, fig)

    heavy, light = player(False), player(True)
    frames = re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", light)
    assert len(frames) == 4
    assert all(Image.open(io.BytesIO(base64.b64decode(f))).mode == "P" for f in frames)
    assert len(light) < 0.8 * len(heavy)


def test_a_notebook_outside_the_repository_has_no_twin(sync_twins, tmp_path):
    root, path = repo_with_notebook(tmp_path)
    outside = tmp_path / "scratch.ipynb"
    outside.write_bytes(path.read_bytes())
    assert sync_twins.write_twin(outside, root) is None
    assert sync_twins.twin_problems([outside], root, orphans=False) == []
