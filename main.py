"""Demo: semantic memory keeps the exact details that a conversation summary drops.

    python main.py            # offline, local models
    python main.py --help     # every option; demo/cli.py has examples and the exit statuses

The demo itself lives in ``demo/``: ``cli`` (options, exit status), ``conversation`` (one run: session 1 in a child
process, ``session_one``, and session 2 here, over one SQLite archive file; and the rates over seeds), ``components``
(chat model, embedder, manager, tools), ``embedding_check``, ``checks`` (the verdicts), ``levers``, and the local chat
model: ``local_llm`` (the backends' shared part, and llama-cpp-python) and ``torch_llm`` (PyTorch, the default).
"""

import sys

from demo.cli import main

if __name__ == "__main__":
    sys.exit(main())
