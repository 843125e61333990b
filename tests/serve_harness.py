"""Shared helpers for the serve-wrapper tests: load images/serve/serve.py and run it.

`run_serve` calls the wrapper's `main` in-process (fast, exact); `run_serve_process` starts it
as the image does, for the few tests about the real exec path.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

# The speculative variables the wrapper tests set and expect.
SPEC = "SM_VLLM_SPECULATIVE_CONFIG"
ALGO = "SM_SGLANG_SPECULATIVE_ALGORITHM"
DRAFT = "SM_SGLANG_SPECULATIVE_DRAFT_MODEL_PATH"
STEPS = "SM_SGLANG_SPECULATIVE_NUM_STEPS"
TOPK = "SM_SGLANG_SPECULATIVE_EAGLE_TOPK"
DRAFT_TOKENS = "SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS"

REPO = Path(__file__).resolve().parents[1]
SERVE_PY = REPO / "images" / "serve" / "serve.py"
IMAGES = REPO / "images"


def load_serve() -> ModuleType:
    """serve.py imported as a module (it is a script in the image, not part of a package)."""
    spec = importlib.util.spec_from_file_location("mlcc_serve_wrapper", SERVE_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


serve = load_serve()


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str


def container_env(engine: str | None, env: dict[str, str], *, dry_run: bool) -> dict[str, str]:
    full_env = {}
    if engine is not None:
        full_env["MLCC_ENGINE"] = engine
    if dry_run:
        full_env["MLCC_DRY_RUN"] = "1"
    return full_env | env


def run_serve(
    engine: str | None,
    env: dict[str, str],
    args: tuple[str, ...] | list[str] = (),
) -> Result:
    """The wrapper's main() in-process in dry-run mode, with exactly this environment."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = serve.main(list(args), container_env(engine, env, dry_run=True))
    return Result(code, stdout.getvalue(), stderr.getvalue())


def run_serve_process(
    engine: str | None,
    env: dict[str, str],
    args: tuple[str, ...] | list[str] = (),
    *,
    dry_run: bool = True,
    path: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the wrapper as a process in a clean environment: `env`, MLCC_* and PATH only."""
    full_env = {"PATH": path if path is not None else os.environ.get("PATH", "/usr/bin:/bin")}
    full_env |= container_env(engine, env, dry_run=dry_run)
    return subprocess.run(
        [sys.executable, str(SERVE_PY), *args],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def dry_run_argv(
    engine: str, env: dict[str, str], args: tuple[str, ...] | list[str] = ()
) -> list[str]:
    """The engine argv the wrapper prints in dry-run mode; fails the test on a refusal."""
    result = run_serve(engine, env, args)
    assert result.returncode == 0, result.stderr
    argv = json.loads(result.stdout)
    assert isinstance(argv, list)
    assert all(isinstance(token, str) for token in argv)
    return argv
