"""An AWS profile's `credential_process`, run with a deadline and an output cap.

botocore runs the command the profile names (`credential_process` in the AWS config file) with
`subprocess.Popen(...).communicate()`: no deadline, its whole output in memory. A command that
hangs held preflight until the part's deadline, which then said AWS gave "no answer" when no
request was sent; one that prints without end grew the process's memory. So the session's
process provider (botocore's `ProcessProvider`, its `_popen`, a parameter of its constructor)
runs the command through mlcc/userfiles/process.py instead: at most TIMEOUT_S (and half the
part's deadline), at most
STDOUT_MAX_BYTES of output, its process group stopped after; what it printed must be the
credentials botocore reads (JSON with Version 1, AccessKeyId and SecretAccessKey). Any other
end is one `CredentialProcessProblem` line naming the setting (the profile's
`credential_process`, in which config file), never blamed on AWS.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from mlcc.config.aws.environment import SetupProblem, profile_source
from mlcc.engine_contract.values import printable
from mlcc.userfiles.process import Stopped, run_bounded

TIMEOUT_S = 5.0  # an SSO or vault helper answers in about a second; below the part's deadline
STDOUT_MAX_BYTES = 64 * 1024  # credentials with a session token take about 2 KB
STDERR_KEEP_BYTES = 2048
METHOD = "custom-process"  # botocore's ProcessProvider.METHOD


class CredentialProcessProblem(SetupProblem):
    """The profile's credential_process gave no credentials; no request was sent to AWS."""


def bound(session: Any, profile: str, deadline_s: float) -> None:
    """The boto3 session's credential_process, if its profile has one, run bounded: at most
    TIMEOUT_S, and half the part's deadline (the rest is for the calls, and for this line to
    be said before the part's own "no answer")."""
    timeout_s = max(min(TIMEOUT_S, deadline_s / 2), 0.1)
    resolver = session._session.get_component("credential_provider")
    for provider in getattr(resolver, "providers", []):
        if getattr(provider, "METHOD", "") == METHOD and hasattr(provider, "_popen"):
            provider._popen = _Popen(_setting(profile), timeout_s)


def _setting(profile: str) -> str:
    where = os.environ.get("AWS_CONFIG_FILE") or "~/.aws/config"
    return f"the credential_process of {profile_source(profile)} (in {where})"


class _Popen:
    """What botocore calls as `subprocess.Popen(argv, stdout=PIPE, stderr=PIPE)`."""

    def __init__(self, setting: str, timeout_s: float) -> None:
        self.setting, self.timeout_s = setting, timeout_s

    def __call__(self, argv: Sequence[str], **_: Any) -> _Run:
        return _Run(list(argv), self.setting, self.timeout_s)


class _Run:
    def __init__(self, argv: list[str], setting: str, timeout_s: float) -> None:
        self.argv, self.setting, self.timeout_s, self.returncode = argv, setting, timeout_s, 0

    def communicate(self) -> tuple[bytes, bytes]:
        try:
            finished = run_bounded(
                self.argv,
                env=os.environ,
                cwd=None,
                timeout_s=self.timeout_s,
                stdout_max=STDOUT_MAX_BYTES,
                stderr_keep=STDERR_KEEP_BYTES,
            )
        except Stopped as stopped:
            raise self.problem(_stopped(stopped.why, self.timeout_s)) from None
        except OSError as error:
            raise self.problem(f"cannot be started ({error.strerror or error})") from None
        if finished.code != 0:
            tail = _last_line(finished.stderr_tail)
            raise self.problem(f"exited with code {finished.code}" + (f": {tail}" if tail else ""))
        if not _credentials(finished.stdout):
            raise self.problem(
                "printed no credentials (JSON with Version 1, AccessKeyId and SecretAccessKey)"
            )
        return finished.stdout, finished.stderr_tail

    def problem(self, what: str) -> CredentialProcessProblem:
        return CredentialProcessProblem(
            f"{self.setting} {what}; no request was sent to AWS: fix the command or the profile"
        )


def _stopped(why: str, timeout_s: float) -> str:
    if why == "deadline":
        return f"did not finish within {timeout_s:g} s (stopped)"
    return f"printed more than {STDOUT_MAX_BYTES >> 10} KiB (stopped)"


def _credentials(stdout: bytes) -> bool:
    try:
        parsed = json.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return (
        isinstance(parsed, dict)
        and parsed.get("Version") == 1
        and all(isinstance(parsed.get(k), str) for k in ("AccessKeyId", "SecretAccessKey"))
    )


def _last_line(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    last = printable(lines[-1]) if lines else ""
    return last if len(last) <= 160 else last[:157] + "..."
