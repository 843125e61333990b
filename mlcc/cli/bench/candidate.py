"""`mlcc bench --candidate-url URL | --candidate-endpoint NAME`: a candidate draft head measured in
the sweep beside the current head and their twin, and the flags of the promotion rule
(docs/draft-promotion.md). The rule is `mlcc.bench.promotion`; `mlcc.cli.bench.promote` prints
its decision and writes the head with `--apply`.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mlcc.bench import inputs
from mlcc.bench import promotion as rule
from mlcc.bench.client import access
from mlcc.bench.sweep import levels as sweep_levels
from mlcc.cli.bench import command as bench
from mlcc.serving import s3_draft
from mlcc.serving.engines import Engine
from mlcc.serving.speculative import draft_problem
from mlcc.userfiles.numbers import number

FLAGS = (
    "candidate_url",
    "candidate_endpoint",
    "candidate_model",
    "candidate_revision",
    "served_levels",
    "acceptance_tolerance",
    "promotion_margin",
)
CANDIDATE_PORT = access.LOCAL_PORT + 2


def add_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "candidate draft head (--candidate-url or --candidate-endpoint: a sweep that also "
        "measures it, and the promotion rule; docs/draft-promotion.md)"
    )
    group.add_argument(
        "--candidate-url",
        metavar="BASE_URL",
        help="the OpenAI API of the endpoint serving the candidate head (default with "
        f"--candidate-endpoint: {access.local_url(CANDIDATE_PORT)})",
    )
    group.add_argument(
        "--candidate-endpoint",
        metavar="NAME",
        help="with --stack: the stack's endpoint serving the candidate head (its draft is "
        "what --apply writes)",
    )
    group.add_argument(
        "--candidate-model",
        metavar="HEAD",
        help="the candidate's draft (Hub id or absolute path): what --apply writes as "
        "hp:speculativeModel (default: --candidate-endpoint's)",
    )
    group.add_argument(
        "--candidate-revision",
        metavar="REV",
        help="its Hub revision, written as hp:speculativeModelRevision",
    )
    group.add_argument(
        "--served-levels",
        metavar="C1,C2",
        help="the swept levels the rule judges (default with --stack: those the endpoint's "
        "hp:speculativeSchedule drafts at; else every swept level)",
    )
    group.add_argument(
        "--acceptance-tolerance",
        metavar="P",
        help="acceptance-rate points the candidate may lose, from 0 to 1 "
        f"(default {rule.DEFAULT_ACCEPTANCE_TOLERANCE:g})",
    )
    group.add_argument(
        "--promotion-margin",
        metavar="M",
        help="the share of tokens/s beyond the noise that counts as faster or slower, from 0 "
        f"to 0.5 (default {rule.DEFAULT_MARGIN:g})",
    )


def wanted(args: argparse.Namespace) -> bool:
    return any(getattr(args, name, None) is not None for name in FLAGS)


@dataclass(frozen=True)
class CandidatePlan:
    plan: bench.Plan  # the candidate's sender, target and metrics
    head: str | None  # its draft, what --apply writes
    revision: str | None
    settings: dict[str, str | int]  # the stack keys --apply writes, from --candidate-endpoint
    served: tuple[int, ...]
    served_source: str
    rule: rule.Rule


def plan_of(args: argparse.Namespace, endpoint: bench.Plan, swept: Sequence[int]) -> CandidatePlan:
    """The candidate's side of the sweep; raises bench.UsageError naming the flag."""
    if not (args.candidate_url or args.candidate_endpoint):
        raise bench.UsageError(
            "the promotion flags compare a candidate head: give --candidate-url BASE_URL or "
            "--candidate-endpoint NAME"
        )
    if args.candidate_endpoint and not args.stack:
        raise bench.UsageError("--candidate-endpoint names a stack's endpoint: give --stack too")
    tolerance = _flag(
        "--acceptance-tolerance", args.acceptance_tolerance, 1.0, rule.DEFAULT_ACCEPTANCE_TOLERANCE
    )
    margin = _flag("--promotion-margin", args.promotion_margin, 0.5, rule.DEFAULT_MARGIN)
    config, current = stack_endpoint(args) if args.stack else (None, None)
    if current is not None and current.speculative is None:
        raise bench.UsageError(
            f"stack {args.stack}: {current.name} has no speculation, so no current head to "
            "compare the candidate with (choose the endpoint with --endpoint)"
        )
    settings: dict[str, str | int] = {}
    head, revision = args.candidate_model, args.candidate_revision
    stack_candidate = None
    if args.candidate_endpoint:
        found = _candidate_endpoint(args, config, current)
        stack_candidate, settings = found
        head = head or str(settings.get("speculativeModel") or "") or None
        revision = revision or _text(settings.get("speculativeModelRevision"))
    engine = current.engine if current is not None else Engine.VLLM
    if head is not None and (problem := draft_problem(head, engine)):
        given = args.candidate_model or not args.candidate_endpoint
        where = "--candidate-model" if given else f"{args.candidate_endpoint}'s speculativeModel"
        raise bench.UsageError(f"{where}: {problem}")
    if head is not None and s3_draft.is_s3(head):
        revision = None  # an s3:// head is the prefix as it is: no Hub revision
    url = args.candidate_url or access.local_url(CANDIDATE_PORT)
    try:
        inputs.parse_http_url(url, False)
    except ValueError as error:
        raise bench.UsageError(f"--candidate-url: {error}") from None
    served, source = _served(args, swept, current)
    floor, floor_source = _floor(config, current)
    plan = dataclasses.replace(
        bench.plan_at(endpoint, url, stack_candidate, args.insecure), baseline=None
    )
    return CandidatePlan(
        plan,
        head,
        revision,
        settings,
        served,
        source,
        rule.Rule(tolerance, margin, floor, floor_source),
    )


def _flag(flag: str, text: str | None, most: float, default: float) -> float:
    if text is None:
        return default
    try:
        return number(str(text), "", 0.0, most)
    except ValueError as error:
        raise bench.UsageError(f"{flag}: {error}") from None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def stack_endpoint(args: argparse.Namespace) -> tuple[Any, Any]:
    """The stack's config and the endpoint being benched (read and checked by bench._plan)."""
    try:
        return access.endpoint_config(args.project_dir, args.stack, args.endpoint)
    except ValueError as error:
        raise bench.UsageError(f"stack {args.stack}: {error}") from None


def current_endpoint(args: argparse.Namespace) -> Any:
    """The stack's EndpointConfig of the endpoint benched (bench.UsageError if unreadable)."""
    return stack_endpoint(args)[1]


def _candidate_endpoint(
    args: argparse.Namespace, config: Any, current: Any
) -> tuple[access.StackEndpoint, dict[str, str | int]]:
    name = args.candidate_endpoint
    found = next((e for e in config.endpoints if e.name == name), None)
    names = ", ".join(e.name for e in config.endpoints)
    if found is None:
        raise bench.UsageError(
            f"--candidate-endpoint: stack {args.stack} has no endpoint {name!r}; choose one of: "
            f"{names}"
        )
    if found.name == current.name or found.baseline_of or found.speculative is None:
        raise bench.UsageError(
            f"--candidate-endpoint: {name} is the endpoint benched, a baseline twin or has no "
            "speculation: name the endpoint that serves the candidate head"
        )
    if found.model != current.model:
        raise bench.UsageError(
            f"--candidate-endpoint: {name} serves {found.model}, {current.name} serves "
            f"{current.model}: heads are compared on the same target model"
        )
    command = access.port_forward_command(config.namespace, name, CANDIDATE_PORT)
    print(f"{bench.PROG}: the candidate {name}: {command}")
    spec = found.speculative
    settings: dict[str, str | int] = {
        "speculativeAlgorithm": spec.algorithm,
        "speculativeModel": spec.draft_model or "",
        "speculativeNumTokens": spec.num_tokens,
    }
    if spec.draft_revision:
        settings["speculativeModelRevision"] = spec.draft_revision
    chosen = access.StackEndpoint(config.namespace, name, found.model, str(found.engine), None)
    return chosen, settings


def _served(
    args: argparse.Namespace, swept: Sequence[int], current: Any
) -> tuple[tuple[int, ...], str]:
    if args.served_levels is not None:
        try:
            levels = sweep_levels.parse_levels(args.served_levels)
        except ValueError as error:
            raise bench.UsageError(f"--served-levels: {error}") from None
        unswept = [level for level in levels if level not in swept]
        if unswept:
            raise bench.UsageError(
                f"--served-levels: {unswept[0]} is not a swept level (--concurrency "
                f"{','.join(map(str, swept))})"
            )
        return tuple(levels), "--served-levels"
    schedule = current.speculative.schedule if current and current.speculative else None
    if current is None:
        return tuple(swept), "every swept level (no --stack)"
    if schedule is None:
        return tuple(swept), f"every swept level ({current.name} has no hp:speculativeSchedule)"
    served = tuple(level for level in swept if schedule.tokens_for(level) > 0)
    return served, f"where {current.name}'s hp:speculativeSchedule drafts ({schedule.text()})"


def _floor(config: Any, current: Any) -> tuple[float | None, str]:
    if config is None or current is None or not config.observability.enabled:
        return None, ""
    floor = config.observability.floor_of(current.name)
    return (floor or None), "hp:observability.acceptanceFloor"
