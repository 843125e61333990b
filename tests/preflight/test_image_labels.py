"""A prebuilt ECR hp:image's own labels and env against hp:engine and hp:engineVersion, read
through the local AWS (ECR BatchGetImage, GetDownloadUrlForLayer, checked against botocore's
model) and a local blob host (tests/preflight/ecr_images.py)."""

from __future__ import annotations

import pytest
from aws_accounts import Account, account_served
from ecr_images import UPSTREAM_ENV

from mlcc.config.stack import StackConfig, parse
from mlcc.preflight import run
from mlcc.preflight.image import part, registry
from mlcc.preflight.outcome import Outcome

REPO = "hp-vllm"
HOST = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
DIGEST = "sha256:" + "b" * 64
IMAGE = f"{HOST}/{REPO}@{DIGEST}"
BASE = {
    "hp:model": "meta-llama/Llama-3.1-8B-Instruct",
    "aws:region": "us-east-1",
    "aws-native:region": "us-east-1",
}
RUN_PARTS = run.run_parts
OWN = {"mlcc.engine": "vllm", "mlcc.engine-version": "0.34.0"}


def stack(mode: str = "auto", image: str = IMAGE) -> StackConfig:
    return parse({**BASE, "hp:image": image, "hp:preflight": mode}, stack="dev").config


def image_outcome(
    monkeypatch: pytest.MonkeyPatch, account: Account, config: StackConfig
) -> Outcome:
    with account_served(monkeypatch, account):
        return RUN_PARTS(config, 5.0, [run.image_part])


def test_the_project_s_label_naming_another_release_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    account = Account()
    account.registry.push(REPO, [DIGEST], OWN, {"PATH": "/usr/bin"})
    config = stack()
    outcome = image_outcome(monkeypatch, account, config)
    (error,) = outcome.errors
    assert error.key == "hp:image"
    assert str(error).startswith(
        "hp:image: its labels (mlcc.engine, mlcc.engine-version) say vllm 0.34.0 (read from ECR; "
        "the serve wrapper runs that release), but the endpoints run vllm 0.27.1 (hp:engine, "
        "hp:engineVersion)"
    )
    assert "set hp:engine and hp:engineVersion to vllm 0.34.0" in str(error)
    assert (outcome.warnings, outcome.unchecked) == ((), ())
    assert account.registry.blob_requests  # the config blob itself was read


def test_an_index_s_amd64_image_env_naming_the_stack_s_release_is_quiet(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    account = Account()
    env = {"MLCC_ENGINE": "vllm", "MLCC_ENGINE_VERSION": "0.27.1"}
    account.registry.push(REPO, ["serve-1"], {}, env, index=True)
    config = stack("strict", f"{HOST}/{REPO}:serve-1")
    outcome = image_outcome(monkeypatch, account, config)
    assert (outcome.errors, outcome.warnings, outcome.unchecked) == ((), (), ())
    (line,) = outcome.lines[config.primary.name]
    assert line.startswith("image: env (MLCC_ENGINE, MLCC_ENGINE_VERSION) say vllm 0.27.1")


def test_an_upstream_image_says_no_release_and_nothing_is_guessed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    account = Account()
    labels = {"org.opencontainers.image.version": "22.04"}  # the base OS's, not vLLM's
    account.registry.push(REPO, [DIGEST], labels, UPSTREAM_ENV)
    config = stack("strict")
    outcome = image_outcome(monkeypatch, account, config)
    assert (outcome.errors, outcome.warnings, outcome.unchecked) == ((), (), ())
    assert outcome.lines == {config.primary.name: (part.NOT_SAID,)}


def test_an_arm64_only_image_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    account = Account()
    account.registry.push(REPO, [DIGEST], OWN, {}, arch="arm64", index=True)
    (error,) = image_outcome(monkeypatch, account, stack()).errors
    assert "its index holds no linux/amd64 image" in str(error)


@pytest.mark.parametrize("operation", ["BatchGetImage", "GetDownloadUrlForLayer"])
def test_a_denied_call_is_one_warning_naming_the_action(
    monkeypatch: pytest.MonkeyPatch, operation: str
) -> None:
    account = Account()
    account.registry.push(REPO, [DIGEST], OWN, {})
    account.registry.denied.add(operation)
    outcome = image_outcome(monkeypatch, account, stack("strict"))
    (warning,) = outcome.warnings
    assert outcome.errors == ()
    assert str(warning).startswith("hp:image: not checked: the image's labels")
    assert str(warning).endswith(f"grant the IAM action ecr:{operation} to the deploying role")


@pytest.mark.parametrize("mode", ["auto", "strict"])
def test_an_endless_config_body_is_not_checked(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    account = Account()
    digest = account.registry.push(REPO, [DIGEST], OWN, {})
    account.registry.blobs.pop(digest)
    account.registry.endless.add(digest)
    monkeypatch.setattr(run, "run_parts", lambda c, s: image_outcome(monkeypatch, account, c))
    errors, warnings, _ = run.preflight(stack(mode))
    found = [str(p) for p in (errors if mode == "strict" else warnings)]
    assert found == [
        "hp:image: not checked: the image's labels (its engine release) (the image config's "
        "download URL: a config blob over 4 MiB)"
    ]


def test_a_config_blob_that_is_not_its_digest_is_not_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    account = Account()
    digest = account.registry.push(REPO, [DIGEST], OWN, {})
    account.registry.blobs[digest] = b'{"config": {}}'
    (missed,) = image_outcome(monkeypatch, account, stack()).unchecked
    assert "whose sha256 is not its digest" in missed.why


def test_a_non_ecr_image_and_kubernetes_only_mode_call_no_aws(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with account_served(monkeypatch) as fake:
        other = stack("strict", "ghcr.io/me/vllm@" + DIGEST)
        assert run.run_parts(other, 5.0, [run.image_part]) == Outcome()
        assert run.image_lines(other).lines == {other.primary.name: (part.NOT_ECR,)}
    assert fake.calls == []
    assert run.image_part not in run.AWS_FREE_PARTS


@pytest.mark.parametrize(
    ("image", "parts"),
    [
        (IMAGE, ("123456789012", "us-east-1", REPO, "", DIGEST)),
        (f"{HOST}/team/serve:v1", ("123456789012", "us-east-1", "team/serve", "v1", "")),
        (f"{HOST}/serve", ("123456789012", "us-east-1", "serve", "latest", "")),
        ("ghcr.io/me/serve:v1", None),
    ],
)
def test_ecr_references(image: str, parts: tuple[str, ...] | None) -> None:
    found = registry.ecr_image(image)
    assert (found and tuple(vars(found).values())) == parts
