"""The generated dashboard (mlcc/observability/dashboard.py), checked with Grafana's own model."""

from __future__ import annotations

import json
from typing import Any

from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import Dashboard, RowPanel
from obs_stacks import NAMESPACE, stack

from mlcc.observability.dashboard import dashboard, dashboard_json, expressions

SPECULATIVE = ("spec_decode", "spec_accept")


def rows(document: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Row title -> the panels after it."""
    found: dict[str, list[dict[str, Any]]] = {}
    current: list[dict[str, Any]] = []
    for panel in document["panels"]:
        if panel["type"] == "row":
            current = found.setdefault(panel["title"], [])
        else:
            current.append(panel)
    return found


def test_grafanas_model_reads_back_every_field_it_wrote() -> None:
    document = dashboard(stack())
    model = Dashboard.from_json(document)
    again = json.loads(json.dumps(model, cls=JSONEncoder, sort_keys=True))
    assert again == document
    assert isinstance(model.panels[0], RowPanel)
    assert document["templating"]["list"][0]["type"] == "datasource"


def test_one_row_per_endpoint_with_its_twin() -> None:
    titles = list(rows(dashboard(stack())))
    assert titles == [
        "llama and its baseline llama-baseline (vllm)",
        "qwen and its baseline qwen-baseline (sglang)",
        "plain (speculation off) (vllm)",
    ]


def test_speculative_panels_only_for_the_endpoint_that_speculates() -> None:
    by_row = rows(dashboard(stack()))
    llama, qwen, plain = by_row.values()
    assert [p["title"] for p in llama][:3] == [
        "Acceptance rate",
        "Mean accepted length (tokens per step)",
        "Acceptance per draft position",
    ]
    # SGLang exports no per-position series: no panel claims one.
    assert "Acceptance per draft position" not in [p["title"] for p in qwen]
    for row in (llama, qwen):
        for panel in row:
            for target in panel["targets"]:
                if any(word in target["expr"] for word in SPECULATIVE):
                    assert "-baseline" not in target["expr"], "a twin's speculative series"
    plain_exprs = [t["expr"] for p in plain for t in p["targets"]]
    assert not any(word in e for e in plain_exprs for word in SPECULATIVE)


def test_the_twin_shares_throughput_latency_queue_and_pods() -> None:
    llama = rows(dashboard(stack()))["llama and its baseline llama-baseline (vllm)"]
    throughput = next(p for p in llama if p["title"] == "Output tokens/s")
    assert [t["legendFormat"] for t in throughput["targets"]] == ["llama", "llama-baseline"]
    ttft = next(p for p in llama if p["title"] == "Time to first token")
    assert len(ttft["targets"]) == 6
    assert "histogram_quantile(0.99" in ttft["targets"][2]["expr"]


def test_sglang_queries_hold_under_both_exposition_formats() -> None:
    qwen = rows(dashboard(stack()))["qwen and its baseline qwen-baseline (sglang)"]
    exprs = [t["expr"] for p in qwen for t in p["targets"] if "kube_pod" not in t["expr"]]
    assert exprs
    assert all('__name__=~"sglang[:_]' in e and "sglang:" not in e for e in exprs)
    assert all(f'namespace="{NAMESPACE}"' in e for e in exprs)


def test_the_same_stack_gives_the_same_bytes() -> None:
    assert dashboard_json(stack()) == dashboard_json(stack())
    assert len(expressions(dashboard(stack()))) == len(set(expressions(dashboard(stack()))))
