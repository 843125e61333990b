"""`hp:capture`: the endpoint's traffic captured into a bucket the stack owns (docs/draft.md).

One key turns on the operator's SageMaker-endpoint data capture tier (the CRD's
spec.dataCapture.sagemakerEndpoint, "Tier 1") for one endpoint. That tier is the one whose
records have a documented format (SageMaker Data Capture JSON Lines, which `mlcc draft dataset`
reads); the load-balancer tier writes ALB access logs, not payloads (AWS docs "Data capture for
inference on HyperPod"). It needs the endpoint's SageMaker registration (hp:sagemakerEndpoint).
The raw pass-through hp:dataCapture stays; the two are exclusive. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlcc.config.operator import fields
from mlcc.config.reader import Reader
from mlcc.engine_contract.values import shown_value

KEY = "capture"
FIELDS = frozenset({"samplingPercent", "retentionDays"})
# The CRD's dataCapture.sagemakerEndpoint.initialSamplingPercentage: minimum 0, maximum 100,
# default 100 (schemas/crds/inferenceendpointconfigs.yaml, operator 3.3). 0 captures nothing,
# so it is refused here: remove hp:capture instead.
SAMPLING_RANGE = (1, 100)
DEFAULT_SAMPLING_PERCENT = 100
# S3's LifecycleExpiration.Days: "a non-zero positive integer" (botocore 1.44.18,
# data/s3/2006-03-01/service-2.json); no upper bound is stated there.
DEFAULT_RETENTION_DAYS = 30


@dataclass(frozen=True)
class Capture:
    """What hp:capture asks for one endpoint."""

    sampling_percent: int = DEFAULT_SAMPLING_PERCENT
    retention_days: int = DEFAULT_RETENTION_DAYS


def parse(reader: Reader) -> Capture | None:
    """hp:capture of one endpoint; None when it is not set (an empty map)."""
    raw = reader.structured(KEY)
    if raw in (None, {}, False):
        return None
    if raw is True:
        return Capture()
    if not isinstance(raw, dict):
        reader.fail(
            KEY,
            "must be a map {samplingPercent, retentionDays} (or true for 100% kept 30 days), "
            f"got {shown_value(str(raw))}",
        )
        return None
    fields.unknown(reader, KEY, raw, FIELDS)
    sampling = _whole(reader, "samplingPercent", raw, DEFAULT_SAMPLING_PERCENT)
    low, high = SAMPLING_RANGE
    if sampling is not None and not low <= sampling <= high:
        reader.fail(
            f"{KEY}.samplingPercent",
            f"must be between {low} and {high} (the CRD's initialSamplingPercentage is 0-100, "
            f"and 0 captures nothing: remove hp:{KEY} instead), got {sampling}",
        )
        sampling = None
    retention = _whole(reader, "retentionDays", raw, DEFAULT_RETENTION_DAYS)
    if retention is not None and retention < 1:
        reader.fail(
            f"{KEY}.retentionDays",
            f"must be 1 or more (S3 expires objects after a positive number of days), got "
            f"{retention}",
        )
        retention = None
    return Capture(sampling or DEFAULT_SAMPLING_PERCENT, retention or DEFAULT_RETENTION_DAYS)


def _whole(reader: Reader, name: str, raw: dict[str, object], default: int) -> int | None:
    value = raw.get(name, default)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int):
        reader.fail(f"{KEY}.{name}", f"must be a whole number, got {shown_value(str(value))}")
        return None
    return value


def check(
    reader: Reader, capture: Capture | None, *, data_capture: bool, sagemaker_endpoint: bool
) -> None:
    """What hp:capture cannot work with: the raw hp:dataCapture, or no SageMaker endpoint."""
    if capture is None:
        return
    if data_capture:
        reader.fail(
            KEY,
            "and hp:dataCapture both set the CR's spec.dataCapture; keep hp:capture (the "
            "stack's bucket, the SageMaker-endpoint tier) or hp:dataCapture (your own fields)",
        )
    if not sagemaker_endpoint:
        reader.fail(
            KEY,
            "captures at the SageMaker endpoint (the tier whose records have a documented "
            "format), which needs the endpoint's SageMaker registration; set "
            "hp:sagemakerEndpoint true or remove hp:capture",
        )
