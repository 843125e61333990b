"""The load-aware schedule (hp:speculativeSchedule) of each endpoint, read back from its CR's
container env: one line in the headline of `mlcc plan`, and what changed in `--diff`.

It reads the selected engine's own form (vLLM's list in SM_VLLM_SPECULATIVE_CONFIG, SGLang's
adaptive config in SM_SGLANG_SPECULATIVE_ADAPTIVE_CONFIG) through mlcc.serving.schedule, so the
line shows what the engine is given. Both engines carry the last range forward, so the last
range always reads `N+` (docs/speculative-schedule.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mlcc.engine_contract import schedule_text
from mlcc.plan.graph import CR_TYPE
from mlcc.serving.schedule import ranges_in_env
from mlcc.userfiles.reading import dig

ENGINE_LABEL = "hp.mlcc/engine"
_MODEL_VARIABLES = {"SM_VLLM_MODEL": "vllm", "SM_SGLANG_MODEL_PATH": "sglang"}


def _env(inputs: Any) -> dict[str, str]:
    variables = dig(inputs, "spec", "worker", "environmentVariables")
    items = variables if isinstance(variables, list) else []
    return {
        str(e["name"]): str(e["value"])
        for e in items
        if isinstance(e, Mapping) and "name" in e and "value" in e
    }


def endpoint_schedule(inputs: Any) -> str | None:
    """`1-8: 5, 9-32: 2, 33+: 0` for a CR whose engine is given a schedule, else None."""
    env = _env(inputs)
    engine = dig(inputs, "metadata", "labels", ENGINE_LABEL) or next(
        (name for variable, name in _MODEL_VARIABLES.items() if variable in env), None
    )
    if engine not in set(_MODEL_VARIABLES.values()):
        return None
    ranges = ranges_in_env(env, str(engine))
    return schedule_text(ranges) if ranges else None


def diff_lines(old: Iterable[Mapping[str, Any]], new: Iterable[Mapping[str, Any]]) -> list[str]:
    """One line per endpoint whose schedule differs between two plan.json resource lists."""
    before = {str(r.get("name")): r for r in old if r.get("type") == CR_TYPE}
    after = {str(r.get("name")): r for r in new if r.get("type") == CR_TYPE}
    lines = []
    for name in sorted(before.keys() | after.keys()):
        was = endpoint_schedule(before[name].get("inputs")) if name in before else None
        now = endpoint_schedule(after[name].get("inputs")) if name in after else None
        if was != now:
            lines.append(f"schedule of {name}: {was or 'none'} -> {now or 'none'}")
    return lines
