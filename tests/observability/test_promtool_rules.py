"""The rendered rules and every PromQL expression, checked and run by promtool.

`promtool check rules` parses each rule file and each dashboard expression (as a recording
rule); `promtool test rules` feeds series named and shaped as the engines export them (vLLM's
counters with colons; SGLang's gauges and counters both as `sglang:...` and as the
`sglang_...` an OpenMetrics scrape stores; kube-state-metrics' ready gauge) and asserts which
alert fires and which stays silent. Pod names are those Kubernetes gives a Deployment's pods.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from obs_stacks import NAMESPACE, stack
from promtool_harness import check_rules, recording_rules, run_rule_tests, write_yaml

from mlcc.config.scaling.autoscaling import Autoscaling, ScalingMetric, autoscaling_spec
from mlcc.observability.dashboard import dashboard, expressions
from mlcc.observability.rules import prometheus_rule, rule_file

# <deployment>-<pod-template-hash>-<5 characters>, both of Kubernetes' vowel-less alphabet.
POD = {
    "llama": "llama-7d9f8b6c5d-x2k4p",
    "llama-baseline": "llama-baseline-5c7d9f8b6-q7w8z",
    "qwen": "qwen-6b8d7f9c4-z9x8v",
    "qwen-baseline": "qwen-baseline-7f9c6d5b8-k2m4n",
}
WINDOW = "x40"  # 40 one-minute samples
SGLANG_SPELLINGS = ("sglang:", "sglang_")


def series(name: str, endpoint: str, values: str, **labels: str) -> dict[str, str]:
    pairs = {"namespace": NAMESPACE, "pod": POD[endpoint], **labels}
    inner = ",".join(f'{k}="{v}"' for k, v in pairs.items())
    return {"series": f"{name}{{{inner}}}", "values": values}


def vllm(name: str, endpoint: str, per_minute: float) -> dict[str, str]:
    """A vLLM counter growing by `per_minute` (labels as vllm/v1/metrics/loggers.py sets)."""
    return series(name, endpoint, f"0+{per_minute:g}{WINDOW}", model_name="m", engine="0")


def sglang(name: str, spelling: str, endpoint: str, values: str) -> dict[str, str]:
    return series(spelling + name, endpoint, values, model_name="m")


def alert(endpoint: str, engine: str, severity: str = "warning") -> dict[str, Any]:
    labels = {"severity": severity, "endpoint": endpoint, "namespace": NAMESPACE}
    return {"exp_labels": {**labels, "engine": engine}}


def case(
    input_series: list[dict[str, str]], expect: dict[str, list[dict[str, Any]]], at: str = "30m"
) -> dict[str, Any]:
    checks = []
    for name in ALERTS:
        firing = [
            {**a, "exp_annotations": SUMMARIES[(name, a["exp_labels"]["endpoint"])]}
            for a in expect.get(name, [])
        ]
        checks.append({"eval_time": at, "alertname": name, "exp_alerts": firing})
    return {"interval": "1m", "input_series": input_series, "alert_rule_test": checks}


ALERTS = (
    "SpeculativeAcceptanceLow",
    "SpeculativeSlowerThanBaseline",
    "EndpointPodsNotReady",
    "EngineQueueGrowing",
)
RULES = yaml.safe_load(rule_file(stack()))
SUMMARIES = {
    (rule["alert"], rule["labels"]["endpoint"]): rule["annotations"]
    for group in RULES["groups"]
    for rule in group["rules"]
}


def test_every_rendered_rule_file_passes_promtool_check(tmp_path: Path) -> None:
    for name, target in (("file", "file"), ("operator", "prometheus-operator")):
        config = stack({"target": target, "acceptanceFloor": {"llama": 0.5}})
        check_rules(write_yaml(tmp_path / f"{name}.yaml", yaml.safe_load(rule_file(config))))
        groups = {"groups": prometheus_rule(config)["spec"]["groups"]}
        check_rules(write_yaml(tmp_path / f"{name}-cr.yaml", groups))


def test_every_dashboard_and_keda_expression_parses(tmp_path: Path) -> None:
    config = stack()
    queries = expressions(dashboard(config))
    for endpoint in config.endpoints:
        # The KEDA trigger's query (mlcc/config/scaling/autoscaling.py), as the CR carries it.
        settings = Autoscaling(metric=ScalingMetric.QUEUE_DEPTH, target_value=2.0)
        spec = autoscaling_spec(
            settings, endpoint_name=endpoint.name, namespace=NAMESPACE, engine=endpoint.engine
        )
        trigger = spec["prometheusTrigger"]
        assert isinstance(trigger, dict)
        queries.append(str(trigger["query"]))
    assert len(queries) > 40
    check_rules(write_yaml(tmp_path / "expressions.yaml", recording_rules(queries)))


def vllm_traffic(accepted: float, drafted: float, tokens: float) -> list[dict[str, str]]:
    return [
        vllm("vllm:spec_decode_num_drafts_total", "llama", drafted / 5),
        vllm("vllm:spec_decode_num_draft_tokens_total", "llama", drafted),
        vllm("vllm:spec_decode_num_accepted_tokens_total", "llama", accepted),
        vllm("vllm:generation_tokens_total", "llama", tokens),
    ]


def test_vllm_acceptance_under_the_floor_fires_and_above_it_is_silent(tmp_path: Path) -> None:
    low = alert("llama", "vllm")
    run_rule_tests(
        tmp_path,
        rule_file(stack()),
        [
            case(vllm_traffic(100, 500, 700), {"SpeculativeAcceptanceLow": [low]}),
            case(vllm_traffic(400, 500, 1000), {}),
            case(vllm_traffic(0, 0, 0), {}),  # idle: 0/0 drafts is no acceptance at all
            # Low, but not yet for acceptanceForMinutes (10): pending, not firing.
            case(vllm_traffic(100, 500, 700), {}, at="8m"),
        ],
    )


@pytest.mark.parametrize("spelling", SGLANG_SPELLINGS)
def test_sglang_acceptance_in_either_exposition_spelling(tmp_path: Path, spelling: str) -> None:
    """SGLang's acceptance from its counters, as bench and verify count it: 100 verify steps
    and 10 requests a minute, 4 drafts a step (5 draft tokens, the root included)."""

    def traffic(generated: float, verify: float = 100) -> list[dict[str, str]]:
        def counter(name: str, per_minute: float) -> dict[str, str]:
            return sglang(f"{name}_total", spelling, "qwen", f"0+{per_minute:g}{WINDOW}")

        return [
            counter("spec_verify_calls", verify),
            counter("num_requests", verify / 10),
            counter("generation_tokens", generated),
            sglang("spec_num_draft_tokens", spelling, "qwen", "5" + WINDOW),
            # The gauge's last interval says otherwise: the counters decide.
            sglang("spec_accept_rate", spelling, "qwen", "0.5" + WINDOW),
        ]

    low = alert("qwen", "sglang")
    run_rule_tests(
        tmp_path,
        rule_file(stack()),
        [
            case(traffic(150), {"SpeculativeAcceptanceLow": [low]}),  # 40 of 400: 0.1
            case(traffic(390), {}),  # 280 of 400 accepted: 0.7
            case(traffic(0, verify=0), {}),  # idle: nothing generated, no figure
        ],
    )


def test_slower_than_the_twin_fires_only_when_both_serve(tmp_path: Path) -> None:
    def traffic(speculative: float, twin: float) -> list[dict[str, str]]:
        return [
            vllm("vllm:generation_tokens_total", "llama", speculative),
            vllm("vllm:generation_tokens_total", "llama-baseline", twin),
        ]

    slower = alert("llama", "vllm")
    run_rule_tests(
        tmp_path,
        rule_file(stack()),
        [
            case(traffic(300, 600), {"SpeculativeSlowerThanBaseline": [slower]}),
            case(traffic(900, 600), {}),
            case(traffic(300, 0), {}),  # the twin idle: nothing to compare with
        ],
    )


@pytest.mark.parametrize("spelling", SGLANG_SPELLINGS)
def test_queue_growing_fires_and_a_steady_queue_is_silent(tmp_path: Path, spelling: str) -> None:
    queue = spelling + "num_queue_reqs"
    growing = [
        series("vllm:num_requests_waiting", "llama", "0+1" + WINDOW, model_name="m", engine="0"),
        series(queue, "qwen-baseline", "0+2" + WINDOW, model_name="m"),
    ]
    steady = [
        series("vllm:num_requests_waiting", "llama", "5" + WINDOW, model_name="m", engine="0"),
        series(queue, "qwen-baseline", "3" + WINDOW, model_name="m"),
    ]
    expected = [
        alert("llama", "vllm"),
        alert("qwen-baseline", "sglang"),
    ]
    run_rule_tests(
        tmp_path,
        rule_file(stack()),
        [case(growing, {"EngineQueueGrowing": expected}), case(steady, {})],
    )


def test_pods_not_ready_for_the_endpoint_and_its_twin(tmp_path: Path) -> None:
    def ready(endpoint: str, true: int) -> list[dict[str, str]]:
        return [
            series("kube_pod_status_ready", endpoint, f"{true}{WINDOW}", condition="true"),
            series("kube_pod_status_ready", endpoint, f"{1 - true}{WINDOW}", condition="false"),
            series("kube_pod_status_ready", endpoint, "0" + WINDOW, condition="unknown"),
        ]

    critical = "critical"
    run_rule_tests(
        tmp_path,
        rule_file(stack()),
        [
            case(
                [*ready("llama", 0), *ready("llama-baseline", 1), *ready("qwen", 1)],
                {"EndpointPodsNotReady": [alert("llama", "vllm", critical)]},
            ),
            case(
                [*ready("llama", 1), *ready("qwen-baseline", 0)],
                {"EndpointPodsNotReady": [alert("qwen-baseline", "sglang", critical)]},
            ),
            case([*ready("llama", 1), *ready("llama-baseline", 1)], {}),
        ],
    )
