"""The one way the program reads a version: engine releases, drivers, CUDA, Kubernetes, add-ons."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlcc.engine_contract import version_key


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("0.5.17", (0, 5, 17)),
        ("580.126.09", (580, 126, 9)),
        ("1.33", (1, 33)),
        ("1.33.0", (1, 33)),
        ("v1.33", (1, 33)),
        (" v1.33 ", (1, 33)),
        ("v1.2.0-eksbuild.3", (1, 2, 0, 3)),
        ("1.0.0", (1,)),
        (1.33, (1, 33)),
        (2, (2,)),
        (None, ()),
        ("", ()),
        ("latest", ()),
        ("0", ()),
        ("\u0661.\u0663", ()),  # Arabic-Indic digits are not numbers here
        ("1" * 40, (int("1" * 18), int("1" * 18), 1111)),  # never thousands of digits to int()
    ],
)
def test_version_key_reads_the_numbers(version: object, expected: tuple[int, ...]) -> None:
    assert version_key(version) == expected


def test_versions_order_as_numbers_not_text() -> None:
    releases = ["0.34.0", "0.5.23", "0.27.1", "0.5.17", "v0.10", None]
    assert sorted(releases, key=version_key) == [
        None,
        "0.5.17",
        "0.5.23",
        "v0.10",
        "0.27.1",
        "0.34.0",
    ]
    assert version_key("1.33") == version_key("1.33.0") == version_key("v1.33")
    assert version_key("1.33") < version_key("1.33.1") < version_key("1.34")
    assert version_key("v1.2.0-eksbuild.3") < version_key("v1.2.0-eksbuild.10")
    assert version_key("580.126.09") > version_key("580.65.06")


@given(st.one_of(st.none(), st.text(), st.integers(), st.floats(), st.booleans()))
def test_version_key_never_raises(version: object) -> None:
    assert all(isinstance(number, int) and number >= 0 for number in version_key(version))
