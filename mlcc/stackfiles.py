"""Pulumi.yaml + Pulumi.<stack>.yaml -> the config a program sees, as the Pulumi CLI builds it.

Offline there is no CLI to apply the project's typed `config:` block, so this module does what
`pulumi preview` does before the program starts: merge stack values over project defaults,
report missing required keys and values of the wrong type, and hand every value to the program
as a string (maps as JSON). `secure:` values cannot be decrypted here; they become `[secret]`
and are marked secret, as the real runtime marks them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from mlcc.speculative import Problem

SECRET_PLACEHOLDER = "[secret]"
_INTEGER = re.compile(r"^[+-]?\d+$")


@dataclass(frozen=True)
class StackValues:
    values: dict[str, str]
    secret_keys: list[str]


class StackFileError(Exception):
    """A problem with the files themselves (missing, unreadable): a usage error."""


class StackConfigError(Exception):
    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in problems))


def load_project(project_dir: Path) -> dict[str, Any]:
    path = project_dir / "Pulumi.yaml"
    if not path.is_file():
        raise StackFileError(f"no Pulumi.yaml in {project_dir}; run mlcc from the project folder")
    project = yaml.safe_load(path.read_text())
    if not isinstance(project, dict) or "name" not in project:
        raise StackFileError(f"{path} is not a Pulumi project file")
    return project


def load_stack(project_dir: Path, stack: str) -> dict[str, Any]:
    path = project_dir / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        stacks = sorted(
            p.name[len("Pulumi.") : -len(".yaml")] for p in project_dir.glob("Pulumi.*.yaml")
        )
        raise StackFileError(
            f"no stack file {path.name}; stacks here: {', '.join(stacks) or 'none'}"
        )
    content = yaml.safe_load(path.read_text()) or {}
    config = content.get("config") or {}
    if not isinstance(config, dict):
        raise StackFileError(f"{path.name}: 'config' must be a map")
    return config


def _qualify(project: str, key: str) -> str:
    return key if ":" in key else f"{project}:{key}"


def _as_config_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _type_problem(key: str, declared: str | None, value: str, stack: str) -> Problem | None:
    ok = {
        None: True,
        "string": True,
        "integer": bool(_INTEGER.match(value)),
        "boolean": value in {"true", "false"},
    }.get(declared, True)
    if ok or value == SECRET_PLACEHOLDER:
        return None
    return Problem(key, f"must be of type '{declared}' (stack '{stack}'), got {value!r}")


def resolve(
    project: Mapping[str, Any],
    stack_config: Mapping[str, Any],
    *,
    stack: str,
    overrides: Mapping[str, str | None] = {},
) -> StackValues:
    """Merge stack values (and `--set` overrides; None removes a key) over project defaults."""
    name = str(project["name"])
    declared: Mapping[str, Any] = project.get("config") or {}
    values: dict[str, str] = {}
    secret_keys: list[str] = []
    for key, raw in stack_config.items():
        qualified = _qualify(name, str(key))
        if isinstance(raw, dict) and set(raw) == {"secure"}:
            values[qualified] = SECRET_PLACEHOLDER
            secret_keys.append(qualified)
        else:
            values[qualified] = _as_config_string(raw)
    for key, override in overrides.items():
        qualified = _qualify(name, key)
        values.pop(qualified, None)
        if qualified in secret_keys:
            secret_keys.remove(qualified)
        if override is not None:
            values[qualified] = override
    problems = _apply_declarations(name, declared, values, stack)
    if problems:
        raise StackConfigError(problems)
    return StackValues(values, secret_keys)


def _apply_declarations(
    project: str, declared: Mapping[str, Any], values: dict[str, str], stack: str
) -> list[Problem]:
    problems: list[Problem] = []
    for key, declaration in declared.items():
        qualified = _qualify(project, str(key))
        spec = declaration if isinstance(declaration, dict) else {"value": declaration}
        if qualified not in values:
            if "default" in spec or "value" in spec:
                values[qualified] = _as_config_string(spec.get("default", spec.get("value")))
                continue
            problems.append(
                Problem(qualified, f"is required; set it with `pulumi config set {qualified} ...`")
            )
            continue
        problem = _type_problem(qualified, spec.get("type"), values[qualified], stack)
        if problem:
            problems.append(problem)
    return problems


def parse_overrides(assignments: Sequence[str]) -> dict[str, str | None]:
    """`KEY=VALUE` pairs; `KEY=` removes the key. Raises ValueError on a malformed pair."""
    overrides: dict[str, str | None] = {}
    for assignment in assignments:
        key, sep, value = assignment.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set expects KEY=VALUE, got {assignment!r}")
        overrides[key.strip()] = value if value != "" else None
    return overrides
