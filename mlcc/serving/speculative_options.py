"""`hp:speculativeOptions`: the method-specific knobs users tune, checked per engine release.

Pure. Each option is one vLLM `SpeculativeConfig` field, with the bounds that release enforces
(vllm/config/speculative.py in the vllm==0.27.1 and 0.34.0 wheels on PyPI):

- `promptLookupMin` / `promptLookupMax` -> `prompt_lookup_min` / `prompt_lookup_max`
  (`Field(default=None, ge=1)`; min <= max after one defaults to the other, else
  "prompt_lookup_min=... must be <= prompt_lookup_max=..."; both default to 5), for `ngram` and
  `ngram-gpu` (0.27.1 `__post_init__`, 0.34.0 `NgramSpeculatorConfig.configure`).
- `suffixMaxTreeDepth` -> `suffix_decoding_max_tree_depth` (default 24, "must be >= 1"),
  `suffixMaxCachedRequests` -> `suffix_decoding_max_cached_requests` (default 10000, "must be
  >= 0"), `suffixCorpusTokens` -> `suffix_decoding_corpus_tokens` (0.34.0 only: default 2**20,
  "must be in [0, 2**31)"; 0.34.0 `SuffixSpeculatorConfig.configure`).

Left out on purpose: `suffix_decoding_max_spec_factor` and `suffix_decoding_min_token_prob`
("Deprecated and has no effect" at 0.34.0, the one release whose image runs suffix), and
0.34.0's `dspark_draft_topk` (Qwen3 DSpark drafts only, draft tensor parallel size 1). SGLang's
DFLASH/DSPARK block sizes follow hp:speculativeNumTokens (see speculative.sglang_env).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from mlcc import engine_contract as contract
from mlcc.engine_contract.values import shown_value

KEY_OPTIONS = "hp:speculativeOptions"


@dataclass(frozen=True)
class Option:
    name: str  # the key in hp:speculativeOptions
    field: str  # the vLLM SpeculativeConfig field
    algorithms: frozenset[str]
    lowest: int
    above_highest: int | None  # exclusive upper bound, when the engine has one


_LOOKUP = frozenset({"ngram", "ngram-gpu"})
_SUFFIX = frozenset({"suffix"})
OPTIONS: Final[dict[str, Option]] = {
    o.name: o
    for o in (
        Option("promptLookupMin", "prompt_lookup_min", _LOOKUP, 1, None),
        Option("promptLookupMax", "prompt_lookup_max", _LOOKUP, 1, None),
        Option("suffixMaxTreeDepth", "suffix_decoding_max_tree_depth", _SUFFIX, 1, None),
        Option("suffixMaxCachedRequests", "suffix_decoding_max_cached_requests", _SUFFIX, 0, None),
        Option("suffixCorpusTokens", "suffix_decoding_corpus_tokens", _SUFFIX, 0, 1 << 31),
    )
}

# The SpeculativeConfig fields of each vLLM release that OPTIONS map to: the release's
# `speculative.parameters` in engine_flags.json (scripts/engine_flags.py reads them from its
# wheel's vllm/config/speculative.py). A release without data has no fields known: refused.
VLLM_OPTION_FIELDS: Final[dict[str, frozenset[str]]] = {
    version: frozenset(o.field for o in OPTIONS.values())
    & frozenset(name for name, _ in table.speculative_parameters)
    for version, table in contract.RELEASE_TABLES[contract.VLLM].items()
}


def _fields_of(version: str) -> frozenset[str] | None:
    return VLLM_OPTION_FIELDS.get(version)


def first_vllm_release_with(field: str) -> str | None:
    having = [v for v, fields in VLLM_OPTION_FIELDS.items() if field in fields]
    return min(having, key=contract.version_key) if having else None


def parse(values: Mapping[str, object]) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """The options as whole numbers, and (key, message) for each one that is not."""
    options: dict[str, int] = {}
    problems: list[tuple[str, str]] = []
    for name, value in values.items():
        key = f"{KEY_OPTIONS}.{name}"
        option = OPTIONS.get(name)
        if option is None:
            shown = shown_value(name)
            problems.append((key, f"unknown option {shown}; valid: {', '.join(OPTIONS)}"))
        elif isinstance(value, bool) or not isinstance(value, int):
            problems.append((key, f"must be a whole number, got {shown_value(str(value))}"))
        elif value < option.lowest:
            problems.append((key, f"must be {option.lowest} or more (vLLM's check), got {value}"))
        elif option.above_highest is not None and value >= option.above_highest:
            problems.append(
                (key, f"must be below {option.above_highest} (vLLM's check), got {value}")
            )
        else:
            options[name] = value
    return options, problems


def problems(
    options: Mapping[str, int], algorithm: str, engine: str, vllm_version: str
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(errors, warnings) as (key, message) for valid numbers on this algorithm and release."""
    errors: list[tuple[str, str]] = []
    warnings: list[tuple[str, str]] = []
    for name in options:
        option = OPTIONS[name]
        key = f"{KEY_OPTIONS}.{name}"
        if algorithm not in option.algorithms:
            warnings.append((key, f"ignored: it applies to {', '.join(sorted(option.algorithms))}"))
        elif engine != contract.VLLM:
            warnings.append((key, "ignored by SGLang; it applies to vLLM"))
        elif _fields_of(vllm_version) is None:
            errors.append((key, _unknown_release(vllm_version)))
        elif option.field not in (_fields_of(vllm_version) or ()):
            first = first_vllm_release_with(option.field)
            errors.append(
                (
                    key,
                    f"vLLM {vllm_version} has no {option.field}; it came in vLLM {first}: "
                    f"set hp:engineVersion to {first} or newer, or remove this option",
                )
            )
    low = options.get("promptLookupMin")
    high = options.get("promptLookupMax")
    if low is not None and high is not None and low > high and algorithm in _LOOKUP:
        errors.append(
            (f"{KEY_OPTIONS}.promptLookupMin", f"must be <= promptLookupMax ({high}), got {low}")
        )
    return errors, warnings


def _unknown_release(version: str) -> str:
    return (
        f"vLLM {version}'s SpeculativeConfig fields are unknown (engine_flags.json has no "
        "table for it: scripts/engine_release.py add vllm VERSION); set hp:engineVersion to "
        f"one of {', '.join(VLLM_OPTION_FIELDS)}, or remove this option"
    )


def vllm_fields(options: Mapping[str, int], algorithm: str) -> dict[str, int]:
    """The SpeculativeConfig fields for this algorithm, in OPTIONS order."""
    return {
        o.field: options[o.name]
        for o in OPTIONS.values()
        if o.name in options and algorithm in o.algorithms
    }
