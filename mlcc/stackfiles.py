"""Pulumi.yaml + Pulumi.<stack>.yaml -> the config a program sees, as the Pulumi CLI builds it.

Offline there is no CLI to apply the project's typed `config:` block, so this module does what
`pulumi preview` does before the program starts: merge stack values over project defaults,
report missing required keys and values of the wrong type, and hand every value to the program
as a string (maps and lists as JSON). `secure:` values cannot be decrypted here; they become
`[secret]` and are marked secret, as the real runtime marks them.

Stack files are read as the CLI reads them (YAML 1.2 scalars; a top-level value keeps its text,
so `1.30` stays `1.30`), and no input ends in a traceback: a broken file (syntax, tabs, not a
map, alias bombs, nesting) raises `StackFileError`, a bad value `StackConfigError`, and a bad
`--set` `OverrideError`, each with one line naming what to change.

`--set` works like `pulumi config set [--path]`: `hp:tags.owner=alice` and
`hp:instanceGroups[0].instanceCount=2` edit the structured value and re-serialise it; a map or
list value is accepted as JSON or YAML flow syntax (`{max-model-len: 8192}`).
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from mlcc.speculative import Problem

SECRET_PLACEHOLDER = "[secret]"
EXAMPLES_DIR = "examples"
# Deeper structures are certainly mistakes, and would exhaust Python's recursion limit later.
MAX_DEPTH = 32
# YAML aliases may repeat a subtree; expanded beyond this many values it is an alias bomb.
MAX_EXPANDED_VALUES = 100_000
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_STACK_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
_INTEGER = re.compile(r"^[+-]?\d+$")
_CONFIG_KEY = re.compile(r"^[^\s:]+:[^\s]+$")
_SHOWN_CHARS = 40

# YAML 1.2 core schema (what the Pulumi CLI's YAML library resolves plain scalars with).
_CORE_NULL = re.compile(r"^(~|null|Null|NULL|)$")
_CORE_BOOL = {"true": True, "True": True, "TRUE": True}
_CORE_BOOL |= {"false": False, "False": False, "FALSE": False}
_CORE_INT = re.compile(r"^[-+]?[0-9]+$")
_CORE_OCT = re.compile(r"^0o[0-7]+$")
_CORE_HEX = re.compile(r"^0x[0-9a-fA-F]+$")
_CORE_FLOAT = re.compile(
    r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$|^[-+]?\.(inf|Inf|INF)$|^\.(nan|NaN|NAN)$"
)

# `--set` keys: `hp:key`, then `.field`, `[0]` or `["field.with.dots"]` segments.
_KEY_HEAD = re.compile(r"^[^.\[\]\s]+")
_PATH_SEGMENT = re.compile(r'\.([^.\[\]"\s]+)|\.?\[(\d+)\]|\.?\["((?:[^"\\]|\\.)*)"\]')
STRUCTURED_FORMS = (
    'JSON ({"max-model-len": 8192}) or YAML flow syntax ({max-model-len: 8192}, [a, b])'
)


@dataclass(frozen=True)
class StackValues:
    values: dict[str, str]
    secret_keys: list[str]


class StackFileError(Exception):
    """A problem with the files themselves (missing, unreadable, not YAML): a usage error."""


class OverrideError(ValueError):
    """A malformed `--set`: a usage error."""


class StackConfigError(Exception):
    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in problems))


class _ValueError(Exception):
    """A value that cannot be handed to the program; `path` is relative to its key."""

    def __init__(self, path: str, message: str) -> None:
        self.path, self.message = path, message
        super().__init__(f"{path}: {message}")


def shown(value: object, *, quoted: bool = True) -> str:
    """A value for an error line: quoted and cut short."""
    text = str(value)
    if isinstance(value, str) and (quoted or not text.isprintable()):
        text = repr(value)
    if len(text) > _SHOWN_CHARS:
        return f"{text[: _SHOWN_CHARS - 3]}... ({len(text)} characters)"
    return text


# --- files --------------------------------------------------------------------------------


def load_project(project_dir: Path) -> dict[str, Any]:
    path = project_dir / "Pulumi.yaml"
    if not path.is_file():
        raise StackFileError(f"no Pulumi.yaml in {project_dir}; run mlcc from the project folder")
    project = _to_python(_compose_file(path), path.name)
    if not isinstance(project, dict) or "name" not in project:
        raise StackFileError(f"{path} is not a Pulumi project file (a map with a 'name')")
    return project


def check_stack_name(stack: str) -> None:
    if not _STACK_NAME.match(stack):
        raise StackFileError(
            f"--stack {shown(stack)}: a stack name has 1-100 letters, digits, '-', '_' or '.'"
        )


def stack_names(project_dir: Path) -> list[str]:
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in project_dir.glob("Pulumi.*.yaml"))


def stack_file(project_dir: Path, stack: str) -> Path:
    """`Pulumi.<stack>.yaml` in the project folder, else in examples/ (offline-only stacks)."""
    check_stack_name(stack)
    for folder in (project_dir, project_dir / EXAMPLES_DIR):
        path = folder / f"Pulumi.{stack}.yaml"
        if path.is_file():
            return path
    stacks = ", ".join(stack_names(project_dir)) or "none"
    examples = stack_names(project_dir / EXAMPLES_DIR)
    in_examples = f"; in {EXAMPLES_DIR}/: {', '.join(examples)}" if examples else ""
    raise StackFileError(f"no stack file Pulumi.{stack}.yaml; stacks here: {stacks}{in_examples}")


def load_stack(project_dir: Path, stack: str) -> dict[str, Any]:
    """The `config:` map of a stack file; top-level scalars keep their text, as the CLI does."""
    path = stack_file(project_dir, stack)
    document = _compose_file(path)
    if document is None:
        return {}
    if not isinstance(document, yaml.MappingNode):
        raise StackFileError(
            f"{path.name}: must be a map with a 'config:' section, not {_node_kind(document)}"
        )
    config_node = _mapping_entries(document, path.name).get("config")
    if config_node is None or _is_null(config_node):
        return {}
    if not isinstance(config_node, yaml.MappingNode):
        raise StackFileError(f"{path.name}: 'config' must be a map of keys to values")
    budget = _Budget(path.name)
    config: dict[str, Any] = {}
    for key, node in _mapping_entries(config_node, path.name).items():
        if isinstance(node, yaml.ScalarNode):
            config[key] = None if _is_null(node) else node.value
        else:
            config[key] = _convert(node, 1, budget)
    return config


def _compose_file(path: Path) -> yaml.Node | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise StackFileError(f"{path}: cannot read it ({error})") from None
    return compose(text, path.name)


def compose(text: str, source: str) -> yaml.Node | None:
    """The YAML node tree of `text`, or StackFileError with the line and column."""
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        raise StackFileError(_yaml_message(error, source)) from None
    except yaml.YAMLError as error:  # e.g. more than one document
        raise StackFileError(f"{source}: not valid YAML ({_one_line(str(error))})") from None
    except RecursionError:
        raise StackFileError(f"{source}: nested too deeply (at most {MAX_DEPTH} levels)") from None


def _yaml_message(error: yaml.MarkedYAMLError, source: str) -> str:
    mark = error.problem_mark or error.context_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    problem = _one_line(", ".join(filter(None, [error.context, error.problem])) or "not YAML")
    hint = "; indent with spaces, YAML does not allow tabs" if "\\t" in problem else ""
    return f"{source}: {where}{problem}{hint}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _node_kind(node: yaml.Node) -> str:
    return "a list" if isinstance(node, yaml.SequenceNode) else "a single value"


def _is_null(node: yaml.Node) -> bool:
    return (
        isinstance(node, yaml.ScalarNode)
        and node.style is None
        and bool(_CORE_NULL.match(node.value))
    )


def _mapping_entries(node: yaml.MappingNode, source: str) -> dict[str, yaml.Node]:
    entries: dict[str, yaml.Node] = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            line = key_node.start_mark.line + 1
            raise StackFileError(f"{source}: line {line}: a key must be a plain name")
        if key_node.value in entries:
            line = key_node.start_mark.line + 1
            raise StackFileError(f"{source}: line {line}: key {key_node.value!r} appears twice")
        entries[key_node.value] = value_node
    return entries


class _Budget:
    def __init__(self, source: str) -> None:
        self.source, self.left = source, MAX_EXPANDED_VALUES

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise StackFileError(
                f"{self.source}: YAML aliases expand to more than {MAX_EXPANDED_VALUES} values "
                "(an alias bomb?); write the values out"
            )


def _to_python(node: yaml.Node | None, source: str) -> Any:
    return None if node is None else _convert(node, 0, _Budget(source))


def _convert(node: yaml.Node, depth: int, budget: _Budget) -> Any:
    budget.spend()
    if depth > MAX_DEPTH:
        raise StackFileError(f"{budget.source}: nested too deeply (at most {MAX_DEPTH} levels)")
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, depth + 1, budget) for item in node.value]
    if isinstance(node, yaml.MappingNode):
        return {
            key: _convert(value, depth + 1, budget)
            for key, value in _mapping_entries(node, budget.source).items()
        }
    assert isinstance(node, yaml.ScalarNode)
    return _core_scalar(node) if node.style is None else node.value


def _core_scalar(node: yaml.ScalarNode) -> Any:
    text = str(node.value)
    if _CORE_NULL.match(text):
        return None
    if text in _CORE_BOOL:
        return _CORE_BOOL[text]
    try:
        if _CORE_INT.match(text):
            return int(text)
        if _CORE_OCT.match(text):
            return int(text[2:], 8)
        if _CORE_HEX.match(text):
            return int(text[2:], 16)
        if _CORE_FLOAT.match(text):
            return float(text)
    except ValueError:  # .inf, .nan, or more digits than Python converts: all refused later
        return math.inf
    return text


# --- values -------------------------------------------------------------------------------


def _check_value(value: Any, path: str = "", depth: int = 0) -> None:
    """Raise _ValueError for anything the program could not read back from JSON."""
    if depth > MAX_DEPTH:
        raise _ValueError(path, f"is nested too deeply (at most {MAX_DEPTH} levels)")
    if isinstance(value, dict):
        for key, item in value.items():
            _check_value(item, f"{path}.{key}", depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_value(item, f"{path}[{index}]", depth + 1)
    elif isinstance(value, bool) or value is None or isinstance(value, str):
        return
    elif isinstance(value, int):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise _ValueError(path, "is a number out of range (at most 19 digits)")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise _ValueError(path, "is too large or not a finite number")
    else:
        raise _ValueError(path, f"is a {type(value).__name__}, not a string, number or map")


def _as_config_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        _check_value(value)
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, int | float):
        _check_value(value)
    return str(value)


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


def parse_structured(text: str, where: str) -> Any:
    """A map or list given as JSON or YAML flow syntax; OverrideError names the forms that work."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise OverrideError(f"{where}: nested too deeply (at most {MAX_DEPTH} levels)") from None
    except ValueError:
        try:
            value = _to_python(compose(text, "the value"), "the value")
        except StackFileError as error:
            raise OverrideError(
                f"{where}: {shown(text)} is not a map or list ({error}); write it as "
                f"{STRUCTURED_FORMS}"
            ) from None
    if not isinstance(value, dict | list):
        raise OverrideError(
            f"{where}: {shown(text)} is not a map or list; write it as {STRUCTURED_FORMS}"
        )
    try:
        _check_value(value)
    except _ValueError as error:
        raise OverrideError(f"{where}{error.path}: {error.message}") from None
    return value


# --- --set ----------------------------------------------------------------------------------


PathSegment = str | int


@dataclass(frozen=True)
class Override:
    """One `--set`: a key, a path inside its value (may be empty), and the value (None: remove)."""

    key: str
    path: tuple[PathSegment, ...]
    value: Any
    text: str

    @property
    def where(self) -> str:
        return f"--set {self.text}"


def parse_overrides(assignments: Sequence[str]) -> list[tuple[str, str | None]]:
    """`KEY=VALUE` pairs in order; `KEY=` removes the key. Raises OverrideError when malformed."""
    pairs: list[tuple[str, str | None]] = []
    for assignment in assignments:
        key, sep, value = assignment.partition("=")
        if not sep or not key.strip():
            raise OverrideError(
                f"--set expects KEY=VALUE (e.g. hp:engine=sglang or hp:tags.owner=alice), "
                f"got {shown(assignment)}"
            )
        pair = (key.strip(), value if value != "" else None)
        parse_override(*pair)  # fail before anything runs
        pairs.append(pair)
    return pairs


def parse_override(key_text: str, value_text: str | None) -> Override:
    head = _KEY_HEAD.match(key_text)
    if not head or not key_text.isprintable():
        raise OverrideError(f"--set {shown(key_text, quoted=False)}: not a config key")
    rest = key_text[head.end() :]
    path: list[PathSegment] = []
    while rest:
        segment = _PATH_SEGMENT.match(rest)
        if not segment:
            raise OverrideError(
                f"--set {shown(key_text, quoted=False)}: not a config path; use KEY.field, "
                'KEY[0] or KEY["field.with.dots"], e.g. hp:instanceGroups[0].instanceCount'
            )
        field_name, index, quoted = segment.groups()
        path.append(int(index) if index is not None else field_name or _unescape(quoted))
        rest = rest[segment.end() :]
    where = f"--set {key_text}"
    value = None if value_text is None else _override_value(value_text, bool(path), where)
    return Override(head.group(), tuple(path), value, key_text)


def _unescape(quoted: str) -> str:
    return re.sub(r"\\(.)", r"\1", quoted)


def _override_value(text: str, in_path: bool, where: str) -> Any:
    if text.lstrip()[:1] in {"{", "["}:
        return parse_structured(text, where)
    if in_path:  # like `pulumi config set --path`: booleans and integers keep their type
        if text in {"true", "false"}:
            return text == "true"
        if _INTEGER.match(text) and len(text) <= 20:
            number = int(text)
            if _INT64_MIN <= number <= _INT64_MAX:
                return number
    return text


def _set_at(container: Any, path: Sequence[PathSegment], value: Any, where: str) -> Any:
    """`container` with `value` at `path` (None removes it); containers are created as needed."""
    segment, rest = path[0], path[1:]
    if container is None:
        container = {} if isinstance(segment, str) else []
    if isinstance(segment, str):
        if not isinstance(container, dict):
            raise OverrideError(f"{where}: .{segment} needs a map there, found {_kind(container)}")
        return _set_in_map(container, segment, rest, value, where)
    if not isinstance(container, list):
        raise OverrideError(f"{where}: [{segment}] needs a list there, found {_kind(container)}")
    return _set_in_list(container, segment, rest, value, where)


def _set_in_map(
    mapping: dict[str, Any], key: str, rest: Sequence[PathSegment], value: Any, where: str
) -> dict[str, Any]:
    updated = dict(mapping)
    if rest:
        updated[key] = _set_at(mapping.get(key), rest, value, where)
    elif value is None:
        updated.pop(key, None)
    else:
        updated[key] = value
    return updated


def _set_in_list(
    items: list[Any], index: int, rest: Sequence[PathSegment], value: Any, where: str
) -> list[Any]:
    if index > len(items) or (index == len(items) and value is None):
        raise OverrideError(
            f"{where}: index {index} is past the end of a list of {len(items)} "
            f"(use [{len(items)}] to append)"
        )
    updated = list(items)
    if index == len(items):
        updated.append(None)
    if rest:
        updated[index] = _set_at(updated[index], rest, value, where)
    elif value is None:
        del updated[index]
    else:
        updated[index] = value
    return updated


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a map"
    if isinstance(value, list):
        return "a list"
    return f"the value {shown(value)}"


# --- resolve --------------------------------------------------------------------------------


def _qualify(project: str, key: str) -> str:
    return key if ":" in key else f"{project}:{key}"


def _type_problem(key: str, declared: str | None, value: str, stack: str) -> Problem | None:
    if value == SECRET_PLACEHOLDER:
        return None
    ok = {
        "integer": bool(_INTEGER.match(value)) and _fits_int64(value),
        "boolean": value in {"true", "false"},
    }.get(str(declared), True)
    if ok:
        return None
    return Problem(key, f"must be of type '{declared}' (stack '{stack}'), got {shown(value)}")


def _fits_int64(text: str) -> bool:
    return len(text) <= 20 and _INT64_MIN <= int(text) <= _INT64_MAX


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
        _apply_override(override, _qualify(name, override.key), declared, values, secret_keys)
    problems += _apply_declarations(name, declared, values, stack)
    if problems:
        raise StackConfigError(problems)
    return StackValues(values, sorted(secret_keys))


def _stack_value(qualified: str, raw: Any, problems: list[Problem]) -> tuple[str, bool] | None:
    if raw is None:
        problems.append(Problem(qualified, "has no value; give it one or remove the line"))
        return None
    redacted, is_secret = _redact_secure(raw)
    try:
        return _as_config_string(redacted), is_secret
    except _ValueError as error:
        problems.append(Problem(f"{qualified}{error.path}", error.message))
        return None


def _apply_override(
    override: Override,
    qualified: str,
    declared: Mapping[str, Any],
    values: dict[str, str],
    secret_keys: set[str],
) -> None:
    if not override.path:
        values.pop(qualified, None)
        secret_keys.discard(qualified)
        if override.value is not None:
            values[qualified] = _as_config_string(override.value)
        return
    if qualified in secret_keys:
        raise OverrideError(
            f"{override.where}: {qualified} is a secret that cannot be decrypted offline; "
            "set the whole key instead"
        )
    project = qualified.partition(":")[0]
    current = _current_structure(project, qualified, declared, values, override.where)
    updated = _set_at(copy.deepcopy(current), override.path, override.value, override.where)
    values[qualified] = _as_config_string(updated)


def _current_structure(
    project: str,
    qualified: str,
    declared: Mapping[str, Any],
    values: Mapping[str, str],
    where: str,
) -> Any:
    """The key's map or list (from the stack, else the project default), or None."""
    if qualified in values:
        text = values[qualified]
        if text.lstrip()[:1] in {"{", "["}:
            return json.loads(text)
        raise OverrideError(f"{where}: {qualified} holds {shown(text)}, not a map or list")
    declaration = (
        declared.get(qualified.partition(":")[2]) if qualified.startswith(f"{project}:") else None
    )
    if isinstance(declaration, dict):
        default = declaration.get("default", declaration.get("value"))
        return default if isinstance(default, dict | list) else None
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
