"""promtool (Debian's `prometheus` package) for the rule tests: absent, a test fails saying so."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

INSTALL = "install Debian's prometheus package (`apt-get install -y prometheus`; .ci/run does)"


def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        pytest.fail(f"promtool is not on PATH: {INSTALL}")
    return path


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [promtool(), *map(str, args)], capture_output=True, text=True, timeout=120, check=False
    )


def check_rules(path: Path) -> None:
    result = run("check", "rules", path)
    assert result.returncode == 0, result.stdout + result.stderr


def recording_rules(expressions: list[str]) -> dict[str, Any]:
    """Each expression as a recording rule, so `promtool check rules` parses it as PromQL."""
    rules = [{"record": f"mlcc:expression_{i}", "expr": e} for i, e in enumerate(expressions)]
    return {"groups": [{"name": "expressions", "rules": rules}]}


def write_yaml(path: Path, document: Any) -> Path:
    path.write_text(yaml.safe_dump(document, sort_keys=False, width=1000))
    return path


def run_rule_tests(tmp_path: Path, rule_text: str, tests: list[dict[str, Any]]) -> str:
    """`promtool test rules` of `tests` (its unit-test format) against the rule file."""
    rules = tmp_path / "rules.yaml"
    rules.write_text(rule_text)
    document = {"rule_files": [rules.name], "evaluation_interval": "1m", "tests": tests}
    suite = write_yaml(tmp_path / "tests.yaml", document)
    result = run("test", "rules", suite)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout
