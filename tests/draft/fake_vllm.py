"""A fake vLLM OpenAI server on 127.0.0.1 for `mlcc draft regenerate`'s tests: started and stopped
by the test (the bench fakes' LoopbackServer), stdlib only.

Its answers have vLLM 0.27.1's fields and shapes (vllm-0.27.1 wheel):
- `POST /v1/chat/completions`: `ChatCompletionResponse` (vllm/entrypoints/openai/
  chat_completion/protocol.py) as `model_dump()` writes it (chat_completion/api_router.py:
  every field, None as null): `prompt_token_ids` at the top and `choices[i].token_ids`, both
  null unless the request says `return_token_ids: true` (chat_completion/serving.py); the
  message without `tool_calls` when there are none (`ChatMessage._serialize`);
- errors: `ErrorResponse` `{"error": {"message", "type", "param", "code"}}` with the status as
  `code` (engine/protocol.py);
- `GET /v1/models`: `ModelList` of `ModelCard` (`id`, `object`, `created`, `owned_by`, `root`,
  `parent`, `max_model_len`, `permission`) (engine/protocol.py, models/serving.py).

What a request gets depends on its last user turn's first word: `slow` waits 0.2 s, `hang` 3 s;
`fail` is a 500; `flaky` is a 503 the first time its prompt is seen; `notokens` is answered as
by a server that ignores `return_token_ids`; `badjson` is not JSON; `empty` has no answer text;
`emptyids` has empty token ids; `surrogate` answers an unpaired surrogate; `long` stops at
max_tokens. `token_ids=False` makes every reply lack token ids (a server without the field).
The fake records the most requests it had in flight at once and every request body.
"""

from __future__ import annotations

import json
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler
from typing import Any

from bench_fake_engine import LoopbackServer

MODEL = "my-target"
ROOT = "org/My-Target-8B"
MAX_MODEL_LEN = 8192


def tokens(text: str) -> list[int]:
    """A stand-in tokenizer: one id per word, the same every time."""
    return [zlib.crc32(word.encode("utf-8", "surrogatepass")) % 32000 for word in text.split()]


class FakeVllm(LoopbackServer):
    def __init__(self, token_ids: bool = True) -> None:
        self.token_ids = token_ids
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0
        self.bodies: list[Any] = []
        self.seen: set[str] = set()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path != "/v1/models":
                    self._json(404, _error("Not Found", 404))
                    return
                card = {
                    "id": MODEL,
                    "object": "model",
                    "created": 1,
                    "owned_by": "vllm",
                    "root": ROOT,
                    "parent": None,
                    "max_model_len": MAX_MODEL_LEN,
                    "permission": [],
                }
                self._json(200, {"object": "list", "data": [card]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                with fake.lock:
                    fake.bodies.append(body)
                    fake.in_flight += 1
                    fake.most_in_flight = max(fake.most_in_flight, fake.in_flight)
                self.counted = True
                try:
                    self._answer(body)
                except OSError:  # the client gave up (its timeout)
                    pass
                finally:
                    self._done()

            def _done(self) -> None:
                # Before the reply is written: once the client has it, it may send its next
                # request before this thread would get back here.
                if getattr(self, "counted", False):
                    self.counted = False
                    with fake.lock:
                        fake.in_flight -= 1

            def _answer(self, body: Any) -> None:
                question = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
                word = question.split()[0] if question.split() else ""
                if word == "slow":
                    time.sleep(0.2)
                if word == "hang":
                    time.sleep(3)
                if word == "fail":
                    self._json(500, _error("EngineCore encountered an issue", 500))
                    return
                if word == "flaky":
                    with fake.lock:
                        first = question not in fake.seen
                        fake.seen.add(question)
                    if first:
                        self._json(503, _error("Service Unavailable", 503))
                        return
                if word == "badjson":
                    self._send(200, b'{"id": "chatcmpl-1", "choices": [')
                    return
                self._json(200, fake.reply(body, word))

            def _json(self, status: int, payload: Any) -> None:
                self._send(status, json.dumps(payload).encode())

            def _send(self, status: int, raw: bytes) -> None:
                self._done()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self._serve(Handler)

    def reply(self, body: Any, word: str) -> Any:
        prompt = " ".join(f"<{m['role']}> {m['content']}" for m in body["messages"])
        question = body["messages"][-1]["content"]
        answer = "" if word == "empty" else f"regenerated answer to {question}"
        if word == "surrogate":  # JSON's \ud800 escape: valid JSON, not UTF-8 text
            answer = "half of a pair: \ud800"
        prompt_ids, answer_ids = tokens(prompt), tokens(answer or "x")
        finish = "stop"
        if word == "long":
            answer_ids, finish = answer_ids[:2], "length"
        if word == "emptyids":
            answer_ids = []
        asked = body.get("return_token_ids") is True and self.token_ids and word != "notokens"
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": answer,
                        "refusal": None,
                        "annotations": None,
                        "audio": None,
                        "function_call": None,
                        "reasoning": None,
                    },
                    "logprobs": None,
                    "finish_reason": finish,
                    "stop_reason": None,
                    "token_ids": answer_ids if asked else None,
                    "routed_experts": None,
                }
            ],
            "service_tier": None,
            "system_fingerprint": None,
            "usage": {
                "prompt_tokens": len(prompt_ids),
                "total_tokens": len(prompt_ids) + len(answer_ids),
                "completion_tokens": len(answer_ids),
                "prompt_tokens_details": None,
            },
            "prompt_logprobs": None,
            "prompt_token_ids": prompt_ids if asked else None,
            "prompt_text": None,
            "kv_transfer_params": None,
            "ec_transfer_params": None,
            "metrics": None,
        }


def _error(message: str, code: int) -> Any:
    kind = "InternalServerError" if code >= 500 else "NotFoundError"
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
