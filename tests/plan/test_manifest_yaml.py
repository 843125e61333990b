"""The manifests' YAML: libyaml where it writes what PyYAML's Python emitter writes, else PyYAML.

`mlcc plan` writes each Kubernetes object with `manifest_yaml.dump`; its files must stay byte
for byte what `yaml.safe_dump(document, sort_keys=False)` wrote before, for any input.
"""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from program_runs import run_main

from mlcc.plan import manifest_yaml

# Characters that steer YAML's choice of style: indicators, quotes, spaces, line breaks,
# non-ASCII and control characters, besides arbitrary text.
_TRICKY = list(" ab:-#'\"?&*!|>%@`,[]{}x0.~=\n\t\r\x85\u2028\ufeffé你\U0001d54b\x00\x1b")
_PRINTABLE = st.characters(min_codepoint=0x20, max_codepoint=0x7E)


def documents(alphabet: st.SearchStrategy[str], *, empty_keys: bool) -> st.SearchStrategy[Any]:
    text = st.text(alphabet, max_size=300)
    keys = st.text(alphabet, min_size=0 if empty_keys else 1, max_size=200)
    scalars = text | st.integers() | st.floats() | st.booleans() | st.none()
    trees = st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
        max_leaves=12,
    )
    return st.dictionaries(keys, trees, max_size=4)


ANY_TEXT = st.sampled_from(_TRICKY) | st.characters()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(ANY_TEXT, empty_keys=True))
def test_any_document_is_written_as_pyyaml_writes_it(document: dict[str, Any]) -> None:
    assert manifest_yaml.dump(document) == yaml.safe_dump(document, sort_keys=False)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(st.sampled_from(_TRICKY[:21]) | _PRINTABLE, empty_keys=False))
def test_libyaml_writes_printable_ascii_documents_as_the_python_emitter(
    document: dict[str, Any],
) -> None:
    assert manifest_yaml.libyaml_writes_the_same(document)
    fast = yaml.dump(document, Dumper=yaml.CSafeDumper, sort_keys=False)
    assert fast == yaml.safe_dump(document, sort_keys=False)


def test_the_documents_libyaml_would_write_differently_take_the_python_path() -> None:
    # Each of these differs between the two emitters (found by fuzzing them against each other).
    for document in (
        {"": "empty key"},
        {"key": "lorem ipsum \u4f60\u597d " * 4},
        {"kk": {"k" * 20: ">\n\n#.b'`#>>%!`.\n`##..\n ]!  0'>a,,a>\n\n%x%&*\"#&\n\n  "}},
        {"\r": {}},
    ):
        python_text = yaml.safe_dump(document, sort_keys=False)
        assert yaml.dump(document, Dumper=yaml.CSafeDumper, sort_keys=False) != python_text
        assert not manifest_yaml.libyaml_writes_the_same(document)
        assert manifest_yaml.dump(document) == python_text


def test_the_planned_objects_of_a_multi_endpoint_stack_take_the_fast_path() -> None:
    assert manifest_yaml.FAST_DUMPER is yaml.CSafeDumper  # the PyYAML wheels carry libyaml
    run = run_main(stack="multi")
    objects = [
        r.redacted_inputs
        for r in run.registrations
        if r.type.startswith("kubernetes:") and r.custom and "apiVersion" in r.redacted_inputs
    ]
    assert len(objects) >= 4  # the namespace, the token Secret, three endpoints
    assert all(manifest_yaml.libyaml_writes_the_same(o) for o in objects)
