"""The plan's cost lines and the cost change of `--diff`, from plan.json's `cost` (docs/cost.md).

Pure, over the JSON form mlcc.preflight.cost.estimate writes (figures as decimal text, exact), so
a plan and the plan.json it is compared with are read the same way. Lines:

    cost (prices: snapshot, in effect 2024-02-01 to 2024-04-01, read 2026-12-06):
      Kubernetes 1.34 is in EKS extended support on 2026-12-06 (standard support ended ...;
        EKS creates it until 2027-12-02): the control plane bills the extended rate
      ml.g5.12xlarge x 2 @ $7.09/h = $14.18/h (group workers)
      EKS control plane x 1 @ $0.10/h = $0.10/h
      EKS extended support x 1 @ $0.50/h = $0.50/h
      total: $14.825/h, $10822.25/month (730 h)

A price not found shows as `not found` and leaves the total unknown, never $0 in it. The
Kubernetes line (docs/kubernetes-facts.md) shows only for a version in extended support.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from mlcc.plan.report import MAX_COLUMNS
from mlcc.preflight.cost.estimate import usd


def _amount(text: Any) -> Decimal | None:
    if not isinstance(text, str):
        return None
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


def _money(text: Any) -> str:
    amount = _amount(text)
    return "?" if amount is None else usd(amount)


def headline_lines(document: Mapping[str, Any] | None) -> list[str]:
    """The headline's cost lines; none when the plan has no cost."""
    if not document:
        return []
    sources = [f"{s.get('source')}, {_dates(s)}" for s in document.get("sources", [])]
    where = f"in {document.get('region')} " if document.get("region") else ""
    lines = _wrapped(f"cost {where}(prices: {'; '.join(sources) or 'none'}):")
    lines += _kubernetes_lines(document.get("kubernetes"))
    for line in document.get("lines", []):
        lines.append(f"  {_line_text(line)}")
    if not document.get("lines"):  # existing-cluster mode: the nodes are the cluster's
        lines.append("  total: $0.00/h: nothing this stack creates is billed by the hour")
    else:
        lines.append(f"  total: {_total_text(document)}")
    for line in document.get("lines", []):
        if line.get("per_hour") is None:
            lines += _wrapped(f"  not found: {line.get('item')}: {line.get('not_found')}")
    for share in [s for s in document.get("shares", []) if s.get("of_gpus")]:
        part = share.get("per_hour")
        figure = f"{_money(part)}/h" if part is not None else "not known"
        lines.append(
            f"  endpoint {share.get('endpoint')}: {share.get('gpus')} of {share.get('of_gpus')} "
            f"GPUs of {share.get('instance_type')}, {figure}"
        )
    for item in document.get("capture") or []:
        lines += _wrapped(
            f"  {item}: price unknown (billed per GB-month and per request; no sourced S3 "
            "price in the snapshot), not in the total"
        )
    lines += _training_lines(document.get("draft_training"))
    for difference in document.get("differences", []):
        lines += _wrapped(f"  price changed: {difference}")
    not_priced = [
        *document.get("not_priced", []),
        *(f"{item} (not found)" for item in document.get("not_found", [])),
    ]
    return [*lines, *_wrapped(f"  not priced: {', '.join(not_priced)}")]


def _training_lines(training: Any) -> list[str]:
    """hp:draftTraining's node per hour while the job runs; its duration is not known."""
    if not isinstance(training, Mapping):
        return []
    group = f" (group {training['group']})" if training.get("group") else ""
    head = f"  draft training {training.get('job')}: {training.get('instance_type')} x 1{group}"
    if training.get("per_hour") is None:
        return _wrapped(f"{head} @ not found: {training.get('not_found')}, duration unknown")
    counted = ", a node counted in the total above" if training.get("in_total") else ""
    return _wrapped(
        f"{head} @ {_money(training.get('per_hour'))}/h while it runs{counted}, duration "
        f"{training.get('duration', 'unknown')}"
    )


def _dates(source: Mapping[str, Any]) -> str:
    """Each kind of date with its span: "published 2026-11-01", "in effect 2024-02-01 to
    2024-04-01, read 2026-12-06" (a snapshot's date is not always a publication date)."""
    spans: dict[str, list[str]] = {}
    for entry in source.get("dates") or []:
        if isinstance(entry, Mapping):
            spans.setdefault(str(entry.get("date_is")), []).append(str(entry.get("date")))
    return ", ".join(
        f"{kind} {min(days)}" + (f" to {max(days)}" if max(days) != min(days) else "")
        for kind, days in spans.items()
    )


EXTENDED = "extended support"  # mlcc.facts.kubernetes_versions.Support.EXTENDED


def _kubernetes_lines(support: Any) -> list[str]:
    """The line that says the cluster's version is in EKS extended support, if it is."""
    if not isinstance(support, Mapping) or support.get("support") != EXTENDED:
        return []
    return _wrapped(
        f"  Kubernetes {support.get('version')} is in EKS extended support on "
        f"{support.get('on')} (standard support ended {support.get('end_of_standard')}; EKS "
        f"creates it until {support.get('end_of_extended')}): the control plane bills the "
        "extended rate"
    )


def _wrapped(text: str) -> list[str]:
    """`text` in lines of at most 100 columns, the later ones indented under the first."""
    return textwrap.wrap(text, MAX_COLUMNS, subsequent_indent="    ", break_long_words=False)


def _line_text(line: Mapping[str, Any]) -> str:
    head = f"{line.get('item')} x {line.get('count')}"
    group = f" (group {line['group']})" if line.get("group") else ""
    if line.get("per_hour") is None:
        return f"{head} @ not found{group}"
    each, total = _money(line.get("usd_per_hour")), _money(line.get("per_hour"))
    return f"{head} @ {each}/h = {total}/h{group}"


def _total_text(document: Mapping[str, Any]) -> str:
    total, month = document.get("total_per_hour"), document.get("total_per_month")
    hours = document.get("hours_per_month", "730")
    if total is not None:
        return f"{_money(total)}/h, {_money(month)}/month ({hours} h)"
    missing = ", ".join(document.get("not_found", []))
    priced = _amount(document.get("priced_per_hour")) or Decimal(0)
    return f"not known: the price of {missing} not found (the rest: {usd(priced)}/h)"


def diff_line(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> str:
    """`cost: +$X/h ($A/h -> $B/h), +N%`, or why the two plans' costs cannot be compared."""
    old = _amount((before or {}).get("total_per_hour"))
    new = _amount((after or {}).get("total_per_hour"))
    if before is None:
        return "cost: not compared: the plan.json of --diff records no cost"
    if old is None or new is None:
        missing = [
            *(f"{item} (before)" for item in (before or {}).get("not_found", [])),
            *(f"{item} (now)" for item in (after or {}).get("not_found", [])),
        ]
        return f"cost: not compared: the price of {', '.join(missing) or 'a part'} not found"
    change = new - old
    sign = "+" if change >= 0 else "-"
    line = f"cost: {sign}{usd(abs(change))}/h ({usd(old)}/h -> {usd(new)}/h)"
    if old == 0:
        return line
    percent = (change * 100 / old).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return f"{line}, {'+' if percent >= 0 else ''}{percent}%"
