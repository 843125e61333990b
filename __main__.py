"""The Pulumi program: read the stack config, build the components, export the outputs."""

import pulumi

from mlcc import config, workload
from mlcc.components.endpoint import InferenceEndpoint, InferenceEndpointArgs
from mlcc.components.recommendation import speculative_settings

stack_config = config.from_pulumi().config
endpoint_workload = workload.from_config(stack_config)
# hp:optimize adds a recommendation job; explicit hp:speculative* keys still win.
speculative = speculative_settings(stack_config)
assert stack_config.image is not None  # config requires it until images are built here

endpoint = InferenceEndpoint(
    "endpoint",
    InferenceEndpointArgs(
        workload=endpoint_workload,
        image=stack_config.image,
        speculative=speculative.spec,
        hf_token=stack_config.hf_token,
    ),
)

pulumi.export("endpointName", endpoint.endpoint_name)
pulumi.export("namespace", endpoint.namespace)
pulumi.export("speculativeAlgorithm", speculative.spec.apply(lambda s: s.algorithm if s else "off"))
pulumi.export("speculativeSource", speculative.source)  # explicit | recommendation | none
if speculative.recommendation is not None:
    pulumi.export("speculativeRecommendationJob", speculative.recommendation.job_name)
pulumi.export("verifyEnvCommand", endpoint.verify_commands["env"])
pulumi.export("verifyLogCommand", endpoint.verify_commands["log"])
