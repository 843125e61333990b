"""One rule for every number typed on the command line (mlcc.userfiles.numbers): decimal text
within the flag's bounds, or one line that echoes at most 40 characters of the text."""

from __future__ import annotations

import argparse
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlcc.userfiles.numbers import SHOWN_CHARACTERS, flag_type, number, shown, whole_number


@pytest.mark.parametrize(
    ("text", "above", "message"),
    [
        ("0", True, "'0' must be more than 0 and at most 60 minutes"),
        ("0", False, None),
        ("60", True, None),
        ("60.5", False, "'60.5' must be from 0 to 60 minutes"),
        ("nan", False, "'nan' must be from 0 to 60 minutes"),
        ("-inf", False, "'-inf' must be from 0 to 60 minutes"),
        ("1e400", False, "'1e400' must be from 0 to 60 minutes"),
        ("ten", False, "'ten' is not a number of minutes"),
        ("", False, "'' is not a number of minutes"),
    ],
)
def test_a_number_is_within_its_bounds_or_one_line_says_which(
    text: str, above: bool, message: str | None
) -> None:
    if message is None:
        assert number(text, "minutes", 0, 60, above=above) == float(text)
        return
    with pytest.raises(ValueError) as refused:
        number(text, "minutes", 0, 60, above=above)
    assert str(refused.value) == message


def test_a_plain_number_has_no_unit_and_may_carry_a_note() -> None:
    with pytest.raises(ValueError, match=r"^'2' must be from 0 to 1 \(0\.5 = 50%\)$"):
        number("2", "", 0, 1, note="(0.5 = 50%)")
    with pytest.raises(ValueError, match=r"^'x' is not a number$"):
        number("x", "", 0, 1)


def test_the_echo_is_cut_and_escaped() -> None:
    text = "\x1b[31m" + "9" * 5000
    line = shown(text)
    assert "\x1b" not in line and len(line) <= SHOWN_CHARACTERS + 8
    with pytest.raises(ValueError) as refused:
        whole_number(text, 100)
    assert len(str(refused.value)) < 120


@given(st.text(max_size=60), st.booleans())
def test_any_text_is_a_finite_bounded_number_or_refused(text: str, above: bool) -> None:
    try:
        value = number(text, "seconds", 0.5, 600, above=above)
    except ValueError as error:
        assert "\n" not in str(error)
        return
    assert math.isfinite(value) and 0.5 <= value <= 600
    assert value > 0.5 or not above


@given(st.one_of(st.text(max_size=60), st.integers().map(str)), st.integers(0, 3))
def test_any_count_is_within_its_bounds_or_refused(text: str, least: int) -> None:
    try:
        value = whole_number(text, 1000, least)
    except ValueError as error:
        assert "\n" not in str(error)
        return
    assert least <= value <= 1000


def test_a_flag_type_refuses_as_argparse_expects() -> None:
    parser = argparse.ArgumentParser(prog="mlcc", exit_on_error=False)
    parser.add_argument("--window", type=flag_type("minutes", 0.25, 1440))
    assert parser.parse_args(["--window", "5"]).window == 5.0
    with pytest.raises(argparse.ArgumentError, match=r"'0\.1' must be from 0\.25 to 1440 minutes"):
        parser.parse_args(["--window", "0.1"])
