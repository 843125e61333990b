"""`mlcc bench --concurrency 1,4,16,64`: every level against the endpoint and its baseline twin,
repeated, then the crossover and (`--recommend`) a load-aware schedule. The figures and their
rules are in `mlcc.bench.sweep`; this module adds the sweep's flags to `mlcc bench`, runs the
levels and writes what they gave. Without a sweep flag `mlcc bench` is `mlcc.cli.bench.command.run`.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlcc.bench import inputs, prompts, report, runner, stats
from mlcc.bench.client import access, transport
from mlcc.bench.client.stream import RequestResult
from mlcc.bench.prometheus import Sample
from mlcc.bench.sweep import levels as sweep_levels
from mlcc.bench.sweep import report as sweep_report
from mlcc.bench.sweep.crossover import DEFAULT_MIN_SPEEDUP
from mlcc.bench.sweep.figures import level_figures
from mlcc.cli.bench import command as bench
from mlcc.cli.bench import recommend as bench_recommend
from mlcc.engine_contract.values import printable
from mlcc.userfiles import UserFileError
from mlcc.userfiles.numbers import number

SWEEP_FLAGS = ("twin_url", "repeats", "per_user", "min_speedup")
MAX_MIN_SPEEDUP = 100.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench.register(subparsers)
    parser = subparsers.choices["bench"]
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
        help="with --recommend and --stack: write it to Pulumi.<stack>.yaml",
    )
    parser.set_defaults(run=run)


def wanted(args: argparse.Namespace) -> bool:
    flags = any(getattr(args, name) is not None for name in SWEEP_FLAGS)
    return "," in str(args.concurrency) or flags or args.recommend or args.apply


@dataclass(frozen=True)
class SweepPlan:
    counts: sweep_levels.SweepCounts
    min_speedup: float
    endpoint: bench.Plan
    twin: bench.Plan


class _Stop(Exception):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def run(args: argparse.Namespace) -> int:
    if not wanted(args):
        return bench.run(args)
    try:
        plan = _plan(args)
    except (bench.UsageError, UserFileError) as error:
        return bench._fail(str(error), bench.EXIT_USAGE)
    except (transport.TargetError, report.BaselineError, prompts.PromptFileError) as error:
        return bench._fail(str(error), bench.EXIT_FAILED)
    except KeyboardInterrupt:
        return bench._fail("interrupted before any request was sent", bench.EXIT_INTERRUPTED)
    return _sweep(args, plan)


def _usage(flag: str, parse: Callable[[str], Any], text: str) -> Any:
    try:
        return parse(text)
    except ValueError as error:
        raise bench.UsageError(f"{flag}: {error}") from None


def _threshold(text: str) -> float:
    return number(text, "", 0, MAX_MIN_SPEEDUP, above=True)


def _plan(args: argparse.Namespace) -> SweepPlan:
    levels = _usage("--concurrency", sweep_levels.parse_levels, args.concurrency)
    most = inputs.MAX_REQUESTS

    def count(text: str) -> int:
        return inputs.whole_number(text, most)

    counts = sweep_levels.SweepCounts(
        levels,
        _usage("--repeats", sweep_levels.parse_repeats, args.repeats)
        if args.repeats is not None
        else sweep_levels.DEFAULT_REPEATS,
        _usage("--per-user", count, args.per_user)
        if args.per_user is not None
        else sweep_levels.DEFAULT_PER_USER,
        _usage("--requests", count, args.requests)
        if args.requests is not None
        else sweep_levels.DEFAULT_MIN_REQUESTS,
    )
    threshold = (
        _usage("--min-speedup", _threshold, args.min_speedup)
        if args.min_speedup is not None
        else DEFAULT_MIN_SPEEDUP
    )
    if args.baseline:
        raise bench.UsageError(
            "--baseline: a sweep measures its own baseline, the twin at --twin-url; leave it out"
        )
    if args.apply and not args.recommend:
        raise bench.UsageError("--apply writes the schedule --recommend derives: add --recommend")
    if args.apply and not args.stack:
        raise bench.UsageError("--apply needs --stack: the stack file to write")
    twin_url = args.twin_url or (access.local_url(access.LOCAL_PORT + 1) if args.stack else None)
    if twin_url is None:
        raise bench.UsageError(
            "a sweep compares the endpoint with its baseline twin: give --twin-url BASE_URL"
        )
    _usage("--twin-url", lambda url: inputs.parse_http_url(url, False), twin_url)
    sweep_report.check_out(args.out, args.plot)
    top = counts.requests(levels[-1])
    single = argparse.Namespace(
        **vars(args) | {"concurrency": str(levels[-1]), "requests": str(top)}
    )
    endpoint = bench._plan(single)
    twin_stack = _stack_twin(args) if args.stack else None
    target = transport.HttpTarget(twin_url, endpoint.numbers.timeout_s, not args.insecure)
    twin = dataclasses.replace(
        endpoint,
        sender=bench._http_sender(target, twin_url, endpoint.model, twin_stack),
        target=twin_url,
        metrics_urls=[twin_url.rstrip("/") + "/metrics"],
    )
    return SweepPlan(counts, threshold, endpoint, twin)


def _stack_twin(args: argparse.Namespace) -> access.StackEndpoint | None:
    endpoints = access.stack_endpoints(args.project_dir, args.stack)  # read and checked before
    chosen = access.choose_endpoint(endpoints, args.endpoint)
    twin = access.twin_of(endpoints, chosen)
    if twin is None and args.twin_url is None:
        raise bench.UsageError(
            f"stack {args.stack}: {chosen.name} has no baseline twin (hp:baseline: true deploys "
            "one); or give --twin-url BASE_URL"
        )
    return twin


class _Quiet(runner.Progress):
    """A sweep prints a line per repeat, not the runs' own progress lines."""

    def update(self, result: RequestResult) -> None:
        pass

    def finish(self) -> None:
        pass


def _sweep(args: argparse.Namespace, plan: SweepPlan) -> int:
    counts = plan.counts
    finished: list[dict[str, Any]] = []
    runs: list[dict[str, Any]] = []
    warned: set[str] = set()
    stopped: _Stop | None = None
    try:
        for number, level in enumerate(counts.levels, 1):
            requests = counts.requests(level)
            pairs = []
            for repeat in range(1, counts.repeats + 1):
                pairs.append(_repeat(args, plan, level, repeat, runs, warned))
                _progress(level, number, len(counts.levels), repeat, counts.repeats, pairs[-1])
            own, twin = [p["endpoint"] for p in pairs], [p["twin"] for p in pairs]
            finished.append(level_figures(level, requests, own, twin, plan.endpoint.price[0]))
            _write(args.out, _document(args, plan, finished, runs, None), False)
    except transport.TargetError as error:  # bench.json could not be written
        stopped = _Stop(str(error), bench.EXIT_FAILED)
    except _Stop as stop:
        stopped = stop
    except KeyboardInterrupt:
        stopped = _Stop("interrupted between runs", bench.EXIT_INTERRUPTED)
    return _finish(args, plan, finished, runs, stopped)


def _repeat(
    args: argparse.Namespace,
    plan: SweepPlan,
    level: int,
    repeat: int,
    runs: list[dict[str, Any]],
    warned: set[str],
) -> dict[str, dict[str, Any]]:
    """One repeat of a level: the endpoint then the twin (the other way round on even repeats,
    so that a drift of the machine does not favour one side)."""
    sides = [("endpoint", plan.endpoint), ("twin", plan.twin)]
    pair: dict[str, dict[str, Any]] = {}
    for side, side_plan in sides if repeat % 2 else sides[::-1]:
        at = f"concurrency {level}, repeat {repeat}"
        summary = _measure(args, side_plan, side, level, plan.counts.requests(level), warned)
        kept = {key: value for key, value in summary.items() if key != "per_request"}
        runs.append({"concurrency": level, "repeat": repeat, "side": side} | kept)
        if summary["interrupted"]:
            raise _Stop(f"interrupted at {at} ({side})", bench.EXIT_INTERRUPTED)
        if stats.most_failed(summary):
            first = printable(next(iter(summary["errors"]), "unknown"))[:300]
            failed = f"{summary['failed']} of {summary['sent']} requests to the {side} failed"
            raise _Stop(f"at {at}, {failed}: {first}", bench.EXIT_FAILED)
        pair[side] = summary
    return pair


def _finish(
    args: argparse.Namespace,
    plan: SweepPlan,
    finished: list[dict[str, Any]],
    runs: list[dict[str, Any]],
    stopped: _Stop | None,
) -> int:
    recommendation, problem = None, None
    if args.recommend and stopped is None:
        recommendation, problem = bench_recommend.derive(finished, plan.min_speedup)
    document = _document(args, plan, finished, runs, stopped)
    document["recommendation"] = recommendation
    try:
        path, plot_path = _write(args.out, document, args.plot and bool(finished))
    except transport.TargetError as error:
        return bench._fail(f"{stopped}; {error}" if stopped else str(error), bench.EXIT_FAILED)
    lines = sweep_report.table_lines(document)
    if recommendation is not None:
        lines += bench_recommend.lines(recommendation)
    lines.append(f"wrote {path}" + (f" and {plot_path}" if plot_path else ""))
    print("\n".join(printable(line) for line in lines))
    if stopped is not None:
        return bench._fail(f"{stopped}; the {len(finished)} finished level(s) are in {path}",
                           stopped.code)  # fmt: skip
    if problem is not None:
        return bench._fail(f"--recommend: {problem}", bench.EXIT_FAILED)
    if recommendation is not None and args.apply:
        return bench_recommend.apply(args, recommendation)
    return bench.EXIT_OK


def _measure(
    args: argparse.Namespace,
    plan: bench.Plan,
    side: str,
    concurrency: int,
    requests: int,
    warned: set[str],
) -> dict[str, Any]:
    """One run, as `mlcc bench` makes it, summarized by `mlcc.bench.stats` (not written)."""
    numbers = dataclasses.replace(plan.numbers, requests=requests, concurrency=concurrency)
    probe_s = min(numbers.timeout_s, transport.PROBE_TIMEOUT_S)
    before = _scrape(plan.metrics_urls, args.insecure, probe_s, side, warned)
    work = [
        bench._job(plan, prompt, numbers.max_tokens, args.ignore_eos)
        for prompt in itertools.islice(itertools.cycle(plan.prompts), requests)
    ]
    outcome = runner.run_concurrently(
        work, min(concurrency, requests), _Quiet(requests), numbers.timeout_s
    )
    after, interrupted = None, outcome.interrupted
    try:
        if before is not None and not interrupted:
            time.sleep(bench.METRICS_SETTLE_S)
            after = _scrape(plan.metrics_urls, args.insecure, probe_s, side, warned)
    except KeyboardInterrupt:
        interrupted = True
    label = args.label if side == "endpoint" else "twin"
    run_plan = dataclasses.replace(plan, numbers=numbers, baseline=None)
    summary = bench._summary(argparse.Namespace(label=label), run_plan, outcome, before, after,
                             interrupted)  # fmt: skip
    spec = summary.get("speculative") or {}
    if side == "twin" and spec.get("verify_steps") and "twin drafts" not in warned:
        warned.add("twin drafts")
        print(f"{bench.PROG}: warning: the twin at {printable(plan.target)} drafts tokens: it is "
              "not a baseline without speculation", file=sys.stderr)  # fmt: skip
    return summary


def _scrape(
    urls: list[str], insecure: bool, timeout_s: float, side: str, warned: set[str]
) -> list[Sample] | None:
    try:
        return transport.scrape(urls, timeout_s, verify_tls=not insecure) if urls else None
    except transport.MetricsUnavailable as error:
        if side == "endpoint" and side not in warned:
            warned.add(side)
            reason = printable(str(error))
            print(f"{bench.PROG}: warning: no engine metrics ({reason}); speculative: null",
                  file=sys.stderr)  # fmt: skip
        return None


def _progress(
    level: int, number: int, levels: int, repeat: int, repeats: int, pair: dict[str, Any]
) -> None:
    own = pair["endpoint"].get("output_tokens_per_s")
    base = pair["twin"].get("output_tokens_per_s")
    ratio = f" ({own / base:.2f}x)" if own is not None and base else ""
    line = (
        f"bench: concurrency {level} ({number}/{levels}), repeat {repeat}/{repeats}: endpoint "
        f"{_rate(own)}, twin {_rate(base)}{ratio}"
    )
    print(line, file=sys.stderr, flush=True)


def _rate(value: Any) -> str:
    return "unknown tokens/s" if value is None else f"{value:.1f} tokens/s"


def _document(
    args: argparse.Namespace,
    plan: SweepPlan,
    finished: list[dict[str, Any]],
    runs: list[dict[str, Any]],
    stopped: _Stop | None,
) -> dict[str, Any]:
    counts, endpoint = plan.counts, plan.endpoint
    engines = [r["engine"] for r in runs if r["side"] == "endpoint"]
    settings = {
        "label": args.label or "speculative",
        "engine": endpoint.engine or (engines[0] if engines else "unknown"),
        "model": endpoint.model,
        "target": endpoint.target,
        "twin": plan.twin.target,
        "max_tokens": endpoint.numbers.max_tokens,
        "concurrency": counts.levels,
        "repeats": counts.repeats,
        "per_user": counts.per_user,
        "min_requests": counts.min_requests,
        "min_speedup": plan.min_speedup,
        "usd_per_hour": None if endpoint.price[0] is None else str(endpoint.price[0]),
        "price_source": endpoint.price[1],
    }
    interrupted = stopped is not None and stopped.code == bench.EXIT_INTERRUPTED
    stop = None if stopped is None else str(stopped)
    return sweep_report.document(settings, finished, runs, stop, interrupted)


def _write(out: Path, document: dict[str, Any], plot: bool) -> tuple[Path, Path | None]:
    try:
        path = report.write_json(out, document)
        plot_path = sweep_report.write_plot(out, document) if plot else None
    except (OSError, UserFileError) as error:
        raise transport.TargetError(f"cannot write to {out}: {error}") from None
    return path, plot_path
