"""`--set KEY=VALUE` overrides, parsed and applied as `pulumi config set [--path]` does.

`hp:engine=sglang` replaces a whole key; `hp:tags.owner=alice`, `hp:tags["a.b"]=c` and
`hp:instanceGroups[0].instanceCount=2` edit the key's map or list (from the stack, else the
project default) and re-serialise it. A map or list value is accepted as JSON or YAML flow
syntax; inside a path, `true`/`false` and 64-bit integers keep their type. `KEY=` removes the
key or the path's entry. A malformed override raises `OverrideError` with one line naming
what to change.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mlcc.stackfiles.yaml_reader import (
    MAX_DEPTH,
    OverrideError,
    as_config_string,
    is_int64,
    parse_structured,
    shown,
)

# `--set` keys: `hp:key`, then `.field`, `[0]` or `["field.with.dots"]` segments.
_KEY_HEAD = re.compile(r"^[^.\[\]\s]+")
_PATH_SEGMENT = re.compile(r'\.([^.\[\]"\s]+)|\.?\[([0-9]+)\]|\.?\["((?:[^"\\]|\\.)*)"\]')
# A list index past any list a stack holds; more digits would only cost a huge int (or, past
# 4300 digits, Python's ValueError) before the "past the end" line.
MAX_INDEX_DIGITS = 9
_SHOWN_KEY_CHARS = 200  # a longer key is cut in error lines

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
        return f"--set {_short(self.text)}"


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
    """One override from its key text and value text (None: remove); OverrideError if bad."""
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
        if index is not None and len(index.lstrip("0")) > MAX_INDEX_DIGITS:
            raise OverrideError(
                f"--set {shown(key_text, quoted=False)}: list index {shown(index)} is too large "
                f"(at most {MAX_INDEX_DIGITS} digits); use [n] with n at most the list's length"
            )
        path.append(int(index) if index is not None else field_name or _unescape(quoted))
        if len(path) > MAX_DEPTH:  # the value could not nest deeper anyway (check_value)
            raise OverrideError(
                f"--set {_short(key_text)}: a path of more than {MAX_DEPTH} segments; "
                "set the whole key instead"
            )
        rest = rest[segment.end() :]
    where = f"--set {_short(key_text)}"
    value = None if value_text is None else _override_value(value_text, bool(path), where)
    return Override(head.group(), tuple(path), value, key_text)


def _short(key_text: str) -> str:
    if len(key_text) <= _SHOWN_KEY_CHARS:
        return key_text
    return f"{key_text[:_SHOWN_KEY_CHARS]}... ({len(key_text)} characters)"


def _unescape(quoted: str) -> str:
    return re.sub(r"\\(.)", r"\1", quoted)


def _override_value(text: str, in_path: bool, where: str) -> Any:
    if text.lstrip()[:1] in {"{", "["}:
        return parse_structured(text, where)
    if in_path:  # like `pulumi config set --path`: booleans and integers keep their type
        if text in {"true", "false"}:
            return text == "true"
        if is_int64(text):
            return int(text)
    return text


# --- applying -------------------------------------------------------------------------------


def apply_override(
    override: Override,
    qualified: str,
    declared: Mapping[str, Any],
    values: dict[str, str],
    secret_keys: set[str],
) -> None:
    """Apply `override` to the key `qualified` in `values` (and `secret_keys`), in place.

    `declared` is the project's `config:` block, whose defaults a path edit starts from.
    """
    if not override.path:
        values.pop(qualified, None)
        secret_keys.discard(qualified)
        if override.value is not None:
            values[qualified] = as_config_string(override.value)
        return
    if qualified in secret_keys:
        raise OverrideError(
            f"{override.where}: {qualified} is a secret that cannot be decrypted offline; "
            "set the whole key instead"
        )
    project = qualified.partition(":")[0]
    current = _current_structure(project, qualified, declared, values, override.where)
    updated = set_at(copy.deepcopy(current), override.path, override.value, override.where)
    values[qualified] = as_config_string(updated)


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


def set_at(container: Any, path: Sequence[PathSegment], value: Any, where: str) -> Any:
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
        updated[key] = set_at(mapping.get(key), rest, value, where)
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
        updated[index] = set_at(updated[index], rest, value, where)
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
