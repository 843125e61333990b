"""Preflight's calls run in parallel under one deadline: a call still waiting at the deadline
becomes an `Unreached`, never a wait past `--timeout`."""

from __future__ import annotations

import threading
from collections.abc import Callable
from time import monotonic
from typing import TypeVar

from mlcc.preflight.account.facts import Unreached

T = TypeVar("T")
THREAD_PREFIX = "preflight-aws: "
_said: dict[str, str] = {}  # thread name -> what its call last reported (`note`)


def note(text: str) -> None:
    """What the calling job has seen so far (pages read, a throttled attempt): said with its
    "no answer within" line when the deadline comes first, so the line blames the cause."""
    _said[threading.current_thread().name] = text


def run_parallel(
    jobs: dict[str, Callable[[], T | Unreached]], deadline_s: float
) -> dict[str, T | Unreached]:
    """Every job's result, keyed like `jobs`; one still running at the deadline is an Unreached.

    Daemon threads, so a call still waiting on the network never holds the process at exit.
    """
    results: dict[str, T | Unreached] = {}
    done = threading.Condition()

    def work(name: str, job: Callable[[], T | Unreached]) -> None:
        try:
            result = job()
        except Exception as failure:  # a bug in a fetcher must not end preflight
            result = Unreached(name, f"{type(failure).__name__}: {failure}")
        with done:
            results[name] = result
            done.notify_all()

    for name, job in jobs.items():
        threading.Thread(
            target=work, args=(name, job), name=f"{THREAD_PREFIX}{name}", daemon=True
        ).start()
    end = monotonic() + max(deadline_s, 0.0)
    with done:
        while len(results) < len(jobs) and (left := end - monotonic()) > 0:
            done.wait(left)
        return {
            name: results[name] if name in results else _late(name, deadline_s) for name in jobs
        }


def _late(name: str, deadline_s: float) -> Unreached:
    seen = _said.get(f"{THREAD_PREFIX}{name}")
    by_then = f" (by then: {seen})" if seen else ""
    return Unreached(name, f"no answer within {deadline_s:.0f} s{by_then}")


class Deadline:
    def __init__(self, seconds: float) -> None:
        self._end = monotonic() + seconds

    def left(self) -> float:
        return max(self._end - monotonic(), 0.0)
