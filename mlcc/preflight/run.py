"""Run the preflight parts in parallel and settle their outcome under hp:preflight.

`PARTS` is the list of checks: each takes the parsed stack and a per-fetch deadline and returns
an `Outcome`. The program calls `check_before_deploy` at `pulumi preview` and `pulumi up`;
under `mlcc plan`'s mocks it runs only when `mlcc plan --preflight` switched it on (`PROGRAM`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

from mlcc.config.refusal import refuse
from mlcc.config.stack import StackConfig
from mlcc.preflight.account.facts import GpuMemory
from mlcc.preflight.cost.estimate import Costing
from mlcc.preflight.gpus import GpuSpec, gpu_spec
from mlcc.preflight.outcome import Mode, Outcome, Unchecked, combine, settle
from mlcc.serving.speculative import Problem
from mlcc.userfiles.numbers import shown

Part = Callable[[StackConfig, float], Outcome]


def models_part(config: StackConfig, deadline_seconds: float) -> Outcome:
    """The models part (mlcc.preflight.models), imported when preflight runs: plain
    `mlcc plan` does not pay for huggingface_hub's import. Each GPU's memory is the one EC2
    DescribeInstanceTypes gives in the account when it answers (the account part shares the
    call), else the table's."""
    problem = hub_environment_problem()
    if problem is not None:
        name, why = problem
        return Outcome(unchecked=(Unchecked(name, "the models on the Hub", why),))
    from mlcc.preflight import models
    from mlcc.preflight.account.part import gpu_memory

    def gpus(instance_type: str) -> GpuSpec | None:
        if config.infrastructure.calls_no_aws:
            return gpu_spec(instance_type)
        measured = gpu_memory(config, deadline_seconds).get(instance_type)
        return measured_spec(gpu_spec(instance_type), measured)

    return models.models_part(config, deadline_seconds, gpus)


def account_part(config: StackConfig, deadline_seconds: float) -> Outcome:
    """The account part (mlcc.preflight.account.part), imported when preflight runs."""
    from mlcc.preflight.account.part import check_account

    return check_account(config, deadline_seconds)


def measured_spec(spec: GpuSpec | None, measured: object) -> GpuSpec | None:
    if spec is None or not isinstance(measured, GpuMemory):
        return spec
    return replace(spec, memory_mib=measured.mib_per_gpu)


def pricing_part(config: StackConfig, deadline_seconds: float) -> Outcome:
    """The prices of what the stack bills (mlcc.preflight.cost.price_list), imported on use."""
    from mlcc.preflight.cost.price_list import pricing_part as prices

    return prices(config, deadline_seconds)


def network_part(config: StackConfig, deadline_seconds: float) -> Outcome:
    """The account's network rows (mlcc.preflight.account.network_checks), imported on use."""
    from mlcc.preflight.account.network_checks import network_part as network

    return network(config, deadline_seconds)


def image_part(config: StackConfig, deadline_seconds: float) -> Outcome:
    """A prebuilt ECR hp:image's labels and env (mlcc.preflight.image.part), imported on use."""
    from mlcc.preflight.image.part import image_part as image

    return image(config, deadline_seconds)


PARTS: list[Part] = [models_part, account_part, network_part, pricing_part, image_part]
# Kubernetes-only mode creates nothing in AWS and calls no AWS API: no account, quota or price
# to check, no ECR image's labels to read, and each GPU's memory comes from the table, not EC2.
AWS_FREE_PARTS: list[Part] = [models_part]


@dataclass
class ProgramSwitch:
    """Whether the program runs preflight (off under mlcc plan unless --preflight), and the
    outcome of its last run (for the plan headline)."""

    enabled: bool = True
    outcome: Outcome | None = None
    costing: Costing | None = None  # what the stack costs (mlcc.preflight.cost.budget)


PROGRAM = ProgramSwitch()


# huggingface_hub/constants.py reads these with int() when it is first imported: any other
# text makes the import itself fail.
HUB_WHOLE_SECONDS = ("HF_HUB_ETAG_TIMEOUT", "HF_HUB_DOWNLOAD_TIMEOUT")
MAX_HUB_SECONDS = 600
DEFAULT_ETAG_TIMEOUT_S = 10.0  # huggingface_hub/constants.py, DEFAULT_ETAG_TIMEOUT


def hub_environment_problem() -> tuple[str, str] | None:
    """(variable, why) when huggingface_hub cannot start in this environment, else None."""
    for name in HUB_WHOLE_SECONDS:
        text = os.environ.get(name)
        if text is None:
            continue
        try:
            int(text)
        except ValueError:
            why = f"{name}={shown(text)} is not whole seconds (huggingface_hub reads it)"
            return name, f"{why}: unset it or set e.g. 10"
    return None


def deadline_seconds() -> float:
    """Per fetch: the library's own metadata timeout (HF_HUB_ETAG_TIMEOUT, default 10 s)."""
    if hub_environment_problem() is not None:
        return DEFAULT_ETAG_TIMEOUT_S
    from huggingface_hub import constants

    given = os.environ.get("HF_HUB_ETAG_TIMEOUT", "").strip()
    try:
        seconds = float(given) if given else float(constants.HF_HUB_ETAG_TIMEOUT)
    except ValueError:
        seconds = float(constants.HF_HUB_ETAG_TIMEOUT)
    return seconds if 0 < seconds <= MAX_HUB_SECONDS else float(constants.DEFAULT_ETAG_TIMEOUT)


def run_parts(config: StackConfig, seconds: float, parts: list[Part] | None = None) -> Outcome:
    """Every part at once; a part that fails or overruns becomes one unchecked line."""
    chosen = (
        parts
        if parts is not None
        else AWS_FREE_PARTS
        if config.infrastructure.calls_no_aws
        else PARTS
    )
    outcomes: dict[int, Outcome] = {}
    failures: dict[int, str] = {}

    def work(index: int, part: Part) -> None:
        try:
            outcomes[index] = part(config, seconds)
        except Exception as error:  # a bug in one part must not hide the others' answers
            failures[index] = f"{type(error).__name__}: {error}"

    threads = [
        threading.Thread(target=work, args=(i, p), daemon=True) for i, p in enumerate(chosen)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds * 3 + 5)
    missed = [
        Unchecked(
            "hp:preflight",
            getattr(part, "__name__", "a check"),
            failures.get(i, "no answer in time"),
        )
        for i, part in enumerate(chosen)
        if i not in outcomes
    ]
    return combine([*(outcomes[i] for i in sorted(outcomes)), Outcome(unchecked=tuple(missed))])


def image_lines(config: StackConfig) -> Outcome:
    """The headline line of each endpoint that runs a prebuilt hp:image the image part does not
    read: another registry's than ECR, or any in Kubernetes-only mode (no AWS API)."""
    from mlcc.preflight.image.part import unread_lines

    return unread_lines(config, config.infrastructure.calls_no_aws)


def preflight(config: StackConfig) -> tuple[list[Problem], list[Problem], Outcome]:
    """(errors, warnings, outcome) of every part under the stack's hp:preflight."""
    mode = Mode(config.preflight)
    if mode is Mode.OFF:
        return [], [], Outcome()
    outcome = combine([run_parts(config, deadline_seconds()), image_lines(config)])
    errors, warnings = settle(outcome, mode)
    return _unique(errors), _unique(warnings), outcome


def _unique(problems: list[Problem]) -> list[Problem]:
    return list(dict.fromkeys(problems))


def name_hints(config: StackConfig, read: frozenset[str]) -> list[Problem]:
    """The warnings from the models' names (EndpointConfig.name_hints) whose model's config.json
    preflight did not read: where it did, the config's own facts replace them."""
    return [
        hint
        for endpoint in config.endpoints
        for settled_by, hint in endpoint.name_hints
        if endpoint.key(settled_by) not in read
    ]


def check_before_deploy(config: StackConfig) -> None:
    """The program's preflight: warnings logged, errors raised as one RunError, like config
    errors. Without preflight (plain `mlcc plan`, hp:preflight off) only the name hints."""
    import pulumi

    if not PROGRAM.enabled or Mode(config.preflight) is Mode.OFF:
        for hint in name_hints(config, frozenset()):
            pulumi.log.warn(str(hint))
        return
    errors, warnings, outcome = preflight(config)
    PROGRAM.outcome = outcome
    for warning in [*name_hints(config, outcome.read), *warnings]:
        pulumi.log.warn(str(warning))
    if errors:
        refuse(errors)
