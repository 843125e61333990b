"""`mlcc bench --recommend [--apply]`: the sweep's schedule, shown range by range, and written as
hp:speculativeSchedule through the stack-file edit of `mlcc optimize --apply`
(`mlcc.cli.optimize.apply.write_stack_keys`: every other byte kept, written in one step)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from mlcc.bench.sweep.schedule import RecommendError, recommend, schedule_problems

KEY = "speculativeSchedule"
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def derive(
    levels: Sequence[Mapping[str, Any]], threshold: float
) -> tuple[dict[str, Any] | None, str | None]:
    try:
        return recommend(levels, threshold), None
    except RecommendError as error:
        return None, str(error)


def flow(entry: Mapping[str, int]) -> str:
    return "{" + ", ".join(f"{key}: {value}" for key, value in entry.items()) + "}"


def lines(recommendation: Mapping[str, Any]) -> list[str]:
    found = [
        f"recommended hp:{KEY} (at most {recommendation['num_speculative_tokens']} tokens, the "
        'endpoint\'s; docs/bench.md, "The recommended schedule"):'
    ]
    found += [f"  - {flow(entry)}" for entry in recommendation["schedule"]]
    found += [f"  {line}" for line in recommendation["lines"]]
    return found


def apply(args: argparse.Namespace, recommendation: Mapping[str, Any]) -> int:
    """Writes the schedule to Pulumi.<stack>.yaml; 0, or 1 with one line saying why not."""
    from mlcc.cli.optimize.apply import write_stack_keys
    from mlcc.cli.optimize.context import Refusal, UsageError
    from mlcc.stackfiles.edit import StackEditError
    from mlcc.userfiles import UserFileError

    path = args.project_dir / f"Pulumi.{args.stack}.yaml"
    try:
        endpoint = _endpoint(args)
        schedule = list(recommendation["schedule"])
        _check(endpoint, schedule, recommendation["num_speculative_tokens"], path.name)
        changes = write_stack_keys(path, {KEY: schedule})
    except (Refusal, UsageError, StackEditError, UserFileError) as error:
        print(f"mlcc bench: error: --apply: {error}", file=sys.stderr)
        return EXIT_FAILED
    print(f"applied the recommended schedule to {path.name}:")
    print("\n".join(f"  {line}" for line in changes))
    print("check it with `mlcc plan`; `pulumi up` renders it for the engine")
    return EXIT_OK


def _endpoint(args: argparse.Namespace) -> Any:
    from mlcc.bench.client import access
    from mlcc.cli.optimize.context import Refusal

    try:
        return access.endpoint_config(args.project_dir, args.stack, args.endpoint)[1]
    except ValueError as error:
        raise Refusal(f"stack {args.stack}: {error}; nothing applied") from None


def _check(endpoint: Any, schedule: list[dict[str, int]], drafted: int, stack_file: str) -> None:
    from mlcc.cli.optimize.context import Refusal

    if endpoint.entry_path:
        items = ", ".join(flow(entry) for entry in schedule)
        raise Refusal(
            f"{endpoint.name} is hp:{endpoint.entry_path}: --apply writes top-level keys only, as "
            f"`mlcc optimize --apply` does; add `{KEY}: [{items}]` to that entry; nothing applied"
        )
    spec = endpoint.speculative
    if spec is None:
        raise Refusal(f"{endpoint.name} has no speculation in {stack_file}; nothing applied")
    if spec.num_tokens != drafted:
        raise Refusal(
            f"the endpoint drafted {drafted} tokens a step in the sweep, but "
            f"hp:speculativeNumTokens is {spec.num_tokens} in {stack_file}: deploy the stack and "
            "sweep again; nothing applied"
        )
    problems = schedule_problems(schedule, spec.num_tokens)
    if problems:
        raise Refusal(f"the schedule breaks hp:{KEY}'s rules ({problems[0]}); nothing applied")
    _check_engine(endpoint, schedule)


def _check_engine(endpoint: Any, schedule: list[dict[str, int]]) -> None:
    """What the endpoint's engine release ignores or refuses of the schedule, as preview would."""
    from mlcc.cli.optimize.context import Refusal
    from mlcc.serving import schedule_rules
    from mlcc.serving.schedule import parse_schedule

    parsed, _ = parse_schedule(schedule)
    if parsed is None:
        return
    spec = endpoint.speculative
    errors, _warnings = schedule_rules.check(
        parsed,
        algorithm=spec.algorithm,
        num_tokens=spec.num_tokens,
        topk=spec.topk,
        engine=endpoint.engine,
        release=endpoint.engine_release,
        engine_args=dict(endpoint.engine_args),
        model=endpoint.model,
    )
    if errors:
        key, message = errors[0]
        raise Refusal(f"{key}: {message}; nothing applied")
