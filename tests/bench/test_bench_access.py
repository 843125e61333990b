"""Reaching a HyperPod endpoint: the port-forward command and `--stack`."""

from __future__ import annotations

import json
import shlex
import shutil
import socket
from pathlib import Path

import pytest
from bench_fake_engine import EngineBehaviour, FakeEngine

from mlcc.bench.client.access import port_forward_command, port_forward_commands, stack_endpoints
from mlcc.cli import main
from mlcc.manifest.workload import CONTAINER_PORT

REPO = Path(__file__).resolve().parents[2]
MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def test_port_forward_targets_the_deployment_on_the_container_port() -> None:
    command = port_forward_command("inference", "hp-dev")
    assert shlex.split(command) == [
        "kubectl", "port-forward", "-n", "inference", "deployment/hp-dev",
        f"8080:{CONTAINER_PORT}",
    ]  # fmt: skip
    assert port_forward_command("a b", "x", local_port=9000).endswith(
        "'a b' deployment/x 9000:8080"
    )


def project(tmp_path: Path, stack: str, extra: str = "") -> Path:
    shutil.copy(REPO / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / f"Pulumi.{stack}.yaml").write_text(
        "config:\n  aws:region: us-east-1\n  aws-native:region: us-east-1\n"
        f"  hp:model: {MODEL}\n  hp:engine: sglang\n{extra}"
    )
    return tmp_path


TWO_ENDPOINTS = """\
  hp:namespace: serving
  hp:instanceGroups:
    - {name: g, instanceType: ml.g5.12xlarge, instanceCount: 3}
  hp:endpoints:
    - {name: llama-eagle3, speculativeAlgorithm: ngram, baseline: true}
    - {name: other, engine: vllm, model: org/other}
"""


def test_stack_names_follow_the_program(tmp_path: Path) -> None:
    (derived,) = stack_endpoints(project(tmp_path, "lab"), "lab")
    assert (derived.namespace, derived.name, derived.model, derived.engine) == (
        "default", "hp-lab", MODEL, "sglang"
    )  # fmt: skip
    several = stack_endpoints(project(tmp_path, "x", TWO_ENDPOINTS), "x")
    assert sorted((e.namespace, e.name, e.baseline_of) for e in several) == [
        ("serving", "llama-eagle3", None),
        ("serving", "llama-eagle3-baseline", "llama-eagle3"),
        ("serving", "other", None),
    ]


def test_each_endpoint_gets_its_own_local_port() -> None:
    commands = port_forward_commands("ns", ["a", "a-baseline"])
    assert commands == {
        "a": port_forward_command("ns", "a", 8080),
        "a-baseline": port_forward_command("ns", "a-baseline", 8081),
    }


def test_several_endpoints_need_a_choice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = project(tmp_path, "x", TWO_ENDPOINTS)
    code = main(["bench", "--stack", "x", "--project-dir", str(directory), "--out", "o"])
    assert code == 2
    assert capsys.readouterr().err == (
        "mlcc bench: error: stack x: the stack has several endpoints; choose one with "
        "--endpoint: llama-eagle3, other, llama-eagle3-baseline\n"
    )


def test_the_chosen_endpoint_and_its_twin_are_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = project(tmp_path, "x", TWO_ENDPOINTS)
    with FakeEngine(EngineBehaviour(model=MODEL, metrics="plain")) as engine:
        code = main(
            ["bench", "--stack", "x", "--endpoint", "llama-eagle3", "--project-dir",
             str(directory), "--url", engine.url, "--requests", "1", "--out", str(tmp_path / "o")]
        )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert port_forward_command("serving", "llama-eagle3") in out
    assert port_forward_command("serving", "llama-eagle3-baseline", 8081) in out


def test_bench_with_stack_takes_model_and_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = project(tmp_path, "lab")
    with FakeEngine(EngineBehaviour(model=MODEL, metrics="plain")) as engine:
        code = main(
            ["bench", "--stack", "lab", "--project-dir", str(directory), "--url", engine.url,
             "--requests", "2", "--out", str(tmp_path / "out")]
        )  # fmt: skip
        assert {body["model"] for _, body in engine.received} == {MODEL}
    assert code == 0
    run = json.loads((tmp_path / "out" / "bench.json").read_text())
    assert (run["model"], run["engine"]) == (MODEL, "sglang")
    assert port_forward_command("default", "hp-lab") in capsys.readouterr().out


def test_stack_unreachable_names_the_port_forward(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    directory = project(tmp_path, "lab")
    code = main(["bench", "--stack", "lab", "--project-dir", str(directory), "--url", url,
                 "--out", str(tmp_path / "out")])  # fmt: skip
    assert code == 1
    assert capsys.readouterr().err == (
        f"mlcc bench: error: cannot reach {url}: connection refused "
        f"(is `{port_forward_command('default', 'hp-lab', port)}` running?)\n"
    )


def test_missing_stack_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = project(tmp_path, "lab")
    code = main(["bench", "--stack", "nope", "--project-dir", str(directory), "--out", "o"])
    assert code == 2
    assert capsys.readouterr().err.count("\n") == 1
