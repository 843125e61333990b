"""ECR images for the image part of preflight (mlcc/preflight/image), served by the local AWS.

`Registry` holds manifests (by digest and tag) and config blobs (by digest); `serve` scripts ECR
BatchGetImage and GetDownloadUrlForLayer from it (the local AWS checks both against botocore's
model), and `BlobServer` is the "presigned URL" host on 127.0.0.1 the download URLs name. A
reference the registry does not hold answers as an upstream vLLM image does: a config whose
labels and env do not say the engine's release.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from bench_fake_engine import LoopbackServer
from local_aws import LocalAWS, Reply, error

from mlcc.preflight.image.registry import INDEX_TYPES, MANIFEST_TYPES

OCI_MANIFEST, OCI_INDEX = MANIFEST_TYPES[0], INDEX_TYPES[0]
CONFIG_TYPE = "application/vnd.oci.image.config.v1+json"
# What vllm/vllm-openai's config says of itself (no label or env naming its release).
UPSTREAM_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "CUDA_VERSION": "12.8.1",
    "VLLM_USAGE_SOURCE": "production-docker-image",
}
UPSTREAM_LABELS = {"maintainer": "NVIDIA CORPORATION <cudatools@nvidia.com>"}


def digest_of(body: bytes) -> str:
    return "sha256:" + hashlib.sha256(body).hexdigest()


def config_blob(labels: dict[str, str], env: dict[str, str], arch: str = "amd64") -> bytes:
    config = {"Env": [f"{k}={v}" for k, v in env.items()], "Labels": labels}
    whole = {"architecture": arch, "os": "linux", "config": config, "rootfs": {"type": "layers"}}
    return json.dumps(whole).encode()


@dataclass
class Registry:
    manifests: dict[tuple[str, str], str] = field(default_factory=dict)  # (repo, ref) -> JSON
    blobs: dict[str, bytes] = field(default_factory=dict)  # digest -> bytes
    endless: set[str] = field(default_factory=set)  # digests whose download never ends
    denied: set[str] = field(default_factory=set)  # ECR operations answered AccessDenied
    blob_requests: list[str] = field(default_factory=list)

    def push(
        self,
        repository: str,
        refs: list[str],
        labels: dict[str, str],
        env: dict[str, str],
        arch: str = "amd64",
        index: bool = False,
    ) -> str:
        """An image under `refs` (tags or digests); its config's digest."""
        blob = config_blob(labels, env, arch)
        config = digest_of(blob)
        self.blobs[config] = blob
        manifest = json.dumps(
            {
                "schemaVersion": 2,
                "mediaType": OCI_MANIFEST,
                "config": {"mediaType": CONFIG_TYPE, "digest": config, "size": len(blob)},
                "layers": [],
            }
        )
        top = manifest
        if index:
            own = digest_of(manifest.encode())
            self.manifests[(repository, own)] = manifest
            entry = {"mediaType": OCI_MANIFEST, "digest": own, "size": len(manifest)}
            top = json.dumps(
                {
                    "schemaVersion": 2,
                    "mediaType": OCI_INDEX,
                    "manifests": [{**entry, "platform": {"architecture": arch, "os": "linux"}}],
                }
            )
        for ref in refs:
            self.manifests[(repository, ref)] = top
        return config


def serve(fake: LocalAWS, registry: Registry, blob_url: str) -> None:
    def batch_get_image(request: dict[str, Any]) -> Reply:
        if "BatchGetImage" in registry.denied:
            return error("AccessDeniedException", "not authorized to perform ecr:BatchGetImage")
        (image_id,) = request["imageIds"]
        ref = image_id.get("imageDigest") or image_id.get("imageTag", "")
        repository = request["repositoryName"]
        manifest = registry.manifests.get((repository, ref))
        if manifest is None:
            blob = config_blob(UPSTREAM_LABELS, UPSTREAM_ENV)
            registry.blobs.setdefault(digest_of(blob), blob)
            manifest = json.dumps(
                {
                    "schemaVersion": 2,
                    "mediaType": OCI_MANIFEST,
                    "layers": [],
                    "config": {
                        "mediaType": CONFIG_TYPE,
                        "digest": digest_of(blob),
                        "size": len(blob),
                    },
                }
            )
        media_type = json.loads(manifest)["mediaType"]
        assert media_type in request["acceptedMediaTypes"]
        image = {
            "registryId": request["registryId"],
            "repositoryName": repository,
            "imageId": image_id,
            "imageManifest": manifest,
            "imageManifestMediaType": media_type,
        }
        return Reply(body={"images": [image], "failures": []})

    def download_url(request: dict[str, Any]) -> Reply:
        if "GetDownloadUrlForLayer" in registry.denied:
            return error("AccessDeniedException", "not authorized")
        digest = request["layerDigest"]
        if digest not in registry.blobs and digest not in registry.endless:
            return error("LayersNotFoundException", f"{digest} not found")
        url = f"{blob_url}/blobs/{digest}?X-Amz-Signature=local"
        return Reply(body={"downloadUrl": url, "layerDigest": digest})

    fake.on("BatchGetImage", batch_get_image, service="ecr")
    fake.on("GetDownloadUrlForLayer", download_url, service="ecr")


class BlobServer(LoopbackServer):
    """The presigned URLs' host: GET /blobs/<digest> answers the blob (or never ends)."""

    def __init__(self, registry: Registry) -> None:
        self._serve(_blob_handler(registry, threading.Event()))
        self.registry = registry


def _blob_handler(registry: Registry, stopping: threading.Event) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            digest = self.path.split("?")[0].removeprefix("/blobs/")
            registry.blob_requests.append(digest)
            if digest in registry.endless:
                self.send_response(200)
                self.end_headers()  # no Content-Length: the body runs until the client hangs up
                try:
                    while True:
                        self.wfile.write(b"{" * 65536)
                except OSError:
                    return
            body = registry.blobs.get(digest)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: Any) -> None:
            return

    return Handler
