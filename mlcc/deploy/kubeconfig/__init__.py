"""A kubernetes client from a kubeconfig, as the deploy wait and `mlcc verify` use it, with no
answer of the kubeconfig, its files or its exec plugin ending in a hang, a traceback or memory
that keeps growing: each is one `AccessError` line (docs/deploy.md, "Limits").

- `sources`: the kubeconfig files (`--kubeconfig`, each path of KUBECONFIG, ~/.kube/config) read
  bounded, the entries the client will use from them, and the files those name, checked.
- `exec_plugin`: the exec plugin (`aws eks get-token`) run with a deadline and bounded output
  (mlcc/userfiles/process.py), its ExecCredential checked.
- `loader`: the client's own loader, with that plugin, at the first load and at token refresh.
- `client`: `api_client`, the one entry point. `kubernetes` is imported inside it.
"""

from __future__ import annotations

from .client import api_client
from .common import (
    CREDENTIAL_FILE_MAX_BYTES,
    EXEC_PLUGIN_TIMEOUT_S,
    EXEC_STDERR_KEEP_BYTES,
    EXEC_STDOUT_MAX_BYTES,
    KUBECONFIG_MAX_BYTES,
    AccessError,
)

__all__ = [
    "CREDENTIAL_FILE_MAX_BYTES",
    "EXEC_PLUGIN_TIMEOUT_S",
    "EXEC_STDERR_KEEP_BYTES",
    "EXEC_STDOUT_MAX_BYTES",
    "KUBECONFIG_MAX_BYTES",
    "AccessError",
    "api_client",
]
