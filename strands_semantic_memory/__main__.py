"""``python -m strands_semantic_memory``: the command line (``strands_semantic_memory.cli``)."""

from strands_semantic_memory.cli import main

main()
