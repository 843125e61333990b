"""scripts/engine_metrics.py reads each metric a wheel's code defines, as prometheus_client
builds it: direct calls, the `_*_cls` aliases and vLLM's `(name, documentation)` pairs."""

from __future__ import annotations

import zipfile
from pathlib import Path

import engine_metrics as script
import pytest

VLLM_SOURCE = """
import prometheus_client
from prometheus_client import Gauge


class Logger:
    _gauge_cls = Gauge
    _counter_cls = prometheus_client.Counter

    def __init__(self):
        self.waiting = self._gauge_cls(name="vllm:num_requests_waiting", documentation="d")
        self.tokens = self._counter_cls(name="vllm:generation_tokens_total", documentation="d")
        self.other = Gauge("http_requests", "not the engine's prefix")
        specs = [("vllm:spec_decode_num_drafts", "Number of drafts.")]
        self.counters = [self._counter_cls(name=n, documentation=d) for n, d in specs]
        self.ttft = prometheus_client.Histogram(name="vllm:time_to_first_token_seconds")
"""


def wheel(folder: Path, name: str, members: dict[str, str]) -> Path:
    path = folder / name
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in members.items():
            archive.writestr(member, text)
    return path


def test_it_reads_names_types_and_files(tmp_path: Path) -> None:
    path = wheel(
        tmp_path,
        "vllm-9.9.9-cp38-abi3-manylinux_2_28_x86_64.whl",
        {"vllm/v1/metrics/loggers.py": VLLM_SOURCE, "vllm/broken.py": "def ("},
    )
    table = script.release_table(path)
    source = "vllm/v1/metrics/loggers.py"
    assert table == {
        "version": "9.9.9",
        "scanned": "vllm/",
        "metrics": {
            "vllm:generation_tokens": {"type": "counter", "source": source},
            "vllm:num_requests_waiting": {"type": "gauge", "source": source},
            "vllm:spec_decode_num_drafts": {"type": "counter", "source": source},
            "vllm:time_to_first_token_seconds": {"type": "histogram", "source": source},
        },
    }


def test_a_wheel_without_metrics_is_refused(tmp_path: Path) -> None:
    path = wheel(tmp_path, "sglang-9.9.9-py3-none-any.whl", {"sglang/srt/x.py": "A = 1\n"})
    with pytest.raises(SystemExit, match=r"no sglang: metric found in sglang-9\.9\.9"):
        script.release_table(path)


def test_merging_keeps_the_other_releases_in_version_order(tmp_path: Path) -> None:
    document = script.read_document()
    assert document is not None
    path = wheel(
        tmp_path,
        "vllm-0.30.0-cp38-abi3-manylinux_2_28_x86_64.whl",
        {"vllm/v1/metrics/loggers.py": VLLM_SOURCE},
    )
    merged = script.merged(document, [path])
    versions = list(merged["engines"]["vllm"])  # type: ignore[index]
    assert versions == ["0.27.1", "0.30.0", "0.34.0"]
    assert script.without(merged, "vllm", "0.30.0") == document
