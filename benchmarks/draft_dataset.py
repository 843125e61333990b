#!/usr/bin/env python3
"""Cost of `mlcc draft dataset` per record against the work no reader of the format can skip.

Writes a capture file of synthetic SageMaker Data Capture records (half with JSON bodies, half
base64, as the operator writes them for listed and unlisted content types; multi-turn chats with
answers of a few hundred characters; a share of duplicates), then times, best of --repeats:

- the floor: read each line, `json.loads` the record, decode its two bodies (base64 where
  the record says so) and `json.loads` them: what any reader of the documented format does;
- `mlcc draft dataset`'s build (mlcc/cli/draft/dataset.py, in-process): the same, plus the
  checks, the deduplication, the split and writing train/validation/drops and their hashes.

Prints records/s and MB/s of each and the ratio (build / floor; 1.00 = no cost beyond the floor).

    python3 benchmarks/draft_dataset.py [--records 20000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mlcc.cli.draft import dataset as draft_dataset

DUPLICATE_EVERY = 10  # every tenth record repeats an earlier prompt


def record(n: int) -> str:
    prompt = n - 1 if n % DUPLICATE_EVERY == 0 and n else n
    request = {
        "model": "m",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": f"Question {prompt}: " + "why is the sky blue? " * 8},
            {"role": "assistant", "content": "Because of Rayleigh scattering. " * 6},
            {"role": "user", "content": f"And at sunset, case {prompt}?"},
        ],
    }
    answer = {"choices": [{"message": {"role": "assistant", "content": "Longer paths. " * 30}}]}
    encoded = n % 2 == 1
    body_in, body_out = json.dumps(request), json.dumps(answer)
    if encoded:
        body_in = base64.b64encode(body_in.encode()).decode()
        body_out = base64.b64encode(body_out.encode()).decode()
    kind = ("BASE64", "application/octet-stream") if encoded else ("JSON", "application/json")

    def side(mode: str, data: str) -> dict[str, str]:
        return {"observedContentType": kind[1], "mode": mode, "data": data, "encoding": kind[0]}

    return json.dumps(
        {
            "captureData": {
                "endpointInput": side("INPUT", body_in),
                "endpointOutput": side("OUTPUT", body_out),
            },
            "eventMetadata": {"eventId": f"e{n}", "inferenceTime": "2026-12-06T12:00:00Z"},
            "eventVersion": "0",
        }
    )


def floor(path: Path) -> int:
    count = 0
    with path.open("rb") as file:
        for line in file:
            data = json.loads(line)["captureData"]
            for side in (data["endpointInput"], data["endpointOutput"]):
                body = side["data"]
                text = base64.b64decode(body) if side["encoding"] == "BASE64" else body
                json.loads(text)
            count += 1
    return count


def build(path: Path, output: Path) -> int:
    split = draft_dataset.Split(validation_fraction=0.05, seed=0)
    tally = draft_dataset.build(path, output, split)
    return tally.read


def best(run: Callable[[], int], repeats: int) -> tuple[float, int]:
    times, count = [], 0
    for _ in range(repeats):
        started = time.perf_counter()
        count = run()
        times.append(time.perf_counter() - started)
    return min(times), count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        capture = Path(folder) / "capture.jsonl"
        capture.write_text("".join(record(n) + "\n" for n in range(args.records)))
        size_mb = capture.stat().st_size / 1e6
        floor_s, floor_count = best(lambda: floor(capture), args.repeats)
        build_s, build_count = best(lambda: build(capture, Path(folder) / "out"), args.repeats)
    assert floor_count == build_count == args.records, (floor_count, build_count)
    print(f"{args.records:,} capture records, {size_mb:.1f} MB, best of {args.repeats}:")
    for name, seconds in (("floor (parse and decode)", floor_s), ("mlcc draft dataset", build_s)):
        print(
            f"  {name:<26} {args.records / seconds:>9,.0f} records/s {size_mb / seconds:>7.1f} MB/s"
        )
    print(f"  ratio (dataset / floor): {build_s / floor_s:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
