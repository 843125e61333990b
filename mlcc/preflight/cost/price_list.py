"""The pricing part of preflight: each billed thing's hourly price from the AWS Price List API.

boto3's `pricing` client (`GetProducts`, paginated), in the session preflight's account part
uses (the stack's aws:profile, `AWS_ENDPOINT_URL_PRICING` or `AWS_ENDPOINT_URL`, the same
timeouts and retries), in a region where the API has an endpoint: the stack's region if botocore
lists it for the `api.pricing` endpoint prefix, else the first botocore lists in the stack
region's partition. Which product is the price is mlcc.preflight.cost.prices' rule. Answers are kept
for the process (one `pulumi preview` or `mlcc plan` asks each question once), each with its
publication date. A lookup that fails or overruns is one "not checked" line, like every
preflight read: a warning under hp:preflight auto, an error under strict.
"""

from __future__ import annotations

import threading
from typing import Any

from mlcc.config.aws.rules import endpoint_regions
from mlcc.config.stack import StackConfig
from mlcc.preflight.account import fetch as account_fetch
from mlcc.preflight.account.facts import Unreached
from mlcc.preflight.account.fetch import guarded
from mlcc.preflight.bounded import aws_answers
from mlcc.preflight.bounded.parallel import run_parallel
from mlcc.preflight.cost import estimate as cost
from mlcc.preflight.cost.prices import Missing, Price, Rule, is_product, rule, select
from mlcc.preflight.cost.public_ipv4 import SNAPSHOT_ONLY
from mlcc.preflight.outcome import Outcome, Unchecked

IAM_ACTION = "pricing:GetProducts"
ENDPOINT_PREFIX = "api.pricing"
BUDGET_KEY = "hp:budget"
_ANSWERS: dict[tuple[str, str, tuple[tuple[str, str, str], ...]], Price | Missing] = {}
_ANSWERS_LOCK = threading.Lock()


def endpoint_region(region: str) -> str | None:
    """Where to ask: the stack's region if the API is there, else the nearest by name."""
    try:
        regions = endpoint_regions(ENDPOINT_PREFIX, region)
    except Exception:  # botocore names no partition for the region: no endpoint to ask
        return None
    if region in regions or not regions:
        return region if regions else None
    return max(regions, key=lambda r: (_common_prefix(r, region), -regions.index(r)))


def _common_prefix(one: str, other: str) -> int:
    """How many leading characters two region names share (us-west-2 and us-east-1: 3)."""
    return next((i for i, (a, b) in enumerate(zip(one, other, strict=False)) if a != b), 0)


def pricing_part(config: StackConfig, deadline_seconds: float) -> Outcome:
    """The live prices of what the stack bills, or why each could not be read."""
    items = sorted({b.item for b in cost.billed(config)[0]} - SNAPSHOT_ONLY)
    if not items:
        return Outcome()
    where = endpoint_region(config.region)
    if where is None:
        why = f"botocore lists no Price List endpoint for {config.region}'s partition"
        return Outcome(unchecked=tuple(_unchecked(item, why) for item in items))
    clients = account_fetch.clients(where, config.aws_profile, deadline_seconds)
    if isinstance(clients, Unreached):
        return Outcome(unchecked=tuple(_unchecked(item, clients.why) for item in items))
    jobs = {
        item: guarded(f"pricing:GetProducts {item}", _lookup(clients, rule(item, config.region)))
        for item in items
    }
    answers = run_parallel(jobs, deadline_seconds)
    found = tuple(a for a in answers.values() if isinstance(a, Price | Missing))
    unreached = tuple(
        _unchecked(item, a.why) for item, a in answers.items() if isinstance(a, Unreached)
    )
    return Outcome(unchecked=unreached, prices=found)


def _unchecked(item: str, why: str) -> Unchecked:
    return Unchecked(BUDGET_KEY, f"the price of {item} (AWS Price List)", why)


def _lookup(clients: account_fetch.Clients, found: Rule) -> Any:
    def run() -> Price | Missing:
        key = (found.service_code, found.region, found.filters)
        with _ANSWERS_LOCK:
            if key in _ANSWERS:
                return _ANSWERS[key]
        client = clients.client("pricing")
        filters = [{"Type": t, "Field": f, "Value": v} for t, f, v in found.filters]
        pages = aws_answers.pages(
            client,
            "get_products",
            ServiceCode=found.service_code,
            Filters=filters,
            FormatVersion="aws_v1",
        )
        price_list = [text for page in pages for text in page["PriceList"]]
        unreadable = [text for text in price_list if not is_product(text)]
        if unreadable:  # the Price List could not be read: the snapshot's price stands
            raise aws_answers.AnswerProblem(
                f"the AWS Price List could not be read: {len(unreadable)} of its "
                f"{len(price_list)} products are not JSON objects"
            )
        answer = select(found, price_list)
        result = answer if isinstance(answer, Price) else Missing(found.item, found.region, answer)
        with _ANSWERS_LOCK:
            _ANSWERS[key] = result
        return result

    return run


def forget_answers() -> None:
    """Drop the kept answers (tests, and a long-lived process that wants fresh prices)."""
    with _ANSWERS_LOCK:
        _ANSWERS.clear()
