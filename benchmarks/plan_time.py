"""Time of `mlcc plan` for a stack, as a ratio to a bare process importing the same SDKs.

The ratio is the program's own overhead (config, components, mock engine, manifests) on top of
what any Pulumi program pays to import its SDKs. The SDKs load their resource modules lazily,
so the bare process touches a class of each module the program uses (aws.ec2.Vpc, ...), not
just the top-level packages. Runs are interleaved so machine noise affects both sides alike;
the median of each side is reported, in wall time and in CPU time (user + system of the
process: steadier than wall time when other jobs share the machine).

`mlcc` freezes its heap before it exits (the interpreter's shutdown would run the cyclic
collector over all of the SDKs' objects, about 0.5 s). The bare process exits as any Python
program does; a second ratio, like for like, is against a bare process that freezes too, which
is the program's own overhead alone.

    python benchmarks/plan_time.py [--stack dev] [--runs 5] [--set KEY=VALUE ...]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SDK_IMPORTS = (
    "import pulumi, pulumi_aws as aws, pulumi_aws_native as native, pulumi_eks as eks, "
    "pulumi_kubernetes as k8s, pulumi_docker_build as docker_build, boto3, yaml\n"
    "classes = (aws.ec2.Vpc, aws.iam.Role, aws.s3.Bucket, aws.eks.Addon, aws.ecr.Repository, "
    "aws.vpc.SecurityGroupIngressRule, native.sagemaker.Cluster, k8s.core.v1.Namespace, "
    "k8s.meta.v1.ObjectMetaArgs, k8s.helm.v3.Release, k8s.apiextensions.CustomResource, "
    "eks.Cluster, docker_build.Image)"
)
FREEZE_AT_EXIT = "\nimport gc\ngc.freeze()\n"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of `command`."""
    cpu, start = children_cpu(), time.perf_counter()
    subprocess.run(command, cwd=REPO, check=True, capture_output=True)
    return time.perf_counter() - start, children_cpu() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="dev")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--set", dest="sets", action="append", default=[])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as out:
        name = f"mlcc plan --stack {args.stack}"
        plan = [sys.executable, "-m", "mlcc", "plan", "--stack", args.stack, "--out", out]
        for assignment in args.sets:
            plan += ["--set", assignment]
        sides = {
            name: plan,
            "bare SDK imports": [sys.executable, "-c", SDK_IMPORTS],
            "bare SDK imports, frozen at exit": [
                sys.executable,
                "-c",
                SDK_IMPORTS + FREEZE_AT_EXIT,
            ],
        }
        timed(sides["bare SDK imports"])  # warm the file cache once for all
        times: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
        for _ in range(args.runs):
            for side, command in sides.items():
                times[side].append(timed(command))
    for index, kind in enumerate(("wall", "CPU")):
        medians = {
            side: statistics.median(run[index] for run in runs) for side, runs in times.items()
        }
        print(f"{kind}: {name}: median {medians[name]:.3f} s over {args.runs} runs")
        for side in list(sides)[1:]:
            print(f"{kind}: {side}: median {medians[side]:.3f} s")
            print(f"{kind}: ratio plan / {side}: {medians[name] / medians[side]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
