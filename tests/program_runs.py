"""Running the program offline, with the dev stack's config plus overrides.

`run_main` runs the real __main__.py (every component); `run_endpoint` runs only its endpoint
half (config -> workload -> InferenceEndpoint), for tests that look only at the endpoint.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from mlcc.components.endpoint import InferenceEndpoint, InferenceEndpointArgs
from mlcc.config import stack as config
from mlcc.manifest import workload
from mlcc.plan import mocks as offline
from mlcc.stackfiles import resolve as stackfiles

REPO = Path(__file__).resolve().parent.parent
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/hp-vllm@sha256:" + "a" * 64
CR_TYPE = "kubernetes:inference.sagemaker.aws.amazon.com/v1:InferenceEndpointConfig"


@contextmanager
def in_repo() -> Iterator[None]:
    previous = Path.cwd()
    os.chdir(REPO)
    try:
        yield
    finally:
        os.chdir(previous)


@cache
def _project() -> Mapping[str, Any]:
    """The repository's Pulumi.yaml, parsed once per process (resolve only reads it)."""
    return stackfiles.load_project(REPO)


def stack_values(
    stack: str = "dev", overrides: Mapping[str, str | None] | None = None
) -> stackfiles.StackValues:
    return stackfiles.resolve(
        _project(), stackfiles.load_stack(REPO, stack), stack=stack, overrides=overrides or {}
    )


def run_main(
    overrides: Mapping[str, str | None] | None = None,
    *,
    stack: str = "dev",
    secret_keys: list[str] | None = None,
) -> offline.OfflineRun:
    values = stack_values(stack, overrides)
    with in_repo():
        return offline.run(
            offline.program_file(REPO / "__main__.py"),
            config=values.values,
            secret_keys=[*values.secret_keys, *(secret_keys or [])],
            stack=stack,
        )


def endpoint_program() -> None:
    """__main__.py without the platform: the image is hp:image or IMAGE, no cluster provider."""
    stack_config = config.from_pulumi().config
    for endpoint in stack_config.endpoints:
        InferenceEndpoint(
            endpoint.resource_name,
            InferenceEndpointArgs(
                workload=workload.from_endpoint(stack_config, endpoint),
                image=stack_config.image or IMAGE,
                speculative=endpoint.speculative,
            ),
        )


def run_endpoint(
    overrides: Mapping[str, str | None] | None = None, *, stack: str = "dev"
) -> offline.OfflineRun:
    values = stack_values(stack, overrides)
    return offline.run(
        endpoint_program, config=values.values, secret_keys=values.secret_keys, stack=stack
    )
