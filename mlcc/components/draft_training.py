"""The draft-training job (hp:draftTraining, docs/draft-training.md) and its S3 rights.

`DraftTraining` declares the job the pure mlcc/manifest/training_job.py renders: a
HyperPodPyTorchJob custom resource (operator: hyperpod) or a batch/v1 Job (operator: job), in the
endpoints' namespace, after the namespace and the token Secret. The HyperPodPyTorchJob is checked
against the schema derived from sagemaker-hyperpod's model before anything is created; a job that
breaks it stops the program with one line per problem. The pod reaches S3 with the nodes' role:
in create mode an inline policy on the instance groups' execution role (read the dataset prefix,
read and write the output prefix); for an existing cluster, whose roles the stack does not own, a
managed policy to attach (its ARN is the `draftTrainingPolicyArn` output); in Kubernetes-only
mode nothing in AWS.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from mlcc.components.cluster import iam_draft_loop, iam_policies
from mlcc.components.program import Platform
from mlcc.config.draft_training import KEY, DraftTrainingConfig, JobOperator
from mlcc.config.kubernetes_only import KubeconfigCluster
from mlcc.config.refusal import refuse
from mlcc.config.stack import StackConfig
from mlcc.deploy.cluster import ApiError
from mlcc.deploy.kubeconfig import AccessError, api_client
from mlcc.deploy.served import KindReader
from mlcc.manifest.training_job import (
    JobTarget,
    api_version,
    job_schema,
    kind,
    render,
    schema_problems,
)
from mlcc.preflight.run import PROGRAM

# The Kubernetes provider waits for a Job to complete by default; training takes hours.
SKIP_AWAIT = {"pulumi.com/skipAwait": "true"}


@dataclass(frozen=True)
class DraftTrainingArgs:
    config: DraftTrainingConfig
    namespace: str
    image: pulumi.Input[str]
    hf_token_secret: str | None
    # "role": an inline policy on this role (create mode); "policy": a managed policy to attach
    # (existing cluster); "none": no AWS resource (Kubernetes-only mode).
    s3_rights: str = "none"
    node_role_arn: pulumi.Input[str] | None = None
    tags: dict[str, str] = field(default_factory=dict)
    depends_on: Sequence[pulumi.Resource] = ()


def checked(config: DraftTrainingConfig, namespace: str, hf_token_secret: str | None) -> None:
    """The job's manifest against the derived schema, before anything is created."""
    if config.operator is not JobOperator.HYPERPOD:
        return
    problems = schema_problems(render(config, JobTarget(namespace, "image:tag", hf_token_secret)))
    if problems:
        refuse(
            [f"hp:draftTraining: the HyperPodPyTorchJob breaks its schema at {p}" for p in problems]
        )


def check_before_deploy(config: StackConfig) -> None:
    """hp:draftTraining's job against its schema, called before the program declares anything;
    in Kubernetes-only mode, whether the cluster serves its kind."""
    if config.draft_training is not None:
        secret = config.hf_token_secret_name if config.hf_token else None
        checked(config.draft_training, config.namespace, secret)
        cluster = config.infrastructure.cluster
        if isinstance(cluster, KubeconfigCluster) and PROGRAM.enabled:
            check_kind_served(config.draft_training, cluster)


def check_kind_served(config: DraftTrainingConfig, cluster: KubeconfigCluster) -> None:
    """A HyperPodPyTorchJob on a cluster without the HyperPod training operator's CRD: the
    provider previews it as creatable, then at `pulumi up`, after the endpoints were created,
    retries its create for a minute and fails with `no matches for kind "HyperPodPyTorchJob"`
    (seen with pulumi-kubernetes 4.27.0, docs/e2e.md). One line naming the key instead, before
    anything is created. The program reaches the cluster itself only here, in Kubernetes-only
    mode (hp:kubeconfig); a cluster it cannot read is left to the provider, with a warning."""
    if config.operator is not JobOperator.HYPERPOD:
        return
    found = job_schema()
    group, version, plural, shown = found["group"], found["version"], found["plural"], kind(config)
    try:
        api = api_client(cluster.kubeconfig, cluster.context or None)
        served = KindReader(api).serves(group, version, plural)
    except (AccessError, ApiError) as error:
        pulumi.log.warn(
            f"hp:{KEY}.operator: could not check that the cluster serves {shown} ({error})"
        )
        return
    if not served:
        refuse(
            [
                f"hp:{KEY}.operator: is hyperpod, but the cluster (hp:kubeconfig) does not serve "
                f"{shown} ({group}/{version}): the HyperPod training operator add-on is not "
                "installed. Install it, or set operator: job to run a plain Kubernetes Job"
            ]
        )


class DraftTraining(pulumi.ComponentResource):
    job: pulumi.CustomResource
    policy_arn: pulumi.Output[str] | None

    def __init__(
        self,
        name: str,
        args: DraftTrainingArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("hp:index:DraftTraining", name, None, opts)
        config = args.config
        checked(config, args.namespace, args.hf_token_secret)
        self.policy_arn = None
        aws_child = pulumi.ResourceOptions(parent=self)
        document = json.dumps(iam_draft_loop.draft_training_s3(config.dataset, config.output))
        rights: list[pulumi.Resource] = []
        if args.s3_rights == "role" and args.node_role_arn is not None:
            rights.append(
                aws.iam.RolePolicy(
                    f"{name}-s3",
                    role=pulumi.Output.from_input(args.node_role_arn).apply(iam_policies.role_name),
                    policy=document,
                    opts=aws_child,
                )
            )
        elif args.s3_rights == "policy":
            policy = aws.iam.Policy(
                f"{name}-s3",
                description=f"S3 rights of the draft-training job {config.name}: attach to the "
                "execution role of the instance group it runs on",
                policy=document,
                tags=args.tags,
                opts=aws_child,
            )
            self.policy_arn = policy.arn
        target = pulumi.Output.from_input(args.image).apply(
            lambda image: render(config, JobTarget(args.namespace, image, args.hf_token_secret))
        )
        child = pulumi.ResourceOptions(
            parent=self,
            depends_on=[*args.depends_on, *rights],
            # Same name, new spec: the old job goes first (a Job's template is immutable).
            replace_on_changes=["spec"],
            delete_before_replace=True,
        )
        self.job = self._job(name, config, args.namespace, target, child)
        self.register_outputs({"jobName": config.name, "kind": kind(config)})

    def _job(
        self,
        name: str,
        config: DraftTrainingConfig,
        namespace: str,
        document: pulumi.Output[dict[str, Any]],
        opts: pulumi.ResourceOptions,
    ) -> pulumi.CustomResource:
        labels = {"hp.mlcc/draft-training": config.name}
        if config.operator is JobOperator.JOB:
            return k8s.batch.v1.Job(
                name,
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    name=config.name, namespace=namespace, labels=labels, annotations=SKIP_AWAIT
                ),
                spec=document.apply(lambda d: d["spec"]),
                opts=opts,
            )
        return k8s.apiextensions.CustomResource(
            name,
            api_version=api_version(config),
            kind=kind(config),
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=config.name, namespace=namespace, labels=labels
            ),
            spec=document.apply(lambda d: d["spec"]),
            opts=opts,
        )


def declare(
    config: StackConfig,
    platform: Platform,
    depends_on: Sequence[pulumi.Resource],
    opts: pulumi.ResourceOptions,
) -> DraftTraining | None:
    """The job of hp:draftTraining, when it is set; its image is the target's vLLM serve image
    unless hp:draftTraining.image names one."""
    training = config.draft_training
    if training is None:
        return None
    if config.infrastructure.calls_no_aws:
        rights = "none"
    elif platform.node_role_arn is not None:
        rights = "role"
    else:
        rights = "policy"
    image = training.image or platform.images[config.primary.engine_release].ref
    return DraftTraining(
        "draft-training",
        DraftTrainingArgs(
            config=training,
            namespace=config.namespace,
            image=image,
            hf_token_secret=config.hf_token_secret_name if config.hf_token else None,
            s3_rights=rights,
            node_role_arn=platform.node_role_arn,
            tags=config.infrastructure.tag_map,
            depends_on=depends_on,
        ),
        opts=opts,
    )
