"""`mlcc optimize`: SageMaker AI recommendation jobs outside Pulumi, and applying their result.

    mlcc optimize --stack dev --goal latency [--dataset s3://...] [--wait]   start a job
    mlcc optimize --wait --job JOB [--stack dev]                             wait for a job
    mlcc optimize --list [--stack dev]                                       jobs and status
    mlcc optimize --show JOB                                                 its recommendations
    mlcc optimize --apply top|JOB --stack dev                                write hp:speculative*

Settings come from the stack's `hp:optimize` object; flags override them. `--apply top` takes
the newest completed job of the stack. Progress goes to stderr, results to stdout.
Exit codes: 0 ok, 1 a refusal or finding (bad settings, failed job, nothing usable to apply),
2 a usage error, 130 interrupted (the job keeps running).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from mlcc import recommendation as rec

if TYPE_CHECKING:
    from mypy_boto3_sagemaker.client import SageMakerClient
else:
    SageMakerClient = Any

PROJECT = "hp"
SPECULATIVE_KEYS = ("speculativeAlgorithm", "speculativeModel", "speculativeNumTokens")
# Job name stems this project uses: `hp-<stack>-<goal>` (CLI) and `hp-<stack>-speculative`
# (the stack's SpeculativeRecommendation resource).
JOB_KINDS = (*(g.value for g in rec.Goal), "speculative")
INTERRUPTED = 130


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
    backoff: rec.Backoff = field(default_factory=rec.Backoff)
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)


def _boto3_client(region: str | None) -> SageMakerClient:
    import boto3

    return boto3.client("sagemaker", region_name=region)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "optimize",
        help="run SageMaker AI recommendation jobs and apply their speculative settings",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--list", action="store_true", help="list recommendation jobs")
    mode.add_argument("--show", metavar="JOB", help="print a job's recommendations")
    mode.add_argument("--apply", metavar="top|JOB", help="write a job's result into the stack")
    mode.add_argument("--job", metavar="JOB", help="with --wait: wait for an existing job")
    parser.add_argument("--stack", help="stack name (Pulumi.<stack>.yaml)")
    parser.add_argument("--goal", choices=[g.value for g in rec.Goal])
    parser.add_argument("--dataset", help="s3:// or https:// URI of the workload dataset")
    parser.add_argument("--model-s3-uri", help="s3:// prefix of the model checkpoint")
    parser.add_argument("--role-arn", help="IAM role the job runs as")
    parser.add_argument(
        "--instance-type", action="append", dest="instance_types", help="repeatable, up to 3"
    )
    parser.add_argument("--timeout-minutes", type=int, help="how long --wait waits")
    parser.add_argument("--wait", action="store_true", help="wait for the job and show results")
    parser.add_argument("--region", help="AWS region (default: aws:region of the stack)")
    parser.add_argument("--json", action="store_true", help="--list/--show: JSON on stdout")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return execute(args, Deps(client_factory=_boto3_client))


def execute(args: argparse.Namespace, deps: Deps) -> int:
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        return _dispatch(args, deps)
    except UsageError as error:
        print(f"mlcc optimize: error: {error}", file=deps.err)
        return 2
    except Refusal as error:
        print(f"mlcc optimize: {error}", file=deps.err)
        return 1
    except (ClientError, BotoCoreError) as error:
        print(f"mlcc optimize: AWS error: {error}", file=deps.err)
        return 1


def _dispatch(args: argparse.Namespace, deps: Deps) -> int:
    if args.list:
        return _list(args, deps)
    if args.show:
        return _show(args, deps)
    if args.apply:
        return _apply(args, deps)
    if args.job:
        return _wait_and_show(_client(args, deps), args.job, _wait_minutes(args, deps), deps)
    return _start(args, deps)


# -- stack file --------------------------------------------------------------------------------


def _stack_path(deps: Deps, stack: str) -> Path:
    path = deps.project_dir / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        raise UsageError(f"no stack file {path.name} in {deps.project_dir}")
    return path


def _stack_config(deps: Deps, stack: str) -> Mapping[str, Any]:
    from ruamel.yaml import YAML

    document = YAML(typ="safe").load(_stack_path(deps, stack).read_text()) or {}
    config = document.get("config") or {}
    if not isinstance(config, Mapping):
        raise UsageError(f"Pulumi.{stack}.yaml: 'config' must be a map")
    return config


def _config_value(config: Mapping[str, Any], key: str) -> Any:
    """A project key written namespaced (hp:key) or bare (key), as Pulumi accepts both."""
    return config.get(f"{PROJECT}:{key}", config.get(key))


def _region(args: argparse.Namespace, deps: Deps) -> str | None:
    if args.region:
        return str(args.region)
    if args.stack:
        region = _stack_config(deps, args.stack).get("aws:region")
        if region:
            return str(region)
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")


def _client(args: argparse.Namespace, deps: Deps) -> SageMakerClient:
    region = _region(args, deps)
    if not region:
        raise UsageError(
            "no AWS region: pass --region, use --stack with aws:region set, or set AWS_REGION"
        )
    if region not in rec.DOCUMENTED_REGIONS:
        print(
            f"note: {region} is not among the regions the dev guide lists for recommendation "
            f"jobs ({', '.join(sorted(rec.DOCUMENTED_REGIONS))})",
            file=deps.err,
        )
    return deps.client_factory(region)


# -- start / wait --------------------------------------------------------------------------------


def _settings(args: argparse.Namespace, config: Mapping[str, Any]) -> rec.OptimizeSettings:
    stored = _config_value(config, "optimize") or {}
    if not isinstance(stored, Mapping):
        raise Refusal("hp:optimize: must be an object (goal, modelS3Uri, roleArn, ...)")
    flags = {
        "goal": args.goal,
        "dataset": args.dataset,
        "modelS3Uri": args.model_s3_uri,
        "roleArn": args.role_arn,
        "instanceTypes": args.instance_types,
        "timeoutMinutes": args.timeout_minutes,
    }
    raw = {**stored, **{k: v for k, v in flags.items() if v is not None}}
    if "goal" not in raw:
        raise UsageError("give --goal latency|throughput|cost or set hp:optimize.goal")
    settings, errors = rec.parse_optimize_settings(raw)
    if errors or settings is None:
        raise Refusal("invalid settings:\n" + "\n".join(e.render() for e in errors))
    return settings


def _engine(config: Mapping[str, Any]) -> str:
    engine = str(_config_value(config, "engine") or "vllm").lower()
    if engine not in rec.ENGINE_FRAMEWORKS:
        raise Refusal(f"hp:engine: {engine!r} is not vllm or sglang")
    return engine


def _start(args: argparse.Namespace, deps: Deps) -> int:
    from mlcc import recommendation_jobs as jobs

    if not args.stack:
        raise UsageError("--stack is required to start a job (or use --list/--show/--job)")
    config = _stack_config(deps, args.stack)
    settings = _settings(args, config)
    engine = _engine(config)
    _, note = rec.framework_for_engine(engine)
    if note:
        print(f"note: {note}", file=deps.err)
    salt = f"{deps.now().isoformat()}|{json.dumps(settings.to_mapping(), sort_keys=True)}"
    names = jobs.JobNames.derive(f"{PROJECT}-{args.stack}-{settings.goal.value}", salt)
    client = _client(args, deps)
    jobs.start_job(client, names, settings, engine)
    print(f"started {names.job} (goal {settings.goal.value} -> {settings.metric})", file=deps.out)
    _print_hints(names.job, args.stack, deps.err)
    if not args.wait:
        return 0
    return _wait_and_show(client, names.job, settings.timeout_minutes, deps)


def _wait_minutes(args: argparse.Namespace, deps: Deps) -> int:
    if args.timeout_minutes is not None:
        minutes, problem = rec.validate_timeout(args.timeout_minutes)
        if minutes is None:
            raise UsageError(f"--timeout-minutes: {problem}")
        return minutes
    if args.stack:
        stored = _config_value(_stack_config(deps, args.stack), "optimize")
        if isinstance(stored, Mapping):
            minutes, _ = rec.validate_timeout(stored.get("timeoutMinutes"))
            if minutes:
                return minutes
    return rec.DEFAULT_TIMEOUT_MINUTES


def _print_hints(job: str, stack: str | None, err: TextIO) -> None:
    target = f" --stack {stack}" if stack else " --stack <stack>"
    print(f"  wait:    mlcc optimize --wait --job {job}", file=err)
    print(f"  results: mlcc optimize --show {job}", file=err)
    print(f"  apply:   mlcc optimize --apply {job}{target}", file=err)


def _wait_and_show(client: SageMakerClient, job: str, minutes: int, deps: Deps) -> int:
    from mlcc import recommendation_jobs as jobs

    try:
        response = rec.wait_for_job(
            job,
            lambda: _describe(client, job),
            timeout_seconds=minutes * 60,
            clock=deps.clock,
            sleep=deps.sleep,
            stop=lambda: jobs.stop_job(client, job),
            backoff=deps.backoff,
            on_progress=lambda progress: print(progress.render(), file=deps.err, flush=True),
        )
    except KeyboardInterrupt:
        print(f"\ninterrupted: {job} keeps running on SageMaker.", file=deps.err)
        _print_hints(job, None, deps.err)
        return INTERRUPTED
    except rec.JobTimedOut as error:
        raise Refusal(str(error)) from None
    return _report(response, deps, as_json=False)


def _describe(client: SageMakerClient, job: str) -> Mapping[str, Any]:
    from mlcc import recommendation_jobs as jobs

    response = jobs.describe_job(client, job)
    if response is None:
        raise Refusal(f"no recommendation job named {job} in this region")
    return response


# -- list / show ---------------------------------------------------------------------------------


def _list(args: argparse.Namespace, deps: Deps) -> int:
    from mlcc import recommendation_jobs as jobs

    prefix = _stack_prefix(args.stack) if args.stack else None
    found = jobs.list_jobs(_client(args, deps), name_contains=prefix)
    if prefix:
        found = [job for job in found if _belongs_to_stack(job.name, prefix)]
    if args.json:
        rows = [
            {"name": j.name, "status": j.status, "created": _iso(j.created), "ended": _iso(j.ended)}
            for j in found
        ]
        print(json.dumps(rows, indent=2), file=deps.out)
        return 0
    if not found:
        print("no recommendation jobs", file=deps.out)
        return 0
    width = max(len(job.name) for job in found)
    print(f"{'JOB':<{width}}  {'STATUS':<10}  CREATED", file=deps.out)
    for job in found:
        print(f"{job.name:<{width}}  {job.status:<10}  {_iso(job.created)}", file=deps.out)
    return 0


def _show(args: argparse.Namespace, deps: Deps) -> int:
    response = _describe(_client(args, deps), args.show)
    return _report(response, deps, as_json=args.json)


def _report(response: Mapping[str, Any], deps: Deps, *, as_json: bool) -> int:
    name = str(response.get("AIRecommendationJobName", ""))
    status = str(response.get("AIRecommendationJobStatus", ""))
    recommendations = (
        rec.parse_recommendations(response) if status == rec.JobStatus.COMPLETED else []
    )
    if as_json:
        document = {
            "job": name,
            "status": status,
            "failureReason": response.get("FailureReason"),
            "recommendations": [r.outputs() for r in recommendations],
        }
        print(json.dumps(document, indent=2), file=deps.out)
    else:
        _print_report(name, status, response.get("FailureReason"), recommendations, deps.out)
    return 1 if status in (rec.JobStatus.FAILED, rec.JobStatus.STOPPED) else 0


def _print_report(
    name: str,
    status: str,
    failure: Any,
    recommendations: list[rec.SpeculativeRecommendation],
    out: TextIO,
) -> None:
    print(f"{name}: {status}" + (f": {failure}" if failure else ""), file=out)
    if status in (rec.JobStatus.IN_PROGRESS, rec.JobStatus.STOPPING):
        print(f"  not finished; wait with: mlcc optimize --wait --job {name}", file=out)
    if status == rec.JobStatus.COMPLETED and not recommendations:
        print("  the job returned no recommendations", file=out)
    for index, item in enumerate(recommendations, start=1):
        _print_recommendation(index, item, out)


def _print_recommendation(index: int, item: rec.SpeculativeRecommendation, out: TextIO) -> None:
    top = " (top)" if index == 1 else ""
    print(f"\nrecommendation {index}{top}: {item.description or '(no description)'}", file=out)
    if item.instance_type:
        print(f"  instance:       {item.instance_type}", file=out)
    if item.expected_performance:
        performance = "; ".join(m.render() for m in item.expected_performance)
        print(f"  expected:       {performance}", file=out)
    print(f"  optimizations:  {', '.join(item.optimization_types) or 'none'}", file=out)
    print(f"  speculative:    {item.summary()}", file=out)
    if item.optimization_config:
        print(f"  raw config:     {json.dumps(dict(item.optimization_config))}", file=out)
    for note in item.notes:
        print(f"  note:           {note}", file=out)
    if item.model_package_arn:
        print(f"  model package:  {item.model_package_arn}", file=out)


def _iso(value: datetime | None) -> str:
    return value.isoformat() if value else ""


def _stack_prefix(stack: str) -> str:
    # The same cleaning build_name applies, so the prefix matches the names we create.
    return rec.build_name(f"{PROJECT}-{stack}", "").rsplit("-", 1)[0]


def _belongs_to_stack(job: str, prefix: str) -> bool:
    rest = job.removeprefix(prefix + "-")
    return rest != job and any(rest.startswith(kind + "-") for kind in JOB_KINDS)


# -- apply ---------------------------------------------------------------------------------------


def _apply(args: argparse.Namespace, deps: Deps) -> int:
    if not args.stack:
        raise UsageError("--apply needs --stack: the stack file to write")
    path = _stack_path(deps, args.stack)
    config = _stack_config(deps, args.stack)
    client = _client(args, deps)
    job = _newest_completed_job(client, args.stack) if args.apply == "top" else args.apply
    response = _describe(client, job)
    status = response.get("AIRecommendationJobStatus")
    if status != rec.JobStatus.COMPLETED:
        reason = response.get("FailureReason")
        raise Refusal(
            f"{job} is {status}" + (f": {reason}" if reason else "") + "; nothing applied"
        )
    top = rec.top_recommendation(response)
    if not top.usable:
        raise Refusal(f"{job}: {top.reason}; {path.name} left unchanged")
    values = _speculative_values(top, config)
    changes = write_stack_keys(path, values)
    print(f"applied the top recommendation of {job} to {path.name}:", file=deps.out)
    for line in changes:
        print(f"  {line}", file=deps.out)
    for note in top.notes:
        print(f"  note: {note}", file=deps.out)
    print(
        "explicit hp:speculative* keys win over hp:optimize; check with `mlcc plan`", file=deps.out
    )
    return 0


def _newest_completed_job(client: SageMakerClient, stack: str) -> str:
    from mlcc import recommendation_jobs as jobs

    prefix = _stack_prefix(stack)
    for job in jobs.list_jobs(client, name_contains=prefix, limit=100):
        if job.status == rec.JobStatus.COMPLETED and _belongs_to_stack(job.name, prefix):
            return job.name
    raise Refusal(
        f"no completed recommendation job for stack {stack}; start one with "
        f"`mlcc optimize --stack {stack} --goal latency --wait`"
    )


def _speculative_values(
    top: rec.SpeculativeRecommendation, config: Mapping[str, Any]
) -> dict[str, str | int]:
    """The three keys to write, after checking them against the stack's engine."""
    from mlcc import speculative
    from mlcc.engines import Engine, known_versions, release

    assert top.algorithm is not None  # usable
    engine = Engine(_engine(config))
    version = str(_config_value(config, "engineVersion") or "") or None
    if version and version not in known_versions(engine):
        version = None  # the stack check reports it; judge against the pinned release here
    num_tokens = top.num_tokens or speculative.DEFAULT_NUM_TOKENS
    spec = speculative.SpeculativeSpec(top.algorithm, top.draft_model, num_tokens)
    problems = speculative.check(spec, engine, release(engine, version)).errors
    if problems:
        raise Refusal(
            "the recommendation does not fit this stack:\n" + "\n".join(str(p) for p in problems)
        )
    return {
        "speculativeAlgorithm": top.algorithm,
        # Empty means "no draft" (the project default) for algorithms that take none.
        "speculativeModel": top.draft_model or "",
        "speculativeNumTokens": num_tokens,
    }


def write_stack_keys(path: Path, values: Mapping[str, str | int]) -> list[str]:
    """Set hp:<key> in the stack file, keeping every other byte (comments, order, quotes)."""
    text = path.read_text()
    new_text, changes = update_stack_text(text, values)
    if new_text != text:
        path.write_text(new_text)
    return changes


def update_stack_text(text: str, values: Mapping[str, str | int]) -> tuple[str, list[str]]:
    """Round-trip `text` with ruamel, setting each key in `config:`; returns (text, changes)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.util import load_yaml_guess_indent

    # ruamel guesses the block-sequence layout; the mapping indent we read off the key lines.
    _, sequence_indent, sequence_dash = load_yaml_guess_indent(text)
    mapping_indent = _mapping_indent(text)
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    if sequence_dash is None:
        yaml.indent(mapping=mapping_indent, sequence=mapping_indent + 2, offset=mapping_indent)
    else:
        yaml.indent(mapping=mapping_indent, sequence=sequence_indent, offset=sequence_dash)
    document = yaml.load(text) or CommentedMap()
    config = document.get("config")
    if config is None:
        config = document["config"] = CommentedMap()
    changes = []
    for key, value in values.items():
        target = key if key in config and f"{PROJECT}:{key}" not in config else f"{PROJECT}:{key}"
        old = config.get(target)
        if old != value:
            config[target] = value
            changes.append(f"{PROJECT}:{key}: {value!r} (was {old!r})")
        else:
            changes.append(f"{PROJECT}:{key}: {value!r} (unchanged)")
    buffer = io.StringIO()
    yaml.dump(document, buffer)
    return buffer.getvalue(), changes


def _mapping_indent(text: str) -> int:
    """The smallest indentation of a nested mapping key (2 when there is none)."""
    indents = [
        len(line) - len(line.lstrip(" "))
        for line in text.splitlines()
        if line.startswith(" ") and line.strip() and line.lstrip()[0] not in "#-"
    ]
    return min(indents, default=2)
