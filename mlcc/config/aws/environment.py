"""What botocore makes of the environment before any call: where the profile came from, and
the AWS_* setting it cannot convert. Each becomes one "not checked" line naming what to fix."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from mlcc.engine_contract.values import printable
from mlcc.userfiles.numbers import shown


class SetupProblem(Exception):
    """botocore cannot make a client from the environment or the AWS config file."""


def _setup_problem(error: Exception) -> str:
    """botocore converts the AWS_* settings when it makes a client (botocore/configprovider.py,
    `_convert_type`) and parses the endpoint URLs: name the variable holding the text it
    refused, when one does."""
    said = str(error)
    for name, value in sorted(os.environ.items()):
        if name.startswith("AWS_") and value and (repr(value) in said or _bad_url(name, value)):
            return f"{name}={shown(value, 60)} is not a value botocore accepts: fix or unset it"
    return f"botocore cannot use this environment or AWS config file: {_cut(said)}"


def setup_failure(error: Exception, profile: str = "") -> str:
    """One line for an error botocore raised while making a session or a client."""
    from botocore.exceptions import ProfileNotFound

    if isinstance(error, ProfileNotFound):
        return f"{profile_source(profile)}: {error}"
    if isinstance(error, ValueError | TypeError):
        return _setup_problem(error)
    return _cut(" ".join(str(error).split()), 200)


def _bad_url(name: str, value: str) -> bool:
    if not name.startswith("AWS_ENDPOINT_URL"):
        return False
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - parsing the port is what raises
    except ValueError:
        return True
    return not (parts.scheme and parts.hostname)


def profile_source(profile: str) -> str:
    """Where the profile came from: the stack's aws:profile, else botocore's variables."""
    if profile:
        return f"aws:profile {shown(profile, 60)}"
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        if os.environ.get(name):
            return f"{name}={shown(os.environ[name], 60)}"
    return "the default AWS profile"


def _cut(text: str, most: int = 60) -> str:
    return printable(text if len(text) <= most else text[:most] + "...")
