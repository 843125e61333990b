"""The served endpoint's hostile answers to `mlcc bench`, from tests/bench/test_bench_hostile.py:
requests and checks that hang, trickle or never end (`--timeout` is a deadline for each whole
request), streams without `[DONE]` or usage, impossible token counts, engine counters that go
down or read NaN; and the same through SageMaker's event stream
(tests/bench/bench_fake_sagemaker.py, reached through AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME).

Each ends within --timeout with the failed requests counted and said, and no figure that
cannot be true (a token rate from impossible counts, an acceptance rate from counters that
went down)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from bench_fake_engine import HOSTILE_MODES, EngineBehaviour, FakeEngine
from bench_fake_sagemaker import FakeSageMaker
from classify import Case, Finding, Invocation, Oracle, Ran, all_of, never, says, says_one_of
from plan_cases import exit_in
from test_bench_hostile import vllm_text

CHAT = "/v1/chat/completions"
TIMEOUT_S = 0.5  # --timeout, ten times the fake's TRICKLE_S
REQUESTS = 3
# the models check, the metrics scrapes and each request (3 at once) within --timeout, plus
# the runner's grace (mlcc/bench/runner.py GRACE_S, 2 s)
BOUND_S = 4 * TIMEOUT_S + 2


@contextmanager
def benched(
    where: Path, behaviour: EngineBehaviour, sagemaker: dict[str, Any] | None = None
) -> Iterator[Invocation]:
    out = where / "out"
    common = ["--requests", str(REQUESTS), "--concurrency", "3", "--max-tokens", "16"]
    common += ["--timeout", str(TIMEOUT_S), "--out", str(out), "--model", behaviour.model]
    with FakeEngine(behaviour) as engine:
        if sagemaker is None:
            yield Invocation(["bench", "--url", engine.url, *common], {}, BOUND_S)
            return
        with FakeSageMaker(engine, "hp-dev", **sagemaker) as runtime:
            env = {
                "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME": runtime.url,
                "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_CONFIG_FILE": "/dev/null",
                "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
            }
            argv = ["bench", "--sagemaker-endpoint", "hp-dev", *common]
            yield Invocation(argv, env, BOUND_S)


def bench_case(
    name: str,
    behaviour: EngineBehaviour,
    oracle: Oracle,
    sagemaker: dict[str, Any] | None = None,
    xfail: str = "",
) -> Case:
    def serve(where: Path) -> AbstractContextManager[Invocation]:
        return benched(where, behaviour, sagemaker)

    system = "aws" if sagemaker is not None else "engine"
    return Case(name, system, "bench", serve, all_of(oracle, NO_FALSE_FIGURE), xfail)


# No negative, NaN or infinite figure in the summary; no acceptance from counters not believed.
NO_FALSE_FIGURE = never(
    r"(?<![\w.-])-\d[\d.]*\s*(ms|tokens|%|/s)", r"(?i)\b(nan|inf)\s*(ms|%|tokens)"
)


def failed_at_the_deadline(count: int = REQUESTS) -> Oracle:
    return all_of(
        exit_in(1), says(f"{count} of {count} requests failed: no complete answer within")
    )


def cannot_reach() -> Oracle:
    return all_of(exit_in(1), says("mlcc bench: error: cannot reach", "no complete answer within"))


def unknown_figure(what: str) -> Oracle:
    """The run completes; `what` is said to be unknown and no figure printed for it (the
    acceptance rate, from the engine's counters, stays)."""
    return all_of(exit_in(0), says(f"{what} unknown"), never(rf"^  {what}\s+\d"))


def written_figures(check: str) -> Oracle:
    """bench.json holds no figure from counts the engine could not have had (read from the
    printed summary's path)."""

    def oracle(ran: Ran) -> Finding | None:
        for line in ran.stdout.splitlines():
            if line.startswith("wrote ") and line.endswith("bench.json"):
                run = json.loads(Path(line.removeprefix("wrote ")).read_text())
                if run.get(check) is not None:
                    return Finding("wrong figure", f"bench.json {check} = {run[check]!r}")
        return None

    return oracle


def written(key: str, text: str) -> Oracle:
    """bench.json's `key` holds `text`."""

    def oracle(ran: Ran) -> Finding | None:
        for line in ran.stdout.splitlines():
            if line.startswith("wrote ") and line.endswith("bench.json"):
                run = json.loads(Path(line.removeprefix("wrote ")).read_text())
                if text in json.dumps(run.get(key)):
                    return None
        return Finding("accepted-bad", f"bench.json's {key} does not say {text!r}")

    return oracle


def control() -> Case:
    return bench_case("healthy", EngineBehaviour(), all_of(exit_in(0), says("acceptance")))


def cases() -> list[Case]:
    found = [
        bench_case(
            f"requests {mode}", EngineBehaviour(hostile={CHAT: mode}), failed_at_the_deadline()
        )
        for mode in HOSTILE_MODES
    ]
    found += [
        bench_case(
            f"models check {mode}", EngineBehaviour(hostile={"/v1/models": mode}), cannot_reach()
        )
        for mode in ("hang", "trickle-headers", "trickle-body")
    ]
    found += [
        bench_case(
            f"metrics scrape {mode}",
            EngineBehaviour(hostile={"/metrics": mode}, ttft_s=0, token_interval_s=0),
            all_of(exit_in(0), says("no engine metrics (cannot read")),
        )
        for mode in ("hang", "trickle-body", "events-forever")
    ]
    found += [
        bench_case(
            "streams without [DONE]",
            EngineBehaviour(send_done=False),
            all_of(exit_in(1), says("the stream ended before its data: [DONE]")),
        ),
        bench_case(
            "every other stream without usage",
            EngineBehaviour(usage_skip_every=2, chunk_tokens=(1, 2)),
            all_of(
                exit_in(0),
                says("2/3 completed, 1 failed"),
                written("errors", "the stream ended without its usage chunk"),
            ),
        ),
        bench_case(
            "HTTP 500 on every request",
            EngineBehaviour(fail_every=1),
            all_of(exit_in(1), says("3 of 3 requests failed")),
        ),
        bench_case(
            "no models list",
            EngineBehaviour(serve_models_list=False),
            all_of(exit_in(0, 1), never(r"^Traceback")),
        ),
    ]
    usages: dict[str, Any] = {
        "-5": -5,
        "2.5": 2.5,
        "'7'": "7",
        "true": True,
        "1": 1,
        "1e30": 10**30,
    }
    found += [
        bench_case(
            f"usage.completion_tokens {name}",
            EngineBehaviour(usage_tokens=told, chunk_tokens=(1, 2, 3)),
            all_of(unknown_figure("output tokens/s"), written_figures("output_tokens_per_s")),
        )
        for name, told in usages.items()
    ]
    counters = {
        "went down": (vllm_text(10, 40, 20), vllm_text(5, 60, 30)),
        "+Inf": (vllm_text(10, 40, 20), vllm_text("+Inf", 60, 30)),
        "NaN": (vllm_text(10, 40, 20), vllm_text(20, "NaN", 30)),
        "more accepted than drafted": (vllm_text(10, 40, 20), vllm_text(20, 60, 70)),
        "negative": (vllm_text(10, 40, -1), vllm_text(20, 60, 3)),
        "not an exposition": ("<html>502</html>", "\x00\xff" * 1000),
    }
    found += [
        bench_case(
            f"counters {name}",
            EngineBehaviour(metrics_texts=list(texts)),
            all_of(
                exit_in(0),
                says_one_of("speculative figures unknown", "no engine metrics"),
                never(r"\d%"),
            ),
        )
        for name, texts in counters.items()
    ]
    found += [
        bench_case(
            f"SageMaker {mode}", EngineBehaviour(), failed_at_the_deadline(), {"hostile": mode}
        )
        for mode in ("hang", "trickle-headers", "trickle-frames")
    ]
    found.append(
        bench_case(
            "SageMaker stream breaks",
            EngineBehaviour(),
            all_of(exit_in(1), says("ModelStreamError")),
            {"break_after": 2},
        )
    )
    return found
