"""The sweep's plot (`mlcc bench --concurrency ... --plot`, mlcc/bench/sweep/report.py and
plot_candidate.py) drawn from sweep documents built by the sweep's own figure functions and the
promotion rule (tests/bench/test_promotion.py's levels: a load model's throughput and
acceptance times a known noise): a candidate head adds its own series, judged levels and title;
without one the figure is what it always was."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from bench_load_engine import LoadModel
from test_promotion import CURRENT, levels

from mlcc.bench.promotion import Rule, decide
from mlcc.bench.sweep import plot_candidate, report
from mlcc.bench.sweep.crossover import crossover

BETTER = LoadModel(draft_s=0.002, accept_first=0.9)
WORSE = LoadModel(draft_s=0.002, accept_first=0.35)
CANDIDATE_RGBA = importlib.import_module("matplotlib.colors").to_rgba(plot_candidate.COLOUR)
MIN_SPEEDUP = 0.7  # the current head's crossover falls between 4 and 16


def sweep(candidate: LoadModel | None, served: Sequence[int] = (1, 4, 16)) -> dict[str, Any]:
    found = levels(candidate or CURRENT)
    document: dict[str, Any] = {"levels": found, "min_speedup": MIN_SPEEDUP}
    if candidate is None:
        for level in found:
            del level["candidate"]
    else:
        document["promotion"] = decide(found, served, Rule()).as_json()
    return document | {"crossover": crossover(found, MIN_SPEEDUP)}


@pytest.fixture
def draw() -> Iterator[Any]:
    plt: Any = importlib.import_module("matplotlib.pyplot")
    figures: list[Any] = []

    def drawn(document: dict[str, Any]) -> Any:
        figures.append(report.draw(document))
        return figures[-1]

    yield drawn
    for figure in figures:
        plt.close(figure)


def lines(axis: Any) -> list[tuple[Any, ...]]:
    """Every line of an axis: label, data, colour, marker, face colour (what the PNG shows)."""
    return [
        (line.get_label(), list(line.get_xdata()), [float(y) for y in line.get_ydata()],
         line.get_color(), line.get_marker(), line.get_markerfacecolor())
        for line in axis.get_lines()
    ]  # fmt: skip


def legend(axis: Any) -> list[str]:
    return [text.get_text() for text in axis.get_legend().get_texts()]


def current_only(figure: Any) -> list[Any]:
    """The figure's artists that are not the candidate's: lines, error bars, spans, titles."""
    found: list[Any] = []
    for axis in figure.axes:
        found.append(
            [row for row in lines(axis) if row[3] != plot_candidate.COLOUR]
            + [axis.get_title(), axis.get_ylabel(), len(axis.patches)]
            + [  # the error bars' segments
                [[list(point) for point in segment] for segment in bars.get_segments()]
                for bars in axis.collections
                if tuple(bars.get_color()[0]) != CANDIDATE_RGBA
            ]
        )
    return found


def test_without_a_candidate_the_figure_is_the_current_head_only(draw: Any) -> None:
    document = sweep(None)
    figure = draw(document)
    left, right, twin_axis = figure.axes
    assert figure.get_suptitle() == ""
    assert legend(left) == ["threshold", "crossover range", "speedup (95 % interval)"]
    assert legend(right) == ["acceptance rate"]
    assert len(left.containers) == 1 and len(left.patches) == 1  # one error bar, one span
    speedups = [lv["speedup"]["output_tokens_per_s"]["mean"] for lv in document["levels"]]
    rates = [lv["endpoint"]["speculative"]["acceptance_rate"] for lv in document["levels"]]
    assert lines(left)[0][2] == pytest.approx(speedups)  # the error bar's data line
    assert [row[0] for row in lines(right)] == ["acceptance rate"]
    assert lines(right)[0][2] == pytest.approx(rates)
    assert [row[0] for row in lines(twin_axis)] == ["mean accepted length"]
    assert not any(row[3] == plot_candidate.COLOUR for ax in figure.axes for row in lines(ax))


def test_a_candidate_adds_its_series_and_changes_nothing_else(draw: Any) -> None:
    document = sweep(BETTER)
    figure = draw(document)
    left, right, _ = figure.axes
    without = current_only(draw(sweep(None)))
    assert current_only(figure) == without
    assert len(without[0][-1]) == 3  # the current head's error bars, one a level
    assert legend(left) == [
        "threshold", "crossover range", "speedup (95 % interval)", plot_candidate.SPEEDUP_LABEL
    ]  # fmt: skip
    assert legend(right) == ["acceptance rate", plot_candidate.ACCEPTANCE_LABEL]
    (bars,) = [c for c in left.containers if c.get_label() == plot_candidate.SPEEDUP_LABEL]
    line = bars.lines[0]
    entries = [lv["candidate"] for lv in document["levels"]]
    assert list(line.get_xdata()) == [1, 4, 16]
    assert list(line.get_ydata()) == pytest.approx(
        [e["speedup"]["output_tokens_per_s"]["mean"] for e in entries]
    )
    assert [line.get_marker(), line.get_color()] == ["D", plot_candidate.COLOUR]
    assert line.get_markerfacecolor() == plot_candidate.COLOUR  # every level judged: filled
    lows = [e["speedup"]["output_tokens_per_s"]["low"] for e in entries]
    bottoms = [segment[0][1] for segment in bars.lines[2][0].get_segments()]
    assert bottoms == pytest.approx(lows)
    (acceptance,) = [r for r in lines(right) if r[0] == plot_candidate.ACCEPTANCE_LABEL]
    assert acceptance[2] == pytest.approx(
        [e["figures"]["speculative"]["acceptance_rate"] for e in entries]
    )
    assert acceptance[2][0] > lines(right)[0][2][0] + 0.2  # 0.9 x ... against 0.5 x ...
    assert figure.get_suptitle() == "candidate promoted (judged at 1,4,16)"


def test_the_judged_levels_are_filled_and_the_loss_is_the_title(draw: Any) -> None:
    figure = draw(sweep(WORSE, served=(1, 4)))
    left = figure.axes[0]
    (bars,) = [c for c in left.containers if c.get_label() == plot_candidate.SPEEDUP_LABEL]
    assert bars.lines[0].get_markerfacecolor() == "white"
    (judged,) = [r for r in lines(left) if r[0] == plot_candidate.JUDGED_LABEL]
    assert judged[1] == [1, 4] and judged[2] == pytest.approx(list(bars.lines[0].get_ydata())[:2])
    assert plot_candidate.JUDGED_LABEL in legend(left)
    assert figure.get_suptitle() == (
        "candidate not promoted: slower at 1,4; acceptance lost at 1,4 (judged at 1,4)"
    )


def test_the_title_names_each_loss_with_its_levels() -> None:
    heavy = LoadModel(draft_s=0.0, per_seq_s=0.002, accept_first=0.9)  # faster at 1 only
    found = levels(heavy)
    assert [v.speed for v in decide(found, (1, 4, 16), Rule()).levels] == [
        "faster", "slower", "slower"
    ]  # fmt: skip
    title = plot_candidate.decision_title(decide(found, (1, 4, 16), Rule()).as_json())
    assert title == "candidate not promoted: slower at 4,16 (judged at 1,4,16)"
    even = plot_candidate.decision_title(decide(levels(CURRENT), (1, 4), Rule()).as_json())
    assert even == "candidate not promoted: faster at no served level (judged at 1,4)"
    unknown = decide(levels(BETTER, noise=(1.0,)), (4,), Rule()).as_json()
    assert plot_candidate.decision_title(unknown) == (
        "candidate not promoted: speed unknown at 4; faster at no served level (judged at 4)"
    )
    assert plot_candidate.decision_title(decide(found, (), Rule()).as_json()) == (
        "candidate not promoted: no swept level is one the stack serves with speculation"
    )
    assert plot_candidate.decision_title(None) == (
        "candidate: no promotion decision (the sweep stopped before its end)"
    )


def test_a_stopped_sweep_draws_its_finished_candidate_levels(draw: Any) -> None:
    document = sweep(BETTER) | {"promotion": None}
    figure = draw(document)
    (bars,) = [
        c for c in figure.axes[0].containers if c.get_label() == plot_candidate.SPEEDUP_LABEL
    ]
    assert list(bars.lines[0].get_xdata()) == [1, 4, 16]
    assert figure.get_suptitle().startswith("candidate: no promotion decision")
