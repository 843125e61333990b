"""The Pulumi program: read the stack config, build the components, export the outputs."""

import pulumi

from mlcc import config, deployment, workload
from mlcc.components.endpoint import InferenceEndpoint, InferenceEndpointArgs
from mlcc.components.recommendation_job import recommendation_job, speculative_for_endpoint

stack_config = config.from_pulumi().config
endpoint_workload = workload.from_config(stack_config)
# hp:optimize adds a recommendation job unless explicit hp:speculative* keys make it needless.
recommendation = recommendation_job(
    stack_config.stack,
    stack_config.optimize,
    stack_config.engine,
    needed=stack_config.speculative is None,
)
speculative = speculative_for_endpoint(
    recommendation, stack_config.speculative, stack_config.engine, stack_config.engine_release
)
platform = deployment.build(stack_config)

endpoint = InferenceEndpoint(
    "endpoint",
    InferenceEndpointArgs(
        workload=endpoint_workload,
        image=platform.image.ref,
        speculative=speculative.spec,
        hf_token=stack_config.hf_token,
    ),
    opts=pulumi.ResourceOptions(
        providers=[platform.k8s_provider], depends_on=platform.endpoint_depends_on
    ),
)

for output_name, value in platform.outputs.items():
    pulumi.export(output_name, value)
pulumi.export("endpointName", endpoint.endpoint_name)
pulumi.export("namespace", endpoint.namespace)
pulumi.export("speculativeAlgorithm", speculative.spec.apply(lambda s: s.algorithm if s else "off"))
pulumi.export("speculativeSource", speculative.source)  # explicit | recommendation | none
if recommendation is not None:
    pulumi.export("speculativeRecommendationJob", recommendation.job_name)
pulumi.export("verifyEnvCommand", endpoint.verify_commands["env"])
pulumi.export("verifyLogCommand", endpoint.verify_commands["log"])
