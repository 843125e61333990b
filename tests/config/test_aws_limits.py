"""AWS's own limits, read from botocore's SageMaker model: the instance types a HyperPod group
takes (on every path a type reaches the stack) and the counts of nodes and groups."""

from __future__ import annotations

import json

import botocore.session
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlcc.config.stack import ConfigError, parse

REGIONS = {"aws:region": "us-east-1", "aws-native:region": "us-east-1"}
BASE = {"hp:model": "meta-llama/Llama-3.1-8B-Instruct", **REGIONS}
ARN = "arn:aws:sagemaker:us-east-1:123456789012:cluster/a1b2c3d4e5f6"
_MODEL = botocore.session.get_session().get_service_model("sagemaker")
HYPERPOD_TYPES = frozenset(_MODEL.shape_for("ClusterInstanceType").enum)
COUNT = _MODEL.shape_for("ClusterInstanceCount").metadata
GROUPS = _MODEL.shape_for("ClusterInstanceGroupSpecifications").metadata


def outcome(values: dict[str, str]) -> list[str]:
    """The error lines, or [] when the stack parses."""
    try:
        parse({**BASE, **values}, stack="dev")
    except ConfigError as error:
        return [str(p) for p in error.problems]
    return []


def group(instance_type: str = "ml.g5.12xlarge", count: object = 1, name: str = "g") -> dict:
    return {"name": name, "instanceType": instance_type, "instanceCount": count}


def groups(*items: dict) -> dict[str, str]:
    return {"hp:instanceGroups": json.dumps(list(items))}


# A SageMaker type HyperPod does not offer (an endpoint type, older GPUs), and made-up ones.
OUTSIDE = ["ml.p3.8xlarge", "ml.inf2.xlarge", "ml.g5.13xlarge", "ml.made.up", "ml.g5e.12xlarge"]


@pytest.mark.parametrize("instance_type", OUTSIDE)
@pytest.mark.parametrize(
    ("where", "key"),
    [
        (
            lambda t: {"hp:instanceType": t, "hp:gpuCount": "1", **groups(group(t))},
            "hp:instanceType",
        ),
        (
            lambda t: {
                "hp:endpoints": json.dumps([{"name": "a", "instanceType": t, "gpuCount": 2}]),
                **groups(group(t)),
            },
            "hp:endpoints[0].instanceType",
        ),
        (
            lambda t: {"hp:instanceTypes": json.dumps([t]), "hp:gpuCount": "1", **groups(group(t))},
            "hp:instanceTypes[0]",
        ),
        (lambda t: groups(group(), group(t, name="h")), "hp:instanceGroups[1].instanceType"),
        (
            lambda t: {"hp:clusterName": ARN, "hp:instanceType": t, "hp:gpuCount": "1"},
            "hp:instanceType",
        ),
    ],
    ids=["instanceType", "endpoints", "instanceTypes", "instanceGroups", "existing-cluster"],
)
def test_a_type_hyperpod_does_not_offer_is_refused_on_every_path_even_with_gpu_count(
    instance_type: str, where: object, key: str
) -> None:
    assert callable(where)
    lines = outcome(where(instance_type))
    mine = [line for line in lines if line.startswith(f"{key}: ")]
    assert mine == [
        line for line in mine if f"{instance_type!r} is not a HyperPod instance type" in line
    ]
    assert len(mine) == 1, lines


def test_the_refusal_lists_the_family_sizes_hyperpod_offers() -> None:
    (line,) = outcome({"hp:instanceType": "ml.g5.13xlarge", "hp:gpuCount": "1"})
    assert line.endswith(
        "its g5 sizes: xlarge, 2xlarge, 4xlarge, 8xlarge, 12xlarge, 16xlarge, 24xlarge, 48xlarge"
    )


@pytest.mark.parametrize("instance_type", ["ml.c5.xlarge", "ml.trn1.32xlarge", "ml.m5.large"])
def test_a_hyperpod_type_without_an_nvidia_gpu_is_refused_even_with_gpu_count(
    instance_type: str,
) -> None:
    lines = outcome({"hp:instanceType": instance_type, "hp:gpuCount": "1"})
    assert lines == [
        f"hp:instanceType: {instance_type} has no NVIDIA GPU (HyperPod's GPU types are the ml.g* "
        "and ml.p* families); hp:gpuCount cannot give it one"
    ]


def test_a_hyperpod_gpu_type_missing_from_the_gpu_table_is_taken_with_gpu_count() -> None:
    """gpuCount is the way in for a GPU type the model has and instances.py does not (yet)."""
    unknown = sorted(
        t for t in HYPERPOD_TYPES if t.startswith(("ml.g", "ml.p")) and t not in _known_types()
    )
    assert unknown, "every HyperPod GPU type is in instances.GPU_COUNTS"
    parsed = parse({**BASE, "hp:instanceType": unknown[0], "hp:gpuCount": "1"}, stack="dev")
    assert parsed.config.primary.instance_type == unknown[0]


def _known_types() -> set[str]:
    from mlcc.config.aws.instances import GPU_COUNTS

    return set(GPU_COUNTS)


def test_every_type_of_the_gpu_table_is_one_hyperpod_offers() -> None:
    assert _known_types() <= HYPERPOD_TYPES


def test_instance_counts_take_the_models_bounds() -> None:
    low, high = COUNT["min"], COUNT["max"]
    assert outcome(groups(group(count=high))) == []
    assert outcome(groups(group(count=low))) == []
    for bad in (high + 1, low - 1, 2**63, "3", 1.5, True):
        (line,) = outcome(groups(group(count=bad)))
        assert line.startswith(
            f"hp:instanceGroups[0].instanceCount: must be a whole number from {low} to {high}"
        )


def test_more_groups_than_a_cluster_takes_are_refused() -> None:
    most = GROUPS["max"]
    many = [group(name=f"g{i}") for i in range(most + 1)]
    assert f"hp:instanceGroups: has {most + 1} groups; a HyperPod cluster takes at most {most}" in (
        outcome(groups(*many))
    )


def test_the_default_group_stays_within_the_models_node_count() -> None:
    """A node per replica: endpoints whose replicas add up past the model's maximum."""
    high = COUNT["max"]
    entries = [{"name": f"e{i}", "replicas": 100} for i in range(high // 100 + 1)]
    lines = outcome({"hp:endpoints": json.dumps(entries)})
    assert any(
        line.startswith("hp:instanceGroups: the default group gpu would need")
        and f"a HyperPod group has at most {high}" in line
        for line in lines
    ), lines


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    instance_type=st.sampled_from(sorted(HYPERPOD_TYPES))
    | st.from_regex(r"\Aml\.[a-z0-9-]{1,8}\.[a-z0-9]{1,9}\Z")
    | st.text(max_size=30),
    gpus=st.integers(1, 8),
    path=st.sampled_from(["top", "entry", "group"]),
)
def test_any_type_reaches_a_plan_only_when_hyperpod_offers_it(
    instance_type: str, gpus: int, path: str
) -> None:
    if path == "top":
        values = {"hp:instanceType": instance_type, "hp:gpuCount": str(gpus)}
    elif path == "entry":
        entry = {"name": "a", "instanceType": instance_type, "gpuCount": gpus}
        values = {"hp:endpoints": json.dumps([entry])}
    else:
        values = {**groups(group(instance_type)), "hp:instanceType": instance_type}
        values["hp:gpuCount"] = str(gpus)
    try:
        parsed = parse({**BASE, **values}, stack="dev")
    except ConfigError as error:
        assert all("\n" not in str(p) for p in error.problems)
        return
    assert parsed.config.primary.instance_type in HYPERPOD_TYPES
