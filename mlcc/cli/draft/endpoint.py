"""`mlcc draft regenerate`'s requests to the target's vLLM server: the served model
(`GET /v1/models`) and one chat completion with the token ids (`POST /v1/chat/completions`).

The fields are vLLM 0.27.1's (the release the project pins), vllm-0.27.1 wheel:
- request `return_token_ids` (vllm/entrypoints/openai/chat_completion/protocol.py,
  `ChatCompletionRequest.return_token_ids`: "the result will include token IDs alongside the
  generated text");
- response `prompt_token_ids` (on `ChatCompletionResponse`) and `choices[i].token_ids` (on
  `ChatCompletionResponseChoice`), both None unless asked for (chat_completion/serving.py; also
  None when a reasoning parser hides the reasoning, `include_reasoning: false`);
- `/v1/models` answers `ModelList.data[]` of `ModelCard` (`id`, `root`, `max_model_len`; no
  revision) (engine/protocol.py); errors are `ErrorResponse.error.message` (engine/protocol.py).
An unknown request field is accepted and ignored (`OpenAIBaseModel`, `extra="allow"`), so a
server that does not know `return_token_ids` answers without token ids instead of refusing.

speculators 0.9.0 sends the same body (speculators/cli/regenerate_responses.py,
`regenerate_conversation`: `model`, `messages`, `max_tokens`, `return_token_ids: true` over the
sampling parameters) and reads the same fields (`_sample_from_response`). Each request uses the
project's HTTP client (mlcc/bench/client/transport.py): its own connection and one deadline for
the whole request; transient failures are retried as speculators retries them
(speculators/data_generation/vllm_client.py, `_post_chat`: connection errors, 408, 409, 425, 429
and 5xx; other statuses fail at once).
"""

from __future__ import annotations

import http.client
import json
import time
from dataclasses import dataclass
from typing import Any

from mlcc.bench.client.deadline import Deadline, DeadlineExceeded
from mlcc.bench.client.transport import (
    MAX_ERROR_BODY_BYTES,
    RequestError,
    body_message,
    connect,
    describe,
    read_limited,
    tls_context,
)
from mlcc.bench.client.transport import get as http_get
from mlcc.bench.inputs import HttpUrl, parse_http_url
from mlcc.cli.draft.capture import is_text
from mlcc.engine_contract.values import printable

CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"
MAX_REPLY_BYTES = 64 * 1024 * 1024  # a reply with its token ids: ~10 bytes a token
MAX_MODELS_BYTES = 4 * 1024 * 1024
MODELS_TIMEOUT_S = 30.0
RETRY_STATUSES = frozenset({408, 409, 425, 429})

# Drop reasons of a regenerated row, in the order of the summary and of provenance.json.
NOT_A_ROW = "not a conversations row"
HTTP_ERROR = "HTTP error"
TIMEOUT = "timeout"
CONNECTION = "connection failed"
MALFORMED_REPLY = "malformed reply"
NO_TOKEN_IDS = "no token ids"
EMPTY_TOKEN_IDS = "empty token ids"
EMPTY_ANSWER = "empty answer"
DROP_REASONS = (
    NOT_A_ROW,
    HTTP_ERROR,
    TIMEOUT,
    CONNECTION,
    MALFORMED_REPLY,
    NO_TOKEN_IDS,
    EMPTY_TOKEN_IDS,
    EMPTY_ANSWER,
)
NO_TOKEN_IDS_DETAIL = (
    "the endpoint did not return token ids: is it vLLM with return_token_ids support?"
)


class EndpointError(Exception):
    """The endpoint cannot be used at all: one line for the user."""


class Failed(Exception):
    """One request gave no row: `reason` is one of DROP_REASONS, `detail` says what happened."""

    def __init__(self, reason: str, detail: str, retry: bool = False) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail
        self.retry = retry


@dataclass(frozen=True)
class Served:
    """What `/v1/models` says of the model that answers."""

    model: str
    root: str | None
    max_model_len: int | None


@dataclass(frozen=True)
class Reply:
    answer: str
    prompt_token_ids: list[int]
    token_ids: list[int]
    finish_reason: str | None


def parse_url(text: str) -> HttpUrl:
    """The base URL (http://HOST[:PORT][/PATH]); ValueError names what is wrong."""
    return parse_http_url(text, allow_query=False)


def shown_url(url: HttpUrl) -> str:
    """The URL as provenance.json records it: no user, password, query or fragment."""
    port = f":{url.port}" if url.port is not None else ""
    host = f"[{url.host}]" if ":" in url.host else url.host
    return f"{'https' if url.https else 'http'}://{host}{port}{url.path}"


class Endpoint:
    def __init__(self, url: HttpUrl, timeout_s: float, retries: int, backoff_s: float) -> None:
        self.url = url
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self._tls = tls_context(True) if url.https else None

    def served(self, model: str | None) -> Served:
        """The model to ask for: `model`, which must be served, or the first one served."""
        where = shown_url(self.url) + MODELS_PATH
        try:
            deadline = Deadline(min(self.timeout_s, MODELS_TIMEOUT_S))
            status, raw = http_get(self.url, MODELS_PATH, deadline, self._tls, MAX_MODELS_BYTES)
        except (OSError, http.client.HTTPException, DeadlineExceeded) as error:
            raise EndpointError(f"cannot reach {where}: {describe(error)}") from None
        except RequestError as error:  # the answer is larger than the bound
            raise EndpointError(f"{where}: {error}") from None
        if status != 200:
            hint = ""
            if status == 404 and self.url.path.endswith("/v1"):
                hint = " (--endpoint is the base URL, without /v1)"
            message = printable(body_message(raw))
            raise EndpointError(f"{where} answered HTTP {status}: {message}{hint}")
        cards = _model_cards(raw)
        if cards is None:
            raise EndpointError(f"{where} did not answer an OpenAI model list")
        if not cards:
            raise EndpointError(f"{where} lists no model")
        if model is None:
            return cards[0]
        for card in cards:
            if card.model == model:
                return card
        names = ", ".join(printable(card.model)[:200] for card in cards[:20])
        raise EndpointError(f"--model {model!r} is not served at {where}; it serves: {names}")

    def chat(self, body: dict[str, Any]) -> Reply:
        """One reply, after at most `retries` more attempts for a transient failure."""
        attempt = 0
        while True:
            try:
                return parse_reply(self._post(body))
            except Failed as failure:
                if not failure.retry or attempt >= self.retries:
                    raise
            time.sleep(self.backoff_s * 2**attempt)
            attempt += 1

    def _post(self, body: dict[str, Any]) -> bytes:
        deadline = Deadline(self.timeout_s)
        try:
            connection = connect(self.url, deadline, self._tls)
            try:
                connection.request(
                    "POST",
                    self.url.path + CHAT_PATH,
                    json.dumps(body).encode(),
                    {"Content-Type": "application/json", "Accept": "application/json"},
                )
                response = connection.getresponse()
                if response.status != 200:
                    raw = response.read(MAX_ERROR_BODY_BYTES)
                    detail = printable(f"HTTP {response.status}: {body_message(raw)}")
                    transient = response.status >= 500 or response.status in RETRY_STATUSES
                    raise Failed(HTTP_ERROR, detail, retry=transient)
                raw = read_limited(response, MAX_REPLY_BYTES, "the reply")
            finally:
                connection.close()
        except (OSError, http.client.HTTPException, DeadlineExceeded) as error:
            if deadline.expired or isinstance(error, DeadlineExceeded | TimeoutError):
                raise Failed(TIMEOUT, f"no whole reply within {self.timeout_s:g} s") from None
            raise Failed(CONNECTION, describe(error), retry=True) from None
        except Failed:
            raise
        except RequestError as error:  # larger than the bound
            raise Failed(MALFORMED_REPLY, printable(str(error))) from None
        finally:
            deadline.finish()
        try:
            deadline.check()  # a reply cut short by the deadline (a bare EOF) is no reply
        except DeadlineExceeded:
            raise Failed(TIMEOUT, f"no whole reply within {self.timeout_s:g} s") from None
        return raw


def _model_cards(raw: bytes) -> list[Served] | None:
    try:
        data = json.loads(raw)["data"]
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    if not isinstance(data, list):
        return None
    cards = []
    for entry in data:
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            return None
        root = entry.get("root")
        length = entry.get("max_model_len")
        cards.append(
            Served(
                entry["id"],
                root if isinstance(root, str) else None,
                length if isinstance(length, int) and not isinstance(length, bool) else None,
            )
        )
    return cards


def _token_ids(value: object) -> list[int] | None:
    if not isinstance(value, list):
        return None
    if not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in value):
        return None
    return value


def parse_reply(raw: bytes) -> Reply:
    """A chat completion's first choice with its token ids, or Failed with the reason."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise Failed(MALFORMED_REPLY, "the reply is not JSON") from None
    choices = data.get("choices") if isinstance(data, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(choice, dict) or not isinstance(message, dict):
        raise Failed(MALFORMED_REPLY, "the reply has no choices[0].message")
    content = message.get("content")
    if content is not None and not (isinstance(content, str) and is_text(content)):
        raise Failed(MALFORMED_REPLY, "choices[0].message.content is not UTF-8 text")
    assert isinstance(data, dict)
    prompt_ids, token_ids = data.get("prompt_token_ids"), choice.get("token_ids")
    if prompt_ids is None or token_ids is None:
        raise Failed(NO_TOKEN_IDS, NO_TOKEN_IDS_DETAIL)
    prompt_ids, token_ids = _token_ids(prompt_ids), _token_ids(token_ids)
    if prompt_ids is None or token_ids is None:
        raise Failed(MALFORMED_REPLY, "the token ids are not lists of token numbers")
    if not prompt_ids or not token_ids:
        which = "prompt_token_ids" if not prompt_ids else "choices[0].token_ids"
        raise Failed(EMPTY_TOKEN_IDS, f"{which} is empty")
    if not content or not content.strip():
        raise Failed(EMPTY_ANSWER, "the regenerated answer is empty")
    finish = choice.get("finish_reason")
    return Reply(content, prompt_ids, token_ids, finish if isinstance(finish, str) else None)
