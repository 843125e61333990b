"""What an s3:// draft (a trained head copied into the pod) cannot work with. Pure.

The draft itself (its URI, the engine) is checked in `mlcc.serving.speculative`; these are the
endpoint's other keys the copy depends on (docs/draft-serving.md, mlcc/manifest/draft_copy.py);
the credentials it copies with, once the cluster mode is known, in `s3_draft_credentials`.
"""

from __future__ import annotations

from collections.abc import Mapping

from mlcc.config.operator.features import OperatorSettings
from mlcc.config.reader import Reader
from mlcc.serving import s3_draft
from mlcc.serving.speculative import SpeculativeSpec


def check(reader: Reader, settings: OperatorSettings, spec: SpeculativeSpec | None) -> None:
    if spec is None or not s3_draft.is_s3(spec.draft_model):
        return
    if settings.prefetch:
        # aws/sagemaker-hyperpod-cli chart sample v1_nvme_s3_prefetch_on_fallback.yaml: with
        # prefetch on, the worker reads the operator's model-weights-copy volume, not the model
        # volume the head is copied into.
        reader.fail(
            "prefetch",
            "an s3:// hp:speculativeModel is copied into the model volume, and with prefetch "
            "the engine reads the operator's copy of the model instead; turn hp:prefetch off, "
            "or give the draft as a Hub id",
        )
    if reader.string("speculativeModelRevision") not in ("", "main"):
        reader.warn(
            "speculativeModelRevision",
            "ignored: an s3:// draft has no Hub revision; the copy takes the prefix as it is",
        )
    init_containers = settings.kubernetes.get("initContainers")
    names = (
        [c.get("name") for c in init_containers or [] if isinstance(c, Mapping)]
        if isinstance(init_containers, list)
        else []
    )
    if s3_draft.INIT_CONTAINER in names:
        reader.fail(
            "kubernetes.initContainers",
            f"{s3_draft.INIT_CONTAINER!r} is the name of the init container that copies the "
            "s3:// hp:speculativeModel; rename yours",
        )
