"""The plan's data capture line of one endpoint, from its CR's spec.dataCapture (docs/draft.md).

Pure. Names the tiers the CR turns on, the sampling, where the records go and how long the
stack's bucket keeps them (the lifecycle rule of the endpoint's prefix, hp:capture); a
hp:dataCapture of the user's own says the stack sets no retention.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from mlcc.facts.operator import CAPTURE_TIER_FOLDERS
from mlcc.userfiles.reading import dig

MAX_COLUMNS = 100  # mlcc.plan.report's
LIFECYCLE_TYPE = "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"
TIER_NAMES = {
    "sagemakerEndpoint": "SageMaker endpoint",
    "loadBalancer": "load balancer",
    "modelPod": "model pod",
}
TIERS = tuple((field, TIER_NAMES[field]) for field in CAPTURE_TIER_FOLDERS)


class Resource(Protocol):
    @property
    def type(self) -> str: ...

    @property
    def inputs(self) -> Any: ...


def lines(spec: Mapping[str, Any], resources: Sequence[Resource]) -> list[str]:
    """`  capture: SageMaker endpoint tier, 10% of requests, into s3://b/x/<hash>/sme/, kept 14
    days` (the operator's folders: mlcc.facts.operator),
    wrapped at 100 columns; none without spec.dataCapture."""
    text = _text(spec, resources)
    if text is None:
        return []
    return textwrap.wrap(
        text, MAX_COLUMNS, subsequent_indent="    ", break_long_words=False, break_on_hyphens=False
    )


def _text(spec: Mapping[str, Any], resources: Sequence[Resource]) -> str | None:
    capture = spec.get("dataCapture")
    if not isinstance(capture, Mapping):
        return None
    tiers = [
        (field, name)
        for field, name in TIERS
        if isinstance(capture.get(field), Mapping) and capture[field].get("enabled") is True
    ]
    if not tiers:
        return "  capture: no tier enabled"
    shown = " and ".join(name for _, name in tiers) + (" tiers" if len(tiers) > 1 else " tier")
    sampling = [
        capture[field].get("initialSamplingPercentage")
        for field, _ in tiers
        if field != "loadBalancer"
    ]
    percents = ", ".join(f"{p if p is not None else 100}% of requests" for p in sampling)
    folders = [CAPTURE_TIER_FOLDERS[field] for field, _ in tiers]
    folder = folders[0] if len(folders) == 1 else "{" + ",".join(folders) + "}"
    uri = capture.get("s3Uri")
    base = str(uri).rstrip("/") if uri else "the operator's TLS bucket/data-capture (no s3Uri)"
    where = f"into {base}/<hash>/{folder}/"
    days = retention_days(str(uri or ""), resources)
    kept = f"kept {days} days" if days is not None else "retention not set by this stack"
    return ", ".join(part for part in (f"  capture: {shown}", percents, where, kept) if part)


def retention_days(uri: str, resources: Sequence[Resource]) -> int | None:
    """The expiration of the stack's lifecycle rule whose prefix holds `uri`'s objects."""
    if not uri.startswith("s3://") or "/" not in uri[len("s3://") :]:
        return None
    key = uri[len("s3://") :].split("/", 1)[1].rstrip("/") + "/"
    for resource in resources:
        if resource.type != LIFECYCLE_TYPE or not isinstance(resource.inputs, Mapping):
            continue
        for rule in resource.inputs.get("rules") or []:
            prefix = dig(rule, "filter", "prefix")
            days = dig(rule, "expiration", "days")
            if prefix == key and isinstance(days, int) and rule.get("status") == "Enabled":
                return days
    return None
