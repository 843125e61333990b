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

from mlcc.components.recommendation_job import (
    RecommendationJob,
    RecommendationJobArgs,
    RecommendationJobRun,
)
from mlcc.plan import mocks as offline
from mlcc.recommendation.provider import OUTPUT_KEYS, RecommendationJobProvider
from mlcc.serving.engines import Engine

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
    assert b"mlcc.recommendation.provider" in payload
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


def test_a_provider_pickled_before_the_modules_moved_still_unpickles() -> None:
    """State written by main at f02b0ec names the provider and its backoff by their old module
    paths (mlcc.providers.recommendation_provider, mlcc.recommendation_polling). Pulumi's
    dynamic-provider host unpickles it in a fresh process, as done here."""
    import base64
    import subprocess
    import sys
    from pathlib import Path

    fixture = Path(__file__).parent / "fixtures" / "provider-f02b0ec.b64"
    payload = base64.b64decode(fixture.read_text().strip())
    assert b"mlcc.providers.recommendation_provider" in payload
    assert b"mlcc.recommendation_polling" in payload
    code = (
        "import base64, sys, dill\n"
        "from pulumi.dynamic import ConfigureRequest\n"
        "from pulumi.dynamic.config import Config\n"
        "provider = dill.loads(base64.b64decode(open(sys.argv[1]).read().strip()))\n"
        "provider.configure(ConfigureRequest(Config({'aws:region': 'eu-west-1'}, 'hp')))\n"
        "print(type(provider).__module__, type(provider._backoff).__module__, provider._region)\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code, str(fixture)], check=True, capture_output=True, text=True
    ).stdout.split()

    assert shown == ["mlcc.recommendation.provider", "mlcc.recommendation.polling", "eu-west-1"]
