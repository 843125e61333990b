"""The hostile AWS corpus: answers botocore accepts (every one passes the fake's check against
botocore's models unless the case is a malformed reply on purpose), served by the local AWS to
the real boto3 through AWS_ENDPOINT_URL, against the account and pricing parts of preflight.

Every case must be clean: one "not checked" line naming the call and why (a warning under
hp:preflight auto, an error under strict), within the deadline, with bounded reads and a bounded
number of pages, and never a figure from a value no account could hold.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import price_list
import pytest
from aws_accounts import account_served, example_account, quota_page, serve
from fake_hub import TOKEN, FakeHub, HubBehaviour
from local_aws import LocalAWS, Reply, error
from program_runs import IMAGE, REPO, stack_values

from mlcc.cli import main
from mlcc.config import stack as config
from mlcc.config.stack import StackConfig
from mlcc.preflight.account import part as account
from mlcc.preflight.bounded.aws_answers import MAX_PAGES
from mlcc.preflight.cost import price_list as pricing
from mlcc.preflight.cost.prices import Missing
from mlcc.preflight.outcome import Mode, Outcome, settle

DEADLINE_S = 8.0
QUOTA = "ml.g5.12xlarge for cluster usage"


def stack_config(overrides: dict[str, str | None] | None = None) -> StackConfig:
    values = stack_values("dev", overrides)
    return config.parse(values.values, stack="dev", secret_keys=values.secret_keys).config


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalAWS]:
    pricing.forget_answers()
    with account_served(monkeypatch) as fake:
        serve(fake, example_account())
        yield fake
    pricing.forget_answers()


def checked(
    part: Any = account.check_account, deadline_s: float = DEADLINE_S, **overrides: str | None
) -> Outcome:
    parsed = stack_config(overrides)
    start = time.monotonic()
    outcome: Outcome = part(parsed, deadline_s)
    # Room for a machine ten times slower; under the 30 s of the silent services.
    assert time.monotonic() - start < deadline_s + 15, "past the deadline"
    return outcome


def not_checked(outcome: Outcome) -> list[str]:
    _, warnings = settle(outcome, Mode.AUTO)
    lines = [str(w) for w in warnings if "not checked" in str(w)]
    assert all("\n" not in line and len(line) < 500 for line in lines)
    return lines


# --- pages that never end ----------------------------------------------------------------


def test_a_next_token_that_repeats_ends_the_list(aws: LocalAWS) -> None:
    tokens = iter(["a", "b"] * 50)
    aws.on("ListServiceQuotas", lambda r: quota_page(16.0, next(tokens)), "service-quotas")
    (line,) = not_checked(checked())
    assert "ListServiceQuotas: its pages repeat (the same NextToken after 3 pages)" in line
    assert aws.operations("service-quotas").count("ListServiceQuotas") == 3


def test_a_thousand_pages_are_cut_at_the_page_limit(aws: LocalAWS) -> None:
    aws.on(
        "ListServiceQuotas",
        lambda r: quota_page(16.0, str(int(r.get("NextToken") or 0) + 1)),
        "service-quotas",
    )
    (line,) = not_checked(checked(deadline_s=60))  # the page limit ends it, not the deadline
    assert f"the list did not end within {MAX_PAGES} pages (stopped there)" in line
    assert aws.operations("service-quotas").count("ListServiceQuotas") == MAX_PAGES


def test_pages_still_coming_at_the_deadline_are_said_not_blamed_on_silence(aws: LocalAWS) -> None:
    def slow_page(request: dict[str, Any]) -> Reply:
        time.sleep(0.2)
        return quota_page(16.0, str(int(request.get("NextToken") or 0) + 1))

    aws.on("ListServiceQuotas", slow_page, "service-quotas")
    (line,) = not_checked(checked(deadline_s=1.5))
    assert "ListServiceQuotas: no answer within " in line and "s (by then: " in line
    assert " pages read)" in line


def test_throttling_still_going_at_the_deadline_says_so(aws: LocalAWS) -> None:
    def throttled(_request: dict[str, Any]) -> Reply:
        time.sleep(0.6)
        return error("ThrottlingException", "Rate exceeded", 400)

    aws.on("DescribeAddonVersions", throttled, "eks")
    # The first answer comes a second before the deadline, also on a slow machine; the three
    # attempts (1.8 s at least) cannot all end before it.
    (line,) = not_checked(checked(deadline_s=1.6))
    assert "no answer within 2 s (by then: attempt " in line
    assert "answered ThrottlingException)" in line


# --- values botocore parses but no account holds --------------------------------------------


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (-5.0, "Service Quotas answered -5, not a count of instances"),
        (1.5, "Service Quotas answered 1.5, not a whole number"),
        (1e300, "Service Quotas answered 1e+300, not a count of instances"),
    ],
)
def test_an_absurd_quota_is_unknown_never_shown(aws: LocalAWS, value: float, says: str) -> None:
    aws.on("ListServiceQuotas", quota_page(value), "service-quotas")
    outcome = checked()
    aws.reply_problems.clear()  # the model's minimum is 0: botocore parses it all the same
    (line,) = not_checked(outcome)
    assert says in line and "hp:instanceGroups: not checked: quota" in line
    assert outcome.errors == ()
    assert f"quota {QUOTA}: not checked" in outcome.lines[""][0]


@pytest.mark.parametrize("versions", [["latest", ""], ["v" + "9" * 5000]])
def test_addon_versions_in_no_known_format_are_unknown_not_none(
    aws: LocalAWS, versions: list[str]
) -> None:
    addon = {
        "addonName": "amazon-sagemaker-hyperpod-inference",
        "addonVersions": [
            {"addonVersion": v, "compatibilities": [{"clusterVersion": "1.33"}]} for v in versions
        ],
    }
    aws.on("DescribeAddonVersions", Reply(body={"addons": [addon]}), "eks")
    aws.reply_problems.clear()
    outcome = checked()
    aws.reply_problems.clear()  # a 5,000-digit version passes botocore, not the model's max
    (line,) = not_checked(outcome)
    assert "none in EKS's format (v1.2.0-eksbuild.1)" in line and outcome.errors == ()


@pytest.mark.parametrize(
    "gpus",
    [
        [{"Name": "A10G", "Count": 0, "MemoryInfo": {"SizeInMiB": 24576}}],
        [{"Name": "A10G", "Count": 4, "MemoryInfo": {"SizeInMiB": -5}}],
        [{"Name": "A10G", "Count": -4, "MemoryInfo": {"SizeInMiB": 24576}}],
    ],
)
def test_ec2_gpu_figures_no_instance_has_are_not_used(aws: LocalAWS, gpus: list[Any]) -> None:
    info = {"InstanceType": "g5.12xlarge", "GpuInfo": {"Gpus": gpus}}
    aws.on("DescribeInstanceTypes", Reply(body={"InstanceTypes": [info]}), "ec2")
    aws.reply_problems.clear()
    figures = account.gpu_memory(stack_config(), DEADLINE_S)
    aws.reply_problems.clear()
    assert figures == {"ml.g5.12xlarge": None}  # the vendored table's figure is used instead


@pytest.mark.parametrize("usd", ["0.0000000000", "-7.09", "NaN", "Infinity", "1e9", "7,09"])
def test_a_price_that_is_no_price_is_not_found(aws: LocalAWS, usd: str) -> None:
    bad = price_list.hyperpod("G5BAD", "us-east-1", "ml.g5.12xlarge", usd)
    price_list.serve(aws, [bad, *price_list.catalog()[1:]])
    outcome = checked(pricing.pricing_part)
    (missing,) = [p for p in outcome.prices if p.item == "ml.g5.12xlarge"]
    assert isinstance(missing, Missing)
    assert "no on-demand hourly product of ml.g5.12xlarge" in missing.reason


def test_a_price_in_another_currency_is_not_found(aws: LocalAWS) -> None:
    bad = price_list.hyperpod("G5CNY", "us-east-1", "ml.g5.12xlarge", "7.09")
    term = next(iter(bad["terms"]["OnDemand"].values()))
    next(iter(term["priceDimensions"].values()))["pricePerUnit"] = {"CNY": "50.1"}
    price_list.serve(aws, [bad])
    (missing, *_) = [p for p in checked(pricing.pricing_part).prices if p.item == bad_item()]
    assert isinstance(missing, Missing)


def bad_item() -> str:
    return "ml.g5.12xlarge"


# --- throttling, credentials, endpoints, sizes ---------------------------------------------


def test_throttling_that_never_stops_is_one_line_after_botocores_bounded_retries(
    aws: LocalAWS,
) -> None:
    aws.on("DescribeAddonVersions", error("ThrottlingException", "Rate exceeded", 400), "eks")
    (line,) = not_checked(checked())
    assert "EKS DescribeAddonVersions: throttled (ThrottlingException) after 3 attempts" in line
    assert aws.operations("eks").count("DescribeAddonVersions") == 3


def test_credentials_that_expire_mid_preflight_say_so(aws: LocalAWS) -> None:
    expired = error("ExpiredTokenException", "The security token included is expired", 403)
    aws.on("DescribeAddonVersions", expired, "eks")
    aws.on("ListAWSDefaultServiceQuotas", expired, "service-quotas")
    aws.on("ListServiceQuotas", expired, "service-quotas")
    lines = not_checked(checked())
    assert lines and all("AWS refused the credentials (ExpiredTokenException" in x for x in lines)
    assert all("refresh them (aws sso login, or new keys)" in x for x in lines)


def test_a_region_without_a_price_list_endpoint_is_one_line(aws: LocalAWS) -> None:
    region = "us-gov-west-1"
    outcome = checked(pricing.pricing_part, **{"aws:region": region, "aws-native:region": region})
    lines = not_checked(outcome)
    assert lines and all(f"botocore lists no Price List endpoint for {region}" in x for x in lines)


def test_a_price_list_endpoint_that_does_not_answer_is_one_line(
    aws: LocalAWS, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_PRICING", "http://127.0.0.1:9")  # nothing listens
    lines = not_checked(checked(pricing.pricing_part))
    assert lines and all("no answer (Could not connect to the endpoint URL" in x for x in lines)


def test_an_answer_past_the_size_limit_is_not_read(aws: LocalAWS) -> None:
    huge = Reply(body=b'{"addons": [' + b" " * (20 * 1024 * 1024) + b"]}")
    aws.on("DescribeAddonVersions", huge, "eks")
    (line,) = not_checked(checked())
    assert "an answer of more than 16 MiB (not read)" in line


def test_a_garbled_answer_is_one_short_line(aws: LocalAWS) -> None:
    aws.on("DescribeAddonVersions", Reply(body=b"\x1f\x8b\x08" + b"\xff" * 5000), "eks")
    (line,) = not_checked(checked())
    assert "EKS DescribeAddonVersions: " in line and len(line) < 400


# --- the whole plan: figures true, nothing negative, no traceback --------------------------


def plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> int:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    argv = ["plan", "--stack", "dev", "--out", str(tmp_path / "out"), "--set", f"hp:image={IMAGE}"]
    with FakeHub(HubBehaviour(gated={"meta-llama/Llama-3.1-8B-Instruct"})) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        return main([*argv, "--preflight", *extra])


@pytest.mark.parametrize("mode", ["auto", "strict"])
def test_the_plan_shows_an_absurd_quota_as_not_checked_and_follows_hp_preflight(
    aws: LocalAWS,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    mode: str,
) -> None:
    aws.on("ListServiceQuotas", quota_page(-5.0), "service-quotas")
    code = plan(tmp_path, monkeypatch, "--set", f"hp:preflight={mode}")
    aws.reply_problems.clear()  # the model's minimum is 0: botocore parses it all the same
    captured = capsys.readouterr()
    assert code == (0 if mode == "auto" else 1)
    assert "Traceback" not in captured.err and "-5, stack needs" not in captured.out
    kind = "warning" if mode == "auto" else "error"
    (line,) = [x for x in captured.err.splitlines() if "Service Quotas answered -5" in x]
    assert line.startswith(f"{kind}: hp:instanceGroups: not checked: quota {QUOTA}")
    if mode == "auto":
        assert "GiB usable per GPU" in captured.out
