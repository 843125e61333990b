"""hp:autoscaling -> autoScalingSpec, and the metrics fragment: parsing, and the real CRD."""

from __future__ import annotations

import json

import botocore.session
import pytest
from crd_schema import assert_valid_manifest, crd_schema

from mlcc.config.scaling.autoscaling import (
    CRD_INTEGER_BOUNDS,
    CRD_SERVER_ADDRESS_PATTERN,
    DEFAULT_MAX_REPLICAS,
    DEFAULT_TARGETS,
    FIELDS,
    INT32_MAX,
    METRICS_PATH,
    METRICS_PORT,
    Autoscaling,
    ScalingMetric,
    autoscaling_spec,
    metrics_env,
    metrics_spec,
    parse_autoscaling,
)
from mlcc.manifest import workload
from mlcc.serving.engines import ENV_PREFIXES, Engine
from mlcc.serving.speculative import SpeculativeSpec

CRD_FILE = "inferenceendpointconfigs.yaml"
POD = "[bcdfghjklmnpqrstvwxz2456789]"  # a character of Kubernetes' generated pod names
KEY = "hp:autoscaling"
AMP = "https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-12ab-34cd"


def parsed(raw: object, capacity: int | None = None) -> Autoscaling:
    settings, issues = parse_autoscaling(raw, KEY, capacity)
    assert issues == []
    assert settings is not None
    return settings


def problems(raw: object, capacity: int | None = None, key: str = KEY) -> dict[str, str]:
    settings, issues = parse_autoscaling(raw, key, capacity)
    assert settings is None
    assert issues, "a refused value must say why"
    return dict(issues)


def spec_schema(name: str) -> dict[str, object]:
    schema = crd_schema(CRD_FILE)["properties"]["spec"]["properties"][name]
    assert isinstance(schema, dict)
    return schema


# --- what is off, what is on -------------------------------------------------------------


@pytest.mark.parametrize("raw", [None, {}, False])
def test_absent_empty_or_false_means_no_autoscaling(raw: object) -> None:
    assert parse_autoscaling(raw, KEY, 4) == (None, [])


def test_true_means_the_defaults_up_to_the_capacity() -> None:
    assert parsed(True, capacity=3) == Autoscaling(min_replicas=1, max_replicas=3)


def test_defaults() -> None:
    settings = parsed({"maxReplicas": 4})
    assert settings == Autoscaling(
        min_replicas=1,
        max_replicas=4,
        metric=ScalingMetric.INVOCATIONS,
        target_value=DEFAULT_TARGETS[ScalingMetric.INVOCATIONS],
        prometheus_server="",
        polling_interval=30,
        cooldown_period=300,
        scale_down_stabilization_time=300,
    )


def test_unset_ceiling_is_the_capacity_or_the_crd_default() -> None:
    assert parsed({"minReplicas": 2}, capacity=6).max_replicas == 6
    assert parsed({"minReplicas": 2}).max_replicas == DEFAULT_MAX_REPLICAS
    assert parsed({"minReplicas": 7}).max_replicas == 7


def test_every_field_is_read() -> None:
    raw = {
        "minReplicas": 0,
        "maxReplicas": 8,
        "pollingInterval": 15,
        "cooldownPeriod": 600,
        "scaleDownStabilizationTime": 120,
        "metric": "invocations",
        "targetValue": 12.5,
    }
    assert parsed(raw, capacity=8) == Autoscaling(
        0, 8, ScalingMetric.INVOCATIONS, 12.5, "", 15, 600, 120
    )
    assert set(raw) | {"prometheusServer", "cloudWatchTrigger"} == set(FIELDS)


@pytest.mark.parametrize("spelling", ["queueDepth", "QueueDepth", " queue_depth ", "queue-depth"])
def test_metric_names_ignore_case_separators_and_whitespace(spelling: str) -> None:
    settings = parsed({"metric": spelling, "prometheusServer": f" {AMP} "})
    assert settings.metric is ScalingMetric.QUEUE_DEPTH
    assert settings.prometheus_server == AMP
    assert settings.target_value == DEFAULT_TARGETS[ScalingMetric.QUEUE_DEPTH]


def test_integral_target_becomes_a_float() -> None:
    target = parsed({"targetValue": 30}).target_value
    assert isinstance(target, float)
    assert target == 30.0


# --- refusals, each naming its key path -------------------------------------------------


@pytest.mark.parametrize("raw", ["4", 4, [1, 4], "true"])
def test_a_non_map_is_refused_at_the_key_itself(raw: object) -> None:
    assert list(problems(raw)) == [KEY]


@pytest.mark.parametrize(
    ("field", "guess"),
    [
        ("maxReplica", "maxReplicas"),
        ("MinReplicas", "minReplicas"),
        ("minReplicaCount", "minReplicas"),
        ("target", "targetValue"),
    ],
)
def test_unknown_fields_are_named_with_a_guess(field: str, guess: str) -> None:
    found = problems({field: 2})
    assert f"did you mean {guess}?" in found[f"{KEY}.{field}"]


def test_an_unknown_field_without_a_near_name_lists_the_fields() -> None:
    message = problems({"color": "blue"})[f"{KEY}.color"]
    assert "did you mean" not in message
    assert all(name in message for name in FIELDS)


# A replica needs a node: the counts stay within a HyperPod group's (botocore's model).
MOST_NODES = (
    botocore.session.get_session()
    .get_service_model("sagemaker")
    .shape_for("ClusterInstanceCount")
    .metadata["max"]
)
HIGHEST = {"minReplicas": MOST_NODES, "maxReplicas": MOST_NODES, "pollingInterval": INT32_MAX}


@pytest.mark.parametrize("field", ["minReplicas", "maxReplicas", "pollingInterval"])
@pytest.mark.parametrize("value", [True, "3", 2.5, None, -1, INT32_MAX + 1, 10**30, [3]])
def test_integers_must_be_whole_numbers_in_the_crd_range(field: str, value: object) -> None:
    message = problems({field: value})[f"{KEY}.{field}"]
    assert f"to {HIGHEST[field]}" in message and message.endswith(
        f"got {json.dumps(value)}"
        + ("; write the number without quotes" if isinstance(value, str) else "")
    )


def test_a_quoted_number_says_to_drop_the_quotes() -> None:
    assert "without quotes" in problems({"maxReplicas": "3"})[f"{KEY}.maxReplicas"]


def test_zero_is_accepted_where_it_means_something() -> None:
    settings = parsed({"minReplicas": 0, "cooldownPeriod": 0, "scaleDownStabilizationTime": 0})
    assert (settings.min_replicas, settings.cooldown_period) == (0, 0)
    assert settings.scale_down_stabilization_time == 0


@pytest.mark.parametrize("field", ["maxReplicas", "pollingInterval"])
def test_zero_is_refused_where_it_means_nothing(field: str) -> None:
    assert "from 1 to" in problems({field: 0})[f"{KEY}.{field}"]


def test_the_largest_int32_is_accepted() -> None:
    assert parsed({"cooldownPeriod": INT32_MAX}).cooldown_period == INT32_MAX


def test_min_above_max_names_both_keys() -> None:
    found = problems({"minReplicas": 4, "maxReplicas": 2})
    assert list(found) == [f"{KEY}.minReplicas"]
    assert f"{KEY}.maxReplicas (2)" in found[f"{KEY}.minReplicas"]


def test_max_above_the_capacity_says_what_to_change() -> None:
    found = problems({"maxReplicas": 8}, capacity=3)
    assert list(found) == [f"{KEY}.maxReplicas"]
    assert "at most 3 replica(s)" in found[f"{KEY}.maxReplicas"]
    assert "lower it to 3" in found[f"{KEY}.maxReplicas"]


def test_min_above_the_capacity_with_the_ceiling_unset() -> None:
    found = problems({"minReplicas": 5}, capacity=2)
    assert list(found) == [f"{KEY}.minReplicas"]
    assert "at most 2 replica(s)" in found[f"{KEY}.minReplicas"]


def test_no_capacity_at_all() -> None:
    found = problems({"maxReplicas": 1}, capacity=0)
    assert "at most 0 replica(s)" in found[f"{KEY}.maxReplicas"]
    assert "lower it" not in found[f"{KEY}.maxReplicas"]


def test_unknown_capacity_skips_the_capacity_check() -> None:
    assert parsed({"maxReplicas": 1000}).max_replicas == 1000


def test_capacity_and_order_problems_are_all_reported() -> None:
    found = problems({"minReplicas": 9, "maxReplicas": 6}, capacity=4)
    assert set(found) == {f"{KEY}.minReplicas", f"{KEY}.maxReplicas"}


@pytest.mark.parametrize("value", ["cpu", "", 3, None, ["invocations"]])
def test_unknown_metric(value: object) -> None:
    assert "invocations or queueDepth" in problems({"metric": value})[f"{KEY}.metric"]


@pytest.mark.parametrize("value", [0, -1, True, "10", float("inf"), float("nan"), None, {}])
def test_target_must_be_a_positive_number(value: object) -> None:
    raw: dict[str, object] = {"targetValue": value}
    assert "must be a number from 0.001 to" in problems(raw)[f"{KEY}.targetValue"]


def test_queue_depth_needs_a_prometheus_server() -> None:
    found = problems({"metric": "queueDepth"})
    assert "is required with metric queueDepth" in found[f"{KEY}.prometheusServer"]


def test_queue_depth_cannot_scale_from_zero() -> None:
    found = problems({"metric": "queueDepth", "prometheusServer": AMP, "minReplicas": 0})
    assert list(found) == [f"{KEY}.minReplicas"]


def test_a_prometheus_server_without_queue_depth_is_refused() -> None:
    assert (
        "only used with metric queueDepth"
        in problems({"prometheusServer": AMP})[f"{KEY}.prometheusServer"]
    )


@pytest.mark.parametrize("suffix", ["/api/v1/query", "/api/v1/remote_write", "/"])
def test_a_query_or_remote_write_url_is_cut_back_to_the_workspace(suffix: str) -> None:
    found = problems({"metric": "queueDepth", "prometheusServer": AMP + suffix})
    assert found[f"{KEY}.prometheusServer"].endswith(AMP)


@pytest.mark.parametrize(
    "value",
    ["http://prometheus.monitoring:9090", "https://aps-workspaces.x.amazonaws.com/ws-1", 5],
)
def test_a_server_that_is_not_an_amp_workspace_is_refused(value: object) -> None:
    found = problems({"metric": "queueDepth", "prometheusServer": value})
    assert "must be an AMP workspace URL" in found[f"{KEY}.prometheusServer"]


def test_every_problem_is_reported_at_once_under_the_given_prefix() -> None:
    key = "hp:endpoints[1].autoscaling"
    raw = {"minReplica": 1, "maxReplicas": True, "metric": "gpu", "targetValue": -2}
    assert set(problems(raw, key=key)) == {
        f"{key}.minReplica",
        f"{key}.maxReplicas",
        f"{key}.metric",
        f"{key}.targetValue",
    }


# --- the CR fragments ---------------------------------------------------------------------


def test_invocations_trigger_reads_the_registered_sagemaker_endpoint() -> None:
    spec = autoscaling_spec(
        parsed({"minReplicas": 1, "maxReplicas": 3, "targetValue": 20}),
        endpoint_name="hp-dev",
        namespace="inference",
        engine="vllm",
    )
    assert spec == {
        "minReplicaCount": 1,
        "maxReplicaCount": 3,
        "pollingInterval": 30,
        "cooldownPeriod": 300,
        "scaleDownStabilizationTime": 300,
        "cloudWatchTrigger": {
            "name": "sagemaker-invocations",
            "namespace": "AWS/SageMaker",
            "metricName": "Invocations",
            "dimensions": [
                {"name": "EndpointName", "value": "hp-dev"},
                {"name": "VariantName", "value": "AllTraffic"},
            ],
            "metricStat": "Sum",
            "metricType": "Average",
            "metricCollectionPeriod": 60,
            "targetValue": 20.0,
            "minValue": 0,
        },
    }


# vLLM's /metrics answers text only (colons kept); SGLang's negotiates, and OpenMetrics writes
# the sample `sglang_num_queue_reqs` (mlcc/facts/exposition.py): its selector matches both.
@pytest.mark.parametrize(
    ("engine", "gauge"),
    [
        (Engine.VLLM, "vllm:num_requests_waiting{"),
        (Engine.SGLANG, '{__name__=~"sglang[:_]num_queue_reqs",'),
    ],
)
def test_queue_depth_trigger_sums_the_engine_gauge_over_the_endpoint_pods(
    engine: Engine, gauge: str
) -> None:
    settings = parsed({"metric": "queueDepth", "prometheusServer": AMP, "targetValue": 3})
    spec = autoscaling_spec(settings, endpoint_name="hp-b", namespace="team", engine=engine)
    assert "cloudWatchTrigger" not in spec
    assert spec["prometheusTrigger"] == {
        "name": "engine-queue-depth",
        "serverAddress": AMP,
        "namespace": "team",
        "query": f'sum({gauge}namespace="team",pod=~"hp-b-{POD}{{1,10}}-{POD}{{5}}"}})'
        " or vector(0)",
        "metricType": "Average",
        "targetValue": 3.0,
    }


@pytest.mark.parametrize("engine", list(Engine))
def test_metrics_scrape_the_engine_on_the_api_port(engine: Engine) -> None:
    assert metrics_spec(engine) == {
        "enabled": True,
        "metricsScrapeIntervalSeconds": 15,
        "modelMetrics": {"path": "/metrics", "port": workload.CONTAINER_PORT},
    }
    assert (METRICS_PATH, METRICS_PORT) == ("/metrics", workload.CONTAINER_PORT)


def test_only_sglang_needs_a_flag_to_export_metrics() -> None:
    assert metrics_env(Engine.VLLM) == {}
    assert metrics_env(Engine.SGLANG) == {ENV_PREFIXES[Engine.SGLANG] + "ENABLE_METRICS": "true"}


SETTINGS = {
    "defaults": {"maxReplicas": 2},
    "scale to zero": {"minReplicas": 0, "maxReplicas": 4, "cooldownPeriod": 900},
    "every field": {
        "minReplicas": 2,
        "maxReplicas": MOST_NODES,
        "pollingInterval": 1,
        "cooldownPeriod": INT32_MAX,
        "scaleDownStabilizationTime": 3600,  # the HPA's longest window
        "targetValue": 0.5,
    },
    "queue depth": {"metric": "queueDepth", "prometheusServer": AMP, "maxReplicas": 3},
}


@pytest.mark.parametrize("engine", list(Engine))
@pytest.mark.parametrize("raw", list(SETTINGS.values()), ids=list(SETTINGS))
@pytest.mark.parametrize("speculative", [None, SpeculativeSpec("eagle3", "org/draft", 3)])
def test_every_fragment_is_valid_for_the_real_crd(
    engine: Engine, raw: dict[str, object], speculative: SpeculativeSpec | None
) -> None:
    w = workload.Workload("hp-dev", "inference", "org/target", "ml.g5.12xlarge", 4, 1, engine)
    spec = workload.endpoint_spec(w, "repo@sha256:" + "a" * 64, speculative)
    spec["autoScalingSpec"] = autoscaling_spec(
        parsed(raw), endpoint_name=w.endpoint_name, namespace=w.namespace, engine=engine
    )
    spec["metrics"] = metrics_spec(engine)
    manifest = {
        "apiVersion": workload.API_VERSION,
        "kind": workload.KIND,
        "metadata": {"name": w.endpoint_name, "namespace": w.namespace},
        "spec": spec,
    }
    assert_valid_manifest(manifest, CRD_FILE)


# --- the hard-coded CRD facts cannot drift from the CRD -----------------------------------


def test_integer_bounds_are_the_crds() -> None:
    properties = spec_schema("autoScalingSpec")["properties"]
    assert isinstance(properties, dict)
    for name, (low, high) in CRD_INTEGER_BOUNDS.items():
        field = properties[name]
        assert field["type"] == "integer"
        assert field["minimum"] == low
        assert field.get("maximum", INT32_MAX if field["format"] == "int32" else None) == high


def test_server_address_pattern_is_the_crds() -> None:
    properties = spec_schema("autoScalingSpec")["properties"]
    assert isinstance(properties, dict)
    assert properties["prometheusTrigger"]["properties"]["serverAddress"]["pattern"] == (
        CRD_SERVER_ADDRESS_PATTERN
    )


def test_defaults_match_the_crd_where_the_crd_has_one() -> None:
    properties = spec_schema("autoScalingSpec")["properties"]
    assert isinstance(properties, dict)
    defaults = Autoscaling()
    assert properties["minReplicaCount"]["default"] == defaults.min_replicas
    assert properties["maxReplicaCount"]["default"] == DEFAULT_MAX_REPLICAS
    assert properties["pollingInterval"]["default"] == defaults.polling_interval
    assert properties["cooldownPeriod"]["default"] == defaults.cooldown_period
    assert (
        properties["scaleDownStabilizationTime"]["default"]
        == defaults.scale_down_stabilization_time
    )
