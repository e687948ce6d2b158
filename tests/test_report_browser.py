"""The HTML report in a real browser: headless Chromium (Debian's `chromium`, installed by
scripts/setup-system.sh) loads the file offline, and we read back what it rendered.

A small script appended to a copy of the report writes what only a browser knows (the page's
laid-out width, which parts are displayed, the size the plots were drawn at) into the DOM that
`--dump-dom` prints.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from report_inputs import many_models, official_slice, run_with_references

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed and could not be: run scripts/setup-system.sh "
    "(apt-get install chromium) to test the HTML report in a real browser",
)
WIDTH = 1400

PROBE = """<script>
window.addEventListener("load", function () {
  var d = document, probe = d.createElement("div");
  var target = location.hash ? d.getElementById(location.hash.slice(1)) : null;
  probe.id = "probe";
  probe.setAttribute("data-page-width", String(d.documentElement.scrollWidth));
  probe.setAttribute("data-summary", getComputedStyle(d.getElementById("summary")).display);
  probe.setAttribute("data-target", target ? getComputedStyle(target).display : "");
  probe.setAttribute("data-pages-shown", String(Array.from(d.querySelectorAll(".task-page"))
    .filter(function (e) { return getComputedStyle(e).display !== "none"; }).length));
  probe.setAttribute("data-plot-widths", Array.from(d.querySelectorAll("svg.plot"))
    .map(function (e) { return Math.round(e.getBoundingClientRect().width); }).join(","));
  d.body.appendChild(probe);
});
</script>
</body>"""


def _chromium(tmp_path: Path, url: str, *args: str) -> str:
    assert CHROMIUM is not None
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",  # CI runs as root; the page is our own file
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        f"--window-size={WIDTH},900",
        *args,
        url,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _render(tmp_path: Path, report: Path, *, fragment: str = "") -> tuple[str, dict[str, str]]:
    """The DOM Chromium built from ``report`` (opened at ``#fragment``), and the probe."""
    probed = report.with_name(report.stem + "-probed.html")
    probed.write_text(report.read_text(encoding="utf-8").replace("</body>", PROBE, 1))
    dom = _chromium(
        tmp_path, probed.as_uri() + (f"#{fragment}" if fragment else ""), "--dump-dom"
    )
    match = re.search(r'<div id="probe"([^>]*)>', dom)
    assert match, "the probe did not run: " + dom[-500:]
    probe = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', match.group(1)))
    return dom, probe


@pytest.fixture(scope="module")
def three_models(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of the paper's three models (official results, first 30 tasks) and a run
    whose task has a reference."""
    from codereval.cli.app import main

    out = tmp_path_factory.mktemp("three")
    inputs = [
        official_slice(shared_data, model, out, tasks=30)
        for model in ("ChatGPT", "CodeGen", "PanGu-Coder")
    ]
    report = out / "report.html"
    main(["report", *map(str, inputs), str(run_with_references(out)), "--compat",
          "-o", str(report)])
    return report


def test_chromium_renders_the_tables_and_the_plots(three_models: Path, tmp_path: Path) -> None:
    dom, probe = _render(tmp_path, three_models)
    assert len(re.findall(r'<table class="summary"', dom)) == 4
    assert 'data-section="overall and per runnable level"' in dom
    assert re.search(r"<td class=\"name\">self_contained</td>", dom)
    assert '<table class="paired">' in dom and "ChatGPT − CodeGen" in dom
    assert len(re.findall(r'<tr><td class="name"><a href="#task-', dom)) == 31
    # Four plots, drawn as SVG at a readable size, inside the page's width.
    assert len(re.findall(r"<svg\b", dom)) == 4
    widths = [int(w) for w in probe["plot-widths"].split(",")]
    assert len(widths) == 4 and all(300 < w <= WIDTH for w in widths), widths
    assert len(re.findall(r"<rect\b|<path\b", dom)) > 100  # bars, markers, axes
    # The summary shows, no task page does, and nothing pushes the page wider than the window.
    assert probe["summary"] == "block" and probe["pages-shown"] == "0"
    assert int(probe["page-width"]) <= WIDTH


def test_chromium_opens_a_task_page_alone(three_models: Path, tmp_path: Path) -> None:
    dom, probe = _render(tmp_path, three_models, fragment="task-demo_slugify")
    assert probe["target"] == "block" and probe["summary"] == "none"
    assert probe["pages-shown"] == "1"
    page = dom[dom.index('id="task-demo_slugify"'):]
    page = page[: page.index("</section>")]
    assert "1/3 passed" in page and '<pre class="hl">' in page and "<ins>" in page
    assert "stage check · exit 1 · wall 0.50 s" in page
    assert int(probe["page-width"]) <= WIDTH


def test_ten_models_keep_the_layout(
    shared_data: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from codereval.cli.app import main

    out = tmp_path_factory.mktemp("ten")
    report = out / "report.html"
    main(["report", *map(str, many_models(shared_data, out, count=10, tasks=8)),
          "--ci", "200", "-o", str(report)])
    dom, probe = _render(tmp_path, report)
    assert all(f"model-{i:02d}" in dom for i in range(1, 11))
    # 10 models x 3 values of k do not fit in 1,400 px: the tables scroll inside their boxes.
    assert int(probe["page-width"]) <= WIDTH
    assert all(300 < int(w) <= WIDTH for w in probe["plot-widths"].split(","))


def test_chromium_takes_a_screenshot(three_models: Path, tmp_path: Path) -> None:
    from matplotlib.image import imread

    shot = tmp_path / "report.png"
    _chromium(tmp_path, three_models.as_uri(), f"--screenshot={shot}")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = imread(shot)
    assert pixels.shape[1] == WIDTH
    colours = {tuple(p) for p in pixels[::7, ::7].reshape(-1, pixels.shape[2]).tolist()}
    assert len(colours) > 50, "a blank or nearly blank page"
