"""Who copies an s3:// draft into the pod, once the cluster mode is known (docs/draft-serving.md).

Pure. In create mode the program makes the copy's service account (mlcc/components/
draft_reader.py); elsewhere, without hp:kubernetes.serviceAccountName, a warning.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlcc.config.endpoints import ReadEndpoint
from mlcc.serving import s3_draft


def check_credentials(read: Sequence[ReadEndpoint], program_makes_one: bool) -> None:
    """Without hp:kubernetes.serviceAccountName the copy needs the program's own service
    account (create mode); elsewhere it runs as the namespace's default one: a warning."""
    for entry in read:
        endpoint = entry.config
        spec = endpoint.speculative
        if spec is None or not s3_draft.is_s3(spec.draft_model) or endpoint.baseline_of:
            continue
        if program_makes_one or endpoint.operator.kubernetes.get("serviceAccountName"):
            continue
        entry.reader.warn(
            "kubernetes.serviceAccountName",
            f"not set: the copy of {spec.draft_model} runs as the namespace's default service "
            "account, which reads S3 only if its node or an IAM role (IRSA) lets it; on an "
            "existing cluster set a service account whose role may s3:ListBucket and "
            "s3:GetObject on that prefix",
        )
