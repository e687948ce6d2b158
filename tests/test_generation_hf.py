"""The transformers backend with a tiny model the test builds (random weights, own tokenizer).

torch + transformers are the optional extra ``[hf]`` (the default torch wheel pulls ~5 GB of
CUDA libraries), so these tests run only where it is installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codereval.errors import UserError
from codereval.generation import BackendConfig, SamplingOptions, get_backend
from codereval.model import Language, Task
from codereval.prompting.prompts import build_prompt

TASK = Task(task_id="p", benchmark="codereval-python", language=Language.PYTHON, name="f",
            signature="def f(x):", docstring="Double x.")


def test_a_missing_model_directory_is_a_user_error(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    with pytest.raises(UserError, match="model directory not found"):
        get_backend("hf", BackendConfig(model=str(tmp_path / "nope")))


def _tiny_model(path: Path) -> Path:
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<unk>", "<eos>"],
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
    )
    corpus = ["def f(x):\n\treturn 2 * x\n", 'def g(a, b):\n\t"""\n\tAdd.\n\t"""\n\treturn a + b\n']
    tokenizer.train_from_iterator(corpus * 20, trainer=trainer)
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, eos_token="<eos>", unk_token="<unk>"
    )
    fast.save_pretrained(path)
    config = transformers.GPT2Config(
        vocab_size=fast.vocab_size if hasattr(fast, "vocab_size") else len(fast),
        n_positions=256, n_embd=32, n_layer=2, n_head=2,
        eos_token_id=fast.eos_token_id, bos_token_id=fast.eos_token_id,
    )
    transformers.GPT2LMHeadModel(config).save_pretrained(path)
    return path


@pytest.mark.slow
def test_tiny_local_model_samples_n_completions(tmp_path: Path) -> None:
    model = _tiny_model(tmp_path / "tiny")
    backend = get_backend("hf", BackendConfig(model=str(model), device="cpu"))
    options = SamplingOptions(n=3, max_new_tokens=8, seed=1, stop=("\n\n\n\n",))
    [completions] = backend.generate([build_prompt(TASK)], options)
    assert len(completions) == 3
    assert all(isinstance(c.text, str) and not c.error for c in completions)
    assert all(c.finish_reason in ("stop", "length") for c in completions)
    # Same seed, same samples: the run is reproducible.
    [again] = backend.generate([build_prompt(TASK)], options)
    assert [c.text for c in again] == [c.text for c in completions]
    greedy = SamplingOptions(n=1, temperature=0, max_new_tokens=4)
    [[first]] = backend.generate([build_prompt(TASK)], greedy)
    [[second]] = backend.generate([build_prompt(TASK)], greedy)
    assert first.text == second.text
