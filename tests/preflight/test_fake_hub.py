"""The fake Hub answers as the Hub does: proven with the real huggingface_hub client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_hub import COMMIT, MODELS, TOKEN, FakeHub, HubBehaviour
from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub.errors import EntryNotFoundError, GatedRepoError, RepositoryNotFoundError


def test_the_real_client_downloads_a_vendored_config(tmp_path: Path) -> None:
    with FakeHub() as hub:
        path = hf_hub_download(
            "meta-llama/Llama-3.1-8B-Instruct", "config.json", endpoint=hub.url, cache_dir=tmp_path
        )
    vendored = MODELS / "meta-llama/Llama-3.1-8B-Instruct/config.json"
    assert json.loads(Path(path).read_text()) == json.loads(vendored.read_text())
    assert COMMIT in path  # cached under the commit the fake reported


def test_the_real_client_reads_file_sizes_from_the_api(tmp_path: Path) -> None:
    with FakeHub() as hub:
        info = HfApi(endpoint=hub.url).model_info(
            "meta-llama/Llama-3.2-1B", revision="main", files_metadata=True
        )
        instruct = HfApi(endpoint=hub.url).model_info(
            "meta-llama/Llama-3.2-1B-Instruct", revision="main", files_metadata=True
        )
    sizes = {s.rfilename: s.size for s in info.siblings or []}
    assert sizes["model.safetensors"] == 2471645608
    assert instruct.safetensors is not None
    assert instruct.safetensors.parameters == {"BF16": 1235814400}


def test_the_real_client_sees_gated_missing_and_absent_files(tmp_path: Path) -> None:
    with FakeHub(HubBehaviour(gated={"meta-llama/Llama-3.1-8B-Instruct"})) as hub:
        with pytest.raises(GatedRepoError):
            hf_hub_download(
                "meta-llama/Llama-3.1-8B-Instruct",
                "config.json",
                endpoint=hub.url,
                cache_dir=tmp_path,
                token=False,
            )
        path = hf_hub_download(
            "meta-llama/Llama-3.1-8B-Instruct",
            "config.json",
            endpoint=hub.url,
            cache_dir=tmp_path,
            token=TOKEN,
        )
        assert Path(path).is_file()
        with pytest.raises(RepositoryNotFoundError):
            hf_hub_download("nobody/nothing", "config.json", endpoint=hub.url, cache_dir=tmp_path)
        with pytest.raises(EntryNotFoundError):
            hf_hub_download(
                "meta-llama/Llama-3.2-1B-Instruct",
                "model.safetensors.index.json",
                endpoint=hub.url,
                cache_dir=tmp_path,
            )
