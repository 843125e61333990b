"""What the parts of `mlcc.deploy.kubeconfig` share: its one error, its limits (docs/deploy.md,
"Limits") and how a value of the wrong type is shown. Imports nothing of `kubernetes`."""

from __future__ import annotations

KUBECONFIG_MAX_BYTES = 16 * 1024 * 1024  # a kubeconfig with many clusters and embedded certs
CREDENTIAL_FILE_MAX_BYTES = 1024 * 1024  # a certificate, a key or a token file
EXEC_PLUGIN_TIMEOUT_S = 30.0
EXEC_STDOUT_MAX_BYTES = 1024 * 1024  # an ExecCredential is a few KiB at most
EXEC_STDERR_KEEP_BYTES = 64 * 1024  # the end of the plugin's stderr, where the reason is


class AccessError(Exception):
    """The kubeconfig cannot give a working client; the message is one line."""


def what(value: object) -> str:
    """A value of the wrong type, for `X is <what>, not text` lines."""
    if value is None:
        return "null"
    if isinstance(value, (dict, list)):
        return f"a {'map' if isinstance(value, dict) else 'list'}"
    if isinstance(value, str):
        return f"text ({value[:40]!r}{'...' if len(value) > 40 else ''})"
    shown = repr(value) if not isinstance(value, int) or abs(value) < 10**40 else "a long number"
    return f"{type(value).__name__} ({shown[:40]}{'...' if len(shown) > 40 else ''})"
