"""The local AWS itself: a request botocore would not send is a violation, whatever the protocol,
and a scripted reply that breaks the output shape is recorded."""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator

import boto3
import pytest
from local_aws import LocalAWS, Reply, local_aws


def scope(service: str) -> dict[str, str]:
    credential = f"testing/20261204/us-east-1/{service}/aws4_request"
    return {"Authorization": f"AWS4-HMAC-SHA256 Credential={credential}, Signature=0"}


def send(fake: LocalAWS, path: str, body: bytes, headers: dict[str, str], method: str) -> int:
    request = urllib.request.Request(fake.url + path, body or None, headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return refused.code


@pytest.fixture
def fake() -> Iterator[LocalAWS]:
    with local_aws() as served:
        yield served


@pytest.mark.parametrize(
    ("path", "body", "headers", "method", "expected"),
    [
        (
            "/addons/supported-versions?addonName=x&bogus=1",
            b"",
            scope("eks"),
            "GET",
            "eks DescribeAddonVersions: query",
        ),
        (
            "/",
            b"Action=DescribeInstanceTypes&Version=2016-11-15&InstanceType.1=g5.xlarge&Bogus=1",
            {**scope("ec2"), "Content-Type": "application/x-www-form-urlencoded"},
            "POST",
            "ec2 DescribeInstanceTypes: form",
        ),
        (
            "/",
            json.dumps({"ClusterName": "a", "Extra": 1}).encode(),
            {**scope("sagemaker"), "X-Amz-Target": "SageMaker.DescribeCluster"},
            "POST",
            'Unknown parameter in input: "Extra"',
        ),
        (
            "/",
            json.dumps({"ServiceCode": "sagemaker", "MaxResults": 1000}).encode(),
            {**scope("servicequotas"), "X-Amz-Target": "ServiceQuotasV20190624.ListServiceQuotas"},
            "POST",
            "MaxResults: 1000 outside 1..100",
        ),
        ("/", b"{}", {"X-Amz-Target": "SageMaker.DescribeCluster"}, "POST", "unsigned"),
    ],
)
def test_a_request_the_model_does_not_allow_is_a_violation(
    fake: LocalAWS, path: str, body: bytes, headers: dict[str, str], method: str, expected: str
) -> None:
    assert send(fake, path, body, headers, method) == 400
    assert any(expected in violation for violation in fake.violations), fake.violations
    assert fake.calls == []  # never reached a script


def test_a_reply_that_breaks_the_output_shape_is_recorded(
    fake: LocalAWS, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    fake.on("DescribeAddon", Reply(body={"addon": {"status": "SLEEPING"}}), "eks")
    client = boto3.client("eks", region_name="us-east-1", endpoint_url=fake.url)
    assert client.describe_addon(clusterName="c", addonName="a")["addon"]["status"] == "SLEEPING"
    assert fake.violations == []
    assert fake.reply_problems == [
        "DescribeAddon reply.addon.status: 'SLEEPING' not in "
        "['CREATING', 'ACTIVE', 'CREATE_FAILED', 'UPDATING', "
        "'DELETING', 'DELETE_FAILED', 'DEGRADED', 'UPDATE_FAILED']"
    ]
