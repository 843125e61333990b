"""Parsing of the infrastructure keys (pure: no Pulumi runtime)."""

from __future__ import annotations

import json

import pytest

from mlcc.config.aws.subnets import subnet_plan
from mlcc.config.infrastructure import (
    DEEP_HEALTH_CHECKS,
    ExistingCluster,
    ExistingNetwork,
    InstanceGroup,
    NewCluster,
    NewNetwork,
)
from mlcc.config.stack import ConfigError, Parsed, parse

BASE = {
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "aws:region": "us-east-1",
    "aws-native:region": "us-east-1",
}
GROUP = {"name": "g5", "instanceType": "ml.g5.12xlarge", "instanceCount": 2}
HYPERPOD_ARN = "arn:aws:sagemaker:us-east-1:123456789012:cluster/a1b2c3d4e5f6"


def parse_with(**overrides: object) -> Parsed:
    values = dict(BASE)
    for key, value in overrides.items():
        values[f"hp:{key}"] = value if isinstance(value, str) else json.dumps(value)
    return parse(values, stack="dev")


def error_keys(**overrides: object) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        parse_with(**overrides)
    return [p.key for p in raised.value.problems]


def new_cluster(parsed: Parsed) -> NewCluster:
    cluster = parsed.config.infrastructure.cluster
    assert isinstance(cluster, NewCluster)
    return cluster


def test_defaults_create_everything_with_one_group_of_the_endpoint_type() -> None:
    parsed = parse_with()
    cluster = new_cluster(parsed)
    assert parsed.config.image is None  # empty hp:image = build ours, not an error
    assert cluster.kubernetes_version == "1.34"  # the table's default on the tests' date
    assert cluster.instance_groups == (InstanceGroup("gpu", "ml.g5.12xlarge", 1),)
    assert cluster.instance_groups[0].deep_health_checks == DEEP_HEALTH_CHECKS
    assert (cluster.eks_cluster_name, cluster.hyperpod_cluster_name) == ("hp-dev", "hp-dev")
    assert (cluster.system_node_instance_type, cluster.system_node_count) == ("m5.xlarge", 2)
    assert cluster.network == NewNetwork(
        "10.0.0.0/16", ("10.0.0.0/18", "10.0.64.0/18"), ("10.0.128.0/24", "10.0.129.0/24"), False
    )
    assert parsed.config.infrastructure.tag_map == {
        "project": "hp",
        "stack": "dev",
        "managed-by": "pulumi",
    }


def test_default_group_follows_instance_type_and_replicas() -> None:
    cluster = new_cluster(parse_with(instanceType="ml.p5.48xlarge", replicas="3"))
    assert cluster.instance_groups == (InstanceGroup("gpu", "ml.p5.48xlarge", 3),)


def test_explicit_groups_are_parsed_with_their_defaults() -> None:
    groups = [
        {**GROUP, "ebsVolumeSizeGb": 1000, "threadsPerCore": 2, "deepHealthChecks": []},
        {"name": "p5", "instanceType": "ml.p5.48xlarge", "instanceCount": 0},
    ]
    cluster = new_cluster(parse_with(instanceGroups=groups))
    assert cluster.instance_groups == (
        InstanceGroup("g5", "ml.g5.12xlarge", 2, 1000, 2, ()),
        InstanceGroup("p5", "ml.p5.48xlarge", 0, 500, 1, DEEP_HEALTH_CHECKS),
    )


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"instanceGroups": [{**GROUP, "instanseType": "x"}]}, "hp:instanceGroups[0].instanseType"),
        (
            {"instanceGroups": [{**GROUP, "instanceType": "p5.48xlarge"}]},
            "hp:instanceGroups[0].instanceType",
        ),
        (
            {"instanceGroups": [{**GROUP, "threadsPerCore": 3}]},
            "hp:instanceGroups[0].threadsPerCore",
        ),
        (
            {"instanceGroups": [{**GROUP, "instanceCount": "2"}]},
            "hp:instanceGroups[0].instanceCount",
        ),
        (
            {"instanceGroups": [{k: v for k, v in GROUP.items() if k != "instanceCount"}]},
            "hp:instanceGroups[0].instanceCount",
        ),
        (
            {"instanceGroups": [{**GROUP, "ebsVolumeSizeGb": 0}]},
            "hp:instanceGroups[0].ebsVolumeSizeGb",
        ),
        (
            {"instanceGroups": [{**GROUP, "deepHealthChecks": ["Stress"]}]},
            "hp:instanceGroups[0].deepHealthChecks",
        ),
        ({"instanceGroups": [{**GROUP, "name": "bad_name"}]}, "hp:instanceGroups[0].name"),
        ({"instanceGroups": [GROUP, GROUP]}, "hp:instanceGroups"),
        ({"instanceGroups": {"name": "g5"}}, "hp:instanceGroups"),
        ({"instanceGroups": [{**GROUP, "instanceType": "ml.g6e.12xlarge"}]}, "hp:instanceType"),
        ({"kubernetesVersion": "1.35"}, "hp:kubernetesVersion"),
        ({"kubernetesVersion": "1.31"}, "hp:kubernetesVersion"),
        ({"vpcCidr": "10.0.0.0/24"}, "hp:vpcCidr"),
        ({"vpcCidr": "8.8.0.0/16"}, "hp:vpcCidr"),
        ({"vpcCidr": "not-a-cidr"}, "hp:vpcCidr"),
        ({"natGatewayPerAz": "maybe"}, "hp:natGatewayPerAz"),
        (
            {"privateSubnetIds": ["subnet-0123456789abcdef0"], "vpcId": "vpc-0123456789abcdef0"},
            "hp:privateSubnetIds",
        ),
        (
            {"privateSubnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]},
            "hp:vpcId",
        ),
        (
            {"privateSubnetIds": "subnet-0123456789abcdef0", "vpcId": "vpc-0123456789abcdef0"},
            "hp:privateSubnetIds",
        ),
        ({"systemNodeInstanceType": "m7g.large"}, "hp:systemNodeInstanceType"),
        ({"systemNodeInstanceType": "ml.m5.large"}, "hp:systemNodeInstanceType"),
        ({"systemNodeCount": "0"}, "hp:systemNodeCount"),
        ({"tags": {"aws:owner": "me"}}, "hp:tags.aws:owner"),
        ({"tags": {"owner": {"nested": 1}}}, "hp:tags.owner"),
        ({"tags": ["a"]}, "hp:tags"),
        ({"clusterName": "arn:aws:sagemaker:us-east-1:123:cluster/x"}, "hp:clusterName"),
        ({"clusterName": "bad_name!"}, "hp:clusterName"),
    ],
)
def test_bad_infrastructure_input_names_the_key(overrides: dict[str, object], key: str) -> None:
    assert key in error_keys(**overrides)


def test_every_infrastructure_error_is_reported_at_once() -> None:
    keys = error_keys(
        kubernetesVersion="1.20",
        vpcCidr="10.0.0.0/8",
        instanceGroups=[{**GROUP, "threadsPerCore": 4}],
        systemNodeCount="50",
    )
    assert set(keys) == {
        "hp:kubernetesVersion",
        "hp:vpcCidr",
        "hp:instanceGroups[0].threadsPerCore",
        "hp:systemNodeCount",
    }


def test_existing_network_uses_the_given_ids() -> None:
    private = ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
    cluster = new_cluster(parse_with(vpcId="vpc-0123456789abcdef0", privateSubnetIds=private))
    assert cluster.network == ExistingNetwork("vpc-0123456789abcdef0", tuple(private), ())


def test_user_tags_are_added_to_the_defaults() -> None:
    tags = parse_with(tags={"team": "ml", "stack": "override"}).config.infrastructure.tag_map
    assert tags == {"project": "hp", "stack": "override", "managed-by": "pulumi", "team": "ml"}


def test_cluster_name_selects_existing_mode_and_warns_about_create_only_keys() -> None:
    parsed = parse_with(clusterName=HYPERPOD_ARN, instanceGroups=[GROUP])
    assert parsed.config.infrastructure.cluster == ExistingCluster(HYPERPOD_ARN)
    assert [w.key for w in parsed.warnings] == ["hp:instanceGroups"]


def test_existing_mode_does_not_cross_check_instance_groups() -> None:
    parsed = parse_with(clusterName="my-cluster", instanceType="ml.p5.48xlarge")
    cluster = parsed.config.infrastructure.cluster
    assert isinstance(cluster, ExistingCluster) and cluster.name_or_arn == "my-cluster"


@pytest.mark.parametrize(
    ("cidr", "private", "public"),
    [
        ("10.0.0.0/16", ("10.0.0.0/18", "10.0.64.0/18"), ("10.0.128.0/24", "10.0.129.0/24")),
        (
            "172.16.0.0/17",
            ("172.16.0.0/19", "172.16.32.0/19"),
            ("172.16.64.0/24", "172.16.65.0/24"),
        ),
        (
            "192.168.0.0/18",
            ("192.168.0.0/20", "192.168.16.0/20"),
            ("192.168.32.0/24", "192.168.33.0/24"),
        ),
    ],
)
def test_subnet_plan_gives_large_private_subnets(
    cidr: str, private: tuple[str, ...], public: tuple[str, ...]
) -> None:
    assert subnet_plan(cidr) == (private, public)


def test_more_replicas_than_gpu_capacity_is_refused() -> None:
    """The third pod would stay Pending at deploy (tests/config/test_capacity.py has the rest)."""
    assert error_keys(replicas="3", instanceGroups=[GROUP]) == ["hp:instanceGroups"]
    assert parse_with(replicas="2", instanceGroups=[GROUP]).warnings == ()
    two_per_node = parse_with(replicas="4", gpuCount="2", instanceGroups=[GROUP])
    assert two_per_node.warnings == ()
