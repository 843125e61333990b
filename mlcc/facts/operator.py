"""What the HyperPod inference operator writes and does. Pure data; every row has its source.

The program reads every fact about the operator's behaviour from here, and docs/operator-facts.md
has one table row per literal, with its source (a test keeps the two in step). Where no source
exists the row says "assumed", and the code that reads the fact treats it defensively: it accepts
every spelling seen, and never holds back success waiting on an unsourced field.

The sources: the operator's CRDs as its Helm chart installs them (schemas/crds/, with commit and
sha256 in SOURCE.md), the chart's RBAC, and the HyperPod CLI (aws/sagemaker-hyperpod-cli) code,
integration tests and walkthrough.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StateField:
    """A status field and the values it takes: which mean done, failed, or still working.

    A value in none of the three is one no source lists: shown as it is and waited on.
    """

    path: str
    ready: tuple[str, ...]
    failed: tuple[str, ...]
    working: tuple[str, ...]
    other: tuple[str, ...] = ()  # listed by a source, but neither done nor failed for a deploy

    @property
    def known(self) -> tuple[str, ...]:
        return (*self.ready, *self.failed, *self.working, *self.other)


# --- the custom resource (the CRD's group, version, plural and kind) -------------------------

GROUP = "inference.sagemaker.aws.amazon.com"
VERSION = "v1"
PLURAL = "inferenceendpointconfigs"
KIND = "InferenceEndpointConfig"

# --- InferenceEndpointConfig status (the CRD's enums and fields) ------------------------------

# The CRD's status.state enum.
ENDPOINT_STATE = StateField(
    path="status.state",
    ready=("DeploymentComplete",),
    failed=("DeploymentFailed",),
    working=("DeploymentPending", "DeploymentInProgress"),
    other=("DeletionPending", "DeletionInProgress", "DeletionFailed", "DeletionComplete"),
)
# A free string in the CRD; its values from the HyperPod CLI: `hyp describe` colours
# DeploymentComplete green and DeploymentInProgress yellow, the integration tests fail on
# DeploymentFailed.
DEPLOYMENT_OVERALL_STATE = StateField(
    path="status.deploymentStatus.deploymentObjectOverallState",
    ready=("DeploymentComplete",),
    failed=("DeploymentFailed",),
    working=("DeploymentInProgress",),
)
# A free string in the InferenceEndpointConfig CRD. The operator's SageMakerEndpointRegistration
# CRD gives its values as an enum; the HyperPod CLI's integration tests and SDK notebooks wait
# for CreationCompleted in this field, and `hyp describe` colours it green.
SAGEMAKER_STATE = StateField(
    path="status.endpoints.sagemaker.state",
    ready=("CreationCompleted", "UpdateCompleted"),
    failed=("CreationFailed", "UpdateFailed"),
    working=("CreationInProgress", "UpdateInProgress"),
    other=("DeletionInProgress", "DeletionFailed", "DeletionCompleted"),
)
# The CRD's status.dnsStatus.dnsHealth enum.
DNS_HEALTH = StateField(
    path="status.dnsStatus.dnsHealth",
    ready=("Active",),
    failed=("Error",),
    working=("Pending",),
)
# The CRD: spec.endpointName "Defaults to empty string which represents that Sagemaker endpoint
# will not be created"; spec.dnsConfig "Requires tlsConfig.customCertificateConfig".
NO_SAGEMAKER_ENDPOINT = ""
# Messages: status.deploymentStatus{reason, message} (the CRD), status.conditions (the CRD's
# metav1.Condition list; `hyp describe` prints it as the SageMaker endpoint's conditions),
# status.dnsStatus.message (the CRD).
CONDITION_FAILING = "False"  # metav1.Condition status enum: True, False, Unknown

# The IEC CRD declares status.observedGeneration ("Latest generation reconciled by controller");
# no source shows the operator writing it (the CLI's hp_endpoint_config.py only declares it, no
# test, example or notebook output shows it): read when written, a missing one never holds
# success. The sign of the new spec then: the pods' worker runs spec.worker.image with every
# spec.worker.environmentVariables entry (the CRD: "List of environment variables to set in the
# container"; mlcc/deploy/new_spec.py).
OBSERVED_GENERATION_FIELD = "status.observedGeneration"

# --- the endpoint's pods and Deployment -------------------------------------------------------

# The CRD's scale subresource: labelSelectorPath .status.selector ("LabelSelector for the
# deployment").
POD_SELECTOR_FIELD = "status.selector"
# HPEndpoint.list_pods (the CLI's `hyp list-pods hyp-custom-endpoint`) takes a namespace's pods
# whose label `app` is the endpoint's name.
POD_NAME_LABEL = "app"
# The CRD: status.deploymentStatus.name, "Name of the Deployment Object". It is the endpoint's
# name: the CLI walkthrough shows KEDA's target `Deployment/test-custom-endpoint-init-scale` and
# a pod `test-custom-endpoint-76588dc9-tzf89` for the endpoints of those names.
DEPLOYMENT_NAME_FIELD = "status.deploymentStatus.name"

# --- the operator itself --------------------------------------------------------------------

# The CLI's OPERATOR_NAMESPACE (inference/config/constants.py); the add-on's service accounts.
OPERATOR_NAMESPACE = "hyperpod-inference-system"
# The EKS add-on's controller: its Deployment and the service account its execution role trusts.
# The chart's migration/helm_to_addon.sh rewrites the Helm chart's trust
# (`...:hyperpod-inference-operator-controller-manager`) to this name, and deletes the add-on's
# Deployment of this name to go back.
OPERATOR_CONTROLLER = "hyperpod-inference-controller-manager"
# The chart's ClusterRole grants update on inferenceendpointconfigs/finalizers: the operator
# holds the endpoint with a finalizer until it has removed what it made. The finalizer's name
# is not in any source (assumed unknown): deletion waits for every finalizer, whatever its name.
FINALIZERS_RESOURCE = "inferenceendpointconfigs/finalizers"

# --- what the operator adds to the engine ---------------------------------------------------

# With spec.kvCacheSpec the operator configures vLLM's KV connector (LMCache) itself, so a user's
# --kv-transfer-config beside it loses one of the two. Assumed: no source states that the
# operator appends this flag. Seen: the chart's KV-cache samples
# (config/samples/v1_llama31_8b_kv_cache_l1_l2.yaml) and aws-samples/llm_model_hub
# hyperpod_docs/ISSUES_FIXED.md (issues 17, 18) give kvCacheSpec and no connector flag, yet
# LMCache runs (vLLM loads it only as the connector of --kv-transfer-config);
# aws/sagemaker-hyperpod-cli#431 says the operator forces its own connector.
KV_CACHE_CONNECTOR_FLAG = "kv-transfer-config"
# The operator's own readiness probe waits the Kubernetes default of 1 s (the CRD's probe
# timeoutSeconds "Defaults to 1 second"; aws-samples/llm_model_hub ISSUES_FIXED.md issue 6).
OPERATOR_PROBE_TIMEOUT_SECONDS = 1

# --- data capture -----------------------------------------------------------------------------

# The IEC CRD's spec.dataCapture tiers (its fields), and the folder each writes its records in:
# {s3Uri}/{hash}/<folder>/, the hash derived from the cluster ARN, namespace, CRD type and name
# (AWS docs "Data capture for inference on HyperPod", its tier table).
CAPTURE_TIER_FOLDERS = {"sagemakerEndpoint": "sme", "loadBalancer": "alb", "modelPod": "pod"}
