"""The demo's parts: the chat model (local or Bedrock), the embedder, the conversation manager and its tools.

Each maker turns a missing model or credential into a ``DemoError`` that says what to do.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from demo.console import Console

SUMMARY_PROMPT = (
    "Summarize the conversation above in three short bullet points about the topics discussed. "
    "Do not repeat any numbers, codes or personal details."
)


LOAD_TIMES = {
    "torch": "about 15 s alone on 2 quiet cores, 30 s to 2 minutes beside the demo's other process and other work",
    "llama": "under a second",
}
"""What loading the local chat model takes on each backend (the torch figure is de-quantizing the weights)."""
REPLY_TIMES = {"torch": "5 to 25 s a reply on 2 cores", "llama": "1 to 5 s a reply"}
"""What one reply of the local model takes (96 tokens at most), shown before the steps that wait for replies."""


def reply_time(model: Any, before: str = ", ", after: str = "") -> str:
    """The expected time of one reply of the local model, between ``before`` and ``after``; nothing for another
    model (Bedrock, a test's), whose speed the demo does not know."""
    expected = REPLY_TIMES.get(str(getattr(model, "backend", "")))
    return f"{before}{expected}{after}" if expected else ""


class DemoError(Exception):
    """An expected condition that stops the demo: a one-line reason and what to do."""

    def __init__(self, reason: str, hint: str) -> None:
        super().__init__(reason)
        self.hint = hint


def aws_credentials_available() -> bool:
    import boto3

    return boto3.Session().get_credentials() is not None


def require_aws(what: str) -> None:
    if not aws_credentials_available():
        raise DemoError(
            f"{what} needs AWS credentials, and none were found",
            "configure them (aws configure, AWS_PROFILE, or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY) "
            "with bedrock:InvokeModel permission, or run without Bedrock options to stay offline",
        )


def make_chat_model(args: argparse.Namespace, console: Console) -> Any:
    if args.model:
        require_aws(f"the Bedrock chat model {args.model}")
        from strands.models import BedrockModel

        with console.step(f"Connecting to Bedrock chat model {args.model}"):
            return BedrockModel(model_id=args.model, region_name=args.region, max_tokens=300, temperature=0.0)
    from demo.local_llm import BACKEND_LABELS, ModelNotInstalledError, load_local_model, resolve_backend

    backend = resolve_backend(getattr(args, "backend", "auto"))
    took = LOAD_TIMES[backend]
    try:
        with console.step(f"Loading local chat model SmolLM2-135M-Instruct ({BACKEND_LABELS[backend]}; {took})"):
            return load_local_model(backend)
    except ModelNotInstalledError as error:
        raise DemoError(
            str(error), "run the README's demo command (bash scripts/demo.sh), which installs it"
        ) from error


def make_embedder(name: str, region: str | None) -> Any:
    from strands_semantic_memory.embeddings import BEDROCK_PREFIX, resolve_embedder

    if name.startswith(BEDROCK_PREFIX):
        require_aws(f"the embedding model {name}")
    return resolve_embedder(name, aws_region=region)


def load_embedder(name: str, region: str | None, console: Console) -> Any:
    from strands_semantic_memory import SemanticMemoryError

    embedder = make_embedder(name, region)
    try:
        with console.step(f"Loading embedding model {embedder.model_id}"):
            _ = embedder.dimension
    except SemanticMemoryError as error:
        raise DemoError(
            str(error).split("\n")[0], "check --embedding-model, or use the default all-MiniLM-L6-v2"
        ) from error
    return embedder


def make_tools(manager: Any) -> list[Any]:
    """The conversation tools (``memory_tools``) over the manager's archive."""
    from strands_semantic_memory import memory_tools

    return list(memory_tools(manager))


def make_manager(args: argparse.Namespace, embedder: Any, archive: Path) -> Any:
    """The demo's manager over the durable archive file ``archive``: small context, two hits with one neighbour
    each; ``--structured`` keeps a structured summary."""
    from strands_semantic_memory import SemanticSummarizingConversationManager

    options: dict[str, Any] = {
        "summary_ratio": 0.6,
        "preserve_recent_messages": 6,
        "semantic_search_top_k": 2,
        "message_context_radius": 1,
        "embedder": embedder,
        "archive_path": archive,
    }
    if args.structured:  # the structured path has its own merge instructions: no summary prompt
        return SemanticSummarizingConversationManager(**options, summary_format="structured")
    return SemanticSummarizingConversationManager(**options, summarization_system_prompt=SUMMARY_PROMPT)
