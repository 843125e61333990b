"""hp:waitForEndpoints and hp:deployTimeoutMinutes: how long `pulumi up` waits for the endpoints.

The same minutes are each InferenceEndpointConfig's `maxDeployTimeInSeconds` (the operator's own
deadline), so the operator never gives up before `pulumi up` does, nor the other way round
(docs/deploy.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlcc.config.reader import Reader
from mlcc.config.scaling.autoscaling import INT32_MAX
from mlcc.config.schema import KEYS_BY_NAME

# Sized for a large target plus its draft, downloaded at start-up (no weight prefetch).
DEFAULT_TIMEOUT_MINUTES = int(str(KEYS_BY_NAME["deployTimeoutMinutes"].default))
# maxDeployTimeInSeconds is an int32 in the CRD.
MAX_TIMEOUT_MINUTES = INT32_MAX // 60


@dataclass(frozen=True)
class DeployWait:
    wait: bool = True
    timeout_minutes: int = DEFAULT_TIMEOUT_MINUTES

    @property
    def timeout_seconds(self) -> int:
        return self.timeout_minutes * 60


def parse_deploy_wait(reader: Reader) -> DeployWait:
    wait = reader.boolean("waitForEndpoints")
    minutes = reader.integer("deployTimeoutMinutes")
    if minutes is None:
        return DeployWait(wait)
    if not 1 <= minutes <= MAX_TIMEOUT_MINUTES:
        reader.fail(
            "deployTimeoutMinutes",
            f"must be 1 to {MAX_TIMEOUT_MINUTES} minutes (the CRD's maxDeployTimeInSeconds is an "
            f"int32), got {minutes}",
        )
        return DeployWait(wait)
    return DeployWait(wait, minutes)
