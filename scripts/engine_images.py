#!/usr/bin/env python3
"""Regenerate mlcc/facts/engine_images.json: each supported engine release's base image and the
CUDA version of that image, read from the engine's own files at the release.

    python3 scripts/engine_images.py \\
        vllm==0.27.1=/tmp/sdist/vllm-0.27.1.tar.gz vllm==0.34.0=/tmp/sdist/vllm-0.34.0.tar.gz \\
        sglang==0.5.17=/path/to/sglang.git sglang==0.5.23=/path/to/sglang.git

Each source is either the release's source distribution from PyPI (vLLM publishes one, built
from the release tag; setuptools-scm puts every tracked file in it, docker/ included) or a git
directory of the engine's repository (`fetch github:...`, a clone), read with
`git show v<VERSION>:docker/Dockerfile`. A supported release given no source, or whose Dockerfile
cannot be read, gets a row with `cuda: null` ("unknown"); the CUDA rule never refuses on it.

- The base image: the `FROM` line of images/<engine>/Dockerfile (this repository), with
  `${ENGINE_VERSION}` replaced by the release, e.g. vllm/vllm-openai:v0.34.0.
- `dockerfile_cuda`: the `ARG CUDA_VERSION=` default of the engine's docker/Dockerfile.
- `release_build_cuda`: vLLM only, the `--build-arg CUDA_VERSION=` of the release pipeline's
  step "Build release image - x86_64 - CUDA ..." (.buildkite/release-pipeline.yaml), the build
  whose image .buildkite/scripts/publish-release-images.sh pushes as vllm/vllm-openai:v<VERSION>
  (the default CUDA family, no tag suffix). It can differ from the Dockerfile's default in the
  patch number.
- `cuda`: the image's CUDA version: the release build's when found; else, for vLLM, the
  Dockerfile's default. SGLang's published tags are built by its release workflow with an
  explicit `--build-arg CUDA_VERSION` per CUDA variant (.github/workflows/_docker-build-and-
  publish.yml), which this script does not read: an SGLang row records the Dockerfile's default
  in `dockerfile_cuda` and keeps `cuda` unknown.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "mlcc" / "facts" / "engine_images.json"
REPOSITORIES = {"vllm": "vllm-project/vllm", "sglang": "sgl-project/sglang"}
# The releases this project supports (issue 33): the DLC-pinned ones and the newest on PyPI.
SUPPORTED = {"vllm": ("0.27.1", "0.34.0"), "sglang": ("0.5.17", "0.5.23")}
DOCKERFILE = "docker/Dockerfile"
PIPELINE = ".buildkite/release-pipeline.yaml"
_ARG_CUDA = re.compile(r"^\s*ARG\s+CUDA_VERSION=(\d+\.\d+(?:\.\d+)?)\s*$")
_BUILD_ARG_CUDA = re.compile(r"--build-arg CUDA_VERSION=(\d+\.\d+(?:\.\d+)?)")
_RELEASE_STEP = re.compile(r'label:\s*"Build release image - x86_64 - CUDA [\d.]+"')
_FROM = re.compile(r"^FROM\s+(?:--platform=\S+\s+)?(\S+)\s*$")


@dataclass(frozen=True)
class Found:
    value: str
    path: str
    line: int


def base_image(engine: str, version: str) -> str:
    """The FROM of images/<engine>/Dockerfile for this release."""
    for text in (ROOT / "images" / engine / "Dockerfile").read_text().splitlines():
        match = _FROM.match(text)
        if match:
            return match.group(1).replace("${ENGINE_VERSION}", version)
    raise SystemExit(f"images/{engine}/Dockerfile has no FROM line")


def first_match(text: str, pattern: re.Pattern[str], path: str, after: int = 0) -> Found | None:
    for number, line in enumerate(text.splitlines(), start=1):
        match = pattern.search(line) if number > after else None
        if match:
            return Found(match.group(1), path, number)
    return None


def release_build(text: str) -> Found | None:
    """The CUDA_VERSION build-arg of the x86_64 default-family release image step."""
    step = first_match(text, re.compile(f"({_RELEASE_STEP.pattern})"), PIPELINE)
    return first_match(text, _BUILD_ARG_CUDA, PIPELINE, after=step.line) if step else None


def read_sdist(path: Path, engine: str, version: str) -> tuple[dict[str, str], str]:
    """The files we read from a PyPI sdist, and how the row names that source."""
    prefix = f"{engine}-{version}/"
    files: dict[str, str] = {}
    with tarfile.open(path) as archive:
        for name in (DOCKERFILE, PIPELINE, f"{engine}/_version.py"):
            try:
                member = archive.extractfile(prefix + name)
            except KeyError:
                continue
            if member is not None:
                files[name] = member.read().decode()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    commit = re.search(r"commit_id = '(g[0-9a-f]+)'", files.get(f"{engine}/_version.py", ""))
    via = f"PyPI sdist {path.name} (sha256 {digest[:16]}...)"
    if commit:
        via += f", built from commit {commit.group(1)[1:]}"
    return files, via


def read_git(path: Path, version: str) -> tuple[dict[str, str], str]:
    files: dict[str, str] = {}
    for name in (DOCKERFILE, PIPELINE):
        shown = subprocess.run(
            ["git", "--git-dir", str(path), "show", f"v{version}:{name}"],
            capture_output=True,
            text=True,
            check=False,
        )
        if shown.returncode == 0:
            files[name] = shown.stdout
    return files, f"git tag v{version}"


def row(engine: str, version: str, source: Path | None) -> dict[str, object]:
    entry: dict[str, object] = {
        "engine": engine,
        "version": version,
        "base_image": base_image(engine, version),
        "repository": REPOSITORIES[engine],
        "tag": f"v{version}",
        "cuda": None,
        "dockerfile_cuda": None,
        "release_build_cuda": None,
        "via": "no source given: unknown",
    }
    if source is None:
        return entry
    is_sdist = source.suffixes[-2:] == [".tar", ".gz"]
    files, via = read_sdist(source, engine, version) if is_sdist else read_git(source, version)
    entry["via"] = via
    dockerfile = first_match(files.get(DOCKERFILE, ""), _ARG_CUDA, DOCKERFILE)
    build = release_build(files.get(PIPELINE, "")) if engine == "vllm" else None
    for key, found in (("dockerfile_cuda", dockerfile), ("release_build_cuda", build)):
        if found:
            entry[key] = {"value": found.value, "path": found.path, "line": found.line}
    chosen = build or (dockerfile if engine == "vllm" else None)
    entry["cuda"] = chosen.value if chosen else None
    if not files.get(DOCKERFILE):
        entry["via"] = f"{via}: {DOCKERFILE} not found, unknown"
    return entry


def parse_sources(argv: list[str]) -> dict[tuple[str, str], Path]:
    sources: dict[tuple[str, str], Path] = {}
    for arg in argv:
        engine, _, rest = arg.partition("==")
        version, _, path = rest.partition("=")
        if engine not in SUPPORTED or not version or not path:
            raise SystemExit(f"usage: ENGINE==VERSION=PATH (engines: vllm, sglang), got {arg!r}")
        sources[(engine, version)] = Path(path)
    return sources


def main(argv: list[str]) -> int:
    sources = parse_sources(argv)
    rows = [
        row(engine, version, sources.get((engine, version)))
        for engine, versions in SUPPORTED.items()
        for version in versions
    ]
    OUT.write_text(json.dumps({"releases": rows}, indent=2) + "\n")
    for entry in rows:
        print(f"{entry['engine']} {entry['version']}: CUDA {entry['cuda'] or 'unknown'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
