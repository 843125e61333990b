"""The Pulumi program: read the stack config, build the components, export the outputs."""

import pulumi

from mlcc import config, workload
from mlcc.components.endpoint import InferenceEndpoint, InferenceEndpointArgs

stack_config = config.from_pulumi().config
endpoint_workload = workload.from_config(stack_config)
assert stack_config.image is not None  # config requires it until images are built here

endpoint = InferenceEndpoint(
    "endpoint",
    InferenceEndpointArgs(
        workload=endpoint_workload,
        image=stack_config.image,
        speculative=stack_config.speculative,
        hf_token=stack_config.hf_token,
    ),
)

pulumi.export("endpointName", endpoint.endpoint_name)
pulumi.export("namespace", endpoint.namespace)
pulumi.export(
    "speculativeAlgorithm",
    stack_config.speculative.algorithm if stack_config.speculative else "off",
)
pulumi.export("verifyEnvCommand", endpoint.verify_commands["env"])
pulumi.export("verifyLogCommand", endpoint.verify_commands["log"])
