"""What a sweep prints and writes: its table, bench.json (the sweep's form, docs/bench.md) and
the optional plot of speedup and acceptance against concurrency."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mlcc.bench.sweep import plot_candidate
from mlcc.bench.sweep.crossover import crossover
from mlcc.engine_contract.values import printable
from mlcc.userfiles import FILE, UserFileError, check_writable_folder, file_kind, shown_path

PLOT_NAME = "sweep.png"
_HEAD = (
    f"  {'conc':>5} {'req':>5} {'tok/s spec/twin':>17} {'per user':>13} "
    f"{'TTFT p50/p99 ms':>17} {'ITL p50/p99 ms':>15} {'twin ITL':>9} {'accept':>7} {'len':>5} "
    f"{'speedup [95%]':>20} {'$/1M spec/twin':>15}"
)


def document(
    settings: Mapping[str, Any],
    levels: list[dict[str, Any]],
    runs: list[dict[str, Any]],
    stopped: str | None,
    interrupted: bool,
) -> dict[str, Any]:
    """bench.json of a sweep (docs/bench.md, "Sweeping concurrency"): the settings, the finished
    levels, the crossover, the recommendation (set by the caller) and every run's summary."""
    return {
        "kind": "concurrency sweep",
        **settings,
        "finished_levels": len(levels),
        "interrupted": interrupted,
        "stopped": stopped,
        "levels": levels,
        "crossover": crossover(levels, settings["min_speedup"]),
        "recommendation": None,
        "runs": runs,
    }


def _number(value: Any, digits: int = 1) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-"
    return f"{value:.{digits}f}"


def _pair(a: Any, b: Any, digits: int = 1) -> str:
    return f"{_number(a, digits)}/{_number(b, digits)}"


def level_line(level: Mapping[str, Any]) -> str:
    own, twin = level["endpoint"], level["twin"]
    spec = own.get("speculative") or {}
    interval = level["speedup"]["output_tokens_per_s"]
    speedup = _number(interval.get("mean"), 2) + "x"
    if isinstance(interval.get("low"), float) and isinstance(interval.get("high"), float):
        speedup += f" [{interval['low']:.2f},{interval['high']:.2f}]"
    rate = spec.get("acceptance_rate")
    cost = level.get("cost") or {}
    return (
        f"  {level['concurrency']:>5} {level['requests_per_repeat']:>5} "
        f"{_pair(own['output_tokens_per_s'], twin['output_tokens_per_s']):>17} "
        f"{_pair(own['output_tokens_per_s_per_user'], twin['output_tokens_per_s_per_user']):>13} "
        f"{_pair(own['ttft_ms']['p50'], own['ttft_ms']['p99']):>17} "
        f"{_pair(own['itl_ms']['p50'], own['itl_ms']['p99'], 2):>15} "
        f"{_number(twin['itl_ms']['p50'], 2):>9} "
        f"{(f'{rate:.1%}' if isinstance(rate, float) else '-'):>7} "
        f"{_number(spec.get('mean_accepted_tokens'), 2):>5} {speedup:>20} "
        f"{_pair(cost.get('usd_per_million_output_tokens'), cost.get('twin_usd_per_million_output_tokens')).replace('-/-', '-'):>15}"  # noqa: E501
    )


def table_lines(sweep: Mapping[str, Any]) -> list[str]:
    lines = [
        f"sweep: {printable(str(sweep['engine']))} {printable(str(sweep['model']))}, "
        f"{printable(str(sweep['target']))} against its twin {printable(str(sweep['twin']))}; "
        f"{sweep['repeats']} repeats a level, {sweep['per_user']} requests a user "
        f"(at least {sweep['min_requests']})",
        _HEAD,
    ]
    lines += [level_line(level) for level in sweep["levels"]]
    lines.append(
        f"  crossover (speedup under {sweep['min_speedup']:g}x): "
        f"{printable(sweep['crossover']['text'])}"
    )
    price = sweep.get("price_source")
    if sweep["levels"] and not any(
        (lv.get("cost") or {}).get("usd_per_million_output_tokens") for lv in sweep["levels"]
    ):
        lines.append(f"  $ per 1M output tokens: unknown ({printable(str(price))})")
    return lines


def check_out(out_dir: Path, plot: bool) -> None:
    """As mlcc.bench.report.check_out, for the sweep's files."""
    check_writable_folder(out_dir, "--out")
    for name in ("bench.json", PLOT_NAME) if plot else ("bench.json",):
        kind = file_kind(out_dir / name, "--out")
        if kind not in (None, FILE):
            raise UserFileError(
                f"--out {shown_path(out_dir / name)}: is {kind}, not a file; move it away or "
                "choose another --out"
            )


def write_plot(out_dir: Path, sweep: Mapping[str, Any]) -> Path:
    """Speedup (with its 95 % interval, the threshold and the crossover range) and acceptance
    against concurrency, on a log axis; matplotlib as mlcc.bench.report uses it. With a
    candidate head, its series beside the current head's and the decision as the title
    (mlcc.bench.sweep.plot_candidate)."""
    plt: Any = importlib.import_module("matplotlib.pyplot")
    figure = draw(sweep)
    path = out_dir / PLOT_NAME
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def draw(sweep: Mapping[str, Any]) -> Any:
    """write_plot's matplotlib figure, not saved (the caller closes it)."""
    importlib.import_module("matplotlib").use("Agg")
    plt: Any = importlib.import_module("matplotlib.pyplot")
    levels: Sequence[Mapping[str, Any]] = sweep["levels"]
    xs = [lv["concurrency"] for lv in levels]
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    means, errors = plot_candidate.interval_bars(
        [lv["speedup"]["output_tokens_per_s"] for lv in levels]
    )
    left.errorbar(xs, means, yerr=errors, marker="o", capsize=3, label="speedup (95 % interval)")
    left.axhline(sweep["min_speedup"], color="grey", linestyle="--", label="threshold")
    cross = sweep["crossover"]
    if cross.get("above") and cross.get("at_most"):
        left.axvspan(
            cross["above"], cross["at_most"], color="orange", alpha=0.2, label="crossover range"
        )
    left.set_ylabel("output tokens/s, endpoint / twin")
    rates = [(lv["endpoint"].get("speculative") or {}).get("acceptance_rate") for lv in levels]
    lengths = [
        (lv["endpoint"].get("speculative") or {}).get("mean_accepted_tokens") for lv in levels
    ]
    right.plot(
        xs,
        [r if r is not None else float("nan") for r in rates],
        marker="o",
        label="acceptance rate",
    )
    twin_axis = right.twinx()
    twin_axis.plot(
        xs,
        [v if v is not None else float("nan") for v in lengths],
        marker="s",
        color="green",
        label="mean accepted length",
    )
    right.set_ylabel("acceptance rate")
    twin_axis.set_ylabel("tokens per verify step")
    if plot_candidate.drawn(sweep):
        plot_candidate.draw(figure, left, right, sweep)
    for axis, title in ((left, "speedup"), (right, "acceptance")):
        axis.set_xscale("log", base=2)
        axis.set_xlabel("concurrency")
        axis.set_title(title)
        axis.grid(alpha=0.3)
        axis.legend(loc="upper right", fontsize=8)
    figure.tight_layout()
    return figure
