"""Private, encrypted S3 buckets (a helper for the components; not a component itself)."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_aws as aws


def private_bucket(
    name: str, *, prefix: str, tags: Mapping[str, str], parent: pulumi.Resource
) -> aws.s3.Bucket:
    """A bucket with public access blocked, SSE-S3 encryption and ACLs disabled."""
    child = pulumi.ResourceOptions(parent=parent)
    bucket = aws.s3.Bucket(
        name, bucket_prefix=prefix, force_destroy=True, tags=dict(tags), opts=child
    )
    aws.s3.BucketPublicAccessBlock(
        name,
        bucket=bucket.id,
        block_public_acls=True,
        block_public_policy=True,
        ignore_public_acls=True,
        restrict_public_buckets=True,
        opts=child,
    )
    aws.s3.BucketServerSideEncryptionConfiguration(
        name,
        bucket=bucket.id,
        rules=[
            aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                apply_server_side_encryption_by_default=(
                    aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                        sse_algorithm="AES256"
                    )
                ),
                bucket_key_enabled=True,
            )
        ],
        opts=child,
    )
    aws.s3.BucketOwnershipControls(
        name,
        bucket=bucket.id,
        rule=aws.s3.BucketOwnershipControlsRuleArgs(object_ownership="BucketOwnerEnforced"),
        opts=child,
    )
    return bucket
