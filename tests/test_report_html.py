"""`codereval report` and `score --html`: one self-contained file with the summary tables, the
plots, the paired comparison and a page per task (the browser test renders it: see
test_report_browser.py)."""

from __future__ import annotations

import re
from pathlib import Path

from report_inputs import official_slice, run_with_references


def _slices(shared_data: Path, tmp_path: Path, tasks: int = 25) -> list[Path]:
    return [
        official_slice(shared_data, model, tmp_path, tasks=tasks)
        for model in ("ChatGPT", "CodeGen", "PanGu-Coder")
    ]


def _without_time(html: str) -> str:
    return re.sub(r"generated \d{4}-\d\d-\d\d \d\d:\d\d UTC", "generated (time)", html)


def test_report_is_one_self_contained_file(shared_data: Path, tmp_path: Path, run_cli) -> None:
    inputs = _slices(shared_data, tmp_path)
    out = tmp_path / "report.html"
    result = run_cli("report", *inputs, "--compat", "-o", out)
    assert result.exit_code == 0, result
    assert result.stdout.strip() == f"HTML report: {out}"
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!doctype html>") and html.rstrip().endswith("</html>")
    # Nothing fetched: no external script, style sheet, image or font.
    assert not re.search(r"<(script|link|img|iframe)\b[^>]*\b(src|href)=", html)
    assert not re.search(r"url\((?!#)|@import|src=\"http", html)  # url(#id): inside the SVG
    # The summary tables, each with a column block per model and 95% intervals.
    for section in ("overall and per runnable level", "standalone vs non-standalone",
                    "per language", "per project"):
        assert f'data-section="{section}"' in html
    assert html.count('<th class="model"') >= 3 * 4
    assert re.search(r"\d+\.\d\d<span class=\"ci\">\[\d+\.\d, \d+\.\d\]</span>", html)
    # Three plots and the paired comparison's (inline SVG from matplotlib).
    for figure in ("fig-pass-at-k", "fig-verdicts", "fig-overlap", "fig-paired"):
        assert f'<figure id="{figure}">' in html
    assert html.count("<svg ") == 4
    # The paired comparison of every two models.
    assert html.count("<td class=\"name\">ChatGPT − CodeGen</td>") == 1
    assert "CodeGen − PanGu-Coder" in html
    # A page per task, every sample listed with its highlighted code.
    assert html.count('<section class="task-page') == 25
    assert html.count('<details class="sample"') == 3 * 25 * 10
    assert '<span class="k">def</span>' in html


def test_score_html_writes_the_same_report(shared_data: Path, tmp_path: Path, run_cli) -> None:
    inputs = _slices(shared_data, tmp_path, tasks=8)[:2]
    by_report, by_score = tmp_path / "a.html", tmp_path / "b.html"
    assert run_cli("report", *inputs, "--k", "1,5", "-o", by_report).exit_code == 0
    result = run_cli("score", *inputs, "--k", "1,5", "--html", by_score)
    assert result.exit_code == 0, result
    # Without --ci the terminal shows no intervals, the report does (its 1000 resamples).
    assert "[" not in result.stdout.split("verdicts")[0].split("pass@5")[-1]
    assert _without_time(by_report.read_text()) == _without_time(by_score.read_text())


def test_a_task_page_shows_code_diff_verdict_stage_timings_and_output(
    tmp_path: Path, run_cli
) -> None:
    run = run_with_references(tmp_path)
    out = tmp_path / "report.html"
    assert run_cli("report", run, "--k", "1", "-o", out).exit_code == 0
    html = out.read_text(encoding="utf-8")
    page = html[html.index('<section class="task-page wrap" id="task-demo_slugify"'):]
    assert 'href="#task-demo_slugify"' in html  # the task index links to it
    assert "1/3 passed" in page
    assert page.count('<details class="sample"') == 3
    # The reference and the samples, highlighted; the wrong one diffed against the reference.
    assert page.count('<pre class="hl">') == 3  # reference, sample 0, sample 1 (2 repeats 1)
    assert "identical to the reference" in page
    assert '<ins>+    return &quot;_&quot;.join(text.split())\n</ins>' not in page  # escaped once
    assert "<ins>+    return \"_\".join(text.split())\n</ins>" in page
    assert "<del>-    return \"-\".join(text.lower().split())\n</del>" in page
    assert "same code as #1" in page
    # Verdict, stage, exit code, timings, isolation, detail and the stderr tail.
    assert 'class="v v-failed">failed' in page and 'class="v v-passed">passed' in page
    assert "stage check · exit 1 · wall 0.50 s · cpu 0.38 s · bwrap" in page
    assert "AssertionError: expected &#39;a-b&#39;, got &#39;A_B&#39;" in page
    assert "the test&#39;s assertion failed" in page
    assert '<span class="k">def</span> <span class="nf">slugify</span>' in page


def test_the_report_holds_ten_models(shared_data: Path, tmp_path: Path, run_cli) -> None:
    from report_inputs import many_models

    inputs = many_models(shared_data, tmp_path, count=10, tasks=6)
    out = tmp_path / "report.html"
    assert run_cli("report", *inputs, "--ci", "200", "-o", out).exit_code == 0
    html = out.read_text(encoding="utf-8")
    assert all(f"model-{i:02d}" in html for i in range(1, 11))
    # Every table sits in a box that scrolls sideways rather than widening the page.
    tables = html.count("<table class=\"summary") + html.count("<table class=\"paired")
    tables += html.count("<table class=\"verdicts") + html.count("<table class=\"task-index")
    assert html.count('<div class="scroll"><table') == tables
    assert html.count("<td class=\"name\">model-01 − ") == 9  # 45 pairs


def test_a_missing_input_is_one_line_and_writes_no_report(
    tmp_path: Path, run_cli  # type: ignore[no-untyped-def]
) -> None:
    out = tmp_path / "report.html"
    result = run_cli("report", tmp_path / "nothing.jsonl", "-o", out)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: not found:")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()
