"""What every `mlcc optimize` mode shares: errors and exit codes, the injectable
dependencies, the stack file's config, the region and the SageMaker client."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from mlcc.config.aws.environment import setup_failure
from mlcc.config.optimize import DOCUMENTED_REGIONS, ENGINE_FRAMEWORKS
from mlcc.recommendation.polling import Backoff
from mlcc.stackfiles.yaml_reader import StackFileError, compose_file, to_python
from mlcc.userfiles import UserFileError, file_kind, read_text, shown_path

if TYPE_CHECKING:
    import argparse

    from mypy_boto3_sagemaker.client import SageMakerClient
else:
    SageMakerClient = Any

PROJECT = "hp"
OK, REFUSED, USAGE, INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    """Wrong flags or missing files: exit code 2."""


class Refusal(Exception):
    """A finding that stops the command: exit code 1."""


@dataclass
class Deps:
    """What the command touches outside itself; tests replace these."""

    client_factory: Callable[[str | None], SageMakerClient]
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    project_dir: Path = field(default_factory=Path.cwd)
    backoff: Backoff = field(default_factory=Backoff)
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)


def boto3_client(region: str | None) -> SageMakerClient:
    from botocore.exceptions import BotoCoreError

    from mlcc.recommendation.api import sagemaker_client

    try:
        return sagemaker_client(region)
    except (BotoCoreError, ValueError) as error:  # ValueError: an AWS_* setting botocore refuses
        raise UsageError(f"cannot create a SageMaker client: {setup_failure(error)}") from None


def one_line(error: Exception) -> str:
    return " ".join(str(error).split())


def stack_path(deps: Deps, stack: str) -> Path:
    path = deps.project_dir / f"Pulumi.{stack}.yaml"
    try:
        kind = file_kind(path)
    except UserFileError as error:
        raise UsageError(str(error)) from None
    if kind is None:
        raise UsageError(f"no stack file {path.name} in {shown_path(deps.project_dir)}")
    return path


def read_stack_text(path: Path) -> str:
    """The stack file's text (mlcc.userfiles: a FIFO, a folder, not UTF-8 are one line)."""
    try:
        return read_text(path)
    except UserFileError as error:
        raise UsageError(str(error)) from None


def stack_config(deps: Deps, stack: str) -> Mapping[str, Any]:
    """The stack file's config, read as `mlcc plan` reads it (mlcc.stackfiles.yaml_reader)."""
    path = stack_path(deps, stack)
    try:
        document = to_python(compose_file(path), path.name) or {}
    except StackFileError as error:
        raise UsageError(str(error)) from None
    config = document.get("config") if isinstance(document, Mapping) else None
    config = {} if config is None else config
    if not isinstance(config, Mapping):
        raise UsageError(f"Pulumi.{stack}.yaml: 'config' must be a map")
    return config


def config_value(config: Mapping[str, Any], key: str) -> Any:
    """A project key written namespaced (hp:key) or bare (key), as Pulumi accepts both."""
    return config.get(f"{PROJECT}:{key}", config.get(key))


def aws_region(args: argparse.Namespace, deps: Deps) -> str | None:
    if args.region:
        return str(args.region)
    if args.stack:
        region = stack_config(deps, args.stack).get("aws:region")
        if region:
            return str(region)
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")


def sagemaker_client(args: argparse.Namespace, deps: Deps) -> SageMakerClient:
    region = aws_region(args, deps)
    if not region:
        raise UsageError(
            "no AWS region: pass --region, use --stack with aws:region set, or set AWS_REGION"
        )
    if region not in DOCUMENTED_REGIONS:
        print(
            f"note: {region} is not among the regions the dev guide lists for recommendation "
            f"jobs ({', '.join(sorted(DOCUMENTED_REGIONS))})",
            file=deps.err,
        )
    return deps.client_factory(region)


def stack_engine(config: Mapping[str, Any]) -> str:
    engine = str(config_value(config, "engine") or "vllm").lower()
    if engine not in ENGINE_FRAMEWORKS:
        raise Refusal(f"hp:engine: {engine!r} is not vllm or sglang")
    return engine


def describe_or_refuse(client: SageMakerClient, job: str) -> Mapping[str, Any]:
    from mlcc.recommendation import api

    response = api.describe_job(client, job)
    if response is None:
        raise Refusal(f"no recommendation job named {job} in this region")
    return response
