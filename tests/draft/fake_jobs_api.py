"""A Kubernetes API on 127.0.0.1 serving training jobs to the real kubernetes client.

It answers what `mlcc draft status` reads: a HyperPodPyTorchJob (sagemaker.amazonaws.com/v1,
hyperpodpytorchjobs) and the group's discovery document (absent when the training operator is
not "installed"), a batch/v1 Job, a PodList filtered by its labelSelector, and pod logs with
`tailLines` applied as the API does. Errors are Status bodies, as the API sends them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import yaml
from bench_fake_engine import LoopbackServer
from fake_kube_api import TOKEN, status_body

HYPERPOD = "/apis/sagemaker.amazonaws.com/v1"


@dataclass
class Cluster:
    namespace: str = "training"
    hyperpod_jobs: dict[str, dict[str, Any]] = field(default_factory=dict)
    batch_jobs: dict[str, dict[str, Any]] = field(default_factory=dict)
    pods: Sequence[dict[str, Any]] = ()
    logs: dict[tuple[str, str], str] = field(default_factory=dict)  # (pod, container)
    operator_installed: bool = True


class FakeJobsApi(LoopbackServer):
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.requests: list[str] = []
        self._serve(_handler(self))

    def kubeconfig(self, path: Path) -> Path:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "fake", "user": {"token": TOKEN}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
            "current-context": "fake",
        }
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        return path


def _selected(pod: Mapping[str, Any], selector: str) -> bool:
    labels = pod.get("metadata", {}).get("labels", {})
    pairs = [part.split("=", 1) for part in selector.split(",") if part]
    return all(labels.get(key) == value for key, value in pairs)


def _handler(api: FakeJobsApi) -> type[BaseHTTPRequestHandler]:
    cluster = api.cluster
    core = f"/api/v1/namespaces/{cluster.namespace}"

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            url = urlparse(self.path)
            path = unquote(url.path)
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            api.requests.append(self.path)
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                self._send(401, status_body(401, "Unauthorized", "Unauthorized"))
                return
            hyperpod = f"{HYPERPOD}/namespaces/{cluster.namespace}/hyperpodpytorchjobs/"
            batch = f"/apis/batch/v1/namespaces/{cluster.namespace}/jobs/"
            if path == HYPERPOD and cluster.operator_installed:
                resources = [{"name": "hyperpodpytorchjobs", "kind": "HyperPodPyTorchJob"}]
                self._json({"kind": "APIResourceList", "resources": resources})
            elif path.startswith(hyperpod) and cluster.operator_installed:
                self._object(
                    cluster.hyperpod_jobs,
                    path.removeprefix(hyperpod),
                    "hyperpodpytorchjobs.sagemaker.amazonaws.com",
                )
            elif path.startswith(batch):
                self._object(cluster.batch_jobs, path.removeprefix(batch), "jobs.batch")
            elif path == f"{core}/pods":
                selector = query.get("labelSelector", "")
                items = [p for p in cluster.pods if _selected(p, selector)]
                self._json({"kind": "PodList", "metadata": {}, "items": items})
            elif path.startswith(f"{core}/pods/") and path.endswith("/log"):
                pod = path.split("/")[-2]
                text = cluster.logs.get((pod, query.get("container", "")))
                if text is None:
                    message = f'container "{query.get("container")}" in pod "{pod}" not found'
                    self._send(400, status_body(400, "BadRequest", message))
                    return
                lines = text.splitlines(keepends=True)
                tail = int(query.get("tailLines", len(lines)))
                self._send(200, "".join(lines[-tail:]).encode(), "text/plain")
            else:  # what the API server says for a group or resource it does not serve
                self._send(404, b"404 page not found\n", "text/plain")

        def _object(self, store: Mapping[str, Any], name: str, noun: str) -> None:
            found = store.get(name)
            if found is None:
                message = f'{noun} "{name}" not found'
                self._send(404, status_body(404, "NotFound", message))
                return
            self._json(found)

        def _json(self, body: object) -> None:
            self._send(200, json.dumps(body).encode())

        def _send(self, code: int, body: bytes, content_type: str = "application/json") -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler
