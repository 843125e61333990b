"""Speculative validation of a container environment: what each engine would reject or
mishandle, as one `EnvProblem` naming the variable to change."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from .env import EnvProblem, Setting
from .names import (
    PINNED_VERSIONS,
    SGLANG,
    SGLANG_ALGORITHM_FLAG,
    SGLANG_ALGORITHMS_NEEDING_DRAFT,
    SGLANG_DRAFT_FLAG,
    SGLANG_EAGLE_FAMILY,
    SGLANG_TRIPLE,
    VLLM,
    VLLM_CONFIG_FLAG,
    VLLM_METHODS_NEEDING_MODEL,
    VLLM_METHODS_NEEDING_TOKENS,
    VLLM_SPEC_SHORTHANDS,
    accepted_names,
    env_variable,
    suggested_names,
)
from .schedule import (
    SGLANG_ADAPTIVE_ALGORITHMS,
    SGLANG_ADAPTIVE_CONFIG_FLAG,
    SGLANG_ADAPTIVE_FLAG,
    SGLANG_ADAPTIVE_OFF_FLAGS,
    SGLANG_ATTN_DP_FLAG,
    SGLANG_DEFAULT_CANDIDATES,
    VLLM_DP_FLAG,
    VLLM_SCHEDULE_FIELD,
    above_one,
    flag_is_on,
    ranges_from_sglang,
    ranges_from_vllm,
    sglang_candidate_steps,
)
from .values import count_problem, draft_model_problem, json_object, parse_count, shown_value

# custom_class takes a dotted Python path as `model`, not a checkpoint.
_VLLM_MODEL_IS_CLASS: Final = frozenset({"custom_class"})
# SGLang's DFLASH also fails without a draft ("DFLASH speculative decoding requires setting
# --speculative-draft-model-path"; sglang/srt/arg_groups/speculative_hook.py, 0.5.17 and 0.5.23).
_SGLANG_NEEDING_DRAFT: Final = SGLANG_ALGORITHMS_NEEDING_DRAFT | {"DFLASH"}
_DSPARK_BLOCK_FLAG: Final = "speculative-dspark-block-size"
# vLLM SpeculativeConfig integer fields and the lowest value each release accepts
# (vllm/config/speculative.py: prompt_lookup_* `Field(ge=1)`; suffix_decoding_* checks in
# `_validate_suffix_decoding` (0.27.1) and `SuffixSpeculatorConfig.configure` (0.34.0)).
_VLLM_INTEGER_FLOORS: Final = {
    "prompt_lookup_min": 1,
    "prompt_lookup_max": 1,
    "suffix_decoding_max_tree_depth": 1,
    "suffix_decoding_max_cached_requests": 0,
    "suffix_decoding_corpus_tokens": 0,
}


def check_speculative(engine: str, settings: Mapping[str, Setting], version: str | None) -> None:
    """Raise EnvProblem for a speculative setting the engine would reject or mishandle.

    `settings` maps canonical flags to their values; `version` is the image's engine release
    (None: the pinned one), whose generated names are checked. An unsupported version (the
    wrapper refuses it first) skips only the name check.
    """
    if engine == VLLM:
        _check_vllm(settings, version)
    else:
        _check_sglang(settings, version)


def _vllm_config_object(setting: Setting) -> dict[str, object]:
    example = '{"method":"eagle3","model":"org/draft","num_speculative_tokens":3}'
    parsed = json_object(setting.value or "")
    if parsed is None:
        raise EnvProblem(setting.source, f"must be one JSON object (no NaN), e.g. {example}")
    return parsed


def _vllm_fields(settings: Mapping[str, Setting]) -> dict[str, tuple[object, str]]:
    """SpeculativeConfig fields from the JSON flag, the dotted and the shorthand flags."""
    fields: dict[str, tuple[object, str]] = {}
    config = settings.get(VLLM_CONFIG_FLAG)
    if config is not None:
        fields.update({k: (v, config.source) for k, v in _vllm_config_object(config).items()})
    for key, setting in settings.items():
        if key.startswith(f"{VLLM_CONFIG_FLAG}."):
            field = key.removeprefix(f"{VLLM_CONFIG_FLAG}.").replace("-", "_")
        elif key in VLLM_SPEC_SHORTHANDS:
            field = VLLM_SPEC_SHORTHANDS[key]
        else:
            continue
        if field in fields:
            raise EnvProblem(
                setting.source, f"{field} is also set by {fields[field][1]}; set it once"
            )
        fields[field] = (setting.value, setting.source)
    return fields


def _check_vllm(settings: Mapping[str, Setting], version: str | None) -> None:
    fields = _vllm_fields(settings)
    if not fields and VLLM_CONFIG_FLAG not in settings:
        return
    config = settings.get(VLLM_CONFIG_FLAG)
    first_source = config.source if config is not None else next(iter(fields.values()))[1]
    method, method_source = fields.get("method", (None, first_source))
    names = accepted_names(VLLM, version)
    accepted = ", ".join(suggested_names(VLLM, version if names is not None else None))
    if not isinstance(method, str) or not method.strip():
        raise EnvProblem(method_source, f'set "method" explicitly (one of {accepted})')
    method = method.strip().lower()
    if names is not None and method not in names:
        hint = ' (vLLM has no eagle2; use "eagle")' if method == "eagle2" else ""
        shown = shown_value(method)
        raise EnvProblem(method_source, f"unknown method {shown}{hint}; use one of {accepted}")
    _check_vllm_model(method, fields, method_source)
    _check_vllm_tokens(method, fields, method_source)
    _check_vllm_integers(fields)
    _check_vllm_schedule(fields, settings)


def _whole_number(value: object) -> int | None:
    """A JSON integer, or ASCII digits from a dotted flag; None otherwise (0 included)."""
    if isinstance(value, str) and value.strip() == "0":
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and value == 0:
        return 0
    return parse_count(value)


def _check_vllm_integers(fields: Mapping[str, tuple[object, str]]) -> None:
    numbers: dict[str, int] = {}
    for field, floor in _VLLM_INTEGER_FLOORS.items():
        if field not in fields:
            continue
        value, source = fields[field]
        number = _whole_number(value)
        if number is None or number < floor:
            raise EnvProblem(source, f'"{field}" must be a whole number of at least {floor}')
        numbers[field] = number
    low, high = numbers.get("prompt_lookup_min"), numbers.get("prompt_lookup_max")
    if low is not None and high is not None and low > high:
        source = fields["prompt_lookup_min"][1]
        raise EnvProblem(source, '"prompt_lookup_min" must be <= "prompt_lookup_max"')


def _check_vllm_model(method: str, fields: Mapping[str, tuple[object, str]], source: str) -> None:
    model, model_source = fields.get("model", (None, source))
    if model is None or model == "":
        if method in VLLM_METHODS_NEEDING_MODEL:
            raise EnvProblem(
                model_source, f'method "{method}" needs "model": a Hub id or a local path'
            )
        return
    if not isinstance(model, str):
        raise EnvProblem(model_source, '"model" must be a string: a Hub id or a local path')
    if method in _VLLM_MODEL_IS_CLASS:
        return
    problem = draft_model_problem(model)
    if problem is not None:
        raise EnvProblem(model_source, f'"model" {problem}')


def _check_vllm_tokens(method: str, fields: Mapping[str, tuple[object, str]], source: str) -> None:
    if "num_speculative_tokens" not in fields:
        if method in VLLM_METHODS_NEEDING_TOKENS:
            raise EnvProblem(source, f'method "{method}" needs "num_speculative_tokens" (e.g. 3)')
        return
    value, tokens_source = fields["num_speculative_tokens"]
    problem = count_problem(value)
    if problem is not None:
        raise EnvProblem(tokens_source, f'"num_speculative_tokens" {problem}')


def _check_sglang(settings: Mapping[str, Setting], version: str | None) -> None:
    algorithm = settings.get(SGLANG_ALGORITHM_FLAG)
    if algorithm is None or not (algorithm.value or "").strip():
        _refuse_speculative_without_algorithm(settings)
        return
    name = (algorithm.value or "").strip().upper()
    names = accepted_names(SGLANG, version)
    if names is not None and name not in names:
        accepted = ", ".join(suggested_names(SGLANG, version))
        hints = {"MTP": ' (SGLang calls it "NEXTN")', "EAGLE2": ' (use "EAGLE" with topk > 1)'}
        raise EnvProblem(
            algorithm.source,
            f"unknown algorithm {shown_value(name)}{hints.get(name, '')}; use one of {accepted}",
        )
    _check_sglang_draft(name, settings)
    _check_sglang_triple(name, settings)
    _check_sglang_dspark_block(name, settings)
    _check_sglang_adaptive(name, settings, version)


def _check_sglang_dspark_block(algorithm: str, settings: Mapping[str, Setting]) -> None:
    """SGLang: the DSPARK verify window is block + 1 ("DSpark speculative_num_draft_tokens must
    equal gamma + 1"), and the block size is DSPARK's alone."""
    block = settings.get(_DSPARK_BLOCK_FLAG)
    if block is None:
        return
    if algorithm != "DSPARK":
        raise EnvProblem(block.source, "applies to DSPARK only; unset it")
    problem = count_problem(block.value)
    if problem is not None:
        raise EnvProblem(block.source, problem)
    tokens = settings.get("speculative-num-draft-tokens")
    gamma = parse_count(block.value) or 0
    if tokens is not None and parse_count(tokens.value) != gamma + 1:
        raise EnvProblem(tokens.source, f"DSPARK verifies block + 1 = {gamma + 1} tokens; set that")


def _refuse_speculative_without_algorithm(settings: Mapping[str, Setting]) -> None:
    for key in (SGLANG_DRAFT_FLAG, *SGLANG_TRIPLE):
        if key in settings:
            raise EnvProblem(
                settings[key].source,
                f"has no effect without {env_variable(SGLANG, SGLANG_ALGORITHM_FLAG)}; "
                "set that too or unset it",
            )


def _check_sglang_draft(algorithm: str, settings: Mapping[str, Setting]) -> None:
    draft = settings.get(SGLANG_DRAFT_FLAG)
    if draft is None or not (draft.value or "").strip():
        if algorithm in _SGLANG_NEEDING_DRAFT:
            raise EnvProblem(
                draft.source if draft is not None else env_variable(SGLANG, SGLANG_DRAFT_FLAG),
                f"{algorithm} needs a draft model (a Hub id or a local path); without one "
                "SGLang loads the target as its own draft and crashes",
            )
        return
    problem = draft_model_problem(draft.value or "")
    if problem is not None:
        raise EnvProblem(draft.source, problem)


def _check_sglang_triple(algorithm: str, settings: Mapping[str, Setting]) -> None:
    """steps / topk / draft tokens: all three or none (a partial triple crashes SGLang)."""
    given = [key for key in SGLANG_TRIPLE if key in settings]
    if not given:
        return
    variables = ", ".join(env_variable(SGLANG, key) for key in SGLANG_TRIPLE)
    if len(given) != len(SGLANG_TRIPLE):
        missing = next(key for key in SGLANG_TRIPLE if key not in settings)
        raise EnvProblem(
            env_variable(SGLANG, missing), f"missing; set all three of {variables}, or none"
        )
    counts = {}
    for key in SGLANG_TRIPLE:
        setting = settings[key]
        problem = count_problem(setting.value)
        if problem is not None:
            raise EnvProblem(setting.source, problem)
        counts[key] = parse_count(setting.value)
    steps, topk, draft_tokens = (counts[key] for key in SGLANG_TRIPLE)
    chain = algorithm in SGLANG_EAGLE_FAMILY and topk == 1
    if chain and steps is not None and draft_tokens != steps + 1:
        source = settings["speculative-num-draft-tokens"].source
        raise EnvProblem(source, f"with top-k 1 SGLang uses steps + 1 = {steps + 1}; set that")


def _check_vllm_schedule(
    fields: Mapping[str, tuple[object, str]], settings: Mapping[str, Setting]
) -> None:
    """num_speculative_tokens_per_batch_size as vLLM validates it at scheduler build, no k
    above num_speculative_tokens (vLLM caps it silently), no data parallelism (vLLM drops the
    schedule with a warning): engine_contract/schedule.py has the sources."""
    if VLLM_SCHEDULE_FIELD not in fields:
        return
    value, source = fields[VLLM_SCHEDULE_FIELD]
    ranges = ranges_from_vllm(value)
    field = f'"{VLLM_SCHEDULE_FIELD}"'
    if isinstance(ranges, str):
        raise EnvProblem(source, f"{field} {ranges}")
    most = parse_count(fields.get("num_speculative_tokens", (None, ""))[0])
    highest = max(tokens for _, _, tokens in ranges)
    if most is not None and highest > most:
        raise EnvProblem(
            source,
            f"{field} asks for {highest} tokens, above num_speculative_tokens {most}, "
            "which vLLM would use instead without a word",
        )
    dp = settings.get(VLLM_DP_FLAG)
    if dp is not None and above_one(dp.value):
        raise EnvProblem(
            dp.source,
            f"vLLM drops {field} with only a warning when data parallelism is above 1; "
            "use 1, or remove the schedule",
        )


def _check_sglang_adaptive(
    algorithm: str, settings: Mapping[str, Setting], version: str | None
) -> None:
    """--speculative-adaptive: what SGLang would turn off with only a warning
    (adaptive_unsupported_reason) or refuse at start (the steps among the candidates)."""
    adaptive = settings.get(SGLANG_ADAPTIVE_FLAG)
    config = settings.get(SGLANG_ADAPTIVE_CONFIG_FLAG)
    if adaptive is None or not flag_is_on(adaptive.value):
        if config is not None:
            flag = env_variable(SGLANG, SGLANG_ADAPTIVE_FLAG)
            raise EnvProblem(config.source, f"has no effect without {flag}=true; set both")
        return
    off = "SGLang would turn adaptive speculation off with only a warning"
    if algorithm not in SGLANG_ADAPTIVE_ALGORITHMS:
        raise EnvProblem(adaptive.source, f"{off} for {algorithm} (EAGLE, EAGLE3, NEXTN only)")
    topk = settings.get("speculative-eagle-topk")
    if topk is not None and parse_count(topk.value) != 1:
        raise EnvProblem(topk.source, f"{off} for a top-k other than 1; set 1")
    for flag, what in SGLANG_ADAPTIVE_OFF_FLAGS.items():
        setting = settings.get(flag)
        if setting is not None and flag_is_on(setting.value):
            raise EnvProblem(setting.source, f"{off} with {what}; unset it")
    attn_dp = settings.get(SGLANG_ATTN_DP_FLAG)
    if attn_dp is not None and above_one(attn_dp.value):
        raise EnvProblem(attn_dp.source, f"{off} with attention DP; unset it")
    _check_sglang_candidates(settings, config, version)


def _check_sglang_candidates(
    settings: Mapping[str, Setting], config: Setting | None, version: str | None
) -> None:
    text = (config.value or "").strip() if config is not None else ""
    if config is not None and not text.startswith("{"):
        return  # a file in the image: SGLang reads it
    if config is not None:
        steps = sglang_candidate_steps(json_object(text))
        if isinstance(steps, str):
            raise EnvProblem(config.source, steps)
        ranges = ranges_from_sglang(json_object(text))
        if isinstance(ranges, str):
            raise EnvProblem(config.source, ranges)
        candidates = tuple(steps)
    else:
        pinned = PINNED_VERSIONS[SGLANG]
        candidates = SGLANG_DEFAULT_CANDIDATES.get(version or pinned, ())
    given = settings.get(SGLANG_TRIPLE[0])
    if given is not None and candidates and parse_count(given.value) not in candidates:
        shown = ", ".join(map(str, candidates))
        raise EnvProblem(
            given.source,
            f"SGLang refuses to start when the step count is not among the adaptive "
            f"candidate steps ({shown}); use one of them",
        )
