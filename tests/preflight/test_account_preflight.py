"""The account part of preflight against the local AWS, reached through AWS_ENDPOINT_URL.

Every request is checked against botocore's model by the fake (tests/local_aws.py); the
accounts (tests/preflight/aws_accounts.py) answer as real ones do, lists paginated. Each
scenario of a first `pulumi up` that fails late must be refused (or warned) here, naming the key
and the numbers.
"""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
from aws_accounts import (
    Account,
    Addon,
    Group,
    HyperPod,
    ample,
    example_account,
    quota_code,
    serve,
    stack_config,
)
from local_aws import LocalAWS, Reply, error

from mlcc.preflight.account import fetch as account_fetch
from mlcc.preflight.account import part as account
from mlcc.preflight.account.facts import GpuMemory
from mlcc.preflight.outcome import Mode, Outcome, settle

EXISTING_ARN = "arn:aws:sagemaker:us-east-1:123456789012:cluster/a1b2c3d4e5f6"  # its stack's
DEADLINE_S = 20.0
QUOTA = "ml.g5.12xlarge for cluster usage"


def existing_account(cluster: HyperPod | None = None, addon: Addon | None = None) -> Account:
    account_ = Account()
    cluster = cluster or HyperPod(
        "inference", groups=[Group("g5", "ml.g5.12xlarge", running=2)], arn=EXISTING_ARN
    )
    account_.add_hyperpod(cluster)
    account_.addons[cluster.eks_name] = addon or Addon()
    return account_


def run(fake: LocalAWS, scenario: Account, stack: str = "dev", **overrides: str) -> Outcome:
    serve(fake, scenario)
    return account.check_account(stack_config(stack, overrides or None), DEADLINE_S)


def messages(problems: object) -> list[str]:
    return [str(p) for p in problems]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("stack", "scenario"),
    [
        ("dev", ample("ml.g5.12xlarge")),
        ("multi", ample("ml.g5.12xlarge")),
        ("existing", existing_account()),
        ("existing", example_account()),
    ],
)
def test_ample_quotas_and_a_matching_addon_pass_without_a_warning(
    aws: LocalAWS, stack: str, scenario: Account
) -> None:
    outcome = run(aws, scenario, stack)
    assert (outcome.errors, outcome.warnings, outcome.unchecked) == ((), (), ())
    (line,) = outcome.lines[""]
    kubernetes = "1.34" if stack == "multi" else "1.33"  # multi takes the default version
    assert "add-on v1.2.0-eksbuild.1" in line and f"Kubernetes {kubernetes}" in line


def test_the_headline_line_gives_the_quota_and_what_the_stack_needs(aws: LocalAWS) -> None:
    outcome = run(aws, ample("ml.g5.12xlarge", value=4), "multi")
    assert outcome.lines[""] == (
        f"quota {QUOTA}: 4, stack needs 4; add-on v1.2.0-eksbuild.1 for Kubernetes 1.34",
    )


def test_a_zero_default_quota_is_refused_with_the_command_that_raises_it(aws: LocalAWS) -> None:
    scenario = Account(defaults={QUOTA: 0.0})
    outcome = run(aws, scenario, "dev")
    (problem,) = outcome.errors
    assert problem.key == "hp:instanceGroups"
    code = quota_code(QUOTA)
    assert f"'{QUOTA}' ({code}) is 0 in us-east-1 (the AWS default)" in problem.message
    assert "asks for 1 ml.g5.12xlarge" in problem.message
    assert problem.message.endswith(
        "aws service-quotas request-service-quota-increase --service-code sagemaker "
        f"--quota-code {code} --desired-value 1 --region us-east-1"
    )
    # Both lists are read to the end, page by page (PAGE items each, as AWS pages them).
    pages = [c.params.get("NextToken") for c in aws.calls if c.operation == "ListServiceQuotas"]
    assert pages == [None, "2", "4"]


def test_a_short_applied_quota_counts_every_group_and_autoscaling(aws: LocalAWS) -> None:
    scenario = Account(applied={QUOTA: 2.0}, defaults={QUOTA: 0.0})
    (problem,) = run(aws, scenario, "multi").errors
    assert "is 2 in us-east-1 (the applied value)" in problem.message
    assert "asks for 4 ml.g5.12xlarge in hp:instanceGroups (its endpoints at autoscaling's " in (
        problem.message
    )
    assert "ceiling fill 5)" in problem.message
    assert "--desired-value 4" in problem.message


def test_a_type_without_a_cluster_quota_says_so(aws: LocalAWS) -> None:
    outcome = run(aws, Account(), "dev")
    assert outcome.errors == ()
    (warning,) = outcome.warnings
    assert warning.key == "hp:instanceGroups"
    assert f"lists no SageMaker quota named '{QUOTA}' in us-east-1" in warning.message


def test_a_region_without_the_addon_is_refused(aws: LocalAWS) -> None:
    scenario = ample("ml.g5.12xlarge")
    scenario.addon_versions = None
    (problem,) = run(aws, scenario, "dev").errors
    assert problem.key == "aws:region"
    assert "no version of the add-on amazon-sagemaker-hyperpod-inference in us-east-1" in (
        problem.message
    )


def test_addon_versions_without_the_stacks_kubernetes_are_refused(aws: LocalAWS) -> None:
    scenario = ample("ml.g5.12xlarge")
    scenario.addon_versions = {"v1.0.0-eksbuild.1": ["1.30", "1.31"]}
    (problem,) = run(aws, scenario, "dev").errors
    assert problem.key == "hp:kubernetesVersion"
    assert "supports Kubernetes 1.33 (its versions support 1.30, 1.31)" in problem.message
    # 1.30 and 1.31 are past EKS extended support on the tests' date: neither is recommended
    assert problem.message.endswith(
        "none of them is one HyperPod supports and EKS creates on 2026-12-06 (1.32, 1.33, 1.34, "
        "docs/kubernetes-facts.md): choose another region"
    )


def test_the_recommended_versions_are_only_those_the_config_accepts(aws: LocalAWS) -> None:
    """The add-on's list may name 1.35 (HyperPod does not) and 1.31 (EKS no longer creates
    it): the recommendation names only what hp:kubernetesVersion accepts."""
    scenario = ample("ml.g5.12xlarge")
    scenario.addon_versions = {"v1.0.0-eksbuild.1": ["1.31", "1.32", "1.34", "1.35"]}
    (problem,) = run(aws, scenario, "dev").errors  # the dev stack asks for 1.33
    assert problem.key == "hp:kubernetesVersion"
    assert problem.message.endswith(
        "(its versions support 1.31, 1.32, 1.34, 1.35); set hp:kubernetesVersion to one of "
        "1.32, 1.34"
    )


@pytest.mark.parametrize(
    ("cluster", "addon", "eks_version", "key", "expected"),
    [
        (
            HyperPod(
                "inference",
                status="Creating",
                arn=EXISTING_ARN,
                groups=[Group("g5", "ml.g5.12xlarge", running=1)],
            ),
            Addon(),
            "1.33",
            "hp:clusterName",
            "HyperPod cluster inference is Creating, not InService",
        ),
        (
            HyperPod(
                "inference",
                status="Failed",
                failure="VPC subnet has no free IPs",
                arn=EXISTING_ARN,
                groups=[Group("g5", "ml.g5.12xlarge", running=1)],
            ),
            Addon(),
            "1.33",
            "hp:clusterName",
            "is Failed, not InService: VPC subnet has no free IPs",
        ),
        (
            HyperPod("inference", arn=EXISTING_ARN, groups=[Group("g6", "ml.g6.12xlarge", 2)]),
            Addon(),
            "1.33",
            "hp:instanceType",
            "ml.g5.12xlarge is not the type of any instance group of HyperPod cluster inference "
            "(g6: ml.g6.12xlarge x 2)",
        ),
        (
            HyperPod(
                "inference",
                arn=EXISTING_ARN,
                groups=[Group("g5", "ml.g5.12xlarge", running=0, pending=1)],
            ),
            Addon(),
            "1.33",
            "hp:replicas",
            "need 1 instance(s) (4 GPU(s), 4 per instance) and HyperPod cluster inference has 0 "
            "running",
        ),
        (
            HyperPod("inference", arn=EXISTING_ARN, groups=[Group("g5", "ml.g5.12xlarge", 1)]),
            Addon(status="CREATE_FAILED", issues=[("AccessDenied", "role cannot be assumed")]),
            "1.33",
            "hp:clusterName",
            "v1.2.0-eksbuild.1 on EKS cluster hp-existing-eks is CREATE_FAILED: AccessDenied: "
            "role cannot be assumed",
        ),
        (
            HyperPod("inference", arn=EXISTING_ARN, groups=[Group("g5", "ml.g5.12xlarge", 1)]),
            Addon(status="DEGRADED"),
            "1.33",
            "hp:clusterName",
            "is DEGRADED",
        ),
        (
            HyperPod("inference", arn=EXISTING_ARN, groups=[Group("g5", "ml.g5.12xlarge", 1)]),
            Addon(version="v1.0.0-eksbuild.1"),
            "1.33",
            "hp:clusterName",
            "amazon-sagemaker-hyperpod-inference v1.0.0-eksbuild.1 on EKS cluster hp-existing-eks "
            "does not support its Kubernetes 1.33 (it supports 1.30, 1.31, 1.32); update it: aws "
            "eks update-addon --cluster-name hp-existing-eks --addon-name "
            "amazon-sagemaker-hyperpod-inference --addon-version v1.2.0-eksbuild.1",
        ),
        (
            HyperPod("inference", arn=EXISTING_ARN, groups=[Group("g5", "ml.g5.12xlarge", 1)]),
            Addon(),
            "1.29",
            "hp:clusterName",
            "EKS cluster hp-existing-eks runs Kubernetes 1.29, which no version of the add-on "
            "amazon-sagemaker-hyperpod-inference supports "
            "(they support 1.30, 1.31, 1.32, 1.33, 1.34)",
        ),
    ],
)
def test_an_existing_cluster_in_each_bad_state_is_refused(
    aws: LocalAWS, cluster: HyperPod, addon: Addon, eks_version: str, key: str, expected: str
) -> None:
    scenario = Account()
    scenario.add_hyperpod(cluster, eks_version)
    scenario.addons[cluster.eks_name] = addon
    (problem,) = run(aws, scenario, "existing").errors
    assert problem.key == key
    assert expected in problem.message


def test_an_existing_cluster_without_the_addon_is_refused(aws: LocalAWS) -> None:
    scenario = existing_account()
    scenario.addons.clear()
    (problem,) = run(aws, scenario, "existing").errors
    assert problem.key == "hp:clusterName"
    assert (
        "amazon-sagemaker-hyperpod-inference is not installed on EKS cluster hp-existing-eks"
        in (problem.message)
    )
    assert "aws eks create-addon --cluster-name hp-existing-eks" in problem.message


def test_a_missing_existing_cluster_is_refused(aws: LocalAWS) -> None:
    (problem,) = run(aws, Account(), "existing").errors
    assert problem.key == "hp:clusterName"
    assert f"no HyperPod cluster '{EXISTING_ARN}' in us-east-1" in problem.message


def test_throttling_is_retried_a_bounded_number_of_times_then_unchecked(aws: LocalAWS) -> None:
    serve(aws, ample("ml.g5.12xlarge"))
    aws.on("ListServiceQuotas", error("ThrottlingException", "Rate exceeded"), "service-quotas")
    outcome = account.check_account(stack_config("dev"), DEADLINE_S)
    (missed,) = outcome.unchecked
    assert missed.key == "hp:instanceGroups"
    assert "throttled (ThrottlingException)" in missed.why
    assert aws.operations("service-quotas").count("ListServiceQuotas") == (
        account_fetch.MAX_ATTEMPTS
    )
    errors, warnings = settle(outcome, Mode.STRICT)
    assert [p.key for p in errors] == ["hp:instanceGroups"] and warnings == []


def test_access_denied_is_a_warning_naming_the_iam_action(aws: LocalAWS) -> None:
    serve(aws, ample("ml.g5.12xlarge"))
    denied = error(
        "AccessDeniedException", "not authorized to perform eks:DescribeAddonVersions", 403
    )
    aws.on("DescribeAddonVersions", denied, "eks")
    outcome = account.check_account(stack_config("dev"), DEADLINE_S)
    assert outcome.errors == () and outcome.unchecked == ()
    (warning,) = outcome.warnings
    assert warning.key == "hp:kubernetesVersion"
    assert "grant the IAM action eks:DescribeAddonVersions" in warning.message


def test_ec2_unauthorized_names_its_action(aws: LocalAWS) -> None:
    serve(aws, ample("ml.g5.12xlarge"))
    aws.on("DescribeInstanceTypes", error("UnauthorizedOperation", "no", 403), "ec2")
    facts = account.gather(stack_config("dev"), DEADLINE_S)
    denied = facts.gpu_memory["ml.g5.12xlarge"]
    assert getattr(denied, "denied_action", "") == "ec2:DescribeInstanceTypes"


def test_a_silent_service_costs_the_deadline_and_is_unchecked(aws: LocalAWS) -> None:
    serve(aws, existing_account())
    answer = aws.scripts[("sagemaker", "DescribeCluster")]
    aws.on("DescribeCluster", lambda r: replace(answer(r), delay_s=30), "sagemaker")
    started = time.monotonic()
    outcome = account.check_account(stack_config("existing"), 0.5)
    assert time.monotonic() - started < 15  # the deadline, not the service's 30 s
    assert [u.key for u in outcome.unchecked] == ["hp:clusterName"]
    assert "no answer" in outcome.unchecked[0].why


def test_no_credentials_is_unchecked_and_sends_nothing(
    aws: LocalAWS, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    outcome = account.check_account(stack_config("dev"), DEADLINE_S)
    assert outcome.errors == ()
    assert {u.key for u in outcome.unchecked} == {"hp:instanceGroups", "hp:kubernetesVersion"}
    assert all("no AWS credentials" in u.why for u in outcome.unchecked)
    assert aws.calls == []


def test_a_stack_profile_that_does_not_exist_is_unchecked(aws: LocalAWS) -> None:
    stack = stack_config("dev", {"aws:profile": "nowhere"})
    assert stack.aws_profile == "nowhere"
    outcome = account.check_account(stack, DEADLINE_S)
    assert all("aws:profile 'nowhere'" in u.why for u in outcome.unchecked)
    assert aws.calls == []


def test_an_aws_profile_variable_that_does_not_exist_is_named(
    aws: LocalAWS, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_PROFILE", "nowhere")
    outcome = account.check_account(stack_config("dev"), DEADLINE_S)
    assert outcome.unchecked and all(
        "AWS_PROFILE='nowhere': The config profile (nowhere) could not be found" in u.why
        for u in outcome.unchecked
    )
    assert aws.calls == []


@pytest.mark.parametrize(
    "variable", ["AWS_METADATA_SERVICE_TIMEOUT", "AWS_METADATA_SERVICE_NUM_ATTEMPTS"]
)
def test_a_setting_botocore_cannot_convert_is_named_not_blamed_on_an_answer(
    aws: LocalAWS, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    """botocore converts these with int() when it makes a client: 'abc' is a setting to fix,
    not an answer with fields of the wrong type."""
    monkeypatch.setenv(variable, "abc")
    outcome = account.check_account(stack_config("dev"), DEADLINE_S)
    assert {u.key for u in outcome.unchecked} == {"hp:instanceGroups", "hp:kubernetesVersion"}
    for unchecked in outcome.unchecked:
        assert f"{variable}='abc' is not a value botocore accepts: fix or unset it" in unchecked.why
    assert aws.calls == []


def test_per_service_endpoint_variables_are_honoured(
    aws: LocalAWS, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens there
    for service in ("SERVICE_QUOTAS", "EKS", "EC2", "SAGEMAKER"):
        monkeypatch.setenv(f"AWS_ENDPOINT_URL_{service}", aws.url)
    outcome = run(aws, ample("ml.g5.12xlarge"), "dev")
    assert (outcome.errors, outcome.warnings, outcome.unchecked) == ((), (), ())


def test_gpu_memory_comes_from_ec2_for_the_twin_type(aws: LocalAWS) -> None:
    serve(aws, ample("ml.g5.12xlarge"))
    facts = account.gather(stack_config("dev"), DEADLINE_S)
    assert facts.gpu_memory == {"ml.g5.12xlarge": GpuMemory(gpus=4, mib_per_gpu=22888)}
    (call,) = [c for c in aws.calls if c.service == "ec2"]
    assert call.params == {"InstanceTypes": ["g5.12xlarge"]}


def test_an_entry_on_a_type_the_existing_cluster_lacks_names_its_entry_key(
    aws: LocalAWS,
) -> None:
    overrides = {
        "hp:clusterName": EXISTING_ARN,
        "hp:instanceGroups": None,
        "hp:endpoints[1].instanceType": "ml.g6e.12xlarge",
    }
    serve(aws, existing_account())
    outcome = account.check_account(stack_config("multi", overrides), DEADLINE_S)
    (problem,) = outcome.errors
    assert problem.key == "hp:endpoints[1].instanceType"
    assert problem.message.startswith("ml.g6e.12xlarge is not the type of any instance group")
    assert "ml.g5.12xlarge: 2 running, endpoints need 2" in outcome.lines[""][0]


def test_an_unreadable_reply_is_unchecked_never_a_traceback(aws: LocalAWS) -> None:
    serve(aws, ample("ml.g5.12xlarge"))
    aws.on("DescribeAddonVersions", Reply(200, b"<html>gateway</html>"), "eks")
    aws.on("ListAWSDefaultServiceQuotas", Reply(502, b"Bad Gateway"), "service-quotas")
    outcome = account.check_account(stack_config("dev"), DEADLINE_S)
    assert outcome.errors == ()
    assert [u.key for u in outcome.unchecked] == ["hp:kubernetesVersion"]
    assert outcome.unchecked[0].why.startswith("EKS DescribeAddonVersions: ")
    # The applied list holds the quota, so the broken default list is not needed.
    assert outcome.lines[""][0].startswith(f"quota {QUOTA}: 16, stack needs 1")


def test_an_endpoint_nobody_listens_on_is_unchecked_quickly(
    aws: LocalAWS, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    started = time.monotonic()
    outcome = account.check_account(stack_config("dev"), DEADLINE_S)
    assert time.monotonic() - started < DEADLINE_S
    assert {u.key for u in outcome.unchecked} == {"hp:instanceGroups", "hp:kubernetesVersion"}
    assert all("no answer (Could not connect" in u.why for u in outcome.unchecked)
