"""Setting fields of one `hp:endpoints` entry in a Pulumi.<stack>.yaml text, keeping every other
byte (the line edit of `mlcc.stackfiles.edit`, one level down).

The entry must be a block sequence item (`- name: chat` and its fields on their own lines, as
docs/endpoints.md writes them). An existing field gets its new value on its own line (its inline
comment kept); a new field goes after the item's last field. The result is parsed again and must
differ from the original only in the requested fields of that entry; otherwise StackEditError
is raised and nothing should be written.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from mlcc.stackfiles.edit import (
    _KEY_LINE,
    PROJECT,
    ScalarValue,
    StackEditError,
    _config_line,
    _entries,
    _indent,
    _inline_comment,
    _load_config,
    _newline_of,
    _render_like,
    _shown,
    render_scalar,
)

LIST_KEY = "endpoints"


def set_entry_keys(
    text: str, index: int, values: Mapping[str, ScalarValue]
) -> tuple[str, list[str]]:
    """Set fields of `hp:endpoints[index]`; returns (text, changes)."""
    qualified = f"{PROJECT}:{LIST_KEY}"
    path = f"{qualified}[{index}]"
    current = _load_config(text)
    entries = current.get(qualified)
    if not isinstance(entries, list) or not 0 <= index < len(entries):
        raise StackEditError(f"{path} is not in this file; set the keys by hand")
    old_entry = entries[index]
    if not isinstance(old_entry, dict):
        raise StackEditError(f"{path} is not a map; set the keys by hand")
    lines = text.splitlines(keepends=True)
    newline = _newline_of(lines)
    first, end = _item_span(lines, qualified, index)
    changes = []
    for key, value in values.items():
        if key in old_entry and old_entry[key] == value:
            changes.append(f"{path}.{key}: {_shown(value)} (unchanged)")
            continue
        lines, end = _set_field(lines, first, end, key, value, newline)
        was = f"was {_shown(old_entry[key])}" if key in old_entry else "new"
        changes.append(f"{path}.{key}: {_shown(value)} ({was})")
    new_text = "".join(lines)
    expected = copy.deepcopy(current)
    expected[qualified] = [*entries[:index], {**old_entry, **values}, *entries[index + 1 :]]
    if _load_config(new_text) != expected:
        raise StackEditError(
            f"could not set {', '.join(values)} of {path} safely in this file's layout; set "
            "them by hand"
        )
    return new_text, changes


def _item_span(lines: list[str], qualified: str, index: int) -> tuple[int, int]:
    """The lines of the index-th `- ` item of the block sequence under `qualified`."""
    config_line = _config_line(lines)
    entry = next((e for e in _entries(lines, config_line or 0) if e.key == qualified), None)
    if config_line is None or entry is None:
        raise StackEditError(f"{qualified} is not a top-level key of `config:`")
    items: list[int] = []
    dash: int | None = None
    for number in range(entry.first + 1, entry.end):
        stripped = lines[number].strip()
        if not stripped or stripped.startswith("#"):
            continue
        dash = _indent(lines[number]) if dash is None else dash
        if _indent(lines[number]) == dash and (stripped == "-" or stripped.startswith("- ")):
            items.append(number)
    if index >= len(items):
        raise StackEditError(
            f"{qualified} is not written as a block list (`- name: ...` lines); set the keys "
            "by hand"
        )
    first = items[index]
    end = items[index + 1] if index + 1 < len(items) else entry.end
    while end - 1 > first and (
        not lines[end - 1].strip() or lines[end - 1].strip().startswith("#")
    ):
        end -= 1  # trailing blank lines and comments introduce what follows
    return first, end


def _set_field(
    lines: list[str], first: int, end: int, key: str, value: ScalarValue, newline: str
) -> tuple[list[str], int]:
    head = lines[first]
    column = _indent(head) + 2  # the fields' column: after "- "
    if head.strip() == "-":
        raise StackEditError("an item written `-` then its fields is not handled; set it by hand")
    for number in range(first, end):
        body = lines[number].rstrip("\r\n")
        at = column if number > first else _indent(head) + 2
        if number > first and _indent(body) != column:
            continue
        match = _KEY_LINE.match(body[at:])
        if match is None or match.group("key").strip("'\"") != key:
            continue
        following = number + 1
        if following < end and lines[following].strip() and _indent(lines[following]) > column:
            raise StackEditError(f"{key} spans several lines; set it by hand")
        ending = lines[number][len(body) :] or newline
        rest = body[at + len(match.group(0)) :]
        comment = _inline_comment(rest)
        old = rest[: len(rest) - len(comment)].strip()
        line = f"{body[: at + len(match.group(0))]} {_render_like(value, old)}{comment}{ending}"
        return [*lines[:number], line, *lines[number + 1 :]], end
    last = lines[end - 1]
    if not last.endswith(("\n", "\r")):
        lines = [*lines[: end - 1], last + newline, *lines[end:]]
    line = f"{' ' * column}{key}: {render_scalar(value)}{newline}"
    return [*lines[:end], line, *lines[end:]], end + 1
