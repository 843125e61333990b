"""The Hub's hostile answers (issue #37, item 1) to `mlcc plan --preflight`, from the classes of
tests/preflight/test_hostile_hub.py: config values of the wrong type, JSON the engines cannot
take, nested configs, safetensors indexes that lie, answers on the wire, and the Hub cache.

A config the engines could not load is refused (`error: hp:model: ...`, exit 1); an answer
that cannot be read, or a cache at fault, is one "not checked" warning (hp:preflight auto, exit
0); a fact the Hub contradicts is a note and the figures stay true."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import answers_cases
from classify import Case, Oracle, all_of, never, says
from fake_hub import COMMIT, MODELS, HubAnswer, HubBehaviour
from plan_cases import CONFIG, DRAFT, INDEX, TARGET, exit_in, healthy_plan, one_line, plan_case

WRONG = "not a whole number from 1 to 2,147,483,647"
REFUSED = "error: hp:model: "
NOT_CHECKED = "warning: hp:model: "


def refused(*texts: str) -> Oracle:
    return all_of(exit_in(1), one_line(REFUSED, *texts), never("GiB usable per GPU"))


def unchecked(*texts: str) -> Oracle:
    """A warning naming what was not checked (exit 0 under hp:preflight auto)."""
    return all_of(exit_in(0), one_line("warning: hp:", "not checked", *texts))


def figures_true(*texts: str) -> Oracle:
    """The answer is believed (or corrected) and the plan's figures are printed."""
    return all_of(exit_in(0), says("GiB usable per GPU", *texts))


def config(**changes: Any) -> HubBehaviour:
    body = json.dumps({**CONFIG, **changes}).encode()
    return HubBehaviour(answers={(TARGET, "config.json"): HubAnswer(body)})


def raw_config(raw: bytes) -> HubBehaviour:
    text = json.dumps(CONFIG).encode()
    return HubBehaviour(
        answers={(TARGET, "config.json"): HubAnswer(text[:-1] + b", " + raw + b"}")}
    )


def index(total: object, shards: dict[str, object] | None = None) -> HubBehaviour:
    answers = {
        (TARGET, "model.safetensors.index.json"): HubAnswer(
            json.dumps({**INDEX, "metadata": {"total_size": total}}).encode()
        )
    }
    if shards is not None:
        siblings = [{"rfilename": n, "size": s} for n, s in shards.items()]
        info = {"id": TARGET, "modelId": TARGET, "sha": COMMIT, "siblings": siblings}
        answers[(TARGET, "api")] = HubAnswer(json.dumps(info).encode())
    return HubBehaviour(answers=answers)


SHARDS = sorted(set(INDEX["weight_map"].values()))
WRONG_TYPES: dict[str, tuple[dict[str, Any], str]] = {
    "hidden_size a string": ({"hidden_size": "4096"}, f"hidden_size is '4096', {WRONG}"),
    "hidden_size negative": ({"hidden_size": -4096}, f"hidden_size is -4096, {WRONG}"),
    "heads zero": ({"num_attention_heads": 0}, f"num_attention_heads is 0, {WRONG}"),
    "kv heads a boolean": ({"num_key_value_heads": True}, "num_key_value_heads is true"),
    "vocab a float": ({"vocab_size": 128256.0}, f"vocab_size is 128256.0, {WRONG}"),
    "layers 2**40": ({"num_hidden_layers": 2**40}, "num_hidden_layers is 1099511627776"),
    "head_dim a list": ({"head_dim": [128]}, f"head_dim is a list, {WRONG}"),
    "mtp layers negative": ({"num_nextn_predict_layers": -3}, "num_nextn_predict_layers is -3"),
    "context a string": ({"max_position_embeddings": "131072"}, "not a length"),
    "rope factor a string": ({"rope_scaling": {"rope_type": "yarn", "factor": "8"}}, "'8'"),
    "rope factor 1e300": ({"rope_scaling": {"rope_type": "yarn", "factor": 1e300}}, "1e+300"),
    "text_config a string": ({"text_config": "llama"}, "text_config is 'llama', not an object"),
    "hidden_size null": ({"hidden_size": None}, "hidden_size"),
    "vocab negative": ({"vocab_size": -1}, f"vocab_size is -1, {WRONG}"),
}
# vLLM's Attention asserts num_heads % num_kv_heads == 0 (vllm-0.27.1
# vllm/model_executor/layers/attention/attention.py): 64 KV heads over 32 heads cannot load.


def _settings_cases() -> list[Case]:
    """The variables that point the client at the Hub (HF_*), set wrongly."""
    # huggingface_hub cannot be imported with it: preflight checks no model, in one line
    setting = all_of(exit_in(0), says("not checked: the models on the Hub", "not whole seconds"))
    return [
        plan_case(
            "kv heads over heads",
            "hub",
            refused("num_key_value_heads"),
            config(num_key_value_heads=64),
        ),
        plan_case("HF_HUB_ETAG_TIMEOUT 2.5", "hub", setting, env={"HF_HUB_ETAG_TIMEOUT": "2.5"}),
        plan_case("HF_HUB_ETAG_TIMEOUT abc", "hub", setting, env={"HF_HUB_ETAG_TIMEOUT": "abc"}),
        plan_case(
            "HF_HUB_DOWNLOAD_TIMEOUT -", "hub", setting, env={"HF_HUB_DOWNLOAD_TIMEOUT": "-"}
        ),
        plan_case("HF_HUB_OFFLINE, cache empty", "hub", unchecked(), env={"HF_HUB_OFFLINE": "1"}),
        plan_case("HF_ENDPOINT not a URL", "hub", unchecked(), env={"HF_ENDPOINT": "not a url"}),
        plan_case(
            "HF_ENDPOINT nothing listens",
            "hub",
            unchecked(),
            env={"HF_ENDPOINT": "http://127.0.0.1:9"},
        ),
    ]


RAW: dict[str, tuple[bytes, str]] = {
    "NaN": (b'"hidden_size": NaN', "hidden_size is NaN, not a whole number"),
    "Infinity": (b'"hidden_size": Infinity', "hidden_size is Infinity, not a whole number"),
    "-Infinity context": (b'"max_position_embeddings": -Infinity', "-Infinity"),
    "5000 digits": (b'"hidden_size": ' + b"9" * 5000, "holds a number of 5000 digits"),
    "nested 100000 deep": (b'"d": ' + b"[" * 100_000 + b"]" * 100_000, "nested deeper than 64"),
}


def _wire_cases() -> list[Case]:
    answers = {
        "wrong gzip": (
            HubAnswer(b"\x1f\x8b not gzip", headers={"Content-Encoding": "gzip"}),
            unchecked("answered compressed (gzip)"),
        ),
        "gzip bomb": (
            HubAnswer(
                gzip.compress(b"{" + b" " * (64 * 1024 * 1024) + b"}"),
                headers={"Content-Encoding": "gzip"},
            ),
            unchecked("answered compressed"),
        ),
        "40 MiB config": (
            HubAnswer(b'{"pad": "' + b"x" * (40 * 1024 * 1024) + b'"}'),
            refused("over 32 MiB"),
        ),
        "declared 5 GiB": (
            HubAnswer(b"{}", headers={"Content-Length": str(5 * 1024**3)}),
            refused("over 32 MiB"),
        ),
        "etag mismatch": (
            HubAnswer(json.dumps(CONFIG).encode(), headers={"ETag": '"' + "0" * 64 + '"'}),
            unchecked("does not have the hash its ETag gives"),
        ),
        "config is a list": (HubAnswer(b"[1, 2, 3]"), refused("config.json")),
        "config empty": (HubAnswer(b""), refused("config.json")),
        "404 config": (
            HubAnswer(b"", status=404, headers={"X-Error-Code": "EntryNotFound"}),
            refused("config.json"),
        ),
        "500 config": (HubAnswer(b"oops", status=500), unchecked("hp:model")),
        "429 config": (
            HubAnswer(b"slow down", status=429, headers={"Retry-After": "3600"}),
            unchecked(),
        ),
        "api not JSON": (HubAnswer(b"<html>", status=200), figures_true()),
    }
    cases = [
        plan_case(name, "hub", oracle, HubBehaviour(answers={(TARGET, "config.json"): answer}))
        for name, (answer, oracle) in answers.items()
        if name != "api not JSON"
    ]
    api = HubBehaviour(answers={(TARGET, "api"): answers["api not JSON"][0]})
    cases.append(plan_case("api not JSON", "hub", answers["api not JSON"][1], api))
    malformed = {
        "html": refused("config.json"),
        "huge": refused("config.json"),
        "utf8": refused("config.json"),
        "redirect": unchecked(),
    }
    cases += [
        plan_case(f"malformed {kind}", "hub", oracle, HubBehaviour(malformed={TARGET: kind}))
        for kind, oracle in malformed.items()
    ]
    cases.append(plan_case("silent hub", "hub", unchecked(), HubBehaviour(silent=True)))
    cases.append(
        plan_case("slow past the deadline", "hub", unchecked(), HubBehaviour(slow={TARGET: 30}))
    )
    cases.append(
        plan_case(
            "draft config NaN",
            "hub",
            refused_draft("NaN"),
            HubBehaviour(
                answers={
                    (DRAFT, "config.json"): HubAnswer(
                        (MODELS / DRAFT / "config.json").read_bytes()[:-2]
                        + b', "hidden_size": NaN}'
                    )
                }
            ),
        )
    )
    cases.append(
        plan_case(
            "gated without a token",
            "hub",
            refused("gated and no token was given"),
            HubBehaviour(gated={TARGET}),
            env={"HF_TOKEN": ""},
        )
    )
    return cases


def refused_draft(*texts: str) -> Oracle:
    return all_of(exit_in(1), one_line("error: hp:speculativeModel: ", *texts))


def _redirect_elsewhere() -> Case:
    """A redirect to another host (as the Hub's to its CDN): followed, no token carried."""
    etag = hashlib.sha256((MODELS / TARGET / "config.json").read_bytes()).hexdigest()
    # The other host is a loopback port nothing listens on: the redirect must end in a line.
    elsewhere = f"http://127.0.0.1:9/{TARGET}/resolve/main/config.json"
    moved = HubAnswer(status=302, headers={"Location": elsewhere, "ETag": f'"{etag}"'})
    behaviour = HubBehaviour(answers={(TARGET, "config.json"): moved})
    return plan_case("redirect to a host that is down", "hub", unchecked(), behaviour)


def _cached(damage: str) -> Any:
    """A Hub cache filled by an earlier good run, then damaged."""

    def prepare(cache: Path, _url: str) -> None:
        snapshot = cache / "models--meta-llama--Llama-3.1-8B-Instruct" / "snapshots" / COMMIT
        blobs = cache / "models--meta-llama--Llama-3.1-8B-Instruct" / "blobs"
        refs = cache / "models--meta-llama--Llama-3.1-8B-Instruct" / "refs"
        body = (MODELS / TARGET / "config.json").read_bytes()
        etag = hashlib.sha256(body).hexdigest()
        for folder in (snapshot, blobs, refs):
            folder.mkdir(parents=True, exist_ok=True)
        (refs / "main").write_text(COMMIT)
        blob = blobs / etag
        link = snapshot / "config.json"
        if damage == "truncated":
            blob.write_bytes(body[:100])
            an_hour_ago = time.time() - 3600
            os.utime(blob, (an_hour_ago, an_hour_ago))
            link.symlink_to(blob)
        elif damage == "device":
            link.symlink_to("/dev/zero")
        elif damage == "foreign":
            foreign = cache / "foreign.json"
            foreign.write_text(json.dumps(CONFIG))
            link.symlink_to(foreign)
        elif damage == "fifo":
            os.mkfifo(blob)
            link.symlink_to(blob)

    return prepare


def _cache_cases() -> list[Case]:
    cases = [
        plan_case(f"cache {damage}", "hub", unchecked("the Hub cache"), prepare=_cached(damage))
        for damage in ("truncated", "device", "foreign", "fifo")
    ]

    def blocked(cache: Path, _url: str) -> None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text("")  # a file where the cache folder would be

    cases.append(plan_case("cache not writable", "hub", unchecked("HF_HUB_CACHE"), prepare=blocked))
    return cases


def cases() -> list[Case]:
    found = [
        plan_case(f"config: {name}", "hub", refused(says_), config(**changes))
        for name, (changes, says_) in WRONG_TYPES.items()
    ]
    found += [
        plan_case(f"config: {name}", "hub", refused(says_), raw_config(raw))
        for name, (raw, says_) in RAW.items()
    ]
    found += [
        plan_case(
            "text_config nests again",
            "hub",
            refused("its config.json has no hidden_size"),
            config(model_type="llava", text_config={"text_config": CONFIG}),
        ),
        plan_case(
            "_name_or_path loops",
            "hub",
            figures_true(),
            config(_name_or_path=TARGET, text_config={**CONFIG, "_name_or_path": TARGET}),
        ),
        plan_case(
            "index contradicts the files",
            "hub",
            figures_true("says the weights take 1,024 bytes"),
            index(1024, dict.fromkeys(SHARDS, 4_015_130_624)),
        ),
        plan_case(
            "files listed at petabytes",
            "hub",
            figures_true("more than any checkpoint"),
            index(16_060_522_496, dict.fromkeys(SHARDS, 2 * 1024**5)),
        ),
    ]
    for total, shown in [(5 * 1024**5, "5629499534213120"), ("16", "'16'"), (-1, "-1")]:
        found.append(
            plan_case(
                f"index total_size {shown}",
                "hub",
                figures_true(f"total_size is {shown}, not a size of weights"),
                index(total),
            )
        )
    found += [*_wire_cases(), _redirect_elsewhere(), *_cache_cases(), *_settings_cases()]
    return found + answers_cases.hub()


def control() -> Case:
    return healthy_plan()
