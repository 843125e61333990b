"""`mlcc plan --preflight` against the fake Hub (tests/preflight/fake_hub.py) and the local AWS
(tests/local_aws.py, answering as tests/preflight/aws_accounts.py's example account, prices from
tests/price_list.py): the dev stack, its target and draft models from the Hub, its quotas,
add-on versions, GPUs and prices from AWS. Each case changes one answer."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import ecr_images
from aws_accounts import example_account, serve
from classify import Case, Finding, Invocation, Oracle, Ran, all_of, never, says
from fake_hub import MODELS, TOKEN, FakeHub, HubBehaviour
from local_aws import LocalAWS, local_aws
from program_runs import IMAGE

TARGET = "meta-llama/Llama-3.1-8B-Instruct"
DRAFT = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
CONFIG = json.loads((MODELS / TARGET / "config.json").read_text())
INDEX = json.loads((MODELS / TARGET / "model.safetensors.index.json").read_text())
ETAG_TIMEOUT_S = (
    5  # HF_HUB_ETAG_TIMEOUT: the preflight deadline per fetch (a loaded 2-core machine)
)
# run_parts waits up to three deadlines and 5 s for the parts (mlcc/preflight/run.py)
BOUND_S = 3 * ETAG_TIMEOUT_S + 5

Account = Callable[[LocalAWS], None]  # scripts the local AWS after the example account


@contextmanager
def planned(
    where: Path,
    hub: HubBehaviour | None = None,
    account: Account | None = None,
    *extra: str,
    env: dict[str, str] | None = None,
    prepare: Callable[[Path, str], Callable[[], None] | None] | None = None,
) -> Iterator[Invocation]:
    """The dev stack planned with --preflight while the fakes answer. `prepare` may return
    what undoes it once the run is over; `{case}` in an `env` value is the case's folder."""
    healthy = example_account()
    with (
        local_aws() as aws,
        FakeHub(hub or HubBehaviour()) as served,
        ecr_images.BlobServer(healthy.registry) as blobs,
    ):
        serve(aws, healthy, blobs.url)
        if account is not None:
            account(aws)
        cache = where / "hub-cache"
        undo = prepare(cache, served.url) if prepare is not None else None
        variables = {
            "HF_ENDPOINT": served.url,
            "HF_HUB_CACHE": str(cache),
            "HF_TOKEN": TOKEN,
            "HF_HUB_ETAG_TIMEOUT": str(ETAG_TIMEOUT_S),
            "AWS_ENDPOINT_URL": aws.url,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_CONFIG_FILE": "/dev/null",
            "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
        }
        argv = ["plan", "--stack", "dev", "--out", str(where / "out"), "--set", f"hp:image={IMAGE}"]
        added = {k: v.replace("{case}", str(where)) for k, v in (env or {}).items()}
        try:
            yield Invocation([*argv, "--preflight", *extra], variables | added, BOUND_S)
        finally:
            if undo is not None:
                undo()


# What no plan may print, whatever it was told: a negative or not-a-number figure.
NO_FALSE_FIGURE = never(
    r"(?<![\w.-])-\d[\d,.]*\s*(GiB|MiB|tokens|GPUs?|instances|USD|\$)",
    r"\$\s*-\d",
    r"(?i)\b(nan|inf|infinity)\s*(GiB|%|USD|tokens)",
)


# A library's own log records (huggingface_hub's retries) shown as the plan's warnings.
NOT_THE_PROGRAMS = never(r"^warning: (HTTP Error \d+ thrown|Retrying in)", kind="accepted-bad")


def no_hidden_crash(ran: Ran) -> Finding | None:
    """A Python error the plan caught and showed as a configuration error: not a traceback on
    the screen, but a bug all the same, and a line that does not say what to change."""
    for line in ran.stderr.splitlines():
        if "the program failed on this configuration" in line:
            return Finding("traceback", f"an exception shown as one line: {line.strip()!r}")
    return None


def exit_in(*codes: int) -> Oracle:
    def oracle(ran: Ran) -> Finding | None:
        if ran.code in codes:
            return None
        return Finding("accepted-bad", f"exit {ran.code}, not one of {codes}")

    return oracle


def one_line(prefix: str, *texts: str) -> Oracle:
    """Some line of the output starts with `prefix` and holds every text (one line, not a
    message spread over several)."""

    def oracle(ran: Ran) -> Finding | None:
        for line in ran.output.splitlines():
            if line.startswith(prefix) and all(t in line for t in texts):
                return None
        return Finding("accepted-bad", f"no line {prefix!r}... saying {list(texts)!r}")

    return oracle


def plan_case(
    name: str,
    system: str,
    oracle: Oracle,
    hub: HubBehaviour | None = None,
    account: Account | None = None,
    *extra: str,
    env: dict[str, str] | None = None,
    prepare: Callable[[Path, str], Callable[[], None] | None] | None = None,
    xfail: str = "",
) -> Case:
    def serve_case(where: Path) -> AbstractContextManager[Invocation]:
        return planned(where, hub, account, *extra, env=env, prepare=prepare)

    return Case(
        name,
        system,
        "plan --preflight",
        serve_case,
        all_of(no_hidden_crash, oracle, NO_FALSE_FIGURE, NOT_THE_PROGRAMS),
        xfail,
    )


def healthy_plan() -> Case:
    """The control: every answer good, the figures printed."""
    return plan_case(
        "healthy",
        "hub",
        all_of(exit_in(0), says("GiB usable per GPU"), never("not checked", r"^error: ")),
    )


__all__ = ["CONFIG", "DRAFT", "INDEX", "TARGET", "healthy_plan", "one_line", "plan_case", "says"]
