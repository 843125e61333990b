"""The KEDA queue-depth queries the program writes, evaluated by a real Prometheus 2.42 over
fake engine pods that serve the engines' real metric names in the format each engine answers."""

from __future__ import annotations

import pytest
from fleet import NAMESPACE, Scraped

from mlcc.config.scaling.autoscaling import autoscaling_spec, parse_autoscaling
from mlcc.facts.exposition import PROMETHEUS_2_42_ACCEPT
from mlcc.serving.engines import Engine

AMP = "https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-0123456789abcdef"


def keda_query(endpoint: str, engine: Engine, version: str) -> str:
    settings, issues = parse_autoscaling(
        {"metric": "queueDepth", "prometheusServer": AMP, "targetValue": 2},
        "hp:endpoints[0].autoscaling",
        None,
    )
    assert issues == [] and settings is not None
    spec = autoscaling_spec(
        settings, endpoint_name=endpoint, namespace=NAMESPACE, engine=engine, version=version
    )
    trigger = spec["prometheusTrigger"]
    assert isinstance(trigger, dict)
    return str(trigger["query"])


@pytest.mark.parametrize(
    ("endpoint", "engine", "version", "expected"),
    [
        ("spec-v", Engine.VLLM, "0.34.0", 3.0 + 4.0),  # its two pods; not the twin's 100
        ("spec-v-baseline", Engine.VLLM, "0.34.0", 100.0),
        ("spec-s", Engine.SGLANG, "0.5.23", 5.0),  # scraped as OpenMetrics: sglang_num_queue_reqs
        ("spec-t", Engine.SGLANG, "0.5.17", 6.0),  # scraped as text: sglang:num_queue_reqs
        ("idle", Engine.SGLANG, "0.5.23", 0.0),  # no pods: `or vector(0)`
    ],
)
def test_the_keda_query_sums_the_scripted_queue_under_each_format(
    scraped: Scraped, endpoint: str, engine: Engine, version: str, expected: float
) -> None:
    assert scraped.prometheus.scalar(keda_query(endpoint, engine, version)) == expected


def test_prometheus_asks_for_openmetrics_and_sglang_answers_it(scraped: Scraped) -> None:
    by_endpoint = {pod.endpoint: pod for pod in scraped.pods}
    assert set(by_endpoint["spec-s"].fake.accepts) == {PROMETHEUS_2_42_ACCEPT}
    # The OpenMetrics spelling is what Prometheus stored for SGLang, the text one for vLLM.
    assert scraped.prometheus.scalar('sum(sglang_num_queue_reqs{pod=~"spec-s-.*"})') == 5.0
    assert scraped.prometheus.query('sglang:num_queue_reqs{pod=~"spec-s-.*"}') == []
    assert scraped.prometheus.scalar('sum(sglang:num_queue_reqs{pod=~"spec-t-.*"})') == 6.0


def test_the_old_colon_query_matched_nothing_under_openmetrics(scraped: Scraped) -> None:
    """Why the selectors match both spellings: the query the program wrote before."""
    old = f'sum(sglang:num_queue_reqs{{namespace="{NAMESPACE}",pod=~"spec-s-.*"}}) or vector(0)'
    assert scraped.prometheus.scalar(old) == 0.0
