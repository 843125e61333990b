"""Numbers a user types on the command line, each read by one rule: decimal text within the
flag's bounds, or one ValueError line that shows the text safely (quoted, control characters
escaped, cut at 40 characters). `flag_type` and `whole_flag_type` make the same rules an argparse
`type=`."""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable

SHOWN_CHARACTERS = 40
_INTEGER = re.compile(r"([+-]?)([0-9]+)")


def shown(text: str, most: int = SHOWN_CHARACTERS) -> str:
    """The user's text in an error line: quoted, control characters escaped, cut when long."""
    cut = text if len(text) <= most else text[:most] + "..."
    return repr(cut)


def number(
    text: str, unit: str, least: float, most: float, *, above: bool = False, note: str = ""
) -> float:
    """A finite number from `least` (more than `least` when `above`) to `most`. `unit` names
    what it counts ("" for a plain number); `note` follows the bounds in the refusal."""
    try:
        value = float(text)
    except ValueError:
        of_unit = f" of {unit}" if unit else ""
        raise ValueError(f"{shown(text)} is not a number{of_unit}") from None
    low_ok = value > least if above else value >= least
    if not (math.isfinite(value) and low_ok and value <= most):
        bound = f"more than {least:g} and at most" if above else f"from {least:g} to"
        said = " ".join(part for part in (f"{most:g}", unit, note) if part)
        raise ValueError(f"{shown(text)} must be {bound} {said}")
    return value


def whole_number(text: str, most: int, least: int = 1) -> int:
    """An integer from `least` to `most`, written in decimal digits (never a 5,000-digit one)."""
    match = _INTEGER.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{shown(text)} is not a whole number")
    sign, digits = match.groups()
    too_long = len(digits.lstrip("0")) > len(str(most))
    value = 0 if too_long else int(sign + digits)
    if too_long or not least <= value <= most:
        raise ValueError(f"{shown(text)} must be from {least:,} to {most:,}")
    return value


def flag_type(
    unit: str, least: float, most: float, *, above: bool = False, note: str = ""
) -> Callable[[str], float]:
    """`number` as an argparse type: the refusal becomes argparse's `error: --flag: ...`."""

    def parse(text: str) -> float:
        try:
            return number(text, unit, least, most, above=above, note=note)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return parse


def whole_flag_type(most: int, least: int = 1) -> Callable[[str], int]:
    """`whole_number` as an argparse type: the refusal becomes argparse's `error: --flag: ...`."""

    def parse(text: str) -> int:
        try:
            return whole_number(text, most, least)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return parse
