"""The `hp:*` keys that choose and shape the cluster (docs/infrastructure.md), for the key table.

Plain rows `(name, cli type, default, description, create mode only)`; the schema turns them into
its `Key`s, between its stack keys and hp:tags. Which mode a stack is in: hp:kubeconfig set =
Kubernetes-only, else hp:clusterName set = existing cluster, else create.
"""

from __future__ import annotations

from typing import Literal

from mlcc.facts import kubernetes_versions as k8s_versions

CliType = Literal["string", "integer", "boolean"] | None
Row = tuple[str, CliType, object, str, bool]

ROWS: tuple[Row, ...] = (
    (
        "clusterName",
        "string",
        "",
        "Existing HyperPod cluster (name or ARN): create only the images and the endpoints on "
        "it. Empty = create the VPC, EKS, HyperPod cluster and operator.",
        False,
    ),
    (
        "kubeconfig",
        "string",
        "",
        "Kubernetes-only mode: the kubeconfig file (path) of a cluster where the HyperPod "
        "inference operator already runs; the stack then creates only Kubernetes objects and "
        "calls no AWS API, and hp:image is required. Empty = create or hp:clusterName mode.",
        False,
    ),
    (
        "kubeContext",
        "string",
        "",
        "Kubernetes-only mode: the context of hp:kubeconfig to use; empty = its current-context.",
        False,
    ),
    (
        "nvidiaDriverVersion",
        "string",
        "",
        "NVIDIA driver of the GPU nodes (nvidia-smi), checked against the CUDA version of each "
        "endpoint's engine image; empty = the HyperPod AMI's (docs/nvidia-facts.md).",
        False,
    ),
    (
        "instanceGroups",
        None,
        [],
        "HyperPod GPU instance groups: a list of {name, instanceType, instanceCount, "
        "ebsVolumeSizeGb (500), threadsPerCore (1), deepHealthChecks ([InstanceStress, "
        "InstanceConnectivity])}. Empty = one group 'gpu' of hp:instanceType, hp:replicas "
        "nodes.",
        True,
    ),
    (
        "kubernetesVersion",
        "string",
        # The newest version HyperPod and EKS both support on the plan's date (the table's clock).
        k8s_versions.default_version(k8s_versions.today()),
        f"EKS Kubernetes version: one HyperPod supports ({k8s_versions.hyperpod_range()}) that "
        "EKS still creates; in extended support it costs more (docs/kubernetes-facts.md).",
        True,
    ),
    (
        "vpcCidr",
        "string",
        "10.0.0.0/16",
        "CIDR of the VPC this program creates (RFC 1918, /16-/18; each private subnet gets a "
        "quarter).",
        True,
    ),
    (
        "natGatewayPerAz",
        "boolean",
        False,
        "One NAT gateway per availability zone (resilient, costs more) instead of one.",
        True,
    ),
    (
        "vpcId",
        "string",
        "",
        "Existing VPC id; set with hp:privateSubnetIds to skip the VPC.",
        True,
    ),
    (
        "privateSubnetIds",
        None,
        [],
        "Existing private subnet ids (at least two AZs, with room for many IPs).",
        True,
    ),
    (
        "publicSubnetIds",
        None,
        [],
        "Existing public subnet ids (for internet-facing load balancers).",
        True,
    ),
    (
        "systemNodeInstanceType",
        "string",
        "m5.xlarge",
        "EC2 type of the CPU node group for the operator, cert-manager, CoreDNS (x86_64).",
        True,
    ),
    (
        "systemNodeCount",
        "integer",
        2,
        "Nodes in the CPU system node group.",
        True,
    ),
    (
        "hyperpodDependenciesChart",
        "string",
        "",
        "Path to a checkout's sagemaker-hyperpod-cli/helm_chart/HyperPodHelmChart: installs "
        "AWS's full dependencies chart (health monitoring agent, deep health checks, device "
        "plugins). Empty = only the published NVIDIA and EFA device plugin charts.",
        True,
    ),
)
