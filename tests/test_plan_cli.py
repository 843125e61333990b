"""`mlcc plan`: the real program evaluated offline, through the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from crd_schema import assert_valid_manifest
from env_contract import DRAFT, ENGINE_SETTINGS, SPECULATIVE_ENV
from program_runs import IMAGE, REPO

from mlcc.cli import main


def plan(tmp_path: Path, *sets: str, monkeypatch: pytest.MonkeyPatch, stack: str = "dev") -> int:
    monkeypatch.chdir(REPO)
    argv = ["plan", "--stack", stack, "--out", str(tmp_path), "--set", f"hp:image={IMAGE}"]
    for assignment in sets:
        argv += ["--set", assignment]
    return main(argv)


def cr_manifest(out: Path) -> dict[str, Any]:
    (path,) = (out / "manifests").glob("*-inferenceendpointconfig-*.yaml")
    manifest: dict[str, Any] = yaml.safe_load(path.read_text())
    return manifest


def test_the_written_manifest_is_a_valid_cr_with_the_contract_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The algorithm x engine matrix runs through InferenceEndpoint (test_endpoint_component);
    this is one case of it through the whole program and the written manifest file."""
    sets = ["engine=sglang", "speculativeAlgorithm=eagle2"]  # hp:maxModelLen follows the engine
    assert plan(tmp_path, *sets, f"speculativeModel={DRAFT}", monkeypatch=monkeypatch) == 0
    manifest = cr_manifest(tmp_path)
    assert_valid_manifest(manifest, "inferenceendpointconfigs.yaml")
    env = {e["name"]: e["value"] for e in manifest["spec"]["worker"]["environmentVariables"]}
    assert env == {
        "HP_SPECULATIVE_ALGORITHM": "eagle2",
        **SPECULATIVE_ENV["eagle2"],
        **ENGINE_SETTINGS["sglang"],
    }


def test_speculation_off_renders_no_speculative_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        plan(tmp_path, "speculativeAlgorithm=", "speculativeModel=", monkeypatch=monkeypatch) == 0
    )
    env = cr_manifest(tmp_path)["spec"]["worker"]["environmentVariables"]
    assert not [e for e in env if "SPECULATIVE" in e["name"]]
    assert "speculative decoding (endpoint): off" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("sets", "key"),
    [
        (["speculativeAlgorithm=medusa"], "hp:speculativeAlgorithm"),
        (["speculativeModel="], "hp:speculativeModel"),
        (["speculativeModel=s3://bucket/eagle3"], "hp:speculativeModel"),
        (["speculativeModel=arn:aws:sagemaker:us-east-1:1:model/x"], "hp:speculativeModel"),
        (["speculativeNumTokens=0"], "hp:speculativeNumTokens"),
        (["speculativeNumTokens=-2"], "hp:speculativeNumTokens"),
        (["speculativeNumTokens=2.5"], "hp:speculativeNumTokens"),
        (["speculativeNumTokens=100000"], "hp:speculativeNumTokens"),
        (["speculativeAlgorithm=eagle2", "speculativeEagleTopk=0"], "hp:speculativeEagleTopk"),
        (["engine=tensorrt"], "hp:engine"),
        (["model=llama"], "hp:model"),
        (["instanceType=g5.12xlarge"], "hp:instanceType"),
        (["endpointName=Endpoint_1"], "hp:endpointName"),
        (
            [
                "engine=sglang",
                "engineVersion=0.5.2",
                "speculativeAlgorithm=ngram",
                "speculativeModel=",
            ],
            "hp:speculativeAlgorithm",
        ),
        (["model="], "hp:model"),
    ],
)
def test_bad_input_exits_1_naming_the_key(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    sets: list[str],
    key: str,
) -> None:
    assert plan(tmp_path, *sets, monkeypatch=monkeypatch) == 1
    err = capsys.readouterr().err
    assert f"error: {key}: " in err
    assert "nothing would be created" in err
    assert not (tmp_path / "plan.json").exists()


def test_warnings_do_not_fail_the_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = plan(
        tmp_path, "speculativeAlgorithm=ngram", "speculativeEagleTopk=4", monkeypatch=monkeypatch
    )
    assert code == 0
    err = capsys.readouterr().err
    assert "warning: hp:speculativeModel: ignored: ngram takes no draft model" in err
    assert "warning: hp:speculativeEagleTopk: ignored" in err


def project_copy(tmp_path: Path, stack: str, config: dict[str, Any]) -> Path:
    """A project folder that links to the repo's files but has its own stack file."""
    project = tmp_path / "project"
    project.mkdir()
    for entry in REPO.iterdir():
        if not entry.name.startswith("Pulumi.") or entry.name == "Pulumi.yaml":
            (project / entry.name).symlink_to(entry)
    (project / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": config}))
    return project


def test_plan_json_and_secrets_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stack_config = yaml.safe_load((REPO / "Pulumi.dev.yaml").read_text())["config"]
    stack_config["hp:hfToken"] = {"secure": "v1:ciphertextThatCannotBeDecrypted"}
    stack_config["hp:image"] = IMAGE
    project = project_copy(tmp_path, "secret", stack_config)
    monkeypatch.chdir(project)
    out = tmp_path / "out"
    assert main(["plan", "--stack", "secret", "--out", str(out)]) == 0
    document = json.loads((out / "plan.json").read_text())
    secret = next(r for r in document["resources"] if r["type"] == "kubernetes:core/v1:Secret")
    assert secret["inputs"]["stringData"] == "[secret]"
    assert secret["parent"] == "hp:index:EndpointNamespace::namespace"
    rendered = "".join(p.read_text() for p in (out / "manifests").glob("*.yaml"))
    assert "ciphertext" not in rendered and "ciphertext" not in json.dumps(document)
    assert "[secret]" in rendered


def test_usage_errors_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert plan(tmp_path, "no-equals-sign", monkeypatch=monkeypatch) == 2
    assert plan(tmp_path, monkeypatch=monkeypatch, stack="nosuchstack") == 2
    with pytest.raises(SystemExit) as raised:
        main(["plan", "--bogus"])
    assert raised.value.code == 2


def test_console_script_end_to_end(tmp_path: Path) -> None:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "mlcc",
            "plan",
            "--out",
            str(tmp_path),
            "--set",
            f"hp:image={IMAGE}",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert (
        "kubernetes:inference.sagemaker.aws.amazon.com/v1:InferenceEndpointConfig"
        in completed.stdout
    )
    assert '--speculative-config {"method":"eagle3"' in completed.stdout
    assert "--speculative-algorithm EAGLE3" in completed.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "mlcc", "plan", "--out", str(tmp_path), "--set", "engine=tgi"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 1 and "error: hp:engine: must be vllm or sglang" in bad.stderr
