"""Shared helpers for the serve-wrapper tests: load images/serve/serve.py and run it."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

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


def run_serve(
    engine: str | None,
    env: dict[str, str],
    args: tuple[str, ...] | list[str] = (),
    *,
    dry_run: bool = True,
    path: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the wrapper in a clean environment: only `env`, MLCC_ENGINE/MLCC_DRY_RUN and PATH."""
    full_env = {"PATH": path if path is not None else os.environ.get("PATH", "/usr/bin:/bin")}
    if engine is not None:
        full_env["MLCC_ENGINE"] = engine
    if dry_run:
        full_env["MLCC_DRY_RUN"] = "1"
    full_env.update(env)
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
