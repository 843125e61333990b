"""The kubernetes client's own kubeconfig loader, with the exec plugin run bounded.

`BoundedLoader` is the client's KubeConfigLoader (kubernetes/config/kube_config.py) with one
method replaced, `_load_from_exec_plugin`, which the loader calls at the first load and again at
each token refresh (its `refresh_api_key_hook`, before a request, once the credential's
`expirationTimestamp` is near). The client's version runs its ExecProvider, whose run has no
timeout and no output limit (kubernetes/config/exec_provider.py), and logs and swallows every
failure: the client then goes on without credentials, or at a refresh with the expired token,
and the API server's 401 blames the credentials. Here the plugin is `BoundedExecProvider`
(exec_plugin.py) and its failure is raised: one AccessError line naming the plugin, from
`api_client` at the first load, from the request (mlcc.deploy.cluster) at a refresh.

The files are merged by the client's KubeConfigMerger, handed each path `sources.read_sources`
has read and checked (the merger would split one path at os.pathsep, and its default,
KUBE_CONFIG_DEFAULT_LOCATION, is KUBECONFIG as it was when the client was imported).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubernetes.config.dateutil import parse_rfc3339
from kubernetes.config.kube_config import FileOrData, KubeConfigLoader, KubeConfigMerger

from .exec_plugin import BoundedExecProvider
from .sources import Source


class BoundedLoader(KubeConfigLoader):
    def __init__(self, config: Any, context: str | None, exec_timeout_s: float) -> None:
        self.exec_timeout_s = exec_timeout_s
        super().__init__(  # type: ignore[no-untyped-call]
            config_dict=config, active_context=context, config_base_path=None
        )

    def _load_from_exec_plugin(self) -> bool | None:
        """As KubeConfigLoader._load_from_exec_plugin, but bounded and raising (see above)."""
        user: Any = self._user
        cluster: Any = self._cluster
        if "exec" not in user:
            return None
        base_path = self._get_base_path(cluster.path)  # type: ignore[no-untyped-call]
        provider = BoundedExecProvider(user["exec"], base_path, cluster, self.exec_timeout_s)
        status = provider.run()  # its fields checked: exec_plugin.checked_status
        if "token" in status:
            self.token = f"Bearer {status['token']}"
        else:  # a client certificate, written to temporary files as the client writes them
            self.cert_file = self._as_file(status, "clientCertificateData", base_path)
            self.key_file = self._as_file(status, "clientKeyData", base_path)
        if "expirationTimestamp" in status:
            self.expiry = parse_rfc3339(status["expirationTimestamp"])  # type: ignore[no-untyped-call]
        return True

    def _as_file(self, status: Mapping[str, Any], key: str, base_path: str) -> Any:
        data: Any = FileOrData(  # type: ignore[no-untyped-call]
            status,
            None,
            data_key_name=key,
            file_base_path=base_path,
            base64_file_content=False,
            temp_file_path=self._temp_file_path,
        )
        return data.as_file()


def load(
    sources: Sequence[Source], context: str | None, exec_timeout_s: float, configuration: Any
) -> None:
    """Configure `configuration` from the kubeconfig(s), as `load_kube_config` does."""
    first = sources[0]
    config: Any
    if first.path is None:  # given as a map: no file to resolve relative paths against
        config = dict(first.config)
    else:
        merger: Any = KubeConfigMerger("")  # type: ignore[no-untyped-call]
        for source in sources:  # an empty list of paths above: each is read here, in order
            merger.load_config(str(source.path))
        config = merger.config
    loader: Any = BoundedLoader(config, context, exec_timeout_s)
    loader.load_and_set(configuration)
