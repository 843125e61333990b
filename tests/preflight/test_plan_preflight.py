"""`mlcc plan --preflight` runs the program's preflight; plain `mlcc plan` makes no request."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from aws_accounts import account_served, example_account
from fake_hub import TOKEN, FakeHub, HubBehaviour
from local_aws import LocalAWS
from program_runs import IMAGE, REPO

from mlcc.cli import main
from mlcc.preflight.image.part import NOT_SAID

GATED = {"meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct"}


@pytest.fixture(autouse=True)
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalAWS]:
    """The account part's AWS: an account every example stack passes in."""
    with account_served(monkeypatch, example_account()) as fake:
        yield fake


def plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str, stack: str = "dev") -> int:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    argv = ["plan", "--stack", stack, "--out", str(tmp_path / "out"), "--set", f"hp:image={IMAGE}"]
    return main([*argv, *extra])


@pytest.mark.parametrize("stack", ["dev", "multi", "existing"])
def test_the_stacks_pass_preflight_without_a_warning_when_the_token_reads_the_gated_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], stack: str
) -> None:
    with FakeHub(HubBehaviour(gated=GATED)) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        assert plan(tmp_path, monkeypatch, "--preflight", stack=stack) == 0
    captured = capsys.readouterr()
    assert [line for line in captured.err.splitlines() if "not checked" in line] == []
    # the --set hp:image, read from ECR, says no release (as upstream images): in the headline
    assert f"  preflight: {NOT_SAID}" in captured.out
    assert "preflight" not in captured.err
    lines = captured.out.splitlines()
    endpoints = [
        i for i, line in enumerate(lines) if line.startswith("endpoint ") and "): " in line
    ]
    assert endpoints
    for index in endpoints:  # each endpoint's own figures, under its speculative lines
        figures = next(line for line in lines[index:] if line.startswith("  preflight: "))
        assert figures.startswith("  preflight: memory: ") and "GiB usable per GPU" in figures
    # the tree and outputs within 100 columns but literals; preflight's figures are one line each
    literal = re.compile(
        r"^\s*(vLLM|SGLang)\s+--|^\s*\w+Command: |@sha256:|^wrote |^account: |^  preflight: "
    )
    assert [line for line in lines if len(line) > 100 and not literal.search(line)] == []


def test_without_a_token_the_dev_stacks_gated_llama_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeHub(HubBehaviour(gated=GATED)) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.delenv("HF_TOKEN", raising=False)
        assert plan(tmp_path, monkeypatch, "--preflight") == 1
    err = capsys.readouterr().err
    assert (
        "error: hp:model: meta-llama/Llama-3.1-8B-Instruct is gated and no token was given" in err
    )
    assert "Traceback" not in err


def test_every_refusal_at_once_naming_the_entry_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeHub() as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        code = plan(
            tmp_path,
            monkeypatch,
            "--preflight",
            "--set",
            "hp:endpoints[1].model=Qwen/Qwen3-8B",
            "--set",
            "hp:endpoints[1].speculativeAlgorithm=eagle3",
            "--set",
            "hp:endpoints[1].speculativeModel=yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
            "--set",
            "hp:endpoints[1].engine=vllm",
            "--set",
            "hp:endpoints[0].model=meta-llama/Llama-3.1-70B-Instruct",
            stack="multi",
        )
    err = capsys.readouterr().err
    assert code == 1
    assert (
        "error: hp:endpoints[1].speculativeModel: draft vocabulary 128256 tokens, target 151936"
        in err
    )
    assert "error: hp:endpoints[0].instanceType: needs 33.5 GiB per GPU" in err


def test_plain_plan_makes_no_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, aws: LocalAWS
) -> None:
    with FakeHub() as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        assert plan(tmp_path, monkeypatch) == 0
        assert plan(tmp_path, monkeypatch, "--set", "hp:preflight=strict") == 0
    assert hub.requests == []
    assert aws.calls == []


def test_preflight_off_makes_no_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, aws: LocalAWS
) -> None:
    with FakeHub() as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        assert plan(tmp_path, monkeypatch, "--preflight", "--set", "hp:preflight=off") == 0
    assert hub.requests == []
    assert aws.calls == []


@pytest.mark.parametrize(
    "behaviour",
    [
        HubBehaviour(malformed={"meta-llama/Llama-3.1-8B-Instruct": "html"}),
        HubBehaviour(malformed={"meta-llama/Llama-3.1-8B-Instruct": "huge"}),
        HubBehaviour(malformed={"meta-llama/Llama-3.1-8B-Instruct": "utf8"}),
        HubBehaviour(malformed={"meta-llama/Llama-3.1-8B-Instruct": "redirect"}),
        HubBehaviour(silent=True),
    ],
    ids=["html", "10MB", "utf8", "redirect-loop", "never-answers"],
)
def test_no_hub_answer_ends_in_a_traceback(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    behaviour: HubBehaviour,
) -> None:
    with FakeHub(behaviour) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("HF_HUB_ETAG_TIMEOUT", "1")  # whole seconds (int() in huggingface_hub)
        strict = plan(tmp_path, monkeypatch, "--preflight", "--set", "hp:preflight=strict")
    err = capsys.readouterr().err
    assert strict == 1 and "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert lines and all(line.startswith("error: hp:") for line in lines)
    assert any(line.startswith("error: hp:model: ") for line in lines)


def test_plain_plan_opens_no_socket_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, aws: LocalAWS
) -> None:
    """As under `unshare -n`: any connection attempt fails the test."""
    import socket

    attempts: list[object] = []

    def refuse(self: socket.socket, address: object) -> None:
        attempts.append(address)
        raise OSError("network is unreachable (test)")

    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    with monkeypatch.context() as offline:  # the plans only, not the local AWS's stop
        offline.setattr(socket.socket, "connect", refuse)
        offline.setattr(socket.socket, "connect_ex", refuse)
        for stack in ("dev", "multi", "existing"):
            assert plan(tmp_path, monkeypatch, stack=stack) == 0
    assert attempts == []
    assert aws.calls == []
