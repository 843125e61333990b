"""scripts/engine_release.py: one command adds, lists or removes a supported engine release."""

from __future__ import annotations

from pathlib import Path

import engine_release as script
import pytest

from mlcc.engine_contract import PINNED_VERSIONS, SUPPORTED_VERSIONS, release_table


def test_it_reads_the_pinned_versions_the_contract_has() -> None:
    assert script.pinned_versions() == PINNED_VERSIONS


def test_list_marks_the_pinned_release(capsys: pytest.CaptureFixture[str]) -> None:
    assert script.main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for engine, line in zip(("vllm", "sglang"), lines, strict=True):
        shown = [
            f"{v} (pinned)" if v == PINNED_VERSIONS[engine] else v
            for v in SUPPORTED_VERSIONS[engine]
        ]
        assert line == f"{engine}: {', '.join(shown)}"


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_pinned_release_cannot_be_removed(engine: str) -> None:
    with pytest.raises(SystemExit, match="is pinned"):
        script.main(["remove", engine, PINNED_VERSIONS[engine]])


def test_a_wheel_of_another_release_is_refused(tmp_path: Path) -> None:
    wheel = tmp_path / "vllm-0.27.1-cp38-abi3-manylinux_2_28_x86_64.whl"
    wheel.write_bytes(b"")
    with pytest.raises(SystemExit, match=r"is not a vllm-0\.34\.0-"):
        script.main(["add", "vllm", "0.34.0", "--wheel", str(wheel)])


def test_the_review_names_what_a_release_added_and_dropped() -> None:
    old, new = SUPPORTED_VERSIONS["sglang"][0], SUPPORTED_VERSIONS["sglang"][-1]
    lines = script.review(script.load("engine_flags"), "sglang", new)
    added = (
        release_table("sglang", new).speculative_names
        - release_table("sglang", old).speculative_names
    )
    assert lines[0].startswith(f"sglang {new}: ")
    assert f"  against sglang {old}:" in lines
    assert f"  + names: {', '.join(sorted(added))}" in lines
