"""The engine contract: one stdlib-only package shared by the program and the serve images.

It defines what the Pulumi program writes into the container environment and what the serve
wrapper reads back (docs/images.md). Its modules, each with one job:

- `names`: the engines, their supported and pinned releases, the SM_<ENGINE>_* variable names,
  the speculative names and parameters each release accepts;
- `algorithms`: the user-facing algorithm table;
- `values`: text, counts and model references;
- `flag_tables`: each supported release's option table and speculative names, data generated
  from its wheel (`engine_flags.json`, scripts/engine_flags.py via scripts/engine_release.py);
- `flags`: the engine flag rules (`hp:engineArgs` at preview, the wrapper at start-up);
- `env`: the container environment read back as flags;
- `validation`: the speculative settings found in a container environment.

It imports nothing outside the standard library, and its modules import each other only
relatively: the image build copies this very folder next to serve.py (images/*/Dockerfile),
where it is the top-level package `engine_contract` on the engine image's own Python. Problems
are one sentence naming what to change; nothing here raises anything but `EnvProblem`, whatever
the input. This file only re-exports the modules' public names.
"""

from __future__ import annotations

from .algorithms import (
    ALGORITHMS,
    Algorithm,
    algorithm_named,
)
from .env import (
    EnvFlag,
    EnvProblem,
    Setting,
    env_flag,
    env_flags,
    is_speculative_variable,
    normalized_value,
    settings_from_flags,
    speculative_env_flags,
)
from .flag_tables import (
    RELEASE_TABLES,
    FlagTable,
    Parameter,
)
from .flags import (
    ENGINE_LONG_OPTIONS,
    ENGINE_OPTION_ALIASES,
    NEUTRAL_SETTINGS,
    OTHER_ENGINE_FLAGS,
    OWNED_FLAGS,
    SECRET_FLAGS,
    FlagName,
    canonical_flag,
    duplicate_flag_problems,
    engine_arg_problem,
    engine_arg_value_problem,
    engine_options,
    flag_name_problem,
    flag_spelling_problem,
    is_secret_flag,
    is_speculative_flag,
    long_flag,
    neutral_setting,
    resolve_flag,
)
from .names import (
    ALGORITHM_ENV,
    BASE_IMAGE_REPOSITORIES,
    DEPRECATED_NAMES,
    ENGINE_ENV,
    ENGINE_VERSION_ENV,
    ENGINES,
    ENV_PREFIXES,
    HEALTH_CHECK_PATHS,
    HUB_MODEL_ENVS,
    MODEL_FLAGS,
    MODEL_VARIABLES,
    PINNED_VERSIONS,
    SERVED_NAME_FLAG,
    SGLANG,
    SGLANG_ALGORITHM_FLAG,
    SGLANG_ALGORITHMS_NEEDING_DRAFT,
    SGLANG_DRAFT_FLAG,
    SGLANG_EAGLE_FAMILY,
    SGLANG_LOGGED_AS,
    SGLANG_TRIPLE,
    SPECULATIVE_NAMES,
    SUPPORTED_VERSIONS,
    TENSOR_PARALLEL_FLAGS,
    VLLM,
    VLLM_CONFIG_FLAG,
    VLLM_METHODS_NEEDING_MODEL,
    VLLM_METHODS_NEEDING_TOKENS,
    VLLM_SPEC_SHORTHANDS,
    accepted_names,
    engine_problem,
    env_variable,
    release_table,
    sglang_logged_names,
    speculative_parameters,
    suggested_names,
    version_problem,
)
from .validation import (
    check_speculative,
)
from .values import (
    MAX_COUNT_DIGITS,
    MAX_SHOWN,
    count_problem,
    draft_model_problem,
    is_hf_id,
    model_id_problem,
    parse_count,
    text_problem,
)

__all__ = [
    "ALGORITHMS",
    "ALGORITHM_ENV",
    "BASE_IMAGE_REPOSITORIES",
    "DEPRECATED_NAMES",
    "ENGINES",
    "ENGINE_ENV",
    "ENGINE_LONG_OPTIONS",
    "ENGINE_OPTION_ALIASES",
    "ENGINE_VERSION_ENV",
    "ENV_PREFIXES",
    "HEALTH_CHECK_PATHS",
    "HUB_MODEL_ENVS",
    "MAX_COUNT_DIGITS",
    "MAX_SHOWN",
    "MODEL_FLAGS",
    "MODEL_VARIABLES",
    "NEUTRAL_SETTINGS",
    "OTHER_ENGINE_FLAGS",
    "OWNED_FLAGS",
    "PINNED_VERSIONS",
    "RELEASE_TABLES",
    "SECRET_FLAGS",
    "SERVED_NAME_FLAG",
    "SGLANG",
    "SGLANG_ALGORITHMS_NEEDING_DRAFT",
    "SGLANG_ALGORITHM_FLAG",
    "SGLANG_DRAFT_FLAG",
    "SGLANG_EAGLE_FAMILY",
    "SGLANG_LOGGED_AS",
    "SGLANG_TRIPLE",
    "SPECULATIVE_NAMES",
    "SUPPORTED_VERSIONS",
    "TENSOR_PARALLEL_FLAGS",
    "VLLM",
    "VLLM_CONFIG_FLAG",
    "VLLM_METHODS_NEEDING_MODEL",
    "VLLM_METHODS_NEEDING_TOKENS",
    "VLLM_SPEC_SHORTHANDS",
    "Algorithm",
    "EnvFlag",
    "EnvProblem",
    "FlagName",
    "FlagTable",
    "Parameter",
    "Setting",
    "accepted_names",
    "algorithm_named",
    "canonical_flag",
    "check_speculative",
    "count_problem",
    "draft_model_problem",
    "duplicate_flag_problems",
    "engine_arg_problem",
    "engine_arg_value_problem",
    "engine_options",
    "engine_problem",
    "env_flag",
    "env_flags",
    "env_variable",
    "flag_name_problem",
    "flag_spelling_problem",
    "is_hf_id",
    "is_secret_flag",
    "is_speculative_flag",
    "is_speculative_variable",
    "long_flag",
    "model_id_problem",
    "neutral_setting",
    "normalized_value",
    "parse_count",
    "release_table",
    "resolve_flag",
    "settings_from_flags",
    "sglang_logged_names",
    "speculative_env_flags",
    "speculative_parameters",
    "suggested_names",
    "text_problem",
    "version_problem",
]
