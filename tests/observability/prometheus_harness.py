"""A real Prometheus for the tests: Debian's /usr/bin/prometheus (2.42), started on 127.0.0.1 on
a free port with its storage in a temporary folder, scraping local fakes every second.

`make test` (and .ci/run) install the package when it is missing; without it the tests that
need it fail with one line saying how to install it (the suite never skips).
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROMETHEUS = Path("/usr/bin/prometheus")
SCRAPE_INTERVAL_S = 1
START_TIMEOUT_S = 60.0


class PrometheusMissing(RuntimeError):
    pass


@dataclass(frozen=True)
class Target:
    job: str
    port: int
    labels: Mapping[str, str]  # what Kubernetes discovery would attach: namespace, pod


@dataclass
class RunningPrometheus:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query's result vector (raises on an error answer)."""
        answer = _get_json(f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
        assert answer["status"] == "success", answer
        result = answer["data"]["result"]
        assert isinstance(result, list)
        return result

    def scalar(self, expr: str) -> float | None:
        """The one value of a query that sums to one series; None for an empty vector."""
        result = self.query(expr)
        assert len(result) <= 1, result
        return float(result[0]["value"][1]) if result else None

    def wait_for_samples(self, jobs: list[str], count: int, timeout_s: float = 60.0) -> None:
        """Until every job has been scraped up `count` times in a row."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = {
                r["metric"]["job"]: float(r["value"][1])
                for r in self.query(f"count_over_time(up[{count * 3}s]) and up == 1")
            }
            if all(found.get(job, 0) >= count for job in jobs):
                return
            time.sleep(0.5)
        raise AssertionError(f"prometheus did not scrape {jobs} {count} times: {self.tail()}")

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-2000:]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=20)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def config_text(targets: list[Target]) -> str:
    """prometheus.yml (JSON is YAML): every target one job, its labels set as discovery would."""
    jobs = [
        {
            "job_name": t.job,
            "static_configs": [{"targets": [f"127.0.0.1:{t.port}"], "labels": dict(t.labels)}],
        }
        for t in targets
    ]
    interval = f"{SCRAPE_INTERVAL_S}s"
    return json.dumps(
        {
            "global": {"scrape_interval": interval, "evaluation_interval": interval},
            "scrape_configs": jobs,
        }
    )


def start_prometheus(targets: list[Target], folder: Path) -> RunningPrometheus:
    if not PROMETHEUS.is_file():
        raise PrometheusMissing(
            f"{PROMETHEUS} is missing: install Debian's package (`apt-get install -y "
            "prometheus`, which `make test` runs as root or with sudo); "
            "see docs/getting-started.md, Set-up"
        )
    config = folder / "prometheus.yml"
    config.write_text(config_text(targets))
    port, log = free_port(), folder / "prometheus.log"
    command = [
        str(PROMETHEUS),
        f"--config.file={config}",
        f"--storage.tsdb.path={folder / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--web.enable-lifecycle",
        "--storage.tsdb.retention.time=1h",
    ]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    running = RunningPrometheus(f"http://127.0.0.1:{port}", process, log)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"prometheus exited ({process.returncode}): {running.tail()}")
        try:
            with urllib.request.urlopen(f"{running.url}/-/ready", timeout=2) as answer:
                if answer.status == 200:
                    return running
        except OSError:
            time.sleep(0.2)
    running.stop()
    raise AssertionError(f"prometheus was not ready in {START_TIMEOUT_S:g} s: {running.tail()}")


def _get_json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        document = json.loads(answer.read())
    assert isinstance(document, dict)
    return document
