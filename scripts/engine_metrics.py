#!/usr/bin/env python3
"""Regenerate one engine release's metric table in mlcc/facts/engine_metrics.json.

    python3 scripts/engine_release.py add vllm 0.34.0        # downloads the wheel, runs this
    python3 scripts/engine_metrics.py /tmp/wheels/vllm-0.34.0-*.whl [more wheels ...]

Each wheel adds (or replaces) the entry of its engine and version; the other releases stay.
Reads the wheel's sources with `ast` (nothing is imported from the engine): every call that
builds a prometheus_client metric, `Gauge(...)`, `Counter(...)`, `Histogram(...)`, `Summary(...)`
and the classes' aliases (`self._gauge_cls(...)`, `self._counter_cls(...)`,
`self._histogram_cls(...)` in vllm/v1/metrics/loggers.py and vllm/v1/spec_decode/metrics.py),
whose `name` is a string with the engine's prefix (`vllm:`, `sglang:`). Where the name is a loop
variable (vLLM's `SpecDecodingProm` builds its counters from `(name, documentation)` pairs), the
pairs of the enclosing function give the names. Scanned: vLLM's `vllm/` (the API server's
/metrics serves its one registry, vllm/v1/metrics/prometheus.py), SGLang's `sglang/srt/` (the
language-model server; `sglang/multimodal_gen/` is another server).

Each metric is recorded with its type and the file that defines it. A name prometheus_client
gives a `_total` suffix (a counter) is recorded as the engine wrote it, without the suffix.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import zipfile
from pathlib import Path

from engine_flags import read_document as read_json_document
from engine_flags import rendered as rendered
from engine_flags import version_key
from engine_flags import without as without

METRICS_JSON = Path(__file__).resolve().parents[1] / "mlcc" / "facts" / "engine_metrics.json"
GENERATOR = "scripts/engine_metrics.py"
ABOUT = (
    "Do not edit: generated from the engines' wheels (scripts/engine_release.py add ENGINE "
    "VERSION). Per engine and release: each Prometheus metric the engine defines in its own "
    "code (prometheus_client Gauge, Counter, Histogram, Summary), its type and its source file. "
    "Counter names without the `_total` that prometheus_client appends."
)
ENGINES = ("vllm", "sglang")
SCANNED = {"vllm": "vllm/", "sglang": "sglang/srt/"}
PREFIXES = {"vllm": "vllm:", "sglang": "sglang:"}
KINDS = {
    "gauge": "gauge",
    "counter": "counter",
    "histogram": "histogram",
    "summary": "summary",
}

Metric = dict[str, str]  # {"type": ..., "source": ...}


def wheel_release(wheel: Path) -> tuple[str, str]:
    match = re.match(r"([^-]+)-([^-]+)-", wheel.name)
    if match is None or match.group(1) not in ENGINES:
        raise SystemExit(f"engine_metrics: {wheel.name} is not a vllm or sglang wheel")
    return match.group(1), match.group(2)


def kind_of(call: ast.Call) -> str | None:
    """The metric type a call builds, from the callee's last name (`Gauge`, `_gauge_cls`)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    lowered = name.lower().strip("_").removesuffix("_cls")
    return KINDS.get(lowered)


def name_argument(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "name":
            return keyword.value
    return call.args[0] if call.args else None


def pair_names(scope: ast.AST, prefix: str) -> list[str]:
    """The first strings of the `(name, documentation)` tuples in a function."""
    names = []
    for node in ast.walk(scope):
        if isinstance(node, ast.Tuple) and node.elts:
            first = node.elts[0]
            if isinstance(first, ast.Constant) and str(first.value).startswith(prefix):
                names.append(str(first.value))
    return names


def metrics_in(tree: ast.Module, prefix: str) -> dict[str, str]:
    """name -> type for every metric the module builds."""
    found: dict[str, str] = {}
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    for scope in [tree, *functions]:
        for node in ast.walk(scope):
            if not isinstance(node, ast.Call) or (kind := kind_of(node)) is None:
                continue
            argument = name_argument(node)
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                names = [argument.value] if argument.value.startswith(prefix) else []
            elif isinstance(argument, ast.Name) and scope is not tree:
                names = pair_names(scope, prefix)
            else:
                names = []
            for name in names:
                if kind == "counter":
                    name = name.removesuffix("_total")
                found.setdefault(name, kind)
    return found


def release_table(wheel: Path) -> dict[str, object]:
    engine, version = wheel_release(wheel)
    metrics: dict[str, Metric] = {}
    with zipfile.ZipFile(wheel) as archive:
        for member in sorted(archive.namelist()):
            if not (member.startswith(SCANNED[engine]) and member.endswith(".py")):
                continue
            try:
                tree = ast.parse(archive.read(member).decode())
            except (SyntaxError, UnicodeDecodeError):
                continue
            for name, kind in metrics_in(tree, PREFIXES[engine]).items():
                metrics.setdefault(name, {"type": kind, "source": member})
    if not metrics:
        raise SystemExit(f"engine_metrics: no {PREFIXES[engine]} metric found in {wheel.name}")
    return {
        "version": version,
        "scanned": SCANNED[engine],
        "metrics": dict(sorted(metrics.items())),
    }


def merged(existing: dict[str, object] | None, wheels: list[Path]) -> dict[str, object]:
    """The document with each wheel's release added or replaced, releases in version order."""
    old = existing.get("engines") if isinstance(existing, dict) else None
    engines: dict[str, dict[str, object]] = {engine: {} for engine in ENGINES}
    for engine in ENGINES:
        releases = old.get(engine) if isinstance(old, dict) else None
        engines[engine].update(releases if isinstance(releases, dict) else {})
    for wheel in wheels:
        engine, version = wheel_release(wheel)
        engines[engine][version] = release_table(wheel)
    ordered = {
        engine: {v: releases[v] for v in sorted(releases, key=version_key)}
        for engine, releases in engines.items()
    }
    return {"generated_by": GENERATOR, "about": ABOUT, "engines": ordered}


def read_document(path: Path = METRICS_JSON) -> dict[str, object] | None:
    return read_json_document(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheels", nargs="+", type=Path)
    args = parser.parse_args()
    document = merged(read_document(), args.wheels)
    METRICS_JSON.write_text(rendered(document))
    print(f"engine_metrics: wrote {METRICS_JSON.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
