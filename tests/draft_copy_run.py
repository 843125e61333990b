"""The s3:// head copy's script (mlcc/manifest/draft_copy.py) run for real, against a fake AWS
CLI on local files: what the init container `mlcc-draft-copy` writes and prints."""

from __future__ import annotations

import subprocess
import tempfile
from functools import cache
from pathlib import Path

from mlcc.manifest import draft_copy
from mlcc.serving import s3_draft

FAKE_AWS = """#!/bin/sh
# The AWS CLI as the copy calls it, on local files: `s3 sync` copies $FAKE_S3 (or nothing),
# `s3api head-object` answers as the CLI prints it with --query and --output json (indented,
# over several lines).
echo "$*" >> "$FAKE_LOG"
case "$1 $2" in
  "s3 sync") dest=$(eval echo \\${$#}); [ -z "$FAKE_S3" ] || cp -R "$FAKE_S3"/. "$dest" ;;
  "s3api head-object") printf '{\\n    "ETag": "\\\\"0123abcd\\\\"",\\n    "VersionId": null,\\n'
                       printf '    "LastModified": "2026-12-06T12:00:00+00:00"\\n}\\n' ;;
  *) exit 2 ;;
esac
"""


def run_copy(
    tmp_path: Path, uri: str, with_head: bool = True
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The init container's script for the head at `uri`, run with the fake CLI on PATH: how
    it ended, and where it copied the head."""
    bin_dir, source, dest = tmp_path / "bin", tmp_path / "bucket", tmp_path / "model"
    bin_dir.mkdir()
    (bin_dir / "aws").write_text(FAKE_AWS)
    (bin_dir / "aws").chmod(0o755)
    source.mkdir()
    (source / "config.json").write_text('{"speculators_model_type": "eagle3"}')
    (source / "model.safetensors").write_bytes(b"\0" * 64)
    draft = s3_draft.parse(uri)
    assert draft is not None
    target = dest / "mlcc-draft"
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "FAKE_S3": str(source) if with_head else "",
        "FAKE_LOG": str(tmp_path / "calls.log"),
    }
    script = draft_copy.copy_script(draft, str(target))
    done = subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, check=False, timeout=30
    )
    return done, target


@cache
def copy_log(uri: str) -> str:
    """What the copy of the head at `uri` prints: its container log."""
    with tempfile.TemporaryDirectory(prefix="mlcc-copy-") as folder:
        done, _ = run_copy(Path(folder), uri)
    assert done.returncode == 0, done.stderr
    return done.stdout
