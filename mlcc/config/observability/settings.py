"""`hp:observability` -> `ObservabilitySettings` (pure; one problem per bad value, naming its key).

The value is a target name (`off`, `file`, `prometheus-operator`, `amp`) or a map with a
`target` and the alert thresholds. The targets and their sources are in docs/observability.md:
the HyperPod observability add-on writes to an Amazon Managed Service for Prometheus workspace
and shows Amazon Managed Grafana dashboards (`amp`); a cluster that runs the Prometheus operator
and Grafana's dashboard sidecar takes a `PrometheusRule` and a labelled ConfigMap
(`prometheus-operator`); `file` only writes the importable files of `mlcc plan --out`.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

Issue = tuple[str, str]


class Target(StrEnum):
    OFF = "off"  # nothing: the stack renders as without the key
    FILE = "file"  # only the importable dashboard and rule files of `mlcc plan --out`
    PROMETHEUS_OPERATOR = "prometheus-operator"  # a PrometheusRule and a dashboard ConfigMap
    AMP = "amp"  # an AMP rule groups namespace (aws.amp.RuleGroupNamespace) + the files


# The AMP workspace id as the InferenceEndpointConfig CRD's serverAddress pattern writes it
# (`.../workspaces/ws-[a-zA-Z0-9-]+`, docs/scaling.md), alone, in the workspace URL or its ARN
# (botocore's `WorkspaceArn` pattern `arn:aws[-a-z]*:aps:[-a-z0-9]+:[0-9]{12}:workspace/.+`).
_WORKSPACE_FORMS = (
    re.compile(r"(?P<id>ws-[a-zA-Z0-9-]+)"),
    re.compile(
        r"https://aps-workspaces\.[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)*\.amazonaws\.com"
        r"/workspaces/(?P<id>ws-[a-zA-Z0-9-]+)(?:/.*)?"
    ),
    re.compile(r"arn:aws[-a-z]*:aps:[-a-z0-9]+:[0-9]{12}:workspace/(?P<id>ws-[a-zA-Z0-9-]+)"),
)
# Kubernetes label syntax (apimachinery validation: qualified name, label value).
_LABEL_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
MAX_MINUTES = 1440  # a day: longer windows are not "for some minutes"


@dataclass(frozen=True)
class ObservabilitySettings:
    """`hp:observability` after validation. Thresholds are documented in docs/observability.md."""

    target: Target = Target.OFF
    namespace: str = ""  # of the PrometheusRule and the dashboard ConfigMap; "" = hp:namespace
    rule_labels: Mapping[str, str] = field(default_factory=dict)  # e.g. the Helm release's
    amp_workspace_id: str = ""
    # Acceptance rate (accepted / drafted tokens) under which a speculative endpoint alerts;
    # per endpoint name where `acceptance_floors` names it; 0 = no acceptance alert.
    acceptance_floor: float = 0.3
    acceptance_floors: Mapping[str, float] = field(default_factory=dict)
    acceptance_minutes: int = 10
    # The speculative endpoint alerts when its output tokens/s stay under ratio x its twin's.
    slower_ratio: float = 1.0
    slower_minutes: int = 15
    not_ready_minutes: int = 10
    queue_growth_minutes: int = 10

    @property
    def enabled(self) -> bool:
        return self.target is not Target.OFF

    def floor_of(self, endpoint: str) -> float:
        return self.acceptance_floors.get(endpoint, self.acceptance_floor)


DEFAULTS = ObservabilitySettings()
# Map field -> ObservabilitySettings attribute, for the whole-minute thresholds.
_MINUTES = {
    "acceptanceForMinutes": "acceptance_minutes",
    "slowerForMinutes": "slower_minutes",
    "notReadyForMinutes": "not_ready_minutes",
    "queueGrowthMinutes": "queue_growth_minutes",
}
FIELDS = (
    "target",
    "namespace",
    "ruleLabels",
    "ampWorkspace",
    "acceptanceFloor",
    "slowerThanBaselineRatio",
    *_MINUTES,
)
_TARGETS = ", ".join(t.value for t in Target)


def parse_observability(
    raw: object, key: str, speculative_endpoints: Collection[str]
) -> tuple[ObservabilitySettings, list[Issue]]:
    """`raw` is the decoded value (a bare string, a JSON map, false or None); returns the
    settings (the defaults when there are problems) and every problem as (key path, message)."""
    if raw is None or raw is False or raw == "" or raw == {}:
        return DEFAULTS, []
    if isinstance(raw, str):  # a bare target: its problem names hp:observability itself
        issues: list[Issue] = []
        target = _target(raw, key, issues)
        if target is Target.AMP:
            issues.append((key, "target amp needs its workspace: {target: amp, ampWorkspace: ...}"))
        return (
            (DEFAULTS, issues)
            if issues or target is None
            else (replace(DEFAULTS, target=target), [])
        )
    if not isinstance(raw, dict):
        message = f"must be one of {_TARGETS}, or a map with a target; got {_shown(raw)}"
        return DEFAULTS, [(key, message)]
    issues = []
    for name in sorted(map(str, raw)):
        if name not in FIELDS:
            close = difflib.get_close_matches(name, FIELDS, n=1)
            hint = f"; did you mean {close[0]}?" if close else f" (known: {', '.join(FIELDS)})"
            issues.append((f"{key}.{name}", f"is not a field of hp:observability{hint}"))
    target = _target(raw.get("target", Target.OFF.value), f"{key}.target", issues)
    changes: dict[str, Any] = {}
    for name, attribute in _MINUTES.items():
        if name in raw:
            changes[attribute] = _minutes(raw[name], f"{key}.{name}", issues)
    if "slowerThanBaselineRatio" in raw:
        path = f"{key}.slowerThanBaselineRatio"
        changes["slower_ratio"] = _number(raw["slowerThanBaselineRatio"], path, 0.0, 10.0, issues)
    if "acceptanceFloor" in raw:
        changes.update(
            _floors(raw["acceptanceFloor"], f"{key}.acceptanceFloor", speculative_endpoints, issues)
        )
    changes["namespace"] = _namespace(raw.get("namespace", ""), f"{key}.namespace", issues)
    changes["rule_labels"] = _labels(raw.get("ruleLabels", {}), f"{key}.ruleLabels", issues)
    workspace = raw.get("ampWorkspace", "")
    changes["amp_workspace_id"] = _workspace(workspace, target, f"{key}.ampWorkspace", issues)
    if issues or target is None:
        return DEFAULTS, issues
    return replace(DEFAULTS, target=target, **changes), []


def _target(value: object, key: str, issues: list[Issue]) -> Target | None:
    text = value.strip().lower().replace("_", "-") if isinstance(value, str) else None
    if isinstance(value, bool) and value is False:
        text = Target.OFF.value
    for target in Target:
        if text == target.value:
            return target
    issues.append((key, f"must be one of {_TARGETS}, got {_shown(value)}"))
    return None


def _minutes(value: object, key: str, issues: list[Issue]) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_MINUTES:
        return value
    message = f"must be a whole number of minutes from 1 to {MAX_MINUTES}, {_got(value)}"
    issues.append((key, message))
    return 1


def _number(value: object, key: str, low: float, high: float, issues: list[Issue]) -> float:
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if number is not None and math.isfinite(number) and low <= number <= high and number > 0:
        return float(number)
    issues.append((key, f"must be a number over {low:g} and at most {high:g}, {_got(value)}"))
    return 1.0


def _floor(value: object, key: str, issues: list[Issue]) -> float:
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if number is not None and math.isfinite(number) and 0 <= number <= 1:
        return float(number)
    issues.append(
        (key, f"must be an acceptance rate from 0 (no alert) to 1, such as 0.3, {_got(value)}")
    )
    return DEFAULTS.acceptance_floor


def _floors(
    value: object, key: str, speculative: Collection[str], issues: list[Issue]
) -> dict[str, Any]:
    """One rate for every speculative endpoint, or a map of endpoint name -> rate."""
    if not isinstance(value, dict):
        return {"acceptance_floor": _floor(value, key, issues)}
    floors: dict[str, float] = {}
    for name in sorted(map(str, value)):
        path = f"{key}.{name}"
        if name not in speculative:
            known = ", ".join(sorted(speculative)) or "none: no endpoint speculates"
            issues.append((path, f"names no speculative endpoint (speculative: {known})"))
            continue
        floors[name] = _floor(value[name], path, issues)
    return {"acceptance_floors": floors}


def _namespace(value: object, key: str, issues: list[Issue]) -> str:
    if value == "":
        return ""
    if isinstance(value, str) and _DNS_LABEL.match(value):
        return value
    issues.append((key, f"must be a Kubernetes namespace name (a DNS label), {_got(value)}"))
    return ""


def _labels(value: object, key: str, issues: list[Issue]) -> dict[str, str]:
    if not isinstance(value, dict):
        issues.append((key, 'must be a map of Kubernetes labels, such as {"release": "kps"}'))
        return {}
    labels: dict[str, str] = {}
    for name in sorted(map(str, value)):
        label = value[name]
        if not _LABEL_KEY.match(name) or len(name) > 317:
            issues.append((f"{key}.{name}", "is not a Kubernetes label name"))
        elif not isinstance(label, str) or not _LABEL_VALUE.match(label):
            issues.append(
                (f"{key}.{name}", f"must be a Kubernetes label value (a string), {_got(label)}")
            )
        else:
            labels[name] = label
    return labels


def _workspace(value: object, target: Target | None, key: str, issues: list[Issue]) -> str:
    form = "ws-<id>, the workspace URL or its ARN"
    if value in ("", None):
        if target is Target.AMP:
            issues.append((key, f"is required with target amp: the AMP workspace, {form}"))
        return ""
    if target is not Target.AMP:
        issues.append((key, "is only used with target amp; remove it or set target: amp"))
        return ""
    text = value.strip() if isinstance(value, str) else ""
    for pattern in _WORKSPACE_FORMS:
        if match := pattern.fullmatch(text):
            return match["id"]
    issues.append((key, f"must be an AMP workspace, {form}, {_got(value)}"))
    return ""


def _shown(value: object) -> str:
    return json.dumps(value, default=repr)[:80]


def _got(value: object) -> str:
    quoted = "; write the number without quotes" if isinstance(value, str) else ""
    return f"got {_shown(value)}{quoted}"
