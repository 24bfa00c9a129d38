"""Which archive a command works on: the options that name it, the values a person types, and opening it.

An archive is an SQLite file (``--file PATH``) or one user's memory in PostgreSQL (``--dsn DSN --user USER``); each
option may come from the environment (``STRANDS_SEMANTIC_MEMORY_FILE``, ``_DSN``, ``_USER``, ``_EMBEDDING_MODEL``),
which keeps a password out of the shell's history. Reading commands open a file read-only (a missing or empty file
is an error, never made into an archive); only ``import`` creates one. A file another process is writing answers
within ``BUSY_TIMEOUT`` seconds.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import click

from strands_semantic_memory import archives
from strands_semantic_memory.archives import Archive, SqliteArchive
from strands_semantic_memory.cli._output import visible
from strands_semantic_memory.embeddings import DEFAULT_MODEL
from strands_semantic_memory.engine import SemanticMemory
from strands_semantic_memory.engine._history import parse_time
from strands_semantic_memory.errors import EmbeddingModelMismatchError

COMMAND = "strands-semantic-memory"
ENV = "STRANDS_SEMANTIC_MEMORY"
BUSY_TIMEOUT = 1.5
"""Seconds a command waits for another process's write lock on an SQLite file before it says so."""
EMBED_TIMEOUT = 600.0
"""Seconds a search waits for its query vector: an operator wants meaning, not words while the model loads."""
DEBUG = "strands_semantic_memory.debug"
"""The click context's meta key ``--debug`` sets."""

_F = TypeVar("_F", bound=Callable[..., Any])


class CommandError(Exception):
    """A failure its message explains in full (one line; exit code 1)."""

    exit_code = 1


class Refused(CommandError):
    """Not confirmed, or refused as destructive (exit code 3)."""

    exit_code = 3


def mask_password(dsn: str) -> str:
    """A connection string with its password replaced by ``***`` (URI or ``key=value`` form)."""
    parts = urlsplit(dsn) if "://" in dsn else None
    if parts is None:
        return re.sub(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", r"\1***", dsn)
    if parts.password is None:
        return dsn
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{parts.netloc.rpartition('@')[2]}"))


@dataclass(frozen=True)
class Target:
    """The archive a command names (``file``, or ``dsn`` and ``user``) and the embedding ``model``."""

    file: Path | None
    dsn: str | None
    user: str | None
    model: str

    def describe(self) -> str:
        """The archive for a person: the file, or the database (password masked) and the user."""
        if self.file is not None:
            return str(self.file.expanduser().absolute())
        return f"{mask_password(self.dsn or '')} (user '{self.user}')"


def _debug(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[DEBUG] = True
        logging.getLogger("strands_semantic_memory").setLevel(logging.DEBUG)


debug_option = click.option(
    "--debug", is_flag=True, expose_value=False, is_eager=True, callback=_debug, help="Show tracebacks and debug logs."
)


def archive_options(*, required: bool = True, json_output: bool = True) -> Callable[[_F], _F]:
    """Add ``--file``, ``--dsn``, ``--user``, ``--embedding-model``, ``--json`` and ``--debug``; pass ``target``."""

    def decorate(command: _F) -> _F:
        @functools.wraps(command)
        def wrapper(*args: Any, file: Path | None, dsn: str | None, user: str | None, model: str, **kw: Any) -> Any:
            if file is not None and dsn is not None:
                raise click.UsageError("give --file PATH or --dsn DSN, not both")
            if dsn is not None and user is None:
                raise click.UsageError("--dsn needs --user USER: PostgreSQL holds one memory per user")
            if required and file is None and dsn is None:
                raise click.UsageError(f"name the archive: --file PATH, or --dsn DSN --user USER (or {ENV}_FILE)")
            return command(*args, target=Target(file, dsn, user, model), **kw)

        options = [
            click.option("--file", type=click.Path(dir_okay=False, path_type=Path), envvar=f"{ENV}_FILE",
                         help="An SQLite archive file."),
            click.option("--dsn", envvar=f"{ENV}_DSN", help="A PostgreSQL connection string (URI or key=value)."),
            click.option("--user", envvar=f"{ENV}_USER", help="Whose memory (with --file: the file's, checked)."),
            click.option("--embedding-model", "model", envvar=f"{ENV}_EMBEDDING_MODEL", default=DEFAULT_MODEL,
                         show_default=True, help="The model the archive is (or will be) embedded with."),
            debug_option,
        ]  # fmt: skip
        if json_output:
            options.append(click.option("--json", "as_json", is_flag=True, help="Print JSON instead of rows."))
        for option in reversed(options):
            wrapper = option(wrapper)
        return wrapper  # type: ignore[return-value]

    return decorate


def as_time(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    """A ``--since``/``--until`` value: ISO 8601 (UTC unless it says otherwise) or epoch seconds."""
    try:
        return parse_time(value)
    except ValueError:
        example = "ISO 8601 (2024-05-01T09:30:00Z) or seconds since the epoch"
        raise click.BadParameter(f"'{visible(value or '')}' is not a time: give {example}") from None


def as_indices(ctx: click.Context, param: click.Parameter, value: str | tuple[str, ...]) -> Any:
    """Archive indices as a person types them (``12``; ``10-20`` for ``--range``), refused in words otherwise."""
    found: list[Any] = []
    for text in [value] if isinstance(value, str) else value:
        first, dash, last = text.strip().partition("-") if param.name == "ranges" else (text.strip(), "", "")
        digits = first.isascii() and first.isdigit() and (not dash or last.isascii() and last.isdigit())
        if digits and (not dash or int(first) <= int(last)):
            found.append((int(first), int(last)) if dash else int(first))
        elif param.name == "ranges":
            raise click.BadParameter(f"'{visible(text)}' is not a range of indices: give FIRST-LAST, such as 10-20")
        else:
            raise click.BadParameter(f"'{visible(text)}' is not a message index: give a whole number, such as 12")
    return found[0] if isinstance(value, str) else tuple(found)


def open_archive(target: Target, *, write: bool = False, create: bool = False) -> Archive:
    """The archive ``target`` names: a file read-only unless ``write``, created only with ``create``.

    Raises:
        CommandError: If the file is missing (and not to be created), or PostgreSQL is not available.
        SemanticMemoryError: If the archive cannot be opened (the library's message).
    """
    if target.file is not None:
        path = target.file.expanduser()
        if not path.is_file() and (path.exists() or not create):
            raise CommandError(f"no archive file at '{path}' (import creates one)")
        return SqliteArchive(path, user_id=target.user, busy_timeout=BUSY_TIMEOUT, read_only=not write)
    if target.dsn is None or target.user is None:
        raise CommandError("name the archive: --file PATH, or --dsn DSN with --user USER")
    archive: Archive = archives.PostgresArchive(target.dsn, user_id=target.user)
    return archive


def open_memory(target: Target, archive: Archive) -> SemanticMemory:
    """A memory over ``archive`` with ``target``'s model, embedding inline; the archive is closed if this fails.

    Raises:
        CommandError: If the archive was embedded with another model (the message says the two ways on).
    """
    try:
        return SemanticMemory(target.model, archive=archive, embed_timeout=EMBED_TIMEOUT)
    except EmbeddingModelMismatchError as error:
        archive.close()
        raise CommandError(
            f"the archive was embedded with '{error.archived_model}', not '{error.configured_model}': pass "
            f"--embedding-model {error.archived_model}, or run '{COMMAND} reembed --embedding-model "
            f"{error.configured_model}' to embed it again with the new model"
        ) from error
    except BaseException:
        archive.close()
        raise
