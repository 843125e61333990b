"""Typed reads of raw stack values that record a Problem instead of raising.

One `Problems` sink collects every error and warning of a parse, so all of them are reported at
once. A `Reader` reads top-level `hp:*` values (strings, as Pulumi hands them to a program); an
entry reader (`Reader.for_entry`) reads one `hp:endpoints[i]` entry first and falls back to the
top-level value; its messages name the entry's key, and say when the value was inherited.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from mlcc.config.schema import KEYS_BY_NAME, PROJECT
from mlcc.engine_contract.values import shown_value
from mlcc.serving.speculative import Problem

# Far above any real count; int() of a longer string is slow and Python refuses > 4300 digits.
_MAX_DIGITS = 18
_INTEGER = re.compile(r"^[+-]?[0-9]+$")  # ASCII digits only: "²" or "٣" are not config integers


@dataclass
class Problems:
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    def unique_errors(self) -> list[Problem]:
        return _in_key_order(self.errors)

    def unique_warnings(self) -> list[Problem]:
        return _in_key_order(self.warnings)


_KEY_ORDER = {name: index for index, name in enumerate(KEYS_BY_NAME)}


def _in_key_order(problems: list[Problem]) -> list[Problem]:
    """Once each, in the order of the key table (provider keys first), then as found."""

    def rank(problem: Problem) -> int:
        if not problem.key.startswith(f"{PROJECT}:"):
            return -1
        name = re.split(r"[.\[]", problem.key.removeprefix(f"{PROJECT}:"), maxsplit=1)[0]
        return _KEY_ORDER.get(name, len(_KEY_ORDER))

    return sorted(dict.fromkeys(problems), key=rank)


def config_string(value: object) -> str:
    """A structured value as the Pulumi CLI hands it to a program (maps and lists as JSON)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def parse_integer(text: str) -> int | None:
    """An ASCII whole number of sane length, or None."""
    text = text.strip()
    if not _INTEGER.match(text) or len(text.lstrip("+-")) > _MAX_DIGITS:
        return None
    return int(text)


def decode_json(text: str) -> object:
    """A JSON value; a string that is not JSON is returned as it is (a bare CLI string)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


class Reader:
    def __init__(
        self,
        values: Mapping[str, str],
        problems: Problems | None = None,
        *,
        entry: Mapping[str, object] | None = None,
        entry_path: str = "",
    ) -> None:
        self.values = values
        self.problems = problems if problems is not None else Problems()
        self.entry = entry or {}
        self.entry_path = entry_path

    def for_entry(self, entry: Mapping[str, object], entry_path: str) -> Reader:
        return Reader(self.values, self.problems, entry=entry, entry_path=entry_path)

    def key(self, path: str) -> str:
        """`hp:<path>`, or `hp:endpoints[i].<path>` for an entry reader."""
        if self.entry_path:
            return f"{PROJECT}:{self.entry_path}.{path}"
        return f"{PROJECT}:{path}"

    def fail(self, path: str, message: str) -> None:
        self.problems.errors.append(self.problem(path, message))

    def warn(self, path: str, message: str) -> None:
        self.problems.warnings.append(self.problem(path, message))

    def problem(self, path: str, message: str) -> Problem:
        """The Problem `fail` or `warn` would record, for a caller that reports it later."""
        return Problem(self.key(path), self._origin(path, message))

    def relay(self, problem: Problem) -> Problem:
        """A problem of the pure speculative checks (`hp:key`), named as this reader names keys."""
        return self.problem(problem.key.removeprefix(f"{PROJECT}:"), problem.message)

    def _origin(self, path: str, message: str) -> str:
        """One line; an entry's problem with a value it inherits says where that value is set."""
        name = re.split(r"[.\[]", path, maxsplit=1)[0]
        inherited = name in KEYS_BY_NAME and name not in self.entry and self.present(name)
        if self.entry_path and inherited:
            message = f"{message} (inherited from {PROJECT}:{name})"
        return " ".join(message.split())

    def present(self, name: str) -> bool:
        """True when the entry or the stack gives the key a value (even an empty one)."""
        return name in self.entry or KEYS_BY_NAME[name].qualified in self.values

    def is_set(self, name: str) -> bool:
        """True when the value differs from the declared default (defaults are merged in)."""
        key = KEYS_BY_NAME[name]
        if key.required:
            return bool(self.raw(name).strip())
        return self.raw(name).strip() != config_string(key.default)

    def raw(self, name: str) -> str:
        key = KEYS_BY_NAME[name]
        if name in self.entry:
            return config_string(self.entry[name])
        value = self.values.get(key.qualified)
        if value is not None:
            return value
        if key.required:
            self.fail(name, f"is required; set it with `pulumi config set {key.qualified} ...`")
            return ""
        return config_string(key.default)

    def string(self, name: str) -> str:
        return self.raw(name).strip()

    def integer(self, name: str, *, optional: bool = False) -> int | None:
        text = self.raw(name).strip()
        if optional and text == "":
            return None
        number = parse_integer(text)
        if number is None:
            self.fail(name, f"must be a whole number, got {shown_value(text)}")
        return number

    def boolean(self, name: str) -> bool:
        text = self.string(name).lower()
        if text not in {"true", "false"}:
            self.fail(name, f"must be true or false, got {shown_value(text)}")
        return text == "true"

    def structured(self, name: str) -> object:
        """The decoded JSON value of a map/list key; None when empty."""
        text = self.raw(name).strip()
        return decode_json(text) if text else None

    def mapping(self, name: str, what: str) -> dict[str, object]:
        value = self.structured(name)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(name, f"must be a map of {what}, such as {{key: value}}")
            return {}
        return value
