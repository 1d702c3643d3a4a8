"""Open every built page with a player in headless Chromium and use its players as a reader would.

    python tools/check_players.py [_build/html] [--page book/01_maximal/02_velocity.html ...]

One browser visits every page of the built book that holds a player: a plotly figure with
frames (the explorers, the 3-D scenes), a vector player of the galleries (a canvas with a
slider and a play button) or a matplotlib animation (``to_jshtml``). On each page it fails on

* a script error: an uncaught exception or rejection, or an error the page logs;
* a failed load: a script, style sheet, image or font that does not load;
* raw TeX: ``\\(``, ``\\[``, ``$$`` or ``\\begin{`` left in the text a reader sees (outside
  code) once MathJax has typeset the page;
* a player that does not redraw: what it shows (a plotly figure's data, a canvas's pixels, an
  animation's frame) must change when its slider moves to another position, when another
  method button of a grid player is pressed, and when Play is pressed; after Play and an
  early Pause, a plotly player's slider must name the frame the figure shows. (A player of a
  single frame is a picture: nothing to check.)

Where Chromium, chromedriver or selenium is missing the check is skipped, with the reason
(``.ci/run`` installs Debian's chromium and chromium-driver, so CI always runs it). It takes
about half a minute for the whole book on two cores. Exit status 1 lists every failure.
"""

import argparse
import re
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKERS = ("plotly-graph-div", 'canvas id="rmxp-', '<img id="_anim_img')
CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
#: What the browser's log says of a failed load (its other errors, such as a theme's
#: console.error on a fresh profile, "invalid theme mode", are not the page's failures).
FAILED_LOAD = re.compile(r"Failed to load|net::ERR_|Refused to")
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-unsafe-swiftshader", "--hide-scrollbars", "--window-size=1280,1000")

#: Runs in every page before its own scripts: records script errors and failed loads.
RECORDER = """
window.__check = {errors: [], failed: []};
window.addEventListener('error', function (event) {
  var t = event.target;
  if (t && t !== window && (t.src || t.href)) {
    window.__check.failed.push(t.tagName + ' ' + (t.src || t.href));
  } else {
    var at = (event.filename || '') + ':' + (event.lineno || '');
    window.__check.errors.push(String(event.message) + ' (' + at + ')');
  }
}, true);
window.addEventListener('unhandledrejection', function (event) {
  // plotly rejects an animation's promise, with no reason, when Pause interrupts it
  if (event.reason !== undefined) window.__check.errors.push('unhandled rejection: ' + String(event.reason));
});
"""

#: The text a reader sees, outside code, with TeX delimiters left in it.
RAW_TEX = r"""
var found = [], skip = /^(SCRIPT|STYLE|PRE|CODE|TEXTAREA|MJX-CONTAINER|MJX-ASSISTIVE-MML)$/;
var walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {acceptNode: function (node) {
  for (var e = node.parentElement; e; e = e.parentElement) {
    var code = e.classList && e.classList.contains('highlight');
    if (skip.test(e.tagName) || code) return NodeFilter.FILTER_REJECT;
  }
  return NodeFilter.FILTER_ACCEPT;
}});
while (walker.nextNode()) {
  var text = walker.currentNode.nodeValue, m = text.match(/\\\(|\\\[|\$\$|\\begin\{/);
  if (m) found.push(text.slice(Math.max(0, m.index - 30), m.index + 40).replace(/\s+/g, ' '));
}
return found;
"""

#: A fingerprint of what a player shows now (``arguments[0]`` the player's element).
SHOWN = """
var el = arguments[0], text;
if (el.classList.contains('js-plotly-plot')) {
  text = JSON.stringify(el.data.map(function (t) { return [t.x, t.y, t.z]; }));
} else if (el.tagName === 'CANVAS') {
  text = el.toDataURL();
} else {
  text = el.src;
}
var h = 0;
for (var i = 0; i < text.length; i++) { h = (h * 31 + text.charCodeAt(i)) | 0; }
return h + ':' + text.length;
"""

#: Which frame a plotly player shows, and which frame its slider names (after an animation).
PLOTLY_SYNC = """
var gd = arguments[0], frames = gd._transitionData._frames, slider = gd.layout.sliders[0];
var same = function (a, b) { return JSON.stringify(a) === JSON.stringify(b); };
var shown = frames.filter(function (f) {
  return f.data.every(function (d, i) {
    var t = gd.data[f.traces ? f.traces[i] : i];
    return same(d.x, t.x) && same(d.y, t.y) && same(d.z, t.z);
  });
}).map(function (f) { return String(f.name); });
var step = slider.steps[slider.active];
return [shown, step.args[0] ? String(step.args[0][0]) : null, step.label];
"""


def pages_with_players(site, only=()):
    """The built pages that hold a player, as paths under ``site``."""
    if only:
        return [site / page for page in only]
    return sorted(p for p in site.rglob("*.html") if any(m in p.read_text(encoding="utf-8", errors="replace")
                                                         for m in MARKERS))


def browser():
    """A headless Chromium driven by selenium, or the reason why there is none."""
    binary = next((shutil.which(name) for name in CHROMIUM if shutil.which(name)), None)
    driver_path = shutil.which("chromedriver")
    if binary is None or driver_path is None:
        missing = "Chromium" if binary is None else "chromedriver"
        return None, f"no {missing} installed (Debian: apt-get install chromium chromium-driver)"
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None, "selenium is not installed (pip install -r requirements.txt)"
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in FLAGS:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
    return driver, None


#: Browsers that check pages side by side.
BROWSERS = 2

#: Seconds a player gets to redraw after its slider moves or Play is pressed.
WAIT = 4.0


def changes(driver, element, act, before):
    """Run ``act`` (a callable) and wait until what ``element`` shows differs from ``before``;
    True if it did within :data:`WAIT` seconds."""
    act()
    end = time.monotonic() + WAIT
    while time.monotonic() < end:
        if driver.execute_script(SHOWN, element) != before:
            return True
        time.sleep(0.1)
    return False


def settle(driver, element, quiet=0.6, wait=15.0):
    """Wait until what ``element`` shows has not changed for ``quiet`` seconds."""
    last, since, end = driver.execute_script(SHOWN, element), time.monotonic(), time.monotonic() + wait
    while time.monotonic() < end:
        time.sleep(0.1)
        now = driver.execute_script(SHOWN, element)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return


CLICK = "arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}));"


def check_plotly(driver, gd, name):
    """A plotly figure with frames: its slider, its method buttons (a grid player) and Play."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    problems = []
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", gd)
    grid = driver.execute_script("return (arguments[0].layout.meta || {}).grid || null;", gd)
    if driver.execute_script("return (arguments[0].layout.sliders || []).length", gd):
        rail = gd.find_element(By.CSS_SELECTOR, ".slider-rail-touch-rect")
        for side in (0.47, -0.47):     # the last position, then the first: one of them is a move
            before = driver.execute_script(SHOWN, gd)
            moved = changes(driver, gd, lambda side=side: ActionChains(driver).move_to_element_with_offset(
                rail, int(side * rail.size["width"]), 0).click().perform(), before)
            if moved:
                break
        else:
            problems.append(f"{name}: moving its slider does not redraw it")
    if grid:
        label = driver.execute_script("var menu = arguments[0].layout.updatemenus[arguments[1]];"
                                      "return menu.buttons[(menu.active + 1) % menu.buttons.length].label;",
                                      gd, grid["menu"])
        buttons = gd.find_elements(By.CSS_SELECTOR, ".updatemenu-button")
        other = next(b for b in buttons if b.text.strip() == label)
        before = driver.execute_script(SHOWN, gd)
        if not changes(driver, gd, lambda: driver.execute_script(CLICK, other), before):
            problems.append(f"{name}: pressing another method's button does not redraw it")
    buttons = {b.text.strip(): b for b in gd.find_elements(By.CSS_SELECTOR, ".updatemenu-button")}
    if "Play" in buttons:
        driver.execute_script(   # from the first frame, so that Play has frames to go through
            "var gd = arguments[0]; Plotly.animate(gd, [String(gd._transitionData._frames[0].name)], "
            "{mode: 'immediate', frame: {duration: 0, redraw: true}, transition: {duration: 0}});", gd)
        settle(driver, gd)
        before = driver.execute_script(SHOWN, gd)
        if not changes(driver, gd, lambda: driver.execute_script(CLICK, buttons["Play"]), before):
            problems.append(f"{name}: pressing Play does not redraw it")
        if "Pause" in buttons:   # early, as a reader might: the slider must follow the figure
            driver.execute_script(CLICK, buttons["Pause"])
        settle(driver, gd)
        shown, named, label = driver.execute_script(PLOTLY_SYNC, gd)
        if named is not None and named not in shown:
            problems.append(f"{name}: after Play and Pause, its slider says {label!r} but the figure shows "
                            f"frame {shown or 'none'}")
    return problems


def check_html_player(driver, element, slider, play, name):
    """A canvas player or a matplotlib animation: its slider (an input range) and its play button.
    None for a player of a single frame (a picture: nothing moves, nothing to check)."""
    problems = []
    last = driver.execute_script("return +arguments[0].max", slider)
    if last <= 0:   # a single picture: nothing to play
        return None
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
    move = ("arguments[1].value = arguments[2];"
            "arguments[1].dispatchEvent(new Event('input', {bubbles: true}));"
            "arguments[1].dispatchEvent(new Event('change', {bubbles: true}));")
    before = driver.execute_script(SHOWN, element)
    if not changes(driver, element, lambda: driver.execute_script(move, element, slider, last), before):
        problems.append(f"{name}: moving its slider does not redraw it")
    driver.execute_script(move, element, slider, 0)
    time.sleep(0.2)
    if play is None:
        problems.append(f"{name}: no play button")
    else:
        before = driver.execute_script(SHOWN, element)
        if not changes(driver, element, lambda: driver.execute_script(CLICK, play), before):
            problems.append(f"{name}: pressing play does not redraw it")
        driver.execute_script(CLICK, play)   # pause again
    return problems


def check_page(driver, path, site):
    from selenium.webdriver.common.by import By

    name = path.relative_to(site).as_posix()
    driver.get_log("browser")   # drop what earlier pages logged
    driver.get(path.as_uri())
    driver.execute_async_script("""var done = arguments[arguments.length - 1];
        var mj = window.MathJax && window.MathJax.startup && window.MathJax.startup.promise;
        (mj || Promise.resolve()).then(function () { done(true); }, function () { done(false); });""")
    problems = [f"{name}: raw TeX left: ...{text}..." for text in driver.execute_script(RAW_TEX)[:3]]
    count = 0
    for k, gd in enumerate(driver.find_elements(By.CSS_SELECTOR, ".js-plotly-plot")):
        if driver.execute_script("return (arguments[0]._transitionData._frames || []).length", gd):
            problems += check_plotly(driver, gd, f"{name}, plotly player {k + 1}")
            count += 1
    for k, canvas in enumerate(driver.find_elements(By.CSS_SELECTOR, "canvas[id^='rmxp-']")):
        stem = canvas.get_attribute("id")[:-2]
        slider, play = driver.find_element(By.ID, stem + "-s"), driver.find_element(By.ID, stem + "-b")
        found = check_html_player(driver, canvas, slider, play, f"{name}, canvas player {k + 1}")
        if found is not None:
            problems, count = problems + found, count + 1
    for k, image in enumerate(driver.find_elements(By.CSS_SELECTOR, "img[id^='_anim_img']")):
        stem = image.get_attribute("id")[len("_anim_img"):]
        box = driver.execute_script("return arguments[0].closest('.animation')", image)
        plays = box.find_elements(By.CSS_SELECTOR, "button[title='Play']") if box else []
        found = check_html_player(driver, image, driver.find_element(By.ID, "_anim_slider" + stem),
                                  plays[0] if plays else None, f"{name}, animation {k + 1}")
        if found is not None:
            problems, count = problems + found, count + 1
    recorded = driver.execute_script("return window.__check")
    problems += [f"{name}: script error: {e}" for e in recorded["errors"]]
    problems += [f"{name}: failed to load: {f}" for f in recorded["failed"]]
    # loads the page's own listener cannot see (fetch, XHR), from the browser's log
    problems += [f"{name}: failed to load: {entry['message']}" for entry in driver.get_log("browser")
                 if entry["level"] == "SEVERE" and FAILED_LOAD.search(entry["message"])
                 and not any(f.split(" ", 1)[-1] in entry["message"] for f in recorded["failed"])]
    return count, problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", default=str(ROOT / "_build" / "html"))
    parser.add_argument("--page", action="append", default=[], help="only this page (relative to the site)")
    args = parser.parse_args(argv)
    site = Path(args.site).resolve()
    pages = pages_with_players(site, args.page)
    if not pages:
        print(f"check_players: no page with a player under {site} (build the book first)")
        return 1
    driver, reason = browser()
    if driver is None:
        print(f"check_players: skipped: {reason}")
        return 0
    # two browsers side by side, each on every other page: most of a check is waiting for a player to settle
    drivers = [driver] + [d for d, _ in (browser() for _ in range(min(BROWSERS, len(pages)) - 1)) if d]
    start, n = time.monotonic(), len(drivers)
    try:
        with ThreadPoolExecutor(n) as pool:
            shares = list(pool.map(lambda k: [check_page(drivers[k], page, site) for page in pages[k::n]],
                                   range(n)))
    finally:
        for each in drivers:
            each.quit()
    results = [shares[i % n][i // n] for i in range(len(pages))]  # back in the pages' order
    players = sum(count for count, _ in results)
    problems = [problem for _, found in results for problem in found]
    for problem in problems:
        print(problem)
    seconds = time.monotonic() - start
    print(f"check_players: {players} players on {len(pages)} pages in {seconds:.0f} s, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
