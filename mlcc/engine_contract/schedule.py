"""A load-aware speculation schedule (hp:speculativeSchedule) in each engine's own form, and the
checks the serve wrapper applies to it before the engine starts.

A schedule is a list of batch-size ranges `(first, last, tokens)`: `tokens` speculative tokens
for batch sizes first..last, `last` None for "and above" (the last range only), 0 = no
speculation there. Facts, from the released wheels (vllm==0.27.1 / 0.34.0, sglang==0.5.17 /
0.5.23 on PyPI; the files named are the same in both releases of each engine unless noted):

- vLLM takes `num_speculative_tokens_per_batch_size`, a list of `[start, end, k]` inside
  `--speculative-config` (vllm/config/speculative.py). `validate_and_normalize_dynamic_sd_schedule`
  (vllm/v1/spec_decode/dynamic/utils.py) runs only when the scheduler is built: every entry three
  integers, start and end positive, start <= end, k >= 0, ranges sorted by start and not
  overlapping, the first starting at 1. `build_dynamic_sd_schedule_lookup` (same file) fills a gap
  and every batch size past the last range with the previous k, and caps each k at
  `num_speculative_tokens` silently. So an open last range is rendered `[first, first, k]`: the
  tail carry-forward gives every batch size above `first` the same k.
- SGLang takes `--speculative-adaptive --speculative-adaptive-config FILE`. `_load_adaptive_config`
  (sglang/srt/speculative/adaptive_spec_params.py) reads a JSON object whose keys made of digits
  are batch-size lower bounds, each with `candidate_steps`, a non-empty list of non-negative ints
  (other keys are global knobs); it needs one such key. `_find_closest_bs` routes a batch size to
  the greatest key at or below it (`bisect_right - 1`, the smallest key below all keys), so keys
  at each range's first batch size mean the same ranges as vLLM's list. A slot with one
  candidate never moves (`AdaptiveStepSlot._recompute_params`). `_init_adaptive_speculative_params`
  (sglang/srt/arg_groups/speculative_hook.py) raises unless `--speculative-num-steps` is one of
  the candidates of all keys (`resolve_candidate_steps_from_config`).

The program writes the SGLang config's JSON as the value of SM_SGLANG_SPECULATIVE_ADAPTIVE_CONFIG;
the wrapper writes it to a file (under $TMPDIR, else /tmp) and passes that file's path.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Final

from .values import shown_value

VLLM_SCHEDULE_FIELD: Final = "num_speculative_tokens_per_batch_size"
SGLANG_ADAPTIVE_FLAG: Final = "speculative-adaptive"
SGLANG_ADAPTIVE_CONFIG_FLAG: Final = "speculative-adaptive-config"
CANDIDATE_STEPS: Final = "candidate_steps"
# The program's own bound on a batch size: far above any batch an engine runs, and small
# enough that every number stays exact and short in messages.
MAX_BATCH_SIZE: Final = 1_000_000
SCHEDULE_KEY: Final = "hp:speculativeSchedule"

# (first, last, tokens); last None: the range has no end ("and above").
Range = tuple[int, int | None, int]


def _whole(value: object) -> int | None:
    """A JSON integer (not a bool) within the program's batch-size bound, else None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= MAX_BATCH_SIZE else None


def ranges_problem(ranges: Sequence[Range]) -> str | None:
    """The first of `range_problems`, or None."""
    if not ranges:
        return "needs at least one range, the first starting at batch size 1"
    problems = range_problems(ranges)
    return f"range {problems[0][0] + 1}: {problems[0][1]}" if problems else None


def range_problems(ranges: Sequence[Range]) -> list[tuple[int, str]]:
    """(index, message) for each range that breaks a rule of the schedule.

    The engines' rules (the first range at 1, sorted, no overlap, start <= end, k >= 0: vLLM's
    `validate_and_normalize_dynamic_sd_schedule`) and the program's: ranges listed in ascending
    order with no gap (each engine would give a gap the previous range's tokens), an open end
    on the last range only.
    """
    problems: list[tuple[int, str]] = []
    expected: int | None = 1  # None: after an open range, where no start is right
    for index, (first, last, tokens) in enumerate(ranges):
        if tokens < 0:
            problems.append((index, "tokens must be 0 or more"))
        if expected is not None and first != expected:
            problems.append((index, _order_problem(first, expected)))
        if last is None and index != len(ranges) - 1:
            problems.append((index, "has no end (`to`), but only the last range may leave it out"))
        elif last is not None and last < first:
            problems.append((index, f"ends ({last}) before it starts ({first})"))
        if last is None:
            expected = None
        elif expected is not None:
            expected = max(expected, last + 1)
    return problems


def _order_problem(first: int, expected: int) -> str:
    if expected == 1:
        return (
            f"starts at {first}: the first range must start at batch size 1 (vLLM refuses others)"
        )
    if first < expected:
        return (
            f"starts at {first}: it overlaps the range before it or is out of order; "
            f"start it at {expected}"
        )
    return (
        f"starts at {first}, leaving batch sizes {expected}-{first - 1} in no range; start it at "
        f"{expected} (the engines would give them the previous range's tokens)"
    )


def range_text(entry: Range) -> str:
    first, last, tokens = entry
    span = f"{first}+" if last is None else (f"{first}" if first == last else f"{first}-{last}")
    return f"{span}: {tokens}"


def schedule_text(ranges: Sequence[Range]) -> str:
    """`1-8: 5, 9-32: 2, 33+: 0`: batch sizes and their speculative tokens."""
    return ", ".join(range_text(entry) for entry in ranges)


# -- each engine's form --------------------------------------------------------------------


def vllm_entries(ranges: Sequence[Range]) -> list[list[int]]:
    """vLLM's `[start, end, k]` list; an open last range ends at its start (vLLM carries the
    last k forward to every larger batch size)."""
    return [[first, first if last is None else last, tokens] for first, last, tokens in ranges]


def sglang_adaptive_config(ranges: Sequence[Range]) -> dict[str, dict[str, list[int]]]:
    """SGLang's adaptive config: each range's first batch size -> its one candidate step."""
    return {str(first): {CANDIDATE_STEPS: [tokens]} for first, _, tokens in ranges}


def sglang_adaptive_json(ranges: Sequence[Range]) -> str:
    return json.dumps(sglang_adaptive_config(ranges), separators=(",", ":"))


# -- reading each engine's form back (the wrapper's checks, mlcc plan) ---------------------


def ranges_from_vllm(value: object) -> list[Range] | str:
    """The ranges a vLLM list means (the last one open), or why vLLM or the program refuses it."""
    example = "[[1, 8, 5], [9, 9, 0]]"
    if not isinstance(value, list) or not value:
        return f"must be a non-empty list of [start, end, tokens] entries, e.g. {example}"
    ranges: list[Range] = []
    for entry in value:
        numbers = [_whole(item) for item in entry] if isinstance(entry, list) else []
        if len(numbers) != 3 or any(n is None for n in numbers):
            return f"each entry must be [start, end, tokens] in whole numbers, e.g. {example}"
        first, last, tokens = (n or 0 for n in numbers)
        ranges.append((first, last, tokens))
    problem = ranges_problem(ranges)
    if problem is not None:
        return problem
    first, _, tokens = ranges[-1]
    return [*ranges[:-1], (first, None, tokens)]


def ranges_from_sglang(value: object) -> list[Range] | str:
    """The ranges an SGLang adaptive config means, each slot's candidates required to be one
    step (the program's form), or why SGLang or the program refuses it."""
    if not isinstance(value, Mapping):
        return 'must be one JSON object, e.g. {"1": {"candidate_steps": [3]}}'
    slots: dict[int, int] = {}
    for key, entry in value.items():
        if not (isinstance(key, str) and key.isascii() and key.isdigit()):
            continue  # SGLang reads keys that are not digits as global knobs
        steps = entry.get(CANDIDATE_STEPS) if isinstance(entry, Mapping) else None
        numbers = [_whole(step) for step in steps] if isinstance(steps, list) else []
        if len(numbers) != 1 or numbers[0] is None or len(key) > 7:
            return f'batch size {shown_value(key)}: needs "{CANDIDATE_STEPS}": [one whole number]'
        slots[int(key)] = numbers[0]
    firsts = sorted(slots)
    ranges: list[Range] = [
        (first, following - 1, slots[first]) for first, following in itertools.pairwise(firsts)
    ]
    if firsts:
        ranges.append((firsts[-1], None, slots[firsts[-1]]))
    problem = ranges_problem(ranges)
    return ranges if problem is None else problem


def sglang_candidate_steps(value: object) -> list[int] | str:
    """The union of every batch-size key's candidate steps, as SGLang's
    `resolve_candidate_steps_from_config` computes it, or what SGLang's `_load_adaptive_config`
    refuses (a key of non-ASCII digits, which would crash its int(), included)."""
    if not isinstance(value, Mapping):
        return 'must be one JSON object, e.g. {"1": {"candidate_steps": [3]}}'
    steps: set[int] = set()
    for key, entry in value.items():
        if not (isinstance(key, str) and key.isdigit()):
            continue
        candidates = entry.get(CANDIDATE_STEPS) if isinstance(entry, Mapping) else None
        numbers = [_whole(step) for step in candidates] if isinstance(candidates, list) else []
        if not key.isascii() or not numbers or any(n is None for n in numbers):
            return (
                f"batch size {shown_value(key)}: SGLang needs ASCII digits and "
                f'"{CANDIDATE_STEPS}": a non-empty list of whole numbers'
            )
        steps.update(n for n in numbers if n is not None)
    if not steps:
        return 'SGLang needs at least one batch-size key, e.g. {"1": {"candidate_steps": [3]}}'
    return sorted(steps)


# SGLang's default candidate steps without a config file (adaptive_spec_params.py
# DEFAULT_ADAPTIVE_CONFIG: 0.5.17 [1, 3, 7] at batch size 1, 0.5.23 [1, 3, 5, 7]; both add 0 at
# larger batch sizes).
SGLANG_DEFAULT_CANDIDATES: Final = {"0.5.17": (0, 1, 3, 7), "0.5.23": (0, 1, 3, 5, 7)}


# -- the wrapper's checks of a container's settings ----------------------------------------

# What makes each engine drop a schedule with only a warning. vLLM: data parallelism above 1
# (vllm/config/vllm.py `_maybe_disable_dynamic_sd_for_data_parallel`). SGLang:
# `adaptive_unsupported_reason` (adaptive_spec_params.py) for attention DP, multi-layer EAGLE,
# two-batch overlap and pdmux (`--attn-dp-size` is 0.5.23's; 0.5.17 reads enable_dp_attention).
SGLANG_ADAPTIVE_ALGORITHMS: Final = frozenset({"EAGLE", "EAGLE3", "NEXTN"})
SGLANG_ADAPTIVE_OFF_FLAGS: Final = {
    "enable-dp-attention": "attention DP",
    "enable-multi-layer-eagle": "multi-layer EAGLE",
    "enable-two-batch-overlap": "two-batch overlap",
    "enable-pdmux": "pdmux",
}
VLLM_DP_FLAG: Final = "data-parallel-size"
SGLANG_ATTN_DP_FLAG: Final = "attn-dp-size"


def flag_is_on(value: str | None) -> bool:
    """A bare flag (None) or any value but false/0 turns a boolean flag on."""
    return value is None or value.strip().lower() not in {"false", "0"}


def above_one(value: str | None) -> bool:
    text = (value or "").strip()
    return text.isascii() and text.isdigit() and len(text) <= 9 and int(text) > 1
