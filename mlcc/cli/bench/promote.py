"""The promotion decision of a sweep with a candidate head (docs/draft-promotion.md): its lines,
and `--apply`, which writes the candidate's draft into Pulumi.<stack>.yaml through the stack-file
edit of `mlcc optimize --apply` (`mlcc.cli.optimize.apply.write_stack_keys`: every other byte
kept, one-step write), or into the endpoint's `hp:endpoints` entry
(`mlcc.stackfiles.entry_edit`), only when the rule promotes it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from mlcc.bench.promotion import Decision
from mlcc.cli.bench import command as bench
from mlcc.cli.bench.candidate import CandidatePlan
from mlcc.serving import s3_draft

EXIT_OK, EXIT_FAILED, EXIT_NOT_PROMOTED = 0, 1, 3
MODEL, REVISION = "speculativeModel", "speculativeModelRevision"


def lines(decision: Decision, candidate: CandidatePlan, current_target: str) -> list[str]:
    rule = decision.rule
    head = candidate.head or "its draft"
    floor = (
        f", floor {rule.acceptance_floor:.1%} ({rule.floor_source})"
        if rule.acceptance_floor is not None
        else ""
    )
    found = [
        f"promotion: candidate {head} at {candidate.plan.target} against the current head at "
        f"{current_target}; levels judged: {candidate.served_source}; acceptance tolerance "
        f"{rule.acceptance_tolerance * 100:.1f} points{floor}, margin {rule.margin:.0%} beyond "
        "the 95 % interval (candidate vs current):"
    ]
    found += [f"  {verdict.line()}" for verdict in decision.levels]
    if decision.not_served:
        found.append(
            "  not judged (the stack does not speculate there): concurrency "
            + ", ".join(map(str, decision.not_served))
        )
    if decision.promote:
        found.append(f"PROMOTE: the candidate wins at {_served(decision)}")
    else:
        found.append(f"NOT PROMOTED: the candidate loses ({len(decision.reasons)} reason(s)):")
        found += [f"  - {reason}" for reason in decision.reasons]
    if decision.below_twin:
        slower = ", ".join(
            f"{v.concurrency} ({v.over_twin[1].text()})" for v in decision.below_twin
        )
        found.append(
            f"note: at concurrency {slower} the candidate is slower than the speculation-off "
            "twin: a load-aware schedule (hp:speculativeSchedule, recommended by mlcc bench) "
            "would stop speculating there"
        )
    return found


def _served(decision: Decision) -> str:
    return "concurrency " + ", ".join(map(str, decision.served))


def apply(args: argparse.Namespace, decision: Decision, candidate: CandidatePlan) -> int:
    """Writes the head when it won; 0, 3 when it lost (nothing written) or 1 when it cannot."""
    path = args.project_dir / f"Pulumi.{args.stack}.yaml"
    if not decision.promote:
        print(f"--apply: the candidate was not promoted; {path.name} is unchanged")
        return EXIT_NOT_PROMOTED
    from mlcc.cli.optimize.apply import write_stack_keys
    from mlcc.cli.optimize.context import Refusal, UsageError
    from mlcc.stackfiles.edit import StackEditError
    from mlcc.userfiles import UserFileError

    try:
        values, entry = _values(args, candidate, path.name)
        changes = write_stack_keys(path, values) if entry is None else _write(path, entry, values)
    except (Refusal, UsageError, bench.UsageError, StackEditError, UserFileError) as error:
        print(f"mlcc bench: error: --apply: {error}", file=sys.stderr)
        return EXIT_FAILED
    print(f"promoted the candidate head into {path.name}:")
    print("\n".join(f"  {line}" for line in changes))
    print("check it with `mlcc plan`; `pulumi up` deploys it")
    if args.candidate_endpoint:
        print(
            f"the candidate endpoint {args.candidate_endpoint} is still in {path.name}: once the "
            "promoted head serves, remove its hp:endpoints entry (`pulumi up` then deletes it)"
        )
    return EXIT_OK


def _write(path: Path, entry: int, values: dict[str, Any]) -> list[str]:
    """Sets the fields of hp:endpoints[entry], keeping every other byte, in one step."""
    from mlcc.cli.optimize.apply import write_stack_edit
    from mlcc.stackfiles.entry_edit import set_entry_keys

    return write_stack_edit(path, lambda text: set_entry_keys(text, entry, values))


def _values(
    args: argparse.Namespace, candidate: CandidatePlan, stack_file: str
) -> tuple[dict[str, Any], int | None]:
    """The keys to write: the candidate's draft and revision, and (from --candidate-endpoint)
    its algorithm and token count where they differ from the current endpoint's; and the
    index of the endpoint's hp:endpoints entry (None: the top-level keys)."""
    from mlcc.cli.bench.candidate import current_endpoint
    from mlcc.cli.optimize.context import Refusal

    if candidate.head is None:
        raise Refusal(
            "the candidate's draft is not known: give --candidate-model HEAD (or "
            "--candidate-endpoint NAME); nothing applied"
        )
    endpoint = current_endpoint(args)
    spec = endpoint.speculative
    if spec is None:
        raise Refusal(f"{endpoint.name} has no speculation in {stack_file}; nothing applied")
    values: dict[str, Any] = {MODEL: candidate.head}
    hub_head = not s3_draft.is_s3(candidate.head)  # an s3:// head has no Hub revision
    if hub_head and (candidate.revision is not None or (spec.draft_revision or "main") != "main"):
        values[REVISION] = candidate.revision or "main"
    current = {"speculativeAlgorithm": spec.algorithm, "speculativeNumTokens": spec.num_tokens}
    values |= {key: value for key, value in candidate.settings.items() if key in current}
    values = {key: value for key, value in values.items() if current.get(key) != value}
    if not endpoint.entry_path:
        return values, None
    return values, int(endpoint.entry_path.removeprefix("endpoints[").removesuffix("]"))
