"""`mlcc optimize --apply`: write a job's top recommendation into Pulumi.<stack>.yaml."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlcc.cli.optimize.context import (
    OK,
    Deps,
    Refusal,
    UsageError,
    config_value,
    describe_or_refuse,
    read_stack_text,
    sagemaker_client,
    stack_config,
    stack_engine,
    stack_path,
)
from mlcc.engine_contract.values import printable
from mlcc.recommendation.parsing import JobStatus, RecommendedSpeculation, top_recommendation
from mlcc.stackfiles.edit import Value, set_config_keys
from mlcc.userfiles import UserFileError, write_text

if TYPE_CHECKING:
    from mypy_boto3_sagemaker.client import SageMakerClient
else:
    SageMakerClient = Any


def apply_result(args: argparse.Namespace, deps: Deps) -> int:
    from mlcc.recommendation import api

    if not args.stack:
        raise UsageError("--apply needs --stack: the stack file to write")
    path = stack_path(deps, args.stack)
    config = stack_config(deps, args.stack)
    client = sagemaker_client(args, deps)
    job = _newest_completed_job(client, args.stack) if args.apply == "top" else args.apply
    response = describe_or_refuse(client, job)
    status = response.get("AIRecommendationJobStatus")
    if status != JobStatus.COMPLETED:
        reason = response.get("FailureReason")
        raise Refusal(
            f"{job} is {status}" + (f": {reason}" if reason else "") + "; nothing applied"
        )
    owner = api.stack_of(client, response)
    if owner != args.stack:
        started_for = f"stack {owner}" if owner else "no stack of this project"
        print(printable(f"note: {job} was started for {started_for}"), file=deps.err)
    top = top_recommendation(response)
    values = _speculative_values(top, config, path.name)
    changes = write_stack_keys(path, values)
    print(f"applied the top recommendation of {job} to {path.name}:", file=deps.out)
    for line in changes:
        print(f"  {printable(line)}", file=deps.out)
    for note in top.notes:
        print(f"  note: {printable(note)}", file=deps.out)
    print(
        "explicit hp:speculative* keys win over hp:optimize; check with `mlcc plan`", file=deps.out
    )
    return OK


def _newest_completed_job(client: SageMakerClient, stack: str) -> str:
    from mlcc.recommendation import api

    newest = next(api.stack_jobs(client, stack, JobStatus.COMPLETED), None)
    if newest is not None:
        return newest.name
    raise Refusal(
        f"no completed recommendation job for stack {stack}; start one with "
        f"`mlcc optimize --stack {stack} --goal latency --wait`"
    )


def _speculative_values(
    top: RecommendedSpeculation, config: Mapping[str, Any], stack_file: str
) -> dict[str, str | int]:
    """The three keys to write, after checking them against the stack's engine."""
    from mlcc.recommendation.choice import recommended_spec
    from mlcc.serving.engines import Engine, known_versions, release

    engine = Engine(stack_engine(config))
    version = str(config_value(config, "engineVersion") or "") or None
    if version and version not in known_versions(engine):
        version = None  # the stack check reports it; judge against the pinned release here
    spec, problem = recommended_spec(top.outputs(), engine, release(engine, version))
    if spec is None:
        raise Refusal(f"{top.job_name}: {problem}; {stack_file} left unchanged")
    return {
        "speculativeAlgorithm": spec.algorithm,
        # Empty means "no draft" (the project default) for algorithms that take none.
        "speculativeModel": spec.draft_model or "",
        "speculativeNumTokens": spec.num_tokens,
    }


def write_stack_keys(path: Path, values: Mapping[str, Value]) -> list[str]:
    """Set hp:<key> in the stack file, keeping every other byte (comments, order, line endings),
    written in one step by mlcc.userfiles (its permission bits and a symbolic link kept)."""
    return write_stack_edit(path, lambda text: set_config_keys(text, values))


def write_stack_edit(path: Path, edit: Callable[[str], tuple[str, list[str]]]) -> list[str]:
    """The stack file's text through `edit` (new text, the changes it made), written in one step
    when it changed; a write refused is a Refusal. Returns the changes."""
    text = read_stack_text(path)
    new_text, changes = edit(text)
    if new_text != text:
        try:
            write_text(path, new_text, follow_link=True)
        except UserFileError as error:
            raise Refusal(f"{error}; nothing applied") from None
    return changes
