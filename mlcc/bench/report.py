"""What a run prints and writes: the summary table, the side-by-side comparison, bench.json, and
the optional latency plot."""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlcc.bench.cost import lines as cost_lines
from mlcc.bench.stats import LATENCY_KEYS
from mlcc.engine_contract.values import printable
from mlcc.userfiles import (
    FILE,
    FOLDER,
    UserFileError,
    check_writable_folder,
    ensure_folder,
    file_kind,
    read_json,
    shown_path,
    write_text,
)

_ROWS = (
    ("TTFT p50 (ms)", "ttft_ms", "p50"),
    ("TTFT p90 (ms)", "ttft_ms", "p90"),
    ("TTFT p99 (ms)", "ttft_ms", "p99"),
    ("ITL p50 (ms/token)", "itl_ms", "p50"),
    ("ITL p90 (ms/token)", "itl_ms", "p90"),
    ("ITL p99 (ms/token)", "itl_ms", "p99"),
    ("E2E p50 (ms)", "e2e_ms", "p50"),
    ("E2E p99 (ms)", "e2e_ms", "p99"),
    ("output tokens/s", "output_tokens_per_s", None),
    ("acceptance rate", "speculative", "acceptance_rate"),
    ("mean accepted tokens", "speculative", "mean_accepted_tokens"),
)
_SPEEDUP_ROWS = {
    "TTFT p50 (ms)": "ttft_p50",
    "ITL p50 (ms/token)": "itl_p50",
    "output tokens/s": "output_tokens_per_s",
}


class BaselineError(ValueError):
    pass


def figure(run: Mapping[str, Any], key: str, field: str | None) -> Any:
    value = run.get(key)
    if field is None:
        return value
    return value.get(field) if isinstance(value, Mapping) else None


def _cell(value: Any, field: str | None, unknown: bool = False) -> str:
    if value is None:
        return "unknown" if unknown else "-"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return printable(str(value))[:12]  # a baseline file may hold anything
    if isinstance(value, float) and not math.isfinite(value):
        return "-"
    if isinstance(value, int) and value.bit_length() > 40:
        return "(too large)"
    if field == "acceptance_rate":
        return f"{value:.1%}"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def _run_cell(run: Mapping[str, Any], key: str, field: str | None) -> str:
    unknown = run.get("unknown")
    marked = isinstance(unknown, Mapping) and key in unknown
    return _cell(figure(run, key, field), field, marked)


def summary_lines(run: Mapping[str, Any]) -> list[str]:
    head = (
        f"{printable(str(run['label']))}: {run['engine']} {printable(str(run['model']))} at "
        f"{printable(str(run['target']))}; {run['completed']}/{run['requests']} completed, "
        f"{run['failed']} failed, concurrency {run['concurrency']}"
    )
    lines = [head]
    if run.get("interrupted"):
        lines.append(f"  interrupted: {run['sent']} of {run['requests']} requests sent")
    lines += [f"  {name:<22} {_run_cell(run, k, f):>12}" for name, k, f in _ROWS]
    spec = run.get("speculative")
    if spec is None:
        lines.append("  speculative metrics: none exported by the server")
    else:
        lines.append(f"  speculative metrics from {spec['source']}")
    for key, reason in (run.get("unknown") or {}).items():
        lines.append(f"  {_UNKNOWN_NAMES.get(key, key)} unknown: {printable(str(reason))}")
    if run.get("usage_reported") is False:
        lines.append("  warning: no usage in the stream; tokens counted as chunks (too few)")
    return lines


_UNKNOWN_NAMES = {
    "output_tokens": "output tokens",
    "output_tokens_per_s": "output tokens/s",
    "itl_ms": "ITL",
    "speculative": "speculative figures",
}


def comparison_lines(run: Mapping[str, Any], baseline: Mapping[str, Any]) -> list[str]:
    speedup = run.get("speedup") or {}
    base, new = _short(baseline["label"]), _short(run["label"])
    header = f"  {'':<22} {base:>12} {new:>12} {'speedup':>8}"
    lines = [header]
    for name, key, field in _ROWS:
        ratio = speedup.get(_SPEEDUP_ROWS.get(name, ""))
        ratio_cell = f"{ratio:.2f}x" if isinstance(ratio, float) else ""
        lines.append(
            f"  {name:<22} {_run_cell(baseline, key, field):>12} "
            f"{_run_cell(run, key, field):>12} {ratio_cell:>8}"
        )
    return lines


def _short(label: Any) -> str:
    text = printable(str(label))
    return text if len(text) <= 12 else text[:11] + "~"


def load_baseline(path: Path) -> dict[str, Any]:
    """`--baseline`: a bench.json (or the folder holding one), read by mlcc.userfiles."""
    try:
        file = path / "bench.json" if file_kind(path, "--baseline") == FOLDER else path
        run = read_json(file, "--baseline")
    except UserFileError as error:
        raise BaselineError(str(error)) from None
    problem = _baseline_problem(run)
    if problem is not None:
        raise BaselineError(f"--baseline {shown_path(file)}: is not a bench.json ({problem})")
    return dict(run)


def _baseline_problem(run: Any) -> str | None:
    """Why `run` is not a bench.json whose figures the comparison can show, or None."""
    if not isinstance(run, dict):
        return "not a JSON object"
    missing = [k for k in (*LATENCY_KEYS, "output_tokens_per_s", "label") if k not in run]
    if missing:
        return f"missing {', '.join(missing)}"
    if not isinstance(run["label"], str):
        return "its label is not a string"
    for _, key, field in _ROWS:
        if field and run.get(key) is not None and not isinstance(run.get(key), Mapping):
            return f"{key} is not an object"
        value = figure(run, key, field)
        if value is not None and not _is_number(value):
            return f"{key}{'.' + field if field else ''} is not a number"
    return _per_request_problem(run.get("per_request"))


def _per_request_problem(rows: Any) -> str | None:
    """The per-request figures the plot reads: a list of objects with numbers (or null)."""
    if rows is None:
        return None
    if not isinstance(rows, list) or not all(isinstance(r, Mapping) for r in rows):
        return "per_request is not a list of objects"
    for row in rows:
        for key in ("ttft_ms", "itl_ms"):
            if row.get(key) is not None and not _is_number(row[key]):
                return f"per_request {key} is not a number"
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_out(out_dir: Path, plot: bool) -> None:
    """Before the run, so that its results are kept: `out_dir` is a folder mlcc can write in,
    and what it will write there (bench.json, latency.png) is a file or nothing yet."""
    check_writable_folder(out_dir, "--out")
    for name in ("bench.json", "latency.png") if plot else ("bench.json",):
        kind = file_kind(out_dir / name, "--out")
        if kind not in (None, FILE):
            raise UserFileError(
                f"--out {shown_path(out_dir / name)}: is {kind}, not a file; move it away or "
                "choose another --out"
            )


def write_json(out_dir: Path, run: Mapping[str, Any]) -> Path:
    """DIR/bench.json, through the one safe writer (UserFileError naming the path)."""
    ensure_folder(out_dir, "--out")
    path = out_dir / "bench.json"
    write_text(path, json.dumps(_finite(run), indent=2) + "\n", "--out")
    return path


def _finite(value: Any) -> Any:
    """JSON has no NaN or Infinity: a figure that is not finite is written as null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def plot_available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def write_plot(out_dir: Path, run: Mapping[str, Any], baseline: Mapping[str, Any] | None) -> Path:
    """ITL and TTFT as cumulative distributions, this run against the baseline."""
    # matplotlib is an optional extra without type stubs.
    importlib.import_module("matplotlib").use("Agg")
    plt: Any = importlib.import_module("matplotlib.pyplot")

    figure_, axes = plt.subplots(1, 2, figsize=(11, 4))
    for axis, key, title in zip(
        axes, ("itl_ms", "ttft_ms"), ("ITL (ms/token)", "TTFT (ms)"), strict=True
    ):
        if baseline is not None:
            _plot_cdf(axis, _samples(baseline, key), f"{baseline.get('label')} (baseline)")
        _plot_cdf(axis, _samples(run, key), str(run.get("label")))
        axis.set_title(title)
        axis.set_xlabel("ms")
        axis.set_ylabel("fraction of requests")
        axis.grid(alpha=0.3)
        axis.legend()
    cost = cost_lines(run.get("cost") if isinstance(run.get("cost"), Mapping) else None)
    if cost:  # $ per 1M output tokens and the saving (mlcc.bench.cost), over the two panels
        figure_.suptitle("\n".join(line.strip() for line in cost), fontsize=9)
    figure_.tight_layout()
    path = out_dir / "latency.png"
    figure_.savefig(path, dpi=120)
    plt.close(figure_)
    return path


def _samples(run: Mapping[str, Any], key: str) -> list[float]:
    return sorted(r[key] for r in run.get("per_request") or [] if r.get(key) is not None)


def _plot_cdf(axis: Any, values: list[float], label: str) -> None:
    if values:
        fractions = [i / len(values) for i in range(len(values) + 1)]
        axis.step([values[0], *values], fractions, where="post", label=label)
