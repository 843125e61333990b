"""`mlcc bench --concurrency 1,4,16,64`: every level against the endpoint and its baseline twin,
repeated, then the crossover and (`--recommend`) a load-aware schedule. The figures and their
rules are in `mlcc.bench.sweep`, the sweep's flags and plan in `mlcc.cli.bench.sweep_plan`; this
module adds them to `mlcc bench`, runs the levels and writes what they gave. Without a sweep
flag `mlcc bench` is `mlcc.cli.bench.command.run`.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import sys
import time
from pathlib import Path
from typing import Any

from mlcc.bench import promotion, prompts, report, runner, stats
from mlcc.bench.client import transport
from mlcc.bench.client.stream import RequestResult
from mlcc.bench.prometheus import Sample
from mlcc.bench.sweep import report as sweep_report
from mlcc.bench.sweep.figures import level_figures
from mlcc.bench.sweep.heads import candidate_entry
from mlcc.cli.bench import command as bench
from mlcc.cli.bench import promote as bench_promote
from mlcc.cli.bench import recommend as bench_recommend
from mlcc.cli.bench import sweep_plan
from mlcc.engine_contract.values import printable
from mlcc.userfiles import UserFileError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench.register(subparsers)
    parser = subparsers.choices["bench"]
    sweep_plan.add_flags(parser)
    parser.set_defaults(run=run)


class _Stop(Exception):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def run(args: argparse.Namespace) -> int:
    if not sweep_plan.wanted(args):
        return bench.run(args)
    try:
        plan = sweep_plan.plan_of(args)
    except (bench.UsageError, UserFileError) as error:
        return bench._fail(str(error), bench.EXIT_USAGE)
    except (transport.TargetError, report.BaselineError, prompts.PromptFileError) as error:
        return bench._fail(str(error), bench.EXIT_FAILED)
    except KeyboardInterrupt:
        return bench._fail("interrupted before any request was sent", bench.EXIT_INTERRUPTED)
    return _sweep(args, plan)


class _Quiet(runner.Progress):
    """A sweep prints a line per repeat, not the runs' own progress lines."""

    def update(self, result: RequestResult) -> None:
        pass

    def finish(self) -> None:
        pass


def _sweep(args: argparse.Namespace, plan: sweep_plan.SweepPlan) -> int:
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
            if plan.candidate is not None:
                new = [p["candidate"] for p in pairs]
                entry = candidate_entry(finished[-1], own, new, twin, plan.endpoint.price[0])
                finished[-1]["candidate"] = entry
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
    plan: sweep_plan.SweepPlan,
    level: int,
    repeat: int,
    runs: list[dict[str, Any]],
    warned: set[str],
) -> dict[str, dict[str, Any]]:
    """One repeat of a level: the endpoint then the twin (the other way round on even repeats,
    so that a drift of the machine does not favour one side); with a candidate head, the three
    in turn, each repeat starting one further (endpoint, candidate, twin; candidate, twin, ...)."""
    sides = [("endpoint", plan.endpoint), ("twin", plan.twin)]
    if plan.candidate is not None:
        sides.insert(1, ("candidate", plan.candidate.plan))
    turn = (repeat - 1) % len(sides)
    pair: dict[str, dict[str, Any]] = {}
    for side, side_plan in sides[turn:] + sides[:turn]:
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
    plan: sweep_plan.SweepPlan,
    finished: list[dict[str, Any]],
    runs: list[dict[str, Any]],
    stopped: _Stop | None,
) -> int:
    recommendation, problem = None, None
    if args.recommend and stopped is None:
        recommendation, problem = bench_recommend.derive(finished, plan.min_speedup)
    document = _document(args, plan, finished, runs, stopped)
    document["recommendation"] = recommendation
    decision = None
    if plan.candidate is not None and stopped is None:
        decision = promotion.decide(finished, plan.candidate.served, plan.candidate.rule)
    if plan.candidate is not None:
        document["promotion"] = decision.as_json() if decision is not None else None
    try:
        path, plot_path = _write(args.out, document, args.plot and bool(finished))
    except transport.TargetError as error:
        return bench._fail(f"{stopped}; {error}" if stopped else str(error), bench.EXIT_FAILED)
    lines = sweep_report.table_lines(document)
    if recommendation is not None:
        lines += bench_recommend.lines(recommendation)
    if decision is not None and plan.candidate is not None:
        lines += bench_promote.lines(decision, plan.candidate, plan.endpoint.target)
    lines.append(f"wrote {path}" + (f" and {plot_path}" if plot_path else ""))
    print("\n".join(printable(line) for line in lines))
    if stopped is not None:
        return bench._fail(
            f"{stopped}; the {len(finished)} finished level(s) are in {path}", stopped.code
        )
    if problem is not None:
        return bench._fail(f"--recommend: {problem}", bench.EXIT_FAILED)
    if recommendation is not None and args.apply:
        return bench_recommend.apply(args, recommendation)
    if decision is not None and plan.candidate is not None and args.apply:
        return bench_promote.apply(args, decision, plan.candidate)
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
    label = args.label if side == "endpoint" else side
    run_plan = dataclasses.replace(plan, numbers=numbers, baseline=None)
    summary = bench._summary(
        argparse.Namespace(label=label), run_plan, outcome, before, after, interrupted
    )
    spec = summary.get("speculative") or {}
    if side == "twin" and spec.get("verify_steps") and "twin drafts" not in warned:
        warned.add("twin drafts")
        print(
            f"{bench.PROG}: warning: the twin at {printable(plan.target)} drafts tokens: it is "
            "not a baseline without speculation",
            file=sys.stderr,
        )
    return summary


def _scrape(
    urls: list[str], insecure: bool, timeout_s: float, side: str, warned: set[str]
) -> list[Sample] | None:
    try:
        return transport.scrape(urls, timeout_s, verify_tls=not insecure) if urls else None
    except transport.MetricsUnavailable as error:
        if side != "twin" and side not in warned:
            warned.add(side)
            reason = printable(str(error))
            of = " of the candidate" if side == "candidate" else ""
            print(
                f"{bench.PROG}: warning: no engine metrics{of} ({reason}); speculative: null",
                file=sys.stderr,
            )
        return None


def _progress(
    level: int, number: int, levels: int, repeat: int, repeats: int, pair: dict[str, Any]
) -> None:
    own = pair["endpoint"].get("output_tokens_per_s")
    base = pair["twin"].get("output_tokens_per_s")
    ratio = f" ({own / base:.2f}x)" if own is not None and base else ""
    new = (pair.get("candidate") or {}).get("output_tokens_per_s")
    candidate = f", candidate {_rate(new)}" if "candidate" in pair else ""
    line = (
        f"bench: concurrency {level} ({number}/{levels}), repeat {repeat}/{repeats}: endpoint "
        f"{_rate(own)}{candidate}, twin {_rate(base)}{ratio}"
    )
    print(line, file=sys.stderr, flush=True)


def _rate(value: Any) -> str:
    return "unknown tokens/s" if value is None else f"{value:.1f} tokens/s"


def _document(
    args: argparse.Namespace,
    plan: sweep_plan.SweepPlan,
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
    if plan.candidate is not None:
        settings |= {"candidate": plan.candidate.plan.target, "candidate_head": plan.candidate.head}
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
