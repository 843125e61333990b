"""One typed reader for the values preflight takes from a model's config.json.

JSON lets a config say anything where a size belongs: a string, a boolean, NaN or Infinity
(Python's json module reads both), a negative or zero size, a number of thousands of digits.
The engines would fail on each of them (transformers keeps the value as it is, and vLLM's and
SGLang's arithmetic on it raises) or, worse, compute a figure from it. Preflight takes a size only
when it is a whole number from 1 to MAX_SIZE, and says otherwise in one line naming the key.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

# No dimension, count or length of any model comes near 2^31 (the largest vocabularies are
# about 2^18, the longest contexts 2^24); a value above it is not a model's.
MAX_SIZE = 2**31 - 1
# A RoPE scaling factor above this would give a context beyond MAX_SIZE for any base length.
MAX_FACTOR = 1e6


class BadValue(ValueError):
    """A config.json value that is not what its key holds."""


def shown(value: object) -> str:
    """A short, exact description of a JSON value, never thousands of characters."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        digits = len(str(abs(value))) if abs(value) < 10**100 else 101
        return str(value) if digits <= 20 else f"a number of {digits}+ digits"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else f"{value[:37]!r}..."
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    return "null" if value is None else type(value).__name__


def size(config: Mapping[str, object], key: str) -> int | None:
    """`key` as a whole number from 1 to MAX_SIZE; None when absent (or null)."""
    return _whole(config, key, 1)


def count(config: Mapping[str, object], key: str) -> int | None:
    """`key` as a whole number from 0 to MAX_SIZE (a count of layers may be 0)."""
    return _whole(config, key, 0)


def _whole(config: Mapping[str, object], key: str, least: int) -> int | None:
    value = config.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= MAX_SIZE:
        raise BadValue(f"{key} is {shown(value)}, not a whole number from {least} to {MAX_SIZE:,}")
    return value


def length(config: Mapping[str, object], key: str) -> float | None:
    """A context length: a positive number up to MAX_SIZE (some configs write 8192.0)."""
    wanted = f"a length from 1 to {MAX_SIZE:,} tokens"
    return _real(config, key, lambda value: 1 <= value <= MAX_SIZE, wanted)


def factor(config: Mapping[str, object], key: str) -> float | None:
    """A scaling factor: a positive finite number up to MAX_FACTOR."""
    wanted = f"a factor above 0 and at most {MAX_FACTOR:g}"
    return _real(config, key, lambda value: 0 < value <= MAX_FACTOR, wanted)


def _real(
    config: Mapping[str, object], key: str, within: Callable[[float], bool], wanted: str
) -> float | None:
    """`key` as a finite number (not a boolean) for which `within` holds; None when absent."""
    value = config.get(key)
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not within(value)
    ):
        raise BadValue(f"{key} is {shown(value)}, not {wanted}")
    return float(value)


def text(config: Mapping[str, object], key: str) -> str | None:
    """`key` as a string; None when absent (or null)."""
    value = config.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadValue(f"{key} is {shown(value)}, not a name")
    return value


def section(config: Mapping[str, object], key: str) -> Mapping[str, object] | None:
    """`key` as a JSON object; None when absent (or null)."""
    value = config.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise BadValue(f"{key} is {shown(value)}, not an object")
    return value
