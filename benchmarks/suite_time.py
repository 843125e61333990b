"""Time of the whole pytest suite in two checkouts (before, after), side by side, and the ratio.

Each run is `python -m pytest -p no:cacheprovider` in the checkout's folder with the checkout
first on PYTHONPATH, so both sides use this interpreter and its packages. Runs alternate
(before, after, before, ...) so machine noise falls on both sides alike; the median wall time
and the median CPU time (user + system of pytest and its children, which other processes on a
shared machine disturb less) are reported, with each side's test counts from its JUnit report
so a speed-up cannot come from running fewer tests.

    python benchmarks/suite_time.py BEFORE AFTER [--runs 3] [--before-env KEY=VALUE ...]
        [--after-args="-n auto"]

--before-env/--after-env set variables for one side only (e.g. where an old checkout looked
for files that are now in the repository); --before-args/--after-args add pytest arguments to
one side (e.g. `-n auto` for an old checkout whose pyproject.toml does not set it).
--same-tests runs on the after side only the tests the before side has (matched by test name
and parameters, as files move between folders): the time of the same work, apart from the
tests added since. Results of a run: benchmarks/suite_time.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    tests: int
    skipped: int
    failed: int
    failures: tuple[str, ...] = ()


@dataclass(frozen=True)
class Side:
    name: str
    checkout: Path
    env: dict[str, str]
    args: tuple[str, ...] = ()


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def junit_counts(root: ET.Element) -> tuple[int, int, int]:
    """(tests, skipped, failed or errored) summed over the report's test suites."""
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    total = {key: sum(int(s.get(key, "0")) for s in suites) for key in ("tests", "skipped")}
    failed = sum(int(s.get("failures", "0")) + int(s.get("errors", "0")) for s in suites)
    return total["tests"], total["skipped"], failed


def junit_failures(root: ET.Element) -> tuple[str, ...]:
    """The failed or errored tests of the report, as `classname::name`."""
    return tuple(
        f"{case.get('classname', '')}::{case.get('name', '')}"
        for case in root.iter("testcase")
        if case.find("failure") is not None or case.find("error") is not None
    )


def environment(side: Side) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(side.checkout), **side.env}


def collected(side: Side) -> list[str]:
    """The node ids of the side's suite (`--collect-only`, one id a line)."""
    command = [sys.executable, "-m", "pytest", "--collect-only", "-p", "no:cacheprovider"]
    command += ["-o", "addopts=--import-mode=importlib", "-q"]
    done = subprocess.run(
        command, cwd=side.checkout, env=environment(side), capture_output=True, text=True
    )
    ids = [line for line in done.stdout.splitlines() if "::" in line]
    if not ids:
        raise SystemExit(f"suite_time: collecting in {side.checkout} found no tests")
    return ids


def same_tests(before: Side, after: Side, scratch: Path) -> Side:
    """`after`, running only the tests whose `name[parameters]` the before side also has."""
    names = {node.split("::", 1)[1] for node in collected(before)}
    kept = [node for node in collected(after) if node.split("::", 1)[1] in names]
    listing = scratch / "same-tests.txt"
    listing.write_text("\n".join(kept) + "\n", encoding="utf-8")
    print(f"same tests: {len(kept)} of the after side's, {len(names)} names before")
    return Side(after.name, after.checkout, after.env, (*after.args, f"@{listing}"))


def run_suite(side: Side) -> Run:
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "junit.xml"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        command += [f"--junitxml={report}", *side.args]
        env = environment(side)
        cpu_before, start = children_cpu(), time.perf_counter()
        done = subprocess.run(command, cwd=side.checkout, env=env, capture_output=True, text=True)
        wall, cpu = time.perf_counter() - start, children_cpu() - cpu_before
        if not report.is_file():
            last_line = (done.stderr or done.stdout).strip().splitlines()[-1:]
            raise SystemExit(f"suite_time: pytest in {side.checkout} did not run: {last_line}")
        root = ET.parse(report).getroot()
    return Run(wall, cpu, *junit_counts(root), junit_failures(root))


def assignments(pairs: list[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"suite_time: expected KEY=VALUE, got {pair!r}")
        env[key] = value
    return env


def row(side: Side, runs: list[Run]) -> str:
    last = runs[-1]
    walls = ", ".join(f"{r.wall:.1f}" for r in runs)
    return (
        f"| {side.name} | {statistics.median(r.wall for r in runs):.1f} s ({walls}) "
        f"| {statistics.median(r.cpu for r in runs):.1f} s "
        f"| {last.tests} | {last.skipped} | {last.failed} |"
    )


def report(sides: tuple[Side, Side], results: dict[str, list[Run]]) -> str:
    before, after = (results[side.name] for side in sides)
    wall_ratio = statistics.median(r.wall for r in before) / statistics.median(
        r.wall for r in after
    )
    cpu_ratio = statistics.median(r.cpu for r in before) / statistics.median(r.cpu for r in after)
    return "\n".join(
        [
            "| checkout | wall, median (each run) | CPU, median | tests | skipped | failed |",
            "| --- | --- | --- | --- | --- | --- |",
            *(row(side, results[side.name]) for side in sides),
            "",
            f"before / after: wall {wall_ratio:.2f}x, CPU {cpu_ratio:.2f}x",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="checkout to time first (the baseline)")
    parser.add_argument("after", type=Path, help="checkout to compare with it")
    parser.add_argument("--runs", type=int, default=3, help="runs per checkout (default 3)")
    parser.add_argument("--before-env", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--after-env", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--before-args", default="", metavar="ARGS", help="pytest arguments")
    parser.add_argument("--after-args", default="", metavar="ARGS", help="pytest arguments")
    parser.add_argument(
        "--same-tests", action="store_true", help="after runs only the tests before has"
    )
    args = parser.parse_args()
    sides = (
        Side(
            "before",
            args.before.resolve(),
            assignments(args.before_env),
            tuple(shlex.split(args.before_args)),
        ),
        Side(
            "after",
            args.after.resolve(),
            assignments(args.after_env),
            tuple(shlex.split(args.after_args)),
        ),
    )
    for side in sides:
        if not (side.checkout / "pyproject.toml").is_file():
            raise SystemExit(f"suite_time: {side.checkout} is not a checkout (no pyproject.toml)")
    with tempfile.TemporaryDirectory() as scratch:
        if args.same_tests:
            sides = (sides[0], same_tests(*sides, Path(scratch)))
        results: dict[str, list[Run]] = {side.name: [] for side in sides}
        for number in range(1, args.runs + 1):
            for side in sides:
                run = run_suite(side)
                results[side.name].append(run)
                print(f"run {number} {side.name}: {run.wall:.1f} s wall, {run.cpu:.1f} s CPU")
                for failure in run.failures:
                    print(f"  failed: {failure}")
    print(report(sides, results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
