"""The offline proof's steps, run in the proof interpreter (`make draft-proof` builds it), and the
program's side of the checks (preflight, the rendered env, the serve wrapper's dry run), run in
the project's own interpreter as `mlcc plan` and the image would run them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from engine_parse_check import rendered_env
from fake_hub import FakeHub
from serve_harness import dry_run_argv

from mlcc import engine_contract as contract
from mlcc.config import stack as config
from mlcc.preflight.models import models_part
from mlcc.preflight.outcome import Mode, Outcome, settle

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "requirements.txt"
TARGET_REPO = "proof/tiny-llama"  # the Hub id the stack names; the fake Hub serves the target
VLLM_VERSION = "0.34.0"  # the release in requirements.txt
LAYER_IDS = (1, 2, 3)  # the target's 4 layers: the inputs of layers 1, 2 and 3
TOKENS = 3  # speculators' eagle3 default (speculative_tokens in the head's config)
STEP_SECONDS = 600  # one step's bound: a hung step fails the test, never the CI budget
MAKE = "run `make draft-proof` (it creates the proof's interpreter and runs these tests)"


def proof_python() -> str:
    """The proof interpreter: $MLCC_DRAFT_PROOF_PYTHON (make draft-proof sets it), else the venv
    in $MLCC_DRAFT_PROOF_CACHE (default ~/.cache/mlcc-draft-proof). Missing or built from other
    pins: the test fails with one line saying what to run."""
    cache = Path(os.environ.get("MLCC_DRAFT_PROOF_CACHE", "~/.cache/mlcc-draft-proof"))
    python = os.environ.get("MLCC_DRAFT_PROOF_PYTHON") or str(
        cache.expanduser() / "venv" / "bin" / "python"
    )
    if not Path(python).is_file():
        pytest.fail(f"the proof interpreter {python} does not exist: {MAKE}", pytrace=False)
    probe = (
        "from importlib.metadata import version as v; "
        "print(v('speculators'), v('vllm'), v('torch'), v('transformers'))"
    )
    found = subprocess.run(
        [python, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    ).stdout.split()
    pinned = _pins("speculators", "vllm", "torch", "transformers")
    if found != pinned:
        pytest.fail(
            f"{python} has {found or 'nothing'} where requirements.txt pins {pinned}: {MAKE}",
            pytrace=False,
        )
    return python


def _pins(*names: str) -> list[str]:
    lines = REQUIREMENTS.read_text().splitlines()
    pins = dict(line.split("==", 1) for line in lines if "==" in line and line[0] != "#")
    return [pins[name] for name in names]


@dataclass(frozen=True)
class Step:
    """One finished step: its output (the logs of speculators and vLLM go to stderr)."""

    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        """Both streams: speculators logs through rich to stdout, the shim and vLLM to stderr."""
        return self.stdout + self.stderr


def run(
    python: str, argv: list[str], cwd: Path, stdin: str | None = None, *, fails: bool = False
) -> Step:
    """`python argv...` in the proof interpreter, offline (HF_HUB_OFFLINE: nothing may be
    downloaded), on the CPU; a failure fails the test with the step's last lines (with `fails`,
    the step must fail instead)."""
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(cwd / "hf-home"),
        "VLLM_TARGET_DEVICE": "cpu",
        "CUDA_VISIBLE_DEVICES": "",
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONWARNINGS": "ignore",
    }
    env.pop("PYTHONPATH", None)
    result = subprocess.run(
        [python, *argv],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=STEP_SECONDS,
        check=False,
    )
    if fails:
        assert result.returncode != 0, f"{' '.join(argv[:2])} succeeded"
    elif result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-30:])
        pytest.fail(f"{' '.join(argv[:2])} exited {result.returncode}:\n{tail}", pytrace=False)
    return Step(result.stdout, result.stderr)


def speculators_cli(python: str) -> str:
    """The `speculators` console script beside the interpreter."""
    return str(Path(python).parent / "speculators")


def stack(head: Path) -> config.Parsed:
    """A one-endpoint vLLM stack serving the tiny target with `head` as its eagle3 draft (a local
    path, as the serve pod has it), one GPU so the engine runs unsharded."""
    values = {
        "aws:region": "us-east-1",
        "aws-native:region": "us-east-1",
        "hp:clusterName": "existing",
        "hp:instanceType": "ml.g5.xlarge",
        "hp:engineVersion": VLLM_VERSION,
        "hp:model": TARGET_REPO,
        "hp:speculativeAlgorithm": "eagle3",
        "hp:speculativeModel": str(head),
        "hp:speculativeNumTokens": str(TOKENS),
    }
    return config.parse(values, stack="proof")


@contextmanager
def hub_serving(target: Path, cache: Path) -> Iterator[FakeHub]:
    """The target on the fake Hub (127.0.0.1) under TARGET_REPO, reached through HF_ENDPOINT as
    users redirect huggingface_hub, with a fresh cache."""
    saved = {k: os.environ.get(k) for k in ("HF_ENDPOINT", "HF_HUB_CACHE", "HF_HUB_OFFLINE")}
    with FakeHub() as hub:
        hub.repos[TARGET_REPO] = {p.name: p.read_bytes() for p in target.iterdir() if p.is_file()}
        os.environ |= {"HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(cache)}
        os.environ.pop("HF_HUB_OFFLINE", None)
        try:
            yield hub
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def preflight(target: Path, head: Path, cache: Path) -> tuple[list[str], list[str], Outcome]:
    """The models part of preflight (`mlcc plan --preflight`) on the stack: errors, warnings."""
    with hub_serving(target, cache):
        outcome = models_part(stack(head).config, 30)
    errors, warnings = settle(outcome, Mode.STRICT)
    return [str(e) for e in errors], [str(w) for w in warnings], outcome


def wrapper_argv(head: Path) -> list[str]:
    """The engine argv of the stack's endpoint: the container env the program renders, turned
    into argv by the serve wrapper's dry run as the image of that release runs it."""
    env = rendered_env(stack(head).config)
    env[contract.ENGINE_VERSION_ENV] = VLLM_VERSION
    return dry_run_argv("vllm", env)


def vllm_checks(
    python: str, cases: list[tuple[list[str], Path]], cwd: Path
) -> list[dict[str, object]]:
    """vllm_check.py on each (argv, target directory): what vLLM made of the draft, in order."""
    stdin = json.dumps([{"argv": argv, "target": str(target)} for argv, target in cases])
    step = run(python, [str(HERE / "vllm_check.py")], cwd, stdin)
    lines = [json.loads(line) for line in step.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == len(cases), step.stderr[-3000:]
    return lines


def head_config(head: Path) -> dict[str, object]:
    loaded = json.loads((head / "config.json").read_text())
    assert isinstance(loaded, dict)
    return loaded


if __name__ == "__main__":  # the interpreter the tests would use, for a person to check
    print(proof_python(), file=sys.stderr)
