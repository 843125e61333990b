"""Text, counts and model references: the values every setting is checked against."""

from __future__ import annotations

import json
import re

MAX_SHOWN = 60
MAX_COUNT_DIGITS = 9  # far above any real count, far below int()'s 4300-digit limit
# ASCII digits only: str.isdigit() and int() also take "٣" and full-width digits.
_COUNT = re.compile(rf"[0-9]{{1,{MAX_COUNT_DIGITS}}}")
_HUB_PART = r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}"
_HUB_ID = re.compile(rf"{_HUB_PART}/{_HUB_PART}")
_ABSOLUTE_PATH = re.compile(r"/[A-Za-z0-9._/-]{1,4095}")
_URI_OR_ARN = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://|arn:|s3:)", re.IGNORECASE)
# A run of ASCII digits, cut so that int() never meets thousands of them.
_VERSION_NUMBER = re.compile(r"[0-9]{1,18}")


def shown_value(value: str) -> str:
    """A value for an error line: quoted, escaped, and cut when long."""
    if len(value) > MAX_SHOWN:
        return f"{value[:MAX_SHOWN]!r}... ({len(value)} characters)"
    return repr(value)


def printable(text: str) -> str:
    """Text for one printed line, whatever it held: control and other unprintable characters
    (newlines, escape sequences, bidi marks) escaped as Python writes them (`\\x1b`, `\\n`)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def text_problem(value: str) -> str | None:
    """Why `value` cannot travel as an env value or argument: undecodable bytes, NUL."""
    if "\0" in value:
        return "contains a NUL character; remove it"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid UTF-8 text; set it again as plain text"
    return None


def parse_count(value: object) -> int | None:
    """A positive whole number from a string of ASCII digits (or a JSON integer), else None.

    Unicode digits ("²", "٣", full-width) and thousands of digits are refused, never raised on.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 < value < 10**MAX_COUNT_DIGITS else None
    if isinstance(value, str) and _COUNT.fullmatch(value.strip()):
        number = int(value.strip())
        return number if number > 0 else None
    return None


def count_problem(value: object) -> str | None:
    if parse_count(value) is not None:
        return None
    shown = shown_value(value) if isinstance(value, str) else repr(value)[:MAX_SHOWN]
    return (
        f"must be a positive whole number in ASCII digits (at most {MAX_COUNT_DIGITS}), not {shown}"
    )


def version_key(version: object) -> tuple[int, ...]:
    """The numbers of a version, in order, to sort and compare versions as numbers.

    Every version this program orders goes through it: engine releases ('0.5.17' -> (0, 5, 17)),
    NVIDIA drivers ('580.126.09'), CUDA versions, Kubernetes versions ('1.33', 'v1.33') and EKS
    add-on versions ('v1.2.0-eksbuild.3' -> (1, 2, 0, 3)). Anything but ASCII digits separates
    numbers; trailing zeros do not count ('1.33' and '1.33.0' are one version); a number is
    read as its text (1.33 -> (1, 33)); no number at all (None, '', 'latest') is (), below
    every version. Never raises. Pre-release tags are not understood: '0.6.0rc1' -> (0, 6, 0,
    1), so only released versions are ordered with it.
    """
    numbers = [int(run) for run in _VERSION_NUMBER.findall("" if version is None else str(version))]
    while numbers and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers)


def is_hf_id(value: str) -> bool:
    """org/name as the Hugging Face Hub spells repositories (no `..` or `--`)."""
    return bool(_HUB_ID.fullmatch(value)) and ".." not in value and "--" not in value


def _reference_shape_problem(value: str, what: str) -> str | None:
    """The problems shared by every model reference: blank, spacing, flags, relative paths."""
    if not value.strip():
        return f"is empty; set {what}"
    if value != value.strip():
        return f"{shown_value(value)} has spaces around it; remove them"
    if (problem := text_problem(value)) is not None:
        return problem
    if value.startswith("-"):
        return f"{shown_value(value)} starts with '-', which the engine reads as a flag; set {what}"
    if value.startswith(("./", "../", "~")) or value in {".", ".."}:
        return f"{shown_value(value)} is a relative path; set {what}"
    return None


def model_id_problem(value: str) -> str | None:
    """Why `value` is not a target model id: a Hugging Face Hub id (org/name)."""
    what = "a Hugging Face model id (org/name)"
    if (problem := _reference_shape_problem(value, what)) is not None:
        return problem
    if len(value) > 193:
        return f"{shown_value(value)} is too long for a Hub id (org and name at most 96 each)"
    if not is_hf_id(value):
        return (
            f"{shown_value(value)} is not {what}: letters, digits, '.', '_', '-' around one '/', "
            "no '..' or '--'"
        )
    return None


def draft_model_problem(value: str) -> str | None:
    """Why `value` cannot be a draft (or served) model: a Hub id or a clean absolute path."""
    what = "a Hugging Face id (org/name) or an absolute path in the image"
    if (problem := _reference_shape_problem(value, what)) is not None:
        return problem
    if _URI_OR_ARN.match(value):
        return (
            f"{shown_value(value)} is a URI or ARN; the engines download models from the Hugging "
            "Face Hub only. Push it to the Hub and give its id (org/name), or bake it into the "
            "image and give its absolute path"
        )
    if value.startswith("/"):
        clean = _ABSOLUTE_PATH.fullmatch(value) and "//" not in value
        segments = value.strip("/").split("/")
        if clean and not {".", ".."} & set(segments):
            return None
        return (
            f"{shown_value(value)} is not a clean absolute path (letters, digits, . _ - / only; "
            "no '//', '.' or '..' segments)"
        )
    if is_hf_id(value):
        return None
    return f"{shown_value(value)} is not {what}"


def json_object(value: str) -> dict[str, object] | None:
    """A JSON object, or None for anything else (bad JSON, NaN, nesting or numbers too big)."""

    def refuse_constant(name: str) -> object:
        raise ValueError(name)

    try:
        parsed = json.loads(value, parse_constant=refuse_constant)
    except (ValueError, RecursionError):
        return None
    if not isinstance(parsed, dict):
        return None
    return {str(key).replace("-", "_"): item for key, item in parsed.items()}
