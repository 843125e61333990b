"""An endpoint's live figures over the last minutes, from the engine's own metrics in Prometheus:
acceptance rate, mean accepted length, output tokens per second. The queries are pure text built
from the release's metric names (mlcc/facts/engine_metrics.py, every exposition format the
engine serves); `ask` runs one (mlcc/prometheus/api.py) and the figures are checked here.

- vLLM: `increase()` of `vllm:spec_decode_num_drafts`, `..._num_draft_tokens` and
  `..._num_accepted_tokens` over the window; acceptance = accepted / draft tokens, mean
  accepted length = 1 + accepted / drafts (vLLM's own figures, vllm/v1/spec_decode/metrics.py).
- SGLang: `increase()` of `sglang:spec_verify_calls`, `sglang:generation_tokens` and
  `sglang:num_requests`: accepted = generated - requests - verify steps, drafted = verify steps x
  (`sglang:spec_num_draft_tokens` - 1, else `sglang:spec_num_steps`), as `mlcc bench` counts
  (mlcc/bench/speculative.py).
- Output tokens per second: `rate()` of the engine's generation-token counter.

Prometheus's `increase()` and `rate()` already step over counter resets (an engine restart).
A speculation-off twin exports no speculative series: its acceptance is "off", never a collapse.
A figure that cannot be true (NaN, infinite, negative, more accepted than drafted) or a series
that is missing gives no figure: `unknown` says what could not be checked and why.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from mlcc.config import pod_names
from mlcc.config.endpoints import EndpointConfig
from mlcc.facts.engine_metrics import metric, selector
from mlcc.prometheus.api import QueryFailed, Sample

Ask = Callable[[str], list[Sample]]  # one instant query; raises QueryFailed


class Unknown(Exception):
    """One line: which figure could not be read, and why."""


@dataclass(frozen=True)
class LiveFigures:
    speculative: bool
    output_tokens_per_s: float | None = None
    acceptance_rate: float | None = None
    mean_accepted_length: float | None = None
    unknown: str | None = None  # what could not be checked, and why
    idle: bool = False  # speculative, but nothing drafted in the window
    young: bool = False  # scraped for less than the window: rate() would read low


@dataclass(frozen=True)
class Scope:
    """One endpoint's pods, and the window in seconds."""

    engine: str
    version: str
    namespace: str
    endpoint: str
    window_s: int

    @property
    def matchers(self) -> str:
        return pod_names.pod_matchers(self.namespace, self.endpoint)

    def over(self, function: str, name: str, outer: str = "sum") -> str:
        return f"{outer}({function}({self.selector(name)}[{self.window_s}s]))"

    def selector(self, name: str) -> str:
        return selector(metric(self.engine, self.version, name), self.matchers)


def scope_of(endpoint: EndpointConfig, namespace: str, window_s: int) -> Scope:
    engine = endpoint.engine.value
    return Scope(engine, endpoint.engine_release.version, namespace, endpoint.name, window_s)


def live_figures(scope: Scope, speculative: bool, ask: Ask) -> LiveFigures:
    name = f"{scope.engine}:generation_tokens"
    try:
        tokens = _one(ask, scope.over("rate", name), "tokens")
        if tokens is None:
            raise Unknown(f"no {name} series for the endpoint's pods")
        # rate() divides by the whole window: a series younger than it reads low, so its
        # throughput is not shown (the ratios below hold). `offset` finds a sample a window ago.
        young = not ask(f"count({scope.selector(name)} offset {scope.window_s}s)")
        shown = None if young else tokens
        if not speculative:
            return LiveFigures(False, output_tokens_per_s=shown, young=young)
        reader = _vllm if scope.engine == "vllm" else _sglang
        rate, length = reader(scope, ask)
    except (Unknown, QueryFailed) as error:
        return LiveFigures(speculative, unknown=str(error))
    idle = rate is None and length is None
    return LiveFigures(True, shown, rate, length, idle=idle, young=young)


def _vllm(scope: Scope, ask: Ask) -> tuple[float | None, float | None]:
    counts = {
        key: _one(ask, scope.over("increase", f"vllm:spec_decode_num_{key}"), key)
        for key in ("drafts", "draft_tokens", "accepted_tokens")
    }
    drafts, drafted, accepted = counts["drafts"], counts["draft_tokens"], counts["accepted_tokens"]
    if drafts is None or drafted is None or accepted is None:
        raise Unknown(_no_speculative_series("vllm:spec_decode_num_*"))
    if not drafted or not drafts:
        return None, None
    if accepted > drafted:
        raise Unknown(f"{accepted:g} tokens accepted of {drafted:g} drafted: counts disagree")
    return accepted / drafted, 1.0 + accepted / drafts


def _sglang(scope: Scope, ask: Ask) -> tuple[float | None, float | None]:
    verify = _one(ask, scope.over("increase", "sglang:spec_verify_calls"), "verify calls")
    generated = _one(ask, scope.over("increase", "sglang:generation_tokens"), "tokens")
    requests = _one(ask, scope.over("increase", "sglang:num_requests"), "requests")
    if verify is None or generated is None or requests is None:
        raise Unknown(_no_speculative_series("sglang:spec_verify_calls"))
    if not verify:
        return None, None
    accepted = generated - requests - verify
    if accepted < 0:
        raise Unknown(
            f"{generated:g} tokens generated, fewer than one a request ({requests:g}) plus one "
            f"a verify step ({verify:g}): counts disagree"
        )
    per_step = _drafts_per_step(scope, ask)
    if per_step is None:
        rate = None  # the length is known; the drafts per step are not
    elif accepted > verify * per_step:
        raise Unknown(f"{accepted:g} tokens accepted of {verify * per_step:g} drafted")
    else:
        rate = accepted / (verify * per_step)
    return rate, 1.0 + accepted / verify


def _drafts_per_step(scope: Scope, ask: Ask) -> float | None:
    tokens = _one(
        ask, scope.over("max_over_time", "sglang:spec_num_draft_tokens", "max"), "draft tokens"
    )
    if tokens is not None and tokens > 1:
        return tokens - 1
    steps = _one(ask, scope.over("max_over_time", "sglang:spec_num_steps", "max"), "steps")
    return steps if steps else None


def _one(ask: Ask, expr: str, what: str) -> float | None:
    """The one value of an aggregated query; None when no series matched."""
    samples = ask(expr)
    if not samples:
        return None
    if len(samples) > 1:
        raise Unknown(f"the {what} query answered {len(samples)} series, not one")
    value = samples[0].value
    if not math.isfinite(value) or value < 0:
        raise Unknown(f"the {what} query reads {value:g}, not a count")
    return value


def _no_speculative_series(names: str) -> str:
    return (
        f"no {names} series for the endpoint's pods although speculation is on (does the engine "
        "export metrics, and does the Prometheus scrape them?)"
    )


def summary(
    figures: LiveFigures,
    floor: float | None,
    window_s: int,
    floor_key: str = "--acceptance-floor",
) -> tuple[bool, str]:
    """(passed, detail) of the `live` check line; `floor_key` names what sets the floor."""
    over = f"over the last {_window(window_s)}"
    if figures.unknown is not None:
        return False, f"cannot check the live figures {over}: {figures.unknown}"
    tokens = (
        "output tokens/s unknown (scraped for less than the window)"
        if figures.output_tokens_per_s is None
        else f"{figures.output_tokens_per_s:.1f} output tokens/s"
    )
    if not figures.speculative:
        return True, f"speculation off (no acceptance to read); {tokens} {over}"
    if figures.idle:
        return True, f"nothing drafted {over} (idle), acceptance not checked; {tokens}"
    parts = []
    if figures.acceptance_rate is not None:
        parts.append(f"acceptance {figures.acceptance_rate:.1%}")
    if figures.mean_accepted_length is not None:
        parts.append(f"mean accepted length {figures.mean_accepted_length:.2f}")
    detail = f"{', '.join([*parts, tokens])} {over}"
    if floor is None:
        return True, detail
    if figures.acceptance_rate is None:
        return False, f"{detail}; the acceptance rate is unknown, so the floor is not checked"
    if figures.acceptance_rate < floor:
        return False, f"{detail}; below the floor {floor:.0%} ({floor_key})"
    return True, detail


def _window(seconds: int) -> str:
    return f"{seconds // 60} min" if seconds % 60 == 0 else f"{seconds} s"
