"""What an AWS answer botocore parsed says, read for preflight's facts (pure functions).

botocore drops a member whose value is null when it parses an answer, so a list AWS sent as
null is missing here: a quota without its value, an add-on without its versions, a version
without the Kubernetes versions it supports. None of those is taken as "none": each is an
answer preflight cannot read, never the fact that nothing is there (a quota of 0, an add-on
not offered, no version for the cluster's Kubernetes). The values' types were checked against
botocore's model before (mlcc/preflight/bounded/aws_answers.py, `check_types`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from mlcc.preflight.account.facts import AddonVersion, Quota
from mlcc.preflight.bounded.aws_answers import AnswerProblem

MAX_QUOTA = 1e9  # a count of instances; Service Quotas' largest SageMaker values are ~10^4
# EKS add-on versions (v1.2.0-eksbuild.1) and Kubernetes versions (1.33, or 1.33.0: the same
# minor version with its patch) as EKS writes them
ADDON_VERSION = re.compile(r"v\d{1,6}(\.\d{1,6}){1,3}(-eksbuild\.\d{1,6})?")
KUBERNETES_VERSION = re.compile(r"(\d{1,3}\.\d{1,3})(\.0)?")


def quota(item: Mapping[str, Any], applied: bool) -> Quota | None:
    """One item of ListServiceQuotas or ListAWSDefaultServiceQuotas (None: not a named quota)."""
    name, value = item.get("QuotaName"), item.get("Value")
    if not isinstance(name, str):
        return None
    code = str(item.get("QuotaCode", ""))
    if value is None:  # null, or missing: not a value of 0
        return Quota(name, code, math.nan, applied, "Service Quotas lists it without a value")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return Quota(name, code, math.nan, applied, f"Service Quotas answered {value!r}")
    return Quota(name, code, float(value), applied, _quota_problem(value))


def _quota_problem(value: float) -> str:
    """Why a quota value is no count of instances ("" : it is one)."""
    if isinstance(value, bool) or not math.isfinite(value) or value != int(value):
        return f"Service Quotas answered {value!r}, not a whole number"
    if not 0 <= value <= MAX_QUOTA:
        return f"Service Quotas answered {value:g}, not a count of instances"
    return ""


def addon_versions(pages: Iterable[Mapping[str, Any]], addon: str) -> tuple[AddonVersion, ...]:
    """The versions of `addon` in DescribeAddonVersions' pages, each with the Kubernetes
    versions it supports; AnswerProblem when the answer lists versions preflight cannot read."""
    versions, unknown, unlisted = [], 0, 0
    for page in pages:
        for item in page["addons"]:  # a reply without the list is not an empty list
            if item.get("addonName") != addon:
                continue
            if "addonVersions" not in item:  # null: its versions are not known, not none
                unlisted += 1
                continue
            for version in item["addonVersions"]:
                name = version.get("addonVersion")
                if not isinstance(name, str) or not ADDON_VERSION.fullmatch(name):
                    unknown += 1  # not a version EKS could install (an unknown format)
                    continue
                if "compatibilities" not in version:
                    unlisted += 1
                    continue
                versions.append(_version(name, version["compatibilities"]))
    if unlisted:
        raise AnswerProblem(
            f"it lists {addon} without its versions, or a version without the Kubernetes "
            f"versions it supports ({unlisted} null or missing)"
        )
    if unknown and not versions:
        raise AnswerProblem(
            f"it lists {unknown} version(s), none in EKS's format (v1.2.0-eksbuild.1)"
        )
    return tuple(versions)


def _version(name: str, compatibilities: Iterable[Mapping[str, Any]]) -> AddonVersion:
    fits: list[tuple[str, bool]] = []
    for entry in compatibilities:
        found = KUBERNETES_VERSION.fullmatch(str(entry.get("clusterVersion", "")))
        if found:
            fits.append((found[1], entry.get("defaultVersion") is True))
    return AddonVersion(
        version=name,
        kubernetes_versions=tuple(v for v, _ in fits),
        default_for=tuple(v for v, default in fits if default),
    )
