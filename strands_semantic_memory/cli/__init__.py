"""The command line for operators: ``strands-semantic-memory`` (or ``python -m strands_semantic_memory``).

Over an SQLite file (``--file PATH``) or one user's memory in PostgreSQL (``--dsn DSN --user USER``): ``stats``,
``search``, ``show``, ``profile``, ``export``, ``import``, ``forget``, ``reembed`` and ``doctor``;
docs/operations.md describes each, with the exit codes.

- ``_main``: the command group, errors as one line, the exit codes;
- ``_commands``: the commands (click), thin over ``SemanticMemory``, the archive and ``engine``'s history functions;
- ``_opening``: the options that name an archive, and opening it (read-only unless the command writes);
- ``_output``: rows, JSON and progress bars (rich), never interpreting what they show;
- ``_doctor``: the doctor's checks.
"""

from strands_semantic_memory.cli._main import EXIT_CODES, cli, main

__all__ = ["EXIT_CODES", "cli", "main"]
