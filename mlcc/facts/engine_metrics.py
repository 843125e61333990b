"""The Prometheus metrics each supported engine release defines, and PromQL selectors for them
that hold under every exposition format the engine serves. Pure; no I/O after the import.

The table is engine_metrics.json, generated from the releases' wheels by
scripts/engine_metrics.py (scripts/engine_release.py add ENGINE VERSION): each metric's name as
the engine's code writes it, its type and the source file (vLLM: vllm/v1/metrics/loggers.py,
vllm/v1/spec_decode/metrics.py, ...; SGLang: sglang/srt/observability/metrics_collector.py).
The program reads metric names from here only (mlcc bench, the KEDA queue-depth trigger,
mlcc verify's live figures, dashboards and alerts); `metric()` fails, at import of the caller's
table, for a name the release does not define. How the names change per format is in
mlcc/facts/exposition.py (docs/metrics-facts.md).

It lives in mlcc/facts/, not mlcc/engine_contract/: the contract package is copied into the
serve images byte for byte, and the images do not read metrics.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Final

from mlcc.facts.exposition import SAMPLE_SUFFIXES, SERVED_FORMATS, sample_name

_DOCUMENT: Final = json.loads(
    resources.files(__package__).joinpath("engine_metrics.json").read_text(encoding="utf-8")
)


class UnknownMetric(KeyError):
    """A name the engine release does not define (a bug in the caller's table)."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class EngineMetric:
    engine: str
    version: str
    name: str  # as the engine's code writes it; a counter without `_total`
    type: str  # counter, gauge, histogram or summary
    source: str  # the wheel file that defines it

    def samples(self, suffix: str | None = None) -> tuple[str, ...]:
        """The sample names of one series kind (the type's only one when None: `_total` for a
        counter, the bare name for a gauge) under each format the engine serves."""
        suffixes = SAMPLE_SUFFIXES[self.type]
        chosen = suffixes[0] if suffix is None else suffix
        if chosen not in suffixes:
            raise ValueError(f"a {self.type} has no {chosen!r} samples")
        names = (sample_name(self.name, chosen, f) for f in SERVED_FORMATS[self.engine])
        return tuple(dict.fromkeys(names))


def releases(engine: str) -> tuple[str, ...]:
    return tuple(_DOCUMENT["engines"].get(engine, {}))


def engine_metrics(engine: str, version: str) -> Mapping[str, EngineMetric]:
    """Every metric the release defines, by name."""
    table = _DOCUMENT["engines"].get(engine, {}).get(version)
    if table is None:
        raise UnknownMetric(f"no metric table for {engine} {version}")
    return {
        name: EngineMetric(engine, version, name, row["type"], row["source"])
        for name, row in table["metrics"].items()
    }


def metric(engine: str, version: str, name: str) -> EngineMetric:
    found = engine_metrics(engine, version).get(name)
    if found is None:
        raise UnknownMetric(f"{engine} {version} defines no metric {name}")
    return found


def name_matcher(samples: tuple[str, ...]) -> str:
    """`__name__=~"..."` for several spellings of one sample; metric names hold only
    `[a-zA-Z0-9_:]`, so the regex needs no escaping."""
    if len(samples) == 2 and samples[1] == samples[0].replace(":", "_"):
        return f'__name__=~"{samples[0].replace(":", "[:_]")}"'
    return f'__name__=~"{"|".join(samples)}"'


def selector(found: EngineMetric, matchers: str = "", suffix: str | None = None) -> str:
    """A PromQL instant-vector selector for the metric's samples under every format its engine
    serves: `vllm:num_requests_waiting{namespace="a"}` (vLLM answers text only), or
    `{__name__=~"sglang[:_]num_queue_reqs",namespace="a"}` (SGLang negotiates). `matchers` is
    the label-matcher list without braces, e.g. `namespace="a",pod=~"b-.*"`."""
    samples = found.samples(suffix)
    if len(samples) == 1:
        return f"{samples[0]}{{{matchers}}}" if matchers else samples[0]
    return "{" + ",".join(m for m in (name_matcher(samples), matchers) if m) + "}"
