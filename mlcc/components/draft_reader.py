"""The identity the copy of an s3:// draft runs as (create mode): a Kubernetes ServiceAccount in
the endpoints' namespace and its IAM role (IRSA), allowed to read the stack's trained heads and
nothing else (docs/draft-serving.md).

The operator's CRD: `spec.kubernetes.serviceAccountName` is "useful for providing AWS
credentials via IRSA to init containers or the worker"; the chart's samples
(`v1_nvme_k8s_volume_service_account.yaml`) annotate the service account with
`eks.amazonaws.com/role-arn`, IRSA's own annotation (EKS docs, "IAM roles for service
accounts"). The worker runs as it too, so the engine could read the heads as well; it never
needs to, but the rights are the heads' alone.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from mlcc.components.cluster import iam_draft_loop, iam_policies
from mlcc.serving.s3_draft import SERVICE_ACCOUNT

ROLE_ANNOTATION = "eks.amazonaws.com/role-arn"


@dataclass(frozen=True)
class DraftReaderArgs:
    namespace: str
    heads: Sequence[tuple[str, str]]  # (bucket, prefix) of every s3:// draft of the stack
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer: pulumi.Input[str]
    tags: dict[str, str]
    depends_on: Sequence[pulumi.Resource] = ()  # the namespace


class DraftReader(pulumi.ComponentResource):
    """`resources`: what an endpoint that copies a head must wait for."""

    resources: list[pulumi.Resource]

    def __init__(
        self,
        name: str,
        args: DraftReaderArgs,
        k8s_opts: pulumi.ResourceOptions,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("hp:index:DraftReader", name, None, opts)
        subject = iam_policies.service_account_subject(args.namespace, SERVICE_ACCOUNT)
        trust = pulumi.Output.all(args.oidc_provider_arn, args.oidc_issuer).apply(
            lambda v: json.dumps(iam_policies.irsa_trust(v[0], v[1], [subject]))
        )
        role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=trust,
            description=f"IRSA role of {args.namespace}/{SERVICE_ACCOUNT}: reads the draft heads",
            tags=args.tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=self)).partition
        policy = aws.iam.RolePolicy(
            f"{name}-heads",
            role=role.name,
            policy=partition.apply(
                lambda p: json.dumps(iam_draft_loop.draft_read(p, list(args.heads)))
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        account = k8s.core.v1.ServiceAccount(
            f"{name}-service-account",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=SERVICE_ACCOUNT,
                namespace=args.namespace,
                annotations=role.arn.apply(lambda arn: {ROLE_ANNOTATION: arn}),
            ),
            opts=pulumi.ResourceOptions.merge(
                k8s_opts,
                pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, policy]),
            ),
        )
        self.resources = [account, policy]
        self.register_outputs({"roleArn": role.arn})
