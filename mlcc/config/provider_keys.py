"""The AWS providers' keys the program reads as well: aws:region, aws-native:region, aws:profile.

Pure, like the rest of `mlcc.config`: `mlcc.config.stack.parse` reads the region through
`read_region` and checks the aws-native provider's against it (`check_native_region`).
"""

from __future__ import annotations

import os

from mlcc.config.aws import rules as aws_rules
from mlcc.config.infrastructure import InfrastructureConfig, NewCluster
from mlcc.config.reader import Reader
from mlcc.serving.speculative import Problem

REGION_KEY = "aws:region"
NATIVE_REGION_KEY = "aws-native:region"
PROFILE_KEY = "aws:profile"  # the AWS provider's named profile; preflight's calls use it too
PROVIDER_KEYS = (REGION_KEY, NATIVE_REGION_KEY, PROFILE_KEY)


def read_region(reader: Reader, environment_region: str, *, required: bool = True) -> str:
    """aws:region (or the AWS_REGION the providers would read): one real region. Kubernetes-only
    mode needs none, but one that is set must still be a region."""
    region = (reader.values.get(REGION_KEY) or environment_region).strip()
    if not region and not required:
        return region
    problem = aws_rules.region_problem(region)
    if problem:
        reader.problems.errors.append(Problem(REGION_KEY, problem))
    return region


def check_native_region(
    reader: Reader, region: str, infra: InfrastructureConfig, environment_region: str
) -> None:
    """The aws-native provider (the HyperPod cluster) does not read aws:region, only its own
    key or AWS_REGION."""
    native = (reader.values.get(NATIVE_REGION_KEY) or environment_region).strip()
    if infra.calls_no_aws:
        return  # no AWS provider is used
    if native and native != region:
        message = f"is {native!r} but aws:region is {region!r}; set both to the same region"
    elif not native and isinstance(infra.cluster, NewCluster):
        message = (
            f"is not set, and the HyperPod cluster is created through the aws-native provider, "
            f"which does not read aws:region: `pulumi config set {NATIVE_REGION_KEY} "
            f"{region or '<region>'}`"
        )
    else:
        return
    reader.problems.errors.append(Problem(NATIVE_REGION_KEY, message))


def environment_region() -> str:
    """The region the AWS providers fall back to when the stack sets none."""
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or ""
