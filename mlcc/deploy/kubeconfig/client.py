"""`api_client`: a kubernetes client from a kubeconfig, as the deploy wait and `mlcc verify`
use it. The `kubernetes` package is imported inside it, so callers start without it."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any

from mlcc.deploy.snapshot import one_line

from .common import EXEC_PLUGIN_TIMEOUT_S, AccessError
from .sources import (
    check_named_files,
    check_server,
    chosen,
    existing,
    listed_paths,
    read_sources,
    source_of_map,
)

# The loader reads only files already read here and runs the plugin with its own deadline: this
# bound is the last resort, should something of the client's still block.
LOADER_SLACK_S = 10.0


def api_client(
    kubeconfig: str | Mapping[str, Any] | None,
    context: str | None = None,
    exec_timeout_s: float = EXEC_PLUGIN_TIMEOUT_S,
) -> Any:
    """A configured `kubernetes.client.ApiClient`, or AccessError (one line).

    `kubeconfig` is a file path, the kubeconfig itself as a map (Pulumi's EKS component exports
    it as JSON), or None for the files of $KUBECONFIG (merged) or ~/.kube/config, or the pod's
    service account inside a cluster. `exec_timeout_s` bounds each run of its exec plugin, at
    this load and at each token refresh.
    """
    from kubernetes import client
    from kubernetes import config as kube_config

    configuration = client.Configuration()
    if kubeconfig is None and _in_cluster():
        kube_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        return _finish(client, configuration)
    if isinstance(kubeconfig, Mapping):
        sources = [source_of_map(kubeconfig)]
    else:
        sources = read_sources(kubeconfig)
    picked = chosen(sources, context)
    check_server(picked)
    check_named_files(picked)
    failure: list[BaseException] = []

    def load() -> None:
        from .loader import load as load_kubeconfig

        try:
            load_kubeconfig(sources, context, exec_timeout_s, configuration)
        except BaseException as error:  # reported by the caller's thread
            failure.append(error)

    loader = threading.Thread(target=load, daemon=True, name="kubeconfig-loader")
    loader.start()
    limit = exec_timeout_s + LOADER_SLACK_S
    loader.join(limit)
    if loader.is_alive():
        raise AccessError(f"loading the kubeconfig did not finish within {limit:g} s")
    if failure:
        error = failure[0]
        if isinstance(error, AccessError):
            raise AccessError(str(error)) from None
        text = " ".join(str(error).split())
        if type(error).__name__ != "ConfigException":  # the client's own words are enough
            text = f"{type(error).__name__}: {text}" if text else type(error).__name__
        raise AccessError(one_line(f"the kubernetes client cannot use it: {text}")) from None
    return _finish(client, configuration)


def _finish(client: Any, configuration: Any) -> Any:
    configuration.retries = False  # one attempt per request: the wait loop decides on retries
    return client.ApiClient(configuration)


def _in_cluster() -> bool:
    return "KUBERNETES_SERVICE_HOST" in os.environ and not existing(listed_paths(None))
