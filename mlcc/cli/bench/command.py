"""`mlcc bench`: time streamed completions against an endpoint and read the engine's speculative
counters, to show what speculation buys against a baseline run of the same model without it.
The figures and their rules are in `mlcc.bench`; this module parses arguments and wires I/O.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mlcc.bench import cost as bench_money
from mlcc.bench import inputs, prompts, report, runner, stats
from mlcc.bench.client import access, transport
from mlcc.bench.prometheus import Sample
from mlcc.bench.speculative import speculative_figures
from mlcc.cli.bench import cost as bench_cost
from mlcc.engine_contract.values import printable
from mlcc.userfiles import UserFileError

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
PROG = "mlcc bench"
# Engines may count a request's last step just after streaming its last token.
METRICS_SETTLE_S = 0.1


class UsageError(Exception):
    pass


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="measure latency, throughput and draft acceptance of a served endpoint",
        description=(
            "Send N streaming requests, C at a time, to an OpenAI-compatible endpoint (or the "
            "SageMaker endpoint the operator registers); write DIR/bench.json with TTFT, "
            "inter-token latency, throughput and the engine's speculative acceptance; with "
            "--baseline, the speedup over a run without speculation."
        ),
    )
    target = parser.add_argument_group("target (one of --url, --sagemaker-endpoint, --stack)")
    target.add_argument("--url", help="base URL of the OpenAI API, e.g. http://127.0.0.1:8080")
    target.add_argument("--sagemaker-endpoint", metavar="NAME", help="SageMaker endpoint name")
    target.add_argument("--region", help="AWS region for --sagemaker-endpoint")
    target.add_argument(
        "--stack",
        help="read model, engine and endpoint from Pulumi.<stack>.yaml; default URL: "
        f"{access.local_url()} (the port-forward it prints)",
    )
    target.add_argument(
        "--endpoint", help="with --stack: which endpoint (default: the one without a twin role)"
    )
    target.add_argument("--project-dir", type=Path, default=Path("."), help="folder of Pulumi.yaml")
    parser.add_argument("--model", help="served model name (default with --stack: hp:model)")
    parser.add_argument("--engine", choices=("vllm", "sglang"), help="default: from the metrics")
    parser.add_argument(
        "--requests",
        metavar="N",
        help=f"default 50, at most {inputs.MAX_REQUESTS} (a sweep: the least a repeat sends, "
        "default 16)",
    )
    parser.add_argument(
        "--concurrency",
        default="4",
        metavar="C",
        help=f"default 4, at most {inputs.MAX_CONCURRENCY}; a list (1,4,16,64) sweeps the "
        "levels against the baseline twin",
    )
    parser.add_argument(
        "--max-tokens", default="256", metavar="T", help=f"default 256, at most {inputs.MAX_TOKENS}"
    )
    parser.add_argument("--prompts", type=Path, metavar="FILE.jsonl", help="default: built-in set")
    parser.add_argument("--ignore-eos", action="store_true", help="fixed output lengths")
    parser.add_argument(
        "--metrics-url",
        action="append",
        metavar="URL",
        help="engine Prometheus endpoint, repeatable (summed); default BASE_URL/metrics",
    )
    parser.add_argument("--label", help="name of this run (default: speculative/no-speculation)")
    parser.add_argument("--baseline", type=Path, metavar="OTHER/bench.json")
    bench_cost.add_arguments(parser)
    parser.add_argument("--plot", action="store_true", help="also write DIR/latency.png")
    parser.add_argument(
        "--insecure", action="store_true", help="accept a self-signed HTTPS certificate"
    )
    parser.add_argument(
        "--timeout",
        default="600",
        metavar="SECONDS",
        help="deadline of each whole request, default 600 (the metrics and models checks: "
        f"at most {transport.PROBE_TIMEOUT_S:g})",
    )
    parser.add_argument("--out", type=Path, required=True, metavar="DIR")
    parser.set_defaults(run=run)


@dataclass(frozen=True)
class Numbers:
    requests: int
    concurrency: int
    max_tokens: int
    timeout_s: float


@dataclass(frozen=True)
class Plan:
    numbers: Numbers
    sender: runner.StreamSender
    target: str
    model: str
    engine: str | None
    metrics_urls: list[str]
    prompts: list[prompts.Prompt]
    baseline: dict[str, Any] | None
    price: tuple[Decimal | None, str] = (None, "no price")  # USD per hour, its source


def run(args: argparse.Namespace) -> int:
    try:
        plan = _plan(args)
        return _bench(args, plan)
    except (UsageError, UserFileError) as error:
        return _fail(str(error), EXIT_USAGE)
    except (transport.TargetError, report.BaselineError, prompts.PromptFileError) as error:
        return _fail(str(error), EXIT_FAILED)
    except KeyboardInterrupt:
        return _fail("interrupted before any request was sent", EXIT_INTERRUPTED)


def _fail(message: str, code: int) -> int:
    print(f"{PROG}: error: {printable(message)}", file=sys.stderr)
    return code


def _plan(args: argparse.Namespace) -> Plan:
    if args.url and args.sagemaker_endpoint:
        raise UsageError("give either --url or --sagemaker-endpoint, not both")
    if args.endpoint and not args.stack:
        raise UsageError("--endpoint chooses among a stack's endpoints: give --stack NAME too")
    if not (args.url or args.sagemaker_endpoint or args.stack):
        raise UsageError("give --url BASE_URL, --sagemaker-endpoint NAME or --stack NAME")
    if args.plot and not report.plot_available():
        raise UsageError("--plot needs matplotlib: pip install 'mlcc-hyperpod[plot]'")
    numbers = _numbers(args)
    _check_urls(args)
    report.check_out(args.out, args.plot)  # before the run, so that its results are kept
    stack = _stack_endpoint(args) if args.stack else None
    model = args.model or (stack.model if stack else None)
    if not model:
        raise UsageError("give --model NAME (the served model name)")
    engine = args.engine or (stack.engine if stack else None)
    baseline = report.load_baseline(args.baseline) if args.baseline else None
    chosen = prompts.load_prompts(args.prompts) if args.prompts else prompts.built_in_prompts()
    if args.sagemaker_endpoint:
        sender = _sagemaker_sender(args.sagemaker_endpoint, args.region, numbers.timeout_s)
        target, metrics = f"sagemaker:{args.sagemaker_endpoint}", args.metrics_url or []
    else:
        url = args.url or access.local_url()
        target_http = transport.HttpTarget(url, numbers.timeout_s, verify_tls=not args.insecure)
        sender, target = _http_sender(target_http, url, model, stack), url
        metrics = args.metrics_url or [url.rstrip("/") + "/metrics"]
    try:
        price = bench_cost.hourly_price(args, stack.name if stack else None)
    except bench_cost.PriceError as error:
        raise UsageError(str(error)) from None
    return Plan(numbers, sender, target, model, engine, metrics, chosen, baseline, price)


def _numbers(args: argparse.Namespace) -> Numbers:
    """The counts and seconds, each within its bound (mlcc/bench/inputs.py)."""
    try:
        return Numbers(
            requests=_flag(
                "--requests", inputs.whole_number, _or(args.requests, "50"), inputs.MAX_REQUESTS
            ),
            concurrency=_flag(
                "--concurrency", inputs.whole_number, args.concurrency, inputs.MAX_CONCURRENCY
            ),
            max_tokens=_flag(
                "--max-tokens", inputs.whole_number, args.max_tokens, inputs.MAX_TOKENS
            ),
            timeout_s=_flag("--timeout", inputs.seconds, args.timeout, inputs.MAX_TIMEOUT_S),
        )
    except ValueError as error:
        raise UsageError(str(error)) from None


def _flag(flag: str, parse: Callable[[str, Any], Any], text: str, most: Any) -> Any:
    try:
        return parse(str(text), most)
    except ValueError as error:
        raise ValueError(f"{flag}: {error}") from None


def _check_urls(args: argparse.Namespace) -> None:
    checks = [("--url", args.url, False)] if args.url else []
    checks += [("--metrics-url", url, True) for url in args.metrics_url or []]
    for flag, url, allow_query in checks:
        try:
            inputs.parse_http_url(url, allow_query)
        except ValueError as error:
            raise UsageError(f"{flag}: {error}") from None


def _stack_endpoint(args: argparse.Namespace) -> access.StackEndpoint:
    from mlcc.config import stack as stack_config
    from mlcc.stackfiles import resolve as stackfiles

    try:
        endpoints = access.stack_endpoints(args.project_dir, args.stack)
        chosen = access.choose_endpoint(endpoints, args.endpoint)
    except stackfiles.StackFileError as error:
        raise UsageError(str(error)) from None
    except (stackfiles.StackConfigError, stack_config.ConfigError) as error:
        raise UsageError(f"stack {args.stack}: {error.problems[0]}") from None
    except ValueError as error:
        raise UsageError(f"stack {args.stack}: {error}") from None
    command = access.port_forward_command(chosen.namespace, chosen.name)
    print(f"{PROG}: endpoint {chosen.namespace}/{chosen.name}; reach it with: {command}")
    twin = access.twin_of(endpoints, chosen)
    if twin is not None:
        twin_command = access.port_forward_command(twin.namespace, twin.name, access.LOCAL_PORT + 1)
        print(f"{PROG}: its baseline twin {twin.name}: {twin_command}")
    return chosen


def _http_sender(
    target: transport.HttpTarget, url: str, model: str, stack: access.StackEndpoint | None
) -> runner.StreamSender:
    try:
        transport.check_target(target, model)
    except transport.TargetError as error:
        parts = urlsplit(url)
        if stack is None or parts.hostname not in ("127.0.0.1", "localhost"):
            raise
        port = parts.port or access.LOCAL_PORT
        hint = access.port_forward_command(stack.namespace, stack.name, port)
        raise transport.TargetError(f"{error} (is `{hint}` running?)") from None
    return target.stream


def plan_at(plan: Plan, url: str, stack: access.StackEndpoint | None, insecure: bool) -> Plan:
    """The plan's requests sent to another endpoint's OpenAI API at `url` (a baseline twin, a
    candidate head), its /metrics beside it; the target checked as --url's is."""
    target = transport.HttpTarget(url, plan.numbers.timeout_s, not insecure)
    return replace(
        plan,
        sender=_http_sender(target, url, plan.model, stack),
        target=url,
        metrics_urls=[url.rstrip("/") + "/metrics"],
    )


def _sagemaker_sender(
    endpoint_name: str, region: str | None, timeout_s: float
) -> runner.StreamSender:
    from mlcc.bench.client import sagemaker

    client = sagemaker.sagemaker_client(region, timeout_s)
    problem = sagemaker.endpoint_name_problem(client, endpoint_name)
    if problem:
        raise UsageError(f"--sagemaker-endpoint: {problem}")
    return sagemaker.sagemaker_sender(client, endpoint_name)


def _bench(args: argparse.Namespace, plan: Plan) -> int:
    numbers = plan.numbers
    probe_s = min(numbers.timeout_s, transport.PROBE_TIMEOUT_S)
    before = _scrape_or_warn(plan.metrics_urls, args.insecure, probe_s)
    work = [
        _job(plan, prompt, numbers.max_tokens, args.ignore_eos)
        for prompt in itertools.islice(itertools.cycle(plan.prompts), numbers.requests)
    ]
    outcome = runner.run_concurrently(
        work,
        min(numbers.concurrency, numbers.requests),
        runner.Progress(numbers.requests),
        numbers.timeout_s,
    )
    after, interrupted = None, outcome.interrupted
    try:
        if before is not None and not interrupted:
            time.sleep(METRICS_SETTLE_S)
            after = _scrape_or_warn(plan.metrics_urls, args.insecure, probe_s)
    except KeyboardInterrupt:
        interrupted = True
    summary = _summary(args, plan, outcome, before, after, interrupted)
    path = _write_and_print(args.out, summary, plan.baseline, args.plot)
    if interrupted:
        return _fail(
            f"interrupted after {summary['sent']} of {numbers.requests} requests "
            f"(their figures are in {path})",
            EXIT_INTERRUPTED,
        )
    if stats.most_failed(summary):
        first = next((r.error for r in outcome.results if r.error), "unknown")
        shown = printable(first)[:300]
        return _fail(f"{summary['failed']} of {summary['sent']} requests failed: {shown}", 1)
    return EXIT_OK


def _summary(
    args: argparse.Namespace,
    plan: Plan,
    outcome: runner.RunOutcome,
    before: list[Sample] | None,
    after: list[Sample] | None,
    interrupted: bool,
) -> dict[str, Any]:
    completed = sum(r.ok for r in outcome.results)
    failed = len(outcome.results) - completed
    figures = speculative_figures(before, after, completed, failed) if before and after else None
    settings = stats.RunSettings(
        label=args.label or ("speculative" if figures else "no-speculation"),
        engine=plan.engine or _engine_from_metrics(after) or "unknown",
        model=plan.model,
        target=plan.target,
        requests=plan.numbers.requests,
        concurrency=plan.numbers.concurrency,
        max_tokens=plan.numbers.max_tokens,
    )
    summary = stats.summarize(settings, outcome.results, outcome.wall_s, figures, interrupted)
    if plan.baseline is not None:
        summary["speedup"] = stats.speedup(summary, plan.baseline)
    summary["cost"] = bench_money.figures(*plan.price, summary, plan.baseline)
    return summary


def _job(
    plan: Plan, prompt: prompts.Prompt, max_tokens: int, ignore_eos: bool
) -> Callable[[], Any]:
    body = prompts.request_body(prompt, plan.model, max_tokens, ignore_eos)
    path = prompts.api_path(prompt)
    return lambda: runner.timed_request(plan.sender, path, body, plan.numbers.timeout_s)


def _scrape_or_warn(urls: list[str], insecure: bool, timeout_s: float) -> list[Sample] | None:
    if not urls:
        return None
    try:
        return transport.scrape(urls, timeout_s, verify_tls=not insecure)
    except transport.MetricsUnavailable as error:
        reason = printable(str(error))
        print(f"{PROG}: warning: no engine metrics ({reason}); speculative: null", file=sys.stderr)
        return None


def _engine_from_metrics(samples: list[Sample] | None) -> str | None:
    for engine in ("vllm", "sglang"):
        if any(s.name.startswith(engine + ":") for s in samples or []):
            return engine
    return None


def _write_and_print(
    out_dir: Path, summary: dict[str, Any], baseline: dict[str, Any] | None, plot: bool
) -> Path:
    try:
        path = report.write_json(out_dir, summary)
        plot_path = report.write_plot(out_dir, summary, baseline) if plot else None
    except OSError as error:
        raise transport.TargetError(f"cannot write to {out_dir}: {error}") from None
    lines = report.summary_lines(summary)
    if baseline is not None:
        lines += report.comparison_lines(summary, baseline)
    lines += bench_money.lines(summary.get("cost"))
    lines.append(f"wrote {path}" + (f" and {plot_path}" if plot_path else ""))
    print("\n".join(printable(line) for line in lines))
    return path


def _or(given: str | None, default: str) -> str:
    return default if given is None else given
