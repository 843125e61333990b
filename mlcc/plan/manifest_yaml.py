"""The YAML text of a planned Kubernetes object, as `yaml.safe_dump(document, sort_keys=False)`
writes it, at a quarter of the cost for the documents libyaml writes identically.

PyYAML's pure-Python emitter was the largest per-endpoint cost of `mlcc plan`'s own code
(benchmarks/plan_scale.md). Its libyaml
emitter (the same representer, a C emitter) writes the same text for every document whose
strings (keys and values) are printable ASCII and whose keys are non-empty: the two part ways
only on an empty key, a non-ASCII character, a line break or a control character (how they fold
double-quoted strings and when they write a `? ` key). Those documents, and every document when
PyYAML was built without libyaml, take the pure-Python path. tests/plan/test_manifest_yaml.py
holds both to the same text.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

_PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]*")
_SCALARS = (int, float, bool, type(None))
FAST_DUMPER: Any = getattr(yaml, "CSafeDumper", None)  # None: PyYAML built without libyaml


def dump(document: Any) -> str:
    """`yaml.safe_dump(document, sort_keys=False)`, byte for byte."""
    if FAST_DUMPER is not None and libyaml_writes_the_same(document):
        return yaml.dump(document, Dumper=FAST_DUMPER, sort_keys=False)
    return yaml.safe_dump(document, sort_keys=False)


def libyaml_writes_the_same(value: Any) -> bool:
    """Plain data whose strings are printable ASCII and whose keys are non-empty strings."""
    if isinstance(value, str):
        return _PRINTABLE_ASCII.fullmatch(value) is not None
    if isinstance(value, dict):
        return all(
            isinstance(key, str) and key != "" and libyaml_writes_the_same(key) for key in value
        ) and all(libyaml_writes_the_same(item) for item in value.values())
    if isinstance(value, list):
        return all(libyaml_writes_the_same(item) for item in value)
    return isinstance(value, _SCALARS)
