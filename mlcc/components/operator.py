"""The HyperPod inference operator as the EKS add-on, with its prerequisites and IAM roles.

docs/infrastructure.md explains it: add-on `amazon-sagemaker-hyperpod-inference` (operator >= 3.0)
runs the controller, its ALB controller and KEDA in `hyperpod-inference-system`; the
prerequisites are the EKS add-ons cert-manager, the Mountpoint S3 and FSx CSI drivers (the
manager's init container waits for both CSIDrivers) and metrics-server, plus a TLS bucket.
Every role is trusted by exactly one service account through the cluster's OIDC provider.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from mlcc.components.cluster import iam_policies
from mlcc.components.cluster.storage import private_bucket
from mlcc.config.infrastructure import INFERENCE_ADDON
from mlcc.facts.operator import OPERATOR_CONTROLLER, OPERATOR_NAMESPACE

ADDON_NAME = INFERENCE_ADDON
EXECUTION_ROLE_PREFIX = "SageMakerHyperPodInference"  # required by the add-on
SERVICE_ACCOUNTS = {
    "execution": (OPERATOR_NAMESPACE, OPERATOR_CONTROLLER),
    "keda": (OPERATOR_NAMESPACE, "keda-operator"),
    "alb": (OPERATOR_NAMESPACE, "aws-load-balancer-controller"),
    "s3-csi": ("kube-system", "s3-csi-driver-sa"),
    "fsx-csi": ("kube-system", "fsx-csi-controller-sa"),
}
PREREQUISITE_ADDONS = ("cert-manager", "metrics-server")


@dataclass(frozen=True)
class InferenceOperatorArgs:
    base_name: str
    eks_cluster_name: pulumi.Input[str]
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer: pulumi.Input[str]
    hyperpod_cluster_arn: pulumi.Input[str]
    vpc_id: pulumi.Input[str]
    tags: Mapping[str, str]
    # The add-ons' pods need CPU nodes: without them the add-ons never become ACTIVE.
    system_nodes: Sequence[pulumi.Resource] = ()


def execution_role_name(base_name: str) -> str:
    return f"{EXECUTION_ROLE_PREFIX}-{base_name}"[:64]


def addon_configuration(
    *,
    execution_role_arn: str,
    tls_bucket: str,
    hyperpod_cluster_arn: str,
    alb_role_arn: str,
    keda_role_arn: str,
) -> dict[str, object]:
    """The add-on's configuration values."""
    return {
        "executionRoleArn": execution_role_arn,
        "tlsCertificateS3Bucket": tls_bucket,
        "hyperpodClusterArn": hyperpod_cluster_arn,
        "alb": {"enabled": True, "serviceAccount": {"create": True, "roleArn": alb_role_arn}},
        "keda": {
            "enabled": True,
            "auth": {"aws": {"irsa": {"enabled": True, "roleArn": keda_role_arn}}},
        },
    }


class InferenceOperator(pulumi.ComponentResource):
    addon: aws.eks.Addon
    execution_role_arn: pulumi.Output[str]
    execution_role_name: pulumi.Output[str]
    tls_bucket: pulumi.Output[str]

    def __init__(
        self, name: str, args: InferenceOperatorArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("hp:index:InferenceOperator", name, None, opts)
        self._name = name
        self._args = args
        self._tags = dict(args.tags)
        invoke = pulumi.InvokeOutputOptions(parent=self)
        self._partition = aws.get_partition_output(opts=invoke).partition
        self._region = aws.get_region_output(opts=invoke).region
        self._account = aws.get_caller_identity_output(opts=invoke).account_id
        bucket = private_bucket(
            f"{name}-tls", prefix="hp-inference-tls-", tags=self._tags, parent=self
        )
        execution = self._role(
            "execution",
            name=execution_role_name(args.base_name),
            services=("sagemaker.amazonaws.com",),
        )
        execution_policies = [
            self._managed(execution, "AmazonSageMakerHyperPodInferenceAccess"),
            self._inline(execution, "tls-bucket", bucket.arn.apply(iam_policies.bucket_read_write)),
            self._inline(execution, "certificates", self._scoped(iam_policies.operator_extras)),
        ]
        keda = self._role("keda")
        alb = self._role("alb")
        vpc_arn = pulumi.Output.all(
            self._partition, self._region, self._account, args.vpc_id
        ).apply(lambda v: f"arn:{v[0]}:ec2:{v[1]}:{v[2]}:vpc/{v[3]}")
        role_policies = [
            self._inline(keda, "metrics", self._scoped(iam_policies.keda_metrics)),
            self._inline(
                alb,
                "load-balancers",
                pulumi.Output.all(self._partition, self._region, self._account, vpc_arn).apply(
                    lambda v: iam_policies.load_balancer_controller(v[0], v[1], v[2], v[3])
                ),
            ),
        ]
        prerequisites = [self._addon(addon) for addon in PREREQUISITE_ADDONS]
        # Both CSI drivers must exist even if only one storage type is used (the operator's
        # documented prerequisites).
        prerequisites.append(self._addon("aws-mountpoint-s3-csi-driver", role=self._role("s3-csi")))
        prerequisites.append(self._addon("aws-fsx-csi-driver", role=self._role("fsx-csi")))
        configuration = pulumi.Output.all(
            execution.arn, bucket.bucket, args.hyperpod_cluster_arn, alb.arn, keda.arn
        ).apply(
            lambda v: json.dumps(
                addon_configuration(
                    execution_role_arn=v[0],
                    tls_bucket=v[1],
                    hyperpod_cluster_arn=v[2],
                    alb_role_arn=v[3],
                    keda_role_arn=v[4],
                ),
                sort_keys=True,
            )
        )
        self.addon = aws.eks.Addon(
            f"{name}-addon",
            cluster_name=args.eks_cluster_name,
            addon_name=ADDON_NAME,
            configuration_values=configuration,
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            tags=self._tags,
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[
                    *prerequisites,
                    *execution_policies,
                    *role_policies,
                    *args.system_nodes,
                ],
            ),
        )
        self.execution_role_arn = execution.arn
        self.execution_role_name = execution.name
        self.tls_bucket = bucket.bucket
        self.register_outputs(
            {
                "addonArn": self.addon.arn,
                "executionRoleArn": self.execution_role_arn,
                "tlsBucket": self.tls_bucket,
            }
        )

    def _scoped(
        self, policy: Callable[[str, str, str], iam_policies.PolicyDocument]
    ) -> pulumi.Output[iam_policies.PolicyDocument]:
        """A (partition, region, account) -> document function applied to this account."""
        return pulumi.Output.all(self._partition, self._region, self._account).apply(
            lambda v: policy(v[0], v[1], v[2])
        )

    def _role(
        self, purpose: str, *, name: str | None = None, services: Sequence[str] = ()
    ) -> aws.iam.Role:
        namespace, service_account = SERVICE_ACCOUNTS[purpose]
        subject = iam_policies.service_account_subject(namespace, service_account)
        trust = pulumi.Output.all(self._args.oidc_provider_arn, self._args.oidc_issuer).apply(
            lambda v: json.dumps(iam_policies.irsa_trust(v[0], v[1], [subject], services=services))
        )
        return aws.iam.Role(
            f"{self._name}-{purpose}",
            name=name,
            assume_role_policy=trust,
            description=f"IRSA role of {namespace}/{service_account}",
            tags=self._tags,
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _managed(self, role: aws.iam.Role, policy: str) -> aws.iam.RolePolicyAttachment:
        return aws.iam.RolePolicyAttachment(
            f"{self._name}-{policy}",
            role=role.name,
            policy_arn=self._partition.apply(lambda p: iam_policies.managed_policy_arn(p, policy)),
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _inline(
        self,
        role: aws.iam.Role,
        purpose: str,
        document: pulumi.Output[iam_policies.PolicyDocument],
    ) -> aws.iam.RolePolicy:
        return aws.iam.RolePolicy(
            f"{self._name}-{purpose}",
            role=role.name,
            policy=document.apply(json.dumps),
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _addon(self, addon_name: str, *, role: aws.iam.Role | None = None) -> aws.eks.Addon:
        return aws.eks.Addon(
            f"{self._name}-{addon_name}",
            cluster_name=self._args.eks_cluster_name,
            addon_name=addon_name,
            service_account_role_arn=role.arn if role else None,
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            tags=self._tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(self._args.system_nodes)),
        )
