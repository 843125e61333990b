"""hp:draftTraining.trainerArgs: extra `speculators train` flags, checked against the release.

Pure. The table is the pinned release's own parser (mlcc/facts/speculators_train.py). Only full
flag names are accepted: the release's parser takes unambiguous abbreviations (argparse's
allow_abbrev), so `--epoch` would be read as `--epochs` there; here the table decides, and an
abbreviation is refused naming the flag it stands for. Values are checked by the option's kind,
type and choices; each accepted entry becomes argv words.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mlcc.engine_contract.values import printable
from mlcc.facts.speculators_train import Option, Release

# Flags the job sets itself (docs/draft-training.md): each from the stack or the job's layout.
OWNED: dict[str, str] = {
    "verifier-name-or-path": "the target is hp:model",
    "data-path": "the job prepares the data in its own folder",
    "save-path": "the job writes checkpoints where it syncs them to hp:draftTraining.output",
    "epochs": "set hp:draftTraining.epochs",
    "total-seq-len": "set hp:draftTraining.seqLength",
    "hidden-states-backend": "the job's vLLM server writes files (the file backend)",
    "hidden-states-path": "the job's vLLM server and trainer share one folder",
    "vllm-endpoint": "the job starts its own vLLM server",
    "on-missing": "set hp:draftTraining.hiddenStates (offline or online)",
    "config": "the job passes every setting as a flag",
    "dump-config": "it only prints the configuration",
    "dry-run": "the job trains; a dry run writes an untrained checkpoint",
    "no-resume-from-checkpoint": "the job resumes from its newest checkpoint after a restart",
    "speculator-type": "the job trains an EAGLE-3 head (eagle3)",
}


@dataclass(frozen=True)
class TrainerArg:
    name: str  # the full flag name without "--"
    value: Any

    def argv(self, option: Option) -> list[str]:
        if option.kind == "store_true":
            return [option.flag] if self.value else []
        if option.kind == "boolean-optional":
            return [option.flag if self.value else f"--no-{option.name}"]
        if option.kind == "list":
            return [option.flag, *(_word(v) for v in self.value)]
        return [option.flag, _word(self.value)]

    def typed(self, option: Option) -> Any:
        """The value as the release's parser reads it: each word through the option's type, so
        `num-layers: "8"` is the number 8 (a boolean stays as given)."""
        if option.kind in ("store_true", "boolean-optional"):
            return self.value
        if option.kind == "list":
            return [_converted(option, v) for v in self.value]
        return _converted(option, self.value)


def typed_args(args: tuple[TrainerArg, ...], release: Release) -> dict[str, Any]:
    """Full flag name -> value as the release's parser reads it (TrainerArg.typed)."""
    return {arg.name: arg.typed(release.options[arg.name]) for arg in args}


def _converted(option: Option, value: object) -> Any:
    """One word through the option's type (int, float, str), as argparse converts it."""
    return {"int": int, "float": float}.get(option.type, str)(value)


def _word(value: object) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def parse_trainer_args(
    raw: object, release: Release
) -> tuple[tuple[TrainerArg, ...], list[tuple[str, str]]]:
    """(the accepted args, [(sub-key, problem)]); sub-key "" is the map itself."""
    if raw is None or raw == {}:
        return (), []
    if not isinstance(raw, Mapping):
        return (), [("", "must be a map of `speculators train` flags to values, e.g. {lr: 5e-4}")]
    accepted: list[TrainerArg] = []
    problems: list[tuple[str, str]] = []
    for key, value in raw.items():
        name = str(key).removeprefix("--")
        shown = printable(str(key))[:60]
        problem = _name_problem(name, release) or _value_problem(release.options[name], value)
        if problem:
            problems.append((shown, problem))
        else:
            accepted.append(TrainerArg(name, value))
    return tuple(accepted), problems


def _name_problem(name: str, release: Release) -> str | None:
    options = release.options
    by_alias = {alias.removeprefix("--"): o for o in options.values() for alias in o.also}
    if name in by_alias:
        return f"write {by_alias[name].name}: false rather than {name}"
    if name not in options:
        full = [n for n in options if n.startswith(name)] if name else []
        if full and release.allow_abbrev:
            return (
                f"is an abbreviation of --{' or --'.join(sorted(full))}; write the full flag "
                f"name (speculators {release.version}'s parser accepts abbreviations, mlcc "
                "does not)"
            )
        guess = difflib.get_close_matches(name, list(options), n=1, cutoff=0.5)
        hint = f"; did you mean {guess[0]}?" if guess else ""
        return f"is not a flag of `speculators train` {release.version}{hint}"
    if name in OWNED:
        return f"is set by the training job: {OWNED[name]}"
    return None


def _value_problem(option: Option, value: object) -> str | None:
    if option.kind in ("store_true", "boolean-optional"):
        return None if isinstance(value, bool) else f"takes true or false, got {value!r}"
    if option.kind == "list":
        if not isinstance(value, list) or not value:
            return f"takes a non-empty list of {option.type} values, got {value!r}"
        problem = next((p for p in (_scalar_problem(option, v) for v in value) if p), None)
        if problem is None and option.name == "target-layer-ids":
            return _layer_ids_problem(value)
        return problem
    return _scalar_problem(option, value)


def _layer_ids_problem(value: list[Any]) -> str | None:
    """speculators refuses, when the job has started, ids below 0 or repeated
    (speculators/models/utils.py resolve_target_layer_ids: "must be distinct and within
    [0, num_layers]"); the upper bound needs the target's config, so only these are checked here."""
    ids = [int(v) for v in value]
    if min(ids) < 0:
        return f"takes layer numbers 0 or more, got {value!r}"
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        return f"takes each layer once, got {', '.join(map(str, repeated))} more than once"
    return None


def _scalar_problem(option: Option, value: object) -> str | None:
    """The parser converts each word with the option's type (int, float, str); a value that
    word would fail for is refused here, so `5e-4` as text is as good as the number."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return f"takes {_a(option.type)} value, got {value!r}"
    try:
        converted: object = _converted(option, value)
    except ValueError:
        return f"takes {_a(option.type)} value, got {value!r}"
    if option.type == "int" and isinstance(value, float):
        return f"takes {_a(option.type)} value, got {value!r}"
    if isinstance(converted, float) and not math.isfinite(converted):
        return f"takes a finite number, got {value!r}"
    if isinstance(converted, str) and (not converted or not converted.isprintable()):
        return "takes a non-empty printable string"
    if option.choices is not None and converted not in option.choices:
        return f"must be one of {', '.join(map(str, option.choices))}, got {value!r}"
    return None


def _a(kind: str) -> str:
    return {"int": "a whole-number", "float": "a number", "str": "a string"}.get(kind, kind)
