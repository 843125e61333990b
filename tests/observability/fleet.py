"""One real Prometheus per test module, scraping a scripted fleet of fake engine pods.

The fleet (namespace `team`), each pod a fake /metrics with the release's real metric names:
- `spec-v` (vLLM 0.34.0, text only, as vLLM answers): two pods, queue 3 and 4, speculative
  counters; its twin `spec-v-baseline`, speculation off, queue 100 (never counted for spec-v);
- `spec-s` (SGLang 0.5.23, negotiating: Prometheus 2.42 gets OpenMetrics, `sglang_*` names);
- `spec-t` (SGLang 0.5.17 answering text, as it does to a scraper that asks for text);
- `spec-r` (as one `spec-v` pod, but its counters restart from 0 six seconds in).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from metrics_fake import MetricsFake, series_of
from prometheus_harness import RunningPrometheus, Target, start_prometheus

from mlcc.config import stack as stack_config
from mlcc.config.endpoints import EndpointConfig
from mlcc.facts.engine_metrics import engine_metrics
from mlcc.serving.engines import Engine

NAMESPACE = "team"
WINDOW = "1m"


@dataclass(frozen=True)
class Pod:
    endpoint: str
    name: str
    fake: MetricsFake


def _vllm(queue: float, speculative: bool) -> MetricsFake:
    metrics = engine_metrics("vllm", "0.34.0")
    rates = {"vllm:generation_tokens": 120.0, "vllm:request_success": 2.0}
    if speculative:  # 10 draft steps/s of 3 tokens, 18 accepted: 60%, mean length 2.8
        rates |= {
            "vllm:spec_decode_num_drafts": 10.0,
            "vllm:spec_decode_num_draft_tokens": 30.0,
            "vllm:spec_decode_num_accepted_tokens": 18.0,
        }
    values = {"vllm:num_requests_waiting": queue, "vllm:num_requests_running": 2.0}
    return MetricsFake(series_of(metrics, (("engine", "0"),), values, rates), negotiate=False)


def _sglang(version: str, queue: float, negotiate: bool) -> MetricsFake:
    # 20 verify steps/s, 2 requests/s, 90 tokens/s: accepted 90 - 2 - 20 = 68 a second, mean
    # accepted length (90 - 2) / 20 = 4.4; 4 draft tokens a step (spec_num_draft_tokens 5 - 1):
    # acceptance 68 / 80 = 85%.
    metrics = engine_metrics("sglang", version)
    rates = {
        "sglang:spec_verify_calls": 20.0,
        "sglang:generation_tokens": 90.0,
        "sglang:num_requests": 2.0,
    }
    values = {
        "sglang:num_queue_reqs": queue,
        "sglang:spec_num_draft_tokens": 5.0,
        "sglang:spec_accept_rate": 0.85,
        "sglang:spec_accept_length": 4.4,
    }
    labels = (("model_name", "m"), ("tp_rank", "0"))
    return MetricsFake(series_of(metrics, labels, values, rates), negotiate=negotiate)


def fleet() -> list[Pod]:
    return [
        Pod("spec-v", "spec-v-5d8c7b9f4-x2k7q", _vllm(3.0, speculative=True)),
        Pod("spec-v", "spec-v-5d8c7b9f4-bq9zt", _vllm(4.0, speculative=True)),
        Pod("spec-v-baseline", "spec-v-baseline-6f9d4c8b7-k2x9m", _vllm(100.0, False)),
        Pod("spec-s", "spec-s-7c9d5b8f6-m4n2p", _sglang("0.5.23", 5.0, negotiate=True)),
        Pod("spec-t", "spec-t-8b6c9d5f7-p7q2r", _sglang("0.5.17", 6.0, negotiate=False)),
        Pod("spec-r", "spec-r-9c7d6b5f8-r2t4v", _restarted(_vllm(1.0, speculative=True))),
    ]


def _restarted(fake: MetricsFake) -> MetricsFake:
    """An engine that restarts 6 s in: its counters start again from 0."""
    fake.reset_at = 6.0
    return fake


@dataclass(frozen=True)
class Scraped:
    prometheus: RunningPrometheus
    pods: list[Pod]


@pytest.fixture(scope="module")
def scraped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scraped]:
    pods = [Pod(p.endpoint, p.name, p.fake.start()) for p in fleet()]
    folder: Path = tmp_path_factory.mktemp("prometheus")
    targets = [Target(p.name, p.fake.port, {"namespace": NAMESPACE, "pod": p.name}) for p in pods]
    prometheus = start_prometheus(targets, folder)
    try:
        prometheus.wait_for_samples([t.job for t in targets], count=20)
        yield Scraped(prometheus, pods)
    finally:
        prometheus.stop()
        for pod in pods:
            pod.fake.stop()


def endpoint(name: str, engine: str, speculative: bool) -> EndpointConfig:
    """An endpoint of a parsed stack, renamed to one of the fleet's."""
    values = {
        "hp:engine": engine,
        "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
        "hp:image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/serve:1",
        "hp:namespace": NAMESPACE,
        "aws:region": "us-east-1",
        "aws-native:region": "us-east-1",
    }
    if speculative:
        values |= {"hp:speculativeAlgorithm": "ngram", "hp:speculativeNumTokens": "3"}
    parsed = stack_config.parse(values, stack="dev").config
    assert parsed.primary.engine is Engine(engine)
    return replace(parsed.primary, name=name)
