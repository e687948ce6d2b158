"""OpenAI-compatible HTTP backend (OpenAI, vLLM's server, TGI, Ollama, llama.cpp ...).

Chat prompts go to ``/chat/completions``, completion prompts to ``/completions``. Requests run
in a bounded thread pool; 429, 5xx, timeouts and dropped connections are retried with
exponential backoff and jitter, honouring Retry-After. A malformed answer or an exhausted retry
budget becomes an error on that prompt's completions, not a crash; a refused key or an unknown
model stops the run with a UserError (every other request would fail the same way).
"""

from __future__ import annotations

import email.utils
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from codereval.errors import UserError
from codereval.generation.base import (
    Backend,
    BackendConfig,
    Completion,
    SamplingOptions,
    env_or,
)
from codereval.prompting.prompts import Prompt, PromptStyle

DEFAULT_BASE_URL = "https://api.openai.com/v1"
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
FATAL_STATUS = {
    401: "the server refused the API key; set OPENAI_API_KEY or pass --api-key",
    403: "the server refused access with this API key",
    404: "the endpoint or model was not found; check --base-url and --model",
}


class ResponseError(Exception):
    """The server answered, but not with usable completions."""


class OpenAIBackend(Backend):
    name = "openai"

    def __init__(
        self, config: BackendConfig, *, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        super().__init__(config)
        base_url = env_or(config.base_url, "OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self.base_url = base_url.rstrip("/")
        api_key = env_or(config.api_key, "OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(config.timeout),
            limits=httpx.Limits(max_connections=max(1, config.concurrency)),
        )
        self._sleep = sleep
        self._fatal: UserError | None = None
        self._lock = threading.Lock()

    def close(self) -> None:
        self.client.close()

    def generate(
        self, prompts: Sequence[Prompt], options: SamplingOptions
    ) -> list[list[Completion]]:
        with ThreadPoolExecutor(max_workers=max(1, self.config.concurrency)) as pool:
            results = list(pool.map(lambda prompt: self._sample(prompt, options), prompts))
        if self._fatal is not None:
            raise self._fatal
        return results

    def _sample(self, prompt: Prompt, options: SamplingOptions) -> list[Completion]:
        """``options.n`` completions; servers that give fewer choices than asked are asked
        again for the rest."""
        completions: list[Completion] = []
        while len(completions) < options.n:
            if self._fatal is not None:
                break
            wanted = options.n - len(completions)
            try:
                completions.extend(self._request(prompt, options, wanted))
            except ResponseError as exc:
                completions.extend([Completion(error=str(exc))] * wanted)
            except UserError as exc:
                with self._lock:
                    self._fatal = self._fatal or exc
                break
        return completions[: options.n]

    def _payload(self, prompt: Prompt, options: SamplingOptions, n: int) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.config.model,
            "n": n,
            "temperature": options.temperature,
            "top_p": options.top_p,
            "max_tokens": options.max_new_tokens,
        }
        stop = list(options.stop or prompt.stop)
        if stop:
            # The OpenAI API takes at most four stop sequences.
            payload["stop"] = stop[:4]
        if options.seed is not None:
            payload["seed"] = options.seed
        if prompt.style is PromptStyle.CHAT:
            payload["messages"] = prompt.messages()
        else:
            payload["prompt"] = prompt.text
        return payload

    def _request(self, prompt: Prompt, options: SamplingOptions, n: int) -> list[Completion]:
        chat = prompt.style is PromptStyle.CHAT
        url = f"{self.base_url}/{'chat/completions' if chat else 'completions'}"
        payload = self._payload(prompt, options, n)
        last = ""
        retry_after: float | None = None
        refused = 0
        for attempt in range(self.config.max_retries + 1):
            if attempt:
                self._sleep(self._delay(attempt, retry_after))
                retry_after = None
            try:
                response = self.client.post(url, json=payload)
            except httpx.TimeoutException:
                last = f"timed out after {self.config.timeout:g}s"
                continue
            except httpx.TransportError as exc:
                last = f"connection failed ({exc})"
                refused += isinstance(exc, httpx.ConnectError)
                continue
            status = response.status_code
            if status in FATAL_STATUS:
                raise UserError(
                    f"{url} answered HTTP {status}: {_error_text(response)}",
                    hint=FATAL_STATUS[status],
                )
            if status in RETRY_STATUS:
                last = f"HTTP {status}: {_error_text(response)}"
                retry_after = _retry_after(response)
                continue
            if status >= 400:
                raise ResponseError(f"HTTP {status}: {_error_text(response)}")
            return _parse(response, chat=chat, url=url)
        attempts = self.config.max_retries + 1
        if refused == attempts:
            # Nothing listens there: every other request would fail the same way.
            raise UserError(
                f"cannot connect to {self.base_url}: {last}",
                hint="is the server running? check --base-url / OPENAI_BASE_URL",
            )
        raise ResponseError(f"gave up after {attempts} attempts: {last}")

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.config.max_backoff)
        step = self.config.backoff * float(2 ** (attempt - 1))
        jitter = random.uniform(0.0, self.config.backoff)
        return float(min(step + jitter, self.config.max_backoff))


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _error_text(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return " ".join(response.text.split())[:200] or response.reason_phrase
    if isinstance(body, dict):
        error: object = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])[:200]
        if isinstance(error, str):
            return error[:200]
    return str(body)[:200]


def _parse(response: httpx.Response, *, chat: bool, url: str) -> list[Completion]:
    try:
        body = response.json()
    except ValueError:
        snippet = " ".join(response.text.split())[:80]
        raise ResponseError(f"malformed response from {url}: not JSON ({snippet!r})") from None
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices:
        raise ResponseError(f"malformed response from {url}: no 'choices' list")
    completions = []
    for position, choice in enumerate(choices):
        if not isinstance(choice, dict):
            raise ResponseError(f"malformed response from {url}: choices[{position}] not object")
        if chat:
            message = choice.get("message")
            text = message.get("content") if isinstance(message, dict) else None
            where = f"choices[{position}].message.content"
        else:
            text = choice.get("text")
            where = f"choices[{position}].text"
        if text is None and choice.get("finish_reason") == "length":
            text = ""  # cut off before any text: an empty, truncated completion
        if not isinstance(text, str):
            raise ResponseError(f"malformed response from {url}: missing {where}")
        reason = choice.get("finish_reason")
        finish = reason if isinstance(reason, str) else ""
        completions.append(Completion(text=text, finish_reason=finish))
    return completions
