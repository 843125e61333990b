"""The provider is pickled into the state as pulumi does it; no client or secret rides along."""

from __future__ import annotations

import pickle
from typing import Any

import dill
from botocore.client import BaseClient
from botocore.credentials import Credentials
from pulumi.dynamic import ConfigureRequest
from pulumi.dynamic.config import Config
from recommendation_stubs import settings

from mlcc import offline
from mlcc.components.recommendation_job import (
    RecommendationJob,
    RecommendationJobArgs,
    RecommendationJobRun,
)
from mlcc.engines import Engine
from mlcc.providers.recommendation_provider import OUTPUT_KEYS, RecommendationJobProvider

RUN_TYPE = "pulumi-python:dynamic/hp:RecommendationJobRun"
COMPONENT_TYPE = "hp:index:RecommendationJob"


def walk(value: Any, seen: set[int] | None = None) -> list[Any]:
    """Every object reachable through attributes and containers."""
    seen = seen if seen is not None else set()
    if id(value) in seen:
        return []
    seen.add(id(value))
    found = [value]
    children: list[Any] = []
    if isinstance(value, dict):
        children = [*value.keys(), *value.values()]
    elif isinstance(value, (list, tuple, set, frozenset)):
        children = list(value)
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        children = list(vars(value).values())
    for child in children:
        found += walk(child, seen)
    return found


def credential_objects(value: Any) -> list[Any]:
    import boto3

    forbidden = (BaseClient, boto3.session.Session, Credentials)
    return [o for o in walk(value) if isinstance(o, forbidden)]


def test_the_detector_finds_a_planted_session() -> None:
    import boto3

    provider = RecommendationJobProvider()
    provider.planted = boto3.session.Session(  # type: ignore[attr-defined]
        aws_access_key_id="AKIAEXAMPLE", aws_secret_access_key="secret", region_name="us-east-1"
    )
    restored = dill.loads(dill.dumps(provider, protocol=pickle.DEFAULT_PROTOCOL, recurse=True))
    assert credential_objects(restored)


def test_pickled_provider_holds_no_client_session_or_credentials() -> None:
    provider = RecommendationJobProvider()
    provider.configure(ConfigureRequest(Config({"aws:region": "us-east-1"}, "hp")))
    provider._client()  # creating a client in a method must not leave it on the provider
    payload = dill.dumps(provider, protocol=pickle.DEFAULT_PROTOCOL, recurse=True)
    restored = dill.loads(payload)

    assert isinstance(restored, RecommendationJobProvider)
    assert not credential_objects(restored)
    assert b"aws_secret_access_key" not in payload and b"SSLContext" not in payload
    # The class travels by reference: the payload names the module rather than carrying code.
    assert b"mlcc.providers.recommendation_provider" in payload
    assert len(payload) < 2000


def test_pulumi_serializer_accepts_the_provider() -> None:
    from pulumi.dynamic.dynamic import serialize_provider

    encoded = serialize_provider(RecommendationJobProvider())
    assert isinstance(encoded, str) and encoded


def test_component_builds_its_run_under_mocks_with_typed_outputs_seeded() -> None:
    job_settings = settings(goal="throughput", timeoutMinutes=90)

    def program() -> None:
        RecommendationJob("speculative", RecommendationJobArgs("dev", job_settings, Engine.VLLM))

    run = offline.run(program, config={})
    component, registration = run.one(COMPONENT_TYPE), run.one(RUN_TYPE)
    assert registration.parent == component.urn
    inputs = registration.inputs
    assert inputs["goal"] == "throughput"
    assert inputs["instance_types"] == ["ml.g6e.2xlarge"]
    assert inputs["timeout_minutes"] == 90
    assert inputs["stack"] == "dev" and inputs["engine"] == "vllm"
    assert isinstance(inputs["__provider"], str) and inputs["__provider"]
    # The serialized provider is a secret in state by default.
    assert registration.redacted_inputs["__provider"] == offline.REDACTED
    assert set(OUTPUT_KEYS).isdisjoint(k for k, v in inputs.items() if v is not None)


def test_typed_outputs_are_declared_on_the_resource() -> None:
    annotations = RecommendationJobRun.__annotations__
    assert set(OUTPUT_KEYS) <= set(annotations)
