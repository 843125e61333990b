"""Capacity counts each pod once: every endpoint's and twin's pods, with their GPUs, on the nodes
they share. For the pods they start with a shortage is an error, at the autoscaling ceilings a
warning; both only when true (checked against an exhaustive packing)."""

from __future__ import annotations

import json
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from program_runs import stack_values

from mlcc.config.aws.capacity import nodes_needed, start_pods
from mlcc.config.stack import ConfigError, Parsed, parse
from mlcc.manifest import workload
from mlcc.preflight.account import checks as account_checks

REGIONS = {"aws:region": "us-east-1", "aws-native:region": "us-east-1"}
BASE = {"hp:model": "meta-llama/Llama-3.1-8B-Instruct", **REGIONS}
TYPE = "ml.g5.12xlarge"  # 4 GPUs a node
KEY = "hp:instanceGroups"


def stack(entries: list[dict[str, object]], nodes: int) -> dict[str, str]:
    groups = [{"name": "g", "instanceType": TYPE, "instanceCount": nodes}]
    return {
        **BASE,
        "hp:endpoints": json.dumps(entries),
        "hp:instanceGroups": json.dumps(groups),
    }


def outcome(values: dict[str, str]) -> tuple[list[str], list[str]]:
    """(errors, warnings) about the instance groups; any other error fails the test."""
    errors, warnings, others = full_outcome(values)
    assert others == []
    return errors, warnings


def full_outcome(values: dict[str, str]) -> tuple[list[str], list[str], list[str]]:
    """(errors and warnings about the instance groups, other errors)."""
    try:
        parsed: Parsed = parse(values, stack="dev")
    except ConfigError as error:
        mine = [p.message for p in error.problems if p.key == KEY]
        return mine, [], [str(p) for p in error.problems if p.key != KEY]
    return [], [w.message for w in parsed.warnings if w.key == KEY], []


def test_the_multi_example_warns_of_five_pods_at_peak_on_four_nodes() -> None:
    parsed = parse(stack_values("multi").values, stack="multi")
    (warning,) = [str(w) for w in parsed.warnings if w.key == KEY]
    assert warning == (
        "hp:instanceGroups: llama-eagle3 (up to 2), qwen-ngram (1), llama-eagle3-baseline (up to "
        "2) can run 5 pods at peak on 4 ml.g5.12xlarge nodes: they need at least 5 (a pod takes "
        "4 of a node's 4 GPUs); at peak the pods past that stay Pending: lower autoscaling "
        "maxReplicas (a baseline twin has its endpoint's), or raise the instanceCount of the "
        "ml.g5.12xlarge groups to 5"
    )


def test_the_multi_example_with_a_fifth_node_plans_without_the_warning() -> None:
    groups = json.dumps([{"name": "g5-inference", "instanceType": TYPE, "instanceCount": 5}])
    values = stack_values("multi", {"hp:instanceGroups": groups}).values
    assert not [w for w in parse(values, stack="multi").warnings if w.key == KEY]


def test_replicas_past_the_nodes_are_refused() -> None:
    errors, _ = outcome(stack([{"name": "a", "replicas": 2}, {"name": "b", "replicas": 1}], 2))
    assert errors == [
        "a (2), b (1) start 3 pods at deploy on 2 ml.g5.12xlarge nodes: they need at least 3 "
        "(a pod takes 4 of a node's 4 GPUs); the pods past that would stay Pending: raise the "
        "instanceCount of the ml.g5.12xlarge groups, or lower hp:replicas (or autoscaling "
        "minReplicas)"
    ]


def test_the_pods_counted_at_deploy_are_those_the_cr_starts_with() -> None:
    """hp:replicas inside autoscaling's range, else its minimum (at least one): the CR's."""
    parsed = parse(
        stack(
            [
                {"name": "a", "replicas": 3, "autoscaling": {"minReplicas": 1, "maxReplicas": 4}},
                {"name": "b", "replicas": 5, "autoscaling": {"minReplicas": 0, "maxReplicas": 2}},
                {"name": "c", "replicas": 1, "autoscaling": {"minReplicas": 2, "maxReplicas": 3}},
                {"name": "d", "replicas": 2},
            ],
            20,
        ),
        stack="dev",
    ).config
    for endpoint in parsed.endpoints:
        assert start_pods(endpoint) == workload.from_endpoint(parsed, endpoint).replicas
    assert [start_pods(e) for e in parsed.endpoints] == [3, 1, 2, 2]


def test_a_baseline_twin_s_pods_are_counted() -> None:
    errors, _ = outcome(stack([{"name": "a", "baseline": True}], 1))
    assert errors and errors[0].startswith("a (1), a-baseline (1) start 2 pods")


def test_autoscaling_minimum_is_the_floor_and_its_ceiling_the_peak() -> None:
    """Each ceiling fits beside the other's replicas (else that ceiling is refused); together
    they may not."""
    entries = [{"name": "a", "autoscaling": {"minReplicas": 1, "maxReplicas": 2}}, {"name": "b"}]
    assert outcome(stack(entries, 3)) == ([], [])
    entries[1]["autoscaling"] = {"minReplicas": 1, "maxReplicas": 2}
    errors, warnings = outcome(stack(entries, 3))
    assert errors == []
    assert [w.split(" can run ")[1][:40] for w in warnings] == [
        "4 pods at peak on 3 ml.g5.12xlarge nodes"
    ]
    entries[0]["autoscaling"] = {"minReplicas": 2, "maxReplicas": 2}
    entries[1]["autoscaling"] = {"minReplicas": 1, "maxReplicas": 1}
    errors, warnings = outcome(stack(entries, 3))
    assert errors == [] and warnings == []


def test_pods_that_take_part_of_a_node_share_it() -> None:
    """gpuCount 1 on 4-GPU nodes: four pods a node."""
    entries = [{"name": "a", "gpuCount": 1, "replicas": 3}, {"name": "b", "gpuCount": 1}]
    assert outcome(stack(entries, 1)) == ([], [])


def test_gpus_are_counted_per_pod_not_summed_over_the_nodes() -> None:
    """Five pods of 3 GPUs take 15 of 16 GPUs but five nodes: one pod a 4-GPU node."""
    entries = [
        {"name": "a", "gpuCount": 3, "replicas": 3},
        {"name": "b", "gpuCount": 3, "replicas": 2},
    ]
    errors, _ = outcome(stack(entries, 4))
    assert errors and "they need at least 5 (a pod takes 3 of a node's 4 GPUs)" in errors[0]


def test_the_autoscaling_ceiling_counts_whole_pods_beside_the_others() -> None:
    """b's 3-GPU pod takes a node alone: a (3 GPUs a pod) has room for 2 pods on 3 nodes."""
    entries = [
        {"name": "a", "gpuCount": 3, "autoscaling": {"maxReplicas": 3}},
        {"name": "b", "gpuCount": 3},
    ]
    with pytest.raises(ConfigError) as raised:
        parse(stack(entries, 3), stack="dev")
    (line,) = [str(p) for p in raised.value.problems]
    assert line.startswith("hp:endpoints[0].autoscaling.maxReplicas: is 3 but the instance ")
    assert "hold at most 2 replica(s)" in line


# --- hypothesis: every refusal and warning is true, checked by exhaustive packing --------------


@cache
def packs(pods: tuple[int, ...], free: tuple[int, ...]) -> bool:
    """Whether the pods (GPUs each, largest first) fit nodes with `free` GPUs, trying all."""
    if not pods:
        return True
    first, rest = pods[0], pods[1:]
    tried: set[int] = set()
    for index, space in enumerate(free):
        if space >= first and space not in tried:
            tried.add(space)
            left = tuple(sorted((*free[:index], space - first, *free[index + 1 :])))
            if packs(rest, left):
                return True
    return False


def fits(entries: list[dict[str, object]], nodes: int, at_peak: bool) -> bool:
    pods: list[int] = []
    for entry in entries:
        scaling = entry.get("autoscaling")
        replicas = int(str(entry.get("replicas", 1)))
        count = replicas
        if isinstance(scaling, dict):
            low, high = int(str(scaling["minReplicas"])), int(str(scaling["maxReplicas"]))
            count = high if at_peak else replicas if low <= replicas <= high else max(low, 1)
        copies = 2 if entry.get("baseline") else 1
        pods += [int(str(entry["gpuCount"]))] * int(str(count)) * copies
    return packs(tuple(sorted(pods, reverse=True)), tuple([4] * nodes))


ENTRY = st.fixed_dictionaries(
    {"gpuCount": st.integers(1, 4), "replicas": st.integers(1, 3), "baseline": st.booleans()},
    optional={
        "autoscaling": st.tuples(st.integers(0, 2), st.integers(1, 3)).map(
            lambda t: {"minReplicas": min(t), "maxReplicas": max(t[1], 1)}
        )
    },
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries=st.lists(ENTRY, min_size=1, max_size=3), nodes=st.integers(1, 5))
def test_any_refusal_or_warning_about_shared_nodes_is_true(
    entries: list[dict[str, object]], nodes: int
) -> None:
    named = [{"name": f"e{i}", **entry} for i, entry in enumerate(entries)]
    errors, warnings, others = full_outcome(stack(named, nodes))
    if errors:
        assert all(" start " in e and " pods at deploy on " in e for e in errors)
        assert not fits(named, nodes, at_peak=False)
    if warnings:
        assert not fits(named, nodes, at_peak=True)
    sizes = {entry["gpuCount"] for entry in entries}
    if len(sizes) == 1 and not errors and not others:  # one pod size: the count is exact
        assert fits(named, nodes, at_peak=False)
        assert bool(warnings) == (not fits(named, nodes, at_peak=True))


def test_nodes_needed_counts_whole_pods() -> None:
    assert nodes_needed({3: 5}, 4) == 5  # 15 of 16 GPUs, but a 3-GPU pod a node
    assert nodes_needed({1: 4}, 4) == 1
    assert nodes_needed({2: 3, 1: 2}, 4) == 2
    assert nodes_needed({4: 2, 1: 1}, 4) == 3
    assert nodes_needed({}, 4) == 0


def test_preflight_counts_an_existing_cluster_s_nodes_the_same_way() -> None:
    """The existing-cluster and quota checks of preflight share the pod count."""
    entries = [
        {"name": "a", "gpuCount": 3, "replicas": 3},
        {"name": "b", "gpuCount": 3, "replicas": 2},
    ]
    values = {**BASE, "hp:endpoints": json.dumps(entries)}
    endpoints = parse(values, stack="dev").config.endpoints
    assert account_checks.nodes_needed(endpoints, TYPE, 4, ceiling=False) == 5


def test_groups_without_nodes_warn_that_the_pods_wait_for_them() -> None:
    """instanceCount 0 keeps the cluster without GPUs (docs/infrastructure.md): not an error."""
    errors, warnings = outcome(stack([{"name": "a", "baseline": True}], 0))
    assert errors == []
    assert warnings == [
        "the ml.g5.12xlarge groups have no node (instanceCount 0), so the pods of a, a-baseline "
        "stay Pending until they have; with hp:waitForEndpoints, pulumi up fails on them"
    ]


def test_a_capacity_line_names_a_few_endpoints_when_there_are_many() -> None:
    entries = [{"name": f"e{i}", "autoscaling": {"maxReplicas": 2}} for i in range(40)]
    _, warnings = outcome(stack(entries, 60))
    (warning,) = warnings
    assert warning.startswith("e0 (up to 2), e1 (up to 2), e2 (up to 2), e3 (up to 2), e4 (up ")
    assert ", and 34 more endpoints can run 80 pods at peak on 60 ml.g5.12xlarge nodes" in warning
    assert len(warning) < 400


def test_two_ceilings_cannot_both_count_the_same_spare_node() -> None:
    """Issue #43 item 3c: a and b each fit their ceiling of 2 beside the other's 1 replica on 3
    nodes (pods_that_fit), but at peak they run 4 pods: one warning naming both, the nodes
    needed against those there are, and the keys to change."""
    scaling = {"minReplicas": 1, "maxReplicas": 2}
    entries: list[dict[str, object]] = [
        {"name": "a", "autoscaling": scaling},
        {"name": "b", "autoscaling": scaling},
    ]
    assert outcome(stack(entries, 3)) == (
        [],
        [
            "a (up to 2), b (up to 2) can run 4 pods at peak on 3 ml.g5.12xlarge nodes: they "
            "need at least 4 (a pod takes 4 of a node's 4 GPUs); at peak the pods past that "
            "stay Pending: lower autoscaling maxReplicas, or raise the instanceCount of the "
            "ml.g5.12xlarge groups to 4"
        ],
    )
    assert outcome(stack(entries, 4)) == ([], [])
