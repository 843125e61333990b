"""AWS's hostile answers (issue #37, item 2) to `mlcc plan --preflight`, from the classes of
tests/preflight/test_hostile_aws.py: pages that never end, values botocore parses but no account
holds, throttling that never stops, credentials that expire, a region without a Price List
endpoint, answers too large or garbled, prices that are no price.

Each is one "not checked" warning naming the call and why (hp:preflight auto: exit 0), and the
value is never printed as a figure: no quota of -5, no price of $0 or $-7.09."""

from __future__ import annotations

import itertools
from typing import Any

import answers_cases
import price_list
from aws_accounts import quota_page
from classify import Case, Oracle, all_of, never, says_one_of
from local_aws import LocalAWS, Reply, error
from plan_cases import exit_in, healthy_plan, one_line, plan_case

QUOTA = "ml.g5.12xlarge for cluster usage"
SQ = "service-quotas"


def unchecked(*texts: str) -> Oracle:
    return all_of(exit_in(0), one_line("warning: hp:", "not checked", *texts))


def on(operation: str, reply: Any, service: str) -> Any:
    def script(aws: LocalAWS) -> None:
        aws.on(operation, reply, service)

    return script


def quota(value: Any, says: str) -> Case:
    shown = never(rf"quota {QUOTA}: {value}\b", rf"{QUOTA}.*\b{value}, stack needs")
    return plan_case(
        f"quota {value}",
        "aws",
        all_of(unchecked(f"quota {QUOTA}", says), shown),
        account=on("ListServiceQuotas", quota_page(value), SQ),
    )


def _pages() -> list[Case]:
    def repeating(aws: LocalAWS) -> None:
        tokens = itertools.cycle(["a", "b"])
        aws.on("ListServiceQuotas", lambda r: quota_page(16.0, next(tokens)), SQ)

    def endless(aws: LocalAWS) -> None:
        aws.on(
            "ListServiceQuotas",
            lambda r: quota_page(16.0, str(int(r.get("NextToken") or 0) + 1)),
            SQ,
        )

    def same_token(aws: LocalAWS) -> None:
        aws.on("ListServiceQuotas", lambda r: quota_page(16.0, "same"), SQ)

    def endless_prices(aws: LocalAWS) -> None:
        body = {"FormatVersion": "aws_v1", "PriceList": []}
        aws.on(
            "GetProducts",
            lambda r: Reply(body={**body, "NextToken": str(int(r.get("NextToken") or 0) + 1)}),
            "pricing",
        )

    return [
        plan_case("NextToken repeats", "aws", unchecked("its pages repeat"), account=repeating),
        plan_case("same NextToken", "aws", unchecked("its pages repeat"), account=same_token),
        plan_case(
            "a thousand pages",
            "aws",
            # the page limit (100) or, on a slow machine, the part's deadline ends it
            all_of(unchecked("ListServiceQuotas"), says_one_of("did not end within", "no answer")),
            account=endless,
        ),
        plan_case("endless price pages", "aws", prices_unknown(), account=endless_prices),
    ]


def prices_unknown(*texts: str) -> Oracle:
    """The live price is not believed: the cost section says where its prices come from, and no
    price is zero, negative or not a number."""
    return all_of(
        exit_in(0),
        says_one_of("not checked", "not priced", "snapshot", *texts),
        never(r"@ \$-", r"@ \$0(\.0*)?/h", r"(?i)\$(nan|inf)", r"@ \$1,?000,?000,?000"),
    )


def _bad_price(usd: str) -> Case:
    def script(aws: LocalAWS) -> None:
        bad = price_list.hyperpod("G5BAD", "us-east-1", "ml.g5.12xlarge", usd)
        price_list.serve(aws, [bad, *price_list.catalog()[1:]])

    return plan_case(f"price {usd}", "aws", prices_unknown(), account=script)


def _other_currency() -> Case:
    def script(aws: LocalAWS) -> None:
        bad = price_list.hyperpod("G5CNY", "us-east-1", "ml.g5.12xlarge", "7.09")
        term = next(iter(bad["terms"]["OnDemand"].values()))
        next(iter(term["priceDimensions"].values()))["pricePerUnit"] = {"CNY": "50.1"}
        price_list.serve(aws, [bad])

    return plan_case("price in CNY", "aws", prices_unknown(), account=script)


def _price_not_json() -> Case:
    def script(aws: LocalAWS) -> None:
        aws.on(
            "GetProducts", Reply(body={"FormatVersion": "aws_v1", "PriceList": ["{"]}), "pricing"
        )

    oracle = all_of(prices_unknown(), answers_cases.PRICE_NOT_READ)
    return plan_case("price list item not JSON", "aws", oracle, account=script)


def _gpus(gpus: list[Any], name: str) -> Case:
    info = {"InstanceType": "g5.12xlarge", "GpuInfo": {"Gpus": gpus}}
    return plan_case(
        f"EC2 GPUs {name}",
        "aws",
        all_of(exit_in(0), one_line("  preflight: memory: ", "GiB usable per GPU")),
        account=on("DescribeInstanceTypes", Reply(body={"InstanceTypes": [info]}), "ec2"),
    )


def _addon(versions: list[str], name: str) -> Case:
    addon = {
        "addonName": "amazon-sagemaker-hyperpod-inference",
        "addonVersions": [
            {"addonVersion": v, "compatibilities": [{"clusterVersion": "1.33"}]} for v in versions
        ],
    }
    return plan_case(
        f"add-on versions {name}",
        "aws",
        all_of(unchecked("none in EKS's format"), never("EKS offers none")),
        account=on("DescribeAddonVersions", Reply(body={"addons": [addon]}), "eks"),
    )


def no_quotas(aws: LocalAWS) -> None:
    """Neither an applied value nor an AWS default: the account lists no such quota."""
    aws.on("ListServiceQuotas", Reply(body={"Quotas": []}), SQ)
    aws.on("ListAWSDefaultServiceQuotas", Reply(body={"Quotas": []}), SQ)


def _errors() -> list[Case]:
    expired = error("ExpiredTokenException", "The security token included is expired", 403)

    def expire(aws: LocalAWS) -> None:
        aws.on("DescribeAddonVersions", expired, "eks")
        aws.on("ListAWSDefaultServiceQuotas", expired, SQ)
        aws.on("ListServiceQuotas", expired, SQ)

    throttled = error("ThrottlingException", "Rate exceeded", 400)
    return [
        plan_case(
            "throttling forever",
            "aws",
            # botocore's backoff (up to 1 s, then 2 s) can outlast the part's deadline
            all_of(
                unchecked("DescribeAddonVersions"), says_one_of("throttled", "no answer within")
            ),
            account=on("DescribeAddonVersions", throttled, "eks"),
        ),
        plan_case(
            "quota list throttled forever",
            "aws",
            unchecked("throttled"),
            account=on("ListServiceQuotas", error("TooManyRequestsException", "slow", 400), SQ),
        ),
        plan_case(
            "price list throttled forever",
            "aws",
            prices_unknown(),
            account=on("GetProducts", throttled, "pricing"),
        ),
        plan_case(
            "credentials expire mid-run",
            "aws",
            unchecked("AWS refused the credentials (ExpiredTokenException", "refresh them"),
            account=expire,
        ),
        plan_case(
            "access denied",
            "aws",
            unchecked("AccessDenied"),
            account=on("ListServiceQuotas", error("AccessDeniedException", "no", 403), SQ),
        ),
        plan_case(
            "500 forever",
            "aws",
            unchecked("DescribeAddonVersions"),
            account=on("DescribeAddonVersions", error("InternalFailure", "oops", 500), "eks"),
        ),
        plan_case(
            "answer past 16 MiB",
            "aws",
            unchecked("an answer of more than 16 MiB (not read)"),
            account=on(
                "DescribeAddonVersions",
                Reply(body=b'{"addons": [' + b" " * (20 * 1024 * 1024) + b"]}"),
                "eks",
            ),
        ),
        plan_case(
            "garbled answer",
            "aws",
            unchecked("EKS DescribeAddonVersions: "),
            account=on(
                "DescribeAddonVersions", Reply(body=b"\x1f\x8b\x08" + b"\xff" * 5000), "eks"
            ),
        ),
        plan_case(
            "HTML answer",
            "aws",
            unchecked("ListServiceQuotas"),
            account=on(
                "ListServiceQuotas", Reply(status=502, body=b"<html>Bad Gateway</html>"), SQ
            ),
        ),
        plan_case(
            "answer past the deadline",
            "aws",
            unchecked("DescribeAddonVersions"),
            account=on("DescribeAddonVersions", Reply(body={"addons": []}, delay_s=30), "eks"),
        ),
        plan_case(
            "no such quota",
            "aws",
            all_of(exit_in(0), one_line("warning: hp:instanceGroups", QUOTA)),
            account=no_quotas,
        ),
        plan_case(
            "region without a price list endpoint",
            "aws",
            prices_unknown("botocore lists no Price List endpoint for us-gov-west-1"),
            None,
            None,
            "--set",
            "aws:region=us-gov-west-1",
            "--set",
            "aws-native:region=us-gov-west-1",
        ),
        plan_case(
            "price list endpoint down",
            "aws",
            prices_unknown("no answer (Could not connect to the endpoint URL"),
            env={"AWS_ENDPOINT_URL_PRICING": "http://127.0.0.1:9"},
        ),
        plan_case(
            "AWS_MAX_ATTEMPTS 1000, throttled forever",
            "aws",
            unchecked("DescribeAddonVersions"),
            account=on("DescribeAddonVersions", throttled, "eks"),
            env={"AWS_MAX_ATTEMPTS": "1000"},
        ),
        plan_case(
            "AWS_ENDPOINT_URL not a URL",
            "aws",
            all_of(exit_in(0, 1), never("the program failed on this configuration")),
            env={"AWS_ENDPOINT_URL": "not a url"},
        ),
        plan_case(
            "every endpoint down",
            "aws",
            unchecked("Could not connect"),
            env={"AWS_ENDPOINT_URL": "http://127.0.0.1:9"},
        ),
    ]


def cases() -> list[Case]:
    found = [
        quota(-5.0, "Service Quotas answered -5, not a count of instances"),
        quota(1.5, "Service Quotas answered 1.5, not a whole number"),
        quota(1e300, "Service Quotas answered 1e+300, not a count of instances"),
        quota(1e10, "not a count of instances"),
    ]
    found += _pages()
    found += [
        _bad_price(usd) for usd in ("0.0000000000", "-7.09", "NaN", "Infinity", "1e9", "7,09")
    ]
    found += [_other_currency(), _price_not_json()]
    found += [
        _gpus([{"Name": "A10G", "Count": 0, "MemoryInfo": {"SizeInMiB": 24576}}], "zero"),
        _gpus([{"Name": "A10G", "Count": 4, "MemoryInfo": {"SizeInMiB": -5}}], "negative memory"),
        _gpus([{"Name": "A10G", "Count": -4, "MemoryInfo": {"SizeInMiB": 24576}}], "negative"),
        _addon(["latest", ""], "in no format"),
        _addon(["v" + "9" * 5000], "of 5000 digits"),
    ]
    return found + _errors() + answers_cases.aws()


def control() -> Case:
    return healthy_plan()
