"""AWS accounts for the account preflight, served by the local AWS (tests/local_aws.py).

An `Account` holds what a real account would answer: SageMaker quotas (applied and AWS
defaults), the inference add-on's versions in the region, HyperPod clusters with their nodes,
EKS clusters with their add-ons, and EC2's GPU figures. `serve` scripts every read-only call
preflight makes from it, paginating the lists as AWS does, so the client's paginators are used.
Quota codes here are made up (L- and 8 hex digits, the shape of real ones); preflight finds a
quota by its name, never by a code.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aws_network
import ecr_images
import price_list
import pytest
from botocore.retries.standard import ExponentialBackoff
from local_aws import MODELS, LocalAWS, Reply, error, local_aws
from program_runs import stack_values

from mlcc.config import stack as config
from mlcc.config.infrastructure import INFERENCE_ADDON
from mlcc.config.stack import StackConfig
from mlcc.preflight.account.part import IAM_ACTIONS
from mlcc.preflight.bounded.parallel import THREAD_PREFIX

ACCOUNT_ID = "123456789012"
REGION = "us-east-1"
PAGE = 2  # items per page of every list, so that paginating is exercised
# Quotas of other usages and types around the ones a stack needs, as a real list has them.
OTHER_QUOTAS = {
    "ml.g5.12xlarge for endpoint usage": 2.0,
    "ml.g5.12xlarge for training job usage": 0.0,
    "ml.p5.48xlarge for cluster usage": 0.0,
    "Maximum number of instances per cluster": 2500.0,
    "Total number of instances allowed across SageMaker HyperPod clusters": 5.0,
}
# A recorded EC2 DescribeInstanceTypes reply (its source is in the file).
RECORDED_EC2 = json.loads(
    (Path(__file__).parent / "fixtures" / "describe_instance_types.json").read_text()
)
EC2_TYPES = {item["InstanceType"]: item for item in RECORDED_EC2["reply"]["InstanceTypes"]}
EC2_TYPES |= aws_network.NETWORK_TYPES  # the system node types' NetworkInfo


def quota_code(name: str) -> str:
    return "L-" + hashlib.sha256(name.encode()).hexdigest()[:8].upper()


def hyperpod_arn(name: str) -> str:
    suffix = hashlib.sha256(name.encode()).hexdigest()[:12]
    return f"arn:aws:sagemaker:{REGION}:{ACCOUNT_ID}:cluster/{suffix}"


def eks_arn(name: str) -> str:
    return f"arn:aws:eks:{REGION}:{ACCOUNT_ID}:cluster/{name}"


@dataclass
class Group:
    name: str
    instance_type: str
    running: int
    pending: int = 0


@dataclass
class HyperPod:
    name: str
    status: str = "InService"
    groups: list[Group] = field(default_factory=list)
    eks_name: str = "hp-existing-eks"
    failure: str = ""
    arn: str = ""  # "" : one made from the name

    def __post_init__(self) -> None:
        self.arn = self.arn or hyperpod_arn(self.name)


@dataclass
class Addon:
    version: str = "v1.2.0-eksbuild.1"
    status: str = "ACTIVE"
    issues: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Account:
    applied: dict[str, float] = field(default_factory=dict)  # quota name -> applied value
    defaults: dict[str, float] = field(default_factory=dict)  # quota name -> AWS default
    # add-on version -> Kubernetes versions; None: the region has no such add-on
    addon_versions: dict[str, list[str]] | None = field(
        default_factory=lambda: {
            "v1.0.0-eksbuild.1": ["1.30", "1.31", "1.32"],
            "v1.2.0-eksbuild.1": ["1.31", "1.32", "1.33", "1.34"],
        }
    )
    hyperpods: dict[str, HyperPod] = field(default_factory=dict)  # by name and by ARN
    eks_versions: dict[str, str] = field(default_factory=dict)  # EKS cluster -> version
    addons: dict[str, Addon] = field(default_factory=dict)  # EKS cluster -> inference add-on
    products: list[dict[str, Any]] = field(default_factory=price_list.catalog)  # the Price List
    network: aws_network.Network = field(default_factory=aws_network.Network)  # EIPs, subnets
    registry: ecr_images.Registry = field(default_factory=ecr_images.Registry)  # ECR images

    def add_hyperpod(self, cluster: HyperPod, eks_version: str = "1.33") -> None:
        self.hyperpods[cluster.name] = self.hyperpods[cluster.arn] = cluster
        self.eks_versions[cluster.eks_name] = eks_version


def ample(*instance_types: str, value: float = 16) -> Account:
    """Quotas well above what any example stack asks for, applied."""
    return Account(
        applied={f"{t} for cluster usage": value for t in instance_types},
        defaults={f"{t} for cluster usage": 0.0 for t in instance_types},
    )


# The HyperPod cluster examples/Pulumi.existing.yaml names.
EXAMPLE_CLUSTER_ARN = "arn:aws:sagemaker:us-east-1:123456789012:cluster/a1b2c3d4e5f6"


def example_account() -> Account:
    """An account every example stack passes in: ample quotas, the add-on for Kubernetes 1.33,
    and the existing stack's cluster, InService, with two ml.g5.12xlarge and the add-on."""
    account = ample("ml.g5.12xlarge")
    cluster = HyperPod(
        "inference", groups=[Group("g5", "ml.g5.12xlarge", running=2)], arn=EXAMPLE_CLUSTER_ARN
    )
    account.add_hyperpod(cluster)
    account.addons[cluster.eks_name] = Addon()
    return account


@contextmanager
def account_served(
    monkeypatch: pytest.MonkeyPatch, account: Account | None = None
) -> Iterator[LocalAWS]:
    """The local AWS answering as `account` (unscripted when None), reached the way users
    point boto3 elsewhere: AWS_ENDPOINT_URL, with test credentials and no AWS config files.
    On exit: the calls a deadline gave up on have ended, and no request broke the model.

    botocore's backoff before retrying a throttled call is cut from up to 1 s (then 2 s) to up
    to 50 ms (then 100 ms), its backoff for other errors: the tests count attempts, not time."""
    monkeypatch.setitem(ExponentialBackoff._DEFAULT_BACKOFF_CONFIG, "throttling_base_scale", 0.05)
    for name in list(os.environ):
        if name.startswith(("AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_DEFAULT_PROFILE")):
            monkeypatch.delenv(name)
    registry = account.registry if account is not None else ecr_images.Registry()
    with local_aws() as fake, ecr_images.BlobServer(registry) as blobs:
        monkeypatch.setenv("AWS_ENDPOINT_URL", fake.url)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
        monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
        if account is not None:
            serve(fake, account, blobs.url)
        yield fake
    for thread in threading.enumerate():
        if thread.name.startswith(THREAD_PREFIX):
            thread.join(timeout=30)
    assert fake.violations == []
    assert fake.reply_problems == []
    assert {call.region for call in fake.calls} <= {REGION}
    # Only the read-only actions docs/preflight.md lists (and the preview role is granted) are
    # called.
    called = {f"{MODELS[c.service].signing_name}:{c.operation}" for c in fake.calls}
    assert called <= set(IAM_ACTIONS)


def _page(items: list[Any], request: dict[str, Any], token: str, key: str) -> dict[str, Any]:
    start = int(request.get(token) or 0)
    body: dict[str, Any] = {key: items[start : start + PAGE]}
    if start + PAGE < len(items):
        body[token] = str(start + PAGE)
    return body


def _quota_items(values: dict[str, float]) -> list[dict[str, Any]]:
    return [
        {
            "ServiceCode": "sagemaker",
            "ServiceName": "Amazon SageMaker",
            "QuotaName": name,
            "QuotaCode": quota_code(name),
            "QuotaArn": f"arn:aws:servicequotas:{REGION}:{ACCOUNT_ID}:sagemaker/{quota_code(name)}",
            "Value": value,
            "Unit": "None",
            "Adjustable": True,
            "GlobalQuota": False,
        }
        for name, value in {**OTHER_QUOTAS, **values}.items()
    ]


def serve(fake: LocalAWS, account: Account, blob_url: str = "http://127.0.0.1:9") -> None:
    """Script every call preflight makes from `account` (ECR's download URLs on `blob_url`)."""
    fake.on(
        "ListServiceQuotas",
        lambda r: Reply(body=_page(_quota_items(account.applied), r, "NextToken", "Quotas")),
        service="service-quotas",
    )
    fake.on(
        "ListAWSDefaultServiceQuotas",
        lambda r: Reply(body=_page(_quota_items(account.defaults), r, "NextToken", "Quotas")),
        service="service-quotas",
    )
    fake.on("DescribeAddonVersions", lambda r: _addon_versions(account, r), service="eks")
    fake.on("DescribeInstanceTypes", _instance_types, service="ec2")
    fake.on("DescribeCluster", lambda r: _hyperpod(account, r), service="sagemaker")
    fake.on("ListClusterNodes", lambda r: _nodes(account, r), service="sagemaker")
    fake.on("DescribeCluster", lambda r: _eks(account, r), service="eks")
    fake.on("ListAddons", lambda r: _addon_list(account, r), service="eks")
    fake.on("DescribeAddon", lambda r: _addon(account, r), service="eks")
    price_list.serve(fake, account.products)
    aws_network.serve(fake, account.network)
    ecr_images.serve(fake, account.registry, blob_url)


def _addon_versions(account: Account, request: dict[str, Any]) -> Reply:
    assert request["addonName"] == INFERENCE_ADDON
    if account.addon_versions is None:
        return Reply(body={"addons": []})
    newest = {
        max(ks, key=lambda k: tuple(map(int, k.split("."))))
        for ks in account.addon_versions.values()
    }
    versions = [
        {
            "addonVersion": version,
            "architecture": ["amd64"],
            "compatibilities": [
                {"clusterVersion": k, "platformVersions": ["*"], "defaultVersion": k in newest}
                for k in kubernetes
            ],
            "requiresConfiguration": True,
        }
        for version, kubernetes in account.addon_versions.items()
    ]
    addon = {"addonName": INFERENCE_ADDON, "type": "machine-learning", "addonVersions": versions}
    return Reply(body={"addons": [addon]})


def _instance_types(request: dict[str, Any]) -> Reply:
    (name,) = request["InstanceTypes"]
    if name not in EC2_TYPES:
        message = f"The following supplied instance types do not exist: [{name}]"
        return error("InvalidInstanceType", message)
    return Reply(body={"InstanceTypes": [EC2_TYPES[name]]})


def _hyperpod(account: Account, request: dict[str, Any]) -> Reply:
    cluster = account.hyperpods.get(request["ClusterName"])
    if cluster is None:
        return error("ResourceNotFound", f"Cluster {request['ClusterName']} not found")
    body: dict[str, Any] = {
        "ClusterArn": cluster.arn,
        "ClusterName": cluster.name,
        "ClusterStatus": cluster.status,
        "CreationTime": 1_796_212_800,
        "InstanceGroups": [
            {
                "InstanceGroupName": g.name,
                "InstanceType": g.instance_type,
                "CurrentCount": g.running,
                "TargetCount": g.running + g.pending,
                "ExecutionRole": f"arn:aws:iam::{ACCOUNT_ID}:role/hyperpod-nodes",
                "ThreadsPerCore": 1,
                "Status": "InService",
            }
            for g in cluster.groups
        ],
        "Orchestrator": {"Eks": {"ClusterArn": eks_arn(cluster.eks_name)}},
    }
    if cluster.failure:
        body["FailureMessage"] = cluster.failure
    return Reply(body=body)


def _nodes(account: Account, request: dict[str, Any]) -> Reply:
    cluster = account.hyperpods.get(request["ClusterName"])
    if cluster is None:
        return error("ResourceNotFound", f"Cluster {request['ClusterName']} not found")
    nodes = [
        {
            "InstanceGroupName": g.name,
            "InstanceId": f"i-{index:017x}",
            "InstanceType": g.instance_type,
            "LaunchTime": 1_796_212_800,
            "InstanceStatus": {"Status": "Running" if index < g.running else "Pending"},
        }
        for g in cluster.groups
        for index in range(g.running + g.pending)
    ]
    return Reply(body=_page(nodes, request, "NextToken", "ClusterNodeSummaries"))


def _eks(account: Account, request: dict[str, Any]) -> Reply:
    version = account.eks_versions.get(request["name"])
    if version is None:
        return error(
            "ResourceNotFoundException", f"No cluster found for name: {request['name']}.", 404
        )
    cluster = {
        "name": request["name"],
        "arn": eks_arn(request["name"]),
        "version": version,
        "status": "ACTIVE",
    }
    return Reply(body={"cluster": cluster})


def _addon_list(account: Account, request: dict[str, Any]) -> Reply:
    names = ["vpc-cni", "coredns", "kube-proxy", "cert-manager"]
    names += [INFERENCE_ADDON] if request["clusterName"] in account.addons else []
    return Reply(body=_page(names, request, "nextToken", "addons"))


def _addon(account: Account, request: dict[str, Any]) -> Reply:
    addon = account.addons.get(request["clusterName"])
    if addon is None or request["addonName"] != INFERENCE_ADDON:
        return error("ResourceNotFoundException", "No addon found", 404)
    body = {
        "addonName": INFERENCE_ADDON,
        "clusterName": request["clusterName"],
        "status": addon.status,
        "addonVersion": addon.version,
        "health": {"issues": [{"code": c, "message": m} for c, m in addon.issues]},
    }
    return Reply(body={"addon": body})


def quota_page(value: Any, token: str | None = None) -> Reply:
    """One page of ListServiceQuotas holding the dev stack's quota at `value` (any JSON)."""
    item = {
        "ServiceCode": "sagemaker",
        "QuotaName": "ml.g5.12xlarge for cluster usage",
        "QuotaCode": "L-1",
        "Value": value,
    }
    body: dict[str, Any] = {"Quotas": [item]}
    if token is not None:
        body["NextToken"] = token
    return Reply(body=body)


def stack_config(stack: str, overrides: Mapping[str, str | None] | None = None) -> StackConfig:
    """A stack file's parsed config, with overrides as `mlcc plan --set` applies them."""
    values = stack_values(stack, overrides)
    return config.parse(values.values, stack=stack, secret_keys=values.secret_keys).config
