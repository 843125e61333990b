"""Setting fields of one hp:endpoints entry (mlcc/stackfiles/entry_edit.py): every other byte
kept, the result read back, and layouts it cannot edit safely refused."""

from __future__ import annotations

import re

import pytest
from ruamel.yaml import YAML

from mlcc.stackfiles.edit import StackEditError
from mlcc.stackfiles.entry_edit import set_entry_keys

STACK = (
    "config:\n"
    "  aws:region: us-east-1\n"
    "  hp:endpoints:\n"
    "    # the current head\n"
    "    - name: chat\n"
    "      speculativeModel: org/head-v1  # trained in May\n"
    "      autoscaling:\n"
    "        maxReplicas: 2\n"
    "      baseline: true\n"
    "\n"
    "    # the candidate\n"
    "    - name: chat-candidate\n"
    "      speculativeModel: 'org/head-v2'\n"
    "  hp:model: org/m  # after the list\n"
)


def entries(text: str) -> list[dict[str, object]]:
    found: list[dict[str, object]] = YAML(typ="safe").load(text)["config"]["hp:endpoints"]
    return found


def test_an_existing_field_changes_on_its_own_line() -> None:
    text, changes = set_entry_keys(STACK, 0, {"speculativeModel": "org/head-v2"})
    assert text == STACK.replace("org/head-v1  # trained", "org/head-v2  # trained")
    assert changes == ["hp:endpoints[0].speculativeModel: 'org/head-v2' (was 'org/head-v1')"]


def test_a_new_field_goes_after_the_items_last_field() -> None:
    text, changes = set_entry_keys(
        STACK, 0, {"speculativeModelRevision": "abc123", "speculativeNumTokens": 5}
    )
    assert text == STACK.replace(
        "      baseline: true\n",
        "      baseline: true\n      speculativeModelRevision: abc123\n"
        "      speculativeNumTokens: 5\n",
    )
    assert entries(text)[1] == entries(STACK)[1]
    assert changes[1] == "hp:endpoints[0].speculativeNumTokens: 5 (new)"


def test_the_last_item_and_its_quoting_style() -> None:
    text, _ = set_entry_keys(STACK, 1, {"speculativeModel": "org/head-v3", "baseline": "x y"})
    assert "      speculativeModel: 'org/head-v3'\n      baseline: \"x y\"\n  hp:model:" in text
    unchanged, changes = set_entry_keys(STACK, 1, {"speculativeModel": "org/head-v2"})
    assert unchanged == STACK and changes[0].endswith("(unchanged)")


def test_crlf_is_kept() -> None:
    crlf = STACK.replace("\n", "\r\n")
    text, _ = set_entry_keys(crlf, 1, {"speculativeNumTokens": 3})
    assert text == crlf.replace(
        "'org/head-v2'\r\n", "'org/head-v2'\r\n      speculativeNumTokens: 3\r\n"
    )


@pytest.mark.parametrize(
    ("text", "index", "message"),
    [
        ("config:\n  hp:endpoints: [{name: a}]\n", 0, "not written as a block list"),
        ("config:\n  hp:model: m\n", 0, "hp:endpoints[0] is not in this file"),
        (STACK, 2, "hp:endpoints[2] is not in this file"),
        ("config:\n  hp:endpoints:\n    - name: a\n      speculativeModel: >\n        x\n", 0,
         "spans several lines"),
    ],
)  # fmt: skip
def test_layouts_it_cannot_edit_are_refused(text: str, index: int, message: str) -> None:
    with pytest.raises(StackEditError, match=re.escape(message)):
        set_entry_keys(text, index, {"speculativeModel": "org/head-v2"})
