"""The container environment read back: SM_<ENGINE>_* variables as the flags they become."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .flags import canonical_flag, flag_name_problem, is_speculative_flag
from .names import (
    ALGORITHM_ENV,
    ENV_PREFIXES,
    SGLANG,
    SGLANG_ALGORITHM_FLAG,
    VLLM,
    VLLM_CONFIG_FLAG,
)
from .values import json_object, text_problem


class EnvProblem(Exception):
    """A setting the engine would reject or mishandle; `source` is what the user must change
    (an env variable, or `argument --flag` for a container argument)."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
        self.message = message


@dataclass(frozen=True)
class EnvFlag:
    """One SM_<ENGINE>_* variable as the flag it becomes."""

    variable: str
    name: str  # as the variable spells it: max-model-len
    key: str  # canonical_flag(name)
    value: str | None  # None: a bare flag (`true`)

    @property
    def tokens(self) -> list[str]:
        if self.value is None:
            return [f"--{self.name}"]
        # argparse reads a value that starts with "-" as another flag; `--f=value` is not.
        if self.value.startswith("-"):
            return [f"--{self.name}={self.value}"]
        return [f"--{self.name}", self.value]


@dataclass(frozen=True)
class Setting:
    """One flag's value and where it came from (an env variable or a container argument)."""

    value: str | None
    source: str


def env_flag(engine: str, variable: str, value: str, version: str | None = None) -> EnvFlag | None:
    """The DLC convention for one variable; None when `false` omits the flag.

    `version` is the image's engine release (None: pinned); see `flag_name_problem`.
    """
    prefix = ENV_PREFIXES[engine]
    name = variable[len(prefix) :].lower().replace("_", "-")
    if not name:
        raise EnvProblem(variable, f"no flag name after {prefix}; remove the variable")
    if (problem := text_problem(variable)) is not None:
        raise EnvProblem(variable, problem)
    problem = flag_name_problem(engine, f"--{name}", version, any_abbreviation=False)
    if problem is not None:
        raise EnvProblem(variable, problem)
    if (problem := text_problem(value)) is not None:
        raise EnvProblem(variable, problem)
    text = value.strip()
    if not text:
        raise EnvProblem(variable, "empty value; set a value, `true` for a bare flag, or unset it")
    if text.lower() == "false":
        return None
    key = canonical_flag(engine, f"--{name}", version)
    if text.lower() == "true":
        return EnvFlag(variable, name, key, None)
    return EnvFlag(variable, name, key, normalized_value(engine, key, text))


def normalized_value(engine: str, key: str, value: str) -> str:
    """Speculative names in the case the engine wants; everything else unchanged."""
    if engine == SGLANG and key == SGLANG_ALGORITHM_FLAG:
        return value.upper()  # <= 0.5.8 only took uppercase names
    if engine == VLLM and key == "spec-method":
        return value.lower()
    if engine == VLLM and key == VLLM_CONFIG_FLAG:
        return _lowercase_vllm_method(value)
    return value


def _lowercase_vllm_method(value: str) -> str:
    """A JSON config whose method differs only in case, with the method lowercased."""
    parsed = json_object(value)
    method = parsed.get("method") if parsed is not None else None
    if parsed is None or not isinstance(method, str) or method == method.lower():
        return value
    return json.dumps({**parsed, "method": method.lower()}, separators=(",", ":"))


def env_flags(engine: str, env: Mapping[str, str], version: str | None = None) -> list[EnvFlag]:
    """The engine's SM_* variables as flags, sorted by variable name; raises EnvProblem."""
    flags: list[EnvFlag] = []
    for variable in sorted(env):
        if variable.startswith(ENV_PREFIXES[engine]):
            flag = env_flag(engine, variable, env[variable], version)
            if flag is not None:
                flags.append(flag)
    by_key: dict[str, str] = {}
    for flag in flags:
        if flag.key in by_key:
            raise EnvProblem(flag.variable, f"sets the same flag as {by_key[flag.key]}; keep one")
        by_key[flag.key] = flag.variable
    return flags


def speculative_env_flags(
    engine: str, env: Mapping[str, str], version: str | None = None
) -> list[EnvFlag]:
    """The engine's speculative flags in a container env (`mlcc plan`, `mlcc verify`), read
    with the release's table (None: pinned). Only those variables are read."""
    speculative = {k: v for k, v in env.items() if is_speculative_variable(engine, k, version)}
    return env_flags(engine, speculative, version)


def is_speculative_variable(engine: str, variable: str, version: str | None = None) -> bool:
    """HP_SPECULATIVE_ALGORITHM, or an SM_<ENGINE>_* variable that becomes a speculative flag."""
    if variable == ALGORITHM_ENV:
        return True
    prefix = ENV_PREFIXES[engine]
    name = variable[len(prefix) :].replace("_", "-")
    key = canonical_flag(engine, f"--{name}", version)
    return variable.startswith(prefix) and is_speculative_flag(engine, key)


def settings_from_flags(flags: Iterable[EnvFlag]) -> dict[str, Setting]:
    return {flag.key: Setting(flag.value, flag.variable) for flag in flags}
