"""mlcc/facts/exposition.py and engine_metrics.json: every value has a sourced row in
docs/metrics-facts.md, the names the program queries are the releases' own, and the selector
helper writes what each engine's formats need."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mlcc.config.scaling.autoscaling import QUEUE_DEPTH_METRICS
from mlcc.engine_contract import SUPPORTED_VERSIONS
from mlcc.facts import exposition
from mlcc.facts.engine_metrics import (
    UnknownMetric,
    engine_metrics,
    metric,
    name_matcher,
    releases,
    selector,
)
from mlcc.serving.engines import Engine

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "metrics-facts.md"
COLUMNS = ("Fact", "Value", "Source", "What the program does with it")


def rows() -> list[dict[str, str]]:
    lines = PAGE.read_text().splitlines()
    start = lines.index("| " + " | ".join(COLUMNS) + " |") + 2
    found = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        assert len(cells) == len(COLUMNS), line
        found.append(dict(zip(COLUMNS, cells, strict=True)))
    return found


def test_every_fact_row_has_a_source() -> None:
    for row in rows():
        assert row["Source"], row["Fact"]


def test_every_value_of_the_module_is_on_the_page() -> None:
    quoted = {m for row in rows() for m in re.findall(r"`([^`]*)`", " ".join(row.values()))}
    values = [
        *exposition.FORMATS,
        *exposition.CONTENT_TYPES.values(),
        exposition.PROMETHEUS_2_42_ACCEPT,
        *(s for suffixes in exposition.SAMPLE_SUFFIXES.values() for s in suffixes if s),
    ]
    assert [v for v in values if v not in quoted] == []


def test_the_table_covers_every_supported_release() -> None:
    for engine, versions in SUPPORTED_VERSIONS.items():
        assert releases(engine) == tuple(versions)


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_every_release_defines_the_names_the_program_queries(engine: str) -> None:
    queried = {
        "vllm": ["vllm:spec_decode_num_drafts", "vllm:spec_decode_num_draft_tokens"],
        "sglang": ["sglang:spec_verify_calls", "sglang:num_requests"],
    }[engine] + [QUEUE_DEPTH_METRICS[Engine(engine)], f"{engine}:generation_tokens"]
    for version in releases(engine):
        table = engine_metrics(engine, version)
        for name in queried:
            assert name in table, (engine, version, name)
        assert table[QUEUE_DEPTH_METRICS[Engine(engine)]].type == "gauge"


def test_an_unknown_name_is_refused() -> None:
    with pytest.raises(UnknownMetric, match=r"vllm 0\.34\.0 defines no metric vllm:nothing"):
        metric("vllm", "0.34.0", "vllm:nothing")


def test_selectors_name_every_spelling_the_engine_serves() -> None:
    waiting = metric("vllm", "0.34.0", "vllm:num_requests_waiting")
    assert selector(waiting, 'namespace="a"') == 'vllm:num_requests_waiting{namespace="a"}'
    drafts = metric("vllm", "0.27.1", "vllm:spec_decode_num_drafts")
    assert selector(drafts) == "vllm:spec_decode_num_drafts_total"
    queue = metric("sglang", "0.5.17", "sglang:num_queue_reqs")
    assert queue.samples() == ("sglang:num_queue_reqs", "sglang_num_queue_reqs")
    assert selector(queue, 'pod=~"p-.*"') == '{__name__=~"sglang[:_]num_queue_reqs",pod=~"p-.*"}'
    ttft = metric("sglang", "0.5.23", "sglang:time_to_first_token_seconds")
    assert selector(ttft, suffix="_bucket") == (
        '{__name__=~"sglang[:_]time_to_first_token_seconds_bucket"}'
    )
    with pytest.raises(ValueError, match="a histogram has no '_total' samples"):
        ttft.samples("_total")
    assert name_matcher(("a:b", "c")) == '__name__=~"a:b|c"'
