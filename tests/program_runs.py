"""Running the real program (__main__.py) offline, with the dev stack's config plus overrides."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from mlcc import offline, stackfiles

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


def stack_values(
    stack: str = "dev", overrides: Mapping[str, str | None] | None = None
) -> stackfiles.StackValues:
    project = stackfiles.load_project(REPO)
    return stackfiles.resolve(
        project, stackfiles.load_stack(REPO, stack), stack=stack, overrides=overrides or {}
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
