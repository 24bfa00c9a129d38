"""Session 1 of the demo in its own process: ``python -m demo.session_one SPEC`` (run by ``demo.conversation``).

``SPEC`` is a JSON file: ``args`` (the demo's options), ``archive`` (the SQLite archive file to write) and ``result``
(where to write what session 2 needs besides the archive: the planted number, the summary's check, timings).
Exit status 0 when session 1 ran, 2 when it could not (the message says what to do).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from demo.cli import configure
from demo.components import DemoError
from demo.console import Console
from demo.conversation import first_session


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if len(arguments) != 1:
        print("usage: python -m demo.session_one SPEC.json", file=sys.stderr)
        return 2
    spec = json.loads(Path(arguments[0]).read_text(encoding="utf-8"))
    args = argparse.Namespace(**spec["args"])
    console = Console()
    configure(args)
    from strands_semantic_memory import SemanticMemoryError

    try:
        first = first_session(args, console, None, None, Path(spec["archive"]))
    except DemoError as error:
        console.fail(str(error), error.hint)
        return 2
    except SemanticMemoryError as error:
        console.fail(str(error), "see docs/troubleshooting.md (the embedding model)")
        return 2
    Path(spec["result"]).write_text(first.to_json(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
