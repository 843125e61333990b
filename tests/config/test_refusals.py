"""Values AWS or the engines would refuse at deploy time are refused at preview, one line each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlcc.config.aws.rules import hyperpod_instance_types, integer_bounds
from mlcc.config.schema import KEYS
from mlcc.config.stack import ConfigError, parse

BASE = {
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "aws:region": "us-east-1",
    "aws-native:region": "us-east-1",
}
ARN = "arn:aws:sagemaker:{region}:123456789012:cluster/a1b2c3d4e5f6"
HYPERPOD_TYPES = hyperpod_instance_types()
MOST_NODES = integer_bounds("ClusterInstanceCount")[1]  # botocore's model


def problems(values: dict[str, str]) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        parse({**BASE, **values}, stack="dev")
    return [str(p) for p in raised.value.problems]


def refused(values: dict[str, str], key: str) -> None:
    found = problems(values)
    assert any(line.startswith(f"{key}: ") for line in found), found


@pytest.mark.parametrize(
    "model", ["", " ", "\t", "--x/y", "../x", "./.", "x", "a/b/c", "org/" + "n" * 200, "-org/x"]
)
def test_target_models_that_are_not_hub_ids(model: str) -> None:
    refused({"hp:model": model}, "hp:model")


@pytest.mark.parametrize(
    "args",
    [
        {"enforce-eager": ""},
        {"enforce-eager": "   "},
        {"hf-token": "hf_x"},
        {"api-key": "k"},
        {"HF_TOKEN": "hf_x"},
        {"speculative-config": "{}"},
        {"Speculative_Config": "{}"},
        {"sc": "{}"},
        {"specul": "{}"},
        {"--speculative-c": "{}"},
        {"speculative-model": "x/y"},
    ],
)
def test_engine_args_that_would_fail_or_leak(args: dict[str, object]) -> None:
    (flag,) = args
    refused({"hp:engineArgs": json.dumps(args)}, f"hp:engineArgs.{flag}")


@pytest.mark.parametrize("value", [0, -0.1, 1.5, "1.01", "nan", "ninety", True])
def test_gpu_memory_utilization_outside_vllms_own_bound(value: object) -> None:
    """vLLM's CacheConfig declares Field(gt=0, le=1) (engine_flags.json value_bounds): refused
    as the engine would, never replaced by its default in preflight's figures."""
    args = json.dumps({"gpu-memory-utilization": value})
    (line,) = problems({"hp:engineArgs": args})
    assert line.startswith(
        "hp:engineArgs.gpu-memory-utilization: must be a number over 0 and at most 1 for vllm "
        "0.27.1 (vllm/config/cache.py CacheConfig.gpu_memory_utilization), not "
    )


@pytest.mark.parametrize("value", [0, 1.2])
def test_sglang_mem_fraction_static_outside_what_its_kv_pool_can_take(value: float) -> None:
    (line,) = problems(
        {"hp:engine": "sglang", "hp:engineArgs": json.dumps({"mem-fraction-static": value})}
    )
    assert line.startswith("hp:engineArgs.mem-fraction-static: must be a number over 0 and at ")
    assert "kv_cache_configurator.py _profile_available_bytes" in line


@pytest.mark.parametrize(
    ("engine", "flag"), [("vllm", "gpu-memory-utilization"), ("sglang", "mem-fraction-static")]
)
def test_a_memory_fraction_of_one_or_less_is_taken(engine: str, flag: str) -> None:
    for value in (1, "0.5", 0.01):
        parse(
            {**BASE, "hp:engine": engine, "hp:engineArgs": json.dumps({flag: value})}, stack="dev"
        )


def test_the_same_flag_twice_in_two_spellings() -> None:
    found = problems({"hp:engineArgs": json.dumps({"max-num-seqs": 8, "max_num_seqs": 16})})
    assert len([line for line in found if "max" in line]) == 1


def test_max_model_len_and_the_engine_flag_together() -> None:
    refused(
        {"hp:maxModelLen": "4096", "hp:engineArgs": json.dumps({"max-model-len": 8192})},
        "hp:maxModelLen",
    )


@pytest.mark.parametrize(
    "namespace",
    ["kube-system", "kube-public", "kube-node-lease", "hyperpod-inference-system", "keda"],
)
def test_system_namespaces(namespace: str) -> None:
    refused({"hp:namespace": namespace}, "hp:namespace")


def test_more_gpus_than_the_instance_type_has() -> None:
    refused({"hp:instanceType": "ml.g5.12xlarge", "hp:gpuCount": "8"}, "hp:gpuCount")


@pytest.mark.parametrize(
    "cidr", ["100.64.0.0/16", "8.8.0.0/16", "169.254.0.0/16", "127.0.0.0/16", "10.0.0.0/8"]
)
def test_vpc_cidr_outside_rfc1918_or_wrong_size(cidr: str) -> None:
    refused({"hp:vpcCidr": cidr}, "hp:vpcCidr")


@pytest.mark.parametrize(
    ("tags", "key"),
    [
        ({"team#1": "x"}, "hp:tags.team#1"),
        ({"k" * 129: "x"}, "hp:tags." + "k" * 129),
        ({"team": "v" * 257}, "hp:tags.team"),
        ({"team": "a<b"}, "hp:tags.team"),
        ({"aws:owner": "x"}, "hp:tags.aws:owner"),
        ({"": "x"}, "hp:tags."),
        ({f"t{i}": "x" for i in range(48)}, "hp:tags"),
    ],
)
def test_tags_aws_refuses(tags: dict[str, str], key: str) -> None:
    refused({"hp:tags": json.dumps(tags)}, key)


def test_unicode_tags_that_aws_accepts_are_kept() -> None:
    tags = {"équipe": "données ml", "cost-center": "42", "a/b:c=d+e@f": "."}
    config = parse({**BASE, "hp:tags": json.dumps(tags)}, stack="dev").config
    assert set(tags.items()) <= set(config.infrastructure.tags)


def test_dependencies_chart_must_be_a_chart(tmp_path: Path) -> None:
    refused(
        {"hp:hyperpodDependenciesChart": str(tmp_path / "absent")}, "hp:hyperpodDependenciesChart"
    )
    refused({"hp:hyperpodDependenciesChart": str(tmp_path)}, "hp:hyperpodDependenciesChart")
    (tmp_path / "Chart.yaml").write_text("name: x\n")
    config = parse({**BASE, "hp:hyperpodDependenciesChart": str(tmp_path)}, stack="dev").config
    assert config.infrastructure.cluster.dependencies_chart == str(tmp_path)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({"aws:region": ""}, "aws:region"),
        ({"aws:region": "us-east-7"}, "aws:region"),
        ({"aws:region": "US-EAST-1"}, "aws:region"),
        ({"aws-native:region": "us-west-2"}, "aws-native:region"),
        ({"aws-native:region": ""}, "aws-native:region"),
        ({"hp:clusterName": ARN.format(region="eu-west-1")}, "hp:clusterName"),
        ({"hp:clusterName": "arn:aws:sagemaker:us-east-1:1234:cluster/x"}, "hp:clusterName"),
        ({"hp:clusterName": "bad_name"}, "hp:clusterName"),
    ],
)
def test_regions_and_clusters(values: dict[str, str], key: str) -> None:
    refused(values, key)


def test_region_from_the_environment_when_the_stack_has_none() -> None:
    values = {k: v for k, v in BASE.items() if k != "aws:region"}
    assert parse(values, stack="dev", environment_region="us-east-1").config.region == "us-east-1"


def test_existing_cluster_mode_needs_no_native_region() -> None:
    values = {**BASE, "hp:clusterName": ARN.format(region="us-east-1")}
    del values["aws-native:region"]
    assert parse(values, stack="dev").config.region == "us-east-1"


def test_empty_deep_health_checks_are_accepted() -> None:
    group = {
        "name": "g",
        "instanceType": "ml.g5.12xlarge",
        "instanceCount": 1,
        "deepHealthChecks": [],
    }
    config = parse({**BASE, "hp:instanceGroups": json.dumps([group])}, stack="dev").config
    (parsed,) = config.infrastructure.cluster.instance_groups  # type: ignore[union-attr]
    assert parsed.deep_health_checks == ()


@pytest.mark.parametrize(
    "value", ["²", "٣", "\uff11", "9" * 5000, "1e3", "0x10", "-0", " 4 ", "+2", "true", "[1]", "{}"]
)
def test_unusual_numbers_never_raise(value: str) -> None:
    for key in ("replicas", "gpuCount", "speculativeNumTokens", "maxModelLen", "systemNodeCount"):
        try:
            parse({**BASE, f"hp:{key}": value, "hp:speculativeAlgorithm": "ngram"}, stack="dev")
        except ConfigError as error:
            assert all(p.key.startswith(f"hp:{key}") for p in error.problems), error


# Near the limits of AWS, KEDA and the HPA: what the second round of hostile input tried.
NUMBERS = st.sampled_from([0, 1, 2, 3600, 3601, 6758, 6759, 2**31, 2**63, -1]) | st.floats(
    min_value=0, max_value=0.01
)
INSTANCE_TYPES = st.sampled_from(
    [
        "ml.g5.12xlarge",
        "ml.g5.13xlarge",
        "ml.p3.8xlarge",
        "ml.c5.xlarge",
        "ml.inf2.xlarge",
        "ml.g7.2xlarge",
    ]
)
AUTOSCALING = st.fixed_dictionaries(
    {},
    optional={
        "minReplicas": NUMBERS,
        "maxReplicas": NUMBERS,
        "targetValue": NUMBERS,
        "scaleDownStabilizationTime": NUMBERS,
    },
)
LIMIT_VALUES = st.one_of(
    AUTOSCALING.map(json.dumps),
    st.lists(
        st.fixed_dictionaries(
            {"name": st.sampled_from(["a", "b", "c"]), "instanceType": INSTANCE_TYPES},
            optional={
                "gpuCount": st.integers(0, 9),
                "baseline": st.booleans(),
                "autoscaling": AUTOSCALING,
                "instanceCount": NUMBERS,
                "replicas": st.integers(0, 5),
            },
        ),
        max_size=3,
    ).map(json.dumps),
    INSTANCE_TYPES,
)
VALUES = st.one_of(
    st.text(max_size=30),
    st.integers(-(10**30), 10**30).map(str),
    LIMIT_VALUES,
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
        ),
        max_leaves=8,
    ).map(json.dumps),
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from([k.qualified for k in KEYS]), VALUES, max_size=6))
def test_any_values_give_a_config_or_errors_naming_keys(values: dict[str, str]) -> None:
    try:
        parse({**BASE, **values}, stack="dev")
    except ConfigError as error:
        assert error.problems
        for problem in error.problems:
            assert problem.key.startswith(("hp:", "aws:", "aws-native:")) and problem.message
            assert "\n" not in problem.message


@pytest.mark.parametrize(
    ("field", "uri"),
    [
        ("modelS3Uri", "s3://My_Bucket/models/x/"),
        ("modelS3Uri", "s3://ab/models/x/"),
        ("modelS3Uri", "s3://a..b/models/x/"),
        ("modelS3Uri", "s3://192.168.1.1/models/x/"),
        ("modelS3Uri", "s3://bucket/models//x/"),
        ("modelS3Uri", "s3://bucket//models/x/"),
        ("outputS3Uri", "s3://bucket-/out/"),
        ("dataset", "s3://-bucket/data.jsonl"),
    ],
)
def test_s3_buckets_and_prefixes_s3_refuses(field: str, uri: str) -> None:
    optimize = {
        "goal": "latency",
        "modelS3Uri": "s3://my-bucket/models/llama/",
        "roleArn": "arn:aws:iam::123456789012:role/Recommend",
        field: uri,
    }
    refused({"hp:optimize": json.dumps(optimize)}, f"hp:optimize.{field}")


def test_native_region_from_the_environment_when_the_stack_has_none() -> None:
    values = {k: v for k, v in BASE.items() if k != "aws-native:region"}
    assert parse(values, stack="dev", environment_region="us-east-1").config.region == "us-east-1"
    with pytest.raises(ConfigError) as raised:
        parse(values, stack="dev", environment_region="eu-west-1")
    assert [p.key for p in raised.value.problems] == ["aws-native:region"]


def test_optimize_is_a_warning_when_every_endpoint_is_explicit() -> None:
    optimize = {
        "goal": "latency",
        "modelS3Uri": "s3://my-bucket/models/llama/",
        "roleArn": "arn:aws:iam::123456789012:role/Recommend",
    }
    values = {**BASE, "hp:optimize": json.dumps(optimize), "hp:speculativeAlgorithm": "ngram"}
    warnings = parse(values, stack="dev").warnings
    assert "hp:optimize" in [w.key for w in warnings]
    del values["hp:speculativeAlgorithm"]
    assert "hp:optimize" not in [w.key for w in parse(values, stack="dev").warnings]


LIMIT_KEYS = [
    "hp:autoscaling",
    "hp:endpoints",
    "hp:instanceGroups",
    "hp:instanceType",
    "hp:gpuCount",
]


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(LIMIT_KEYS), LIMIT_VALUES | VALUES, max_size=4))
def test_an_accepted_config_keeps_aws_keda_and_hpa_limits(values: dict[str, str]) -> None:
    """Whatever is accepted is what HyperPod, KEDA and the HPA would take."""
    try:
        config = parse({**BASE, **values}, stack="dev").config
    except ConfigError:
        return
    cluster = config.infrastructure.cluster
    for group in getattr(cluster, "instance_groups", ()):
        assert group.instance_type in HYPERPOD_TYPES and 0 <= group.instance_count <= MOST_NODES
    for endpoint in config.endpoints:
        assert endpoint.instance_type in HYPERPOD_TYPES
        scaling = endpoint.autoscaling
        if scaling:
            assert int(scaling.target_value * 1000) >= 1  # KEDA's milli-quantity
            assert scaling.scale_down_stabilization_time <= 3600
            assert scaling.min_replicas <= scaling.max_replicas <= MOST_NODES
