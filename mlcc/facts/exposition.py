"""How each engine's /metrics answers a scraper, and what the sample names become in each format.
Pure data; every row has its source (docs/metrics-facts.md has one table row per value, a test
keeps the two in step).

- vLLM (0.27.1, 0.34.0), vllm/entrypoints/serve/instrumentator/metrics.py `attach_router`:
  prometheus-fastapi-instrumentator's `expose()` adds a FastAPI `GET /metrics` route first, and
  its handler always answers `generate_latest(registry)` (the text format) with
  `CONTENT_TYPE_LATEST`, whatever the Accept header asks; the `make_asgi_app` Mount appended
  after it is reached by `/metrics/...` paths only (prometheus_fastapi_instrumentator 8.1.0,
  instrumentation.py `expose`).
- SGLang (0.5.17, 0.5.23), sglang/srt/utils/common.py `add_prometheus_middleware`: /metrics is a
  Mount of prometheus_client's `make_asgi_app`, which answers in the format `choose_encoder`
  picks from the Accept header (prometheus_client 0.26.0, exposition.py `choose_encoder`):
  OpenMetrics 1.0.0 when the header names `application/openmetrics-text` first, else text 0.0.4.
- prometheus_client 0.26.0 openmetrics/exposition.py `generate_latest`: with the default
  `underscores` escaping, each sample name is escaped with `_is_legacy_labelname_rune`, which
  has no `:`, so `sglang:num_queue_reqs` is written `sglang_num_queue_reqs` (the `# TYPE` line
  keeps the colon). The text format (exposition.py `generate_latest`) keeps every name that is a
  valid legacy metric name, colons included.
- A counter's samples are `<name>_total` in both formats (prometheus_client metrics.py `Counter`
  strips a `_total` the name ends with and the collector appends it); a histogram's are
  `<name>_bucket`, `<name>_sum`, `<name>_count`.
- Prometheus 2.42 (Debian's package) asks for OpenMetrics first: its scrape Accept header is
  `application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,
  text/plain;version=0.0.4;q=0.5,*/*;q=0.1` (measured: tests/observability/ record the header
  the fake engine receives from /usr/bin/prometheus).
- The collector of a HyperPod cluster (the `amazon-sagemaker-hyperpod-observability` add-on,
  which writes to an Amazon Managed Service for Prometheus workspace; the InferenceEndpointConfig
  CRD's `spec.metrics` is scraped "from sidecar and model container"): no AWS document, CLI or
  chart file names the format it negotiates (searched: the SageMaker developer guide's
  "Implementing inference observability on HyperPod clusters", aws/sagemaker-hyperpod-cli
  `src/sagemaker/hyperpod/observability/` and its Helm chart). Assumed: either format, so
  every query the program writes matches the names of both.
"""

from __future__ import annotations

from typing import Final

TEXT: Final = "text"  # the Prometheus text format 0.0.4 (and prometheus_client's 1.0.0)
OPENMETRICS: Final = "openmetrics"  # OpenMetrics 1.0.0 text
FORMATS: Final = (TEXT, OPENMETRICS)

# The formats each engine's /metrics can answer in.
SERVED_FORMATS: Final[dict[str, tuple[str, ...]]] = {
    "vllm": (TEXT,),
    "sglang": (TEXT, OPENMETRICS),
}
# The content types prometheus_client 0.26.0 answers with (exposition.py, openmetrics/exposition.py)
CONTENT_TYPES: Final = {
    TEXT: "text/plain; version=0.0.4; charset=utf-8",
    OPENMETRICS: "application/openmetrics-text; version=1.0.0; charset=utf-8",
}
# What Prometheus 2.42 sends (scrape/scrape.go `acceptHeader`, measured in tests/observability/).
PROMETHEUS_2_42_ACCEPT: Final = (
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
    "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
)
# What the HyperPod observability add-on's collector negotiates: no source says (see above).
HYPERPOD_COLLECTOR_FORMATS: Final = FORMATS

# The sample suffixes of each metric type (prometheus_client metrics.py, `_multi_samples`).
SAMPLE_SUFFIXES: Final[dict[str, tuple[str, ...]]] = {
    "counter": ("_total",),
    "gauge": ("",),
    "histogram": ("_bucket", "_sum", "_count"),
    "summary": ("", "_sum", "_count"),
}


def sample_name(name: str, suffix: str, exposition: str) -> str:
    """The name a sample of metric `name` has in one format (prometheus_client 0.26.0)."""
    written = name + suffix
    return written.replace(":", "_") if exposition == OPENMETRICS else written
