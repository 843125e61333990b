"""IAM policy documents and ARNs as plain data (pure; no Pulumi, no AWS calls).

Every statement names the resource ARNs it applies to; "*" appears only for actions that
support no resource-level permissions (ecr:GetAuthorizationToken, CloudWatch metric reads,
EC2/ELB Describe*).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

PolicyDocument = dict[str, object]

_ECR_IMAGE = re.compile(
    r"^(?P<account>\d{12})\.dkr\.ecr\.(?P<region>[a-z0-9-]+)\.amazonaws\.com(?:\.cn)?/"
    r"(?P<repository>[a-z0-9._/-]+?)(?:[:@].*)?$"
)


def document(*statements: dict[str, object]) -> PolicyDocument:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def managed_policy_arn(partition: str, name: str) -> str:
    return f"arn:{partition}:iam::aws:policy/{name}"


def service_trust(*services: str) -> PolicyDocument:
    return document(
        {
            "Effect": "Allow",
            "Principal": {"Service": list(services) if len(services) > 1 else services[0]},
            "Action": "sts:AssumeRole",
        }
    )


def service_account_subject(namespace: str, service_account: str) -> str:
    return f"system:serviceaccount:{namespace}:{service_account}"


def issuer_host(issuer_url: str) -> str:
    """The OIDC issuer as IAM condition keys use it: without the https:// scheme."""
    return issuer_url.removeprefix("https://").rstrip("/")


def irsa_statement(
    provider_arn: str, issuer_url: str, subjects: Sequence[str]
) -> dict[str, object]:
    """Trust for pods running as exactly these service accounts (IRSA, web identity)."""
    host = issuer_host(issuer_url)
    subject: str | list[str] = subjects[0] if len(subjects) == 1 else list(subjects)
    return {
        "Effect": "Allow",
        "Principal": {"Federated": provider_arn},
        "Action": "sts:AssumeRoleWithWebIdentity",
        "Condition": {"StringEquals": {f"{host}:sub": subject, f"{host}:aud": "sts.amazonaws.com"}},
    }


def irsa_trust(
    provider_arn: str, issuer_url: str, subjects: Sequence[str], *, services: Sequence[str] = ()
) -> PolicyDocument:
    statements = [irsa_statement(provider_arn, issuer_url, subjects)]
    if services:
        statements.append(service_trust(*services)["Statement"][0])  # type: ignore[index]
    return document(*statements)


def bucket_read(bucket_arn: str) -> PolicyDocument:
    return document(
        {"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": bucket_arn},
        {"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": f"{bucket_arn}/*"},
    )


def bucket_read_write(bucket_arn: str) -> PolicyDocument:
    return document(
        {
            "Effect": "Allow",
            "Action": ["s3:ListBucket", "s3:GetBucketLocation"],
            "Resource": bucket_arn,
        },
        {
            "Effect": "Allow",
            "Action": [
                "s3:GetObject",
                "s3:PutObject",
                "s3:PutObjectTagging",
                "s3:DeleteObject",
            ],
            "Resource": f"{bucket_arn}/*",
        },
    )


# What the operator's execution role does in a data capture bucket: the actions the operator's
# own migration script grants it on the TLS bucket, which is where data capture goes when no
# s3Uri is given (aws/sagemaker-hyperpod-cli 011ca92,
# helm_chart/HyperPodHelmChart/charts/inference-operator/migration/helm_to_addon.sh:
# s3:PutObject and s3:PutObjectTagging; operator 3.0 tags the objects it writes, AWS's HyperPod
# Inference release notes v3.0). Reading the bucket's location and listing it are assumed
# (docs/draft.md, "Capture"); nothing here may delete: the lifecycle rule expires objects.
def ecr_repository_arn(image: str, partition: str = "aws") -> str | None:
    """The ECR repository ARN of an image URI, or None for a non-ECR registry."""
    match = _ECR_IMAGE.match(image)
    if not match:
        return None
    return (
        f"arn:{partition}:ecr:{match['region']}:{match['account']}:repository/{match['repository']}"
    )


def ecr_pull(repository_arns: Sequence[str]) -> PolicyDocument:
    statements: list[dict[str, object]] = [
        # GetAuthorizationToken has no resource-level permissions.
        {"Effect": "Allow", "Action": "ecr:GetAuthorizationToken", "Resource": "*"}
    ]
    if repository_arns:
        statements.append(
            {
                "Effect": "Allow",
                "Action": [
                    "ecr:BatchCheckLayerAvailability",
                    "ecr:BatchGetImage",
                    "ecr:GetDownloadUrlForLayer",
                ],
                "Resource": sorted(set(repository_arns)),
            }
        )
    return document(*statements)


def ecr_repository_pull(role_arns: Sequence[str]) -> PolicyDocument:
    """Repository policy: TLS only, and these roles (another stack's nodes) may pull."""
    statements: list[dict[str, object]] = [
        {
            "Sid": "DenyInsecureTransport",
            "Effect": "Deny",
            "Principal": "*",
            "Action": "ecr:*",
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        }
    ]
    if role_arns:
        statements.append(
            {
                "Sid": "HyperPodNodesPull",
                "Effect": "Allow",
                "Principal": {"AWS": sorted(set(role_arns))},
                "Action": [
                    "ecr:BatchCheckLayerAvailability",
                    "ecr:BatchGetImage",
                    "ecr:GetDownloadUrlForLayer",
                ],
            }
        )
    return document(*statements)


def keda_metrics(partition: str, region: str, account: str) -> PolicyDocument:
    return document(
        {
            # CloudWatch metric reads support no resource-level permissions.
            "Effect": "Allow",
            "Action": [
                "cloudwatch:GetMetricData",
                "cloudwatch:GetMetricStatistics",
                "cloudwatch:ListMetrics",
            ],
            "Resource": "*",
        },
        {
            "Effect": "Allow",
            "Action": [
                "aps:QueryMetrics",
                "aps:GetLabels",
                "aps:GetSeries",
                "aps:GetMetricMetadata",
            ],
            "Resource": f"arn:{partition}:aps:{region}:{account}:workspace/*",
        },
    )


def operator_extras(partition: str, region: str, account: str) -> PolicyDocument:
    """What operator 3.x needs beyond AmazonSageMakerHyperPodInferenceAccess (TLS certs)."""
    return document(
        {
            "Effect": "Allow",
            "Action": ["acm:AddTagsToCertificate"],
            "Resource": f"arn:{partition}:acm:{region}:{account}:certificate/*",
        }
    )


def load_balancer_controller(
    partition: str, region: str, account: str, vpc_arn: str
) -> PolicyDocument:
    """The ALB controller's core permissions, condensed from its published policy.

    Describe calls are account-wide by API design; everything that creates or changes a
    resource is limited to this account and region (security groups to this VPC).
    """
    scope = f"{region}:{account}"
    return document(
        {
            "Effect": "Allow",
            "Action": [
                "ec2:DescribeAccountAttributes",
                "ec2:DescribeAddresses",
                "ec2:DescribeAvailabilityZones",
                "ec2:DescribeInternetGateways",
                "ec2:DescribeVpcs",
                "ec2:DescribeVpcPeeringConnections",
                "ec2:DescribeSubnets",
                "ec2:DescribeSecurityGroups",
                "ec2:DescribeInstances",
                "ec2:DescribeNetworkInterfaces",
                "ec2:DescribeTags",
                "ec2:DescribeCoipPools",
                "ec2:GetCoipPoolUsage",
                "ec2:GetSecurityGroupsForVpc",
                "elasticloadbalancing:Describe*",
                "acm:ListCertificates",
                "acm:DescribeCertificate",
                "wafv2:GetWebACLForResource",
                "waf-regional:GetWebACLForResource",
                "shield:GetSubscriptionState",
                "shield:DescribeProtection",
            ],
            "Resource": "*",
        },
        {
            "Effect": "Allow",
            "Action": "iam:CreateServiceLinkedRole",
            "Resource": f"arn:{partition}:iam::{account}:role/aws-service-role/"
            "elasticloadbalancing.amazonaws.com/*",
            "Condition": {
                "StringEquals": {"iam:AWSServiceName": "elasticloadbalancing.amazonaws.com"}
            },
        },
        {
            "Effect": "Allow",
            "Action": ["ec2:CreateSecurityGroup"],
            "Resource": [f"arn:{partition}:ec2:{scope}:security-group/*", vpc_arn],
        },
        {
            "Effect": "Allow",
            "Action": [
                "ec2:CreateTags",
                "ec2:DeleteTags",
                "ec2:AuthorizeSecurityGroupIngress",
                "ec2:RevokeSecurityGroupIngress",
                "ec2:DeleteSecurityGroup",
            ],
            "Resource": f"arn:{partition}:ec2:{scope}:security-group/*",
        },
        {
            "Effect": "Allow",
            "Action": [
                "elasticloadbalancing:CreateLoadBalancer",
                "elasticloadbalancing:CreateTargetGroup",
                "elasticloadbalancing:CreateListener",
                "elasticloadbalancing:CreateRule",
                "elasticloadbalancing:DeleteLoadBalancer",
                "elasticloadbalancing:DeleteTargetGroup",
                "elasticloadbalancing:DeleteListener",
                "elasticloadbalancing:DeleteRule",
                "elasticloadbalancing:ModifyLoadBalancerAttributes",
                "elasticloadbalancing:ModifyTargetGroup",
                "elasticloadbalancing:ModifyTargetGroupAttributes",
                "elasticloadbalancing:ModifyListener",
                "elasticloadbalancing:ModifyRule",
                "elasticloadbalancing:SetIpAddressType",
                "elasticloadbalancing:SetSecurityGroups",
                "elasticloadbalancing:SetSubnets",
                "elasticloadbalancing:AddTags",
                "elasticloadbalancing:RemoveTags",
                "elasticloadbalancing:RegisterTargets",
                "elasticloadbalancing:DeregisterTargets",
                "elasticloadbalancing:AddListenerCertificates",
                "elasticloadbalancing:RemoveListenerCertificates",
            ],
            "Resource": [
                f"arn:{partition}:elasticloadbalancing:{scope}:loadbalancer/*",
                f"arn:{partition}:elasticloadbalancing:{scope}:targetgroup/*",
                f"arn:{partition}:elasticloadbalancing:{scope}:listener/*",
                f"arn:{partition}:elasticloadbalancing:{scope}:listener-rule/*",
            ],
        },
    )


def role_name(role_arn: str) -> str:
    """The role's name: the ARN's last path segment (arn:aws:iam::1:role/path/name)."""
    return role_arn.rsplit("/", 1)[-1]
