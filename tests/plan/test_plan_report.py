"""The plan's text and diff as pure functions: several endpoints, deep trees, named lists."""

from __future__ import annotations

from typing import Any

import pytest

from mlcc.plan.diff import changed_paths, diff, summary
from mlcc.plan.features import operator_line
from mlcc.plan.graph import CR_TYPE
from mlcc.plan.report import (
    PlannedResource,
    Registered,
    display_type,
    headline,
    output_lines,
    tree_lines,
    tree_order,
)

COMPONENT = "hp:index:InferenceEndpoint"


# What the program renders by default for a 90-minute deploy time limit.
PROBES = {
    "startupProbe": {"periodSeconds": 10, "failureThreshold": 540, "timeoutSeconds": 5},
    "readinessProbe": {"periodSeconds": 10, "timeoutSeconds": 5},
    "livenessProbe": {"periodSeconds": 10, "timeoutSeconds": 5, "failureThreshold": 3},
}


def endpoint_cr(
    name: str, engine: str, algorithm: str | None, probes: dict[str, Any] | None = None
) -> dict[str, Any]:
    env = [
        {"name": "SM_VLLM_MODEL" if engine == "vllm" else "SM_SGLANG_MODEL_PATH", "value": "o/m"}
    ]
    if algorithm:
        env.append({"name": "HP_SPECULATIVE_ALGORITHM", "value": algorithm})
    return {
        "metadata": {"name": name, "namespace": "serving", "labels": {"hp.mlcc/engine": engine}},
        "spec": {
            "instanceType": "ml.g6e.12xlarge",
            "replicas": 3,
            "modelSourceConfig": {"huggingFaceModel": {"modelId": "org/target"}},
            "worker": {"environmentVariables": env, **({"probes": probes} if probes else {})},
        },
    }


def registered(*specs: tuple[str, str, str | None, Any]) -> list[Registered]:
    return [
        Registered(type_, name, f"urn:{type_}::{name}", parent, inputs, True)
        for type_, name, parent, inputs in specs
    ]


def flags(env: dict[str, str], releases: dict[str, str]) -> tuple[str | None, str | None]:
    return f"<vllm {env['HP_SPECULATIVE_ALGORITHM']}>", "<sglang>"


def two_endpoints() -> list[PlannedResource]:
    return tree_order(
        registered(
            (COMPONENT, "chat", None, {}),
            (
                CR_TYPE,
                "chat",
                f"urn:{COMPONENT}::chat",
                endpoint_cr("chat", "sglang", "eagle3", PROBES),
            ),
            (COMPONENT, "chat-baseline", None, {}),
            (
                CR_TYPE,
                "chat-baseline",
                f"urn:{COMPONENT}::chat-baseline",
                endpoint_cr("chat-baseline", "sglang", None),
            ),
        )
    )


def test_the_headline_has_one_block_per_endpoint() -> None:
    values = {"aws:region": "us-west-2", "hp:clusterName": "my-hp", "hp:engineVersion": "0.5.23"}
    lines = headline("prod", values, two_endpoints(), flags)
    assert lines == [
        "stack prod: existing-cluster mode, region us-west-2",
        "HyperPod cluster: my-hp",
        "endpoint chat (serving): sglang 0.5.23, org/target",
        "  instances: ml.g6e.12xlarge x 3",
        "  speculative: eagle3",
        "    vLLM   --speculative-config <vllm eagle3>",
        "    SGLang <sglang>",
        "  image CUDA: unknown (lmsysorg/sglang:v0.5.23): no NVIDIA driver check",
        "  operator: probes (startup up to 90 min, readiness timeout 5 s)",
        "endpoint chat-baseline (serving): sglang 0.5.23, org/target",
        "  instances: ml.g6e.12xlarge x 3",
        "  speculative: off",
        "  image CUDA: unknown (lmsysorg/sglang:v0.5.23): no NVIDIA driver check",
        "  operator: the operator's own probes",  # a spec without worker.probes
    ]


def test_without_an_engine_version_the_pinned_one_is_shown() -> None:
    lines = headline("dev", {}, two_endpoints(), flags)
    assert lines[0] == "stack dev: create mode (new VPC, EKS and HyperPod cluster), region " + (
        "not set (aws:region)"
    )
    assert lines[1].startswith("endpoint chat (serving): sglang 0.5.17, ")


def test_the_tree_draws_rails_for_deep_and_last_children() -> None:
    resources = tree_order(
        registered(
            ("t:a", "b-root", None, {}),
            ("t:a", "a-root", None, {}),
            ("t:b", "child-2", "urn:t:a::a-root", {}),
            ("t:b", "child-1", "urn:t:a::a-root", {}),
            ("t:c", "grandchild", "urn:t:b::child-1", {}),
        )
    )
    assert tree_lines(resources) == [
        "a-root  t:a",
        "├─ child-1  t:b",
        "│  └─ grandchild  t:c",
        "└─ child-2  t:b",
        "b-root  t:a",
    ]
    assert resources[2].parent == "t:b::child-1"


def test_tree_lines_are_cut_to_100_columns_keeping_the_whole_type() -> None:
    deep = [("t:x", f"level-{i}", f"urn:t:x::level-{i - 1}" if i else None, {}) for i in range(20)]
    long_name = ("pkg:some/very/long/module:VeryLongTypeName", "n" * 90, "urn:t:x::level-19", {})
    lines = tree_lines(tree_order(registered(*deep, long_name)))
    assert all(len(line) <= 100 for line in lines)
    assert lines[-1].endswith("n…  pkg:some/very/long/module:VeryLongTypeName")
    assert lines[-1].startswith("…")  # the outermost rails gave way, not the type


@pytest.mark.parametrize(
    ("token", "shown"),
    [
        ("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "aws:iam:RolePolicyAttachment"),
        (
            "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
            "aws:s3:BucketServerSideEncryptionConfiguration",
        ),
        ("aws:ec2/vpc:Vpc", "aws:ec2:Vpc"),
        ("kubernetes:core/v1:Namespace", "kubernetes:core/v1:Namespace"),
        ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v3:Release"),
        ("aws-native:sagemaker:Cluster", "aws-native:sagemaker:Cluster"),
        ("pulumi:providers:kubernetes", "pulumi:providers:kubernetes"),
        ("hp:index:InferenceEndpoint", "hp:index:InferenceEndpoint"),
        ("pulumi-python:dynamic:Resource", "pulumi-python:dynamic:Resource"),
        ("odd", "odd"),
    ],
)
def test_types_are_shown_as_the_pulumi_cli_shows_them(token: str, shown: str) -> None:
    assert display_type(token) == shown


def test_map_outputs_nest_one_key_a_line_sorted_as_pulumi_shows_them() -> None:
    outputs = {
        "namespace": "inference",
        "endpoints": {"b": {"algorithm": "off", "ready": True}, "a": {"algorithm": "eagle3"}},
        "groups": ["g5", {"name": "g6"}],
        "empty": {},
        "pending": None,
        "odd": "tab\there",
    }
    assert output_lines(outputs) == [
        "  empty: {}",
        "  endpoints: {",
        "      a: {",
        "          algorithm: eagle3",
        "      }",
        "      b: {",
        "          algorithm: off",
        "          ready: true",
        "      }",
        "  }",
        "  groups: [",
        "      [0]: g5",
        "      [1]: {",
        "          name: g6",
        "      }",
        "  ]",
        "  namespace: inference",
        "  odd: tab\\there",
        "  pending: (known after deployment)",
    ]


def test_registration_order_does_not_change_the_plan() -> None:
    specs = [
        ("t:a", "x", None, {"k": 1}),
        ("t:b", "y", "urn:t:a::x", {}),
        ("t:a", "w", None, {}),
    ]
    assert tree_order(registered(*specs)) == tree_order(registered(*reversed(specs)))


def plan(*resources: tuple[str, str, Any]) -> list[dict[str, Any]]:
    return [{"type": t, "name": n, "parent": None, "inputs": i} for t, n, i in resources]


def test_diff_marks_new_gone_and_changed_resources() -> None:
    old = plan(
        ("t:a", "keep", {"a": 1}), ("t:a", "change", {"a": 1, "b": [1, 2]}), ("t:a", "gone", {})
    )
    new = plan(("t:a", "keep", {"a": 1}), ("t:a", "change", {"a": 2, "b": [1]}), ("t:b", "new", {}))
    changes = diff(old, new)
    assert [(c.mark, c.type, c.name, c.paths) for c in changes] == [
        ("~", "t:a", "change", ("a", "b[1]")),
        ("+", "t:b", "new", ()),
        ("-", "t:a", "gone", ()),
    ]
    assert summary(changes) == "1 to create, 1 to change, 1 to delete"
    assert changes[0].lines() == ["~ t:a  change", "    a", "    b[1]"]


def test_named_list_items_are_matched_by_name_and_odd_keys_are_quoted() -> None:
    old = {"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}], "labels": {}}
    new = {
        "env": [{"name": "B", "value": "3"}, {"name": "C", "value": "4"}],
        "labels": {"app.kubernetes.io/name": "x"},
    }
    assert changed_paths(old, new) == [
        "env[name=B].value",
        "env[name=C]",
        "env[name=A]",
        'labels["app.kubernetes.io/name"]',
    ]


def test_a_redacted_secret_shows_no_change_and_many_paths_are_summarised() -> None:
    assert (
        changed_paths({"stringData": {"token": "[secret]"}}, {"stringData": {"token": "[secret]"}})
        == []
    )
    old = plan(("t:a", "big", {str(i): i for i in range(20)}))
    new = plan(("t:a", "big", {str(i): i + 1 for i in range(20)}))
    (change,) = diff(old, new)
    assert change.lines()[-1] == "    ... and 8 more"


@pytest.mark.parametrize(
    ("probes", "words"),
    [
        (PROBES, "probes (startup up to 90 min, readiness timeout 5 s)"),
        # the given fields: a delay counts, a partial minute rounds up
        ({"startupProbe": {"initialDelaySeconds": 60, "periodSeconds": 7,
                           "failureThreshold": 10},
          "readinessProbe": {"timeoutSeconds": 10}},
         "probes (startup up to 3 min, readiness timeout 10 s)"),
        # Kubernetes' defaults for what a spec leaves out (10 s x 3, a 1 s timeout)
        ({"livenessProbe": {}}, "probes (startup up to 1 min, readiness timeout 1 s)"),
        ({"startupProbe": {"periodSeconds": "x"}, "readinessProbe": {"timeoutSeconds": True}},
         "probes (startup up to 1 min, readiness timeout 1 s)"),
        ({}, "the operator's own probes"),
        (None, "the operator's own probes"),
    ],
)  # fmt: skip
def test_the_operator_line_always_names_the_probes(probes: Any, words: str) -> None:
    worker = {} if probes is None else {"probes": probes}
    assert operator_line({"worker": worker}) == f"  operator: {words}"
    routed = {"worker": worker, "intelligentRoutingSpec": {"enabled": True, "routingStrategy": "x"}}
    assert operator_line(routed).startswith(f"  operator: routing x (adding or removing it "
                                            f"replaces the endpoint), {words}")  # fmt: skip
