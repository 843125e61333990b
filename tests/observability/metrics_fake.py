"""A local fake of an engine's /metrics: the engines' real metric names (from
mlcc/facts/engine_metrics.json), scripted values, and the two formats prometheus_client writes.

Counters grow at a scripted rate per second from the moment the fake starts, so that a real
Prometheus's `rate()` and `increase()` over them give known figures; gauges hold scripted values.
`negotiate=True` answers as SGLang's `make_asgi_app` does (prometheus_client 0.26.0
exposition.py `choose_encoder`: OpenMetrics when the Accept header names
`application/openmetrics-text` with a version of 1.0.0 or more, or none, first; else text 0.0.4);
`negotiate=False` answers text whatever is asked, as vLLM's /metrics route does
(mlcc/facts/exposition.py). The text written follows prometheus_client 0.26.0's two
`generate_latest`: `# HELP`/`# TYPE` lines per family, `<name>_total` and `<name>_created` for a
counter, OpenMetrics sample names with `:` written `_` and a final `# EOF`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from mlcc.facts.engine_metrics import EngineMetric
from mlcc.facts.exposition import CONTENT_TYPES, OPENMETRICS, TEXT, sample_name

Labels = tuple[tuple[str, str], ...]


@dataclass
class Series:
    metric: EngineMetric
    labels: Labels
    value: float = 0.0  # a gauge's value; a counter's value at the start
    per_second: float = 0.0  # a counter's growth


@dataclass
class MetricsFake:
    """One engine pod's /metrics on 127.0.0.1."""

    series: list[Series]
    negotiate: bool
    accepts: list[str] = field(default_factory=list)  # the Accept header of every scrape
    started: float = field(default_factory=time.monotonic)
    reset_at: float | None = None  # counters restart from 0 at this many seconds (a restart)
    _server: ThreadingHTTPServer | None = None

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    def start(self) -> MetricsFake:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                accept = self.headers.get("Accept", "")
                fake.accepts.append(accept)
                exposition = choose_format(accept) if fake.negotiate else TEXT
                body = fake.render(exposition).encode()
                self.send_response(200)
                self.send_header("Content-Type", CONTENT_TYPES[exposition])
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.started = time.monotonic()
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def value(self, one: Series) -> float:
        if one.metric.type != "counter":
            return one.value
        elapsed = time.monotonic() - self.started
        if self.reset_at is not None and elapsed >= self.reset_at:
            return one.per_second * (elapsed - self.reset_at)
        return one.value + one.per_second * elapsed

    def render(self, exposition: str) -> str:
        lines: list[str] = []
        families: dict[str, list[Series]] = {}
        for one in self.series:
            families.setdefault(one.metric.name, []).append(one)
        for name, members in families.items():
            kind = members[0].metric.type
            counter = kind == "counter"
            # text: a counter's family is `<name>_total`, its `_created` samples a gauge family
            # after it; OpenMetrics: one family `<name>` (the TYPE line keeps the colon).
            family = name + "_total" if counter and exposition == TEXT else name
            lines.append(f"# HELP {family} {name} (scripted)")
            lines.append(f"# TYPE {family} {kind}")
            created: list[str] = []
            for one in members:
                sample = sample_name(name, "_total" if counter else "", exposition)
                lines.append(f"{sample}{_labels(one.labels)} {_number(self.value(one))}")
                if counter:
                    when = sample_name(name, "_created", exposition)
                    created.append(f"{when}{_labels(one.labels)} 1.7e+09")
            if created and exposition == TEXT:
                lines += [f"# HELP {name}_created {name} (scripted)"]
                lines += [f"# TYPE {name}_created gauge"]
            lines += created
        if exposition == OPENMETRICS:
            lines.append("# EOF")
        return "\n".join(lines) + "\n"


def choose_format(accept: str) -> str:
    """prometheus_client 0.26.0 `choose_encoder`, for the two formats it writes."""
    for accepted in accept.split(","):
        parts = [part.strip() for part in accepted.split(";")]
        if parts[0] != "application/openmetrics-text":
            continue
        version = next((p.split("=", 1)[1] for p in parts[1:] if p.startswith("version=")), "")
        if not version or tuple(int(n) for n in version.split(".") if n.isdigit()) >= (1, 0, 0):
            return OPENMETRICS
    return TEXT


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels)) + "}"


def _number(value: float) -> str:
    return repr(float(value))


def series_of(
    metrics: Mapping[str, EngineMetric],
    labels: Labels,
    values: Mapping[str, float],
    rates: Mapping[str, float],
) -> list[Series]:
    """One series per scripted metric: gauges from `values`, counters from `rates`."""
    found = [Series(metrics[name], labels, value=value) for name, value in values.items()]
    found += [Series(metrics[name], labels, per_second=rate) for name, rate in rates.items()]
    return found
