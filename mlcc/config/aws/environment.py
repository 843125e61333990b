"""What botocore makes of the environment before any call: where the profile came from, and
the AWS_* setting it cannot convert. Each becomes one "not checked" line naming what to fix."""

from __future__ import annotations

import os

from mlcc.engine_contract.values import printable


class SetupProblem(Exception):
    """botocore cannot make a client from the environment or the AWS config file."""


def setup_problem(error: Exception) -> str:
    """botocore converts the AWS_* settings when it makes a client (botocore/configprovider.py,
    `_convert_type`): name the variable holding the text it refused, when one does."""
    said = str(error)
    for name, value in sorted(os.environ.items()):
        if name.startswith("AWS_") and value and repr(value) in said:
            return f"{name}={_shown(value)} is not a value botocore accepts: fix or unset it"
    return f"botocore cannot use this environment or AWS config file: {_shown(said, quoted=False)}"


def profile_source(profile: str) -> str:
    """Where the profile came from: the stack's aws:profile, else botocore's variables."""
    if profile:
        return f"aws:profile {_shown(profile)}"
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        if os.environ.get(name):
            return f"{name}={_shown(os.environ[name])}"
    return "the default AWS profile"


def _shown(text: str, quoted: bool = True, most: int = 60) -> str:
    cut = text if len(text) <= most else text[:most] + "..."
    return repr(cut) if quoted else printable(cut)
