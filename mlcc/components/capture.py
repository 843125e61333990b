"""The bucket that hp:capture's traffic goes to, with its lifecycle and the operator's IAM.

docs/draft.md ("Capture") explains it. One private bucket per stack (public access blocked,
SSE-S3: the only default encryption load-balancer access logs accept, so no tier of the
operator's is locked out), one lifecycle rule per capturing endpoint that expires its prefix
after its retention, and the write access of the inference operator's execution role: an
inline policy on the role when the stack created it, else a bucket policy for the add-on's
role name prefix. The CR's spec.dataCapture names the bucket (mlcc/manifest/capture.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from mlcc.components.cluster import iam_draft_loop
from mlcc.components.cluster.storage import private_bucket
from mlcc.manifest import capture as manifest

BUCKET_PREFIX = "hp-capture-"


@dataclass(frozen=True)
class CaptureTarget:
    endpoint: str
    retention_days: int


@dataclass(frozen=True)
class CaptureBucketArgs:
    targets: Sequence[CaptureTarget]
    tags: Mapping[str, str]
    # The operator's execution role when the stack created it (create mode); None = a cluster
    # whose add-on the stack did not install: a bucket policy for its role name prefix.
    operator_role_name: pulumi.Input[str] | None
    operator_role_prefix: str


class CaptureBucket(pulumi.ComponentResource):
    bucket_name: pulumi.Output[str]
    uris: dict[str, pulumi.Output[str]]

    def __init__(
        self, name: str, args: CaptureBucketArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("hp:index:CaptureBucket", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        bucket = private_bucket(name, prefix=BUCKET_PREFIX, tags=args.tags, parent=self)
        aws.s3.BucketLifecycleConfiguration(
            name,
            bucket=bucket.id,
            rules=[
                aws.s3.BucketLifecycleConfigurationRuleArgs(
                    id=f"expire-{target.endpoint}",
                    status="Enabled",
                    filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(
                        prefix=manifest.prefix(target.endpoint)
                    ),
                    expiration=aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(
                        days=target.retention_days
                    ),
                    abort_incomplete_multipart_upload=(
                        aws.s3.BucketLifecycleConfigurationRuleAbortIncompleteMultipartUploadArgs(
                            days_after_initiation=1
                        )
                    ),
                )
                for target in args.targets
            ],
            opts=child,
        )
        if args.operator_role_name is not None:
            aws.iam.RolePolicy(
                f"{name}-operator",
                role=args.operator_role_name,
                policy=bucket.arn.apply(lambda arn: json.dumps(iam_draft_loop.capture_write(arn))),
                opts=child,
            )
        else:
            invoke = pulumi.InvokeOutputOptions(parent=self)
            partition = aws.get_partition_output(opts=invoke).partition
            account = aws.get_caller_identity_output(opts=invoke).account_id
            policy = pulumi.Output.all(partition, account, bucket.arn).apply(
                lambda v: json.dumps(
                    iam_draft_loop.capture_bucket_policy(
                        v[0], v[1], v[2], args.operator_role_prefix
                    )
                )
            )
            aws.s3.BucketPolicy(f"{name}-operator", bucket=bucket.id, policy=policy, opts=child)
        self.bucket_name = bucket.bucket
        self.uris = {t.endpoint: _uri(bucket.bucket, t.endpoint) for t in args.targets}
        self.register_outputs({"bucket": self.bucket_name})


def _uri(bucket: pulumi.Output[str], endpoint: str) -> pulumi.Output[str]:
    return bucket.apply(lambda name: manifest.s3_uri(name, endpoint))
