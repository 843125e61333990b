"""Warnings from the names of an endpoint's target and draft models: a likely mismatch between
the algorithm and the models' formats (docs/preflight.md). Names are only a hint: preflight
reports one only where it did not read the config.json that settles it.
"""

from __future__ import annotations

from mlcc.serving.speculative import KEY_ALGORITHM, KEY_MODEL, Problem, SpeculativeSpec

# Name fragments of model families with built-in MTP layers (vLLM's MTP model list and SGLang's
# NextN architectures). Names are only a hint, so a miss is a warning.
MTP_TARGET_HINTS = (
    "deepseek-v3",
    "deepseek-r1",
    "deepseek-v4",
    "mimo",
    "glm-4.5",
    "glm-4.6",
    "glm-4.7",
    "glm-5",
    "ernie-4.5",
    "qwen3-next",
    "qwen3.5",
    "longcat",
    "nemotron-h",
    "exaone",
    "ling-",
    "ring-",
    "minimax-m3",
    "kimi-k3",
    "pangu",
    "step-3.5",
    "gemma-4",
    "hunyuan",
    "mistral-large-3",
)


def model_warnings(spec: SpeculativeSpec, target_model: str) -> list[Problem]:
    """Warnings from the names of the target and the draft: a likely mismatch of formats."""
    warnings = _draft_format_warnings(spec)
    target = target_model.lower()
    if spec.algorithm == "mtp" and not any(hint in target for hint in MTP_TARGET_HINTS):
        warnings.append(
            Problem(
                KEY_ALGORITHM,
                f"mtp drafts with the target's own MTP layers, and {target_model} does not look "
                "like a model that has them (DeepSeek-V3/R1, GLM-4.5+, Qwen3-Next, MiMo, ...): "
                "vLLM refuses such a target and SGLang loads it as its own draft",
            )
        )
    return warnings


# A name hint about the draft is settled by the draft's config.json, the mtp one by the target's.
_SETTLED_BY = {KEY_MODEL: "speculativeModel", KEY_ALGORITHM: "model"}


def name_hints(spec: SpeculativeSpec | None, target_model: str) -> list[tuple[str, Problem]]:
    """`model_warnings`, each with the endpoint key of the model whose config.json settles it:
    preflight reports a hint only where it did not read that config (docs/preflight.md), so a
    name never warns beside what the config shows."""
    if spec is None:
        return []
    return [(_SETTLED_BY[p.key], p) for p in model_warnings(spec, target_model)]


def _draft_format_warnings(spec: SpeculativeSpec) -> list[Problem]:
    if not spec.draft_model or not spec.definition.needs_draft:
        return []
    name = spec.draft_model.lower().rsplit("/", 1)[-1]
    eagle3_name = "eagle3" in name or "eagle-3" in name
    if spec.algorithm in {"eagle", "eagle2"} and eagle3_name:
        message = (
            "looks like an EAGLE-3 head: with eagle vLLM refuses it and SGLang accepts no "
            "drafted token (accept len 1.00); use hp:speculativeAlgorithm eagle3"
        )
    elif spec.algorithm == "eagle3" and "eagle" in name and not eagle3_name:
        message = "looks like an EAGLE(-1/2) head, not EAGLE-3; use eagle or eagle2"
    elif spec.algorithm == "draft-model" and "eagle" in name:
        message = (
            "looks like an EAGLE head, not a standalone model: vLLM detects it and runs EAGLE "
            "instead; use eagle or eagle3"
        )
    else:
        return []
    return [Problem(KEY_MODEL, f"{spec.draft_model} {message}")]
