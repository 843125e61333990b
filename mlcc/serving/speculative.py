"""Speculative decoding: the algorithm table (data) and its translation to engine settings.

Pure: no Pulumi, no I/O. The table itself lives in `mlcc.engine_contract` (shared with the serve
images); `speculative_env` produces the container environment (docs/images.md) and `check`
applies the stack-config rules, returning problems keyed by the stack-config key to change.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace

from mlcc import engine_contract as contract
from mlcc.serving import s3_draft, schedule_rules, speculative_options
from mlcc.serving.engines import Engine, EngineRelease, release
from mlcc.serving.schedule import SpeculativeSchedule, engine_env

MAX_NUM_TOKENS = 16
MAX_EAGLE_TOPK = 64
MAX_DRAFT_TOKENS = 256
DEFAULT_NUM_TOKENS = 5
# SGLang's own choice for Llama targets is steps 5, top-k 4, 8 draft tokens; we keep its 8.
DEFAULT_TREE_DRAFT_TOKENS = 8

KEY_ALGORITHM = "hp:speculativeAlgorithm"
KEY_MODEL = "hp:speculativeModel"
KEY_NUM_TOKENS = "hp:speculativeNumTokens"
KEY_EAGLE_TOPK = "hp:speculativeEagleTopk"
KEY_NUM_DRAFT_TOKENS = "hp:speculativeNumDraftTokens"


Algorithm = contract.Algorithm
ALGORITHMS = contract.ALGORITHMS
is_hf_id = contract.is_hf_id
draft_model_problem = contract.draft_model_problem


@dataclass(frozen=True)
class SpeculativeSpec:
    """What the user asked for. `eagle_topk`/`num_draft_tokens` None means the default."""

    algorithm: str
    draft_model: str | None = None
    num_tokens: int = DEFAULT_NUM_TOKENS
    eagle_topk: int | None = None
    num_draft_tokens: int | None = None
    draft_revision: str | None = None  # hp:speculativeModelRevision; None or "main": the default
    options: tuple[tuple[str, int], ...] = ()  # hp:speculativeOptions (speculative_options.py)
    schedule: SpeculativeSchedule | None = None  # hp:speculativeSchedule (schedule.py)

    @property
    def definition(self) -> Algorithm:
        return ALGORITHMS[self.algorithm]

    @property
    def topk(self) -> int:
        """SGLang's --speculative-eagle-topk: 1 (a chain) unless the algorithm drafts a tree."""
        if not self.definition.uses_topk:
            return 1
        return self.eagle_topk if self.eagle_topk is not None else self.definition.default_topk

    @property
    def sglang_draft_tokens(self) -> int:
        if self.topk == 1:  # SGLang forces steps + 1 for a chain
            return self.num_tokens + 1
        if self.num_draft_tokens is not None:
            return self.num_draft_tokens
        return min(DEFAULT_TREE_DRAFT_TOKENS, self.num_tokens * self.topk + 1)


def served_spec(spec: SpeculativeSpec | None, model_mount_path: str) -> SpeculativeSpec | None:
    """The spec the engine is given: an s3:// draft becomes the local path its copy lands on
    (mlcc/serving/s3_draft.py), without a Hub revision; any other spec is returned as it is."""
    if spec is None or not s3_draft.is_s3(spec.draft_model):
        return spec
    return replace(spec, draft_model=s3_draft.local_path(model_mount_path), draft_revision=None)


@dataclass(frozen=True)
class Problem:
    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.key}: {self.message}"


@dataclass(frozen=True)
class Checked:
    errors: tuple[Problem, ...]
    warnings: tuple[Problem, ...]


def accepts(release: EngineRelease, algorithm: str) -> bool:
    """The release takes the algorithm's engine name and our image can run it."""
    name = ALGORITHMS[algorithm].engine_algorithm(release.engine)
    return (
        name is not None
        and name in release.speculative_names
        and contract.unrunnable_reason(release.engine, release.version, name) is None
    )


def check(spec: SpeculativeSpec, engine: Engine, release: EngineRelease) -> Checked:
    """The stack-config rules for the selected engine at its version."""
    errors = [*_draft_problems(spec, engine), *_count_problems(spec)]
    warnings = list(_useless_setting_warnings(spec, engine))
    if not accepts(release, spec.algorithm):
        errors.append(Problem(KEY_ALGORITHM, _refusal(spec.algorithm, release)))
    option_errors, option_warnings = speculative_options.problems(
        dict(spec.options), spec.algorithm, engine, release.version
    )
    errors += [Problem(key, message) for key, message in option_errors]
    warnings += [Problem(key, message) for key, message in option_warnings]
    return Checked(tuple(errors), tuple(warnings))


def _refusal(algorithm: str, release: EngineRelease) -> str:
    """Why the release cannot run the algorithm, and the first release that can."""
    engine = release.engine
    name = ALGORITHMS[algorithm].engine_algorithm(engine)
    if name is None:
        other = next(e for e in Engine if e is not engine)
        return (
            f"{algorithm} has no {engine.value} counterpart in any known {engine.value} "
            f"release; set hp:engine to {other.value}, or choose another algorithm"
        )
    first = contract.first_release(engine, name)
    reason = contract.unrunnable_reason(engine, release.version, name)
    why = reason or f"{engine.value} {release.version} does not accept {name!r}"
    if first is None:
        return f"{algorithm} needs {engine.value} to accept {name!r}; {why}"
    return (
        f"{algorithm} needs {engine.value} {name!r}: {why}; the first release that runs it "
        f"is {engine.value} {first}: set hp:engineVersion to {first} or newer, or choose "
        "another algorithm"
    )


def _draft_problems(spec: SpeculativeSpec, engine: Engine) -> list[Problem]:
    if not spec.definition.takes_draft:
        return []
    if not spec.draft_model and not spec.definition.needs_draft:
        return []
    if not spec.draft_model:
        return [
            Problem(
                KEY_MODEL,
                f"{spec.algorithm} needs a draft model (a Hugging Face id such as "
                "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B); without one the engines fail or load "
                "the target as its own draft",
            )
        ]
    if s3_draft.is_s3(spec.draft_model):
        return _s3_draft_problems(spec.draft_model, engine)
    problem = draft_model_problem(spec.draft_model)
    return [Problem(KEY_MODEL, problem)] if problem else []


def draft_problem(draft: str, engine: Engine) -> str | None:
    """Why `draft` cannot be `engine`'s hp:speculativeModel (a Hub id, an absolute path, or an
    s3:// trained head for vLLM); None when it can."""
    if s3_draft.is_s3(draft):
        found = _s3_draft_problems(draft, engine)
        return found[0].message if found else None
    return draft_model_problem(draft)


def _s3_draft_problems(draft: str, engine: Engine) -> list[Problem]:
    """A trained head in S3: copied into the pod for vLLM; SGLang cannot read its format."""
    problem = s3_draft.s3_draft_problem(draft)
    if problem is not None:
        return [Problem(KEY_MODEL, problem)]
    if engine is Engine.SGLANG:
        return [
            Problem(
                KEY_MODEL,
                f"{draft} is an s3:// draft, which this program serves only as a trained "
                "speculators-format head, and SGLang does not read that format (no SGLang "
                "release reads speculators_config); set hp:engine to vllm, or give an SGLang "
                "draft as a Hub id or an absolute path in the image",
            )
        ]
    return []


def _count_problems(spec: SpeculativeSpec) -> list[Problem]:
    problems: list[Problem] = []
    if not 1 <= spec.num_tokens <= MAX_NUM_TOKENS:
        problems.append(
            Problem(
                KEY_NUM_TOKENS, f"must be between 1 and {MAX_NUM_TOKENS}, got {spec.num_tokens}"
            )
        )
    if spec.eagle_topk is not None and not 1 <= spec.eagle_topk <= MAX_EAGLE_TOPK:
        problems.append(
            Problem(
                KEY_EAGLE_TOPK, f"must be between 1 and {MAX_EAGLE_TOPK}, got {spec.eagle_topk}"
            )
        )
    if spec.algorithm == "eagle2" and spec.eagle_topk == 1:
        problems.append(
            Problem(
                KEY_EAGLE_TOPK,
                "eagle2 is tree drafting and needs a top-k above 1; "
                "use hp:speculativeAlgorithm eagle for a chain",
            )
        )
    problems.extend(_draft_token_problems(spec))
    return problems


def _draft_token_problems(spec: SpeculativeSpec) -> list[Problem]:
    value = spec.num_draft_tokens
    if value is None or not spec.definition.uses_topk or _base_counts_invalid(spec):
        return []
    if spec.topk == 1:
        return [
            Problem(
                KEY_NUM_DRAFT_TOKENS,
                f"with top-k 1 SGLang always verifies steps + 1 = {spec.num_tokens + 1} tokens; "
                "remove this key, or set hp:speculativeEagleTopk above 1 for an EAGLE tree",
            )
        ]
    upper = min(MAX_DRAFT_TOKENS, spec.num_tokens * spec.topk + 1)
    if not 2 <= value <= upper:
        return [
            Problem(
                KEY_NUM_DRAFT_TOKENS,
                f"must be between 2 and {upper} (steps x top-k + 1) for this tree, got {value}",
            )
        ]
    return []


def _base_counts_invalid(spec: SpeculativeSpec) -> bool:
    """Invalid steps or top-k make the tree bounds meaningless; those are reported first."""
    topk_bad = spec.eagle_topk is not None and not 1 <= spec.eagle_topk <= MAX_EAGLE_TOPK
    return topk_bad or not 1 <= spec.num_tokens <= MAX_NUM_TOKENS


def _useless_setting_warnings(spec: SpeculativeSpec, engine: Engine) -> list[Problem]:
    definition = spec.definition
    warnings: list[Problem] = []
    if spec.eagle_topk is not None and not definition.uses_topk:
        warnings.append(
            Problem(KEY_EAGLE_TOPK, f"ignored: {spec.algorithm} is not an EAGLE algorithm")
        )
    elif spec.eagle_topk not in (None, 1) and engine is Engine.VLLM:
        warnings.append(
            Problem(KEY_EAGLE_TOPK, "vLLM drafts a chain and ignores top-k; it applies to SGLang")
        )
    if spec.algorithm == "eagle2" and engine is Engine.VLLM:
        warnings.append(
            Problem(KEY_ALGORITHM, "vLLM has no EAGLE-2 tree drafting; it runs method 'eagle'")
        )
    if spec.num_draft_tokens is not None and not definition.uses_topk:
        warnings.append(
            Problem(
                KEY_NUM_DRAFT_TOKENS,
                f"ignored: {spec.algorithm} is not an EAGLE tree; SGLang gets steps + 1 = "
                f"{spec.num_tokens + 1}",
            )
        )
    elif spec.num_draft_tokens is not None and engine is Engine.VLLM:
        warnings.append(Problem(KEY_NUM_DRAFT_TOKENS, "ignored by vLLM; it applies to SGLang"))
    if spec.algorithm == "dspark" and not spec.draft_model:
        warnings.append(
            Problem(
                KEY_MODEL,
                "not set: both engines then read the DSpark draft from the target's own "
                "checkpoint (DeepSeek-V4 bundles one); other targets need a DSpark draft here",
            )
        )
    if spec.algorithm == "mtp" and spec.num_tokens > 3:
        warnings.append(
            Problem(
                KEY_NUM_TOKENS,
                f"mtp with {spec.num_tokens} tokens re-runs the MTP layer(s) many times; models "
                "with one MTP layer usually accept best with 1-3",
            )
        )
    return warnings


def vllm_env(spec: SpeculativeSpec) -> dict[str, str]:
    config: dict[str, object] = {"method": spec.definition.vllm_method}
    if spec.definition.takes_draft and spec.draft_model:
        config["model"] = spec.draft_model
        if spec.draft_revision not in (None, "main"):
            config["revision"] = spec.draft_revision
    config["num_speculative_tokens"] = spec.num_tokens
    config.update(speculative_options.vllm_fields(dict(spec.options), spec.algorithm))
    variable = contract.env_variable(Engine.VLLM, contract.VLLM_CONFIG_FLAG)
    return {variable: json.dumps(config, separators=(",", ":"))}


SGLANG_BLOCK_ALGORITHMS = frozenset({"DFLASH", "DSPARK"})
SGLANG_DSPARK_BLOCK_FLAG = "speculative-dspark-block-size"


def sglang_env(spec: SpeculativeSpec) -> dict[str, str]:
    flags = {contract.SGLANG_ALGORITHM_FLAG: str(spec.definition.sglang_algorithm)}
    if spec.definition.takes_draft and spec.draft_model:
        flags[contract.SGLANG_DRAFT_FLAG] = spec.draft_model
        if spec.draft_revision not in (None, "main"):
            flags["speculative-draft-model-revision"] = str(spec.draft_revision)
    steps, topk, draft_tokens = contract.SGLANG_TRIPLE
    if spec.definition.sglang_algorithm in SGLANG_BLOCK_ALGORITHMS:
        # DFLASH and DSPARK draft one block in one pass: SGLang forces steps and top-k to 1
        # and verifies the block plus the anchor token (DSPARK: gamma + 1, where gamma is
        # --speculative-dspark-block-size; DFLASH: block_size = --speculative-num-draft-tokens).
        # sglang/srt/arg_groups/speculative_hook.py _handle_dflash, _handle_dspark.
        flags[steps] = "1"
        flags[topk] = "1"
        flags[draft_tokens] = str(spec.num_tokens + 1)
        if spec.definition.sglang_algorithm == "DSPARK":
            flags[SGLANG_DSPARK_BLOCK_FLAG] = str(spec.num_tokens)
        return {contract.env_variable(Engine.SGLANG, flag): value for flag, value in flags.items()}
    flags[steps] = str(spec.num_tokens)
    flags[topk] = str(spec.topk)
    flags[draft_tokens] = str(spec.sglang_draft_tokens)
    return {contract.env_variable(Engine.SGLANG, flag): value for flag, value in flags.items()}


_ENGINE_ENV = {Engine.VLLM: vllm_env, Engine.SGLANG: sglang_env}


def speculative_env(
    spec: SpeculativeSpec | None,
    releases: Mapping[Engine, EngineRelease] | None = None,
) -> dict[str, str]:
    """Both engines' speculative variables plus HP_SPECULATIVE_ALGORITHM; {} when off.

    An engine whose release (pinned unless given) does not accept the algorithm gets no set,
    so a manifest never asks an engine for something it rejects; nor a schedule it would ignore.
    """
    if spec is None:
        return {}
    env = {contract.ALGORITHM_ENV: spec.algorithm}
    for engine, to_env in _ENGINE_ENV.items():
        engine_release = (releases or {}).get(engine) or release(engine)
        if accepts(engine_release, spec.algorithm):
            engine_set = to_env(spec)
            counts = (spec.num_tokens, spec.topk)
            if spec.schedule is not None and schedule_rules.applies(
                spec.schedule, spec.algorithm, counts, engine, engine_release
            ):  # a schedule only where the engine runs it
                engine_set |= engine_env(spec.schedule, engine, engine_set)
            env.update(engine_set)
    return env
