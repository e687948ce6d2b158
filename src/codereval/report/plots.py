"""The report's figures, drawn with matplotlib and returned as inline SVG text.

Each function takes plain numbers (no I/O) and returns one ``<svg>`` element: no pyplot and no
global state (a ``Figure`` per plot, the Agg-free SVG backend), text kept as text so the report
stays searchable, and fixed ids so the same scores give the same file.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure

# One colour per model (matplotlib's tab10: ten distinct hues, then they repeat).
MODEL_COLOURS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)
# The verdict colours the HTML uses for its chips.
VERDICT_COLOURS = {
    "passed": "#2e9b52",
    "failed": "#d9534f",
    "runtime_error": "#e08a3c",
    "compile_error": "#9b59b6",
    "syntax_error": "#c39bd3",
    "timeout": "#555555",
    "memory_exceeded": "#8c8c8c",
    "no_code": "#bbbbbb",
    "infra_error": "#c9a400",
}
_STYLE: dict[Any, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "codereval",
    "font.size": 9,
    "font.family": "sans-serif",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "legend.frameon": False,
}


def model_colour(index: int) -> str:
    return MODEL_COLOURS[index % len(MODEL_COLOURS)]


def _svg(figure: Figure, *, label: str) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    text = text[text.index("<svg") :]  # drop the XML prolog and doctype: inlined in HTML
    return text.replace("<svg", f'<svg role="img" aria-label="{label}" class="plot"', 1)


@dataclass(frozen=True, kw_only=True)
class Bar:
    """One bar: a value in percent and its interval, when there is one."""

    value: float | None
    low: float | None = None
    high: float | None = None


def pass_at_k_by_group(
    *,
    models: Sequence[str],
    groups: Sequence[str],
    ks: Sequence[int],
    bars: Mapping[tuple[int, str, int], Bar],
) -> str:
    """Grouped bars: pass@k of each model in each group (all, levels, standalone or not), one
    panel per k, with the bootstrap interval as an error bar. ``bars`` is keyed by
    (model index, group, k)."""
    # Few bars per panel: the panels side by side; many: one above the other, full width.
    side_by_side = len(models) * len(groups) <= 40
    with rc_context(_STYLE):
        if side_by_side:
            figure = Figure(figsize=(4.2 * len(ks), 3.0), layout="constrained")
            axes = figure.subplots(1, len(ks), squeeze=False, sharey=True)[0, :]
        else:
            width = max(7.0, min(14.0, 1.0 + 0.16 * len(groups) * len(models)))
            figure = Figure(figsize=(width, 0.4 + 2.4 * len(ks)), layout="constrained")
            axes = figure.subplots(len(ks), 1, squeeze=False)[:, 0]
        slot = 0.84 / max(1, len(models))
        for axis, k in zip(axes, ks, strict=True):
            for index, model in enumerate(models):
                xs, heights, low_err, high_err = [], [], [], []
                for position, group in enumerate(groups):
                    bar = bars.get((index, group, k))
                    if bar is None or bar.value is None:
                        continue
                    xs.append(position - 0.42 + slot * (index + 0.5))
                    heights.append(bar.value)
                    low = bar.value if bar.low is None else bar.low
                    high = bar.value if bar.high is None else bar.high
                    low_err.append(max(0.0, bar.value - low))
                    high_err.append(max(0.0, high - bar.value))
                axis.bar(
                    xs,
                    heights,
                    width=slot * 0.92,
                    color=model_colour(index),
                    label=model,
                    yerr=[low_err, high_err],
                    error_kw={"elinewidth": 0.8, "capsize": 1.5, "ecolor": "#333333"},
                )
            axis.set_title(f"pass@{k} (%)", loc="left")
            axis.set_xticks(range(len(groups)), [g.replace("_", " ") for g in groups])
            axis.tick_params(axis="x", labelrotation=35, labelsize=8)
            for label in axis.get_xticklabels():
                label.set_horizontalalignment("right")
                label.set_rotation_mode("anchor")
            axis.set_ylim(0, 100)
            axis.grid(axis="y", color="#e5e8ee", linewidth=0.6)
            axis.set_axisbelow(True)
        if len(models) > 1:
            handles, labels = axes[0].get_legend_handles_labels()
            figure.legend(
                handles, labels, loc="outside upper center", ncols=min(len(models), 5), fontsize=8
            )
        return _svg(figure, label="pass@k by runnable level per model")


def verdict_mix(*, rows: Sequence[tuple[str, Mapping[str, int]]]) -> str:
    """100% stacked bars: the share of each verdict among the samples of each row (a model, or
    a model and a language)."""
    verdicts = [v for v in VERDICT_COLOURS if any(counts.get(v, 0) for _, counts in rows)]
    with rc_context(_STYLE):
        figure = Figure(figsize=(9.0, 0.9 + 0.32 * len(rows)), layout="constrained")
        axis: Axes = figure.subplots()
        labels = [label for label, _ in rows]
        lefts = [0.0] * len(rows)
        totals = [max(1, sum(counts.values())) for _, counts in rows]
        for verdict in verdicts:
            shares = [100.0 * counts.get(verdict, 0) / total
                      for (_, counts), total in zip(rows, totals, strict=True)]
            axis.barh(
                range(len(rows)),
                shares,
                left=lefts,
                color=VERDICT_COLOURS[verdict],
                label=verdict.replace("_", " "),
                height=0.7,
            )
            lefts = [left + share for left, share in zip(lefts, shares, strict=True)]
        axis.set_yticks(range(len(rows)), labels)
        axis.invert_yaxis()
        axis.set_xlim(0, 100)
        axis.set_xlabel("% of samples")
        figure.legend(loc="outside lower center", ncols=min(len(verdicts), 5), fontsize=8)
        return _svg(figure, label="verdict mix per model and language")


def solved_overlap(
    *, models: Sequence[str], solved: Sequence[frozenset[str]], tasks: int, top: int = 20
) -> str:
    """An UpSet view of which tasks each model solves (at least one passing sample): the size of
    each exact combination of models (bars, largest first, at most ``top``), which models make
    it (dots), and each model's number of solved tasks (left)."""
    universe = frozenset().union(*solved) if solved else frozenset()
    combos: dict[tuple[bool, ...], int] = {}
    for task_id in universe:
        key = tuple(task_id in s for s in solved)
        combos[key] = combos.get(key, 0) + 1
    ordered = sorted(combos.items(), key=lambda item: (-item[1], [not m for m in item[0]]))[:top]
    with rc_context(_STYLE):
        columns = max(1, len(ordered))
        figure = Figure(
            figsize=(max(6.0, 2.4 + 0.36 * columns), 1.9 + 0.28 * len(models)),
            layout="constrained",
        )
        grid = figure.add_gridspec(
            2, 2, width_ratios=(1.0, max(1.5, 0.3 * columns)),
            height_ratios=(2.0, max(0.5, 0.3 * len(models))),
        )
        bars_axis: Axes = figure.add_subplot(grid[0, 1])
        matrix: Axes = figure.add_subplot(grid[1, 1], sharex=bars_axis)
        sizes: Axes = figure.add_subplot(grid[1, 0], sharey=matrix)
        positions = range(len(ordered))
        counts = [count for _, count in ordered]
        bars_axis.bar(positions, counts, color="#3d4a5c", width=0.6)
        for x, count in zip(positions, counts, strict=True):
            bars_axis.annotate(str(count), (x, count), ha="center", va="bottom", fontsize=7)
        bars_axis.set_ylabel("tasks solved by\nexactly these")
        bars_axis.tick_params(axis="x", bottom=False, labelbottom=False)
        bars_axis.set_title(
            f"{len(universe)} of {tasks} tasks solved by some model, {tasks - len(universe)} by"
            " none", loc="left", fontweight="normal", fontsize=9,
        )
        for x, (members, _) in zip(positions, ordered, strict=True):
            ys = [y for y, member in enumerate(members) if member]
            matrix.scatter([x] * len(models), range(len(models)), s=28, color="#d9dde4")
            matrix.scatter([x] * len(ys), ys, s=28, color="#3d4a5c", zorder=3)
            if len(ys) > 1:
                matrix.plot([x, x], [min(ys), max(ys)], color="#3d4a5c", linewidth=1.5)
        matrix.set_yticks(range(len(models)), models)
        matrix.tick_params(axis="y", left=False, labelleft=False)
        matrix.tick_params(axis="x", bottom=False, labelbottom=False)
        matrix.set_ylim(len(models) - 0.5, -0.5)
        for spine in matrix.spines.values():
            spine.set_visible(False)
        totals = [len(s) for s in solved]
        sizes.barh(
            range(len(models)), totals, color=[model_colour(i) for i in range(len(models))],
            height=0.6,
        )
        sizes.invert_xaxis()
        sizes.yaxis.tick_right()
        sizes.set_yticks(range(len(models)), models)
        sizes.tick_params(axis="y", length=0, pad=6)
        sizes.set_xlabel("solved")
        sizes.spines["left"].set_visible(False)
        sizes.spines["right"].set_visible(False)
        return _svg(figure, label="solved-task overlap across models (UpSet)")


def paired_differences(*, rows: Sequence[tuple[str, float, float, float]]) -> str:
    """A forest plot of paired differences: one row per (comparison label, difference, low,
    high), in percentage points, with zero marked."""
    with rc_context(_STYLE):
        figure = Figure(figsize=(7.5, 0.8 + 0.3 * len(rows)), layout="constrained")
        axis: Axes = figure.subplots()
        for y, (_, difference, low, high) in enumerate(rows):
            colour = "#2e7d32" if low > 0 else "#c62828" if high < 0 else "#555555"
            axis.errorbar(
                [difference], [y], xerr=[[difference - low], [high - difference]], fmt="o",
                color=colour, capsize=3, markersize=4,
            )
        axis.axvline(0.0, color="#999999", linewidth=0.8, linestyle="--")
        axis.set_yticks(range(len(rows)), [label for label, *_ in rows])
        axis.invert_yaxis()
        axis.set_xlabel("difference in pass@k (percentage points, 95% paired bootstrap)")
        return _svg(figure, label="paired differences in pass@k")
