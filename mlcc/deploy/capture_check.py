"""`mlcc verify`'s capture check: the endpoint's spec.dataCapture is the one hp:capture asks for
(docs/draft.md, "Capture"), and what the bucket holds under its s3Uri so far.

Pure. The fields are the CRD's (schemas/crds/inferenceendpointconfigs.yaml, operator 3.3:
dataCapture.s3Uri, dataCapture.sagemakerEndpoint.enabled and initialSamplingPercentage), as
mlcc/manifest/capture.py writes them. The check passes or fails on the live object alone; the
records (`Records`, read by mlcc/cli/verify/capture_records.py) are reported beside it, never
decide it: a new endpoint has no record until a request reaches its SageMaker endpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mlcc.config.operator.capture import Capture
from mlcc.deploy.check import Check
from mlcc.deploy.snapshot import mapping, one_line

NAME = "capture"


@dataclass(frozen=True)
class Records:
    """The objects listed under the capture prefix, or why they were not."""

    objects: int = 0
    size_bytes: int = 0
    newest: datetime | None = None
    complete: bool = True  # False: the listing stopped at its page bound
    not_read: str = ""  # why the bucket was not listed

    def text(self) -> str:
        if self.not_read:
            return f"records not read: {self.not_read}"
        if not self.objects:
            return (
                "no record yet (the operator writes only requests sent through the SageMaker "
                "endpoint, a sample of them)"
            )
        count = f"{self.objects:,}" if self.complete else f"at least {self.objects:,}"
        newest = f", newest {self.newest:%Y-%m-%d %H:%M:%S %Z}".rstrip() if self.newest else ""
        return f"{count} record files ({_size(self.size_bytes)}){newest}"


def capture_uri(endpoint: Mapping[str, Any] | None) -> str | None:
    """spec.dataCapture.s3Uri of the live object, when it has one."""
    uri = mapping(mapping(mapping(endpoint).get("spec")).get("dataCapture")).get("s3Uri")
    return uri if isinstance(uri, str) and uri else None


def check_capture(endpoint: Mapping[str, Any] | None, expected: Capture, records: Records) -> Check:
    """PASS when the live spec.dataCapture turns on the SageMaker-endpoint tier at hp:capture's
    sampling into an s3Uri; the records are said beside it."""
    capture = mapping(mapping(mapping(endpoint).get("spec")).get("dataCapture"))
    tier = mapping(capture.get("sagemakerEndpoint"))
    uri = capture_uri(endpoint)
    sampling = tier.get("initialSamplingPercentage")
    want = expected.sampling_percent
    problems = []
    if tier.get("enabled") is not True:
        problems.append("spec.dataCapture.sagemakerEndpoint.enabled is not true")
    if isinstance(sampling, bool) or sampling != want:
        problems.append(
            f"initialSamplingPercentage is {one_line(str(sampling), 40)}, hp:capture asks {want}"
        )
    if uri is None:
        problems.append("spec.dataCapture.s3Uri is missing")
    if problems:
        return Check(NAME, False, f"{'; '.join(problems)}: run `pulumi up` for this stack")
    return Check(
        NAME,
        True,
        f"SageMaker endpoint tier on, {want}% of requests into {one_line(str(uri), 200)}; "
        f"{records.text()}",
    )


def _size(size: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"
