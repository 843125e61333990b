"""Time of `mlcc plan` for a stack, as a ratio to a bare process importing the same SDKs.

The ratio is the program's own overhead (config, components, mock engine, manifests) on top of
what any Pulumi program pays to import its SDKs. The SDKs load their resource modules lazily,
so the bare process touches a class of each module the program uses (aws.ec2.Vpc, ...), not
just the top-level packages. Runs are interleaved so machine noise affects both sides alike;
the median of each side is reported, in wall time and in CPU time (user + system of the
process: steadier than wall time when other jobs share the machine).

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
        plan = [sys.executable, "-m", "mlcc", "plan", "--stack", args.stack, "--out", out]
        for assignment in args.sets:
            plan += ["--set", assignment]
        bare = [sys.executable, "-c", SDK_IMPORTS]
        timed(bare)  # warm the file cache once for both
        plan_times, bare_times = [], []
        for _ in range(args.runs):
            plan_times.append(timed(plan))
            bare_times.append(timed(bare))
    name = f"mlcc plan --stack {args.stack}"
    for index, kind in enumerate(("wall", "CPU")):
        plan_median = statistics.median(run[index] for run in plan_times)
        bare_median = statistics.median(run[index] for run in bare_times)
        print(f"{kind}: {name}: median {plan_median:.3f} s over {args.runs} runs")
        print(f"{kind}: bare SDK imports: median {bare_median:.3f} s")
        print(f"{kind}: ratio plan / bare imports: {plan_median / bare_median:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
