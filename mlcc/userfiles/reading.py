"""One safe reader for the files a user gives: never a traceback, never a hang.

The file is opened with O_NONBLOCK, so a FIFO without a writer opens at once instead of waiting,
and its kind is read from the open descriptor (fstat), so a FIFO, a device or a folder is refused
before a byte is read and nothing can swap the file in between. Permission is the open's own
answer (so root reads what root may read). Text must be UTF-8; JSON must be JSON (RFC 8259 plus
the NaN and Infinity that Python's json module writes), nested at most `max_depth` levels, with
whole numbers of at most MAX_INT_DIGITS digits (Python refuses to convert more than 4300 anyway,
with a ValueError from deep inside the parser).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .paths import UserFileError, mode_kind, os_reason, refusal

MAX_READ_BYTES = 256 * 1024 * 1024  # far above any stack file, plan.json or bench.json
MAX_JSON_DEPTH = 64
MAX_INT_DIGITS = 100
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def read_bytes(path: Path, label: str = "", max_bytes: int = MAX_READ_BYTES) -> bytes:
    """The bytes of the regular file at `path`, or UserFileError naming it (`label path: why`)."""
    try:
        descriptor = os.open(path, _OPEN_FLAGS)
    except OSError as error:
        raise refusal(label, path, os_reason(error)) from None
    try:
        mode, size = (info := os.fstat(descriptor)).st_mode, info.st_size
        if not stat.S_ISREG(mode):
            raise refusal(label, path, f"is {mode_kind(mode)}, not a file")
        if size > max_bytes:
            raise refusal(label, path, _too_large(size, max_bytes))
        data = _read_all(descriptor, max_bytes + 1)
    except OSError as error:
        raise refusal(label, path, os_reason(error)) from None
    finally:
        os.close(descriptor)
    if len(data) > max_bytes:
        raise refusal(label, path, _too_large(len(data), max_bytes))
    return data


def _read_all(descriptor: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0 and (chunk := os.read(descriptor, min(left, 1 << 20))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _too_large(size: int, max_bytes: int) -> str:
    return f"is too large ({size:,} bytes; at most {max_bytes:,})"


def read_text(path: Path, label: str = "", max_bytes: int = MAX_READ_BYTES) -> str:
    """The UTF-8 text of the file at `path`, or UserFileError naming it."""
    data = read_bytes(path, label, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        byte = data[error.start]
        raise refusal(
            label, path, f"is not UTF-8 text (byte 0x{byte:02x} at offset {error.start})"
        ) from None


def read_json(
    path: Path,
    label: str = "",
    *,
    max_depth: int = MAX_JSON_DEPTH,
    max_bytes: int = MAX_READ_BYTES,
) -> Any:
    """The JSON document in the file at `path`, or UserFileError naming it."""
    problem, value = parse_json(read_text(path, label, max_bytes), max_depth)
    if problem is not None:
        raise refusal(label, path, problem)
    return value


def read_json_lines(
    path: Path, label: str = "", *, max_depth: int = MAX_JSON_DEPTH
) -> list[tuple[int, Any]]:
    """(line number, value) for every non-blank line of a JSON Lines file, or UserFileError
    naming the file and the line."""
    values: list[tuple[int, Any]] = []
    for number, line in enumerate(read_text(path, label).splitlines(), 1):
        if not line.strip():
            continue
        problem, value = parse_json(line, max_depth)
        if problem is not None:
            raise refusal(label, f"{path}:{number}", problem)
        values.append((number, value))
    return values


class _NumberTooLong(ValueError):
    pass


def _whole_number(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _NumberTooLong(f"holds a number of {digits} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def parse_json(text: str, max_depth: int = MAX_JSON_DEPTH) -> tuple[str | None, Any]:
    """(None, value) for JSON text, else (why it is refused, None). Never raises."""
    try:
        value = json.loads(text, parse_int=_whole_number)
    except _NumberTooLong as error:
        return str(error), None
    except json.JSONDecodeError as error:
        return f"is not JSON ({error.msg} at line {error.lineno}, column {error.colno})", None
    except RecursionError:  # nesting beyond the parser's own limit
        return f"is nested deeper than {max_depth} levels", None
    except ValueError as error:
        return f"is not JSON ({error})", None
    if depth_of(value) > max_depth:
        return f"is nested deeper than {max_depth} levels", None
    return None, value


def depth_of(value: Any) -> int:
    """How many maps and lists deep `value` goes (0 for a number or a string), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth + 1)
            stack.extend((child, depth + 1) for child in item)
    return deepest


def dig(value: Any, *keys: str) -> Any:
    """The value at `keys` inside JSON-shaped `value` (maps within maps), None when a key is
    absent or a step is not a map."""
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


__all__ = ["UserFileError", "parse_json", "read_bytes", "read_json", "read_json_lines", "read_text"]
