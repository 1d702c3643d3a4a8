"""The browser check of the built pages (tools/check_players.py) catches what it says it catches.

Small pages written here hold one defect each (a script error, a failed load, raw TeX, a player
that does not redraw) next to players that work: a canvas player like the galleries' and a 3-D
plotly player rendered as the book renders it. Skipped where no Chromium is installed, as the
check itself is.
"""

from pathlib import Path

import pytest
from scripts import load_tool

# a browser: make test runs these, make check leaves them out
pytestmark = pytest.mark.slow

PLOTLY_JS = Path(pytest.importorskip("plotly").__file__).parent / "package_data" / "plotly.min.js"

CANVAS_PLAYER = """<canvas id="rmxp-{k}-c" width="60" height="60"></canvas>
<button id="rmxp-{k}-b">play</button><input id="rmxp-{k}-s" type="range" min="0" max="9" value="0">
<script>(function () {{
  var c = document.getElementById('rmxp-{k}-c'), s = document.getElementById('rmxp-{k}-s'),
      b = document.getElementById('rmxp-{k}-b'), x = c.getContext('2d'), k = 0, timer = null;
  function draw() {{ x.clearRect(0, 0, 60, 60); x.fillRect(0, 0, 6 * k + 1, 10); }}
  if ({works}) {{
    s.oninput = function () {{ k = +s.value; draw(); }};
    b.onclick = function () {{
      if (timer) {{ clearInterval(timer); timer = null; return; }}
      timer = setInterval(function () {{ k = (k + 1) % 10; draw(); }}, 50);
    }};
  }}
  draw();
}})();</script>"""


@pytest.fixture(scope="module")
def check_players():
    tool = load_tool("check_players")
    tool.WAIT = 0.5     # these players redraw at once; a failing one need not be waited for long
    return tool


@pytest.fixture(scope="module")
def driver(check_players):
    found, reason = check_players.browser()
    if found is None:
        pytest.skip(f"the browser check is skipped here too: {reason}")
    yield found
    found.quit()


def page(tmp_path, name, body, plotly=False):
    head = f'<script src="{PLOTLY_JS.as_uri()}"></script>' if plotly else ""
    path = tmp_path / name
    path.write_text(f"<html><head>{head}</head><body><p>Prose and $x$ in code: <code>\\(x\\)</code></p>"
                    f"{body}</body></html>", encoding="utf-8")
    return path


def check(check_players, driver, path):
    return check_players.check_page(driver, path, path.parent)


def test_working_players_pass(check_players, driver, tmp_path):
    path = page(tmp_path, "good.html", CANVAS_PLAYER.format(k=1, works="true"))
    assert check(check_players, driver, path) == (1, [])


def test_a_player_that_does_not_redraw_fails(check_players, driver, tmp_path):
    path = page(tmp_path, "frozen.html", CANVAS_PLAYER.format(k=2, works="false"))
    count, problems = check(check_players, driver, path)
    assert count == 1
    assert any("moving its slider does not redraw it" in p for p in problems)
    assert any("pressing play does not redraw it" in p for p in problems)


@pytest.mark.parametrize(("body", "says"), [
    ("<script>notAFunction();</script>", "script error"),
    ('<script src="missing.js"></script>', "missing.js"),
    ('<img src="missing.png">', "missing.png"),
    (r"<p>A formula left as \(x^2\) for a reader</p>", "raw TeX left"),
])
def test_script_errors_failed_loads_and_raw_tex_fail(check_players, driver, tmp_path, body, says):
    path = page(tmp_path, "broken.html", CANVAS_PLAYER.format(k=3, works="true") + body)
    _, problems = check(check_players, driver, path)
    assert len(problems) >= 1 and all(says in p for p in problems), problems


def plotly_html(fig):
    import plotly.io as pio

    from redmax_edu.viz.interactive import use_offline_renderer

    use_offline_renderer()
    return pio.renderers["redmax_offline"].to_mimebundle(fig.to_dict())["text/html"]


def plotly_player(distinct):
    """A small plotly player with a slider and Play, its three frames distinct or all alike."""
    import plotly.graph_objects as go

    frames = [go.Frame(data=[go.Scatter(x=[0, 1], y=[0, k if distinct else 1])], name=str(k))
              for k in range(3)]
    animate = dict(mode="immediate", frame=dict(duration=0, redraw=True), transition=dict(duration=0))
    steps = [dict(method="animate", label=str(k), args=[[str(k)], animate]) for k in range(3)]
    return go.Figure(data=frames[0].data, frames=frames, layout=dict(
        yaxis=dict(range=[-1, 3]), sliders=[dict(steps=steps)],
        updatemenus=[dict(type="buttons", buttons=[dict(label="Play", method="animate", args=[None, dict(
            frame=dict(duration=80, redraw=True), fromcurrent=True)])])]))


def test_a_plotly_player_passes_and_one_of_like_frames_fails(check_players, driver, tmp_path):
    """Rendered as the book renders it: the working player passes (slider, Play, and its slider
    names the frame shown after playing); the one whose frames are all alike fails."""
    if not PLOTLY_JS.exists():
        pytest.skip("plotly ships no plotly.min.js here")
    html = plotly_html(plotly_player(True)) + plotly_html(plotly_player(False))
    count, problems = check(check_players, driver, page(tmp_path, "players.html", html, plotly=True))
    assert count == 2 and problems and all("plotly player 2" in p for p in problems), problems
    assert any("moving its slider does not redraw it" in p for p in problems)
    assert any("pressing Play does not redraw it" in p for p in problems)


def test_without_chromium_the_check_is_skipped_with_its_reason(check_players, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(check_players.shutil, "which", lambda name: None)
    page(tmp_path, "good.html", CANVAS_PLAYER.format(k=1, works="true"))
    assert check_players.main([str(tmp_path)]) == 0
    assert "skipped: no Chromium installed" in capsys.readouterr().out
