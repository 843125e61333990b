"""What the deploy wait must also see ready besides the pods: the SageMaker endpoint the operator
registers, and the DNS record, in the operator's own words (mlcc/facts/operator.py)."""

from __future__ import annotations

from mlcc.deploy.registration import Registrations, registration_signs, registrations
from mlcc.manifest.operator import ROUTING_FIELD

SPEC = {
    "endpointName": "llama",
    "dnsConfig": {"hostedZoneId": "Z0123456789ABC"},
    ROUTING_FIELD: {"enabled": True, "routingStrategy": "prefixaware"},
}
CONDITION = {
    "type": "EndpointCreated",
    "status": "False",
    "reason": "ValidationException",
    "message": "Could not find model data",
    "lastTransitionTime": "2026-12-04T04:05:00Z",
}


def sagemaker(state: str) -> dict[str, object]:
    return {"endpoints": {"sagemaker": {"state": state}}}


def test_the_spec_says_what_is_registered() -> None:
    assert registrations(SPEC) == Registrations(True, True, "prefixaware")
    assert registrations({"endpointName": ""}) == Registrations(False, False, None)
    assert registrations({}) == Registrations(False, False, None)


def test_the_sagemaker_endpoint_is_awaited_until_the_operator_reports_it_completed() -> None:
    assert registration_signs(SPEC, {}) == (
        None,
        "the SageMaker endpoint, which the operator registers after the deployment "
        "(status.endpoints.sagemaker.state not written yet)",
    )
    assert registration_signs(SPEC, sagemaker("CreationInProgress")) == (
        None,
        "the SageMaker endpoint to be CreationCompleted (now CreationInProgress)",
    )
    for done in ("CreationCompleted", "UpdateCompleted"):
        assert registration_signs({"endpointName": "llama"}, sagemaker(done)) == (None, None)


def test_a_failed_registration_quotes_the_newest_failing_condition() -> None:
    older = {**CONDITION, "message": "older", "lastTransitionTime": "2026-12-04T04:00:00Z"}
    fine = {**CONDITION, "status": "True", "message": "fine", "lastTransitionTime": "2026-12-05"}
    status = {**sagemaker("CreationFailed"), "conditions": [CONDITION, older, fine]}
    failure, pending = registration_signs(SPEC, status)
    assert pending is None and failure is not None
    assert failure.startswith(
        "its SageMaker endpoint registration is CreationFailed: ValidationException: "
        "Could not find model data; the operator's log says more: kubectl logs -n "
        "hyperpod-inference-system deploy/hyperpod-inference-controller-manager"
    )
    assert "hp:sagemakerEndpoint: false" in failure
    failure, _ = registration_signs(SPEC, sagemaker("UpdateFailed"))
    assert failure is not None and "UpdateFailed: the operator gave no message" in failure


def test_an_unlisted_state_is_waited_on_and_named() -> None:
    _, pending = registration_signs(SPEC, sagemaker("InService"))
    assert pending == (
        "the SageMaker endpoint to be CreationCompleted "
        "(status.endpoints.sagemaker.state is 'InService', a state no source lists)"
    )
    _, pending = registration_signs(SPEC, sagemaker("Bad\nState"))
    assert pending is not None and "Bad\\x0aState" in pending


def test_the_dns_record_once_reported() -> None:
    done = sagemaker("CreationCompleted")
    assert registration_signs(SPEC, done) == (None, None)  # not reported: not awaited
    pending_dns = {**done, "dnsStatus": {"dnsHealth": "Pending", "message": "propagating"}}
    assert registration_signs(SPEC, pending_dns) == (
        None,
        "the DNS record to be Active (now Pending: propagating)",
    )
    broken = {**done, "dnsStatus": {"dnsHealth": "Error", "message": "no such zone"}}
    failure, _ = registration_signs(SPEC, broken)
    assert failure is not None and "no such zone" in failure and "hp:dnsHostedZoneId" in failure
    odd = {**done, "dnsStatus": {"dnsHealth": "Resolving"}}
    assert "a state no source lists" in (registration_signs(SPEC, odd)[1] or "")
    active = {**done, "dnsStatus": {"dnsHealth": "Active", "managedByOperator": True}}
    assert registration_signs(SPEC, active) == (None, None)


def test_no_registration_is_awaited_when_the_spec_asks_for_none() -> None:
    assert registration_signs({"endpointName": ""}, sagemaker("CreationFailed")) == (None, None)
    assert registration_signs({"endpointName": ""}, {}) == (None, None)
