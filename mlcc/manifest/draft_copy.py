"""The copy of an s3:// draft into the serve pod: an init container and the model volume in
`spec.kubernetes` (docs/draft-serving.md). Pure.

How the pieces reach the worker, from the operator's own files (aws/sagemaker-hyperpod-cli):
- the vendored CRD (schemas/crds/inferenceendpointconfigs.yaml, v1): `spec.kubernetes.
  initContainers` ("Init containers to run before the inference server starts"),
  `spec.kubernetes.volumes` ("Additional volumes to add to the pod spec. These volumes can be
  referenced by init containers via volumeMounts") and `spec.kubernetes.serviceAccountName`
  ("useful for providing AWS credentials via IRSA to init containers or the worker"); the worker
  has no volumeMounts of its own, only `worker.modelVolumeMount`;
- the chart's samples `config/samples/v1_nvme_s3_prefetch_off_fallback.yaml` (commit a8d5724)
  and `v1_nvme_k8s_volume_service_account.yaml` (commit 944712e): a volume in
  `spec.kubernetes.volumes` named as `worker.modelVolumeMount.name` replaces the operator's
  model volume ("model-weights overridden"), an init container writes into it with
  `aws s3 sync` under the pod's IRSA service account, and the worker reads it at the mount path.
  Those samples use an S3 model source; that the operator treats a Hugging Face source's model
  volume the same way is **assumed**.
- `v1_nvme_s3_prefetch_on_fallback.yaml`: with prefetch on the worker reads another volume
  (`model-weights-copy`), so the config refuses hp:prefetch with an s3:// draft.

So the head lands in `<mountPath>/mlcc-draft` of an emptyDir model volume, and the engine reads
it there. The copy keeps every object of the prefix (`aws s3 sync`, which pages ListObjectsV2
itself) and writes `.mlcc-draft-source.json` beside it: the URI and config.json's ETag and
version, and prints it to its log as one JSON line, which `mlcc verify` and the deploy wait read
back (mlcc/deploy/draft_head.py).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from mlcc.config.endpoints import EndpointConfig
from mlcc.config.infrastructure import NewCluster
from mlcc.config.stack import StackConfig
from mlcc.serving import s3_draft

INIT_CONTAINER = s3_draft.INIT_CONTAINER
COPY_MOUNT = "/mlcc-model"
# The AWS CLI's own image on ECR Public, the one the operator's samples above use (at `latest`
# there), pinned here to a release tag. The tag is one seen in use in public code, not checked
# against the registry where this was written, and its digest is not known: **assumed** to exist
# and to stay as released. Its entrypoint is `aws`; the samples run `/bin/bash -c` in it.
AWS_CLI_IMAGE = "public.ecr.aws/aws-cli/aws-cli:2.36.43"
# What the copy may use: the head is a few GiB at most; the AWS CLI needs little.
RESOURCES = {
    "requests": {"cpu": "250m", "memory": "256Mi"},
    "limits": {"cpu": "1", "memory": "1Gi"},
}


def copy_script(draft: s3_draft.S3Folder, destination: str) -> str:
    """The init container's shell script: sync the prefix, require config.json, write the
    marker and print it as one JSON line (`kubectl logs POD -c mlcc-draft-copy`, which
    `mlcc verify` and the deploy wait read). `set -eu`: any failed step fails the init
    container, so the engine never starts without the head."""
    uri, target = shlex.quote(draft.uri), shlex.quote(destination)
    bucket, key = shlex.quote(draft.bucket), shlex.quote(draft.key("config.json"))
    marker = shlex.quote(f"{destination}/{s3_draft.MARKER_FILE}")
    return "\n".join(
        [
            "set -eu",
            f"mkdir -p {target}",
            f"aws s3 sync --only-show-errors {uri} {target}",
            f"test -s {target}/config.json || "
            f'{{ echo "mlcc-draft-copy: {draft.uri} has no config.json" >&2; exit 1; }}',
            f"aws s3api head-object --bucket {bucket} --key {key} "
            "--query '{ETag: ETag, VersionId: VersionId, LastModified: LastModified}' "
            f"--output json > {target}/.head-object.json",
            # The CLI's JSON spans lines; a JSON string holds no raw newline, so the marker is
            # one line without them, and that line goes to the container's log too.
            f'printf \'{{"uri": "%s", "config": %s}}\\n\' {uri} '
            f"\"$(tr -d '\\n' < {target}/.head-object.json)\" > {marker}",
            f"rm -f {target}/.head-object.json",
            f"cat {marker}",
        ]
    )


def init_container(draft: s3_draft.S3Folder, volume: str) -> dict[str, object]:
    destination = f"{COPY_MOUNT}/{s3_draft.DRAFT_DIRECTORY}"
    return {
        "name": INIT_CONTAINER,
        "image": AWS_CLI_IMAGE,
        "command": ["/bin/bash", "-c"],
        "args": [copy_script(draft, destination)],
        "volumeMounts": [{"name": volume, "mountPath": COPY_MOUNT}],
        "resources": {part: dict(values) for part, values in RESOURCES.items()},
    }


def service_account(config: StackConfig, endpoint: EndpointConfig) -> str | None:
    """The program's service account for the copy (mlcc/components/draft_reader.py): in create
    mode, for an s3:// draft, unless hp:kubernetes.serviceAccountName names the user's own."""
    spec = endpoint.speculative
    if spec is None or not s3_draft.is_s3(spec.draft_model):
        return None
    if endpoint.operator.kubernetes.get("serviceAccountName"):
        return None
    return (
        s3_draft.SERVICE_ACCOUNT if isinstance(config.infrastructure.cluster, NewCluster) else None
    )


def heads(config: StackConfig) -> list[tuple[str, str]]:
    """(bucket, prefix) of every s3:// draft the program's service account must read."""
    found = []
    for endpoint in config.endpoints:
        spec = endpoint.speculative
        if spec is not None and service_account(config, endpoint) is not None:
            draft = s3_draft.parse(str(spec.draft_model))
            if draft is not None:
                found.append((draft.bucket, draft.prefix))
    return sorted(set(found))


def apply(spec: dict[str, Any], draft_uri: str | None, account: str | None = None) -> None:
    """Add the copy of an s3:// draft to `spec` (the rendered IEC spec), in place; nothing for
    any other draft. The user's own hp:kubernetes init containers and volumes are kept: a volume
    of the model volume's name given there is used as it is. `account`: the program's service
    account, when it makes one."""
    draft = s3_draft.parse(draft_uri) if draft_uri and s3_draft.is_s3(draft_uri) else None
    if draft is None:
        return
    volume = str(spec["worker"]["modelVolumeMount"]["name"])
    kubernetes: dict[str, Any] = dict(spec.get("kubernetes") or {})
    volumes = list(kubernetes.get("volumes") or [])
    if not any(isinstance(v, Mapping) and v.get("name") == volume for v in volumes):
        volumes.append({"name": volume, "emptyDir": {}})
    kubernetes["volumes"] = volumes
    kubernetes["initContainers"] = [
        *(kubernetes.get("initContainers") or []),
        init_container(draft, volume),
    ]
    if account is not None and not kubernetes.get("serviceAccountName"):
        kubernetes["serviceAccountName"] = account
    spec["kubernetes"] = kubernetes
