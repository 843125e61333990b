"""Pulumi.yaml + Pulumi.<stack>.yaml -> the config a program sees, as the Pulumi CLI builds it.

Offline there is no CLI to apply the project's typed `config:` block, so this module does what
`pulumi preview` does before the program starts: merge stack values over project defaults,
report missing required keys and values of the wrong type, and hand every value to the program
as a string (maps and lists as JSON). `secure:` values cannot be decrypted here; they become
`[secret]` and are marked secret, as the real runtime marks them.

Stack files are read as the CLI reads them (YAML 1.2 scalars; a top-level value keeps its text,
so `1.30` stays `1.30`; `<<` merge keys expanded as Go's yaml.v3 expands them), and no input
ends in a traceback: a broken file (syntax, tabs, not a map, alias bombs, nesting) raises
`StackFileError`, a bad value `StackConfigError`, and a bad `--set` `OverrideError`, each with
one line naming what to change.

This module finds and loads the files and resolves the config; the safe YAML reading and value
checks are in `mlcc.stackfiles.yaml_reader`, and `--set` (like `pulumi config set [--path]`, e.g.
`hp:tags.owner=alice`) is parsed and applied by `mlcc.stackfiles.overrides`. The names callers use
are re-exported here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from mlcc.serving.speculative import Problem
from mlcc.stackfiles.overrides import apply_override, parse_override, parse_overrides
from mlcc.stackfiles.yaml_reader import (
    ExpansionBudget,
    OverrideError,
    StackFileError,
    ValueCheckError,
    as_config_string,
    compose_file,
    convert,
    is_int64,
    is_null,
    mapping_entries,
    node_kind,
    shown,
    to_python,
)
from mlcc.userfiles import FOLDER, UserFileError, file_kind, shown_path

__all__ = [
    "EXAMPLES_DIR",
    "SECRET_PLACEHOLDER",
    "OverrideError",
    "StackConfigError",
    "StackFileError",
    "StackValues",
    "check_stack_name",
    "load_project",
    "load_stack",
    "parse_overrides",
    "resolve",
    "stack_file",
    "stack_names",
]

SECRET_PLACEHOLDER = "[secret]"
EXAMPLES_DIR = "examples"
_STACK_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
_CONFIG_KEY = re.compile(r"^[^\s:]+:[^\s]+$")


@dataclass(frozen=True)
class StackValues:
    values: dict[str, str]
    secret_keys: list[str]


class StackConfigError(Exception):
    """Values the CLI would refuse; `partial` holds every value that could be read, so that the
    program's own checks can still report the other keys' problems at the same time."""

    def __init__(self, problems: Sequence[Problem], partial: StackValues | None = None) -> None:
        self.problems = tuple(problems)
        self.partial = partial
        super().__init__("\n".join(str(p) for p in problems))


# --- files --------------------------------------------------------------------------------


def load_project(project_dir: Path) -> dict[str, Any]:
    path = project_dir / "Pulumi.yaml"
    if _kind(project_dir) not in (None, FOLDER):
        raise StackFileError(f"{shown_path(project_dir)}: is {_kind(project_dir)}, not a folder")
    if _kind(path) is None:
        raise StackFileError(
            f"no Pulumi.yaml in {shown_path(project_dir)}; run mlcc from the project folder"
        )
    project = to_python(compose_file(path), path.name)
    if not isinstance(project, dict) or "name" not in project:
        raise StackFileError(f"{path} is not a Pulumi project file (a map with a 'name')")
    return project


def check_stack_name(stack: str) -> None:
    if not _STACK_NAME.match(stack):
        raise StackFileError(
            f"--stack {shown(stack)}: a stack name has 1-100 letters, digits, '-', '_' or '.'"
        )


def stack_names(project_dir: Path) -> list[str]:
    try:
        found = list(project_dir.glob("Pulumi.*.yaml"))
    except OSError:  # a folder that cannot be listed has no stacks to offer
        return []
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in found)


def _kind(path: Path) -> str | None:
    """What is at `path` (None: nothing); StackFileError when the name itself is refused."""
    try:
        return file_kind(path)
    except UserFileError as error:
        raise StackFileError(str(error)) from None


def stack_file(project_dir: Path, stack: str) -> Path:
    """`Pulumi.<stack>.yaml` in the project folder, else in examples/ (offline-only stacks)."""
    check_stack_name(stack)
    for folder in (project_dir, project_dir / EXAMPLES_DIR):
        path = folder / f"Pulumi.{stack}.yaml"
        if _kind(path) is not None:  # not only a regular file: the reader says why not
            return path
    stacks = ", ".join(stack_names(project_dir)) or "none"
    examples = stack_names(project_dir / EXAMPLES_DIR)
    in_examples = f"; in {EXAMPLES_DIR}/: {', '.join(examples)}" if examples else ""
    raise StackFileError(f"no stack file Pulumi.{stack}.yaml; stacks here: {stacks}{in_examples}")


def load_stack(project_dir: Path, stack: str) -> dict[str, Any]:
    """The `config:` map of a stack file; top-level scalars keep their text, as the CLI does."""
    path = stack_file(project_dir, stack)
    document = compose_file(path)
    if document is None:
        return {}
    if not isinstance(document, yaml.MappingNode):
        raise StackFileError(
            f"{path.name}: must be a map with a 'config:' section, not {node_kind(document)}"
        )
    config_node = mapping_entries(document, path.name).get("config")
    if config_node is None or is_null(config_node):
        return {}
    if not isinstance(config_node, yaml.MappingNode):
        raise StackFileError(f"{path.name}: 'config' must be a map of keys to values")
    budget = ExpansionBudget(path.name)
    config: dict[str, Any] = {}
    for key, node in mapping_entries(config_node, path.name, budget).items():
        if isinstance(node, yaml.ScalarNode):
            config[key] = None if is_null(node) else node.value
        else:
            config[key] = convert(node, 1, budget)
    return config


# --- resolve --------------------------------------------------------------------------------


def _qualify(project: str, key: str) -> str:
    return key if ":" in key else f"{project}:{key}"


def _type_problem(key: str, declared: str | None, value: str, stack: str) -> Problem | None:
    if value == SECRET_PLACEHOLDER:
        return None
    ok = {
        "integer": is_int64(value),
        "boolean": value in {"true", "false"},
    }.get(str(declared), True)
    if ok:
        return None
    return Problem(key, f"must be of type '{declared}' (stack '{stack}'), got {shown(value)}")


def resolve(
    project: Mapping[str, Any],
    stack_config: Mapping[str, Any],
    *,
    stack: str,
    overrides: Mapping[str, str | None] | Iterable[tuple[str, str | None]] = (),
) -> StackValues:
    """Merge stack values and `--set` overrides (None removes a key) over project defaults.

    Raises StackConfigError (bad values, missing keys) or OverrideError (a malformed `--set`).
    """
    name = str(project["name"])
    declared: Mapping[str, Any] = project.get("config") or {}
    values: dict[str, str] = {}
    secret_keys: set[str] = set()
    problems: list[Problem] = []
    for key, raw in stack_config.items():
        qualified = _qualify(name, str(key))
        if not _CONFIG_KEY.match(qualified):
            problems.append(Problem(shown(qualified), "is not a config key (namespace:name)"))
            continue
        stored = _stack_value(qualified, raw, problems)
        if stored is not None:
            values[qualified], is_secret = stored
            if is_secret:
                secret_keys.add(qualified)
    pairs = overrides.items() if isinstance(overrides, Mapping) else overrides
    for key_text, value_text in pairs:
        override = parse_override(key_text, value_text)
        apply_override(override, _qualify(name, override.key), declared, values, secret_keys)
    problems += _apply_declarations(name, declared, values, stack)
    if problems:
        raise StackConfigError(problems, StackValues(values, sorted(secret_keys)))
    return StackValues(values, sorted(secret_keys))


def _is_secure(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"secure"}


def _redact_secure(value: Any) -> tuple[Any, bool]:
    """A structured value with nested `secure:` entries replaced; True if there was one."""
    if _is_secure(value):
        return SECRET_PLACEHOLDER, True
    if isinstance(value, dict):
        pairs = {k: _redact_secure(v) for k, v in value.items()}
        return {k: v for k, (v, _) in pairs.items()}, any(s for _, s in pairs.values())
    if isinstance(value, list):
        items = [_redact_secure(v) for v in value]
        return [v for v, _ in items], any(s for _, s in items)
    return value, False


def _stack_value(qualified: str, raw: Any, problems: list[Problem]) -> tuple[str, bool] | None:
    if raw is None:
        problems.append(Problem(qualified, "has no value; give it one or remove the line"))
        return None
    redacted, is_secret = _redact_secure(raw)
    try:
        return as_config_string(redacted), is_secret
    except ValueCheckError as error:
        problems.append(Problem(f"{qualified}{error.path}", error.message))
        return None


def _apply_declarations(
    project: str, declared: Mapping[str, Any], values: dict[str, str], stack: str
) -> list[Problem]:
    problems: list[Problem] = []
    for key, declaration in declared.items():
        qualified = _qualify(project, str(key))
        spec = declaration if isinstance(declaration, dict) else {"value": declaration}
        if qualified not in values:
            if "default" in spec or "value" in spec:
                values[qualified] = as_config_string(spec.get("default", spec.get("value")))
                continue
            problems.append(
                Problem(qualified, f"is required; set it with `pulumi config set {qualified} ...`")
            )
            continue
        problem = _type_problem(qualified, spec.get("type"), values[qualified], stack)
        if problem:
            problems.append(problem)
    return problems
