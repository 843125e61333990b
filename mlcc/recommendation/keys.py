"""Recognising speculative-decoding values in a recommendation's undocumented string maps.

GUESSWORK, by design: AWS documents neither the OptimizationConfig keys nor the environment
variables of a recommendation (docs/optimize.md). The key lists are data so that they are easy to
extend. Keys are compared after removing case and separators ("NumSpeculativeTokens" ==
"num_speculative_tokens" == "num-speculative-tokens").
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mlcc import engine_contract as contract
from mlcc.config.optimize import whole_number
from mlcc.serving import speculative

ALGORITHMS = tuple(speculative.ALGORITHMS)
ALGORITHMS_NEEDING_DRAFT = frozenset(
    a.name for a in speculative.ALGORITHMS.values() if a.needs_draft
)

ALGORITHM_KEYS = (
    "method",
    "algorithm",
    "technique",
    "speculative_method",
    "speculative_algorithm",
    "speculative_decoding_method",
    "speculative_decoding_algorithm",
    "speculative_technique",
    "decoding_algorithm",
)
DRAFT_MODEL_KEYS = (
    "draft_model",
    "draft_model_id",
    "draft_model_path",
    "speculative_model",
    "speculative_draft_model",
    "speculative_draft_model_path",
    "speculative_draft_model_id",
    "model",
    "model_id",
)
NUM_TOKENS_KEYS = (
    "num_speculative_tokens",
    "num_tokens",
    "speculative_num_steps",
    "speculative_num_tokens",
    "num_speculative_steps",
    "speculative_length",
    "num_steps",
)
# Environment variables whose value is a whole speculative config as JSON (vLLM style).
JSON_CONFIG_ENV_VARS = (
    contract.env_variable(contract.VLLM, contract.VLLM_CONFIG_FLAG),  # SM_VLLM_SPECULATIVE_CONFIG
    "OPTION_SPECULATIVE_CONFIG",
    "VLLM_SPECULATIVE_CONFIG",
    "SPECULATIVE_CONFIG",
)
# Prefixes of serving-container env vars (AWS DLC, LMI, ours) removed before key matching.
# Only variables whose name mentions SPECULATIVE are read: SM_VLLM_MODEL is the target model.
ENV_PREFIXES = (*contract.ENV_PREFIXES.values(), "OPTION_", "OPTION.", "HP_", "VLLM_", "SGLANG_")

# Method values as engines and AWS spell them -> our names (compared like keys).
ALGORITHM_ALIASES: dict[str, str] = {
    "eagle": "eagle",
    "eagle1": "eagle",
    "eagle2": "eagle2",
    "eagle3": "eagle3",
    "draft_model": "draft-model",
    "draft": "draft-model",
    "standalone": "draft-model",
    "draft_model_speculative_decoding": "draft-model",
    "ngram": "ngram",
    "prompt_lookup": "ngram",
    "mtp": "mtp",
    "nextn": "mtp",
    "deepseek_mtp": "mtp",
}
SECRET_NAME_PARTS = ("TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "API_KEY", "ACCESS_KEY")
REDACTED = "<redacted>"

HUB_NON_MODEL_PATHS = frozenset({"datasets", "spaces", "collections", "docs", "api"})
HF_URL_PATTERN = re.compile(
    r"https://(?:www\.)?(?:huggingface\.co|hf\.co)/"
    r"(?P<id>[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*)(?:/(?:tree|resolve)/.*)?/?"
)


def canonical_key(key: str) -> str:
    return re.sub(r"[^a-z0-9]", "", key.lower())


_ALGORITHM_KEYS = frozenset(canonical_key(k) for k in ALGORITHM_KEYS)
_DRAFT_MODEL_KEYS = frozenset(canonical_key(k) for k in DRAFT_MODEL_KEYS)
_NUM_TOKENS_KEYS = frozenset(canonical_key(k) for k in NUM_TOKENS_KEYS)
_ALGORITHM_ALIASES = {canonical_key(k): v for k, v in ALGORITHM_ALIASES.items()}


@dataclass(frozen=True)
class FoundValues:
    """Raw speculative values found in one source, before normalisation."""

    algorithm: str | None = None
    draft_model: str | None = None
    num_tokens: str | None = None

    def merged_over(self, fallback: FoundValues) -> FoundValues:
        return FoundValues(
            self.algorithm or fallback.algorithm,
            self.draft_model or fallback.draft_model,
            self.num_tokens or fallback.num_tokens,
        )

    @property
    def empty(self) -> bool:
        return not (self.algorithm or self.draft_model or self.num_tokens)


def normalise_algorithm(value: str | None) -> str | None:
    """Map an engine/AWS method name to one of ALGORITHMS, or None when unknown."""
    if not value:
        return None
    return _ALGORITHM_ALIASES.get(canonical_key(value))


def normalise_draft_model(value: str | None) -> tuple[str | None, str | None]:
    """(Hugging Face id or None, why the value is not usable). Accepts `org/name` or a Hub URL."""
    if not value:
        return None, None
    text = value.strip()
    url = HF_URL_PATTERN.fullmatch(text)
    if url and _is_hub_model_id(url.group("id")):
        return url.group("id"), None
    if speculative.is_hf_id(text):
        return text, None
    if "://" in text:
        scheme = text.split("://", 1)[0]
        where = f"a {scheme}:// URI"
    elif text.startswith("/"):
        where = "a path inside the service's container"
    elif text.startswith("arn:"):
        where = "an ARN"
    else:
        where = "not of the form org/name"
    return None, (
        f"the draft model {text!r} is {where}, not a Hugging Face model id; the endpoint loads "
        "drafts from the Hub (or a path baked into the image), so publish the draft to the Hub "
        "and set hp:speculativeModel yourself"
    )


def _is_hub_model_id(candidate: str) -> bool:
    # huggingface.co/datasets/... and /spaces/... are not models.
    return speculative.is_hf_id(candidate) and candidate.split("/")[0] not in HUB_NON_MODEL_PATHS


def parse_num_tokens(value: str | None, notes: list[str]) -> int | None:
    if value is None:
        return None
    number = whole_number(value)
    if number is None or not 1 <= number <= speculative.MAX_NUM_TOKENS:
        notes.append(
            f"ignored speculative token count {value!r} (not an integer in "
            f"1..{speculative.MAX_NUM_TOKENS}); the stack default applies"
        )
        return None
    return number


# JSON objects inside an OptimizationConfig value are searched this many levels deep.
MAX_NESTING = 4


def find_in_map(values: Mapping[str, str], depth: int = 0) -> FoundValues:
    """Recognised keys in one string map; values that are JSON objects are searched too, up to
    MAX_NESTING levels (a reply may nest them without end)."""
    found = FoundValues()
    for key, value in values.items():
        nested = _json_object(value) if depth < MAX_NESTING else None
        if nested is not None:
            found = found.merged_over(find_in_map(nested, depth + 1))
            continue
        found = FoundValues(
            _first(found.algorithm, key, value, _ALGORITHM_KEYS),
            _first(found.draft_model, key, value, _DRAFT_MODEL_KEYS),
            _first(found.num_tokens, key, value, _NUM_TOKENS_KEYS),
        )
    return found


def find_in_env(env: Mapping[str, str]) -> FoundValues:
    found = FoundValues()
    for name in JSON_CONFIG_ENV_VARS:
        nested = _json_object(env.get(name, ""))
        if nested is not None:
            found = found.merged_over(find_in_map(nested))
    speculative_vars = {
        _strip_env_prefix(name): value
        for name, value in env.items()
        if "SPECULATIVE" in name.upper() and name not in JSON_CONFIG_ENV_VARS
    }
    return found.merged_over(find_in_map(speculative_vars))


def _strip_env_prefix(name: str) -> str:
    for prefix in ENV_PREFIXES:
        if name.upper().startswith(prefix):
            return name[len(prefix) :]
    return name


def _first(current: str | None, key: str, value: str, keys: frozenset[str]) -> str | None:
    if current:
        return current
    if canonical_key(key) not in keys:
        return None
    return value.strip() or None


def _json_object(value: str) -> dict[str, str] | None:
    if not value.lstrip().startswith("{"):
        return None
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python's stack
        return None
    if not isinstance(parsed, dict):
        return None
    texts = {str(k): _scalar_text(v) for k, v in parsed.items()}
    return {k: v for k, v in texts.items() if v is not None}


def _scalar_text(value: Any) -> str | None:
    """JSON scalars as the strings an OptimizationConfig would hold; nested objects as JSON."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int, float)):
        return str(value)
    if isinstance(value, dict):
        return json.dumps(value)
    return None


def redact_environment(env: Mapping[str, str]) -> dict[str, str]:
    """Copy of env with values of secret-looking names replaced (outputs end up in state)."""
    return {
        name: REDACTED if any(part in name.upper() for part in SECRET_NAME_PARTS) else value
        for name, value in env.items()
    }
