"""What each engine release ignores or refuses in a load-aware schedule (hp:speculativeSchedule).

Pure. An engine that would drop the schedule with only a warning is refused here, at preview:
a user who set a schedule expects it to act. Each message cites the engine source (the released
wheels: vllm==0.27.1 / 0.34.0, sglang==0.5.17 / 0.5.23 on PyPI; docs/speculative-schedule.md):

- vLLM applies the schedule's count in the scheduler (vllm/v1/core/sched/scheduler.py
  `dynamic_sd_lookup`). At 0.27.1 only the V1 model runner's `propose_draft_token_ids`
  (vllm/v1/worker/gpu_model_runner.py) drafts that many tokens, for every method we send but
  dspark, which 0.27.1 always runs on its V2 model runner (vllm/config/vllm.py
  `use_v2_model_runner`); that runner (vllm/v1/worker/gpu/model_runner.py) never reads it. At
  0.34.0 the one model runner (vllm/v1/worker/gpu/model_runner.py) drops every drafted token past
  the count, whatever the method.
- vLLM 0.27.1 switches a FULL CUDA graph mode to PIECEWISE when a schedule is set, on the V1
  model runner (vllm/config/vllm.py `_maybe_override_dynamic_sd_cudagraph_mode`; the default
  mode at -O2/-O3 is FULL_AND_PIECEWISE); 0.34.0 has no such override.
- SGLang captures CUDA graphs at fixed batch sizes and pads a batch up to the next one before it
  picks the schedule's range (adaptive_spec_params.py `_route`); with speculation the sizes are
  1-8, 10-32 by 2, 40-64 by 4, 72-256 by 8, then by 16 (0.5.17 server_args.py, 0.5.23
  arg_groups/cuda_graph_hook.py, `_generate_decode_cuda_graph_batch_sizes`).
"""

from __future__ import annotations

from collections.abc import Mapping

from mlcc import engine_contract as contract
from mlcc.engine_contract import schedule as forms
from mlcc.serving.engines import Engine, EngineRelease
from mlcc.serving.schedule import KEY_SCHEDULE, SpeculativeSchedule

KEY_NUM_TOKENS = "hp:speculativeNumTokens"
_VLLM_V2_ONLY = {
    ("0.27.1", "dspark"): (
        "vLLM 0.27.1 runs dspark on its V2 model runner (vllm/config/vllm.py "
        "use_v2_model_runner), which never reads the schedule's count "
        "(vllm/v1/worker/gpu/model_runner.py): it would draft hp:speculativeNumTokens at every "
        "load; set hp:engineVersion to 0.34.0, or remove hp:speculativeSchedule"
    ),
}
_CUDA_GRAPH_OVERRIDE_RELEASES = frozenset({"0.27.1"})
_SGLANG_OFF = (
    "SGLang turns adaptive speculation off with only a warning "
    "(sglang/srt/speculative/adaptive_spec_params.py adaptive_unsupported_reason)"
)
# Architectures SGLang runs as multi-layer EAGLE when the algorithm is EAGLE (NEXTN included):
# MiMoV2ForCausalLM, MiMoV2FlashForCausalLM, Step3p5ForCausalLM (sglang/srt/arg_groups/
# overrides.py); by name only, so a hint.
_MULTI_LAYER_NAME_HINTS = ("mimo-v2", "step-3.5", "step3p5")


def sglang_capture_sizes(upto: int) -> list[int]:
    """SGLang's CUDA-graph batch sizes with speculation, up to `upto` (see the module doc)."""
    sizes = [*range(1, 9), *range(10, 33, 2), *range(40, 65, 4), *range(72, 257, 8)]
    sizes += range(272, max(upto, 272) + 1, 16)
    return [s for s in sizes if s <= upto]


def static_refusal(algorithm: str, topk: int, engine: Engine, release: EngineRelease) -> str | None:
    """Why the engine release ignores a schedule for this algorithm and top-k, or None.

    Used both by `check` and by speculative_env, which renders a schedule only where it acts.
    """
    definition = contract.ALGORITHMS[algorithm]
    if engine is Engine.VLLM:
        return _VLLM_V2_ONLY.get((release.version, str(definition.vllm_method)))
    name = str(definition.sglang_algorithm)
    if name not in forms.SGLANG_ADAPTIVE_ALGORITHMS:
        return (
            f"{_SGLANG_OFF} for {name} ({algorithm}): it adapts EAGLE and EAGLE3 only (mtp's "
            "NEXTN is turned into EAGLE first, speculative_hook.py "
            "_resolve_speculative_algorithm_alias); use eagle, eagle3 or mtp, or remove "
            "hp:speculativeSchedule"
        )
    if topk != 1:
        return (
            f"{_SGLANG_OFF} for top-k {topk} (only 1); set hp:speculativeEagleTopk to 1 with "
            "hp:speculativeAlgorithm eagle or eagle3, or remove hp:speculativeSchedule"
        )
    return None


def applies(
    schedule: SpeculativeSchedule,
    algorithm: str,
    counts: tuple[int, int],
    engine: Engine,
    release: EngineRelease,
) -> bool:
    """Whether the engine release runs this schedule as given, with (num_tokens, topk): what
    speculative_env renders, for the selected engine and the other alike (the selected one's
    refusals are reported by `check` first)."""
    num_tokens, topk = counts
    if static_refusal(algorithm, topk, engine, release) is not None:
        return False
    if schedule.most_tokens > num_tokens:
        return False
    return engine is Engine.VLLM or num_tokens in schedule.token_values


def check(
    schedule: SpeculativeSchedule,
    *,
    algorithm: str,
    num_tokens: int,
    topk: int,
    engine: Engine,
    release: EngineRelease,
    engine_args: Mapping[str, str],
    model: str = "",
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(errors, warnings) as (key, message) for this endpoint."""
    errors = [
        (
            f"{KEY_SCHEDULE}[{index}].tokens",
            f"{r.tokens} is above {KEY_NUM_TOKENS} ({num_tokens}), the most tokens this "
            "endpoint drafts; vLLM would use that instead without a word "
            "(vllm/v1/spec_decode/dynamic/utils.py build_dynamic_sd_schedule_lookup): "
            f"lower it, or raise {KEY_NUM_TOKENS}",
        )
        for index, r in enumerate(schedule.ranges)
        if r.tokens > num_tokens
    ]
    refusal = static_refusal(algorithm, topk, engine, release)
    if refusal is not None:
        errors.append((KEY_SCHEDULE, refusal))
    warnings = _last_range_warnings(schedule)
    if engine is Engine.VLLM:
        errors += _vllm_errors(engine_args)
        warnings += _vllm_warnings(release, refusal)
    else:
        errors += _sglang_errors(schedule, engine_args, num_tokens, bool(errors))
        warnings += _sglang_warnings(schedule, algorithm, model)
    return errors, warnings


def _vllm_errors(engine_args: Mapping[str, str]) -> list[tuple[str, str]]:
    size = engine_args.get(forms.VLLM_DP_FLAG)
    if size is None or not forms.above_one(size):
        return []
    return [
        (
            KEY_SCHEDULE,
            f"vLLM drops the schedule with only a warning when data parallelism is above 1 "
            f"(hp:engineArgs {forms.VLLM_DP_FLAG} {size}; vllm/config/vllm.py "
            "_maybe_disable_dynamic_sd_for_data_parallel): set it to 1, or remove "
            "hp:speculativeSchedule",
        )
    ]


def _vllm_warnings(release: EngineRelease, refusal: str | None) -> list[tuple[str, str]]:
    if refusal is not None or release.version not in _CUDA_GRAPH_OVERRIDE_RELEASES:
        return []
    return [
        (
            KEY_SCHEDULE,
            f"vLLM {release.version} switches CUDA graphs from FULL (the default "
            "FULL_AND_PIECEWISE) to PIECEWISE when a schedule is set (vllm/config/vllm.py "
            "_maybe_override_dynamic_sd_cudagraph_mode): decode steps may run slower; vLLM "
            "0.34.0 keeps full graphs",
        )
    ]


def _sglang_errors(
    schedule: SpeculativeSchedule,
    engine_args: Mapping[str, str],
    num_tokens: int,
    refused: bool,
) -> list[tuple[str, str]]:
    errors: list[tuple[str, str]] = []
    for flag, what in forms.SGLANG_ADAPTIVE_OFF_FLAGS.items():
        value = engine_args.get(flag)
        if value is not None and forms.flag_is_on(value):
            errors.append(
                (KEY_SCHEDULE, f"{_SGLANG_OFF} with {what} (hp:engineArgs {flag}); remove one")
            )
    attn_dp = engine_args.get(forms.SGLANG_ATTN_DP_FLAG)
    if attn_dp is not None and forms.above_one(attn_dp):
        errors.append(
            (
                KEY_SCHEDULE,
                f"{_SGLANG_OFF} with attention DP (hp:engineArgs attn-dp-size {attn_dp}); "
                "remove one",
            )
        )
    if not refused and num_tokens not in schedule.token_values:
        errors.append(
            (
                KEY_SCHEDULE,
                f"SGLang starts at --speculative-num-steps {num_tokens} ({KEY_NUM_TOKENS}), "
                "which must be one of the schedule's tokens, or it refuses to start "
                "(sglang/srt/arg_groups/speculative_hook.py _init_adaptive_speculative_params): "
                f"set {KEY_NUM_TOKENS} to {schedule.most_tokens}",
            )
        )
    return errors


def _sglang_warnings(
    schedule: SpeculativeSchedule, algorithm: str, model: str
) -> list[tuple[str, str]]:
    warnings: list[tuple[str, str]] = []
    ends = [r.last for r in schedule.ranges[:-1] if r.last is not None]
    sizes = set(sglang_capture_sizes(max(ends, default=1) + 1))
    off_grid = [end for end in ends if end not in sizes]
    if off_grid:
        warnings.append(
            (
                KEY_SCHEDULE,
                f"SGLang pads a batch to its next CUDA-graph size before it picks a range "
                f"(adaptive_spec_params.py _route), so the largest batches of a range ending "
                f"at {', '.join(map(str, off_grid))} get the next range's tokens; end ranges "
                "at 1-8, 10-32 by 2, 40-64 by 4, 72-256 by 8 (its sizes with speculation)",
            )
        )
    lowered = model.lower()
    if algorithm in {"eagle", "mtp"} and any(h in lowered for h in _MULTI_LAYER_NAME_HINTS):
        warnings.append(
            (
                KEY_SCHEDULE,
                f"{model} looks like a MiMo-V2 or Step-3.5 model, which SGLang runs as "
                "multi-layer EAGLE (sglang/srt/arg_groups/overrides.py); "
                f"{_SGLANG_OFF} for it",
            )
        )
    return warnings


def _last_range_warnings(schedule: SpeculativeSchedule) -> list[tuple[str, str]]:
    last = schedule.ranges[-1]
    if last.last is None:
        return []
    index = len(schedule.ranges) - 1
    return [
        (
            f"{KEY_SCHEDULE}[{index}].to",
            f"batch sizes above {last.last} keep {last.tokens} tokens: both engines carry the "
            "last range forward (vLLM build_dynamic_sd_schedule_lookup, SGLang _find_closest_bs); "
            "leave `to` out to say so, or add a range after it",
        )
    ]
