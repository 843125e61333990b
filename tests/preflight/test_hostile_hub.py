"""The hostile Hub corpus: bad answers, served by the fake Hub to the real huggingface_hub the
way users redirect it (HF_ENDPOINT, HF_HUB_CACHE), each classed by what preflight makes of it.

Every case must be clean: one line that names what was not believed and why (a refusal when the
Hub's own answer says the engines cannot load the model; "not checked" when the answer cannot be
read, or the cache is at fault), within the deadline, with bounded reads, and no figure computed
from a value that is not one. The config values are also fuzzed (hypothesis): whatever JSON
stands where a size belongs, the facts are refused in one line or every figure is true.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_hub import COMMIT, MODELS, TOKEN, FakeHub, HubAnswer, HubBehaviour
from hypothesis import given
from hypothesis import strategies as st

from mlcc.preflight import hub, memory
from mlcc.preflight.bounded import values
from mlcc.preflight.facts import NotAModelConfig, model_facts
from mlcc.preflight.gpus import gpu_spec
from mlcc.preflight.hub import Fetched, FetchResult, ModelRef, Refused, Unreachable
from mlcc.serving.engines import Engine

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
CONFIG = json.loads((MODELS / LLAMA / "config.json").read_text())
INDEX = json.loads((MODELS / LLAMA / "model.safetensors.index.json").read_text())
DEADLINE_S = 5.0


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    yield tmp_path / "cache"


def fetched(answers: dict[tuple[str, str], HubAnswer], model: str = LLAMA) -> FetchResult:
    with FakeHub(HubBehaviour(answers=answers)) as server:
        os.environ["HF_ENDPOINT"] = server.url
        try:
            return timed(lambda: hub.fetch(ModelRef(model, "main", None), DEADLINE_S))
        finally:
            del os.environ["HF_ENDPOINT"]


def timed(call: Callable[[], FetchResult]) -> FetchResult:
    start = time.monotonic()
    result = call()
    # Room for a machine ten times slower; under the 30 s of the slow answers.
    assert time.monotonic() - start < DEADLINE_S + 15, "past the deadline"
    return result


def config_answer(**changes: Any) -> dict[tuple[str, str], HubAnswer]:
    return {(LLAMA, "config.json"): HubAnswer(json.dumps({**CONFIG, **changes}).encode())}


def refusal(result: FetchResult) -> str:
    assert isinstance(result, Refused), result
    assert "\n" not in result.message and len(result.message) < 300
    return result.message


def unreachable(result: FetchResult) -> str:
    assert isinstance(result, Unreachable), result
    assert "\n" not in result.why and len(result.why) < 400
    return result.why


# --- config.json values of the wrong type -------------------------------------------------

WRONG = "not a whole number from 1 to 2,147,483,647"


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"hidden_size": "4096"}, f"hidden_size is '4096', {WRONG}"),
        ({"hidden_size": -4096}, f"hidden_size is -4096, {WRONG}"),
        ({"num_attention_heads": 0}, f"num_attention_heads is 0, {WRONG}"),
        ({"num_key_value_heads": True}, f"num_key_value_heads is true, {WRONG}"),
        ({"vocab_size": 128256.0}, f"vocab_size is 128256.0, {WRONG}"),
        ({"num_hidden_layers": 2**40}, f"num_hidden_layers is 1099511627776, {WRONG}"),
        ({"head_dim": [128]}, f"head_dim is a list, {WRONG}"),
        ({"num_nextn_predict_layers": -3}, "num_nextn_predict_layers is -3, not a whole number"),
        (
            {"max_position_embeddings": "131072"},
            "max_position_embeddings is '131072', not a length",
        ),
        ({"rope_scaling": {"rope_type": "yarn", "factor": "8"}}, "factor is '8', not a factor"),
        ({"rope_scaling": {"rope_type": "yarn", "factor": 1e300}}, "factor is 1e+300, not a"),
        ({"text_config": "llama"}, "text_config is 'llama', not an object"),
    ],
)
def test_a_config_value_of_the_wrong_type_is_one_refusal_naming_the_key(
    changes: dict[str, Any], says: str
) -> None:
    assert says in refusal(fetched(config_answer(**changes)))


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (b'"hidden_size": NaN', "hidden_size is NaN, not a whole number"),
        (b'"hidden_size": Infinity', "hidden_size is Infinity, not a whole number"),
        (b'"max_position_embeddings": -Infinity', "max_position_embeddings is -Infinity"),
        (b'"hidden_size": ' + b"9" * 5000, "holds a number of 5000 digits (at most 100)"),
        (b'"deep": ' + b"[" * 100_000 + b"]" * 100_000, "is nested deeper than 64 levels"),
    ],
)
def test_json_the_engines_cannot_take_is_one_refusal(raw: bytes, says: str) -> None:
    text = json.dumps(CONFIG).encode()
    body = text[:-1] + b", " + raw + b"}"
    assert says in refusal(fetched({(LLAMA, "config.json"): HubAnswer(body)}))


def test_a_text_config_that_nests_again_is_read_one_level_as_vllm_does() -> None:
    """vLLM's get_hf_text_config takes text_config once: a second level inside it is not the
    text model, so the first level has no hidden_size (vLLM asserts on it too)."""
    nested = {"model_type": "llava", "text_config": {"text_config": CONFIG}}
    answer = {(LLAMA, "config.json"): HubAnswer(json.dumps(nested).encode())}
    assert "its config.json has no hidden_size" in refusal(fetched(answer))


def test_a_name_or_path_that_loops_is_not_followed() -> None:
    looping = config_answer(_name_or_path=LLAMA, text_config={**CONFIG, "_name_or_path": LLAMA})
    result = fetched(looping)
    assert isinstance(result, Fetched) and result.facts.hidden_size == 4096


# --- the safetensors index -------------------------------------------------------------------


def api_answer(sizes: dict[str, object]) -> HubAnswer:
    siblings = [{"rfilename": name, "size": size} for name, size in sizes.items()]
    info = {"id": LLAMA, "modelId": LLAMA, "sha": COMMIT, "siblings": siblings}
    return HubAnswer(json.dumps(info).encode())


SHARDS = sorted(set(INDEX["weight_map"].values()))


def index_answer(total: object) -> HubAnswer:
    return HubAnswer(json.dumps({**INDEX, "metadata": {"total_size": total}}).encode())


def test_an_index_that_contradicts_its_files_gives_way_to_the_files_sizes() -> None:
    shard_sizes = dict.fromkeys(SHARDS, 4_015_130_624)  # 16,060,522,496 bytes in all
    result = fetched(
        {
            (LLAMA, "model.safetensors.index.json"): index_answer(1024),
            (LLAMA, "api"): api_answer(shard_sizes),
        }
    )
    assert isinstance(result, Fetched) and result.facts.weight_bytes == 16_060_522_496
    (note,) = result.notes
    assert "says the weights take 1,024 bytes, its files on the Hub 16,060,522,496" in note


@pytest.mark.parametrize(
    ("total", "shown"),
    [
        (5 * 1024**5, "5629499534213120"),  # five pebibytes
        ("16060522496", "'16060522496'"),
        (-1, "-1"),
        (float("nan"), "NaN"),
    ],
)
def test_an_index_size_that_is_no_size_is_not_believed_and_says_so(
    total: object, shown: str
) -> None:
    result = fetched({(LLAMA, "model.safetensors.index.json"): index_answer(total)})
    assert isinstance(result, Fetched)
    (note,) = result.notes
    assert f"total_size is {shown}, not a size of weights" in note
    # the Hub lists no weight files for this repository: the size is counted from the shapes
    assert result.facts.weights_estimated and result.facts.weight_bytes is not None
    assert result.facts.weight_bytes < 20 * 1024**3


def test_files_listed_at_petabytes_are_not_believed() -> None:
    result = fetched(
        {
            (LLAMA, "model.safetensors.index.json"): index_answer(16_060_522_496),
            (LLAMA, "api"): api_answer(dict.fromkeys(SHARDS, 2 * 1024**5)),
        }
    )
    assert isinstance(result, Fetched) and result.facts.weight_bytes == 16_060_522_496
    assert any("more than any checkpoint" in note for note in result.notes)


# --- answers on the wire -----------------------------------------------------------------------


def test_a_wrongly_compressed_answer_is_not_decompressed() -> None:
    garbage = HubAnswer(b"\x1f\x8b not gzip at all", headers={"Content-Encoding": "gzip"})
    why = unreachable(fetched({(LLAMA, "config.json"): garbage}))
    assert "answered compressed (gzip) although asked not to for config.json" in why


def test_a_gzip_bomb_is_not_decompressed() -> None:
    bomb = gzip.compress(b"{" + b" " * (64 * 1024 * 1024) + b"}")  # 64 MiB in ~64 kB
    answer = HubAnswer(bomb, headers={"Content-Encoding": "gzip"})
    assert "answered compressed" in unreachable(fetched({(LLAMA, "config.json"): answer}))


def test_an_answer_past_the_size_limit_is_cut_where_the_limit_is() -> None:
    huge = HubAnswer(b'{"pad": "' + b"x" * (40 * 1024 * 1024) + b'"}')
    assert "its config.json is over 32 MiB" in refusal(fetched({(LLAMA, "config.json"): huge}))


def test_a_declared_length_past_the_limit_is_refused_before_reading() -> None:
    lying = HubAnswer(b"{}", headers={"Content-Length": str(5 * 1024**3)})
    start = time.monotonic()
    assert "over 32 MiB" in refusal(fetched({(LLAMA, "config.json"): lying}))
    assert time.monotonic() - start < DEADLINE_S  # not a wait for 5 GiB that never come


def test_a_redirect_to_another_host_does_not_carry_the_token() -> None:
    with FakeHub() as other:
        elsewhere = f"{other.url}/{LLAMA}/resolve/main/config.json"
        etag = hashlib.sha256((MODELS / LLAMA / "config.json").read_bytes()).hexdigest()
        # as the Hub redirects a file to its CDN: the ETag of the file, the Location elsewhere
        moved = HubAnswer(status=302, headers={"Location": elsewhere, "ETag": f'"{etag}"'})
        result = fetched({(LLAMA, "config.json"): moved})
    assert isinstance(result, Fetched) and result.facts.hidden_size == 4096
    assert [auth for _, _, auth in other.requests] and not any(
        auth for _, _, auth in other.requests
    )


# --- the Hub cache (HF_HUB_CACHE / HF_HOME) ----------------------------------------------------


def cached_config(cache: Path) -> Path:
    return (
        cache / "models--meta-llama--Llama-3.1-8B-Instruct" / "snapshots" / COMMIT / "config.json"
    )


def test_a_download_that_does_not_match_its_etag_is_blamed_on_the_hub() -> None:
    lying = HubAnswer(json.dumps(CONFIG).encode(), headers={"ETag": '"' + "0" * 64 + '"'})
    why = unreachable(fetched({(LLAMA, "config.json"): lying}))
    assert why.startswith("http://127.0.0.1:") and "does not have the hash its ETag gives" in why


def test_a_truncated_cache_file_is_blamed_on_the_cache_by_its_path(cache: Path) -> None:
    assert isinstance(fetched({}), Fetched)
    blob = Path(os.path.realpath(cached_config(cache)))
    blob.write_bytes(blob.read_bytes()[:100])
    an_hour_ago = time.time() - 3600  # damaged by an earlier run, not by this download
    os.utime(blob, (an_hour_ago, an_hour_ago))
    why = unreachable(fetched({}))
    assert f"the Hub cache's {blob} (config.json) is damaged" in why
    assert "delete it and run again" in why


@pytest.mark.parametrize("target", ["/dev/zero", "foreign"])
def test_a_foreign_file_in_the_cache_is_blamed_on_the_cache(cache: Path, target: str) -> None:
    assert isinstance(fetched({}), Fetched)
    link = cached_config(cache)
    if target == "foreign":
        target = str(cache / "foreign.json")
        Path(target).write_text(json.dumps(CONFIG))
    link.unlink()
    link.symlink_to(target)
    why = unreachable(fetched({}))
    assert why.startswith("the Hub cache's") and "config.json" in why
    assert ("is a device, not a file" if target == "/dev/zero" else "not to a file the Hub") in why
    assert "delete it and run again" in why


def test_a_cache_that_cannot_be_written_is_blamed_not_the_hub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache folder under a regular file cannot be made (root ignores permission bits, so
    this stands for every cache the client cannot write)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("HF_HUB_CACHE", str(blocker / "cache"))
    why = unreachable(fetched({}))
    assert why.startswith("the Hub cache cannot be used: ") and str(blocker) in why
    assert "set HF_HUB_CACHE (or HF_HOME) to a folder this user can write" in why


# --- fuzzed config values: refused in one line, or every figure true ---------------------------

JSON_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
KEYS = [
    "hidden_size",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "vocab_size",
    "num_hidden_layers",
    "max_position_embeddings",
    "num_nextn_predict_layers",
    "intermediate_size",
]


@given(key=st.sampled_from(KEYS), value=JSON_VALUES, context=st.integers(1, 2**20))
def test_any_json_value_for_a_size_is_refused_or_gives_true_figures(
    key: str, value: object, context: int
) -> None:
    try:
        facts = model_facts({**CONFIG, key: value}, 16_060_522_496)
    except NotAModelConfig as error:
        assert key in str(error) and "\n" not in str(error) and len(str(error)) < 200
        return
    for size in (facts.hidden_size, facts.num_heads, facts.num_kv_heads, facts.head_dim):
        assert isinstance(size, int) and 0 < size <= values.MAX_SIZE
    assert facts.mtp_layers >= 0
    assert facts.max_context is None or 0 < facts.max_context <= values.MAX_SIZE
    gpu = gpu_spec("ml.g5.12xlarge")
    assert gpu is not None
    for engine in Engine:
        fit = memory.fit(engine, facts, None, gpu, 4, context, {})
        assert fit.usable >= 0 and fit.kv_per_token >= 0 and fit.kv_room_tokens >= 0
        assert all(math.isfinite(x) for x in (fit.usable, fit.needed, fit.margin))
        assert "-" not in fit.line()
