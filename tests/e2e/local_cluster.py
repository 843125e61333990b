"""A real, local Kubernetes control plane for end-to-end tests: `LocalCluster`.

Real binaries (scripts/build_e2e.sh builds them into $MLCC_E2E_CACHE/bin, default
~/.cache/mlcc-e2e/bin): etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok,
each on 127.0.0.1 at a free port, in a temporary work dir holding their data, certificates and
one log file each. Every process runs in its own process group, killed on exit.

- The API server authorizes with RBAC; every client here (the admin kubeconfig, the controller
  manager, the scheduler, kwok) is in system:masters.
- The controller manager runs only what a Deployment, a batch/v1 Job (hp:draftTraining's
  `operator: job`) and `pulumi destroy` need: Deployments, ReplicaSets, Jobs, garbage
  collection, namespace deletion, service accounts and the root CA ConfigMap (no node
  lifecycle: kwok's nodes never heartbeat, and nothing marks them NotReady).
- The scheduler places pods by their GPU requests and node selectors/affinity.
- kwok fakes the nodes annotated `kwok.x-k8s.io/node: fake` and their pods, with its own
  default stages (kwok/stages.yaml: pods turn Running and Ready as soon as they are bound, and
  go when deleted). It also plays the kubelet's server at the nodes' InternalIP 127.0.0.1 and
  `status.daemonEndpoints.kubeletEndpoint.Port`, over TLS with a certificate of the cluster's
  CA that the API server checks (--kubelet-certificate-authority), so `kubectl logs` and
  `GET /api/v1/namespaces/ns/pods/p/log` go through the real API server to kwok, which serves
  the files that kwok `Logs` objects (kwok.x-k8s.io/v1alpha1, --enable-crds=Logs) name for
  each pod's containers. `write_log` writes such a file (the CRI log format kwok reads) and the
  pod's `Logs` object, owned by the pod so that it goes with it.
- The operator's CRDs (schemas/crds/) are installed as vendored, except their conversion
  webhook (a Helm template naming the operator's Service, which does not exist here): its
  strategy is None, which only v1, the storage version the program uses, needs.
"""

from __future__ import annotations

import copy
import datetime
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException
from pki import LOOPBACK, Pki, write_pki
from processes import Component, client_tls, free_port, http_ok, insecure_tls

REPO = Path(__file__).resolve().parents[2]
CRD_DIR = REPO / "schemas" / "crds"
KWOK_DIR = Path(__file__).resolve().parent / "kwok"
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")
CONTEXT = "local"
KWOK_ANNOTATION = "kwok.x-k8s.io/node"
KWOK_LOGS = ("kwok.x-k8s.io", "v1alpha1", "logs")
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
GPU_RESOURCE = "nvidia.com/gpu"
SERVICE_RANGE = "10.0.0.0/24"
CONTROLLERS = (
    "deployment-controller",
    "replicaset-controller",
    "job-controller",
    "garbage-collector-controller",
    "namespace-controller",
    "serviceaccount-controller",
    "root-ca-certificate-publisher-controller",
    "pod-garbage-collector-controller",
)
READY_TIMEOUT_S = 60.0
CRD_TIMEOUT_S = 30.0
LOG_SERVED_TIMEOUT_S = 10.0


def binary_dir() -> Path:
    cache = os.environ.get("MLCC_E2E_CACHE") or str(Path.home() / ".cache" / "mlcc-e2e")
    return Path(cache) / "bin"


def missing_binaries(directory: Path | None = None) -> list[str]:
    found = directory or binary_dir()
    return [name for name in BINARIES if not os.access(found / name, os.X_OK)]


def require_built(names: list[str]) -> None:
    """One line naming what is missing, instead of a skip: a fresh clone can build it all."""
    if names:
        message = f"not built in {binary_dir()}: {', '.join(names)} (run `make e2e-build`)"
        pytest.fail(message, pytrace=False)


class LocalCluster:
    """`with LocalCluster() as cluster:` a running control plane; see the module docstring."""

    def __init__(self, binaries: Path | None = None, keep_work_dir: bool = False) -> None:
        self.binaries = binaries or binary_dir()
        self.keep_work_dir = keep_work_dir
        self.work_dir = Path(tempfile.mkdtemp(prefix="mlcc-e2e-"))
        self.startup_s = 0.0
        self._components: list[Component] = []
        self._ports = {name: free_port() for name in ("etcd", "etcd-peer", "apiserver")}
        self._ports |= {name: free_port() for name in ("kcm", "scheduler", "kwok")}
        self._pki: Pki | None = None
        self._client: Any = None
        self._logs: dict[tuple[str, str], dict[str, dict[str, Path]]] = {}
        self._logs_lock = threading.Lock()

    # --- what tests use ----------------------------------------------------------------------

    @property
    def kubeconfig(self) -> Path:
        return self.work_dir / "admin.kubeconfig"

    @property
    def server(self) -> str:
        return f"https://{LOOPBACK}:{self._ports['apiserver']}"

    @property
    def kubelet_port(self) -> int:
        return self._ports["kwok"]

    def api_client(self) -> Any:
        """A new `kubernetes.client.ApiClient` of the admin kubeconfig (each thread may have
        its own)."""
        return k8s_config.new_client_from_config(  # type: ignore[no-untyped-call]
            str(self.kubeconfig), context=CONTEXT
        )

    def component_log(self, name: str) -> Path:
        return self.work_dir / f"{name}.log"

    def add_node(
        self,
        name: str,
        instance_type: str = "ml.g5.12xlarge",
        gpus: int = 4,
        labels: Mapping[str, str] | None = None,
        taints: Sequence[Mapping[str, str]] = (),
    ) -> dict[str, Any]:
        """A kwok node with `gpus` GPUs of `instance_type`; returns it once kwok made it Ready."""
        body = fake_node(name, instance_type, gpus, labels or {}, taints)
        core_api(self._api()).create_node(body)
        return self._node_ready(name)

    def write_log(
        self, namespace: str, pod: str, container: str, text: str, previous: bool = False
    ) -> None:
        """Make `text` the container's log (its last run's with `previous`) as the API serves
        it; returns once the API server does (the pod must be on a kwok node)."""
        files = self._log_files(namespace, pod, container)
        _write_cri_log(files["previous" if previous else "current"], text)
        self._publish_logs(namespace, pod)
        self._wait_log_served(namespace, pod, container, previous)

    # --- the context manager -----------------------------------------------------------------

    def __enter__(self) -> LocalCluster:
        started = time.monotonic()
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        self.startup_s = time.monotonic() - started
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        for component in reversed(self._components):
            component.stop()
        self._components.clear()
        if self._client is not None:
            self._client.close()
            self._client = None
        if not self.keep_work_dir:
            shutil.rmtree(self.work_dir, ignore_errors=True)

    # --- starting ----------------------------------------------------------------------------

    def _start(self) -> None:
        missing = missing_binaries(self.binaries)
        if missing:
            raise FileNotFoundError(
                f"not built in {self.binaries}: {', '.join(missing)} (scripts/build_e2e.sh)"
            )
        self._pki = write_pki(self.work_dir / "pki")
        self._write_kubeconfig()
        self._run("etcd", self._etcd_args(), self._etcd_ready())
        self._run("kube-apiserver", self._apiserver_args(), self._apiserver_ready())
        install_crds(self._api(), [KWOK_DIR / "logs-crd.yaml"])
        later = [
            self._launch("kube-controller-manager", self._kcm_args()),
            self._launch("kube-scheduler", self._scheduler_args()),
            self._launch("kwok", self._kwok_args()),
        ]
        install_crds(self._api(), sorted(CRD_DIR.glob("*.yaml")))
        probes = [self._health("kcm", "healthz"), self._health("scheduler", "readyz")]
        probes.append(http_ok(f"http://{LOOPBACK}:{self._ports['kwok']}/healthz"))
        for component, probe in zip(later, probes, strict=True):
            component.wait_ready(probe, READY_TIMEOUT_S)

    def _launch(self, name: str, args: list[str]) -> Component:
        argv = [str(self.binaries / name), *args]
        component = Component.start(name, argv, self.component_log(name), self.work_dir)
        self._components.append(component)
        return component

    def _run(self, name: str, args: list[str], probe: Any) -> None:
        self._launch(name, args).wait_ready(probe, READY_TIMEOUT_S)

    def _health(self, port: str, path: str) -> Any:
        return http_ok(f"https://{LOOPBACK}:{self._ports[port]}/{path}", insecure_tls())

    def _etcd_ready(self) -> Any:
        return http_ok(f"http://{LOOPBACK}:{self._ports['etcd']}/readyz")

    def _apiserver_ready(self) -> Any:
        pki = self._pki_files()
        tls = client_tls(pki.ca.cert, pki.admin.cert, pki.admin.key)
        return http_ok(f"{self.server}/readyz", tls)

    def _pki_files(self) -> Pki:
        assert self._pki is not None, "the PKI is written first"
        return self._pki

    def _etcd_args(self) -> list[str]:
        client = f"http://{LOOPBACK}:{self._ports['etcd']}"
        peer = f"http://{LOOPBACK}:{self._ports['etcd-peer']}"
        return [
            "--name=e2e",
            f"--data-dir={self.work_dir / 'etcd'}",
            f"--listen-client-urls={client}",
            f"--advertise-client-urls={client}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=e2e={peer}",
            "--unsafe-no-fsync",  # a throwaway store: durability costs seconds on a slow disk
            "--log-level=warn",
        ]

    def _apiserver_args(self) -> list[str]:
        pki = self._pki_files()
        return [
            f"--etcd-servers=http://{LOOPBACK}:{self._ports['etcd']}",
            f"--bind-address={LOOPBACK}",
            f"--advertise-address={LOOPBACK}",
            f"--secure-port={self._ports['apiserver']}",
            f"--cert-dir={self.work_dir / 'apiserver-certs'}",
            f"--tls-cert-file={pki.api_server.cert}",
            f"--tls-private-key-file={pki.api_server.key}",
            f"--client-ca-file={pki.ca.cert}",
            f"--service-account-key-file={pki.service_account_public}",
            f"--service-account-signing-key-file={pki.service_account_key}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-cluster-ip-range={SERVICE_RANGE}",
            "--authorization-mode=RBAC",
            f"--kubelet-client-certificate={pki.kubelet_client.cert}",
            f"--kubelet-client-key={pki.kubelet_client.key}",
            f"--kubelet-certificate-authority={pki.ca.cert}",
            "--kubelet-preferred-address-types=InternalIP",
            "--allow-privileged=true",
            "--enable-priority-and-fairness=false",  # fewer start-up hooks; nothing to share
            # It taints every new node not-ready until the node lifecycle controller, which is
            # not run (kwok's nodes never heartbeat), sees the node Ready.
            "--disable-admission-plugins=TaintNodesByCondition",
        ]

    def _component_auth(self) -> list[str]:
        kubeconfig = str(self.kubeconfig)
        return [
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            f"--bind-address={LOOPBACK}",
            "--leader-elect=false",
        ]

    def _kcm_args(self) -> list[str]:
        return [
            *self._component_auth(),
            f"--secure-port={self._ports['kcm']}",
            f"--controllers={','.join(CONTROLLERS)}",
            f"--root-ca-file={self._pki_files().ca.cert}",
            "--use-service-account-credentials=false",
        ]

    def _scheduler_args(self) -> list[str]:
        return [*self._component_auth(), f"--secure-port={self._ports['scheduler']}"]

    def _kwok_args(self) -> list[str]:
        pki, port = self._pki_files(), self._ports["kwok"]
        return [
            f"--kubeconfig={self.kubeconfig}",
            f"--config={KWOK_DIR / 'stages.yaml'}",
            "--manage-all-nodes=false",
            f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION}=fake",
            f"--node-ip={LOOPBACK}",
            f"--node-port={port}",
            f"--server-address={LOOPBACK}:{port}",
            f"--tls-cert-file={pki.kubelet_server.cert}",
            f"--tls-private-key-file={pki.kubelet_server.key}",
            "--enable-crds=Logs",
            "--node-lease-duration-seconds=0",
        ]

    def _write_kubeconfig(self) -> None:
        pki = self._pki_files()
        self.kubeconfig.write_text(
            yaml.safe_dump(admin_kubeconfig(self.server, pki)), encoding="utf-8"
        )
        self.kubeconfig.chmod(0o600)

    def _api(self) -> Any:
        if self._client is None:
            self._client = self.api_client()
        return self._client

    # --- nodes and logs ----------------------------------------------------------------------

    def _node_ready(self, name: str) -> dict[str, Any]:
        core = core_api(self._api())
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            node = self._api().sanitize_for_serialization(core.read_node(name))
            if _condition_true(node, "Ready"):
                return dict(node)
            time.sleep(0.05)
        raise TimeoutError(f"kwok did not make node {name} Ready within {READY_TIMEOUT_S:g} s")

    def _log_files(self, namespace: str, pod: str, container: str) -> dict[str, Path]:
        directory = self.work_dir / "pod-logs" / namespace / pod
        directory.mkdir(parents=True, exist_ok=True)
        files = {
            "current": directory / f"{container}.log",
            "previous": directory / f"{container}.previous.log",
        }
        with self._logs_lock:
            self._logs.setdefault((namespace, pod), {})[container] = files
        return files

    def _publish_logs(self, namespace: str, pod: str) -> None:
        """The pod's kwok `Logs` object: each container's current and previous log file."""
        with self._logs_lock:
            containers = copy.deepcopy(self._logs[(namespace, pod)])
        owner = core_api(self._api()).read_namespaced_pod(pod, namespace)
        body = logs_object(namespace, pod, str(owner.metadata.uid), containers)
        group, version, plural = KWOK_LOGS
        api = custom_api(self._api())
        try:
            api.create_namespaced_custom_object(group, version, namespace, plural, body)
        except ApiException as error:
            if error.status != 409:
                raise
            api.patch_namespaced_custom_object(
                group, version, namespace, plural, pod, {"spec": body["spec"]}
            )

    def _wait_log_served(self, namespace: str, pod: str, container: str, previous: bool) -> None:
        core = core_api(self._api())
        deadline = time.monotonic() + LOG_SERVED_TIMEOUT_S
        while True:
            try:
                core.read_namespaced_pod_log(pod, namespace, container=container, previous=previous)
                return
            except ApiException as error:
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"the API server did not serve the log of {namespace}/{pod} "
                        f"{container} within {LOG_SERVED_TIMEOUT_S:g} s: {error.body}"
                    ) from None
            time.sleep(0.05)


# --- the client ------------------------------------------------------------------------------
# Its APIs typed Any: what is sent and read here are JSON-shaped dicts, not the client's models.


def core_api(api: Any) -> Any:
    return k8s.CoreV1Api(api)


def custom_api(api: Any) -> Any:
    return k8s.CustomObjectsApi(api)


def apps_api(api: Any) -> Any:
    return k8s.AppsV1Api(api)


def extensions_api(api: Any) -> Any:
    return k8s.ApiextensionsV1Api(api)


# --- documents -------------------------------------------------------------------------------


def admin_kubeconfig(server: str, pki: Pki) -> dict[str, Any]:
    import base64

    def data(path: Path) -> str:
        return base64.b64encode(path.read_bytes()).decode("ascii")

    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": CONTEXT,
                "cluster": {"server": server, "certificate-authority-data": data(pki.ca.cert)},
            }
        ],
        "users": [
            {
                "name": "admin",
                "user": {
                    "client-certificate-data": data(pki.admin.cert),
                    "client-key-data": data(pki.admin.key),
                },
            }
        ],
        "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": "admin"}}],
        "current-context": CONTEXT,
    }


def fake_node(
    name: str,
    instance_type: str,
    gpus: int,
    labels: Mapping[str, str],
    taints: Sequence[Mapping[str, str]],
) -> dict[str, Any]:
    resources = {"cpu": "48", "memory": "192Gi", "pods": "110", GPU_RESOURCE: str(gpus)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {KWOK_ANNOTATION: "fake"},
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
                INSTANCE_TYPE_LABEL: instance_type,
                **labels,
            },
        },
        "spec": {"taints": [dict(t) for t in taints]} if taints else {},
        "status": {"capacity": resources, "allocatable": dict(resources)},
    }


def logs_object(
    namespace: str, pod: str, pod_uid: str, containers: Mapping[str, Mapping[str, Path]]
) -> dict[str, Any]:
    group, version, _ = KWOK_LOGS
    return {
        "apiVersion": f"{group}/{version}",
        "kind": "Logs",
        "metadata": {
            "name": pod,  # kwok finds a pod's Logs by the pod's name and namespace
            "namespace": namespace,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": pod_uid}],
        },
        "spec": {
            "logs": [
                {
                    "containers": [name],
                    "logsFile": str(files["current"]),
                    "previousLogsFile": str(files["previous"]),
                }
                for name, files in sorted(containers.items())
            ]
        },
    }


def _write_cri_log(path: Path, text: str) -> None:
    """The CRI log format kwok reads (as a kubelet's runtime writes it): one
    `<RFC 3339 time> stdout F <line>` per line."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    lines = [f"{now} stdout F {line}\n" for line in text.splitlines()]
    temporary = path.with_suffix(".tmp")
    temporary.write_text("".join(lines), encoding="utf-8")
    temporary.replace(path)  # a reader never sees half a log


def _condition_true(found: Mapping[str, Any], kind: str) -> bool:
    conditions = (found.get("status") or {}).get("conditions") or []
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


# --- CRDs ------------------------------------------------------------------------------------


def load_crd(path: Path) -> dict[str, Any]:
    crd: dict[str, Any] = yaml.load(path.read_text(encoding="utf-8"), Loader=YAML_LOADER)
    spec = crd["spec"]
    if spec.get("conversion", {}).get("strategy") == "Webhook":
        spec["conversion"] = {"strategy": "None"}  # the webhook is the operator's Service
    annotations = crd.get("metadata", {}).get("annotations") or {}
    annotations.pop("cert-manager.io/inject-ca-from", None)  # a Helm template, no cert-manager
    return crd


def install_crds(api: Any, paths: Sequence[Path]) -> None:
    extensions = extensions_api(api)
    names = []
    for path in paths:
        crd = load_crd(path)
        # Not deserialized into the client's models: that takes seconds for a 456 KB CRD.
        extensions.create_custom_resource_definition(crd, _preload_content=False)
        names.append(crd["metadata"]["name"])
    for name in names:
        _wait_established(extensions, name)


def _wait_established(extensions: Any, name: str) -> None:
    deadline = time.monotonic() + CRD_TIMEOUT_S
    while time.monotonic() < deadline:
        answer = extensions.read_custom_resource_definition(name, _preload_content=False)
        if _condition_true(json.loads(answer.data), "Established"):
            return
        time.sleep(0.05)
    raise TimeoutError(f"CRD {name} was not Established within {CRD_TIMEOUT_S:g} s")
