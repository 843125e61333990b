"""The Prometheus text exposition format (version 0.0.4, and OpenMetrics samples), parsed with
the standard library, and counter differences between two scrapes."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

Labels = tuple[tuple[str, str], ...]
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n"}
_SUFFIXES_NOT_COUNTED = ("_created",)
SCRAPE_LABEL = "__scrape"


class ExpositionError(ValueError):
    """The text is not in the Prometheus exposition format."""


class CounterProblem(ValueError):
    """A counter's two readings cannot give the run's growth: a value that is not a finite
    count (`+Inf`, `NaN`, negative), or one that went down or vanished (an engine restart,
    which loses what the old process counted during the run)."""


@dataclass(frozen=True)
class Sample:
    name: str
    labels: Labels
    value: float


def parse_exposition(text: str) -> list[Sample]:
    samples = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            samples.append(_parse_sample(line))
        except (ValueError, IndexError):
            problem = f"line {number} is not a Prometheus sample: {line[:80]}"
            raise ExpositionError(problem) from None
    return samples


def _parse_sample(line: str) -> Sample:
    brace, space = line.find("{"), line.find(" ")
    labels: Labels = ()
    if brace != -1 and (space == -1 or brace < space):
        name = line[:brace]
        labels, end = _parse_labels(line, brace + 1)
        rest = line[end:]
    elif space != -1:
        name, rest = line[:space], line[space:]
    else:
        raise ValueError("no value")
    if not name:
        raise ValueError("no metric name")
    return Sample(name, labels, _parse_value(rest.split()[0]))  # a timestamp may follow


def _parse_labels(line: str, start: int) -> tuple[Labels, int]:
    labels: list[tuple[str, str]] = []
    position = start
    while True:
        while line[position] in " ,":
            position += 1
        if line[position] == "}":
            return tuple(sorted(labels)), position + 1
        equals = line.index("=", position)
        key = line[position:equals].strip()
        if line[equals + 1] != '"':
            raise ValueError("label value must be quoted")
        value, position = _parse_quoted(line, equals + 2)
        labels.append((key, value))


def _parse_quoted(line: str, start: int) -> tuple[str, int]:
    chars: list[str] = []
    position = start
    while line[position] != '"':
        if line[position] == "\\":
            position += 1
            chars.append(_ESCAPES.get(line[position], "\\" + line[position]))
        else:
            chars.append(line[position])
        position += 1
    return "".join(chars), position + 1


def _parse_value(text: str) -> float:
    return float(text)  # accepts +Inf, -Inf and NaN as the format spells them


def series(samples: Iterable[Sample], name: str) -> dict[Labels, float]:
    """The series of one metric by label set. Counters are matched with or without the `_total`
    suffix that prometheus_client appends; the `_total` form wins when both are present."""
    found = list(samples)
    for candidate in (name + "_total", name):
        if candidate.endswith(_SUFFIXES_NOT_COUNTED):
            continue
        matched = {s.labels: s.value for s in found if s.name == candidate}
        if matched:
            return matched
    return {}


def counter_delta(before: Sequence[Sample], after: Sequence[Sample], name: str) -> float | None:
    """How much a counter grew between two scrapes, summed over all its label sets (engine
    processes, data-parallel ranks, scraped URLs); a series new after the run grew from 0.
    None when the counter exists in neither scrape; CounterProblem when the readings cannot
    give the growth."""
    return sum(_growth(before, after, name).values()) if _exported(before, after, name) else None


def counter_delta_by_label(
    before: Sequence[Sample], after: Sequence[Sample], name: str, label: str
) -> dict[str, float]:
    """A counter's growth summed per value of one label (e.g. vLLM's draft `position`)."""
    grown: dict[str, float] = {}
    for labels, value in _growth(before, after, name).items():
        key = dict(labels).get(label)
        if key is not None:
            grown[key] = grown.get(key, 0.0) + value
    return grown


def _exported(before: Sequence[Sample], after: Sequence[Sample], name: str) -> bool:
    return bool(series(after, name) or series(before, name))


def _growth(before: Sequence[Sample], after: Sequence[Sample], name: str) -> dict[Labels, float]:
    earlier, later = series(before, name), series(after, name)
    if vanished := sorted(earlier.keys() - later.keys()):
        raise CounterProblem(f"{_series_name(name, vanished[0])} vanished between the scrapes")
    grown = {}
    for labels, value in later.items():
        old = earlier.get(labels, 0.0)
        for reading in (old, value):
            if not (math.isfinite(reading) and reading >= 0):
                raise CounterProblem(f"{_series_name(name, labels)} read {reading:g}")
        if value < old:
            raise CounterProblem(
                f"{_series_name(name, labels)} went down from {old:g} to {value:g} between "
                "the scrapes (the engine restarted during the run?)"
            )
        grown[labels] = value - old
    return grown


def _series_name(name: str, labels: Labels) -> str:
    """`name{a="1"}` with every label value quoted and escaped, as a one-line message needs."""
    shown = [f"{json.dumps(k)[1:-1]}={json.dumps(v)}" for k, v in labels if k != SCRAPE_LABEL]
    where = dict(labels).get(SCRAPE_LABEL)
    return name + (f"{{{','.join(shown)}}}" if shown else "") + (f" at {where}" if where else "")


def gauge_values(samples: Sequence[Sample], name: str) -> list[float]:
    return [s.value for s in samples if s.name == name]


def tag_source(samples: Iterable[Sample], source: str) -> list[Sample]:
    """Samples from several scraped URLs, kept apart by a label so that their sums add up."""
    return [Sample(s.name, (*s.labels, (SCRAPE_LABEL, source)), s.value) for s in samples]


def merge(scrapes: Mapping[str, Sequence[Sample]]) -> list[Sample]:
    return [sample for url, samples in scrapes.items() for sample in tag_source(samples, url)]
