"""The account's network rows against the local AWS (tests/local_aws.py checks every request and
reply against botocore's model): the Elastic IP quota against the NAT gateways, an existing
VPC's subnets in one Availability Zone, and the system nodes' pod room."""

from __future__ import annotations

import pytest
from aws_accounts import ample, example_account, serve, stack_config
from aws_network import Network, addresses_reply
from local_aws import LocalAWS, Reply, error

from mlcc.preflight import run as preflight_run
from mlcc.preflight.account import fetch as account_fetch
from mlcc.preflight.account.network import EIP_QUOTA_CODE, NodeNetwork
from mlcc.preflight.account.network_checks import (
    ASSUMED_PODS,
    DAEMONSET_PODS,
    DEPLOYMENT_PODS,
    network_part,
)
from mlcc.preflight.outcome import Mode, Outcome, settle

DEADLINE_S = 20.0
SUBNETS = '["subnet-0a1b2c3d4e5f60001", "subnet-0a1b2c3d4e5f60002"]'
EXISTING_VPC = {"hp:vpcId": "vpc-0a1b2c3d4e5f67890", "hp:privateSubnetIds": SUBNETS}


def run(fake: LocalAWS, network: Network | None = None, **overrides: str) -> Outcome:
    account = ample("ml.g5.12xlarge")
    account.network = network or Network()
    serve(fake, account)
    return network_part(stack_config("dev", overrides or None), DEADLINE_S)


def test_the_dev_stack_fits_and_the_line_gives_the_figures(aws: LocalAWS) -> None:
    outcome = run(aws)
    assert (outcome.errors, outcome.warnings, outcome.unchecked) == ((), (), ())
    assert outcome.lines[""] == (
        "Elastic IPs: 0 in use + 1 new, quota 5; system nodes 2 x m5.xlarge: 58 pods each, "
        f"add-ons need {DAEMONSET_PODS} each + {DEPLOYMENT_PODS} (partly assumed)",
    )
    asked = sorted(c.operation for c in aws.calls if c.service in ("ec2", "service-quotas"))
    assert asked == [
        "DescribeAddresses",
        "DescribeInstanceTypes",
        "GetAWSDefaultServiceQuota",  # no applied value: AWS's default
        "GetServiceQuota",
    ]
    quota_calls = [c.params for c in aws.calls if c.service == "service-quotas"]
    assert all(p == {"ServiceCode": "ec2", "QuotaCode": EIP_QUOTA_CODE} for p in quota_calls)


def test_the_vpc_cni_formula_gives_eks_max_pods() -> None:
    # awslabs/amazon-eks-ami files/eni-max-pods.txt: m5.large 29, m5.xlarge 58, t3.medium 17
    assert NodeNetwork("m5.large", 3, 10).max_pods == 29
    assert NodeNetwork("m5.xlarge", 4, 15).max_pods == 58
    assert NodeNetwork("t3.medium", 3, 6).max_pods == 17


def test_a_full_elastic_ip_quota_is_refused_with_the_command_that_raises_it(
    aws: LocalAWS,
) -> None:
    (problem,) = run(aws, Network(addresses=5)).errors
    assert problem.key == "hp:vpcId"
    assert "EC2 quota 'EC2-VPC Elastic IPs' (L-0263D0A3) is 5 in us-east-1 (the AWS default)" in (
        problem.message
    )
    assert "5 Elastic IP(s) are in use there" in problem.message
    assert "Use an existing VPC (hp:vpcId, hp:privateSubnetIds)" in problem.message
    assert problem.message.endswith(
        "--service-code ec2 --quota-code L-0263D0A3 --desired-value 6 --region us-east-1"
    )


def test_nat_gateways_per_az_need_one_address_each(aws: LocalAWS) -> None:
    network = Network(eip_applied=10.0, addresses=9)
    outcome = run(aws, network, **{"hp:natGatewayPerAz": "true"})
    (problem,) = outcome.errors
    assert problem.key == "hp:natGatewayPerAz"
    assert "is 10 in us-east-1 (the applied value)" in problem.message
    assert "2 NAT gateways (hp:natGatewayPerAz: one per Availability Zone) need 2" in (
        problem.message
    )
    assert "Set hp:natGatewayPerAz: false (one NAT gateway, one address)" in problem.message
    assert "--desired-value 11" in problem.message
    # The applied value answered: AWS's default was not asked for.
    assert "GetAWSDefaultServiceQuota" not in aws.operations("service-quotas")


def test_room_for_exactly_the_new_addresses_passes(aws: LocalAWS) -> None:
    outcome = run(aws, Network(addresses=3), **{"hp:natGatewayPerAz": "true"})
    assert outcome.errors == ()
    assert "Elastic IPs: 3 in use + 2 new, quota 5" in outcome.lines[""][0]


def test_existing_subnets_in_one_zone_are_refused(aws: LocalAWS) -> None:
    network = Network(
        zones=dict.fromkeys(["subnet-0a1b2c3d4e5f60001", "subnet-0a1b2c3d4e5f60002"], "us-east-1a")
    )
    outcome = run(aws, network, **EXISTING_VPC)
    (problem,) = outcome.errors
    assert problem.key == "hp:privateSubnetIds"
    assert problem.message.startswith(
        "subnet-0a1b2c3d4e5f60001, subnet-0a1b2c3d4e5f60002 are all in us-east-1a; EKS needs "
        "subnets in at least 2 Availability Zones (docs.aws.amazon.com/eks/latest/userguide/"
        "network-reqs.html)"
    )
    # An existing VPC: no NAT gateway is created, so no Elastic IP is asked about.
    assert aws.operations("service-quotas") == []
    assert "DescribeAddresses" not in aws.operations("ec2")
    (call,) = [c for c in aws.calls if c.operation == "DescribeSubnets"]
    assert call.params == {"SubnetIds": ["subnet-0a1b2c3d4e5f60001", "subnet-0a1b2c3d4e5f60002"]}


def test_existing_subnets_in_two_zones_pass(aws: LocalAWS) -> None:
    outcome = run(aws, Network(), **EXISTING_VPC)
    assert (outcome.errors, outcome.warnings, outcome.unchecked) == ((), (), ())
    assert outcome.lines[""][0].startswith("private subnets in 2 Availability Zone(s); ")


def test_a_subnet_that_does_not_exist_is_refused(aws: LocalAWS) -> None:
    outcome = run(aws, Network(missing={"subnet-0a1b2c3d4e5f60002"}), **EXISTING_VPC)
    (problem,) = outcome.errors
    assert problem.key == "hp:privateSubnetIds"
    assert "The subnet ID 'subnet-0a1b2c3d4e5f60002' does not exist" in problem.message


def test_a_small_system_node_type_is_a_warning_never_a_refusal(aws: LocalAWS) -> None:
    overrides = {"hp:systemNodeInstanceType": "t3.medium", "hp:systemNodeCount": "1"}
    outcome = run(aws, **overrides)
    assert outcome.errors == () and outcome.unchecked == ()
    (warning,) = outcome.warnings
    assert warning.key == "hp:systemNodeInstanceType"
    room = 17 - DAEMONSET_PODS
    assert warning.message.startswith(
        "t3.medium takes at most 17 pods per node (AWS VPC CNI: 3 ENIs x (6 IPv4 addresses - 1) "
        f"+ 2); 1 system node(s) leave room for {room} pods"
    )
    assert f"need about {DEPLOYMENT_PODS} ({ASSUMED_PODS} of these pods are assumed" in (
        warning.message
    )
    assert "or more nodes (hp:systemNodeCount)" in warning.message
    # Under strict too: the counts are partly assumed, so this never refuses.
    errors, _ = settle(outcome, Mode.STRICT)
    assert errors == []


def test_two_small_nodes_hold_the_add_ons(aws: LocalAWS) -> None:
    overrides = {"hp:systemNodeInstanceType": "t3.medium", "hp:systemNodeCount": "2"}
    assert run(aws, **overrides).warnings == ()


def test_a_type_ec2_does_not_list_is_a_warning(aws: LocalAWS) -> None:
    (warning,) = run(aws, **{"hp:systemNodeInstanceType": "m7i.xlarge"}).warnings
    assert warning.key == "hp:systemNodeInstanceType"
    assert "EC2 lists no instance type m7i.xlarge in us-east-1" in warning.message


@pytest.mark.parametrize(
    "info",
    [
        {"MaximumNetworkInterfaces": 0, "Ipv4AddressesPerInterface": 15},
        {"MaximumNetworkInterfaces": 4, "Ipv4AddressesPerInterface": -1},
        {"MaximumNetworkInterfaces": 4},
        {"MaximumNetworkInterfaces": 100000, "Ipv4AddressesPerInterface": 15},
    ],
)
def test_network_figures_no_instance_has_are_not_checked(
    aws: LocalAWS, info: dict[str, int]
) -> None:
    serve(aws, ample("ml.g5.12xlarge"))
    reply = {"InstanceTypes": [{"InstanceType": "m5.xlarge", "NetworkInfo": info}]}
    aws.on("DescribeInstanceTypes", Reply(body=reply), "ec2")
    outcome = network_part(stack_config("dev"), DEADLINE_S)
    (missed,) = outcome.unchecked
    assert missed.key == "hp:systemNodeInstanceType"
    assert "not counts" in missed.why
    assert outcome.warnings == () and outcome.errors == ()


def test_denied_addresses_are_a_warning_naming_the_iam_action(aws: LocalAWS) -> None:
    serve(aws, ample("ml.g5.12xlarge"))
    aws.on("DescribeAddresses", error("UnauthorizedOperation", "no", 403), "ec2")
    outcome = network_part(stack_config("dev"), DEADLINE_S)
    (warning,) = outcome.warnings
    assert warning.key == "hp:vpcId"
    assert "grant the IAM action ec2:DescribeAddresses" in warning.message
    assert "Elastic IP quota: not checked" in outcome.lines[""][0]


def test_a_throttled_quota_is_unchecked_and_strict_makes_it_an_error(aws: LocalAWS) -> None:
    serve(aws, ample("ml.g5.12xlarge"))
    aws.on("GetServiceQuota", error("ThrottlingException", "Rate exceeded"), "service-quotas")
    outcome = network_part(stack_config("dev", {"hp:natGatewayPerAz": "true"}), DEADLINE_S)
    (missed,) = outcome.unchecked
    assert missed.key == "hp:natGatewayPerAz"
    assert "throttled (ThrottlingException)" in missed.why
    assert aws.operations("service-quotas").count("GetServiceQuota") == (account_fetch.MAX_ATTEMPTS)
    errors, warnings = settle(outcome, Mode.STRICT)
    assert [p.key for p in errors] == ["hp:natGatewayPerAz"] and warnings == []


@pytest.mark.parametrize("value", [-1, 2.5, 1e12])
def test_a_quota_that_is_no_count_is_unchecked_never_shown(aws: LocalAWS, value: float) -> None:
    serve(aws, ample("ml.g5.12xlarge"))
    aws.on("GetServiceQuota", lambda _r: _quota(value), "service-quotas")
    outcome = network_part(stack_config("dev"), DEADLINE_S)
    (missed,) = outcome.unchecked
    assert missed.key == "hp:vpcId" and "Service Quotas answered" in missed.why
    assert "Elastic IPs:" not in outcome.lines[""][0]
    aws.reply_problems.clear()  # -1 is below the model's minimum: botocore parses it anyway


def _quota(value: float) -> Reply:
    from aws_network import quota_reply

    return quota_reply(value)


def test_a_silent_ec2_costs_the_deadline_and_is_unchecked(aws: LocalAWS) -> None:
    serve(aws, ample("ml.g5.12xlarge"))
    aws.on("DescribeAddresses", Reply(body=addresses_reply(0).body, delay_s=30), "ec2")
    outcome = network_part(stack_config("dev"), 0.5)
    assert [u.key for u in outcome.unchecked] == ["hp:vpcId"]
    assert "no answer" in outcome.unchecked[0].why


@pytest.mark.parametrize("stack", ["existing"])
def test_an_existing_cluster_has_no_network_rows(aws: LocalAWS, stack: str) -> None:
    serve(aws, example_account())
    assert network_part(stack_config(stack), DEADLINE_S) == Outcome()
    assert aws.calls == []


def test_the_network_rows_are_a_preflight_part() -> None:
    assert preflight_run.network_part in preflight_run.PARTS
    assert preflight_run.network_part not in preflight_run.AWS_FREE_PARTS
