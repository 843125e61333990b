"""Time of `mlcc plan` as the endpoints grow: 10, 100, 1000 endpoints; the cost per endpoint.

Each size is a generated stack in a temporary project folder (the checkout's Pulumi.yaml and
__main__.py beside a Pulumi.scale<N>.yaml): a realistic mix of vLLM and SGLang endpoints on
two instance types, EAGLE-3 and n-gram speculation and none, baseline twins and autoscaling,
with instance groups sized for every pod at its ceiling (twins included) within SageMaker's
limits from botocore's service model. Every plan must succeed without a warning; the script
stops otherwise. It prints per size the median wall and CPU time (user + system of the `mlcc
plan` process) and the least-squares slope over the sizes: the cost of one more endpoint.

With --baseline DIR (another checkout, e.g. `git archive <commit> | tar -x -C DIR`), both
checkouts plan the same stacks, runs alternating so machine noise falls on both alike, and the
ratios baseline / this are printed. Results: benchmarks/plan_scale.md.

    python benchmarks/plan_scale.py [--sizes 10,100,1000] [--runs 3] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import copy
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import botocore.session
import yaml

REPO = Path(__file__).resolve().parent.parent
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
EAGLE3_LLAMA = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
QWEN = "Qwen/Qwen3-8B"
BIG, SMALL = "ml.g5.12xlarge", "ml.g6e.2xlarge"  # 4 GPUs (tensor parallel 4), 1 GPU


def sagemaker_bound(shape: str) -> int:
    """The `max` of a shape of SageMaker's service model (botocore's copy)."""
    model = botocore.session.get_session().get_service_model("sagemaker")
    return int(model.shape_for(shape).metadata["max"])


# Nodes per group: SageMaker's ClusterInstanceCount, and the 100 of hp:instanceGroups'
# instanceCount (mlcc/config/infrastructure.py), whichever is lower.
GROUP_NODES = min(sagemaker_bound("ClusterInstanceCount"), 100)
MAX_GROUPS = sagemaker_bound("ClusterInstanceGroupSpecifications")


# One cycle of entries; each is (name prefix, endpoints it adds, entry).
PROFILES: tuple[tuple[str, int, dict[str, Any]], ...] = (
    (
        "llama-eagle3",
        2,  # with its speculation-off twin
        {
            "speculativeAlgorithm": "eagle3",
            "speculativeModel": EAGLE3_LLAMA,
            "speculativeNumTokens": 5,
            "baseline": True,
        },
    ),
    (
        "qwen-ngram",
        1,
        {
            "engine": "sglang",
            "model": QWEN,
            "instanceType": SMALL,
            "speculativeAlgorithm": "ngram",
            "speculativeNumTokens": 4,
        },
    ),
    (
        "llama-auto",
        1,
        {
            "speculativeAlgorithm": "eagle3",
            "speculativeModel": EAGLE3_LLAMA,
            "autoscaling": {"minReplicas": 1, "maxReplicas": 3},
        },
    ),
    (
        "llama-ngram",
        1,
        {"instanceType": SMALL, "speculativeAlgorithm": "ngram", "speculativeNumTokens": 3},
    ),
    (
        "qwen-auto",
        1,
        {
            "engine": "sglang",
            "model": QWEN,
            "instanceType": SMALL,
            "autoscaling": {"minReplicas": 1, "maxReplicas": 2},
        },
    ),
    ("llama-plain", 1, {"replicas": 2}),
)


def entries(endpoints: int) -> list[dict[str, Any]]:
    """Entries of hp:endpoints that make `endpoints` endpoints (twins counted)."""
    made: list[dict[str, Any]] = []
    count = 0
    while count < endpoints:
        prefix, adds, entry = PROFILES[len(made) % len(PROFILES)]
        if count + adds > endpoints:  # no room for a twin: the last one goes alone
            entry = {k: v for k, v in entry.items() if k != "baseline"}
            adds = 1
        made.append({"name": f"{prefix}-{len(made)}", **copy.deepcopy(entry)})  # no YAML anchors
        count += adds
    return made


def pods_at_ceiling(entry: dict[str, Any]) -> int:
    scaling = entry.get("autoscaling") or {}
    pods = max(int(entry.get("replicas", 1)), int(scaling.get("maxReplicas", 0)))
    return pods * (2 if entry.get("baseline") else 1)


def instance_groups(made: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Groups of at most GROUP_NODES nodes per type, for every pod at its ceiling."""
    groups: list[dict[str, Any]] = []
    for instance_type in (BIG, SMALL):
        sharing = [e for e in made if e.get("instanceType", BIG) == instance_type]
        # A node per pod: an endpoint's pods take every GPU of the type (hp:gpuCount's default).
        nodes = sum(pods_at_ceiling(e) for e in sharing)
        prefix = instance_type.removeprefix("ml.").replace(".", "-")
        for index in range(math.ceil(nodes / GROUP_NODES)):
            count = min(GROUP_NODES, nodes - index * GROUP_NODES)
            groups.append(
                {"name": f"{prefix}-{index}", "instanceType": instance_type, "instanceCount": count}
            )
    if len(groups) > MAX_GROUPS:
        raise SystemExit(f"plan_scale: {len(groups)} instance groups; SageMaker takes {MAX_GROUPS}")
    return groups


def stack_file(endpoints: int) -> dict[str, Any]:
    made = entries(endpoints)
    config = {
        "aws:region": "us-east-1",
        "aws-native:region": "us-east-1",
        "hp:model": LLAMA,
        "hp:instanceType": BIG,
        "hp:namespace": "inference",
        "hp:maxModelLen": 8192,
        "hp:endpoints": made,
        "hp:instanceGroups": instance_groups(made),
        "hp:tags": {"team": "ml-platform"},
    }
    return {"config": config}


@dataclass(frozen=True)
class Checkout:
    name: str
    path: Path


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def project(checkout: Checkout, sizes: list[int], scratch: Path) -> Path:
    """A project folder with the checkout's program and the generated stacks."""
    folder = scratch / checkout.name
    folder.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(checkout.path / name, folder / name)
    for size in sizes:
        text = yaml.safe_dump(stack_file(size), sort_keys=False)
        (folder / f"Pulumi.scale{size}.yaml").write_text(text, encoding="utf-8")
    return folder


def plan(checkout: Checkout, folder: Path, size: int) -> Timing:
    command = [sys.executable, "-m", "mlcc", "plan", "--stack", f"scale{size}"]
    command += ["--out", str(folder / f"out{size}")]
    env = {**os.environ, "PYTHONPATH": str(checkout.path)}
    cpu_before, start = children_cpu(), time.perf_counter()
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    timing = Timing(time.perf_counter() - start, children_cpu() - cpu_before)
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    if done.returncode != 0 or warnings:
        lines = (done.stderr or done.stdout).strip().splitlines()[:5]
        raise SystemExit(
            f"plan_scale: {checkout.name}: {size} endpoints: exit {done.returncode}: {lines}"
        )
    return timing


def slope(sizes: list[int], seconds: list[float]) -> tuple[float, float]:
    """Least squares: (seconds per endpoint, seconds at zero endpoints)."""
    fit = statistics.linear_regression(sizes, seconds)
    return fit.slope, fit.intercept


def report(checkout: Checkout, sizes: list[int], runs: dict[int, list[Timing]]) -> list[float]:
    walls = [statistics.median(t.wall for t in runs[size]) for size in sizes]
    cpus = [statistics.median(t.cpu for t in runs[size]) for size in sizes]
    print(f"\n{checkout.name} ({checkout.path}):")
    print("  endpoints   wall, median   CPU, median   wall / smallest")
    for size, wall, cpu in zip(sizes, walls, cpus, strict=True):
        print(f"  {size:9d}   {wall:10.2f} s   {cpu:9.2f} s   {wall / walls[0]:6.2f}")
    wall_slope, wall_fixed = slope(sizes, walls)
    cpu_slope, cpu_fixed = slope(sizes, cpus)
    print(f"  per endpoint: wall {wall_slope * 1000:.1f} ms, CPU {cpu_slope * 1000:.1f} ms")
    print(f"  fixed cost:   wall {wall_fixed:.2f} s, CPU {cpu_fixed:.2f} s")
    return [wall_slope, cpu_slope, *walls, *cpus]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000", help="endpoint counts, comma-separated")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with")
    args = parser.parse_args()
    sizes = sorted({int(size) for size in args.sizes.split(",")})
    if len(sizes) < 2 or sizes[0] < 1:
        parser.error("--sizes: at least two endpoint counts, each 1 or more")
    checkouts = [Checkout("this", REPO)]
    if args.baseline:
        checkouts.insert(0, Checkout("baseline", args.baseline.resolve()))
    with tempfile.TemporaryDirectory() as scratch:
        folders = {c.name: project(c, sizes, Path(scratch)) for c in checkouts}
        for checkout in checkouts:  # warm the file cache
            plan(checkout, folders[checkout.name], sizes[0])
        runs: dict[str, dict[int, list[Timing]]] = {
            c.name: {s: [] for s in sizes} for c in checkouts
        }
        for _ in range(args.runs):
            for size in sizes:
                for checkout in checkouts:
                    runs[checkout.name][size].append(plan(checkout, folders[checkout.name], size))
    figures = {c.name: report(c, sizes, runs[c.name]) for c in checkouts}
    if args.baseline:
        before, after = figures["baseline"], figures["this"]
        labels = ["per endpoint, wall", "per endpoint, CPU"]
        labels += [f"{size} endpoints, wall" for size in sizes]
        labels += [f"{size} endpoints, CPU" for size in sizes]
        print("\nbaseline / this (above 1: this is faster):")
        for label, old, new in zip(labels, before, after, strict=True):
            print(f"  {label:24s} {old / new:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
