"""Autoscaling values KEDA, the HPA and AWS keep, and the metric that selects one endpoint's pods.

The bounds are checked against what their sources do: KEDA's int64(target * 1000) milli-quantity,
the HPA's 3600 s stabilization window, botocore's ClusterInstanceCount; the selector against pod
names made as Kubernetes makes them.
"""

from __future__ import annotations

import json
import random
import re

import botocore.session
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlcc.config.endpoints import BASELINE_SUFFIX, MAX_NAME_LENGTH
from mlcc.config.scaling.autoscaling import autoscaling_spec, parse_autoscaling
from mlcc.config.stack import ConfigError, parse

KEY = "hp:autoscaling"
AMP = "https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-12ab-34cd"
MOST_NODES = (
    botocore.session.get_session()
    .get_service_model("sagemaker")
    .shape_for("ClusterInstanceCount")
    .metadata["max"]
)
# Kubernetes' generated names (k8s.io/apimachinery/pkg/util/rand/rand.go `alphanums`).
ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def issues(raw: object, capacity: int | None = None) -> dict[str, str]:
    return dict(parse_autoscaling(raw, KEY, capacity)[1])


def milli_quantity(target: float) -> int:
    """KEDA's GetMetricTargetMili: int64(metricValue * 1000), Go's truncation toward zero."""
    return int(target * 1000)


# --- targets --------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [0.0009, 1e-7, 5e-324, 0.0001])
def test_a_target_keda_would_turn_into_zero_is_refused(target: float) -> None:
    assert milli_quantity(target) == 0
    message = issues({"targetValue": target})[f"{KEY}.targetValue"]
    assert message.startswith("must be a number from 0.001 to")
    assert "KEDA keeps targets in thousandths, so a smaller one becomes 0" in message


def test_the_smallest_target_keda_keeps_is_accepted() -> None:
    settings_, found = parse_autoscaling({"targetValue": 0.001}, KEY, None)
    assert found == [] and settings_ is not None
    assert milli_quantity(settings_.target_value) == 1


def test_a_target_past_keda_s_int64_is_refused() -> None:
    assert f"{KEY}.targetValue" in issues({"targetValue": 1e16})


def test_a_cloudwatch_trigger_target_follows_the_same_rule() -> None:
    trigger = {"metricName": "Invocations", "namespace": "AWS/SageMaker", "targetValue": 0.0004}
    message = issues({"cloudWatchTrigger": trigger})[f"{KEY}.cloudWatchTrigger.targetValue"]
    assert "KEDA keeps targets in thousandths" in message
    found = parse_autoscaling({"cloudWatchTrigger": {**trigger, "targetValue": True}}, KEY, None)
    assert found[1] == [(f"{KEY}.cloudWatchTrigger.targetValue", "must be a number")]


@settings(max_examples=300, deadline=None)
@given(
    target=st.floats(allow_nan=True, allow_infinity=True)
    | st.floats(min_value=0, max_value=0.01)
    | st.integers(-5, 10**20)
)
def test_any_accepted_target_is_a_nonzero_keda_quantity(target: float) -> None:
    settings_, found = parse_autoscaling({"targetValue": target}, KEY, None)
    if settings_ is None:
        assert list(dict(found)) == [f"{KEY}.targetValue"]
        return
    assert 1 <= milli_quantity(settings_.target_value) <= 2**63 - 1


# --- stabilization window and ceilings --------------------------------------------------------


def test_the_scale_down_window_stops_at_the_hpa_maximum() -> None:
    assert issues({"scaleDownStabilizationTime": 3600}) == {}
    message = issues({"scaleDownStabilizationTime": 3601})[f"{KEY}.scaleDownStabilizationTime"]
    assert message == (
        "must be a whole number from 0 to 3600 (the HPA's longest stabilization window), got 3601"
    )


@pytest.mark.parametrize("field", ["minReplicas", "maxReplicas"])
def test_replica_counts_stay_within_a_hyperpod_group_even_when_capacity_is_unknown(
    field: str,
) -> None:
    raw = {"minReplicas": 1, "maxReplicas": MOST_NODES, field: MOST_NODES}
    assert issues(raw) == {}
    message = issues({**raw, field: MOST_NODES + 1})[f"{KEY}.{field}"]
    assert f"from {0 if field == 'minReplicas' else 1} to {MOST_NODES} (" in message


def test_an_existing_cluster_stack_refuses_a_ceiling_no_group_can_hold() -> None:
    values = {
        "hp:model": "org/m",
        "aws:region": "us-east-1",
        "hp:clusterName": "arn:aws:sagemaker:us-east-1:123456789012:cluster/a1b2c3d4e5f6",
        "hp:autoscaling": json.dumps({"maxReplicas": 2**31 - 1}),
    }
    with pytest.raises(ConfigError) as raised:
        parse(values, stack="dev")
    assert [p.key for p in raised.value.problems] == [f"{KEY}.maxReplicas"]


# --- the metric selects this endpoint's pods only ---------------------------------------------


def pod_name(deployment: str, rng: random.Random) -> str:
    """A pod of `deployment` as Kubernetes names it: ReplicaSet `<deployment>-<hash>` (the hash
    1-10 characters), pod generateName `<replicaset>-` cut to 58 characters + 5 characters."""
    pod_hash = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 10)))
    suffix = "".join(rng.choice(ALPHABET) for _ in range(5))
    return f"{deployment}-{pod_hash}-"[:58] + suffix


def selector_regex(endpoint: str) -> str:
    settings_, found = parse_autoscaling(
        {"metric": "queueDepth", "prometheusServer": AMP}, KEY, None
    )
    assert settings_ is not None and found == []
    spec = autoscaling_spec(settings_, endpoint_name=endpoint, namespace="ns", engine="vllm")
    trigger = spec["prometheusTrigger"]
    assert isinstance(trigger, dict)
    match = re.search(r'pod=~"([^"]*)"', str(trigger["query"]))
    assert match is not None
    return match[1]


def matches(regex: str, name: str) -> bool:
    """PromQL's =~: the RE2 regex anchored at both ends."""
    return re.fullmatch(regex, name) is not None


def test_the_endpoint_s_query_selects_its_pods_and_not_its_twin_s() -> None:
    regex = selector_regex("llama-eagle3")
    assert matches(regex, "llama-eagle3-7d9f8b6c5d-x2k4p")
    assert not matches(regex, "llama-eagle3-baseline-7d9f8b6c5d-x2k4p")
    # What the query used to say selects both.
    assert matches("llama-eagle3-.*", "llama-eagle3-baseline-7d9f8b6c5d-x2k4p")


NAMES = st.from_regex(r"\A[a-z0-9]([-a-z0-9]{0,52}[a-z0-9])?\Z")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=NAMES, seed=st.integers(0, 2**32))
def test_any_endpoint_s_query_selects_its_pods_and_never_its_twin_s(name: str, seed: int) -> None:
    twin = f"{name}{BASELINE_SUFFIX}"
    assert len(twin) <= MAX_NAME_LENGTH
    rng = random.Random(seed)
    regex = selector_regex(name)
    for _ in range(20):
        assert matches(regex, pod_name(name, rng))
        assert not matches(regex, pod_name(twin, rng))
    assert selector_regex(twin) != regex
    assert not matches(selector_regex(twin), pod_name(name, rng))


@settings(max_examples=100, deadline=None)
@given(name=NAMES, other=NAMES, seed=st.integers(0, 2**32))
def test_another_endpoint_s_pods_are_not_selected(name: str, other: str, seed: int) -> None:
    # Kubernetes cuts the pod names of long Deployment names: then `<name>-<letters without
    # vowels>` can name the same pods (mlcc/config/pod_names.py), a baseline twin never does.
    if other == name or other[:58] == name[:58]:
        return
    if len(name) > 45 and other.startswith(f"{name}-"):
        return
    rng = random.Random(seed)
    assert not matches(selector_regex(name), pod_name(other, rng))
