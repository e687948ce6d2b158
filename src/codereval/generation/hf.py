"""Hugging Face transformers backend: a local model directory, sampled on this machine.

torch and transformers are an optional extra (``pip install 'codereval[hf]'``): the default
torch wheel pulls several GB of CUDA libraries. Models load from a local path only (no hub).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codereval.errors import UserError
from codereval.generation.base import Backend, BackendConfig, Completion, SamplingOptions
from codereval.prompting.prompts import Prompt, PromptStyle

INSTALL_HINT = "pip install 'codereval[hf]' (torch + transformers)"


class HFBackend(Backend):
    name = "hf"

    def __init__(self, config: BackendConfig) -> None:
        super().__init__(config)
        try:
            torch = importlib.import_module("torch")
            transformers = importlib.import_module("transformers")
        except ImportError as exc:
            raise UserError(f"the hf backend needs torch and transformers ({exc})",
                            hint=INSTALL_HINT) from None
        path = Path(config.model).expanduser()
        if not path.is_dir():
            raise UserError(
                f"model directory not found: {config.model}",
                hint="the hf backend loads a local model directory (config + weights + tokenizer)",
            )
        self.torch: Any = torch
        try:
            self.tokenizer: Any = transformers.AutoTokenizer.from_pretrained(
                path, local_files_only=True
            )
            self.model: Any = transformers.AutoModelForCausalLM.from_pretrained(
                path, local_files_only=True
            )
        except (OSError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UserError(f"cannot load the model in {path}: {first}") from None
        self.device = config.device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device)
        self.model.eval()

    def _text(self, prompt: Prompt) -> str:
        if prompt.style is PromptStyle.COMPLETION:
            return prompt.text
        if getattr(self.tokenizer, "chat_template", None):
            text = self.tokenizer.apply_chat_template(
                prompt.messages(), tokenize=False, add_generation_prompt=True
            )
            return str(text)
        return f"{prompt.system}\n\n{prompt.text}\n\n"

    def generate(
        self, prompts: Sequence[Prompt], options: SamplingOptions
    ) -> list[list[Completion]]:
        return [self._sample(prompt, options) for prompt in prompts]

    def _sample(self, prompt: Prompt, options: SamplingOptions) -> list[Completion]:
        torch = self.torch
        if options.seed is not None:
            torch.manual_seed(options.seed)
        encoded = self.tokenizer(self._text(prompt), return_tensors="pt").to(self.device)
        sampling = options.temperature > 0
        settings: dict[str, Any] = {
            "max_new_tokens": options.max_new_tokens,
            "num_return_sequences": options.n,
            "do_sample": sampling,
        }
        if sampling:
            settings.update(temperature=options.temperature, top_p=options.top_p)
        eos = self.tokenizer.eos_token_id
        pad = self.tokenizer.pad_token_id
        settings["pad_token_id"] = pad if pad is not None else eos
        with torch.no_grad():
            output = self.model.generate(**encoded, **settings)
        start = encoded["input_ids"].shape[1]
        stops = options.stop or prompt.stop
        completions = []
        for row in output:
            new = row[start:]
            text = self.tokenizer.decode(new, skip_special_tokens=True)
            hit = _first_stop(text, stops)
            if hit >= 0:
                completions.append(Completion(text=text[:hit], finish_reason="stop"))
                continue
            ended = eos is not None and bool((new == eos).any())
            finish = "stop" if ended or len(new) < options.max_new_tokens else "length"
            completions.append(Completion(text=text, finish_reason=finish))
        return completions


def _first_stop(text: str, stops: Sequence[str]) -> int:
    hits = [text.find(stop) for stop in stops if stop and stop in text]
    return min(hits) if hits else -1
