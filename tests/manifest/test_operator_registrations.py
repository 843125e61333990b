"""What the deploy wait must also see ready: the SageMaker endpoint and the DNS record."""

from __future__ import annotations

import botocore.session
from crd_schema import crd_schema

from mlcc.manifest.operator import (
    ENDPOINT_FAILED,
    ENDPOINT_IN_SERVICE,
    ROUTING_FIELD,
    Registrations,
    registration_pending,
    registrations,
)

SPEC = {
    "endpointName": "llama",
    "dnsConfig": {"hostedZoneId": "Z0123456789ABC"},
    ROUTING_FIELD: {"enabled": True, "routingStrategy": "prefixaware"},
}


def test_the_spec_says_what_is_registered() -> None:
    assert registrations(SPEC) == Registrations(True, True, "prefixaware")
    assert registrations({"endpointName": ""}) == Registrations(False, False, None)


def test_pending_until_the_endpoint_is_in_service_and_the_record_active() -> None:
    assert registration_pending(SPEC, {}) == "the SageMaker endpoint is not created yet"
    creating = {"endpoints": {"sagemaker": {"state": "Creating"}}}
    assert registration_pending(SPEC, creating) == "the SageMaker endpoint is Creating"
    failed = {"endpoints": {"sagemaker": {"state": ENDPOINT_FAILED}}}
    assert "failed" in (registration_pending(SPEC, failed) or "")
    in_service = {"endpoints": {"sagemaker": {"state": ENDPOINT_IN_SERVICE}}}
    pending_dns = {**in_service, "dnsStatus": {"dnsHealth": "Pending", "message": "propagating"}}
    assert registration_pending(SPEC, pending_dns) == "the DNS record is Pending: propagating"
    ready = {**in_service, "dnsStatus": {"dnsHealth": "Active", "managedByOperator": True}}
    assert registration_pending(SPEC, ready) is None
    assert registration_pending({"endpointName": ""}, {}) is None


def test_the_states_are_sagemakers_and_the_fields_the_crds() -> None:
    model = botocore.session.get_session().get_service_model("sagemaker")
    states = model.shape_for("EndpointStatus").enum  # type: ignore[attr-defined]
    assert {ENDPOINT_IN_SERVICE, ENDPOINT_FAILED} <= set(states)
    status = crd_schema("inferenceendpointconfigs.yaml")["properties"]["status"]["properties"]
    assert "state" in status["endpoints"]["properties"]["sagemaker"]["properties"]
    assert status["dnsStatus"]["properties"]["dnsHealth"]["enum"] == ["Active", "Pending", "Error"]


def test_registration_signs_wait_only_for_what_the_operator_reports() -> None:
    from mlcc.manifest.operator import registration_signs

    assert registration_signs(SPEC, {}) == (None, None)  # not reported: not waited for
    creating = {"endpoints": {"sagemaker": {"state": "Creating"}}}
    assert registration_signs(SPEC, creating) == (None, "the SageMaker endpoint is Creating")
    failed = {"endpoints": {"sagemaker": {"state": ENDPOINT_FAILED}}}
    assert "SageMaker endpoint failed" in (registration_signs(SPEC, failed)[0] or "")
    in_service = {"endpoints": {"sagemaker": {"state": ENDPOINT_IN_SERVICE}}}
    broken_dns = {**in_service, "dnsStatus": {"dnsHealth": "Error", "message": "no such zone"}}
    failure, _ = registration_signs(SPEC, broken_dns)
    assert failure is not None and "no such zone" in failure and "hp:dnsHostedZoneId" in failure
    assert registration_signs({"endpointName": ""}, failed) == (None, None)
