"""An ECR image's config (labels and env), read with boto3's ECR client: no registry client.

1. `ecr.batch_get_image` gives the manifest of the reference's digest (or tag); an index (a
   multi-platform image) names the linux/amd64 manifest, read the same way;
2. the manifest's `config.digest` is a blob: `ecr.get_download_url_for_layer` gives a
   presigned URL for it, which is fetched with a timeout, under MAX_CONFIG_BYTES and checked
   against its digest;
3. the config JSON's `config.Labels` and `config.Env` are what the image says of itself.

Only ECR references are read
(`<account>.dkr.ecr.<region>.amazonaws.com[.cn]/<repo>[:tag][@sha256:...]`); any failure is an
`Unreached` naming the call (a denied one names the IAM action), never an exception,
as in the account part (mlcc/preflight/account/fetch.py).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from mlcc.preflight.account import fetch as account_fetch
from mlcc.preflight.account.facts import Unreached
from mlcc.preflight.account.fetch import Clients

# The same registry and repository as mlcc/components/cluster/iam_policies.py's _ECR_IMAGE,
# with the reference's tag and digest.
ECR_IMAGE = re.compile(
    r"^(?P<account>\d{12})\.dkr\.ecr\.(?P<region>[a-z0-9-]+)\.amazonaws\.com(?:\.cn)?/"
    r"(?P<repository>[a-z0-9._/-]+?)(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<digest>sha256:[a-f0-9]{64}))?$"
)
INDEX_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)
MANIFEST_TYPES = (
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)
IAM_ACTIONS = ("ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer")
PLATFORM = ("linux", "amd64")  # HyperPod's GPU nodes are x86_64
MAX_CONFIG_BYTES = 4 * 1024 * 1024  # an image config is a few kB; a huge one is not read
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class EcrImage:
    account: str
    region: str
    repository: str
    tag: str  # "" when the digest names the image
    digest: str  # "" when only the tag does


def ecr_image(image: str) -> EcrImage | None:
    """The parts of an ECR reference, or None for another registry."""
    found = ECR_IMAGE.match(image)
    if found is None:
        return None
    tag, digest = found["tag"] or "", found["digest"] or ""
    if not tag and not digest:
        tag = "latest"  # what docker pulls for a reference without either
    return EcrImage(found["account"], found["region"], found["repository"], tag, digest)


@dataclass(frozen=True)
class ImageConfig:
    """What the image's config says: its labels, its env (NAME -> value) and its platform."""

    labels: dict[str, str]
    env: dict[str, str]
    platform: tuple[str, str]


@dataclass(frozen=True)
class NotRunnable:
    """A fact the manifest gave: the nodes cannot run the image (e.g. no linux/amd64 one)."""

    why: str


class _NoAmd64(Exception):
    pass


def read_config(
    clients: Clients, ref: EcrImage, seconds: float
) -> ImageConfig | NotRunnable | Unreached:
    """The image's config, the fact that the nodes cannot run it, or why it was not read."""
    started = time.monotonic()
    source = ["ECR BatchGetImage"]  # the step under way, for the Unreached

    def work() -> ImageConfig:
        client = clients.client("ecr")
        named = {"imageDigest": ref.digest} if ref.digest else {"imageTag": ref.tag}
        manifest, media_type = _manifest(client, ref, named)
        if media_type in INDEX_TYPES or "manifests" in manifest:
            manifest, media_type = _manifest(client, ref, {"imageDigest": _amd64(manifest)})
        digest = str(manifest["config"]["digest"])
        source[0] = "ECR GetDownloadUrlForLayer"
        reply = account_fetch._call(
            client,
            "get_download_url_for_layer",
            registryId=ref.account,
            repositoryName=ref.repository,
            layerDigest=digest,
        )
        source[0] = "the image config's download URL"
        left = max(seconds - (time.monotonic() - started), 0.5)
        return parse_config(download(str(reply["downloadUrl"]), digest, left))

    try:
        found = account_fetch.guarded(source[0], work)()
    except BlobProblem as problem:
        return Unreached(source[0], str(problem))
    except _NoAmd64:
        return NotRunnable("its index holds no linux/amd64 image")
    if isinstance(found, Unreached):
        return Unreached(source[0], found.why, found.denied_action)
    if found.platform != PLATFORM:
        return NotRunnable(f"its config says {'/'.join(found.platform)}, not linux/amd64")
    return found


def _manifest(client: Any, ref: EcrImage, image_id: dict[str, str]) -> tuple[dict[str, Any], str]:
    reply = account_fetch._call(
        client,
        "batch_get_image",
        registryId=ref.account,
        repositoryName=ref.repository,
        imageIds=[image_id],
        acceptedMediaTypes=[*MANIFEST_TYPES, *INDEX_TYPES],
    )
    for failure in reply.get("failures") or []:
        code = account_fetch.one_line(str(failure.get("failureCode", "")))
        why = account_fetch.one_line(str(failure.get("failureReason", "")))
        raise BlobProblem(f"{code}: {why}" if why else code)
    images = reply["images"]
    if len(images) != 1:
        raise BlobProblem(f"{len(images)} images in the answer, not one")
    manifest = json.loads(images[0]["imageManifest"])
    if not isinstance(manifest, dict):
        raise BlobProblem("a manifest that is not a JSON object")
    return manifest, str(images[0].get("imageManifestMediaType") or manifest.get("mediaType", ""))


def _amd64(index: dict[str, Any]) -> str:
    for entry in index["manifests"]:
        platform = entry.get("platform") or {}
        if (platform.get("os"), platform.get("architecture")) == PLATFORM:
            return str(entry["digest"])
    raise _NoAmd64


class BlobProblem(Exception):
    """The manifest or config blob could not be read; the message says why, in a few words."""


def download(url: str, digest: str, seconds: float) -> bytes:
    """The blob at the presigned `url`: at most MAX_CONFIG_BYTES, within `seconds`, and its
    sha256 must be `digest`."""
    if not url.startswith(("https://", "http://")):
        raise BlobProblem("the download URL is not HTTP(S)")
    deadline = time.monotonic() + seconds
    try:
        with urllib.request.urlopen(url, timeout=seconds) as answer:
            length = answer.headers.get("Content-Length")
            if length is not None and length.isdigit() and int(length) > MAX_CONFIG_BYTES:
                raise BlobProblem(too_large())
            body = bytearray()
            while chunk := answer.read(_CHUNK):
                body += chunk
                if len(body) > MAX_CONFIG_BYTES:
                    raise BlobProblem(too_large())
                if time.monotonic() > deadline:
                    raise BlobProblem(f"not all of it within {seconds:.0f} s")
    except urllib.error.HTTPError as failure:
        raise BlobProblem(f"HTTP {failure.code} from the download URL") from None
    except (urllib.error.URLError, OSError) as failure:
        raise BlobProblem(account_fetch.one_line(f"no answer ({failure})")) from None
    algorithm, _, expected = digest.partition(":")
    if algorithm != "sha256" or hashlib.sha256(body).hexdigest() != expected.lower():
        raise BlobProblem(f"a config blob whose sha256 is not its digest {digest}")
    return bytes(body)


def too_large() -> str:
    return f"a config blob over {MAX_CONFIG_BYTES // (1024 * 1024)} MiB"


def parse_config(body: bytes) -> ImageConfig:
    try:
        config = json.loads(body)
    except ValueError:
        raise BlobProblem("a config blob that is not JSON") from None
    if not isinstance(config, dict):
        raise BlobProblem("a config blob that is not a JSON object")
    inner = config.get("config") or {}
    labels = inner.get("Labels") or {} if isinstance(inner, dict) else {}
    env_list = inner.get("Env") or [] if isinstance(inner, dict) else []
    if not isinstance(labels, dict) or not isinstance(env_list, list):
        raise BlobProblem("a config blob whose Labels or Env are of the wrong type")
    env = dict(str(item).partition("=")[::2] for item in env_list)
    platform = (str(config.get("os", "")), str(config.get("architecture", "")))
    return ImageConfig({str(k): str(v) for k, v in labels.items()}, env, platform)
