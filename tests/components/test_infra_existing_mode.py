"""Existing-cluster mode under Pulumi's mocks: only the image, the provider and the endpoint."""

from __future__ import annotations

import json
from typing import Any

import pytest
from program_runs import CR_TYPE, IMAGE, run_main

from mlcc.components.cluster import existing as existing_cluster
from mlcc.plan import mocks as offline

EXISTING_TYPES = [
    "aws:ecr/lifecyclePolicy:LifecyclePolicy",
    "aws:ecr/repositoryPolicy:RepositoryPolicy",
    "aws:ecr/repository:Repository",
    "docker-build:index:Image",
    "hp:index:EndpointNamespace",
    "hp:index:ExistingClusterAccess",
    "hp:index:EndpointsReadiness",  # the deploy wait (docs/deploy.md)
    "hp:index:InferenceEndpoint",
    "hp:index:ServeImage",
    CR_TYPE,
    "kubernetes:core/v1:Namespace",
    "pulumi:providers:kubernetes",
]


@pytest.fixture(scope="module")
def run() -> offline.OfflineRun:
    return run_main(stack="existing")


def test_only_images_provider_and_endpoint_are_created(run: offline.OfflineRun) -> None:
    assert sorted(r.type for r in run.registrations) == sorted(EXISTING_TYPES)


def test_provider_reaches_the_eks_cluster_behind_the_hyperpod_cluster(
    run: offline.OfflineRun,
) -> None:
    provider = run.one("pulumi:providers:kubernetes")
    kubeconfig = json.loads(provider.inputs["kubeconfig"])
    assert (
        kubeconfig["clusters"][0]["cluster"]["server"]
        == "https://MOCK.gr7.us-east-1.eks.amazonaws.com"
    )
    assert kubeconfig["users"][0]["user"]["exec"]["args"] == [
        "eks",
        "get-token",
        "--cluster-name",
        "existing-eks",
        "--region",
        "us-east-1",
    ]
    cr = run.one(CR_TYPE)
    # The endpoint's children use this provider (given to the component with `providers=`).
    for child in (cr, run.one("kubernetes:core/v1:Namespace")):
        assert child.provider is not None and child.provider.startswith(provider.urn + "::")
    assert cr.inputs["spec"]["worker"]["image"] == run.outputs["image"]


def test_existing_mode_builds_the_selected_engine(run: offline.OfflineRun) -> None:
    image = run.one("docker-build:index:Image").inputs
    assert image["dockerfile"]["location"].endswith("images/sglang/Dockerfile")
    assert image["platforms"] == ["linux/amd64"]
    assert run.one("aws:ecr/repository:Repository").inputs["imageTagMutability"] == "IMMUTABLE"


def test_existing_mode_with_a_prebuilt_image_creates_only_provider_and_endpoint() -> None:
    run = run_main({"image": IMAGE}, stack="existing")
    assert sorted(r.type for r in run.registrations) == sorted(
        [
            "hp:index:EndpointNamespace",
            "hp:index:ExistingClusterAccess",
            "hp:index:EndpointsReadiness",
            "hp:index:InferenceEndpoint",
            CR_TYPE,
            "kubernetes:core/v1:Namespace",
            "pulumi:providers:kubernetes",
        ]
    )
    assert run.one(CR_TYPE).inputs["spec"]["worker"]["image"] == IMAGE


@pytest.mark.parametrize("stack", ["dev", "existing"])
def test_changing_only_speculative_keys_changes_only_the_endpoint_spec(stack: str) -> None:
    before = run_main(stack=stack)
    after = run_main(
        {"speculativeAlgorithm": "ngram", "speculativeModel": None, "speculativeNumTokens": "3"},
        stack=stack,
    )
    before_inputs = {(r.type, r.name): r.inputs for r in before.registrations}
    after_inputs = {(r.type, r.name): r.inputs for r in after.registrations}
    assert before_inputs.keys() == after_inputs.keys()
    changed = [key for key in before_inputs if before_inputs[key] != after_inputs[key]]
    assert changed == [(CR_TYPE, "endpoint")]
    cr_before, cr_after = before_inputs[(CR_TYPE, "endpoint")], after_inputs[(CR_TYPE, "endpoint")]
    assert cr_before["metadata"] == cr_after["metadata"]
    assert cr_before["spec"]["worker"]["image"] == cr_after["spec"]["worker"]["image"]
    assert cr_before["spec"] != cr_after["spec"]


def test_the_existing_nodes_may_pull_the_built_image(run: offline.OfflineRun) -> None:
    policy = json.loads(run.one("aws:ecr/repositoryPolicy:RepositoryPolicy").inputs["policy"])
    assert policy["Statement"][1]["Principal"] == {
        "AWS": [f"arn:aws:iam::{offline.ACCOUNT_ID}:role/existing-hyperpod-nodes"]
    }


def test_an_instance_type_the_existing_cluster_lacks_is_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    run_main({"instanceType": "ml.p5.48xlarge"}, stack="existing")
    assert any(
        "hp:instanceType: ml.p5.48xlarge is not the type of any instance group" in m
        for m in caplog.messages
    )


def test_the_eks_cluster_name_is_an_output_as_in_create_mode(run: offline.OfflineRun) -> None:
    """docs/getting-started.md's
    `aws eks update-kubeconfig --name "$(pulumi stack output eksClusterName)"`."""
    assert run.outputs["eksClusterName"] == "existing-eks"


def stubbed_sagemaker(region: str | None, requested: list[str | None]) -> Any:
    """A real SageMaker client whose DescribeCluster answers one EKS-orchestrated cluster."""
    import boto3
    from botocore.stub import Stubber

    requested.append(region)
    client = boto3.client(
        "sagemaker",
        region_name=region or "us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="y",
    )
    stubber = Stubber(client)
    stubber.add_response(
        "describe_cluster",
        {
            "ClusterArn": f"arn:aws:sagemaker:{region}:{offline.ACCOUNT_ID}:cluster/abc123",
            "ClusterStatus": "InService",
            "InstanceGroups": [
                {
                    "InstanceGroupName": "gpu",
                    "InstanceType": "ml.g5.12xlarge",
                    "CurrentCount": 1,
                    "ExecutionRole": f"arn:aws:iam::{offline.ACCOUNT_ID}:role/by-name-nodes",
                }
            ],
            "Orchestrator": {
                "Eks": {"ClusterArn": f"arn:aws:eks:{region}:{offline.ACCOUNT_ID}:cluster/by-name"}
            },
        },
        {"ClusterName": "my-hyperpod"},
    )
    stubber.activate()
    return client


def test_a_cluster_name_is_looked_up_in_the_stacks_region_not_the_environments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    requested: list[str | None] = []
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-south-1")
    monkeypatch.setattr(
        existing_cluster, "sagemaker_client", lambda region: stubbed_sagemaker(region, requested)
    )
    run = run_main(
        {
            "clusterName": "my-hyperpod",
            "aws:region": "eu-west-1",
            "aws-native:region": "eu-west-1",
            "image": IMAGE,
        },
        stack="existing",
    )
    assert requested == ["eu-west-1"]
    assert run.outputs["eksClusterName"] == "by-name"


def test_a_cluster_name_without_any_region_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    import pulumi

    for variable in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_CONFIG_FILE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    with caplog.at_level(logging.ERROR), pytest.raises(pulumi.RunError, match="errors above"):
        run_main({"clusterName": "my-hyperpod", "aws:region": None}, stack="existing")
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert "aws:region: is not set; set it with `pulumi config set aws:region us-east-1`" in errors
