"""The command line for operators: ``strands-semantic-memory`` (or ``python -m strands_semantic_memory``).

Over an SQLite archive (``--archive FILE``) or a PostgreSQL user (``--dsn DSN --user USER``): ``stats``, ``search``,
``show``, ``export``, ``import``, ``forget``, ``reembed`` and ``doctor``. docs/operations.md describes each command,
with an example, and the exit codes.

Modules: ``_main`` (the entry point: errors as one line, exit codes), ``_commands`` (the commands, on click),
``_opening`` (the options that name an archive, and opening it), ``_output`` (tables, JSON and progress bars, on
rich), ``_doctor`` (the doctor's checks). The commands are thin: what they do is the library's
(``SemanticMemory``, ``engine.export_history`` / ``import_history``, ``SemanticMemory.reembed``).
"""

from strands_semantic_memory.cli._main import EXIT_CODES, main, run

__all__ = ["EXIT_CODES", "main", "run"]
