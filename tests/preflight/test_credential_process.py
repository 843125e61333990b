"""An AWS profile's credential_process (issue #43, item 8) that hangs, prints without end,
prints no credentials or fails: one "not checked" line naming the setting, within its own
deadline, with no request sent to AWS, never "no answer" blamed on AWS. A command that prints
credentials is run as botocore runs it, and the calls are signed with them."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from local_aws import LocalAWS
from test_hostile_aws import aws, checked, not_checked

from mlcc.preflight.bounded import credential_process

__all__ = ["aws"]  # the fixture, used by name
CREDENTIALS = {"Version": 1, "AccessKeyId": "AKIDPROCESS", "SecretAccessKey": "secret"}


@pytest.fixture
def profile(
    aws: LocalAWS, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[LocalAWS, Path]]:
    """The default profile gets its credentials from a credential_process (none in the
    environment); the command's own deadline is cut to 1 s."""
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setattr(credential_process, "TIMEOUT_S", 1.0)
    config = tmp_path / "aws-config"
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    yield aws, config


def command(config: Path, code: str) -> None:
    line = shlex.join([sys.executable, "-c", code])
    config.write_text(f"[default]\nregion = us-east-1\ncredential_process = {line}\n")


@pytest.mark.parametrize(
    ("code", "says"),
    [
        ("import time; time.sleep(120)", "did not finish within 1 s (stopped)"),
        (
            "import itertools, sys; [sys.stdout.write('x' * 65536) for _ in itertools.count()]",
            "printed more than 64 KiB",
        ),
        ("print('not json')", "printed no credentials (JSON with Version 1"),
        ("print(1.0e5)", "printed no credentials"),
        ("import sys; sys.stderr.write('no session: run aws sso login'); sys.exit(3)", "code 3"),
    ],
    ids=["hangs", "prints without end", "garbled", "a number", "fails"],
)
def test_a_credential_process_that_gives_no_credentials_is_named(
    profile: tuple[LocalAWS, Path], code: str, says: str
) -> None:
    aws, config = profile
    command(config, code)
    lines = not_checked(checked())
    assert lines, "nothing said"
    setting = f"the credential_process of the default AWS profile (in {config})"
    for line in lines:
        assert setting in line and says in line, line
        assert "no request was sent to AWS" in line and "no answer" not in line
    assert aws.calls == []


def test_a_credential_process_that_prints_credentials_signs_the_calls(
    profile: tuple[LocalAWS, Path],
) -> None:
    aws, config = profile
    command(config, f"print({json.dumps(json.dumps(CREDENTIALS))})")
    outcome = checked()
    assert not_checked(outcome) == [] and outcome.errors == ()
    assert aws.calls
