"""The engines' and kube-state-metrics' metric names the dashboard and the alerts read: ONE place.

The speculative names are `mlcc bench`'s (mlcc/bench/speculative.py) and the queue gauges the
KEDA trigger's (mlcc/config/scaling.py), so the three read the same series; the others are
taken here from each engine's own code at the supported releases (paths inside the wheels):

- vLLM 0.27.1 and 0.34.0, `vllm/v1/metrics/loggers.py` (labels `model_name`, `engine`):
  counter `vllm:generation_tokens` (exported with `_total`), histograms
  `vllm:time_to_first_token_seconds` and `vllm:inter_token_latency_seconds`;
  `vllm/v1/spec_decode/metrics.py`: the `vllm:spec_decode_*` counters. vLLM's `/metrics`
  always answers in the Prometheus text format, colons kept.
- SGLang 0.5.17 and 0.5.23, `sglang/srt/observability/metrics_collector.py`: counter
  `sglang:generation_tokens_total`, histograms `sglang:time_to_first_token_seconds` and
  `sglang:inter_token_latency_seconds`, gauges `sglang:num_queue_reqs`,
  `sglang:spec_accept_rate`, `sglang:spec_accept_length`. SGLang answers in the format the
  scraper asks for; under OpenMetrics prometheus_client writes `sglang_<name>`, so every SGLang
  selector matches both spellings (`sglang_selector`).
- kube-state-metrics, its `pod-metrics.md` documentation page (kubernetes/kube-state-metrics):
  `kube_pod_status_ready{namespace, pod, condition="true"|"false"|"unknown"}`, a gauge.
"""

from __future__ import annotations

from mlcc.bench import speculative as bench
from mlcc.config.scaling import QUEUE_DEPTH_METRICS
from mlcc.serving.engines import Engine

SGLANG_PREFIX = "sglang:"

# vLLM counters as Prometheus stores them (prometheus_client adds `_total` to a counter).
VLLM_DRAFTS = bench.VLLM_DRAFTS + "_total"
VLLM_DRAFT_TOKENS = bench.VLLM_DRAFT_TOKENS + "_total"
VLLM_ACCEPTED_TOKENS = bench.VLLM_ACCEPTED_TOKENS + "_total"
VLLM_ACCEPTED_PER_POSITION = bench.VLLM_ACCEPTED_PER_POSITION + "_total"
SGLANG_ACCEPT_RATE = bench.SGLANG_ACCEPT_RATE
SGLANG_ACCEPT_LENGTH = bench.SGLANG_ACCEPT_LENGTH

# Output tokens (a counter), per engine.
GENERATION_TOKENS = {
    Engine.VLLM: "vllm:generation_tokens_total",
    Engine.SGLANG: bench.SGLANG_GENERATION_TOKENS,
}
# Histograms in seconds; PromQL reads their `_bucket` series.
TIME_TO_FIRST_TOKEN = {
    Engine.VLLM: "vllm:time_to_first_token_seconds",
    Engine.SGLANG: "sglang:time_to_first_token_seconds",
}
INTER_TOKEN_LATENCY = {
    Engine.VLLM: "vllm:inter_token_latency_seconds",
    Engine.SGLANG: "sglang:inter_token_latency_seconds",
}
QUEUE_DEPTH = dict(QUEUE_DEPTH_METRICS)
POD_READY = "kube_pod_status_ready"


def selector(name: str, matchers: str) -> str:
    """A series selector for `name` with `matchers` (`a="b",c=~"d"`), under every exposition
    format the engine serves: SGLang's names match with `:` or `_` after `sglang`."""
    if name.startswith(SGLANG_PREFIX):
        return sglang_selector(name, matchers)
    return f"{name}{{{matchers}}}" if matchers else name


def sglang_selector(name: str, matchers: str) -> str:
    rest = name.removeprefix(SGLANG_PREFIX)
    by_name = f'__name__=~"sglang[:_]{rest}"'
    return "{" + ",".join(part for part in (by_name, matchers) if part) + "}"
