"""hp:speculativeSchedule: a load-aware speculation schedule, typed, parsed and rendered.

Pure. The stack key is a list of batch-size ranges in ascending order:

    hp:speculativeSchedule:
      - {from: 1, to: 8, tokens: 5}
      - {from: 9, to: 32, tokens: 2}
      - {from: 33, tokens: 0}        # `to` left out on the last range only: "and above"

`tokens` speculative tokens for batch sizes from..to; 0 turns speculation off there.
`parse_schedule` gives a frozen `SpeculativeSchedule` and every problem at once, each as
(key, message) naming the range and field; it never raises. `engine_env` renders it in the
engine's own form (engine_contract/schedule.py: vLLM's list, SGLang's adaptive config);
`schedule_rules.py` holds what each engine and release ignores or refuses. `mlcc bench
--recommend` builds a `SpeculativeSchedule` and writes `as_config()` to the stack file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from mlcc import engine_contract as contract
from mlcc.engine_contract import schedule as forms
from mlcc.engine_contract.values import json_object, shown_value
from mlcc.serving.engines import Engine

KEY_SCHEDULE = forms.SCHEDULE_KEY
FIELDS = ("from", "to", "tokens")
# hp:speculativeNumTokens' own bound (speculative.MAX_NUM_TOKENS); the rules also refuse
# tokens above the endpoint's hp:speculativeNumTokens.
MAX_TOKENS = 16
MAX_RANGES = 64  # the program's bound: one range per captured batch size is already plenty


@dataclass(frozen=True)
class ScheduleRange:
    """`tokens` speculative tokens for batch sizes first..last; last None: and above."""

    first: int
    last: int | None
    tokens: int

    @property
    def entry(self) -> contract.Range:
        return (self.first, self.last, self.tokens)

    def covers(self, batch_size: int) -> bool:
        return self.first <= batch_size and (self.last is None or batch_size <= self.last)


@dataclass(frozen=True)
class SpeculativeSchedule:
    """Ranges in ascending order, the first at batch size 1, with no gap or overlap."""

    ranges: tuple[ScheduleRange, ...]

    @property
    def entries(self) -> tuple[contract.Range, ...]:
        return tuple(r.entry for r in self.ranges)

    @property
    def most_tokens(self) -> int:
        return max(r.tokens for r in self.ranges)

    @property
    def token_values(self) -> frozenset[int]:
        return frozenset(r.tokens for r in self.ranges)

    def tokens_for(self, batch_size: int) -> int:
        """The tokens both engines use at this batch size (past a closed last range: its
        tokens, as each engine carries the last range forward)."""
        covering = [r for r in self.ranges if r.first <= batch_size]
        return covering[-1].tokens if covering else self.ranges[0].tokens

    def text(self) -> str:
        return forms.schedule_text(self.entries)

    def as_config(self) -> list[dict[str, int]]:
        """The stack-file value: [{from, to, tokens}], `to` left out where the range is open."""
        return [
            {"from": r.first, **({} if r.last is None else {"to": r.last}), "tokens": r.tokens}
            for r in self.ranges
        ]


def parse_schedule(
    value: object, key: str = KEY_SCHEDULE
) -> tuple[SpeculativeSchedule | None, list[tuple[str, str]]]:
    """The schedule of a decoded stack value (None: empty), and (key, message) per problem.

    `key` is how problems name the stack key (an hp:endpoints entry's path, say). The schedule
    is None whenever there is a problem.
    """
    if value is None or value == [] or value == "":
        return None, []
    if not isinstance(value, list):
        example = "[{from: 1, to: 8, tokens: 5}, {from: 9, tokens: 0}]"
        return None, [(key, f"must be a list of ranges, such as {example}")]
    if len(value) > MAX_RANGES:
        return None, [(key, f"has {len(value)} ranges; at most {MAX_RANGES}")]
    problems: list[tuple[str, str]] = []
    ranges = [_range(item, f"{key}[{index}]", problems) for index, item in enumerate(value)]
    typed = [r for r in ranges if r is not None]
    if len(typed) == len(ranges):
        entries = [r.entry for r in typed]
        problems += [(f"{key}[{i}]", message) for i, message in forms.range_problems(entries)]
    if problems:
        return None, problems
    return SpeculativeSchedule(tuple(typed)), []


def _range(item: object, key: str, problems: list[tuple[str, str]]) -> ScheduleRange | None:
    if not isinstance(item, Mapping):
        problems.append(
            (key, "must be a map {from, to, tokens}, such as {from: 1, to: 8, tokens: 5}")
        )
        return None
    found = len(problems)
    for name in item:
        if name not in FIELDS:
            shown = shown_value(str(name))
            problems.append((key, f"unknown field {shown}; fields: from, to (optional), tokens"))
    first = _number(item, "from", key, problems, lowest=1, highest=forms.MAX_BATCH_SIZE)
    last = _number(item, "to", key, problems, lowest=1, highest=forms.MAX_BATCH_SIZE)
    tokens = _number(item, "tokens", key, problems, lowest=0, highest=MAX_TOKENS)
    if len(problems) > found or first is None or tokens is None:
        return None
    return ScheduleRange(first, last, tokens)


def _number(
    item: Mapping[object, object],
    name: str,
    key: str,
    problems: list[tuple[str, str]],
    *,
    lowest: int,
    highest: int,
) -> int | None:
    if name not in item:
        if name != "to":
            problems.append((f"{key}.{name}", "is required"))
        return None
    value = item[name]
    if isinstance(value, bool) or not isinstance(value, int):
        shown = shown_value(value) if isinstance(value, str) else type(value).__name__
        problems.append((f"{key}.{name}", f"must be a whole number, got {shown}"))
        return None
    if not lowest <= value <= highest:
        shown = str(value) if abs(value) < 10**12 else f"a number of {len(str(value))} digits"
        problems.append((f"{key}.{name}", f"must be between {lowest} and {highest}, got {shown}"))
        return None
    return value


# -- rendering -----------------------------------------------------------------------------


def engine_env(
    schedule: SpeculativeSchedule, engine: Engine, env: Mapping[str, str]
) -> dict[str, str]:
    """The engine's speculative variables (`env`, from speculative.speculative_env) with the
    schedule added in the engine's form: vLLM's list inside the --speculative-config JSON,
    SGLang's --speculative-adaptive and its config (written to a file by the wrapper)."""
    if engine is Engine.VLLM:
        variable = contract.env_variable(engine, contract.VLLM_CONFIG_FLAG)
        config = json.loads(env[variable])
        config[contract.VLLM_SCHEDULE_FIELD] = contract.vllm_entries(schedule.entries)
        return {variable: json.dumps(config, separators=(",", ":"))}
    return {
        contract.env_variable(engine, contract.SGLANG_ADAPTIVE_FLAG): "true",
        contract.env_variable(engine, contract.SGLANG_ADAPTIVE_CONFIG_FLAG): (
            contract.sglang_adaptive_json(schedule.entries)
        ),
    }


def ranges_in_env(env: Mapping[str, str], engine: str) -> list[contract.Range] | None:
    """The schedule an engine's container env carries (mlcc plan), or None for none/unreadable."""
    if engine == contract.VLLM:
        text = env.get(contract.env_variable(engine, contract.VLLM_CONFIG_FLAG), "")
        config = json_object(text) if text else None
        raw = (config or {}).get(contract.VLLM_SCHEDULE_FIELD)
        ranges = contract.ranges_from_vllm(raw) if raw is not None else None
    else:
        text = env.get(contract.env_variable(engine, contract.SGLANG_ADAPTIVE_CONFIG_FLAG), "")
        ranges = contract.ranges_from_sglang(json_object(text)) if text else None
    return ranges if isinstance(ranges, list) else None
