"""Setting hp:speculative* in a stack file: only those keys change, every other byte stays."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ruamel.yaml import YAML

from mlcc.stackfiles.edit import StackEditError, render_scalar, set_config_keys

VALUES = {
    "speculativeAlgorithm": "eagle3",
    "speculativeModel": "org/draft",
    "speculativeNumTokens": 4,
}
NEW_KEYS = (
    "  hp:speculativeAlgorithm: eagle3\n"
    "  hp:speculativeModel: org/draft\n"
    "  hp:speculativeNumTokens: 4\n"
)


def edited(text: str) -> str:
    return set_config_keys(text, VALUES)[0]


def test_new_keys_go_before_a_closing_comment_block() -> None:
    text = "config:\n  hp:engine: vllm\n  # closing one\n  # closing two\n\n# file end\n"
    assert edited(text) == (
        "config:\n  hp:engine: vllm\n"
        + NEW_KEYS
        + "  # closing one\n  # closing two\n\n# file end\n"
    )


def test_crlf_files_stay_crlf() -> None:
    text = "# head\r\nconfig:\r\n  hp:engine: vllm  # engine\r\n  # closing\r\n"
    assert edited(text) == (
        "# head\r\nconfig:\r\n  hp:engine: vllm  # engine\r\n"
        + NEW_KEYS.replace("\n", "\r\n")
        + "  # closing\r\n"
    )


def test_a_comment_inside_the_last_value_stays_with_it() -> None:
    text = "config:\n  hp:optimize:\n    goal: latency\n    # about the goal\n  # closing\n"
    assert edited(text) == (
        "config:\n  hp:optimize:\n    goal: latency\n    # about the goal\n"
        + NEW_KEYS
        + "  # closing\n"
    )


def test_existing_keys_keep_their_place_quoting_and_inline_comment() -> None:
    text = (
        "config:\n"
        '    hp:speculativeAlgorithm: "ngram"  # chosen by hand\n'
        "    hp:speculativeModel: 'old/draft' # was an experiment\n"
        "    hp:speculativeNumTokens: 3\n"
        "    hp:model: org/target\n"
    )
    assert edited(text) == (
        "config:\n"
        '    hp:speculativeAlgorithm: "eagle3"  # chosen by hand\n'
        "    hp:speculativeModel: 'org/draft' # was an experiment\n"
        "    hp:speculativeNumTokens: 4\n"
        "    hp:model: org/target\n"
    )


def test_a_block_value_is_replaced_whole() -> None:
    text = "config:\n  hp:speculativeModel: >-\n    old/draft\n  hp:model: org/target\n"
    new_text = edited(text)
    assert "  hp:speculativeModel: org/draft\n  hp:model: org/target\n" in new_text
    assert "old/draft" not in new_text


def test_bare_keys_are_updated_where_they_are() -> None:
    new_text, changes = set_config_keys("config:\n  speculativeAlgorithm: ngram\n", VALUES)
    assert new_text.startswith("config:\n  speculativeAlgorithm: eagle3\n")
    assert "hp:speculativeAlgorithm: 'eagle3' (was 'ngram')" in changes


def test_unchanged_values_leave_the_text_alone() -> None:
    text = "config:\n  hp:speculativeAlgorithm: 'eagle3'\n" + NEW_KEYS[33:]
    new_text, changes = set_config_keys(text, VALUES)
    assert new_text == text
    assert all(change.endswith("(unchanged)") for change in changes)


def test_a_file_without_config_gets_one_after_a_missing_final_newline() -> None:
    assert edited("encryptionsalt: v1:abc") == "encryptionsalt: v1:abc\nconfig:\n" + NEW_KEYS


def test_the_last_line_without_newline_is_not_glued_to_a_new_key() -> None:
    assert edited("config:\n  hp:engine: vllm") == "config:\n  hp:engine: vllm\n" + NEW_KEYS


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("config: {hp:engine: vllm}\n", "written inline"),
        ("config:\n  hp:engine: [vllm\n", "not valid YAML"),
        ("config:\n  - a\n", "must be a map"),
    ],
)
def test_layouts_it_cannot_edit_are_refused(text: str, message: str) -> None:
    with pytest.raises(StackEditError, match=message):
        edited(text)


@given(st.text(min_size=0, max_size=40) | st.integers(min_value=0, max_value=10**6))
def test_rendered_scalars_read_back_as_the_value(value: str | int) -> None:
    document = YAML(typ="safe").load(f"key: {render_scalar(value)}\n")
    assert document == {"key": value}
