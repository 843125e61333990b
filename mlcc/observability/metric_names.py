"""The engines' and kube-state-metrics' metric names the dashboard and the alerts read: ONE place.

Every engine name is looked up in the engine metric contract (mlcc/facts/engine_metrics.json,
generated from each supported release's wheel by scripts/engine_metrics.py; the defining file of
each is recorded there and in docs/metrics-facts.md), and every supported release must define it,
so a release that renames one fails at import, not in a silent panel. The speculative names are
`mlcc bench`'s (mlcc/bench/speculative.py) and the queue gauges the KEDA trigger's
(mlcc/config/scaling/autoscaling.py), so the three read the same series. Selectors come from
the contract's `selector`, which matches every spelling the engine's exposition formats give a
sample (SGLang negotiates, and under OpenMetrics prometheus_client writes `sglang_<name>`; vLLM
answers text and keeps its colons).

kube-state-metrics, its `pod-metrics.md` documentation page (kubernetes/kube-state-metrics):
`kube_pod_status_ready{namespace, pod, condition="true"|"false"|"unknown"}`, a gauge.
"""

from __future__ import annotations

from mlcc.bench import speculative as bench
from mlcc.config.scaling.autoscaling import QUEUE_DEPTH_METRICS
from mlcc.facts import engine_metrics as contract
from mlcc.facts.engine_metrics import EngineMetric
from mlcc.serving.engines import Engine


def _defined(engine: Engine, name: str) -> EngineMetric:
    """The metric as every supported release of the engine defines it (one type in all)."""
    found = [contract.metric(engine.value, v, name) for v in contract.releases(engine.value)]
    if len({m.type for m in found}) != 1:
        raise contract.UnknownMetric(f"{name} changes type between {engine.value} releases")
    return found[-1]


VLLM_DRAFTS = _defined(Engine.VLLM, bench.VLLM_DRAFTS)
VLLM_DRAFT_TOKENS = _defined(Engine.VLLM, bench.VLLM_DRAFT_TOKENS)
VLLM_ACCEPTED_TOKENS = _defined(Engine.VLLM, bench.VLLM_ACCEPTED_TOKENS)
VLLM_ACCEPTED_PER_POSITION = _defined(Engine.VLLM, bench.VLLM_ACCEPTED_PER_POSITION)
SGLANG_VERIFY_CALLS = _defined(Engine.SGLANG, bench.SGLANG_VERIFY_CALLS)
SGLANG_REQUESTS = _defined(Engine.SGLANG, bench.SGLANG_REQUESTS)
SGLANG_NUM_DRAFT_TOKENS = _defined(Engine.SGLANG, bench.SGLANG_NUM_DRAFT_TOKENS)
SGLANG_NUM_STEPS = _defined(Engine.SGLANG, bench.SGLANG_NUM_STEPS)

# Output tokens (a counter), per engine.
GENERATION_TOKENS = {
    Engine.VLLM: _defined(Engine.VLLM, "vllm:generation_tokens"),
    Engine.SGLANG: _defined(Engine.SGLANG, bench.SGLANG_GENERATION_TOKENS),
}
# Histograms in seconds; PromQL reads their `_bucket` series.
TIME_TO_FIRST_TOKEN = {
    engine: _defined(engine, f"{engine.value}:time_to_first_token_seconds") for engine in Engine
}
INTER_TOKEN_LATENCY = {
    engine: _defined(engine, f"{engine.value}:inter_token_latency_seconds") for engine in Engine
}
QUEUE_DEPTH = {engine: _defined(engine, name) for engine, name in QUEUE_DEPTH_METRICS.items()}
POD_READY = "kube_pod_status_ready"


def selector(found: EngineMetric | str, matchers: str, suffix: str | None = None) -> str:
    """A series selector for an engine metric (its samples under every exposition format the
    engine serves, `suffix` choosing a histogram's `_bucket`, ...) or a plain name, with
    `matchers` (`a="b",c=~"d"`)."""
    if isinstance(found, EngineMetric):
        return contract.selector(found, matchers, suffix)
    return f"{found}{{{matchers}}}" if matchers else found
