"""scripts/engine_images.py reads each release's image CUDA version from the engine's own files;
the checked-in engine_images.json is its output for the supported releases."""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
from pathlib import Path

import engine_images as script

from mlcc.facts import nvidia

DOCKERFILE = "# comment\nARG PYTHON_VERSION=3.12\nARG CUDA_VERSION=13.9.4\nFROM nvidia/cuda\n"
PIPELINE = (
    "steps:\n"
    '  - label: "Build wheel - x86_64 - CUDA 13.0"\n'
    "    commands: docker build --build-arg CUDA_VERSION=13.0.1 .\n"
    '  - label: "Build release image - x86_64 - CUDA 13.0"\n'
    "    commands:\n"
    "      - |\n"
    "        docker build \\\n"
    "          --build-arg CUDA_VERSION=13.9.2 \\\n"
    '  - label: "Build release image - x86_64 - CUDA 12.9"\n'
    "          --build-arg CUDA_VERSION=12.9.1 \\\n"
)


def sdist(folder: Path, version: str, files: dict[str, str]) -> Path:
    path = folder / f"vllm-{version}.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"vllm-{version}/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_a_vllm_sdist_gives_the_release_build_and_the_dockerfile_default(tmp_path: Path) -> None:
    version_file = "__commit_id__ = commit_id = 'gabc1234'\n"
    files = {"docker/Dockerfile": DOCKERFILE, ".buildkite/release-pipeline.yaml": PIPELINE}
    path = sdist(tmp_path, "9.9.9", {**files, "vllm/_version.py": version_file})
    row = script.row("vllm", "9.9.9", path)
    assert row["dockerfile_cuda"] == {"value": "13.9.4", "path": "docker/Dockerfile", "line": 3}
    assert row["release_build_cuda"] == {
        "value": "13.9.2",
        "path": ".buildkite/release-pipeline.yaml",
        "line": 8,
    }
    assert row["cuda"] == "13.9.2"
    assert row["base_image"] == "vllm/vllm-openai:v9.9.9"
    assert "vllm-9.9.9.tar.gz" in str(row["via"]) and "commit abc1234" in str(row["via"])


def test_without_a_release_step_the_dockerfile_default_is_the_images(tmp_path: Path) -> None:
    row = script.row("vllm", "9.9.9", sdist(tmp_path, "9.9.9", {"docker/Dockerfile": DOCKERFILE}))
    assert (row["cuda"], row["release_build_cuda"]) == ("13.9.4", None)


def test_no_dockerfile_is_unknown(tmp_path: Path) -> None:
    row = script.row("vllm", "9.9.9", sdist(tmp_path, "9.9.9", {"README.md": "x"}))
    assert row["cuda"] is None and "not found, unknown" in str(row["via"])
    assert script.row("vllm", "9.9.9", None)["cuda"] is None


def test_an_sglang_git_tag_records_the_dockerfile_but_keeps_the_image_cuda_unknown(
    tmp_path: Path,
) -> None:
    work = tmp_path / "sglang"
    (work / "docker").mkdir(parents=True)
    (work / "docker" / "Dockerfile").write_text(DOCKERFILE)

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(work), *args], check=True, capture_output=True)

    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "release")
    git("tag", "v0.9.9")
    row = script.row("sglang", "0.9.9", work / ".git")
    assert row["dockerfile_cuda"] == {"value": "13.9.4", "path": "docker/Dockerfile", "line": 3}
    assert row["cuda"] is None
    assert row["via"] == "git tag v0.9.9"
    assert script.row("sglang", "1.0.0", work / ".git")["dockerfile_cuda"] is None  # no tag


def test_the_checked_in_table_covers_the_supported_releases() -> None:
    data = json.loads((Path(script.OUT)).read_text())["releases"]
    assert [(r["engine"], r["version"]) for r in data] == [
        (engine, version) for engine, versions in script.SUPPORTED.items() for version in versions
    ]
    for entry, image in zip(data, nvidia.ENGINE_IMAGES, strict=True):
        assert entry["base_image"] == script.base_image(entry["engine"], entry["version"])
        assert image.cuda == entry["cuda"]
