"""`mlcc optimize`: SageMaker AI recommendation jobs outside Pulumi, and applying their result.

    mlcc optimize --stack dev --goal latency [--dataset s3://...] [--wait]   start a job
    mlcc optimize --wait --job JOB [--stack dev]                             wait for a job
    mlcc optimize --list [--stack dev]                                       jobs and status
    mlcc optimize --show JOB                                                 its recommendations
    mlcc optimize --apply top|JOB --stack dev                                write hp:speculative*

Settings come from the stack's `hp:optimize` object; flags override them. Jobs carry their
stack in the tag `mlcc:stack`; `--list --stack` and `--apply top` match that tag exactly.
`--apply top` takes the newest completed job of the stack. Progress goes to stderr, results to
stdout. AWS_ENDPOINT_URL_SAGEMAKER (or AWS_ENDPOINT_URL) points the calls at another endpoint.
Exit codes: 0 ok (also when stdout is closed early, as by `| head`), 1 a refusal or finding
(bad settings, failed job, nothing usable to apply, an AWS error or unexpected reply), 2 a
usage error, 130 interrupted (a started job keeps running).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from itertools import islice
from typing import TYPE_CHECKING, Any, TextIO

from mlcc.cli.optimize.apply import apply_result
from mlcc.cli.optimize.context import (
    INTERRUPTED,
    OK,
    REFUSED,
    USAGE,
    Deps,
    Refusal,
    UsageError,
    boto3_client,
    config_value,
    describe_or_refuse,
    one_line,
    sagemaker_client,
    stack_config,
    stack_engine,
)
from mlcc.cli.optimize.output import print_job_list, print_job_report
from mlcc.config.optimize import (
    DEFAULT_TIMEOUT_MINUTES,
    Goal,
    OptimizeSettings,
    framework_for_engine,
    parse_optimize_settings,
    validate_timeout,
)
from mlcc.engine_contract.values import printable
from mlcc.recommendation.names import job_name_problem, job_names, stack_name_problem
from mlcc.recommendation.parsing import JobStatus, status_note
from mlcc.recommendation.polling import JobTimedOut, wait_for_job
from mlcc.stackfiles.edit import StackEditError

if TYPE_CHECKING:
    from mypy_boto3_sagemaker.client import SageMakerClient
else:
    SageMakerClient = Any


LIST_LIMIT = 50  # --list shows the newest jobs


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
    parser.add_argument("--goal", choices=[g.value for g in Goal])
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
    try:
        code = execute(args, Deps(client_factory=boto3_client))
        sys.stdout.flush()  # a closed pipe shows here, where it can still be handled
        return code
    except BrokenPipeError:
        # The reader went away (`| head`): drop what is left and end quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return OK


def execute(args: argparse.Namespace, deps: Deps) -> int:
    from botocore.exceptions import BotoCoreError, ClientError
    from botocore.parsers import ResponseParserError

    from mlcc.recommendation import api

    try:
        return _dispatch(args, deps)
    except UsageError as error:
        print(f"mlcc optimize: error: {printable(str(error))}", file=deps.err)
        return USAGE
    except (Refusal, api.UnexpectedReply, StackEditError) as error:
        print(
            "\n".join(f"mlcc optimize: {printable(line)}" for line in str(error).splitlines()),
            file=deps.err,
        )
        return REFUSED
    except (ClientError, BotoCoreError, ResponseParserError) as error:
        print(f"mlcc optimize: AWS error: {printable(one_line(error))}", file=deps.err)
        return REFUSED
    except KeyboardInterrupt:
        print("\nmlcc optimize: interrupted", file=deps.err)
        return INTERRUPTED


def _dispatch(args: argparse.Namespace, deps: Deps) -> int:
    if args.stack and (problem := stack_name_problem(args.stack)):
        raise UsageError(f"--stack: {problem}")
    named = {"--show": args.show, "--job": args.job, "--apply": args.apply}
    for flag, name in named.items():
        if name and name != "top" and (problem := job_name_problem(name)):
            raise UsageError(f"{flag}: {problem}")
    if args.list:
        return _list(args, deps)
    if args.show:
        return _show(args, deps)
    if args.apply:
        return apply_result(args, deps)
    if args.job:
        return _wait_and_show(
            sagemaker_client(args, deps), args.job, _wait_minutes(args, deps), deps
        )
    return _start(args, deps)


# -- start / wait --------------------------------------------------------------------------------


def _settings(args: argparse.Namespace, config: Mapping[str, Any]) -> OptimizeSettings:
    stored = config_value(config, "optimize") or {}
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
    settings, errors = parse_optimize_settings(raw)
    if errors or settings is None:
        raise Refusal("invalid settings:\n" + "\n".join(e.render() for e in errors))
    return settings


def _start(args: argparse.Namespace, deps: Deps) -> int:
    from mlcc.recommendation import api

    if not args.stack:
        raise UsageError("--stack is required to start a job (or use --list/--show/--job)")
    config = stack_config(deps, args.stack)
    settings = _settings(args, config)
    engine = stack_engine(config)
    _, note = framework_for_engine(engine)
    if note:
        print(f"note: {note}", file=deps.err)
    salt = f"{deps.now().isoformat()}|{json.dumps(settings.to_mapping(), sort_keys=True)}"
    names = job_names(args.stack, settings.goal.value, salt)
    client = sagemaker_client(args, deps)
    api.start_job(client, names, settings, engine, args.stack)
    print(f"started {names.job} (goal {settings.goal.value} -> {settings.metric})", file=deps.out)
    _print_hints(names.job, args.stack, deps.err)
    if not args.wait:
        return 0
    return _wait_and_show(client, names.job, settings.timeout_minutes, deps)


def _wait_minutes(args: argparse.Namespace, deps: Deps) -> int:
    if args.timeout_minutes is not None:
        minutes, problem = validate_timeout(args.timeout_minutes)
        if minutes is None:
            raise UsageError(f"--timeout-minutes: {problem}")
        return minutes
    if args.stack:
        stored = config_value(stack_config(deps, args.stack), "optimize")
        if isinstance(stored, Mapping):
            minutes, _ = validate_timeout(stored.get("timeoutMinutes"))
            if minutes:
                return minutes
    return DEFAULT_TIMEOUT_MINUTES


def _print_hints(job: str, stack: str | None, err: TextIO) -> None:
    target = f" --stack {stack}" if stack else " --stack <stack>"
    print(f"  wait:    mlcc optimize --wait --job {job}", file=err)
    print(f"  results: mlcc optimize --show {job}", file=err)
    print(f"  apply:   mlcc optimize --apply {job}{target}", file=err)


def _wait_and_show(client: SageMakerClient, job: str, minutes: int, deps: Deps) -> int:
    from mlcc.recommendation import api

    try:
        response = wait_for_job(
            job,
            lambda: describe_or_refuse(client, job),
            timeout_seconds=minutes * 60,
            clock=deps.clock,
            sleep=deps.sleep,
            stop=lambda: api.stop_job(client, job),
            backoff=deps.backoff,
            on_progress=lambda progress: print(
                printable(progress.render()), file=deps.err, flush=True
            ),
        )
    except KeyboardInterrupt:
        print(f"\ninterrupted: {job} keeps running on SageMaker.", file=deps.err)
        _print_hints(job, None, deps.err)
        return INTERRUPTED
    except JobTimedOut as error:
        raise Refusal(str(error)) from None
    return _report(response, deps, as_json=False)


# -- list / show ---------------------------------------------------------------------------------


def _list(args: argparse.Namespace, deps: Deps) -> int:
    from mlcc.recommendation import api

    client = sagemaker_client(args, deps)
    if args.stack:
        found = list(islice(api.stack_jobs(client, args.stack), LIST_LIMIT))
    else:
        found = api.list_jobs(client, limit=LIST_LIMIT)
    print_job_list(found, deps.out, as_json=args.json)
    return OK


def _show(args: argparse.Namespace, deps: Deps) -> int:
    response = describe_or_refuse(sagemaker_client(args, deps), args.show)
    return _report(response, deps, as_json=args.json)


def _report(response: Mapping[str, Any], deps: Deps, *, as_json: bool) -> int:
    status = print_job_report(response, deps.out, as_json=as_json)
    failed = status in (JobStatus.FAILED, JobStatus.STOPPED)
    return REFUSED if failed or status_note(status) else OK
