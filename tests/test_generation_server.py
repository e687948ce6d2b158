"""A real OpenAI-compatible HTTP server on 127.0.0.1 for the backend and `run` tests.

Each request takes the next scripted behaviour ("ok", "429", "500", "slow", "malformed",
"no-choices", "401"); when the script is empty, answers come from ``answer(payload)``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = Callable[[dict[str, Any]], str]


class FakeOpenAI:
    def __init__(self, answer: Answer, *, slow_seconds: float = 2.0) -> None:
        self.answer = answer
        self.script: list[str] = []
        self.requests: list[tuple[float, str, dict[str, Any]]] = []
        self.slow_seconds = slow_seconds
        self.finish_reason = "stop"
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.delay = 0.0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def _next(self) -> str:
        with self.lock:
            return self.script.pop(0) if self.script else "ok"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            counted = False

            def _finish(self) -> None:
                # A request stops being in flight once its answer is decided: the client may
                # send its next request the moment the bytes arrive, before this thread ends.
                with fake.lock:
                    if self.counted:
                        fake.in_flight -= 1
                        self.counted = False

            def _send(
                self, status: int, body: bytes, headers: dict[str, str] | None = None
            ) -> None:
                self._finish()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                payload = json.loads(self.rfile.read(length))
                with fake.lock:
                    fake.requests.append((time.monotonic(), self.path, payload))
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                    self.counted = True
                try:
                    self._respond(payload)
                finally:
                    self._finish()

            def _respond(self, payload: dict[str, Any]) -> None:
                behaviour = fake._next()
                if fake.delay:
                    time.sleep(fake.delay)
                if behaviour == "429":
                    error = {"error": {"message": "rate limited"}}
                    self._send(429, json.dumps(error).encode(), {"Retry-After": "0.2"})
                    return
                if behaviour == "500":
                    self._send(500, b'{"error": {"message": "boom"}}')
                    return
                if behaviour == "401":
                    self._send(401, b'{"error": {"message": "bad key"}}')
                    return
                if behaviour == "slow":
                    time.sleep(fake.slow_seconds)
                if behaviour == "malformed":
                    self._send(200, b'{"choices": [ {"text": ')
                    return
                if behaviour == "no-choices":
                    self._send(200, b'{"object": "list"}')
                    return
                chat = self.path.endswith("/chat/completions")
                choices = []
                for index in range(int(payload.get("n", 1))):
                    text = fake.answer(payload)
                    choice: dict[str, Any] = {"index": index, "finish_reason": fake.finish_reason}
                    if chat:
                        choice["message"] = {"role": "assistant", "content": text}
                    else:
                        choice["text"] = text
                    choices.append(choice)
                self._send(200, json.dumps({"choices": choices}).encode())

        return Handler


@contextmanager
def fake_openai(answer: Answer, *, slow_seconds: float = 2.0) -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(answer, slow_seconds=slow_seconds)
    fake.thread.start()
    try:
        yield fake
    finally:
        fake.server.shutdown()
        fake.server.server_close()
