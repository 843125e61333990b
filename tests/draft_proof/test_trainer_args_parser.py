"""hp:draftTraining's trainer arguments against the pinned speculators release's own parser,
in the proof's interpreter (issue #45: "validated against the pinned release's parser, with
full flag names"). The vendored table (mlcc/facts/speculators_train.json) must be what the
release's parser declares, and every argv the program renders must pass the release's own
`speculators train --dump-config` (scripts/speculators_parse_check.py)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from proof_run import proof_python

from mlcc.facts import speculators_train

pytestmark = pytest.mark.draft_proof

REPO = Path(__file__).resolve().parents[2]


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_vendored_table_is_what_the_release_parser_declares() -> None:
    probe = _script("speculators_train_flags")._PROBE
    result = subprocess.run(
        [proof_python(), "-c", probe], capture_output=True, text=True, timeout=600, check=True
    )
    found = json.loads(result.stdout)
    table = json.loads((REPO / "mlcc" / "facts" / "speculators_train.json").read_text())
    release = table["releases"][found["version"]]
    assert found["version"] == speculators_train.PINNED_VERSION
    assert found["allow_abbrev"] == release["allow_abbrev"] is True
    # json round trip: the table stores what json.dumps(default=str) wrote
    declared = json.loads(json.dumps(found["options"], default=str))
    assert sorted(declared, key=lambda row: row["flag"]) == release["options"]


def test_every_rendered_trainer_argv_passes_the_release_parser() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "speculators_parse_check.py"), proof_python()],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    lines = result.stdout.splitlines()
    assert result.returncode == 0, result.stdout + result.stderr
    assert [line for line in lines if line.startswith("ok: ")] == [
        "ok: offline, defaults",
        "ok: online",
        "ok: trainerArgs",
    ]
    # Why mlcc's table, not the parser, decides: the parser takes an abbreviation.
    assert "abbreviation --epoch for --epochs: accepted by the parser" in lines
