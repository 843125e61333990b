"""An Amazon Managed Service for Prometheus workspace as a query `Source`: its URL, and each
request signed with SigV4 (service `aps`) by botocore's own signer, with the credentials and
region botocore finds (environment, profile, SSO, instance role; the region from
`AWS_DEFAULT_REGION` or the profile, else `AWS_REGION`, else the stack's `aws:region`).

The workspace's query URL is `https://aps-workspaces.<region>.amazonaws.com/workspaces/<id>`
(AWS, Amazon Managed Service for Prometheus User Guide, "Query your Prometheus metrics";
botocore's `amp` endpoint rules name the same host). `AWS_ENDPOINT_URL_AMP`, botocore's
service-specific endpoint variable for `amp`, replaces the `https://aps-workspaces...` root, as
boto users redirect a client (a local fake in the tests, a VPC endpoint).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from mlcc.config.aws.environment import setup_failure
from mlcc.prometheus.api import QueryFailed, Signer, Source

SERVICE = "aps"
ENDPOINT_VARIABLE = "AWS_ENDPOINT_URL_AMP"
_WORKSPACE_ID = re.compile(r"ws-[0-9a-zA-Z-]{1,64}")
_WORKSPACE_URL = re.compile(
    r"https://aps-workspaces\.(?P<region>[a-z0-9-]+)\.amazonaws\.com(\.cn)?/workspaces/"
    r"(?P<id>ws-[0-9a-zA-Z-]{1,64})/?"
)


class AmpSetupError(Exception):
    """One line: why no signed source could be made (the flag, credentials or region)."""


def workspace_source(workspace: str, fallback_region: str | None) -> Source:
    """`--amp-workspace ID` or its URL, signed; the region from the URL, else botocore's
    configuration, else the stack's `aws:region`."""
    from botocore.exceptions import BotoCoreError
    from botocore.session import Session  # imported here: the rest of the CLI starts without it

    session = Session()
    try:
        return _signed_source(session, workspace, fallback_region)
    except (BotoCoreError, ValueError, TypeError) as error:  # a profile or AWS_* setting
        raise AmpSetupError(setup_failure(error)) from None


def _signed_source(session: Any, workspace: str, fallback_region: str | None) -> Source:
    if match := _WORKSPACE_URL.fullmatch(workspace):
        region: str | None = match.group("region")
        workspace_id = match.group("id")
    elif _WORKSPACE_ID.fullmatch(workspace):
        region = (
            session.get_config_variable("region")  # AWS_DEFAULT_REGION, the profile's region
            or os.environ.get("AWS_REGION")
            or fallback_region
        )
        workspace_id = workspace
    else:
        raise AmpSetupError(
            f"--amp-workspace must be a workspace ID (ws-...) or its query URL "
            f"(https://aps-workspaces.<region>.amazonaws.com/workspaces/ws-...), got {workspace!r}"
        )
    if not region:
        raise AmpSetupError(
            "no AWS region for the AMP workspace: set AWS_DEFAULT_REGION or AWS_REGION, a "
            "profile's region, or aws:region in the stack file"
        )
    root = os.environ.get(ENDPOINT_VARIABLE) or f"https://aps-workspaces.{region}.amazonaws.com"
    credentials = session.get_credentials()
    if credentials is None:
        raise AmpSetupError(
            "no AWS credentials to sign AMP queries with (aws configure, AWS_PROFILE, or "
            "aws sso login)"
        )
    url = f"{root.rstrip('/')}/workspaces/{workspace_id}"
    return Source(url, sigv4_signer(credentials, region), shown=f"AMP workspace {workspace_id}")


def sigv4_signer(credentials: object, region: str) -> Signer:
    def sign(url: str) -> Mapping[str, str]:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.exceptions import BotoCoreError

        request = AWSRequest(method="GET", url=url)
        try:
            frozen = credentials.get_frozen_credentials()  # type: ignore[attr-defined]
            SigV4Auth(frozen, SERVICE, region).add_auth(request)
        except BotoCoreError as error:  # expired SSO, a failing credential_process, ...
            raise QueryFailed(f"cannot sign the query: {error}") from None
        return {k: str(v) for k, v in request.headers.items()}

    return sign
