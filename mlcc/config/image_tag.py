"""A prebuilt hp:image against hp:engineVersion and the nodes' driver, from its tag (offline).

The engine images name their release in the tag: `vllm/vllm-openai:v0.27.1`,
`lmsysorg/sglang:v0.5.17-cu129` (mlcc/facts/engine_images.json), and images of one's own often
`.../serve:vllm-0.27.1`. A tag names a release here when it opens with a version X.Y.Z or
vX.Y.Z, or holds vX.Y.Z after `-` or `_`, or X.Y.Z after the engine's name, and the reference
names one engine in its repository or tag; `cu12.8.1`, `cuda-12.8.1` or the tag of an image
that names no engine are not read.

A tag is a name its pusher chose, not proof of what the image holds, so what it says is a
warning, never a refusal:

- it names the other engine than hp:engine's, or another release than hp:engineVersion (the
  flags are checked against hp:engineVersion's tables, and the serve wrapper reads them);
- the release it names is a supported one whose image's CUDA version the nodes' driver cannot run
  (mlcc/config/aws/cuda_fit.py, the same rule as for the images the program builds). A tag that
  names no supported release with a known CUDA version leaves the image unjudged.

The image's own labels and env are read with preflight, from ECR only
(mlcc/preflight/image/part.py): there the project's own labels naming another release refuse.
"""

from __future__ import annotations

import re

from mlcc.config.aws import cuda_fit
from mlcc.config.reader import Reader
from mlcc.serving.engines import EngineRelease

_ENGINES = ("vllm", "sglang")
_VERSION = r"\d+\.\d+\.\d+(?:\.post\d+)?"
# X.Y.Z (or vX.Y.Z) opening the tag, vX.Y.Z after - or _, or X.Y.Z after the engine's name.
_TAG_RELEASE = re.compile(
    rf"(?:^v?|[-_]v|(?:^|[-_])(vllm|sglang)[-_]?v?)({_VERSION})(?=$|[-_])", re.IGNORECASE
)


def tag_release(image: str) -> tuple[str, str] | None:
    """(engine, version) the reference's tag names, or None: no tag, no version in it, or no
    engine named in the repository or the tag (nor more than one)."""
    name = image.split("@", 1)[0]
    repository, _, tag = name.rpartition(":")
    if not repository or "/" in tag:
        return None  # no tag (a registry port is not one)
    match = _TAG_RELEASE.search(tag)
    if match is None:
        return None
    named = {match.group(1).lower()} if match.group(1) else set()
    if not named:
        named = {e for e in _ENGINES if e in repository.lower() or e in tag.lower()}
    return (named.pop(), match.group(2)) if len(named) == 1 else None


def check(
    reader: Reader, image: str, release: EngineRelease, driver: cuda_fit.NodeDriver | None
) -> None:
    """Warn on hp:image when its tag names another engine or release than hp:engine and
    hp:engineVersion, or a release whose image the nodes' driver cannot run."""
    named = tag_release(image)
    if named is None:
        return
    engine, version = named
    ours = f"{release.engine.value} {release.version}"
    if (engine, version) != (release.engine.value, release.version):
        reader.warn(
            "image",
            f"its tag names {engine} {version}, but the endpoints run {ours} (hp:engine, "
            f"hp:engineVersion), whose flags the program checks and the serve wrapper reads: "
            f"set hp:engine and hp:engineVersion to the image's release, or use an image of {ours}",
        )
    if driver is not None and (message := cuda_fit.problem(engine, version, driver)):
        reader.warn("image", f"its tag names {engine} {version}: {message}")
