"""The `hp:*` keys of the operator's features (docs/operator-features.md), for the key table.

Plain rows `(name, cli type, default, description, per endpoint)`; the schema turns them into
its `Key`s, after the endpoint keys and before the stack keys. Every per-endpoint key may be
set at the top level or in an `hp:endpoints` entry (the entry wins).
"""

from __future__ import annotations

from typing import Literal

CliType = Literal["string", "integer", "boolean"] | None
Row = tuple[str, CliType, object, str, bool]

# The operator version of the vendored CRD (schemas/crds/SOURCE.md).
VENDORED_OPERATOR_VERSION = "3.3"

ROWS: tuple[Row, ...] = (
    (
        "instanceTypes",
        None,
        [],
        "Ordered fallback list of instance types (the operator takes the first one with room); "
        "exclusive with hp:instanceType. All must have the same GPU count and GPU memory.",
        True,
    ),
    (
        "kvCache",
        None,
        {},
        "Managed tiered KV cache (vLLM only): {l1 (true), l2Backend (tieredstorage|redis), "
        "l2Url, configFile}; empty = none.",
        True,
    ),
    (
        "routing",
        "string",
        "",
        "Intelligent routing: prefixaware, kvaware, session or roundrobin; empty = none. "
        "Adding or removing it replaces the endpoint.",
        True,
    ),
    (
        "probes",
        None,
        {},
        "Container probes: the program's (startup sized for loading the target and draft, "
        "5 s timeouts) with the given {startup, readiness, liveness} Kubernetes Probe fields "
        "laid over them; operator = the operator's own (no probes rendered).",
        True,
    ),
    (
        "requestLimits",
        None,
        {},
        "Per-pod limits of the operator's proxy: {maxConcurrentRequests, maxQueueSize, "
        "overflowStatusCode (429)}; empty = none.",
        True,
    ),
    (
        "tls",
        None,
        {},
        "TLS of the endpoint: {acmCertificateArn, domainName} for your own certificate, "
        "certificateOutputS3Uri for the generated one; empty = the operator's bucket.",
        True,
    ),
    (
        "dnsHostedZoneId",
        "string",
        "",
        "Route 53 hosted zone (Z...) for a record of hp:tls.domainName; empty = no record.",
        True,
    ),
    (
        "sagemakerEndpoint",
        "boolean",
        True,
        "Register a SageMaker endpoint of the same name for the endpoint.",
        True,
    ),
    (
        "dataCapture",
        None,
        {},
        "Data capture of the CRD's spec.dataCapture: {s3Uri, sagemakerEndpoint, loadBalancer, "
        "modelPod}; empty = none.",
        True,
    ),
    (
        "capture",
        None,
        {},
        "Capture the endpoint's requests and responses into a bucket the stack creates "
        "(docs/draft.md): {samplingPercent (1-100, default 100), retentionDays (default 30)}; "
        "the SageMaker-endpoint tier, so hp:sagemakerEndpoint must stay true; exclusive with "
        "hp:dataCapture; not in Kubernetes-only mode. Empty = none.",
        True,
    ),
    (
        "loadBalancer",
        None,
        {},
        "ALB settings: {healthCheckPath, routingAlgorithm (least_outstanding_requests|"
        "round_robin), idleTimeoutSeconds (1-4000)}; empty = the engine's health path.",
        True,
    ),
    (
        "modelVersion",
        "string",
        "",
        "Version of the SageMaker model (1.2.3); empty = none.",
        True,
    ),
    (
        "endpointTags",
        None,
        {},
        "Tags of the SageMaker endpoint (a map); empty = none.",
        True,
    ),
    (
        "env",
        None,
        {},
        "Extra container environment variables (a map of strings); the program's own "
        "(SM_*, HP_*, HF_TOKEN) and LMCACHE_* are refused.",
        True,
    ),
    (
        "containerPort",
        None,
        "",
        "Port the serve wrapper listens on (integer); empty = 8080.",
        True,
    ),
    (
        "modelVolumeMount",
        None,
        {},
        "The model volume: {name, mountPath}; empty = model-weights at /opt/ml/model.",
        True,
    ),
    (
        "resources",
        None,
        {},
        "Extra container resources {limits, requests} (cpu, memory, vpc.amazonaws.com/efa, ...); "
        "the GPUs are hp:gpuCount's.",
        True,
    ),
    (
        "workerArgs",
        None,
        [],
        "Engine arguments appended by the serve wrapper (a list: --flag, value, ...); checked "
        "like hp:engineArgs.",
        True,
    ),
    (
        "workerCommand",
        None,
        [],
        "Refused when set: a container command replaces the serve wrapper, and with it the "
        "speculative settings.",
        True,
    ),
    ("workingDir", "string", "", "Working directory of the container; empty = the image's.", True),
    (
        "metrics",
        None,
        {},
        "Metrics scraping: {enabled (true), scrapeIntervalSeconds (15), path, port}; "
        "autoscaling needs it enabled.",
        True,
    ),
    (
        "invocationPath",
        "string",
        "",
        "Path the operator sends invocations to; empty = v1/chat/completions.",
        True,
    ),
    (
        "kubernetes",
        None,
        {},
        "Pod customizations of spec.kubernetes: {initContainers, volumes, serviceAccountName, "
        "schedulerName}; empty = none.",
        True,
    ),
    (
        "nodeAffinity",
        None,
        {},
        "Kubernetes NodeAffinity for the model pods; each required term also keeps the instance "
        "types. Empty = instanceType(s) only.",
        True,
    ),
    (
        "initialReplicaCount",
        None,
        "",
        "The CRD's deprecated InitialReplicaCount (integer; no effect since operator 3.2).",
        True,
    ),
    (
        "prefetch",
        "boolean",
        False,
        "Let the operator's init container download the target to the model volume first.",
        True,
    ),
    (
        "modelCache",
        None,
        {},
        "Operator 3.3 caches: {imageCache, weightsCache (booleans), hostPath "
        "(/opt/dlami/nvme)}; empty = none.",
        True,
    ),
    (
        "pdSpec",
        None,
        {},
        "Disaggregated prefill/decode (the CRD's spec.pdSpec, vLLM on EFA types); with "
        "speculation only when hp:experimental is true.",
        True,
    ),
    (
        "experimental",
        "boolean",
        False,
        "Allow combinations with no evidence they work (hp:pdSpec with speculation).",
        True,
    ),
    (
        "operatorVersion",
        "string",
        VENDORED_OPERATOR_VERSION,
        "Version of the inference operator the endpoints run on (major.minor); features it "
        "lacks are refused.",
        False,
    ),
)
