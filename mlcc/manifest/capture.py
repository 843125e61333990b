"""The CR's spec.dataCapture for hp:capture: the SageMaker-endpoint tier into the stack's bucket.

Pure. Field names and bounds are the vendored CRD's (schemas/crds/inferenceendpointconfigs.yaml,
operator 3.3: dataCapture.s3Uri and dataCapture.sagemakerEndpoint{enabled,
initialSamplingPercentage, captureOptions, captureContentTypeHeader}). The operator writes each
tier under `{s3Uri}/{hash}/sme/` for this one (AWS docs "Data capture for inference on
HyperPod"), so each endpoint's records stay under its own prefix of the bucket.
"""

from __future__ import annotations

from mlcc.config.operator.capture import Capture

# The request and response bodies of the OpenAI-style API are application/json; a content type
# listed here is captured as text with encoding JSON, any other as BASE64 (SageMaker
# DataCaptureConfig.CaptureContentTypeHeader: "If no headers are specified SageMaker will by
# default base64 encode when capturing the data").
JSON_CONTENT_TYPES = ("application/json",)
CAPTURE_MODES = ("Input", "Output")


def prefix(endpoint_name: str) -> str:
    """The key prefix of one endpoint's captured objects in the stack's bucket."""
    return f"{endpoint_name}/"


def s3_uri(bucket: str, endpoint_name: str) -> str:
    """dataCapture.s3Uri of one endpoint (the CRD's pattern ^s3://([^/]+)(/[^,=]*)?$)."""
    return f"s3://{bucket}/{endpoint_name}"


def data_capture(capture: Capture, uri: str) -> dict[str, object]:
    """spec.dataCapture: the SageMaker-endpoint tier only, at the endpoint's sampling."""
    return {
        "s3Uri": uri,
        "sagemakerEndpoint": {
            "enabled": True,
            "initialSamplingPercentage": capture.sampling_percent,
            "captureOptions": [{"captureMode": mode} for mode in CAPTURE_MODES],
            "captureContentTypeHeader": {"jsonContentTypes": list(JSON_CONTENT_TYPES)},
        },
    }
