"""The Pulumi program: read the stack config, build the components, export the outputs."""

import pulumi

from mlcc.bench.client.access import port_forward_commands
from mlcc.components import draft_training
from mlcc.components import program as deployment
from mlcc.components.draft_reader import DraftReader, DraftReaderArgs
from mlcc.components.endpoint import InferenceEndpoint, InferenceEndpointArgs
from mlcc.components.namespace import EndpointNamespace, EndpointNamespaceArgs
from mlcc.components.observability import Observability, ObservabilityArgs
from mlcc.components.readiness import EndpointsReadiness, EndpointsReadinessArgs, ReadinessTarget
from mlcc.components.recommendation_job import recommendation_job, speculative_for_endpoint
from mlcc.config import stack as config
from mlcc.deploy.waiter import WaitSettings
from mlcc.manifest import draft_copy, workload
from mlcc.observability.delivery import delivery
from mlcc.preflight.cost.budget import check_budget
from mlcc.preflight.run import check_before_deploy

stack_config = config.from_pulumi().config
# The models (and the account) say yes before anything is created (docs/preflight.md).
check_before_deploy(stack_config)
# What it costs, and hp:budget's refusal when over it (docs/cost.md).
check_budget(stack_config)
# hp:draftTraining's job against the schema derived from AWS's model (docs/draft-training.md).
draft_training.check_before_deploy(stack_config)
platform = deployment.build(stack_config)
# hp:capture: the bucket the endpoints' traffic is captured into (docs/draft.md, "Capture").
captured = deployment.capture(stack_config, platform)
k8s = pulumi.ResourceOptions(providers=[platform.k8s_provider])
namespace = EndpointNamespace(
    "namespace",
    EndpointNamespaceArgs(
        stack_config.namespace, stack_config.hf_token, stack_config.hf_token_secret_name
    ),
    opts=k8s,
)
# The identity that copies s3:// drafts into the pods (create mode; docs/draft-serving.md).
draft_reads: list[pulumi.Resource] = []
if platform.oidc is not None and (heads := draft_copy.heads(stack_config)):
    draft_reads = DraftReader(
        "draft-reader",
        DraftReaderArgs(
            stack_config.namespace,
            heads,
            *platform.oidc,
            tags=stack_config.infrastructure.tag_map,
            depends_on=namespace.resources,
        ),
        k8s,
    ).resources
# hp:draftTraining: an EAGLE-3 head trained on the cluster (docs/draft-training.md).
training = draft_training.declare(stack_config, platform, namespace.resources, k8s)
if training is not None and training.policy_arn is not None:
    pulumi.export("draftTrainingPolicyArn", training.policy_arn)
# hp:observability: the speculation alert rules and dashboard (docs/observability.md).
observed = delivery(stack_config)
if observed.prometheus_rule or observed.dashboard_config_map or observed.amp:
    same_namespace = stack_config.observability.namespace in ("", stack_config.namespace)
    Observability(
        "observability",
        ObservabilityArgs(
            observed,
            tags=stack_config.infrastructure.tag_map,
            depends_on=namespace.resources if same_namespace else [],
        ),
        opts=k8s,
    )
# hp:optimize runs a recommendation job only for endpoints without explicit hp:speculative* keys.
needs_job = [e for e in stack_config.endpoints if e.speculative is None and not e.baseline_of]
job = recommendation_job(
    stack_config.stack, stack_config.optimize, stack_config.primary.engine, bool(needs_job)
)

# `kubectl port-forward` lines for `mlcc bench`: local ports 8080, 8081, ... in endpoint order.
forwards = port_forward_commands(stack_config.namespace, [e.name for e in stack_config.endpoints])
summaries: dict[str, dict[str, pulumi.Output[str]]] = {}
readiness: list[ReadinessTarget] = []
for endpoint in stack_config.endpoints:
    wiring = speculative_for_endpoint(
        None if endpoint.baseline_of else job,
        endpoint.speculative,
        endpoint.engine,
        endpoint.engine_release,
    )
    component = InferenceEndpoint(
        endpoint.resource_name,
        InferenceEndpointArgs(
            workload=workload.from_endpoint(stack_config, endpoint),
            image=platform.images[endpoint.engine_release].ref,
            speculative=wiring.spec,
            depends_on=[
                *platform.endpoint_depends_on,
                *namespace.resources,
                *captured.depends_on,
                *draft_reads,
            ],
            capture_uri=captured.uris.get(endpoint.name),
        ),
        opts=k8s,
    )
    readiness.append(
        ReadinessTarget(component.custom_resource, stack_config.namespace, endpoint, wiring.spec)
    )
    summaries[endpoint.name] = {
        "speculativeAlgorithm": wiring.spec.apply(lambda s: s.algorithm if s else "off"),
        "speculativeSource": wiring.source,  # explicit | recommendation | none
        "verifyEnvCommand": pulumi.Output.from_input(component.verify_commands["env"]),
        "verifyLogCommand": pulumi.Output.from_input(component.verify_commands["log"]),
        "portForwardCommand": pulumi.Output.from_input(forwards[endpoint.name]),
    }

# `pulumi up` ends when every endpoint serves, or fails with the reason (docs/deploy.md).
if stack_config.deploy_wait.wait:
    wait = WaitSettings(timeout_s=stack_config.deploy_wait.timeout_seconds)
    EndpointsReadiness(
        "readiness",
        EndpointsReadinessArgs(readiness, platform.kubeconfig, wait, platform.kube_context),
    )

for output_name, value in platform.outputs.items():
    pulumi.export(output_name, value)
pulumi.export("namespace", stack_config.namespace)
# The first endpoint's figures under the names single-endpoint stacks have always exported.
primary = stack_config.primary.name
pulumi.export("endpointName", primary)
for output_name, value in summaries[primary].items():
    pulumi.export(output_name, value)
pulumi.export("endpoints", summaries)
if job is not None:
    pulumi.export("speculativeRecommendationJob", job.job_name)
