"""IAM policy documents of the draft loop (docs/draft.md), as plain data (pure): writing
captured traffic (hp:capture), reading a trained head from S3 (an s3:// hp:speculativeModel) and
the training job's dataset and output (hp:draftTraining)."""

from __future__ import annotations

from collections.abc import Sequence

from mlcc.components.cluster.iam_policies import PolicyDocument, document


def draft_read(partition: str, heads: Sequence[tuple[str, str]]) -> PolicyDocument:
    """Read the trained draft heads at these (bucket, prefix) pairs, nothing else: what the
    copy (`aws s3 sync`: ListObjectsV2, GetObject; `aws s3api head-object`) needs. s3:prefix
    limits the listing to each head's folder (IAM's S3 condition keys)."""
    statements: list[dict[str, object]] = []
    for bucket, prefix in sorted(set(heads)):
        bucket_arn = f"arn:{partition}:s3:::{bucket}"
        statements.append(
            {
                "Effect": "Allow",
                "Action": "s3:ListBucket",
                "Resource": bucket_arn,
                "Condition": {"StringLike": {"s3:prefix": [prefix, f"{prefix}*"]}},
            }
        )
        statements.append(
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"{bucket_arn}/{prefix}*"}
        )
    return document(*statements)


CAPTURE_BUCKET_ACTIONS = ("s3:GetBucketLocation", "s3:ListBucket")
CAPTURE_OBJECT_ACTIONS = ("s3:PutObject", "s3:PutObjectTagging")


def capture_write(bucket_arn: str) -> PolicyDocument:
    """The operator's execution role may write captured traffic into this bucket only."""
    return document(
        {"Effect": "Allow", "Action": list(CAPTURE_BUCKET_ACTIONS), "Resource": bucket_arn},
        {"Effect": "Allow", "Action": list(CAPTURE_OBJECT_ACTIONS), "Resource": f"{bucket_arn}/*"},
    )


def capture_bucket_policy(
    partition: str, account: str, bucket_arn: str, role_prefix: str
) -> PolicyDocument:
    """For a cluster the stack did not create: this account's roles named `role_prefix`* (the
    inference add-on requires its execution role's name to start with it) may write; nothing
    but TLS reaches the bucket."""
    role_pattern = f"arn:{partition}:iam::{account}:role/{role_prefix}*"
    principal = {"AWS": f"arn:{partition}:iam::{account}:root"}
    condition = {"ArnLike": {"aws:PrincipalArn": role_pattern}}
    return document(
        {
            "Sid": "DenyInsecureTransport",
            "Effect": "Deny",
            "Principal": "*",
            "Action": "s3:*",
            "Resource": [bucket_arn, f"{bucket_arn}/*"],
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        },
        {
            "Sid": "OperatorListsBucket",
            "Effect": "Allow",
            "Principal": principal,
            "Action": list(CAPTURE_BUCKET_ACTIONS),
            "Resource": bucket_arn,
            "Condition": condition,
        },
        {
            "Sid": "OperatorWritesCapture",
            "Effect": "Allow",
            "Principal": principal,
            "Action": list(CAPTURE_OBJECT_ACTIONS),
            "Resource": f"{bucket_arn}/*",
            "Condition": condition,
        },
    )


def s3_location(uri: str, partition: str = "aws") -> tuple[str, str]:
    """(bucket ARN, key prefix) of an s3://bucket/prefix/ URI."""
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    return f"arn:{partition}:s3:::{bucket}", prefix


def draft_training_s3(dataset_uri: str, output_uri: str, partition: str = "aws") -> PolicyDocument:
    """The draft-training job: read the dataset prefix, read and write the output prefix
    (`aws s3 cp` and `aws s3 sync`: list, get, put; multipart uploads abort cleanly)."""
    dataset_bucket, dataset_prefix = s3_location(dataset_uri, partition)
    output_bucket, output_prefix = s3_location(output_uri, partition)
    listed: dict[str, list[str]] = {}
    for bucket, prefix in ((dataset_bucket, dataset_prefix), (output_bucket, output_prefix)):
        listed.setdefault(bucket, []).append(f"{prefix}*")
    statements: list[dict[str, object]] = [
        {
            "Effect": "Allow",
            "Action": "s3:ListBucket",
            "Resource": bucket,
            "Condition": {"StringLike": {"s3:prefix": sorted(set(prefixes))}},
        }
        for bucket, prefixes in sorted(listed.items())
    ]
    statements.append(
        {
            "Effect": "Allow",
            "Action": "s3:GetObject",
            "Resource": f"{dataset_bucket}/{dataset_prefix}*",
        }
    )
    statements.append(
        {
            "Effect": "Allow",
            "Action": ["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"],
            "Resource": f"{output_bucket}/{output_prefix}*",
        }
    )
    return document(*statements)
