"""The image part of preflight: a prebuilt hp:image's own config against hp:engineVersion.

The project's serve images say their release twice: the labels `mlcc.engine` and
`mlcc.engine-version` (images/*/Dockerfile) and the env `MLCC_ENGINE` and `MLCC_ENGINE_VERSION`,
which the serve wrapper reads to choose the engine and its flag tables. An image that says it
in either runs that release for certain, so another release than hp:engine and
hp:engineVersion is an error. Upstream engine images (vllm/vllm-openai, lmsysorg/sglang) set no
label or env naming their release (and `org.opencontainers.image.version`, where set, may be the
base OS's, e.g. Ubuntu's 22.04): for them the headline says the image does not say it, and the
tag check at config time (mlcc/config/image_tag.py) is all there is. Nothing is guessed.

Read from ECR only (mlcc/preflight/image/registry.py). Kubernetes-only mode calls no AWS API,
so there, as for another registry, the headline says the config is not read.
"""

from __future__ import annotations

from mlcc.config.stack import StackConfig
from mlcc.engine_contract.names import ENGINE_ENV, ENGINE_VERSION_ENV
from mlcc.preflight.account import fetch as account_fetch
from mlcc.preflight.account.facts import Unreached
from mlcc.preflight.image.registry import ImageConfig, NotRunnable, ecr_image, read_config
from mlcc.preflight.outcome import Outcome, Unchecked
from mlcc.serving.speculative import Problem

KEY = "hp:image"
ENGINE_LABEL = "mlcc.engine"
VERSION_LABEL = "mlcc.engine-version"
NOT_ECR = "image: its engine release is read from its tag only (its labels are read from ECR only)"
NO_AWS = (
    "image: its engine release is read from its tag only (its labels are not read: "
    "Kubernetes-only mode calls no AWS API)"
)
NOT_SAID = "image: its labels and env (read from ECR) do not say its engine release"


def runs_it(config: StackConfig) -> list[str]:
    """The endpoints that run the prebuilt hp:image ([] without one)."""
    if not config.image:
        return []
    return [e.name for e in config.endpoints if e.engine_release == config.image_release]


def headline(config: StackConfig, line: str) -> Outcome:
    return Outcome(lines={name: (line,) for name in runs_it(config)})


def unread_lines(config: StackConfig, calls_no_aws: bool) -> Outcome:
    """The headline of an image this part does not read: another registry's, or any in
    Kubernetes-only mode."""
    if not config.image or (not calls_no_aws and ecr_image(config.image) is not None):
        return Outcome()
    return headline(config, NO_AWS if calls_no_aws else NOT_ECR)


def image_part(config: StackConfig, deadline_seconds: float) -> Outcome:
    """hp:image's config from ECR, against hp:engine and hp:engineVersion."""
    ref = ecr_image(config.image or "")
    if ref is None or not runs_it(config):
        return Outcome()
    made = account_fetch.clients(ref.region, config.aws_profile, deadline_seconds)
    found = made if isinstance(made, Unreached) else read_config(made, ref, deadline_seconds)
    return judge(config, found)


def judge(config: StackConfig, found: ImageConfig | NotRunnable | Unreached) -> Outcome:
    if isinstance(found, Unreached):
        return unreached(config, found)
    if isinstance(found, NotRunnable):
        why = f"{found.why}: HyperPod's GPU nodes are x86_64; use an image built for linux/amd64"
        return Outcome(errors=(Problem(KEY, why),), lines=_lines(config, "image: not amd64"))
    said = own_release(found)
    if said is None:
        return headline(config, NOT_SAID)
    engine, version, where = said
    ours = config.image_release
    if (engine, version) == (ours.engine.value, ours.version):
        return headline(config, f"image: {where} say {engine} {version}, as hp:engineVersion")
    message = (
        f"its {where} say {engine} {version} (read from ECR; the serve wrapper runs that "
        f"release), but the endpoints run {ours.engine.value} {ours.version} (hp:engine, "
        "hp:engineVersion), whose flags the program checks: set hp:engine and hp:engineVersion "
        f"to {engine} {version}, or use an image of {ours.engine.value} {ours.version}"
    )
    line = f"image: {where} say {engine} {version}, not hp:engineVersion's"
    return Outcome(errors=(Problem(KEY, message),), lines=_lines(config, line))


def own_release(found: ImageConfig) -> tuple[str, str, str] | None:
    """(engine, version, where) the project's own labels or env say, else None. The env wins:
    the serve wrapper reads it."""
    env = (found.env.get(ENGINE_ENV, ""), found.env.get(ENGINE_VERSION_ENV, ""))
    labels = (found.labels.get(ENGINE_LABEL, ""), found.labels.get(VERSION_LABEL, ""))
    for (engine, version), where in ((env, "env"), (labels, "labels")):
        engine, version = engine.strip().lower(), version.strip().removeprefix("v")
        if engine and version:
            shown = (
                f"{where} ({ENGINE_ENV}, {ENGINE_VERSION_ENV})"
                if where == "env"
                else (f"{where} ({ENGINE_LABEL}, {VERSION_LABEL})")
            )
            return account_fetch.one_line(engine, 20), account_fetch.one_line(version, 40), shown
    return None


def unreached(config: StackConfig, missing: Unreached) -> Outcome:
    """Denied: a warning naming the IAM action (as the account part's); else not checked."""
    what = "the image's labels (its engine release)"
    lines = _lines(config, "image: its labels not checked")
    if missing.denied_action:
        message = (
            f"not checked: {what} ({missing.source} was refused: {missing.why}); "
            f"grant the IAM action {missing.denied_action} to the deploying role"
        )
        return Outcome(warnings=(Problem(KEY, message),), lines=lines)
    why = f"{missing.source}: {missing.why}"
    return Outcome(unchecked=(Unchecked(KEY, what, why),), lines=lines)


def _lines(config: StackConfig, line: str) -> dict[str, tuple[str, ...]]:
    return {name: (line,) for name in runs_it(config)}
