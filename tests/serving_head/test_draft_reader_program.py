"""Create mode under Pulumi's mocks with an s3:// draft: the program's service account and its
IRSA role, allowed to read that head's prefix only, and the endpoint's copy running as it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from program_runs import CR_TYPE, run_main

from mlcc.components.cluster import iam_draft_loop
from mlcc.components.draft_reader import ROLE_ANNOTATION
from mlcc.plan import mocks as offline
from mlcc.serving import s3_draft

HEAD = "s3://team-drafts/llama-8b/run-3/checkpoint-best/"
OVERRIDES = {"hp:speculativeModel": HEAD, "hp:speculativeNumTokens": "3"}


@pytest.fixture(scope="module")
def run() -> offline.OfflineRun:
    return run_main(OVERRIDES)


def by_name(run: offline.OfflineRun, type_token: str, suffix: str) -> dict[str, Any]:
    (found,) = [r for r in run.of_type(type_token) if r.name.endswith(suffix)]
    return found.inputs


def test_the_service_account_carries_the_role(run: offline.OfflineRun) -> None:
    account = by_name(run, "kubernetes:core/v1:ServiceAccount", "draft-reader-service-account")
    metadata = account["metadata"]
    assert (metadata["name"], metadata["namespace"]) == (s3_draft.SERVICE_ACCOUNT, "inference")
    assert metadata["annotations"][ROLE_ANNOTATION].startswith("arn:aws:iam::")


def test_the_role_trusts_that_service_account_only(run: offline.OfflineRun) -> None:
    role = by_name(run, "aws:iam/role:Role", "draft-reader-role")
    trust = json.loads(role["assumeRolePolicy"])
    (statement,) = trust["Statement"]
    conditions = statement["Condition"]["StringEquals"]
    subjects = [v for k, v in conditions.items() if k.endswith(":sub")]
    assert subjects == [f"system:serviceaccount:inference:{s3_draft.SERVICE_ACCOUNT}"]


def test_the_policy_reads_the_heads_prefix_only(run: offline.OfflineRun) -> None:
    policy = json.loads(
        by_name(run, "aws:iam/rolePolicy:RolePolicy", "draft-reader-heads")["policy"]
    )
    assert policy == iam_draft_loop.draft_read(
        "aws", [("team-drafts", "llama-8b/run-3/checkpoint-best/")]
    )
    listing, reading = policy["Statement"]
    assert listing["Action"] == "s3:ListBucket"
    assert listing["Resource"] == "arn:aws:s3:::team-drafts"
    assert listing["Condition"]["StringLike"]["s3:prefix"][1] == "llama-8b/run-3/checkpoint-best/*"
    assert reading == {
        "Effect": "Allow",
        "Action": "s3:GetObject",
        "Resource": "arn:aws:s3:::team-drafts/llama-8b/run-3/checkpoint-best/*",
    }


def test_the_endpoint_copies_as_that_account(run: offline.OfflineRun) -> None:
    spec = run.one(CR_TYPE).inputs["spec"]
    kubernetes = spec["kubernetes"]
    assert kubernetes["serviceAccountName"] == s3_draft.SERVICE_ACCOUNT
    assert [c["name"] for c in kubernetes["initContainers"]] == [s3_draft.INIT_CONTAINER]


def test_a_hub_draft_makes_no_reader() -> None:
    plain = run_main()
    assert plain.of_type("hp:index:DraftReader") == []
    assert "kubernetes" not in plain.one(CR_TYPE).inputs["spec"]
