"""The OpenAI-compatible backend against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import time

import pytest
from test_generation_server import fake_openai

from codereval.errors import UserError
from codereval.generation import BackendConfig, SamplingOptions, get_backend
from codereval.model import Language, Task
from codereval.prompting.prompts import PromptStyle, build_prompt

TASK = Task(task_id="p", benchmark="codereval-python", language=Language.PYTHON, name="f",
            signature="def f(x):", docstring="Double x.")


def _config(url: str, **changes: object) -> BackendConfig:
    settings: dict = dict(model="fake", base_url=url, api_key="k", timeout=1.0,
                          max_retries=3, backoff=0.05, concurrency=2)
    settings.update(changes)
    return BackendConfig(**settings)


def test_completions_endpoint_gets_the_sampling_options() -> None:
    with fake_openai(lambda payload: "return 2 * x\n") as server:
        backend = get_backend("openai", _config(server.base_url))
        options = SamplingOptions(n=3, temperature=0.2, top_p=0.9, max_new_tokens=64, seed=7)
        [completions] = backend.generate([build_prompt(TASK)], options)
    assert [c.text for c in completions] == ["return 2 * x\n"] * 3
    _, path, payload = server.requests[0]
    assert path == "/v1/completions"
    assert payload["prompt"] == build_prompt(TASK).text
    assert (payload["n"], payload["temperature"], payload["top_p"]) == (3, 0.2, 0.9)
    assert (payload["max_tokens"], payload["seed"], payload["model"]) == (64, 7, "fake")
    assert payload["stop"][0] == "\ndef "


def test_chat_endpoint_gets_system_and_user_messages() -> None:
    with fake_openai(lambda payload: "```python\ndef f(x):\n    return 2 * x\n```") as server:
        backend = get_backend("openai", _config(server.base_url))
        prompt = build_prompt(TASK, style=PromptStyle.CHAT)
        [completions] = backend.generate([prompt], SamplingOptions(n=1))
    _, path, payload = server.requests[0]
    assert path == "/v1/chat/completions"
    assert [m["role"] for m in payload["messages"]] == ["system", "user"]
    assert completions[0].text.startswith("```python")


def test_defaults_are_the_papers() -> None:
    options = SamplingOptions()
    assert (options.n, options.temperature, options.top_p, options.max_new_tokens) == (
        10, 0.6, 0.95, 1024
    )


def test_429_is_retried_after_the_servers_retry_after() -> None:
    with fake_openai(lambda payload: "return x\n") as server:
        server.script = ["429", "500"]
        backend = get_backend("openai", _config(server.base_url))
        [completions] = backend.generate([build_prompt(TASK)], SamplingOptions(n=1))
    assert completions[0].text == "return x\n" and not completions[0].error
    times = [t for t, _, _ in server.requests]
    assert len(times) == 3
    assert times[1] - times[0] >= 0.2  # Retry-After: 0.2 honoured


def test_timeouts_are_retried() -> None:
    with fake_openai(lambda payload: "return x\n", slow_seconds=1.5) as server:
        server.script = ["slow"]
        backend = get_backend("openai", _config(server.base_url, timeout=0.5))
        [completions] = backend.generate([build_prompt(TASK)], SamplingOptions(n=1))
    assert completions[0].text == "return x\n"
    assert len(server.requests) == 2


def test_malformed_responses_become_errors_on_that_prompt_only() -> None:
    other = TASK.model_copy(update={"task_id": "q"})
    with fake_openai(lambda payload: "return x\n") as server:
        server.script = ["malformed"]
        backend = get_backend("openai", _config(server.base_url, concurrency=1))
        first, second = backend.generate(
            [build_prompt(TASK), build_prompt(other)], SamplingOptions(n=2)
        )
    assert [c.error != "" for c in first] == [True, True]
    assert "malformed response" in first[0].error and "not JSON" in first[0].error
    assert [c.text for c in second] == ["return x\n"] * 2


def test_missing_choices_is_a_clear_error() -> None:
    with fake_openai(lambda payload: "x") as server:
        server.script = ["no-choices"]
        backend = get_backend("openai", _config(server.base_url))
        [completions] = backend.generate([build_prompt(TASK)], SamplingOptions(n=1))
    assert "no 'choices' list" in completions[0].error


def test_retries_give_up_with_an_error_not_a_crash() -> None:
    with fake_openai(lambda payload: "x") as server:
        server.script = ["500"] * 10
        backend = get_backend("openai", _config(server.base_url, max_retries=2))
        [completions] = backend.generate([build_prompt(TASK)], SamplingOptions(n=1))
    assert completions[0].error.startswith("gave up after 3 attempts: HTTP 500: boom")


def test_a_refused_key_stops_the_run() -> None:
    with fake_openai(lambda payload: "x") as server:
        server.script = ["401"]
        backend = get_backend("openai", _config(server.base_url))
        with pytest.raises(UserError, match="HTTP 401"):
            backend.generate([build_prompt(TASK)], SamplingOptions(n=1))


def test_no_server_is_a_user_error() -> None:
    with fake_openai(lambda payload: "x") as server:
        url = server.base_url
    backend = get_backend("openai", _config(url, max_retries=1))
    with pytest.raises(UserError, match="cannot connect"):
        backend.generate([build_prompt(TASK)], SamplingOptions(n=1))


def test_concurrency_limit_is_kept() -> None:
    tasks = [TASK.model_copy(update={"task_id": str(i)}) for i in range(8)]
    with fake_openai(lambda payload: "return x\n") as server:
        server.delay = 0.1
        backend = get_backend("openai", _config(server.base_url, concurrency=3))
        start = time.monotonic()
        results = backend.generate([build_prompt(t) for t in tasks], SamplingOptions(n=1))
        elapsed = time.monotonic() - start
    assert len(results) == 8
    assert server.max_in_flight == 3
    assert elapsed < 0.8  # in parallel, not one after another


def test_base_url_and_key_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with fake_openai(lambda payload: "return x\n") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "secret")
        backend = get_backend("openai", BackendConfig(model="fake"))
        backend.generate([build_prompt(TASK)], SamplingOptions(n=1))
    assert len(server.requests) == 1


def test_unknown_backends_name_the_choices() -> None:
    with pytest.raises(UserError, match="choose one of: hf, openai, vllm"):
        get_backend("nope", BackendConfig(model="m"))
