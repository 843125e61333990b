"""The concurrency sweep's flags on `mlcc bench` and the plan they make: the levels, the repeats
and requests of each level, the crossover threshold, and the senders to the endpoint and to its
baseline twin (docs/bench.md). `mlcc.cli.bench.sweep` registers them and runs the plan.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mlcc.bench import inputs
from mlcc.bench.client import access
from mlcc.bench.sweep import levels as sweep_levels
from mlcc.bench.sweep import report as sweep_report
from mlcc.bench.sweep.crossover import DEFAULT_MIN_SPEEDUP
from mlcc.cli.bench import candidate as bench_candidate
from mlcc.cli.bench import command as bench
from mlcc.userfiles.numbers import number

SWEEP_FLAGS = ("twin_url", "repeats", "per_user", "min_speedup")
MAX_MIN_SPEEDUP = 100.0


def add_flags(parser: argparse.ArgumentParser) -> None:
    """The sweep's flags, in their own group of `mlcc bench --help`."""
    group = parser.add_argument_group(
        "concurrency sweep (--concurrency C1,C2,...; any of these flags makes a run a sweep)"
    )
    group.add_argument(
        "--twin-url",
        metavar="BASE_URL",
        help="the baseline twin's OpenAI API (default with --stack: "
        f"{access.local_url(access.LOCAL_PORT + 1)}, the port-forward it prints)",
    )
    group.add_argument(
        "--repeats",
        metavar="R",
        help=f"runs of each level on each side, default {sweep_levels.DEFAULT_REPEATS}, "
        f"2 to {sweep_levels.MAX_REPEATS} (the speedup's interval)",
    )
    group.add_argument(
        "--per-user",
        metavar="N",
        help=f"each repeat of level C sends N x C requests (default "
        f"{sweep_levels.DEFAULT_PER_USER}), at least --requests",
    )
    group.add_argument(
        "--min-speedup",
        metavar="S",
        help=f"the crossover is where the speedup falls under S (default {DEFAULT_MIN_SPEEDUP:g})",
    )
    group.add_argument(
        "--recommend",
        action="store_true",
        help="derive hp:speculativeSchedule from the sweep",
    )
    group.add_argument(
        "--apply",
        action="store_true",
        help="with --stack: write the --recommend schedule, or the candidate head when it "
        "wins (--candidate-url), to Pulumi.<stack>.yaml",
    )
    bench_candidate.add_flags(parser)


def wanted(args: argparse.Namespace) -> bool:
    flags = any(getattr(args, name) is not None for name in SWEEP_FLAGS)
    asked = "," in str(args.concurrency) or flags or args.recommend or args.apply
    return asked or bench_candidate.wanted(args)


@dataclass(frozen=True)
class SweepPlan:
    counts: sweep_levels.SweepCounts
    min_speedup: float
    endpoint: bench.Plan
    twin: bench.Plan
    candidate: bench_candidate.CandidatePlan | None = None


def usage(flag: str, parse: Callable[[str], Any], text: str) -> Any:
    try:
        return parse(text)
    except ValueError as error:
        raise bench.UsageError(f"{flag}: {error}") from None


def parse_min_speedup(text: str) -> float:
    return number(text, "", 0, MAX_MIN_SPEEDUP, above=True)


def plan_of(args: argparse.Namespace) -> SweepPlan:
    levels = usage("--concurrency", sweep_levels.parse_levels, args.concurrency)
    most = inputs.MAX_REQUESTS

    def count(text: str) -> int:
        return inputs.whole_number(text, most)

    counts = sweep_levels.SweepCounts(
        levels,
        usage("--repeats", sweep_levels.parse_repeats, args.repeats)
        if args.repeats is not None
        else sweep_levels.DEFAULT_REPEATS,
        usage("--per-user", count, args.per_user)
        if args.per_user is not None
        else sweep_levels.DEFAULT_PER_USER,
        usage("--requests", count, args.requests)
        if args.requests is not None
        else sweep_levels.DEFAULT_MIN_REQUESTS,
    )
    threshold = (
        usage("--min-speedup", parse_min_speedup, args.min_speedup)
        if args.min_speedup is not None
        else DEFAULT_MIN_SPEEDUP
    )
    if args.baseline:
        raise bench.UsageError(
            "--baseline: a sweep measures its own baseline, the twin at --twin-url; leave it out"
        )
    promoting = bench_candidate.wanted(args)
    if args.apply and args.recommend and promoting:
        raise bench.UsageError(
            "--apply writes either the --recommend schedule or the candidate head: run them apart"
        )
    if args.apply and not (args.recommend or promoting):
        raise bench.UsageError(
            "--apply writes the schedule --recommend derives, or the head --candidate-url "
            "measures: add one of them"
        )
    if args.apply and not args.stack:
        raise bench.UsageError("--apply needs --stack: the stack file to write")
    twin_url = args.twin_url or (access.local_url(access.LOCAL_PORT + 1) if args.stack else None)
    if twin_url is None:
        raise bench.UsageError(
            "a sweep compares the endpoint with its baseline twin: give --twin-url BASE_URL"
        )
    usage("--twin-url", lambda url: inputs.parse_http_url(url, False), twin_url)
    sweep_report.check_out(args.out, args.plot)
    top = counts.requests(levels[-1])
    single = argparse.Namespace(
        **vars(args) | {"concurrency": str(levels[-1]), "requests": str(top)}
    )
    endpoint = bench._plan(single)
    twin_stack = stack_twin(args) if args.stack else None
    twin = bench.plan_at(endpoint, twin_url, twin_stack, args.insecure)
    candidate = bench_candidate.plan_of(args, endpoint, levels) if promoting else None
    return SweepPlan(counts, threshold, endpoint, twin, candidate)


def stack_twin(args: argparse.Namespace) -> access.StackEndpoint | None:
    endpoints = access.stack_endpoints(args.project_dir, args.stack)  # read and checked before
    chosen = access.choose_endpoint(endpoints, args.endpoint)
    twin = access.twin_of(endpoints, chosen)
    if twin is None and args.twin_url is None:
        raise bench.UsageError(
            f"stack {args.stack}: {chosen.name} has no baseline twin (hp:baseline: true deploys "
            "one); or give --twin-url BASE_URL"
        )
    return twin
