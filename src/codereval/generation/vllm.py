"""vLLM backend: offline batched sampling on a GPU. Used only when vLLM is installed."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from codereval.errors import UserError
from codereval.generation.base import Backend, BackendConfig, Completion, SamplingOptions
from codereval.prompting.prompts import Prompt, PromptStyle

INSTALL_HINT = "pip install vllm (needs a GPU); or serve the model and use --backend openai"


class VLLMBackend(Backend):
    name = "vllm"

    def __init__(self, config: BackendConfig) -> None:
        super().__init__(config)
        try:
            vllm = importlib.import_module("vllm")
        except ImportError as exc:
            raise UserError(f"the vllm backend needs vLLM ({exc})", hint=INSTALL_HINT) from None
        self.vllm: Any = vllm
        self.llm: Any = vllm.LLM(model=config.model)

    def generate(
        self, prompts: Sequence[Prompt], options: SamplingOptions
    ) -> list[list[Completion]]:
        params = self.vllm.SamplingParams(
            n=options.n,
            temperature=options.temperature,
            top_p=options.top_p,
            max_tokens=options.max_new_tokens,
            stop=list(options.stop or (prompts[0].stop if prompts else ())) or None,
            seed=options.seed,
        )
        results: list[list[Completion]] = []
        completion_prompts = [p for p in prompts if p.style is PromptStyle.COMPLETION]
        if len(completion_prompts) == len(prompts):
            outputs = self.llm.generate([p.text for p in prompts], params)
        else:
            outputs = self.llm.chat([p.messages() for p in prompts], params)
        for output in outputs:
            results.append(
                [
                    Completion(text=o.text, finish_reason=o.finish_reason or "")
                    for o in output.outputs
                ]
            )
        return results
