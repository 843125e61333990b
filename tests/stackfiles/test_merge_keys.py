"""YAML merge keys (`<<: *anchor`, `<<: [*a, *b]`) in stack files, expanded as the Pulumi CLI's
YAML decoder (Go's gopkg.in/yaml.v3) expands them, so `mlcc plan` sees what `pulumi preview` sees.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from program_runs import REPO

from mlcc.stackfiles import resolve as stackfiles
from mlcc.stackfiles.yaml_reader import StackFileError, compose, to_python

PROJECT = stackfiles.load_project(REPO)


def read(text: str) -> Any:
    return to_python(compose(text, "f.yaml"), "f.yaml")


def resolved_values(tmp_path: Path, text: str) -> dict[str, str]:
    (tmp_path / "Pulumi.s.yaml").write_text(text, encoding="utf-8")
    config = stackfiles.load_stack(tmp_path, "s")
    return stackfiles.resolve(PROJECT, config, stack="s").values


def test_the_keys_written_in_the_map_win_over_merged_ones() -> None:
    text = "a: &a {x: 1, y: 2}\nb:\n  y: 3\n  <<: *a\n  z: 4\n"
    assert read(text)["b"] == {"x": 1, "y": 3, "z": 4}


def test_in_a_merge_list_an_earlier_map_wins_over_a_later_one() -> None:
    text = "a: &a {x: a, y: a}\nc: &c {x: c, w: c}\nb: {<<: [*a, *c], y: b}\n"
    assert read(text)["b"] == {"x": "a", "y": "b", "w": "c"}


def test_a_merged_map_expands_its_own_merge_keys() -> None:
    text = "a: &a {x: a}\nc: &c {<<: *a, y: c}\nb: {<<: *c}\n"
    assert read(text)["b"] == {"x": "a", "y": "c"}


def test_a_quoted_merge_key_is_an_ordinary_key() -> None:
    """yaml.v3's isMerge: only a plain `<<` (no tag but !!merge) merges."""
    assert read("a: &a {x: 1}\nb: {'<<': *a}\n")["b"] == {"<<": {"x": 1}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: &a 1\nb:\n  <<: *a\n", "line 3, column 7: a `<<` merge key takes a map or a list"),
        # yaml.v3 merges an alias only to a map: a list of maps is written out, [*a, *b].
        ("l: &l [{x: 1}]\nb:\n  <<: *l\n", "line 3, column 7: a `<<` merge key takes a map"),
        ("b:\n  <<: [{x: 1}, 2]\n", "line 2: a `<<` merge key takes a map or a list of maps"),
        ("b:\n  <<:\n", "line 2: a `<<` merge key takes a map or a list of maps"),
        ("b: {<<: {x: 1}, <<: {y: 1}}\n", "line 1: key '<<' appears twice"),
        ("a: &a {<<: *a}\n", "a `<<` merge key refers to its own map"),
    ],
)
def test_a_bad_merge_is_one_line_naming_the_file_and_line(text: str, message: str) -> None:
    with pytest.raises(StackFileError) as raised:
        read(text)
    assert str(raised.value).startswith("f.yaml: ")
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_a_merge_bomb_is_refused_quickly() -> None:
    """Each map merges the one before twice over: 2**40 merged keys without a budget."""
    lines = ["m0: &m0 {" + ", ".join(f"k{i}: {i}" for i in range(20)) + "}"]
    lines += [f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], n{i}: {i}}}" for i in range(1, 40)]
    started = time.monotonic()
    with pytest.raises(StackFileError, match="aliases expand to more than"):
        read("\n".join(lines) + "\n")
    assert time.monotonic() - started < 10


def test_a_long_chain_of_merges_is_refused_not_a_recursion_error() -> None:
    lines = ["m0: &m0 {k: 0}"] + [f"m{i}: &m{i} {{<<: *m{i - 1}}}" for i in range(1, 2000)]
    with pytest.raises(StackFileError, match="merge keys nested too deeply"):
        read("\n".join(lines) + "\n")


def test_the_multi_example_written_with_merge_keys_resolves_to_the_same_values(
    tmp_path: Path,
) -> None:
    """The entries share their defaults through an anchor; the program gets the same JSON."""
    original = stackfiles.resolve(
        PROJECT, stackfiles.load_stack(REPO, "multi"), stack="multi"
    ).values
    text = (REPO / "examples" / "Pulumi.multi.yaml").read_text(encoding="utf-8")
    text = text.replace("    - name: llama-eagle3\n", "    - &llama\n      name: llama-eagle3\n")
    text = text.replace(
        "    - name: qwen-ngram\n",
        "    - <<: *llama\n      name: qwen-ngram\n      baseline: false\n      autoscaling: {}\n"
        "      speculativeModel: ''\n",
    )
    merged = resolved_values(tmp_path, text)
    entries = json.loads(merged.pop("hp:endpoints"))
    assert entries[1] == {
        **json.loads(original["hp:endpoints"])[1],
        "baseline": False,
        "autoscaling": {},
        "speculativeModel": "",
    }
    assert entries[0] == json.loads(original["hp:endpoints"])[0]
    assert merged == {k: v for k, v in original.items() if k != "hp:endpoints"}


def test_merge_keys_in_the_config_map_itself_merge_config_keys(tmp_path: Path) -> None:
    text = (
        "shared: &shared\n  hp:model: org/a\n  hp:replicas: 2\n"
        "config:\n  <<: *shared\n  hp:replicas: 3\n"
    )
    values = resolved_values(tmp_path, text)
    assert values["hp:model"] == "org/a" and values["hp:replicas"] == "3"


# --- hypothesis: random merges against the rule, stated once ------------------------------

KEYS = st.sampled_from(["a", "b", "c", "d", "e"])
MAPS = st.dictionaries(KEYS, st.integers(0, 9), max_size=4)


def expected(own: dict[str, int], merged: list[dict[str, int]]) -> dict[str, int]:
    """yaml.v3's rule: the map's own keys, then each merged map's keys not yet there, in order."""
    result = dict(own)
    for other in merged:
        for key, value in other.items():
            result.setdefault(key, value)
    return result


def flow(mapping: dict[str, int]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in mapping.items()) + "}"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    anchors=st.lists(MAPS, min_size=1, max_size=4),
    own=MAPS,
    picks=st.lists(st.integers(0, 3), min_size=1, max_size=4),
    as_list=st.booleans(),
    merge_first=st.booleans(),
)
def test_any_merge_gives_the_map_yaml_v3_gives(
    anchors: list[dict[str, int]],
    own: dict[str, int],
    picks: list[int],
    as_list: bool,
    merge_first: bool,
) -> None:
    chosen = [i % len(anchors) for i in picks] if as_list else [picks[0] % len(anchors)]
    lines = [f"m{i}: &m{i} {flow(m)}" for i, m in enumerate(anchors)]
    aliases = ", ".join(f"*m{i}" for i in chosen)
    merge = f"<<: [{aliases}]" if as_list else f"<<: {aliases}"
    own_items = [f"{k}: {v}" for k, v in own.items()]
    items = [merge, *own_items] if merge_first else [*own_items, merge]
    lines.append("x: {" + ", ".join(items) + "}")
    assert read("\n".join(lines) + "\n")["x"] == expected(own, [anchors[i] for i in chosen])
