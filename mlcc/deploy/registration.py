"""What the operator registers besides the pods, read in its own words. Pure (docs/deploy.md).

An applied endpoint has a SageMaker endpoint unless `spec.endpointName` is empty, and a Route53
record when `spec.dnsConfig` names a zone. The operator reports each in the custom resource's
status; every state name, and which of them mean done, failed or still working, comes from
`mlcc.facts.operator` (the operator's CRDs and the HyperPod CLI, docs/operator-facts.md). A
state that no source lists is neither: it is shown as it is and waited on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mlcc.deploy.snapshot import dotted, in_time_order, mapping, moment, one_line
from mlcc.facts.operator import (
    CONDITION_FAILING,
    DNS_HEALTH,
    NO_SAGEMAKER_ENDPOINT,
    OPERATOR_CONTROLLER,
    OPERATOR_NAMESPACE,
    SAGEMAKER_STATE,
    StateField,
)
from mlcc.manifest.operator import ROUTING_FIELD

Standing = Literal["absent", "ready", "failed", "working", "unlisted"]
# How long the SageMaker endpoint may stay unregistered (not written, or in progress) once
# everything else serves: the HyperPod CLI's describe says its creation "takes ~10 min"
# (docs/operator-facts.md); three times that, well before hp:deployTimeoutMinutes' 120.
REGISTRATION_GRACE_S = 30 * 60.0

_OPERATOR_LOG = (
    f"the operator's log says more: kubectl logs -n {OPERATOR_NAMESPACE} "
    f"deploy/{OPERATOR_CONTROLLER}"
)


@dataclass(frozen=True)
class Registrations:
    """What an applied endpoint has besides its pods, from its spec."""

    sagemaker_endpoint: bool  # status.endpoints.sagemaker.state must reach CreationCompleted
    dns_record: bool  # status.dnsStatus.dnsHealth must reach Active
    routing: str | None  # the operator's router (hyperpod-inference-system) fronts the pods


def registrations(spec: Mapping[str, Any]) -> Registrations:
    routing = mapping(spec.get(ROUTING_FIELD))
    dns = mapping(spec.get("dnsConfig"))
    return Registrations(
        sagemaker_endpoint=(spec.get("endpointName") or NO_SAGEMAKER_ENDPOINT)
        != NO_SAGEMAKER_ENDPOINT,
        dns_record=bool(dns.get("hostedZoneId")),
        routing=routing.get("routingStrategy") if routing.get("enabled") is True else None,
    )


def field_value(status: Mapping[str, Any], field: StateField) -> object:
    """The value at `field.path` (which starts at `status.`), None when any part is absent."""
    return dotted(status, field.path.removeprefix("status."))


def standing(field: StateField, value: object) -> Standing:
    if value is None or value == "":
        return "absent"
    if value in field.ready:
        return "ready"
    if value in field.failed:
        return "failed"
    if value in field.working or value in field.other:
        return "working"
    return "unlisted"


def shown(value: object) -> str:
    """A state as the operator wrote it, one line, control characters escaped."""
    return one_line(value if isinstance(value, str) else repr(value))


def unlisted(field: StateField, value: object) -> str:
    return f"{field.ready[0]} ({field.path} is '{shown(value)}', a state no source lists)"


def conditions_message(status: Mapping[str, Any], now: float | None = None) -> str:
    """The operator's words in status.conditions: the newest failing condition, else the newest
    with a message (`reason: message`); newest by lastTransitionTime, a condition of no
    believable time (`moment`, `now` the reader's wall clock) older than any other."""
    conditions = [
        c for c in status.get("conditions") or [] if isinstance(c, Mapping) and c.get("message")
    ]
    times = [moment(c.get("lastTransitionTime"), now) for c in conditions]
    newest = [conditions[i] for i in in_time_order(times)]
    failing = [c for c in newest if str(c.get("status")) == CONDITION_FAILING]
    chosen = failing[-1:] or newest[-1:]
    return one_line(": ".join(str(c[k]) for c in chosen for k in ("reason", "message") if c.get(k)))


def registration_signs(
    spec: Mapping[str, Any], status: Mapping[str, Any], now: float | None = None
) -> tuple[str | None, str | None]:
    """(failure, what is still awaited) of the registrations the spec asks for.

    The SageMaker endpoint is awaited also before the operator writes its state: the operator
    registers it only after the deployment (docs/operator-facts.md, "order"). The DNS record's
    status has no sourced place in that order, so a DNS status not written yet is not awaited.
    """
    wanted = registrations(spec)
    failure, pending = None, None
    if wanted.sagemaker_endpoint:
        failure, pending = _sagemaker(status, now)
    if failure is None and wanted.dns_record:
        dns_failure, dns_pending = _dns(status)
        failure, pending = dns_failure, pending or dns_pending
    return failure, None if failure else pending


def sagemaker_unregistered(spec: Mapping[str, Any], status: Mapping[str, Any]) -> str | None:
    """How the SageMaker endpoint the spec asks for is not registered yet (its state not
    written, or in progress), else None (registered, failed, unlisted, or none asked for)."""
    if not registrations(spec).sagemaker_endpoint:
        return None
    state = field_value(status, SAGEMAKER_STATE)
    match standing(SAGEMAKER_STATE, state):
        case "absent":
            return f"{SAGEMAKER_STATE.path} not written"
        case "working":
            return f"{SAGEMAKER_STATE.path} {shown(state)}"
        case _:
            return None


def unregistered_message(how: str, minutes: float) -> str:
    return (
        f"its SageMaker endpoint is not registered {minutes:g} minutes after everything else "
        f"served ({how}); {_OPERATOR_LOG}, or set hp:sagemakerEndpoint: false to serve without one"
    )


def _sagemaker(status: Mapping[str, Any], now: float | None) -> tuple[str | None, str | None]:
    state = field_value(status, SAGEMAKER_STATE)
    match standing(SAGEMAKER_STATE, state):
        case "ready":
            return None, None
        case "absent":
            return None, (
                "the SageMaker endpoint, which the operator registers after the deployment "
                f"({SAGEMAKER_STATE.path} not written yet)"
            )
        case "failed":
            said = conditions_message(status, now) or "the operator gave no message"
            return (
                f"its SageMaker endpoint registration is {shown(state)}: {said}; {_OPERATOR_LOG}, "
                "or set hp:sagemakerEndpoint: false to serve without one",
                None,
            )
        case "working":
            return None, f"the SageMaker endpoint to be {SAGEMAKER_STATE.ready[0]} (now {state})"
        case _:
            return None, f"the SageMaker endpoint to be {unlisted(SAGEMAKER_STATE, state)}"


def _dns(status: Mapping[str, Any]) -> tuple[str | None, str | None]:
    health = field_value(status, DNS_HEALTH)
    dns = status.get("dnsStatus")
    message = one_line(str(dns.get("message") or "")) if isinstance(dns, Mapping) else ""
    said = f": {message}" if message else ""
    match standing(DNS_HEALTH, health):
        case "ready" | "absent":
            return None, None
        case "failed":
            return (
                f"its DNS record is in {health}{said} (check hp:dnsHostedZoneId and hp:tls)",
                None,
            )
        case "working":
            return None, f"the DNS record to be {DNS_HEALTH.ready[0]} (now {health}{said})"
        case _:
            return None, f"the DNS record to be {unlisted(DNS_HEALTH, health)}"
