"""`mlcc bench --candidate-url ... --apply` end to end: three batched fake engines
(tests/bench/bench_load_engine.py) stand in for the current head, the candidate head and their
baseline twin, each head with a known acceptance and step time; the rule promotes only the
better head, and only then is the stack file changed."""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from bench_load_engine import MODEL, LoadBehaviour, LoadEngine, LoadModel

from mlcc.bench.sweep import plot_candidate
from mlcc.bench.sweep import report as sweep_report
from mlcc.cli import main

REPO = Path(__file__).resolve().parents[2]
K = 4
# The current head: a draft with a cost per drafted token, accepting half of position 1. The
# step times are half LoadModel's defaults, so that a sweep of three endpoints stays short.
FAST = {"base_s": 0.002, "draft_s": 0.001, "per_seq_s": 0.00025}
CURRENT = LoadModel(**FAST, accept_first=0.5)
# Known answers (LoadModel.speedup against the twin, k = 4, batch 1 and 4): the better head
# accepts more at the same step time (1.49x the current head's tokens/s at every batch size);
# the worse one less (0.63x); the heavy one accepts more but its verify grows with the batch
# (1.54x at batch 1, 0.75x at batch 4).
BETTER = LoadModel(**FAST, accept_first=0.9)
WORSE = LoadModel(**FAST, accept_first=0.2)
HEAVY = LoadModel(**FAST | {"draft_s": 0.0, "per_seq_s": 0.001}, accept_first=0.9)
# Five repeats, not three: a stall of the machine in one repeat (the suite runs on every core)
# widens a 95 % interval of three repeats (t = 4.30) past the 2 % margin; of five, t = 2.78.
REPEATS = 5
STACK = (
    "config:\n  aws:region: us-east-1  # the region\n  aws-native:region: us-east-1\n"
    "  hp:model: org/m\n  hp:engine: vllm\n  hp:speculativeAlgorithm: eagle3\n"
    "  hp:speculativeModel: org/head-v1  # the current head\n  hp:speculativeNumTokens: 4\n"
    "  hp:baseline: true\n"
)


def test_the_known_answers_hold() -> None:
    def over_current(model: LoadModel, batch: int) -> float:
        return model.throughput(K, batch) / CURRENT.throughput(K, batch)

    assert over_current(BETTER, 1) == pytest.approx(1.49, abs=0.01)
    assert over_current(BETTER, 4) == pytest.approx(1.49, abs=0.01)
    assert over_current(WORSE, 4) == pytest.approx(0.63, abs=0.01)
    assert over_current(HEAVY, 1) == pytest.approx(1.54, abs=0.01)
    assert over_current(HEAVY, 4) == pytest.approx(0.75, abs=0.01)
    assert HEAVY.acceptance(K, 4) > CURRENT.acceptance(K, 4)


def promote(
    tmp_path: Path, candidate: LoadModel, *extra: str, stack: str = STACK, head: bool = True
) -> int:
    shutil.copy(REPO / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "Pulumi.lab.yaml").write_text(stack)
    with (
        LoadEngine(LoadBehaviour(CURRENT, K, seed=1)) as current,
        LoadEngine(LoadBehaviour(candidate, K, seed=2)) as new,
        LoadEngine(LoadBehaviour(CURRENT, 0, seed=3)) as twin,
    ):
        return main(
            ["bench", "--stack", "lab", "--project-dir", str(tmp_path), "--url", current.url,
             "--twin-url", twin.url, "--candidate-url", new.url,
             *(["--candidate-model", "org/head-v2"] if head else []), "--model", MODEL,
             "--concurrency", "1,4",
             "--per-user", "4", "--requests", "8", "--max-tokens", "32", "--ignore-eos",
             "--repeats", str(REPEATS), "--out", str(tmp_path / "out"), "--apply", *extra]
        )  # fmt: skip


def document(tmp_path: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((tmp_path / "out" / "bench.json").read_text())
    return found


def test_a_better_head_is_promoted_into_the_stack_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = promote(tmp_path, BETTER)
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    text = (tmp_path / "Pulumi.lab.yaml").read_text()
    assert text == STACK.replace(
        "org/head-v1  # the current head", "org/head-v2  # the current head"
    )
    decision = document(tmp_path)["promotion"]
    assert decision["promote"] and decision["served_levels"] == [1, 4]
    for verdict in decision["levels"]:
        assert verdict["speed"] == "faster" and not verdict["losses"]
        rates = verdict["acceptance_rate"]
        assert rates["candidate"] > rates["current"] + 0.2  # 0.9 x ... against 0.5 x ...
        assert verdict["candidate_over_current"]["low"] > 1.02
    assert "PROMOTE: the candidate wins at concurrency 1, 4" in out.out
    assert "hp:speculativeModel: 'org/head-v2' (was 'org/head-v1')" in out.out


def test_a_worse_head_is_not_promoted_and_its_loss_is_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert promote(tmp_path, WORSE, "--plot") == 3
    out = capsys.readouterr().out
    assert (tmp_path / "Pulumi.lab.yaml").read_text() == STACK
    decision = document(tmp_path)["promotion"]
    # --plot draws the candidate beside the current head, its loss as the title
    assert (tmp_path / "out" / "sweep.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    figure = sweep_report.draw(document(tmp_path))
    assert figure.get_suptitle().startswith("candidate not promoted: slower at 1,4")
    speedup = [text.get_text() for text in figure.axes[0].get_legend().get_texts()]
    importlib.import_module("matplotlib.pyplot").close(figure)
    assert plot_candidate.SPEEDUP_LABEL in speedup and "speedup (95 % interval)" in speedup
    assert not decision["promote"]
    for verdict in decision["levels"]:
        assert verdict["speed"] == "slower"  # the interval under 1, or the mean under 0.98
        assert verdict["candidate_over_current"]["mean"] < 0.98
    assert "NOT PROMOTED" in out and "Pulumi.lab.yaml is unchanged" in out
    for c in (1, 4):
        assert f"concurrency {c}: acceptance" in out and "points lower (tolerance 2.0)" in out
        assert any(
            line.startswith(f"  - concurrency {c}: slower: candidate/current tokens/s 0.")
            and "fewer tokens/s" in line
            for line in out.splitlines()
        )


def test_a_head_equal_within_the_noise_is_not_promoted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert promote(tmp_path, CURRENT) == 3
    out = capsys.readouterr().out
    assert (tmp_path / "Pulumi.lab.yaml").read_text() == STACK
    decision = document(tmp_path)["promotion"]
    assert [v["speed"] for v in decision["levels"]] != ["faster", "faster"]
    assert "faster at no served level beyond the noise" in out


def test_better_acceptance_but_slower_at_a_served_level_is_not_promoted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert promote(tmp_path, HEAVY) == 3
    out = capsys.readouterr().out
    assert (tmp_path / "Pulumi.lab.yaml").read_text() == STACK
    one, four = document(tmp_path)["promotion"]["levels"]
    assert one["speed"] == "faster" and four["speed"] == "slower"
    for verdict in (one, four):
        rates = verdict["acceptance_rate"]
        assert rates["candidate"] > rates["current"]
    assert "concurrency 4: slower" in out


def test_the_levels_the_stack_serves_are_those_its_schedule_drafts_at(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schedule = (
        "  hp:speculativeSchedule:\n    - {from: 1, to: 2, tokens: 4}\n    - {from: 3, tokens: 0}\n"
    )
    code = promote(tmp_path, HEAVY, stack=STACK + schedule)
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    decision = document(tmp_path)["promotion"]
    assert decision["served_levels"] == [1] and decision["not_served_levels"] == [4]
    assert "org/head-v2" in (tmp_path / "Pulumi.lab.yaml").read_text()
    assert "not judged (the stack does not speculate there): concurrency 4" in out.out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--candidate-model", "x"], "the promotion flags compare a candidate head: give"),
        (["--candidate-url", "ftp://h"], "--candidate-url: 'ftp://h' is not http://"),
        (["--candidate-endpoint", "c"], "--candidate-endpoint names a stack's endpoint"),
        (["--candidate-url", "http://h", "--served-levels", "8"], "--served-levels: 8 is not a"),
        (["--candidate-url", "http://h", "--acceptance-tolerance", "2"], "--acceptance-tolerance:"),
        (["--candidate-url", "http://h", "--promotion-margin", "-1"], "--promotion-margin: '-1'"),
        (["--candidate-url", "http://h", "--candidate-model", "s3://b/h"], "--candidate-model:"),
        (["--candidate-url", "http://h", "--candidate-model", "hf://x/y"], "--candidate-model:"),
        (["--candidate-url", "http://h", "--recommend", "--apply"], "--apply writes either"),
        (["--candidate-url", "http://h", "--apply"], "--apply needs --stack"),
    ],
)
def test_promotion_usage_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with (
        LoadEngine(LoadBehaviour(CURRENT, K)) as current,
        LoadEngine(LoadBehaviour(CURRENT, 0)) as twin,
    ):
        code = main(["bench", "--url", current.url, "--twin-url", twin.url, "--model", MODEL,
                     "--concurrency", "1,4", *argv, "--out", str(tmp_path)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith(f"mlcc bench: error: {message}") and len(err.splitlines()) == 1


def two_entries(engine: str, chat: str, candidate: str) -> str:
    """A stack of two hp:endpoints entries, `chat` and `chat-candidate`, with their fields."""
    return (
        "config:\n  aws:region: us-east-1\n  aws-native:region: us-east-1\n  hp:model: org/m\n"
        f"  hp:engine: {engine}\n  hp:speculativeAlgorithm: eagle3\n  hp:speculativeNumTokens: 4\n"
        f"  hp:endpoints:\n    - name: chat\n      {chat}"
        f"    - name: chat-candidate\n      {candidate}"
    )


def promote_candidate_entry(tmp_path: Path, stack: str, capsys: pytest.CaptureFixture[str]) -> str:
    """The better head, served by `chat-candidate`, promoted into `chat`: its stdout."""
    code = promote(
        tmp_path, BETTER, "--endpoint", "chat", "--candidate-endpoint", "chat-candidate",
        stack=stack, head=False,
    )  # fmt: skip
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    return out.out


def test_a_candidate_endpoint_of_the_stack_is_promoted_into_the_benched_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stack = two_entries(
        "vllm",
        "speculativeModel: org/head-v1  # the current head\n      baseline: true\n",
        "speculativeModel: org/head-v3\n      speculativeModelRevision: abc123\n",
    )
    out = promote_candidate_entry(tmp_path, stack, capsys)
    assert (tmp_path / "Pulumi.lab.yaml").read_text() == stack.replace(
        "org/head-v1  # the current head\n      baseline: true\n",
        "org/head-v3  # the current head\n      baseline: true\n"
        "      speculativeModelRevision: abc123\n",
    )
    assert (
        "the candidate chat-candidate: kubectl port-forward -n default "
        "deployment/chat-candidate 8082:8080" in out
    )
    assert "hp:endpoints[0].speculativeModelRevision: 'abc123' (new)" in out
    assert out.endswith(
        "the candidate endpoint chat-candidate is still in Pulumi.lab.yaml: once the promoted "
        "head serves, remove its hp:endpoints entry (`pulumi up` then deletes it)\n"
    )


def test_a_trained_head_in_s3_is_promoted_from_its_candidate_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head = "s3://my-bucket/heads/run1/checkpoints/3/"
    stack = two_entries(
        "vllm",
        "speculativeModel: org/head-v1\n      baseline: true\n",
        f"speculativeModel: {head}\n",
    )
    promote_candidate_entry(tmp_path, stack, capsys)
    assert (tmp_path / "Pulumi.lab.yaml").read_text() == stack.replace(
        "speculativeModel: org/head-v1", f'speculativeModel: "{head}"'
    )  # no speculativeModelRevision: an s3:// head has none


def test_an_s3_head_on_an_sglang_stack_is_refused_naming_the_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stack = two_entries(
        "sglang",
        "speculativeModel: org/head-v1\n",
        "engine: vllm\n      speculativeModel: s3://my-bucket/heads/run1/\n",
    )
    (tmp_path / "Pulumi.lab.yaml").write_text(stack)
    shutil.copy(REPO / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    with (
        LoadEngine(LoadBehaviour(CURRENT, K)) as current,
        LoadEngine(LoadBehaviour(CURRENT, 0)) as twin,
    ):
        argv = ["bench", "--stack", "lab", "--project-dir", str(tmp_path), "--endpoint", "chat",
                "--url", current.url, "--twin-url", twin.url, "--candidate-endpoint",
                "chat-candidate", "--model", MODEL, "--concurrency", "1,4",
                "--out", str(tmp_path / "out")]  # fmt: skip
        assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("mlcc bench: error: ") and len(err.splitlines()) == 1, err
    assert "chat-candidate's speculativeModel: s3://my-bucket/heads/run1/ is an s3:// draft" in err


ENTRIES = (
    "config:\n  aws:region: us-east-1\n  aws-native:region: us-east-1\n  hp:model: org/m\n"
    "  hp:engine: vllm\n  hp:speculativeAlgorithm: eagle3\n  hp:speculativeModel: org/h\n"
    "  hp:endpoints:\n    - name: chat\n      baseline: true\n    - name: other\n"
    "      model: org/other\n    - name: plain\n      speculativeAlgorithm: ''\n"
)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--endpoint", "chat", "--candidate-endpoint", "nope"],
         "--candidate-endpoint: stack lab has no endpoint 'nope'; choose one of: chat, other"),
        (["--endpoint", "chat", "--candidate-endpoint", "chat-baseline"],
         "--candidate-endpoint: chat-baseline is the endpoint benched, a baseline twin"),
        (["--endpoint", "chat", "--candidate-endpoint", "other"],
         "--candidate-endpoint: other serves org/other, chat serves org/m"),
        (["--endpoint", "plain", "--candidate-endpoint", "chat"],
         "stack lab: plain has no speculation, so no current head"),
    ],
)  # fmt: skip
def test_a_stack_candidate_is_checked_before_any_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    shutil.copy(REPO / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "Pulumi.lab.yaml").write_text(ENTRIES)
    with (
        LoadEngine(LoadBehaviour(CURRENT, K)) as current,
        LoadEngine(LoadBehaviour(CURRENT, 0)) as twin,
    ):
        code = main(["bench", "--stack", "lab", "--project-dir", str(tmp_path), "--url",
                     current.url, "--twin-url", twin.url, "--model", MODEL, "--concurrency",
                     "1,4", *argv, "--out", str(tmp_path / "out")])  # fmt: skip
        assert current.counters.requests == twin.counters.requests == 0
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith(f"mlcc bench: error: {message}") and len(err.splitlines()) == 1
