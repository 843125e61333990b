"""Hostile Prometheus answers (issue 37, item 4) against `mlcc verify`'s live figures: each ends in
one FAIL line saying what could not be checked and why; no traceback, no hang, no false figure."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Iterator

import pytest
from fleet import endpoint
from prometheus_fake import Answer, PrometheusFake, vector

from mlcc.cli.verify import live as verify_live
from mlcc.prometheus.api import MAX_ANSWER_BYTES, Source

PREFIX = "FAIL live: cannot check the live figures over the last 5 min: "
TIMEOUT_S = 1.0


def healthy(query: str, at: float) -> Answer:
    """vLLM's figures for one endpoint: 60% acceptance, mean length 2.8, 40 tokens/s."""
    if "offset" in query:
        return vector("1", at)
    counts = {"generation_tokens": "40", "num_drafts_": "100", "draft_tokens": "300"}
    counts |= {"accepted_tokens": "180"}
    return vector(next((v for k, v in counts.items() if k in query), None), at)


def hostile(name: str, answer: Callable[[float], Answer]) -> Callable[[str, float], Answer]:
    """Healthy answers but for the queries naming `name`."""
    return lambda query, at: answer(at) if name in query else healthy(query, at)


@pytest.fixture
def ask() -> Iterator[Callable[[Callable[[str, float], Answer]], str]]:
    fakes: list[PrometheusFake] = []

    def run(script: Callable[[str, float], Answer]) -> str:
        fake = PrometheusFake(script).start()
        fakes.append(fake)
        args = argparse.Namespace(window_minutes=5, acceptance_floor=0.5)
        source = Source(fake.url, shown="fake")
        found = verify_live.live_checks(args, source, "team", [endpoint("hp", "vllm", True)], 1.0)
        return found["hp"].line

    yield run
    for fake in fakes:
        fake.stop()


def test_the_healthy_fake_reads_as_the_figures(ask: Callable[..., str]) -> None:
    assert ask(healthy) == (
        "PASS live: acceptance 60.0%, mean accepted length 2.80, 40.0 output tokens/s over the "
        "last 5 min (fake)"
    )


CASES = {
    "missing series": (
        lambda q, at: vector(None, at),
        "no vllm:generation_tokens series for the endpoint's pods (fake)",
    ),
    "missing speculative series": (
        hostile("spec_decode", lambda at: vector(None, at)),
        "no vllm:spec_decode_num_* series for the endpoint's pods although speculation is on",
    ),
    "stale answer": (
        hostile("accepted", lambda at: vector("180", at - 3600)),
        "the answer is stale: evaluated 3600 s off (fake)",
    ),
    "NaN": (
        hostile("accepted", lambda at: vector("NaN", at)),
        "the accepted_tokens query reads nan, not a count (fake)",
    ),
    "+Inf": (
        hostile("generation_tokens", lambda at: vector("+Inf", at)),
        "the tokens query reads inf, not a count (fake)",
    ),
    "a reset read as a negative growth": (
        hostile("draft_tokens", lambda at: vector("-300", at)),
        "the draft_tokens query reads -300, not a count (fake)",
    ),
    "more accepted than drafted": (
        hostile("accepted", lambda at: vector("301", at)),
        "301 tokens accepted of 300 drafted: counts disagree (fake)",
    ),
    "two series for a sum": (
        hostile(
            "accepted",
            lambda at: Answer(
                json.dumps(
                    {
                        "status": "success",
                        "data": {
                            "resultType": "vector",
                            "result": [
                                {"metric": {"a": str(i)}, "value": [at, "1"]} for i in (1, 2)
                            ],
                        },
                    }
                ).encode()
            ),
        ),
        "the accepted_tokens query answered 2 series, not one (fake)",
    ),
    "not JSON": (
        hostile("accepted", lambda at: Answer(b"<html>502 Bad Gateway</html>", status=502)),
        "the answer (HTTP 502) is not JSON: <html>502 Bad Gateway</html> (fake)",
    ),
    "JSON with NaN": (
        hostile("accepted", lambda at: Answer(b'{"status": NaN}')),
        'the answer (HTTP 200) is not JSON: {"status": NaN} (fake)',
    ),
    "an error answer": (
        hostile(
            "accepted",
            lambda at: Answer(
                b'{"status":"error","errorType":"bad_data","error":"parse error"}', status=400
            ),
        ),
        "Prometheus refused the query: parse error (fake)",
    ),
    "a matrix": (
        hostile(
            "accepted",
            lambda at: Answer(b'{"status":"success","data":{"resultType":"matrix","result":[]}}'),
        ),
        "the answer is not an instant vector (resultType 'matrix') (fake)",
    ),
    "a value that is not a number": (
        hostile("accepted", lambda at: vector("many", at)),
        "a sample's value is not a number: many (fake)",
    ),
    "a 5000-digit number": (
        hostile("accepted", lambda at: vector("9" * 5000, at)),
        "a sample's value is not a number: " + "9" * 117 + "... (fake)",
    ),
    "a huge answer": (
        hostile("accepted", lambda at: Answer(b" " * (MAX_ANSWER_BYTES + 1) + b"{}")),
        f"the answer is larger than {MAX_ANSWER_BYTES // 1024} KiB (fake)",
    ),
    "an answer that never comes": (
        hostile("accepted", lambda at: Answer(b"{}", delay_s=60.0)),
        f"no answer within {TIMEOUT_S:g} s (fake)",
    ),
    "an answer that drips": (
        hostile("accepted", lambda at: Answer(b" " * 1000 + b"{}", drip_s=0.05)),
        f"no answer within {TIMEOUT_S:g} s (fake)",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_hostile_answer_is_one_line_saying_what_could_not_be_checked(
    ask: Callable[..., str], case: str
) -> None:
    script, reason = CASES[case]
    started = time.monotonic()
    line = ask(script)
    # No hang: each query has a deadline. Room for a slow machine, under the hostile answers'
    # 50 s and more.
    assert time.monotonic() - started < 4 * TIMEOUT_S + 20
    assert line.startswith(PREFIX), line
    assert line.endswith(reason) or reason in line, line
    assert "\n" not in line and "%" not in line  # no figure printed from a bad answer


def test_a_prometheus_that_is_not_there(unused_port: int) -> None:
    args = argparse.Namespace(window_minutes=5, acceptance_floor=None)
    source = Source(f"http://127.0.0.1:{unused_port}", shown="gone")
    line = verify_live.live_checks(args, source, "team", [endpoint("hp", "vllm", True)], 1.0)
    assert line["hp"].line.startswith(PREFIX + "cannot reach it: "), line["hp"].line
    assert line["hp"].line.endswith("(gone)")


@pytest.fixture
def unused_port() -> int:
    from prometheus_harness import free_port

    return free_port()
