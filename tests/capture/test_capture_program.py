"""hp:capture through the real program under Pulumi's mocks (docs/draft.md, "Capture").

The stack's bucket (private, SSE-S3, a lifecycle rule per capturing endpoint), the operator's
write access (its role's inline policy in create mode, a bucket policy in existing-cluster mode),
and each CR's spec.dataCapture, valid against the vendored CRD.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from crd_schema import assert_valid_manifest, crd_schema
from program_runs import CR_TYPE, run_main

from mlcc.components.operator import execution_role_name
from mlcc.plan import mocks as offline
from mlcc.plan.mocks import OfflineRun

BUCKET = "aws:s3/bucket:Bucket"
LIFECYCLE = "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"
ENCRYPTION = (
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
)
PUBLIC = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
BUCKET_POLICY = "aws:s3/bucketPolicy:BucketPolicy"
COMPONENT = "hp:index:CaptureBucket"
ENTRIES = [
    {
        "name": "llama",
        "speculativeAlgorithm": "eagle3",
        "speculativeModel": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
        "capture": {"samplingPercent": 10, "retentionDays": 14},
        "baseline": True,
    },
    {"name": "qwen", "model": "Qwen/Qwen3-8B", "capture": {"retentionDays": 90}},
    {"name": "plain", "model": "Qwen/Qwen3-8B"},
]
GROUPS = [{"name": "g5", "instanceType": "ml.g5.12xlarge", "instanceCount": 4}]


def overrides(**extra: object) -> dict[str, str]:
    given: dict[str, object] = {"endpoints": ENTRIES, "instanceGroups": GROUPS, **extra}
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in given.items()}


@pytest.fixture(scope="module")
def created() -> OfflineRun:
    return run_main(overrides())


@pytest.fixture(scope="module")
def existing() -> OfflineRun:
    return run_main(overrides(), stack="existing")


def capture_children(run: OfflineRun, type_token: str) -> list[Any]:
    (component,) = run.of_type(COMPONENT)
    return [r for r in run.of_type(type_token) if r.parent == component.urn]


def crs(run: OfflineRun) -> dict[str, dict[str, Any]]:
    return {cr.inputs["metadata"]["name"]: cr.inputs for cr in run.of_type(CR_TYPE)}


def bucket_name(run: OfflineRun) -> str:
    (bucket,) = capture_children(run, BUCKET)
    return f"{bucket.inputs['bucketPrefix']}{bucket.name}-mock"  # the mock's naming


def test_one_private_sse_s3_bucket_for_the_stack(created: OfflineRun) -> None:
    (bucket,) = capture_children(created, BUCKET)
    assert bucket.inputs["bucketPrefix"] == "hp-capture-"
    (encryption,) = capture_children(created, ENCRYPTION)
    (rule,) = encryption.inputs["rules"]
    # SSE-S3, not SSE-KMS: the only encryption ALB access logs accept.
    assert rule["applyServerSideEncryptionByDefault"] == {"sseAlgorithm": "AES256"}
    (block,) = capture_children(created, PUBLIC)
    assert all(
        block.inputs[k] is True
        for k in (
            "blockPublicAcls",
            "blockPublicPolicy",
            "ignorePublicAcls",
            "restrictPublicBuckets",
        )
    )
    assert created.outputs["captureBucket"] == bucket_name(created)


def test_a_lifecycle_rule_per_capturing_endpoint(created: OfflineRun) -> None:
    (lifecycle,) = capture_children(created, LIFECYCLE)
    rules = {r["filter"]["prefix"]: r for r in lifecycle.inputs["rules"]}
    assert sorted(rules) == ["llama/", "qwen/"]  # not the twin, not the endpoint without it
    assert rules["llama/"]["expiration"] == {"days": 14}
    assert rules["qwen/"]["expiration"] == {"days": 90}
    assert {r["status"] for r in rules.values()} == {"Enabled"}


def test_the_operator_role_may_write_the_bucket_only(created: OfflineRun) -> None:
    (policy,) = capture_children(created, ROLE_POLICY)
    assert policy.inputs["role"] == execution_role_name("hp-dev")
    arn = f"arn:aws:s3:::{bucket_name(created)}"
    statements = json.loads(policy.inputs["policy"])["Statement"]
    assert statements == [
        {"Effect": "Allow", "Action": ["s3:GetBucketLocation", "s3:ListBucket"], "Resource": arn},
        {
            "Effect": "Allow",
            "Action": ["s3:PutObject", "s3:PutObjectTagging"],
            "Resource": f"{arn}/*",
        },
    ]
    assert not capture_children(created, BUCKET_POLICY)


def test_each_cr_captures_into_its_prefix_valid_against_the_crd(created: OfflineRun) -> None:
    by_name = crs(created)
    bucket = bucket_name(created)
    for cr in by_name.values():
        assert_valid_manifest(cr, "inferenceendpointconfigs.yaml")
    llama = by_name["llama"]["spec"]["dataCapture"]
    assert llama == {
        "s3Uri": f"s3://{bucket}/llama",
        "sagemakerEndpoint": {
            "enabled": True,
            "initialSamplingPercentage": 10,
            "captureOptions": [{"captureMode": "Input"}, {"captureMode": "Output"}],
            "captureContentTypeHeader": {"jsonContentTypes": ["application/json"]},
        },
    }
    assert (
        by_name["qwen"]["spec"]["dataCapture"]["sagemakerEndpoint"]["initialSamplingPercentage"]
        == 100
    )
    assert "dataCapture" not in by_name["plain"]["spec"]
    assert "dataCapture" not in by_name["llama-baseline"]["spec"]
    for name in ("llama", "qwen"):
        assert by_name[name]["spec"]["endpointName"] == name  # the registration stays


def test_the_sampling_bounds_are_the_crds() -> None:
    spec = crd_schema("inferenceendpointconfigs.yaml")["properties"]["spec"]
    tier = spec["properties"]["dataCapture"]["properties"]["sagemakerEndpoint"]
    sampling = tier["properties"]["initialSamplingPercentage"]
    assert (sampling["minimum"], sampling["maximum"]) == (0, 100)


def test_the_endpoints_wait_for_the_bucket_and_its_access(created: OfflineRun) -> None:
    (policy,) = capture_children(created, ROLE_POLICY)
    (lifecycle,) = capture_children(created, LIFECYCLE)
    for cr in created.of_type(CR_TYPE):
        if cr.inputs["metadata"]["name"] in ("llama", "qwen"):
            assert {policy.urn, lifecycle.urn} <= set(cr.dependencies)


def test_existing_cluster_mode_grants_by_bucket_policy(existing: OfflineRun) -> None:
    assert not capture_children(existing, ROLE_POLICY)
    (policy,) = capture_children(existing, BUCKET_POLICY)
    document = json.loads(policy.inputs["policy"])
    arn = f"arn:aws:s3:::{bucket_name(existing)}"
    by_sid = {s["Sid"]: s for s in document["Statement"]}
    assert by_sid["DenyInsecureTransport"]["Condition"] == {
        "Bool": {"aws:SecureTransport": "false"}
    }
    write = by_sid["OperatorWritesCapture"]
    assert write["Principal"] == {"AWS": f"arn:aws:iam::{offline.ACCOUNT_ID}:root"}
    assert write["Resource"] == f"{arn}/*"
    role = f"arn:aws:iam::{offline.ACCOUNT_ID}:role/SageMakerHyperPodInference*"
    assert write["Condition"] == {"ArnLike": {"aws:PrincipalArn": role}}
    assert crs(existing)["llama"]["spec"]["dataCapture"]["s3Uri"].endswith("/llama")


def test_no_capture_no_bucket() -> None:
    run = run_main({"instanceGroups": json.dumps(GROUPS)})
    assert not run.of_type(COMPONENT)
    assert not [r for r in run.of_type(BUCKET) if r.inputs["bucketPrefix"] == "hp-capture-"]
    assert all("dataCapture" not in cr["spec"] for cr in crs(run).values())
