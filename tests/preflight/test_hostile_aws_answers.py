"""Hostile AWS answers, round three (issue #43, item 8): answers botocore parses but that do not
say what they seem to (a quota as text, a list sent as null, a version as a number), Price List
items that are not JSON, and a body that never ends. Each is "not checked" naming the call, or
read for what it says, never taken as a fact (a quota of 0, an add-on not offered, no version
for the cluster's Kubernetes)."""

from __future__ import annotations

from typing import Any

import pytest
from aws_accounts import quota_page
from local_aws import LocalAWS, Reply
from test_hostile_aws import QUOTA, aws, checked, not_checked

from mlcc.preflight.bounded.aws_answers import MAX_ANSWER_BYTES
from mlcc.preflight.cost import price_list as pricing

__all__ = ["aws"]  # the fixture, used by name
ADDON = "amazon-sagemaker-hyperpod-inference"


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("12", "Quotas[0].Value is '12', where the model has a double"),
        (None, "Service Quotas lists it without a value"),
    ],
)
def test_a_quota_as_text_or_null_is_not_checked_never_the_default(
    aws: LocalAWS, value: Any, says: str
) -> None:
    aws.on("ListServiceQuotas", quota_page(value), "service-quotas")
    outcome = checked()
    aws.reply_problems.clear()  # malformed on purpose: botocore parses it all the same
    (line,) = not_checked(outcome)
    assert says in line and "hp:instanceGroups: not checked: quota" in line, line
    assert outcome.errors == ()


def addon_reply(*versions: dict[str, Any], listed: bool = True) -> Reply:
    addon: dict[str, Any] = {"addonName": ADDON}
    if listed:
        addon["addonVersions"] = list(versions)
    else:
        addon["addonVersions"] = None
    return Reply(body={"addons": [addon]})


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        (
            addon_reply({"addonVersion": "v1.2.0-eksbuild.1", "compatibilities": None}),
            "a version without the Kubernetes versions it supports",
        ),
        (
            addon_reply(
                {"addonVersion": "v1.2.0-eksbuild.1", "compatibilities": [{"clusterVersion": 1.33}]}
            ),
            "clusterVersion is 1.33, where the model has a string",
        ),
        (addon_reply(listed=False), f"it lists {ADDON} without its versions"),
    ],
    ids=["compatibilities null", "cluster version a number", "versions null"],
)
def test_addon_lists_that_are_null_or_malformed_are_not_checked(
    aws: LocalAWS, reply: Reply, says: str
) -> None:
    aws.on("DescribeAddonVersions", reply, "eks")
    outcome = checked()
    aws.reply_problems.clear()
    (line,) = not_checked(outcome)
    assert "EKS DescribeAddonVersions: " in line and says in line, line
    assert outcome.errors == ()  # never "EKS offers none" nor "no version supports 1.33"


def test_a_kubernetes_version_with_its_patch_is_read_as_its_minor_version(aws: LocalAWS) -> None:
    version = {
        "addonVersion": "v1.2.0-eksbuild.1",
        "compatibilities": [{"clusterVersion": "1.33.0", "defaultVersion": True}],
    }
    aws.on("DescribeAddonVersions", addon_reply(version), "eks")
    outcome = checked()
    assert not_checked(outcome) == [] and outcome.errors == ()
    assert "add-on v1.2.0-eksbuild.1 for Kubernetes 1.33" in outcome.lines[""][0]


def test_price_list_items_that_are_not_json_are_not_read_and_the_snapshot_stands(
    aws: LocalAWS,
) -> None:
    aws.on("GetProducts", Reply(body={"FormatVersion": "aws_v1", "PriceList": ["{"]}), "pricing")
    outcome = checked(pricing.pricing_part)
    lines = not_checked(outcome)
    assert lines and all(
        "the AWS Price List could not be read: 1 of its 1 products are not JSON" in x for x in lines
    )
    assert outcome.prices == ()  # no "not found": the plan prices from the snapshot


@pytest.mark.parametrize("chunked", [False, True], ids=["no length", "chunked"])
def test_a_body_that_never_ends_stops_at_the_cap(aws: LocalAWS, chunked: bool) -> None:
    aws.on("ListServiceQuotas", Reply(endless=b" " * 65536, chunked=chunked), "service-quotas")
    (line,) = not_checked(checked())
    assert f"an answer of more than {MAX_ANSWER_BYTES >> 20} MiB (not read)" in line
    assert "ListServiceQuotas" in line and QUOTA in line
