"""Speculative validation of a container environment: what each engine would reject or
mishandle, as one `EnvProblem` naming the variable to change."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from .env import EnvProblem, Setting
from .names import (
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
from .values import count_problem, draft_model_problem, json_object, parse_count, shown_value

# custom_class takes a dotted Python path as `model`, not a checkpoint.
_VLLM_MODEL_IS_CLASS: Final = frozenset({"custom_class"})


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
        if algorithm in SGLANG_ALGORITHMS_NEEDING_DRAFT:
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
