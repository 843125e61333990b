"""Safe reading of stack-file YAML, and the checks a config value must pass to reach the program.

YAML is composed into nodes first, so a broken file (syntax, tabs, duplicate keys, alias bombs,
nesting) raises `StackFileError` with one line naming what to change, never a traceback. Plain
scalars resolve by the YAML 1.2 core schema, as the Pulumi CLI's YAML library resolves them.
Values are then checked for what the program could not read back from JSON (`ValueCheckError`),
and maps or lists given on the command line are parsed by `parse_structured` (`OverrideError`).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import yaml

from mlcc.engine_contract.values import printable
from mlcc.userfiles import UserFileError, read_text

# Deeper structures are certainly mistakes, and would exhaust Python's recursion limit later.
MAX_DEPTH = 32
# YAML aliases may repeat a subtree; expanded beyond this many values it is an alias bomb.
MAX_EXPANDED_VALUES = 100_000
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_INTEGER = re.compile(r"^[+-]?\d+$")
_SHOWN_CHARS = 40
# The tag YAML gives a plain `<<` key (PyYAML's resolver, like yaml.v3's, resolves it so).
MERGE_TAG = "tag:yaml.org,2002:merge"
MERGE_FORMS = "`<<: *defaults` or `<<: [*a, *b]`"

# YAML 1.2 core schema (what the Pulumi CLI's YAML library resolves plain scalars with).
_CORE_NULL = re.compile(r"^(~|null|Null|NULL|)$")
_CORE_BOOL = {"true": True, "True": True, "TRUE": True}
_CORE_BOOL |= {"false": False, "False": False, "FALSE": False}
_CORE_INT = re.compile(r"^[-+]?[0-9]+$")
_CORE_OCT = re.compile(r"^0o[0-7]+$")
_CORE_HEX = re.compile(r"^0x[0-9a-fA-F]+$")
_CORE_FLOAT = re.compile(
    r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$|^[-+]?\.(inf|Inf|INF)$|^\.(nan|NaN|NAN)$"
)

STRUCTURED_FORMS = (
    'JSON ({"max-model-len": 8192}) or YAML flow syntax ({max-model-len: 8192}, [a, b])'
)


class StackFileError(Exception):
    """A problem with the files themselves (missing, unreadable, not YAML): a usage error."""


class OverrideError(ValueError):
    """A malformed `--set`: a usage error."""


class ValueCheckError(Exception):
    """A value that cannot be handed to the program; `path` is relative to its key."""

    def __init__(self, path: str, message: str) -> None:
        self.path, self.message = path, message
        super().__init__(f"{path}: {message}")


def shown(value: object, *, quoted: bool = True) -> str:
    """A value for an error line: quoted and cut short."""
    text = str(value)
    if isinstance(value, str) and (quoted or not text.isprintable()):
        text = repr(value)
    if len(text) > _SHOWN_CHARS:
        return f"{text[: _SHOWN_CHARS - 3]}... ({len(text)} characters)"
    return text


def is_int64(text: str) -> bool:
    """True if `text` is a whole number in decimal digits that fits a signed 64-bit integer."""
    return bool(_INTEGER.match(text)) and len(text) <= 20 and _INT64_MIN <= int(text) <= _INT64_MAX


# --- reading YAML ---------------------------------------------------------------------------


def compose_file(path: Path) -> yaml.Node | None:
    """The YAML node tree of the file at `path`, or StackFileError (read by mlcc.userfiles: a
    FIFO, a folder, no permission, not UTF-8 are one line naming the file)."""
    try:
        text = read_text(path)
    except UserFileError as error:
        raise StackFileError(str(error)) from None
    return compose(text, path.name)


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses `<<: *alias` naming a list, as yaml.v3 does (its merge takes an
    alias only to a map; a list of maps must be written out, `<<: [*a, *b]`). The composed tree
    no longer tells an alias from the node it names, so this is checked while composing."""

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        node = super().compose_node(parent, index)
        key: object = index  # a mapping value's index is its key node
        merging = isinstance(key, yaml.ScalarNode) and key.tag == MERGE_TAG
        if (
            merging
            and isinstance(event, yaml.AliasEvent)
            and not isinstance(node, yaml.MappingNode)
        ):
            mark = event.start_mark if isinstance(event.start_mark, yaml.error.Mark) else None
            message = f"a `<<` merge key takes a map or a list of maps ({MERGE_FORMS})"
            raise yaml.composer.ComposerError(None, None, message, mark)
        return node


def compose(text: str, source: str) -> yaml.Node | None:
    """The YAML node tree of `text`, or StackFileError with the line and column.

    libyaml composes (when PyYAML has it); any text it refuses, or whose tree breaks a rule
    checked while composing, is composed again in Python, so every error reads as PyYAML's."""
    composed, root = _compose_with_libyaml(text)
    if composed:
        return root
    try:
        return yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as error:
        raise StackFileError(_yaml_message(error, source)) from None
    except yaml.YAMLError as error:  # e.g. more than one document
        raise StackFileError(f"{source}: not valid YAML ({_one_line(str(error))})") from None
    except RecursionError:
        raise StackFileError(f"{source}: nested too deeply (at most {MAX_DEPTH} levels)") from None


_CLoader = getattr(yaml, "CSafeLoader", None)


def _compose_with_libyaml(text: str) -> tuple[bool, yaml.Node | None]:
    """(True, libyaml's node tree of `text` as the Python composer would give it), or (False,
    None). libyaml refuses nesting beyond 1000 levels itself: no input recurses without bound."""
    if _CLoader is None or "\t" in text:  # libyaml takes tabs in places PyYAML does not
        return False, None
    try:
        root = yaml.compose(text, Loader=_CLoader)
    except yaml.YAMLError:
        return False, None
    if root is not None and not _as_python_composes(root):
        return False, None
    return True, root


def _as_python_composes(root: yaml.Node) -> bool:
    """Give plain scalars the style the Python composer gives them (None, where libyaml says
    ""); False for a tree the Python composer would answer otherwise: one nested deeper than
    MAX_DEPTH (its recursion may run out first), an empty key, a `<<` merge key naming an
    alias of anything but a map (`_Loader` refuses it; an alias starts before its key), or an
    empty plain string (`a: !` is a string to libyaml, null to PyYAML; `!!str` is both's)."""
    seen: set[int] = set()
    pending = [(root, 0)]
    while pending:
        node, depth = pending.pop()
        if depth > MAX_DEPTH:
            return False
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            node.style = node.style or None
            if _is_empty(node) and node.tag == yaml.resolver.BaseResolver.DEFAULT_SCALAR_TAG:
                return False
        elif isinstance(node, yaml.SequenceNode):
            pending += ((item, depth + 1) for item in node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if _merges_an_alias_of_no_map(key, value) or _is_empty(key):
                    return False
                pending += ((key, depth + 1), (value, depth + 1))
    return True


def _is_empty(node: yaml.Node) -> bool:
    """Nothing written (an empty key's line, in errors, is the next line in libyaml, its own in
    PyYAML)."""
    return isinstance(node, yaml.ScalarNode) and node.value == "" and not node.style


def _merges_an_alias_of_no_map(key: yaml.Node, value: yaml.Node) -> bool:
    return (
        isinstance(key, yaml.ScalarNode)
        and key.tag == MERGE_TAG
        and not isinstance(value, yaml.MappingNode)
        and value.start_mark.index < key.start_mark.index
    )


def _yaml_message(error: yaml.MarkedYAMLError, source: str) -> str:
    mark = error.problem_mark or error.context_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    problem = _one_line(", ".join(filter(None, [error.context, error.problem])) or "not YAML")
    hint = "; indent with spaces, YAML does not allow tabs" if "\\t" in problem else ""
    return f"{source}: {where}{problem}{hint}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def node_kind(node: yaml.Node) -> str:
    """What a node that is not a map is, for an error line."""
    return "a list" if isinstance(node, yaml.SequenceNode) else "a single value"


def is_null(node: yaml.Node) -> bool:
    """True for a plain (unquoted) YAML 1.2 null: `~`, `null` or nothing."""
    return (
        isinstance(node, yaml.ScalarNode)
        and node.style is None
        and bool(_CORE_NULL.match(node.value))
    )


def mapping_entries(
    node: yaml.MappingNode, source: str, budget: ExpansionBudget | None = None
) -> dict[str, yaml.Node]:
    """A map node's entries by key, its `<<` merge keys expanded; StackFileError for a
    non-scalar or repeated key, or a merge value that is not a map or a list of maps.

    Merge keys are expanded as the Pulumi CLI's YAML decoder, Go's gopkg.in/yaml.v3, expands
    them (decode.go, `(*decoder).mapping` and `(*decoder).merge`): only a plain `<<` merges (a
    quoted one is an ordinary key), the keys written in the map win over merged ones, and in
    `<<: [*a, *b]` an earlier map wins over a later one; a merged map's own `<<` is expanded
    the same way.
    """
    return _entries(node, source, budget or ExpansionBudget(source), ())


def _entries(
    node: yaml.MappingNode,
    source: str,
    budget: ExpansionBudget,
    merging: tuple[yaml.MappingNode, ...],
) -> dict[str, yaml.Node]:
    """`merging`: the maps whose merge keys led here (a map merged into itself is refused)."""
    line = node.start_mark.line + 1
    if any(node is outer for outer in merging):
        raise StackFileError(f"{source}: line {line}: a `<<` merge key refers to its own map")
    if len(merging) > MAX_DEPTH:
        raise StackFileError(f"{source}: merge keys nested too deeply (at most {MAX_DEPTH})")
    entries: dict[str, yaml.Node] = {}
    merged: list[yaml.MappingNode] = []
    seen: set[str] = set()
    for key_node, value_node in node.value:
        key_line = key_node.start_mark.line + 1
        if not isinstance(key_node, yaml.ScalarNode):
            raise StackFileError(f"{source}: line {key_line}: a key must be a plain name")
        if key_node.value in seen:
            raise StackFileError(f"{source}: line {key_line}: key {key_node.value!r} appears twice")
        seen.add(key_node.value)
        if key_node.tag == MERGE_TAG:
            merged = _merge_sources(value_node, f"{source}: line {key_line}")
        else:
            entries[key_node.value] = value_node
    for other in merged:
        for key, value in _entries(other, source, budget, (*merging, node)).items():
            budget.spend()
            entries.setdefault(key, value)
    return entries


def _merge_sources(value: yaml.Node, where: str) -> list[yaml.MappingNode]:
    """The maps a `<<` value names: one map (an alias or written out) or a list of maps."""
    items = value.value if isinstance(value, yaml.SequenceNode) else [value]
    if not all(isinstance(item, yaml.MappingNode) for item in items):
        raise StackFileError(
            f"{where}: a `<<` merge key takes a map or a list of maps ({MERGE_FORMS})"
        )
    return list(items)


class ExpansionBudget:
    """How many more values one file's aliases may expand to before it counts as an alias bomb."""

    def __init__(self, source: str) -> None:
        self.source, self.left = source, MAX_EXPANDED_VALUES

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise StackFileError(
                f"{self.source}: YAML aliases expand to more than {MAX_EXPANDED_VALUES} values "
                "(an alias bomb?); write the values out"
            )


def to_python(node: yaml.Node | None, source: str) -> Any:
    """A whole document as Python values (None for an empty one)."""
    return None if node is None else convert(node, 0, ExpansionBudget(source))


def convert(node: yaml.Node, depth: int, budget: ExpansionBudget) -> Any:
    """A node at `depth` as Python values, spending `budget` on every value expanded."""
    budget.spend()
    if depth > MAX_DEPTH:
        raise StackFileError(f"{budget.source}: nested too deeply (at most {MAX_DEPTH} levels)")
    if isinstance(node, yaml.SequenceNode):
        return [convert(item, depth + 1, budget) for item in node.value]
    if isinstance(node, yaml.MappingNode):
        return {
            key: convert(value, depth + 1, budget)
            for key, value in mapping_entries(node, budget.source, budget).items()
        }
    assert isinstance(node, yaml.ScalarNode)
    return _core_scalar(node) if node.style is None else node.value


def _core_scalar(node: yaml.ScalarNode) -> Any:
    text = str(node.value)
    if _CORE_NULL.match(text):
        return None
    if text in _CORE_BOOL:
        return _CORE_BOOL[text]
    try:
        if _CORE_INT.match(text):
            return int(text)
        if _CORE_OCT.match(text):
            return int(text[2:], 8)
        if _CORE_HEX.match(text):
            return int(text[2:], 16)
        if _CORE_FLOAT.match(text):
            return float(text)
    except ValueError:  # .inf, .nan, or more digits than Python converts: all refused later
        return math.inf
    return text


# --- values -------------------------------------------------------------------------------


def check_value(value: Any, path: str = "", depth: int = 0) -> None:
    """Raise ValueCheckError for anything the program could not read back from JSON."""
    if depth > MAX_DEPTH:
        raise ValueCheckError(path, f"is nested too deeply (at most {MAX_DEPTH} levels)")
    if isinstance(value, dict):
        for key, item in value.items():
            check_value(item, f"{path}.{printable(str(key))}", depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_value(item, f"{path}[{index}]", depth + 1)
    elif isinstance(value, bool) or value is None or isinstance(value, str):
        return
    elif isinstance(value, int):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise ValueCheckError(path, "is a number out of range (at most 19 digits)")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueCheckError(path, "is too large or not a finite number")
    else:
        raise ValueCheckError(path, f"is a {type(value).__name__}, not a string, number or map")


def as_config_string(value: Any) -> str:
    """A value as the program receives it: text, with maps and lists as compact JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        check_value(value)
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, int | float):
        check_value(value)
    return str(value)


def parse_structured(text: str, where: str) -> Any:
    """A map or list given as JSON or YAML flow syntax; OverrideError names the forms that work."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise OverrideError(f"{where}: nested too deeply (at most {MAX_DEPTH} levels)") from None
    except ValueError:
        try:
            value = to_python(compose(text, "the value"), "the value")
        except StackFileError as error:
            raise OverrideError(
                f"{where}: {shown(text)} is not a map or list ({error}); write it as "
                f"{STRUCTURED_FORMS}"
            ) from None
    if not isinstance(value, dict | list):
        raise OverrideError(
            f"{where}: {shown(text)} is not a map or list; write it as {STRUCTURED_FORMS}"
        )
    try:
        check_value(value)
    except ValueCheckError as error:
        raise OverrideError(f"{where}{error.path}: {error.message}") from None
    return value
