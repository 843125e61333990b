"""Setting top-level `config:` keys in a Pulumi.<stack>.yaml text, keeping every other byte.

A line edit, not a YAML round trip: comments, blank lines, quoting, key order and line endings
(LF or CRLF) stay as they were. An existing key gets its new value on its own line (its inline
comment stays); a new key goes after the last entry of `config:`, before any comment block that
closes it. The result is parsed again and must hold exactly the requested values, otherwise
StackEditError is raised and nothing should be written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

PROJECT = "hp"
DEFAULT_INDENT = 2
ScalarValue = str | int
# A list of flat maps of whole numbers (hp:speculativeSchedule), written one flow map a line.
ListValue = list[dict[str, int]]
Value = ScalarValue | ListValue

# `key:` at the start of a (stripped) line: plain or quoted key, then ':' and a space or the end.
_KEY_LINE = re.compile(r"""(?P<key>"[^"]*"|'[^']*'|[^\s#'"][^#]*?):(?=\s|$)""")
_PLAIN_SCALAR = re.compile(r"[A-Za-z][A-Za-z0-9_./-]*")
_YAML_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "null", "y", "n"})


class StackEditError(Exception):
    """The file cannot be edited safely; the message says what to do instead."""


@dataclass(frozen=True)
class _Entry:
    key: str
    first: int  # index of the key line
    end: int  # index after its last line (continuation lines of a block value included)


def set_config_keys(text: str, values: Mapping[str, Value]) -> tuple[str, list[str]]:
    """Set `hp:<key>` (or a bare `<key>` already present) for each key; returns (text, changes)."""
    current = _load_config(text)
    lines = text.splitlines(keepends=True)
    newline = _newline_of(lines)
    config_line = _config_line(lines)
    if config_line is None:
        lines = [*_ensure_final_newline(lines, newline), f"config:{newline}"]
        config_line = len(lines) - 1
    changes: list[str] = []
    for key, value in values.items():
        qualified = f"{PROJECT}:{key}"
        target = key if key in current and qualified not in current else qualified
        if target in current and current[target] == value:
            changes.append(f"{qualified}: {_shown(value)} (unchanged)")
            continue
        lines = _set_line(lines, config_line, target, value, newline)
        was = f"was {_shown(current[target])}" if target in current else "new"
        changes.append(f"{qualified}: {_shown(value)} ({was})")
    new_text = "".join(lines)
    written = _load_config(new_text)
    wrong = [key for key, value in values.items() if _value_of(written, key) != value]
    if wrong:
        raise StackEditError(
            f"could not set {', '.join(wrong)} safely in this file's layout; set them with "
            "`pulumi config set`"
        )
    return new_text, changes


def _shown(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_flow_map(item) for item in value) + "]"
    return repr(value)


def _flow_map(item: object) -> str:
    """`{from: 1, to: 8, tokens: 5}`: plain keys, whole numbers (anything else as repr)."""
    if not isinstance(item, dict):
        return repr(item)
    return "{" + ", ".join(f"{key}: {_shown_item(v)}" for key, v in item.items()) + "}"


def _shown_item(value: object) -> str:
    return render_scalar(value) if isinstance(value, int | str) else repr(value)


def _list_lines(value: ListValue, indent: int, newline: str) -> list[str]:
    for item in value:
        if not all(_PLAIN_SCALAR.fullmatch(key) and type(v) is int for key, v in item.items()):
            raise StackEditError(f"cannot write {_shown(value)} as a list of flow maps")
    return [f"{' ' * (indent + DEFAULT_INDENT)}- {_flow_map(item)}{newline}" for item in value]


def render_scalar(value: ScalarValue) -> str:
    """A YAML scalar that reads back as `value` (plain when unambiguous, else double-quoted)."""
    if isinstance(value, int):
        return str(value)
    if _PLAIN_SCALAR.fullmatch(value) and value.lower() not in _YAML_WORDS:
        return value
    return _double_quoted(value)


def _double_quoted(text: str) -> str:
    """A YAML double-quoted scalar: printable ASCII as is, everything else escaped."""
    return '"' + "".join(_escaped(char) for char in text) + '"'


def _escaped(char: str) -> str:
    code = ord(char)
    if char in '"\\':
        return "\\" + char
    if 0x20 <= code < 0x7F:
        return char
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _set_line(
    lines: list[str], config_line: int, key: str, value: Value, newline: str
) -> list[str]:
    entries = _entries(lines, config_line)
    entry = next((e for e in entries if e.key == key), None)
    if entry is None:
        indent = _indent(lines[entries[0].first]) if entries else DEFAULT_INDENT
        at = entries[-1].end if entries else config_line + 1
        lines = _ensure_final_newline(lines[:at], newline) + lines[at:]
        if isinstance(value, list):
            block = [f"{' ' * indent}{key}:{newline}", *_list_lines(value, indent, newline)]
            return [*lines[:at], *block, *lines[at:]]
        new_line = f"{' ' * indent}{key}: {render_scalar(value)}{newline}"
        return [*lines[:at], new_line, *lines[at:]]
    line = lines[entry.first]
    body = line.rstrip("\r\n")
    ending = line[len(body) :] or newline
    match = _KEY_LINE.match(body.lstrip())
    assert match is not None  # _entries only returns key lines
    head = body[: _indent(body)] + match.group(0)
    rest = body[len(head) :] if entry.end - entry.first == 1 else ""
    comment = _inline_comment(rest)
    old_scalar = rest[: len(rest) - len(comment)].strip()
    if isinstance(value, list):
        block = [f"{head}{comment}{ending}", *_list_lines(value, _indent(body), ending)]
        return [*lines[: entry.first], *block, *lines[entry.end :]]
    new_line = f"{head} {_render_like(value, old_scalar)}{comment}{ending}"
    return [*lines[: entry.first], new_line, *lines[entry.end :]]


def _render_like(value: ScalarValue, old_scalar: str) -> str:
    """`value` in the quoting style of the scalar it replaces, when that style can hold it."""
    if isinstance(value, str) and old_scalar.startswith("'"):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, str) and old_scalar.startswith('"'):
        return _double_quoted(value)
    return render_scalar(value)


def _inline_comment(rest: str) -> str:
    """The ` # ...` tail of a value (outside quotes), with its leading spaces, or ""."""
    quote: str | None = None
    for index, char in enumerate(rest):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or rest[index - 1] in " \t"):
            start = len(rest[:index].rstrip(" \t"))
            return rest[start:]
    return ""


def _entries(lines: list[str], config_line: int) -> list[_Entry]:
    """The top-level keys of the `config:` block, each with the lines its value spans."""
    block_end = _block_end(lines, config_line)
    indent: int | None = None
    starts: list[tuple[str, int]] = []
    for index in range(config_line + 1, block_end):
        stripped = lines[index].strip()
        if not stripped or stripped.startswith("#"):
            continue
        width = _indent(lines[index])
        indent = width if indent is None else indent
        match = _KEY_LINE.match(stripped)
        if width == indent and match:
            starts.append((match.group("key").strip("'\""), index))
    entries = []
    for position, (key, first) in enumerate(starts):
        limit = starts[position + 1][1] if position + 1 < len(starts) else block_end
        entries.append(_Entry(key, first, _last_content(lines, first, limit) + 1))
    return entries


def _block_end(lines: list[str], config_line: int) -> int:
    """Index of the first line after `config:` that starts a new top-level item."""
    for index in range(config_line + 1, len(lines)):
        line = lines[index]
        if line.strip() and not line[0].isspace() and not line.startswith("#"):
            return index
    return len(lines)


def _last_content(lines: list[str], first: int, limit: int) -> int:
    """The last line of an entry. Trailing blank lines and comments at the key's indentation or
    less are not part of it: they introduce what follows, or close the block."""
    last, indent = first, _indent(lines[first])
    for index in range(first + 1, limit):
        stripped = lines[index].strip()
        if stripped and (not stripped.startswith("#") or _indent(lines[index]) > indent):
            last = index
    return last


def _config_line(lines: list[str]) -> int | None:
    for index, line in enumerate(lines):
        if re.match(r"config:\s*(#.*)?$", line.rstrip("\r\n")):
            return index
        if re.match(r"config:", line):
            raise StackEditError(
                "`config:` is written inline; set the keys with `pulumi config set` instead"
            )
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _newline_of(lines: list[str]) -> str:
    return "\r\n" if lines and lines[0].endswith("\r\n") else "\n"


def _ensure_final_newline(lines: list[str], newline: str) -> list[str]:
    if lines and not lines[-1].endswith(("\n", "\r")):
        return [*lines[:-1], lines[-1] + newline]
    return lines


def _load_config(text: str) -> dict[str, object]:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        document = YAML(typ="safe").load(text)
    except YAMLError as error:
        raise StackEditError(f"not valid YAML ({str(error).splitlines()[0]})") from None
    config = document.get("config") if isinstance(document, dict) else None
    if config is not None and not isinstance(config, dict):
        raise StackEditError("`config:` must be a map")
    return dict(config or {})


def _value_of(config: Mapping[str, object], key: str) -> object:
    return config.get(f"{PROJECT}:{key}", config.get(key))
