"""`mlcc draft dataset`: each drop reason, the split, provenance, hostile inputs, the real CLI."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import captures as c
import pytest

from mlcc.cli import main
from mlcc.cli.draft import capture
from mlcc.cli.draft import dataset as draft_dataset

REPO = Path(__file__).resolve().parents[2]


def run(
    tmp_path: Path, *extra: str, source: Path | None = None, into: str = "out"
) -> tuple[int, Path]:
    out = tmp_path / into
    code = main(
        [
            "draft",
            "dataset",
            "--input",
            str(source or tmp_path / "in"),
            "--output",
            str(out),
            *extra,
        ]
    )
    return code, out


def rows(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_vendored_sample_becomes_speculators_conversations(tmp_path: Path) -> None:
    code, out = run(tmp_path, source=c.SAMPLE)
    assert code == 0
    kept = rows(out / "train.jsonl") + rows(out / "validation.jsonl")
    assert {"conversations"} == {key for row in kept for key in row}
    answers = sorted(row["conversations"][-1]["content"] for row in kept)
    assert answers == [
        " there was a draft.",
        "A small draft proposes tokens; the target verifies them.",
        "one, two, three",
    ]
    assert all(row["conversations"][-1]["role"] == "assistant" for row in kept)
    assert rows(out / "drops.jsonl") == [
        {"where": "sample.jsonl:1", "reason": capture.NOT_REQUEST},
        {"where": "sample.jsonl:5", "reason": capture.DUPLICATE},  # whitespace-normalized
    ]


def bad_base64() -> Any:
    record = c.chat("q", "a")
    record["captureData"]["endpointInput"]["data"] = "***not base64***"
    return record


def no_output() -> Any:
    record = c.chat("q2", "a")
    del record["captureData"]["endpointOutput"]
    return record


DROPS = [
    ("{not json", capture.MALFORMED_JSON),
    (b"\xff\xfe\x00garbage\x80", capture.MALFORMED_JSON),
    ("[" * 50 + "]" * 50, capture.NOT_CAPTURE),
    ("[" * 10_000 + "]" * 10_000, capture.MALFORMED_JSON),  # deeper than the parser goes
    ({"eventVersion": "0"}, capture.NOT_CAPTURE),
    (no_output(), capture.NO_OUTPUT),
    (bad_base64(), capture.BAD_BASE64),
    (c.record({"inputs": "text-generation style"}, c.chat_response("a")), capture.NOT_REQUEST),
    (c.record(c.chat_request("q3"), {"generated_text": "x"}), capture.NOT_RESPONSE),
    (c.chat("q4", "   "), capture.EMPTY_ANSWER),
    (c.chat("q5", "x" * 3000), capture.OVERSIZED),
    (c.chat("q", "another answer to the same prompt"), capture.DUPLICATE),
]


def test_every_record_is_a_row_or_a_drop_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    c.write(tmp_path / "in" / "a.jsonl", [c.chat("q", "a")] + [r for r, _ in DROPS])
    code, out = run(tmp_path, "--max-record-bytes", "2000", "--validation-fraction", "0")
    assert code == 0
    assert len(rows(out / "train.jsonl")) == 1
    expected = [
        {"where": f"a.jsonl:{n}", "reason": capture.OVERSIZED if len(str(r)) > 2000 else why}
        for n, (r, why) in enumerate(DROPS, start=2)
    ]
    assert rows(out / "drops.jsonl") == expected
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["counts"]["read"] == len(DROPS) + 1
    stdout = capsys.readouterr().out
    assert stdout.startswith(f"read {len(DROPS) + 1} records in 1 file: 1 rows")
    listed = [line.split(", ", 1)[1].rsplit(":", 1)[0] for line in stdout.splitlines()[1:-1]]
    assert listed == [r for r in capture.DROP_REASONS if r in {d["reason"] for d in expected}]


@pytest.mark.parametrize(("record", "reason"), DROPS[:-2])
def test_each_drop_reason_alone(tmp_path: Path, record: Any, reason: str) -> None:
    c.write(tmp_path / "in" / "a.jsonl", [record])
    code, out = run(tmp_path, "--max-record-bytes", str(1 << 22))
    assert code == 1
    assert rows(out / "drops.jsonl") == [{"where": "a.jsonl:1", "reason": reason}]


def test_the_split_is_deterministic_and_near_its_fraction(tmp_path: Path) -> None:
    c.write(tmp_path / "in" / "a.jsonl", [c.chat(f"question {i}", "a") for i in range(2000)])
    _, first = run(tmp_path, "--validation-fraction", "0.1", "--seed", "7")
    train, validation = (
        (first / "train.jsonl").read_text(),
        (first / "validation.jsonl").read_text(),
    )
    _, again = run(tmp_path, "--validation-fraction", "0.1", "--seed", "7", into="again")
    assert (again / "train.jsonl").read_text() == train
    assert (again / "validation.jsonl").read_text() == validation
    count = len(validation.splitlines())
    assert 150 < count < 250
    assert count + len(train.splitlines()) == 2000
    _, other = run(tmp_path, "--validation-fraction", "0.1", "--seed", "8", into="other")
    assert (other / "validation.jsonl").read_text() != validation


def test_provenance_names_sources_times_counts_split_and_version(tmp_path: Path) -> None:
    c.write(tmp_path / "in" / "b" / "late.jsonl", [c.chat("q1", "a", time="2025-05-01T00:00:00Z")])
    c.write(tmp_path / "in" / "a.jsonl", [c.chat("q2", "a", time="2025-04-01T00:00:00Z"), "{"])
    (tmp_path / "in" / "notes.txt").write_text("not a capture file")
    code, out = run(tmp_path, "--seed", "3")
    assert code == 0
    record = json.loads((out / "provenance.json").read_text())
    assert [s["path"] for s in record["sources"]] == ["a.jsonl", "b/late.jsonl"]
    first = record["sources"][0]
    assert first["size"] == (tmp_path / "in" / "a.jsonl").stat().st_size
    assert len(first["sha256"]) == 64
    assert record["inferenceTime"] == {
        "earliest": "2025-04-01T00:00:00Z",
        "latest": "2025-05-01T00:00:00Z",
    }
    assert record["counts"]["read"] == 3 and record["counts"]["kept"] == 2
    assert record["counts"]["dropped"][capture.MALFORMED_JSON] == 1
    assert list(record["counts"]["dropped"]) == list(capture.DROP_REASONS)
    assert record["split"] == {"validationFraction": 0.05, "seed": 3}
    assert record["tool"]["version"] not in ("", "unknown")


def test_chat_content_parts_and_a_completions_prompt_list() -> None:
    parts = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    assert capture.prompt_of(parts) == (("user", "hi"),)
    assert capture.prompt_of({"prompt": ["once"]}) == (("user", "once"),)
    with pytest.raises(capture.Dropped):
        capture.prompt_of({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})


def test_a_streamed_answer_with_a_usage_chunk() -> None:
    body = c.sse(["a", "b"]).replace(
        "data: [DONE]", 'data: {"choices": [], "usage": {"total_tokens": 3}}\n\ndata: [DONE]'
    )
    assert capture.answer_of(body, "text/event-stream") == "ab"
    with pytest.raises(capture.Dropped):
        capture.answer_of("data: [DONE]\n\n", "text/event-stream")


def test_a_huge_line_is_read_past_without_holding_it(tmp_path: Path) -> None:
    path = tmp_path / "in" / "big.jsonl"
    path.parent.mkdir()
    with path.open("wb") as file:
        file.write(b'{"a": "' + b"x" * (100 << 20) + b'"}\n')
        file.write((json.dumps(c.chat("q", "a")) + "\n").encode())
    with path.open("rb") as file:
        lines = list(draft_dataset.bounded_lines(file, 1 << 20))
    assert lines[0] is None and lines[1] is not None and len(lines) == 2
    code, out = run(tmp_path)
    assert code == 0
    assert rows(out / "drops.jsonl") == [{"where": "big.jsonl:1", "reason": capture.OVERSIZED}]


def test_fifos_are_not_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    os.mkfifo(folder / "pipe.jsonl")
    assert run(tmp_path)[0] == 1  # the FIFO inside a folder is left out: no rows
    assert "no .jsonl files found" in capsys.readouterr().err
    code, _ = run(tmp_path, source=folder / "pipe.jsonl")
    assert code == 1
    assert capsys.readouterr().err.strip().endswith("neither a regular file nor a folder")


def test_a_missing_input_and_an_unwritable_output_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(tmp_path, source=tmp_path / "absent")[0] == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "absent" in err
    c.write(tmp_path / "in" / "a.jsonl", [c.chat("q", "a")])
    (tmp_path / "file").write_text("")
    code = main(
        [
            "draft",
            "dataset",
            "--input",
            str(tmp_path / "in"),
            "--output",
            str(tmp_path / "file" / "out"),
        ]
    )
    assert code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("draft dataset: --output ")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "mlcc", "draft", "dataset", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_the_real_cli_writes_the_sample(tmp_path: Path) -> None:
    done = cli("--input", str(c.SAMPLE), "--output", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        "read 5 records in 1 file: 3 rows (3 train, 0 validation), 2 dropped"
    )
    assert done.stderr == ""


def test_the_real_cli_on_garbage_and_bad_flags(tmp_path: Path) -> None:
    garbage = tmp_path / "g.jsonl"
    garbage.write_bytes(base64.b64decode("AAEC/wD+") * 1000 + b"\n\x00\x01")
    done = cli("--input", str(garbage), "--output", str(tmp_path / "out"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "draft dataset: no rows written: every record was dropped (drops.jsonl)"
    ]
    bad = cli("--input", str(garbage), "--validation-fraction", "2")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert cli("--input", str(garbage), "--seed", "-1").returncode == 2
    assert cli("--output", "x").returncode == 2


def test_requests_no_reader_can_keep_are_drops_not_tracebacks(tmp_path: Path) -> None:
    listed_role = {"messages": [{"role": ["user"], "content": "x"}]}
    surrogate = '{"messages": [{"role": "user", "content": "hi \\ud800 there"}]}'
    answered = c.chat_response("fine")
    bad_answer = '{"choices": [{"message": {"content": "a \\udfff"}}]}'
    records = [
        c.record(listed_role, answered, encoding="JSON"),
        c.record(surrogate, answered, encoding="JSON"),
        c.record(c.chat_request("q"), bad_answer, encoding="JSON"),
        c.chat("kept", "yes"),
    ]
    c.write(tmp_path / "in" / "a.jsonl", records)
    code, out = run(tmp_path, "--validation-fraction", "0")
    assert code == 0
    reasons = [d["reason"] for d in rows(out / "drops.jsonl")]
    assert reasons == [capture.NOT_REQUEST, capture.NOT_REQUEST, capture.NOT_RESPONSE]
    assert len(rows(out / "train.jsonl")) == 1


def test_an_earlier_output_under_the_input_is_not_read_again(tmp_path: Path) -> None:
    c.write(tmp_path / "in" / "a.jsonl", [c.chat("q", "a"), "not json"])
    for _ in range(2):
        code, out = run(tmp_path, into="in/out")
        assert code == 0
        record = json.loads((out / "provenance.json").read_text())
        assert [s["path"] for s in record["sources"]] == ["a.jsonl"]
        assert len(rows(out / "drops.jsonl")) == 1


def test_a_fifo_among_the_output_files_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    c.write(tmp_path / "in" / "a.jsonl", [c.chat("q", "a")])
    (tmp_path / "out").mkdir()
    os.mkfifo(tmp_path / "out" / "drops.jsonl")
    assert run(tmp_path)[0] == 1
    err = capsys.readouterr().err
    assert err == (
        f"draft dataset: --output {tmp_path}/out/drops.jsonl: is a FIFO (named pipe), not a "
        "file; move it away or choose another --output\n"
    )
