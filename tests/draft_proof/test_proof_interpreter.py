"""The offline proof's interpreter, as `make test` can check it without building it: every package
pinned exactly, the pins the proof relies on, and one line naming `make draft-proof` when the
interpreter is missing or holds other versions (never a skip)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from proof_run import REQUIREMENTS, VLLM_VERSION, proof_python

from mlcc import engine_contract as contract

REPO = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[a-z,]+\])?==[A-Za-z0-9.+!-]+$")


def pins() -> dict[str, str]:
    lines = [line for line in REQUIREMENTS.read_text().splitlines() if not line.startswith("#")]
    assert all(PIN.match(line) for line in lines), [line for line in lines if not PIN.match(line)]
    names = [line.split("==")[0].lower() for line in lines]
    assert len(names) == len(set(names)), "a package is pinned twice"
    return dict(line.lower().split("==", 1) for line in lines)


def test_every_package_is_pinned_exactly_once() -> None:
    assert len(pins()) > 100  # the whole closure: installed with --no-deps


def test_the_pins_are_the_releases_the_proof_is_about() -> None:
    found = pins()
    assert found["speculators"] == "0.9.0"
    assert found["vllm"] == VLLM_VERSION
    assert VLLM_VERSION in contract.RELEASE_TABLES["vllm"]  # a release the program supports
    # speculators 0.9.0: torch<=2.14.1, transformers<=5.19.0; vLLM 0.34.0: torch==2.14.0,
    # transformers>=5.16.1,<5.23.0 (their wheels' metadata)
    assert (found["torch"], found["transformers"]) == ("2.14.0", "5.19.0")
    cuda_only = {"flashinfer-python", "quack-kernels", "nvidia-cutlass-dsl", "humming-kernels"}
    assert cuda_only.isdisjoint(found)


def test_a_missing_interpreter_fails_in_one_line_naming_make_draft_proof(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MLCC_DRAFT_PROOF_PYTHON", str(tmp_path / "no-venv" / "bin" / "python"))
    with pytest.raises(pytest.fail.Exception) as failed:
        proof_python()
    message = str(failed.value)
    assert "\n" not in message
    assert message.endswith(
        "run `make draft-proof` (it creates the proof's interpreter and runs these tests)"
    )


def test_the_cache_is_where_the_interpreter_is_looked_for(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("MLCC_DRAFT_PROOF_PYTHON", raising=False)
    monkeypatch.setenv("MLCC_DRAFT_PROOF_CACHE", str(tmp_path))
    with pytest.raises(pytest.fail.Exception) as failed:
        proof_python()
    assert f"{tmp_path}/venv/bin/python does not exist" in str(failed.value)


def test_an_interpreter_without_the_pins_fails_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MLCC_DRAFT_PROOF_PYTHON", sys.executable)  # the project's: no vLLM
    with pytest.raises(pytest.fail.Exception) as failed:
        proof_python()
    message = str(failed.value)
    assert "\n" not in message
    assert f"where requirements.txt pins ['0.9.0', '{VLLM_VERSION}'," in message
    assert "make draft-proof" in message


def test_the_env_script_passes_shellcheck() -> None:
    shellcheck = shutil.which("shellcheck") or str(Path(sys.executable).parent / "shellcheck")
    script = REPO / "scripts" / "draft_proof_env.sh"
    result = subprocess.run(
        [shellcheck, str(script)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stdout
