"""`mlcc draft regenerate` against a fake vLLM server on 127.0.0.1 (tests/draft/fake_vllm.py):
the rows speculators reads, each drop reason, the concurrency bound, the counts, provenance."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import captures as c
import fake_vllm
import pytest
from bench_fake_engine import LoopbackServer

from mlcc.cli import main
from mlcc.cli.draft import endpoint as ep
from mlcc.cli.draft import regen_pool


def conversation(question: str, answer: str = "the captured answer") -> Any:
    return {
        "conversations": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": question},
            {"role": "assistant", "content": answer},
        ]
    }


def dataset(folder: Path, train: list[Any], validation: list[Any] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in (("train.jsonl", train), ("validation.jsonl", validation or [])):
        lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
        (folder / name).write_text("".join(line + "\n" for line in lines))
    (folder / "provenance.json").write_text(json.dumps({"input": "s3-copy", "counts": {}}))
    return folder


def regenerate(tmp_path: Path, url: str, *extra: str) -> tuple[int, Path]:
    out = tmp_path / "regenerated"
    args = ["draft", "regenerate", "--dataset", str(tmp_path / "ds"), "--endpoint", url]
    return main([*args, "--output", str(out), *extra]), out


def rows(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_each_prompt_becomes_a_speculators_row_with_the_token_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset(tmp_path / "ds", [conversation("what is a draft?")], [conversation("and a head?")])
    with fake_vllm.FakeVllm() as fake:
        code, out = regenerate(tmp_path, fake.url)
    assert code == 0
    [train], [validation] = rows(out / "train.jsonl"), rows(out / "validation.jsonl")
    prompt = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "what is a draft?"},
    ]
    assert train["conversations"] == [
        *prompt,
        {"role": "assistant", "content": "regenerated answer to what is a draft?"},
    ]
    prompt_ids = fake_vllm.tokens("<system> be brief <user> what is a draft?")
    answer_ids = fake_vllm.tokens("regenerated answer to what is a draft?")
    assert train["input_ids"] == prompt_ids + answer_ids
    assert train["loss_mask"] == [0] * len(prompt_ids) + [1] * len(answer_ids)
    assert train["metadata"]["source"] == "train.jsonl:1"
    assert validation["metadata"]["source"] == "validation.jsonl:1"
    # what was sent: the prompt without the captured answer, greedy, with return_token_ids
    # (the two requests run side by side: either may arrive first)
    assert next(b for b in fake.bodies if b["messages"] == prompt) == {
        "model": fake_vllm.MODEL,
        "messages": prompt,
        "max_tokens": 4096,
        "temperature": 0.0,
        "return_token_ids": True,
    }
    assert rows(out / "drops.jsonl") == []
    record = json.loads((out / "provenance.json").read_text())
    assert record["endpoint"]["url"] == fake.url
    assert record["endpoint"]["model"] == fake_vllm.MODEL
    assert record["endpoint"]["root"] == fake_vllm.ROOT
    assert record["endpoint"]["maxModelLen"] == fake_vllm.MAX_MODEL_LEN
    assert record["request"]["temperature"] == 0.0
    assert record["dataset"]["provenance"] == {"input": "s3-copy", "counts": {}}
    assert record["counts"]["sent"] == 2 and record["counts"]["written"] == 2
    # the tokens of the rows written, re-counted from the files
    train_tokens = len(train["input_ids"])
    validation_tokens = len(validation["input_ids"])
    assert train_tokens == len(prompt_ids) + len(answer_ids)
    assert record["tokens"]["train"] == train_tokens
    assert record["tokens"]["validation"] == validation_tokens
    assert record["tokens"]["total"] == train_tokens + validation_tokens
    err = capsys.readouterr().err
    assert "regenerate: 2/2 done, 0 dropped" in err


def test_every_failure_is_a_drop_with_its_reason_and_the_counts_add_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = ["ok one", "fail now", "notokens please", "badjson here", "hang on"]
    questions += ["empty reply", "emptyids reply", "long story", "flaky link", "ok two"]
    dataset(
        tmp_path / "ds",
        [conversation(q) for q in questions],
        ["{not json", json.dumps({"conversations": [{"role": "user", "content": "hi"}]})],
    )
    with fake_vllm.FakeVllm() as fake:
        code, out = regenerate(tmp_path, fake.url, "--request-timeout", "1.5", "--retries", "1")
    assert code == 0
    drops = {d["where"]: (d["reason"], d["detail"]) for d in rows(out / "drops.jsonl")}
    assert drops == {
        "train.jsonl:2": (ep.HTTP_ERROR, "HTTP 500: EngineCore encountered an issue"),
        "train.jsonl:3": (ep.NO_TOKEN_IDS, ep.NO_TOKEN_IDS_DETAIL),
        "train.jsonl:4": (ep.MALFORMED_REPLY, "the reply is not JSON"),
        "train.jsonl:5": (ep.TIMEOUT, "no whole reply within 1.5 s"),
        "train.jsonl:6": (ep.EMPTY_ANSWER, "the regenerated answer is empty"),
        "train.jsonl:7": (ep.EMPTY_TOKEN_IDS, "choices[0].token_ids is empty"),
        "validation.jsonl:1": (ep.NOT_A_ROW, "the line is not JSON"),
        "validation.jsonl:2": (ep.NOT_A_ROW, "no conversations list of two turns or more"),
    }
    kept = rows(out / "train.jsonl")
    assert [r["metadata"]["source"] for r in kept] == [
        "train.jsonl:1",
        "train.jsonl:8",
        "train.jsonl:9",
        "train.jsonl:10",
    ]
    assert kept[1]["metadata"]["finish_reason"] == "length"
    # the 500 was retried once (two requests), the 503 once and then answered
    sent = [b["messages"][-1]["content"] for b in fake.bodies]
    assert sent.count("fail now") == 2 and sent.count("flaky link") == 2
    assert sent.count("hang on") == 1  # a timeout is not retried
    counts = json.loads((out / "provenance.json").read_text())["counts"]
    assert counts["read"] == 12 and counts["sent"] == 10
    assert counts["written"] + sum(counts["dropped"].values()) == counts["read"]
    assert counts["written"] == 4 and counts["truncated"] == 1
    assert counts["dropped"][ep.NOT_A_ROW] == 2
    tokens = json.loads((out / "provenance.json").read_text())["tokens"]
    assert tokens["train"] == sum(len(r["input_ids"]) for r in kept) > 0
    assert tokens["validation"] == 0 and tokens["total"] == tokens["train"]
    out_text = capsys.readouterr().out
    assert "sent 10 of 12 prompts: 4 rows" in out_text
    assert "dropped, timeout: 1 (first: no whole reply within 1.5 s)" in out_text
    assert "Traceback" not in out_text


def test_at_most_concurrency_requests_are_in_flight(tmp_path: Path) -> None:
    dataset(tmp_path / "ds", [conversation(f"slow question {i}") for i in range(12)])
    with fake_vllm.FakeVllm() as fake:
        code, out = regenerate(tmp_path, fake.url, "--concurrency", "3")
    assert code == 0
    assert fake.most_in_flight == 3
    # written in input order though answered out of order
    assert [r["metadata"]["source"] for r in rows(out / "train.jsonl")] == [
        f"train.jsonl:{i}" for i in range(1, 13)
    ]


def test_one_at_a_time_is_one_in_flight(tmp_path: Path) -> None:
    dataset(tmp_path / "ds", [conversation(f"slow question {i}") for i in range(4)])
    with fake_vllm.FakeVllm() as fake:
        assert regenerate(tmp_path, fake.url, "--concurrency", "1")[0] == 0
    assert fake.most_in_flight == 1


def test_a_server_without_token_ids_stops_early_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset(tmp_path / "ds", [conversation(f"question {i}") for i in range(40)])
    with fake_vllm.FakeVllm(token_ids=False) as fake:
        code, out = regenerate(tmp_path, fake.url, "--concurrency", "2")
    assert code == 1
    assert len(fake.bodies) < 40  # it stopped sending
    err = capsys.readouterr().err
    assert f"stopped after the first {regen_pool.GIVE_UP_AFTER} replies had no token ids" in err
    assert ep.NO_TOKEN_IDS_DETAIL in err
    counts = json.loads((out / "provenance.json").read_text())["counts"]
    assert counts["written"] == 0
    assert counts["sent"] + counts["notSent"] == 40
    assert counts["dropped"][ep.NO_TOKEN_IDS] == counts["sent"]


def test_every_prompt_dropped_is_exit_1_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset(tmp_path / "ds", [conversation("fail a"), conversation("fail b")])
    with fake_vllm.FakeVllm() as fake:
        code, out = regenerate(tmp_path, fake.url, "--retries", "0")
    assert code == 1
    assert rows(out / "train.jsonl") == []
    err = capsys.readouterr().err
    assert "no rows written: every prompt was dropped; most: HTTP error: HTTP 500" in err


def test_model_must_be_served(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset(tmp_path / "ds", [conversation("hello")])
    with fake_vllm.FakeVllm() as fake:
        code, _ = regenerate(tmp_path, fake.url, "--model", "other")
    assert code == 1
    err = capsys.readouterr().err
    assert "--model 'other' is not served" in err and fake_vllm.MODEL in err
    assert fake.bodies == []


def test_an_endpoint_that_does_not_answer_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset(tmp_path / "ds", [conversation("hello")])
    with fake_vllm.FakeVllm() as fake:
        url = fake.url
    code, _ = regenerate(tmp_path, url)
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("draft regenerate: --endpoint: cannot reach") and "Traceback" not in err


@pytest.mark.parametrize(
    ("endpoint", "words"),
    [
        ("ftp://host", "is not http://HOST"),
        ("http://host:8000/?token=secret", "no ?query"),
    ],
)
def test_bad_endpoint_urls_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], endpoint: str, words: str
) -> None:
    dataset(tmp_path / "ds", [conversation("hello")])
    assert regenerate(tmp_path, endpoint)[0] == 2
    assert words in capsys.readouterr().err


def test_the_url_provenance_records_has_no_credentials() -> None:
    assert ep.shown_url(ep.parse_url("https://user:pw@host.example:8443/base/")) == (
        "https://host.example:8443/base"
    )


def test_output_cannot_be_the_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset(tmp_path / "ds", [conversation("hello")])
    args = ["draft", "regenerate", "--dataset", str(tmp_path / "ds"), "--endpoint", "http://h"]
    assert main([*args, "--output", str(tmp_path / "ds")]) == 2
    assert "is the --dataset folder" in capsys.readouterr().err
    assert (tmp_path / "ds" / "train.jsonl").read_text()  # untouched


def test_the_url_must_be_the_base_url(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset(tmp_path / "ds", [conversation("hello")])
    with fake_vllm.FakeVllm() as fake:
        assert regenerate(tmp_path, fake.url + "/v1")[0] == 1
    assert "HTTP 404: Not Found (--endpoint is the base URL, without /v1)" in (
        capsys.readouterr().err
    )


def test_fifos_are_refused_not_opened(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset(tmp_path / "ds", [conversation("hello")])
    os.mkfifo(tmp_path / "ds" / "validation.jsonl.tmp")
    os.replace(tmp_path / "ds" / "validation.jsonl.tmp", tmp_path / "ds" / "validation.jsonl")
    assert regenerate(tmp_path, "http://127.0.0.1:9")[0] == 1
    assert "validation.jsonl: is a FIFO" in capsys.readouterr().err
    (tmp_path / "ds" / "validation.jsonl").unlink()
    (tmp_path / "regenerated").mkdir()
    os.mkfifo(tmp_path / "regenerated" / "drops.jsonl")
    assert regenerate(tmp_path, "http://127.0.0.1:9")[0] == 1
    assert "drops.jsonl: is a FIFO" in capsys.readouterr().err


def test_a_refused_connection_is_retried_then_dropped() -> None:
    closed = ep.Endpoint(ep.parse_url("http://127.0.0.1:9"), 5.0, retries=2, backoff_s=0.0)
    with pytest.raises(ep.Failed) as failure:
        closed.chat({"model": "m", "messages": []})
    assert (failure.value.reason, failure.value.detail) == (ep.CONNECTION, "connection refused")


def test_progress_is_at_most_one_line_every_few_seconds() -> None:
    out = io.StringIO()
    progress = regen_pool.Progress(3, every_s=3600.0, out=out)
    progress.count(failed=False)
    progress.maybe_print()
    progress.count(failed=True)
    progress.maybe_print()
    assert out.getvalue() == ""
    progress.maybe_print(final=True)
    assert out.getvalue().startswith("regenerate: 2/3 done, 1 dropped, ")
    assert out.getvalue().endswith(" prompts/s\n")
    eager = regen_pool.Progress(1, every_s=0.0, out=out)
    eager.maybe_print()
    assert out.getvalue().count("\n") == 2


def test_a_folder_without_a_dataset_is_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ds").mkdir()
    assert regenerate(tmp_path, "http://127.0.0.1:9")[0] == 1
    assert "no train.jsonl or validation.jsonl" in capsys.readouterr().err


def test_a_dataset_that_is_no_folder_is_named_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert regenerate(tmp_path, "http://127.0.0.1:9")[0] == 1
    assert capsys.readouterr().err == f"draft regenerate: --dataset {tmp_path}/ds: does not exist\n"
    (tmp_path / "ds").write_text("")
    assert regenerate(tmp_path, "http://127.0.0.1:9")[0] == 1
    assert capsys.readouterr().err.endswith("/ds: is a file, not a folder\n")


def test_from_capture_files_to_regenerated_rows(tmp_path: Path) -> None:
    c.write(tmp_path / "in" / "a.jsonl", [c.chat("q1", "old"), c.chat("q2", "old")])
    assert (
        main(
            ["draft", "dataset", "--input", str(tmp_path / "in"), "--output", str(tmp_path / "ds")]
        )
        == 0
    )
    with fake_vllm.FakeVllm() as fake:
        code, out = regenerate(tmp_path, fake.url)
    assert code == 0
    kept = rows(out / "train.jsonl") + rows(out / "validation.jsonl")
    answers = sorted(r["conversations"][-1]["content"] for r in kept)
    assert answers == ["regenerated answer to q1", "regenerated answer to q2"]
    record = json.loads((out / "provenance.json").read_text())
    assert record["dataset"]["provenance"]["sources"][0]["path"] == "a.jsonl"
    assert record["dataset"]["provenance"]["inferenceTime"]["earliest"] == "2025-01-02T03:04:05Z"


def test_an_answer_that_is_not_utf8_text_is_a_malformed_reply(tmp_path: Path) -> None:
    c.write(tmp_path / "in" / "a.jsonl", [c.chat("surrogate please", "old"), c.chat("q2", "old")])
    argv = ["--input", str(tmp_path / "in"), "--output", str(tmp_path / "ds")]
    assert main(["draft", "dataset", *argv, "--validation-fraction", "0"]) == 0
    with fake_vllm.FakeVllm() as fake:
        code, out = regenerate(tmp_path, fake.url)
    assert code == 0
    [drop] = rows(out / "drops.jsonl")
    assert (drop["reason"], drop["detail"]) == (
        ep.MALFORMED_REPLY,
        "choices[0].message.content is not UTF-8 text",
    )
    assert len(rows(out / "train.jsonl")) == 1


class ErrorServer(LoopbackServer):
    """/v1/models answers 500 with control characters in its error message."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                body = json.dumps({"error": {"message": "\x1b[31mred\nline"}}).encode()
                self.send_response(500)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._serve(Handler)


def test_a_server_error_text_is_printed_escaped() -> None:
    with pytest.raises(ep.EndpointError) as raised, ErrorServer() as server:
        ep.Endpoint(ep.parse_url(server.url), 5.0, 0, 0.0).served(None)
    assert "\\x1b[31mred\\nline" in str(raised.value) and "\x1b" not in str(raised.value)


class Interrupted:
    """A dataset whose reading is interrupted (Ctrl-C) after `rows` prompts: four slow ones,
    then ones that hang."""

    def __init__(self, rows: int) -> None:
        self.rows = rows

    def lines(self) -> Iterator[tuple[str, int, bytes | None]]:
        for number in range(1, self.rows + 1):
            word = "slow" if number <= 4 else "hang"  # the fifth holds the one worker for 3 s
            question = {"role": "user", "content": f"{word} q{number}"}
            row = {"conversations": [question, {"role": "assistant", "content": "a"}]}
            yield "train.jsonl", number, json.dumps(row).encode()
        raise KeyboardInterrupt


def test_an_interrupt_sends_none_of_the_queued_prompts(tmp_path: Path) -> None:
    with fake_vllm.FakeVllm() as fake:
        endpoint = ep.Endpoint(ep.parse_url(fake.url), 5.0, 0, 0.0)
        sampling = regen_pool.Sampling(fake_vllm.MODEL, 16, 0.0)
        pool = regen_pool.Pool(endpoint, sampling, 1, regen_pool.Progress(8, 99, io.StringIO()))
        with (tmp_path / "rows").open("w") as rows, pytest.raises(KeyboardInterrupt):
            pool.run(Interrupted(8), {"train.jsonl": rows, "validation.jsonl": rows}, rows)
        # four were answered, the fifth was in flight; the three queued behind it never go
        assert len(fake.bodies) <= 5
