"""The hp:speculative* keys of one endpoint -> a checked `SpeculativeSpec` (or None: off).

Pure. The rules themselves live in `mlcc.serving.speculative` (algorithms, drafts, counts,
what the selected release runs) and `mlcc.serving.speculative_options` (hp:speculativeOptions).
"""

from __future__ import annotations

import re

from mlcc.config.reader import Reader
from mlcc.config.schema import ENDPOINT_KEYS
from mlcc.serving import schedule_rules, speculative, speculative_options
from mlcc.serving.engines import Engine, EngineRelease
from mlcc.serving.schedule import parse_schedule
from mlcc.serving.speculative import SpeculativeSpec

_SPECULATIVE_KEYS = tuple(k for k in ENDPOINT_KEYS if k.startswith("speculative"))
# A Hub revision: a branch or tag name (git ref rules, simplified) or a commit id.
_REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$")


def hub_revision(reader: Reader, name: str) -> str:
    revision = reader.string(name) or "main"
    if not _REVISION.match(revision) or ".." in revision:
        reader.fail(
            name, f"must be a branch, tag or commit of the Hub repository, got {revision!r}"
        )
    return revision


def read(reader: Reader, engine: Engine, engine_release: EngineRelease) -> SpeculativeSpec | None:
    algorithm = reader.string("speculativeAlgorithm").lower()
    draft = reader.string("speculativeModel") or None
    num_tokens = reader.integer("speculativeNumTokens")
    topk = reader.integer("speculativeEagleTopk", optional=True)
    draft_tokens = reader.integer("speculativeNumDraftTokens", optional=True)
    if not algorithm:
        for key in _SPECULATIVE_KEYS:
            if key != "speculativeAlgorithm" and reader.is_set(key):
                reader.warn(key, "ignored: hp:speculativeAlgorithm is not set, speculation is off")
        return None
    if algorithm not in speculative.ALGORITHMS:
        reader.fail(
            "speculativeAlgorithm",
            f"unknown algorithm {algorithm!r}; valid: "
            f"{', '.join(speculative.ALGORITHMS)} (or remove the key to turn it off)",
        )
        return None
    if draft and not speculative.ALGORITHMS[algorithm].takes_draft:
        reader.warn("speculativeModel", f"ignored: {algorithm} takes no draft model")
        draft = None
    if num_tokens is None:  # already reported as not a number
        num_tokens = speculative.DEFAULT_NUM_TOKENS
    revision = hub_revision(reader, "speculativeModelRevision") if draft else None
    options, problems = speculative_options.parse(
        reader.mapping("speculativeOptions", "option names to whole numbers")
    )
    for key, message in problems:
        reader.fail(key.removeprefix("hp:"), message)
    schedule, problems = parse_schedule(reader.structured("speculativeSchedule"))
    for key, message in problems:
        reader.fail(key.removeprefix("hp:"), message)
    spec = SpeculativeSpec(
        algorithm, draft, num_tokens, topk, draft_tokens, revision, tuple(options.items()), schedule
    )
    checked = speculative.check(spec, engine, engine_release)
    reader.problems.errors += [reader.relay(p) for p in checked.errors]
    reader.problems.warnings += [reader.relay(p) for p in checked.warnings]
    return spec


def check_schedule(
    reader: Reader,
    spec: SpeculativeSpec | None,
    engine_release: EngineRelease,
    engine_args: tuple[tuple[str, str], ...],
    model: str,
) -> None:
    """hp:speculativeSchedule against the endpoint's engine release, algorithm and engine args
    (mlcc.serving.schedule_rules); run once the engine args are read."""
    if spec is None or spec.schedule is None:
        return
    if not speculative.accepts(engine_release, spec.algorithm):
        return  # hp:speculativeAlgorithm is refused already
    errors, warnings = schedule_rules.check(
        spec.schedule,
        algorithm=spec.algorithm,
        num_tokens=spec.num_tokens,
        topk=spec.topk,
        engine=engine_release.engine,
        release=engine_release,
        engine_args=dict(engine_args),
        model=model,
    )
    for key, message in errors:
        reader.fail(key.removeprefix("hp:"), message)
    for key, message in warnings:
        reader.warn(key.removeprefix("hp:"), message)
