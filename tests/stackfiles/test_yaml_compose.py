"""The libyaml path of `compose` gives the tree, or the error, the Python composer gives."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from unittest import mock

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mlcc.stackfiles import yaml_reader
from mlcc.stackfiles.yaml_reader import StackFileError, compose

REPO = Path(__file__).resolve().parents[2]
STACK_FILES = sorted([*REPO.glob("Pulumi*.yaml"), *REPO.glob("examples/*.yaml")])


def python_composed(text: str) -> yaml.Node | None:
    """`compose` as it reads without libyaml: PyYAML's Python composer alone."""
    with mock.patch.object(yaml_reader, "_CLoader", None):
        return compose(text, "f.yaml")


def shape(node: yaml.Node | None, seen: dict[int, int] | None = None) -> object:
    """A node tree as plain values: kind, tag, style, value and where it starts (what errors
    quote), except where nothing is written (an empty value: libyaml places it after the line
    break, PyYAML before; and the code reads no end marks, which differ the same way); a node
    met again (an alias) as the number of its first meeting, so sharing is compared too."""
    if node is None:
        return None
    seen = {} if seen is None else seen
    if id(node) in seen:
        return ("alias", seen[id(node)])
    seen[id(node)] = len(seen)
    start = (node.start_mark.line, node.start_mark.column, node.start_mark.index)
    if isinstance(node, yaml.ScalarNode) and node.value == "" and node.style is None:
        start = (-1, -1, -1)
    head = (type(node).__name__, node.tag, getattr(node, "style", None), start)
    if isinstance(node, yaml.ScalarNode):
        return (*head, node.value)
    if isinstance(node, yaml.SequenceNode):
        return (*head, [shape(item, seen) for item in node.value])
    return (*head, [(shape(k, seen), shape(v, seen)) for k, v in node.value])


def outcome(read: Callable[[str], yaml.Node | None], text: str) -> tuple[str, object]:
    try:
        return "tree", shape(read(text))
    except StackFileError as error:
        return "error", str(error)


fragments = st.sampled_from(
    [
        "a: 1\n",
        "b: &x {k: v}\n",
        "c: *x\n",
        "d:\n  <<: *x\n  e: 2\n",
        "<<: [*x]\n",
        "f: &s [1, 2]\n",
        "<<: *s\n",
        "g: 'q'\n",
        'h: "\\t"\n',
        "i: |\n  lit\n",
        "j: >-\n  f\n",
        "- 1\n",
        "  - 2\n",
        "k: [a, {b: c}]\n",
        "? l\n: m\n",
        "n: ~\n",
        "o: !!str 3\n",
        "p: 0x1F\n",
        "---\n",
        "...\n",
        "\t",
        "# c\n",
        "q: a: b\n",
        "r: @x\n",
        "s: `\n",
        "'<<': *x\n",
        "t: &a\n",
        "u: *nothing\n",
        "v: [\n",
        "w: {\n",
        "x: \u0085\n",
    ]
)
texts = st.one_of(
    st.text(max_size=60),
    st.lists(fragments, max_size=8).map("".join),
    st.tuples(st.sampled_from(STACK_FILES), st.integers(0, 4000), fragments).map(
        lambda t: (text := t[0].read_text(encoding="utf-8"))[: t[1]] + t[2] + text[t[1] :]
    ),
)


@settings(max_examples=300)
@given(text=texts)
@example(text="a: &s [1]\nb:\n  <<: *s\n")
@example(text="a: &m {k: 1}\nb: [*m, *m]\nc:\n  <<: [*m]\n")
@example(text="!")  # a non-specific tag on nothing: a string to libyaml, null to PyYAML
@example(text="a: !!str\nb: ! ''\nc: ! x\n")
def test_compose_is_the_python_composers_tree_or_error(text: str) -> None:
    assert outcome(lambda t: compose(t, "f.yaml"), text) == outcome(python_composed, text)


@pytest.mark.parametrize("path", STACK_FILES, ids=lambda p: p.name)
def test_every_stack_file_of_the_repository_composes_the_same(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert shape(compose(text, path.name)) == shape(python_composed(text)) != shape(None)


@pytest.mark.parametrize("levels", [40, 900, 1001, 5000])
def test_deep_nesting_reads_as_in_python(levels: int) -> None:
    """libyaml stops at 1000 levels, Python's recursion limit earlier: the same line either way."""
    for text in ("[" * levels + "]" * levels, "".join(f"{' ' * i}k{i}:\n" for i in range(levels))):
        assert outcome(lambda t: compose(t, "f.yaml"), text) == outcome(python_composed, text)
