"""Which archive a command works on: the options that name it, and opening it as a ``SemanticMemory``.

An archive is an SQLite file (``--archive FILE``) or a user's partition of a PostgreSQL database (``--dsn DSN
--user USER``). Each option may come from the environment instead (``STRANDS_SEMANTIC_MEMORY_ARCHIVE``,
``..._DSN``, ``..._USER``, ``..._EMBEDDING_MODEL``), which keeps a password out of the shell's history.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import click

from strands_semantic_memory.archives import Archive
from strands_semantic_memory.embeddings import DEFAULT_MODEL
from strands_semantic_memory.engine import SemanticMemory
from strands_semantic_memory.errors import EmbeddingModelMismatchError

__all__ = ["ArchiveOptions", "CommandError", "Refused", "archive_options", "open_archive", "open_memory"]

ENV_PREFIX = "STRANDS_SEMANTIC_MEMORY"

_F = TypeVar("_F", bound=Callable[..., Any])


class CommandError(Exception):
    """A command failed in a way its message explains in full (printed as one line; exit code 1)."""

    exit_code = 1


class Refused(CommandError):
    """The command was not confirmed, or refused to do something destructive (exit code 3)."""

    exit_code = 3


@dataclass(frozen=True)
class ArchiveOptions:
    """The archive a command names.

    Attributes:
        path: The SQLite file (``--archive``), or None.
        dsn: The PostgreSQL connection string (``--dsn``), or None.
        user: The user whose memory it is (``--user``): required with ``--dsn``; with ``--archive``, checked
            against the user the file records (a file for another user is refused; a new file records it).
        embedding_model: The embedding model (``--embedding-model``).
    """

    path: Path | None
    dsn: str | None
    user: str | None
    embedding_model: str

    @property
    def given(self) -> bool:
        """Whether an archive was named at all."""
        return self.path is not None or self.dsn is not None

    def describe(self) -> str:
        """The archive for a person: the file, or the database without its password and the user."""
        if self.path is not None:
            return str(self.path)
        return f"{mask_password(self.dsn or '')} (user {self.user})"


def mask_password(dsn: str) -> str:
    """A connection string with its password replaced by ``***`` (URI or ``key=value`` form)."""
    if "://" in dsn:
        parts = urlsplit(dsn)
        if parts.password is not None:
            host = parts.netloc.rpartition("@")[2]
            user = parts.username or ""
            return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
        return dsn
    return re.sub(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", r"\1***", dsn)


def _check(options: ArchiveOptions) -> ArchiveOptions:
    if options.path is not None and options.dsn is not None:
        raise click.UsageError("give --archive FILE or --dsn DSN, not both")
    if options.dsn is not None and not options.user:
        raise click.UsageError("--dsn needs --user USER: a PostgreSQL archive holds one memory per user")
    return options


def archive_options(required: bool = True) -> Callable[[_F], _F]:
    """Add ``--archive``, ``--dsn``, ``--user`` and ``--embedding-model``; the command receives ``where``.

    Args:
        required: Whether the command needs an archive (``doctor`` does not).
    """

    def decorate(command: _F) -> _F:
        @functools.wraps(command)
        def wrapper(*args: Any, archive: Path | None, dsn: str | None, user: str | None, **kwargs: Any) -> Any:
            model = kwargs.pop("embedding_model")
            where = _check(ArchiveOptions(archive, dsn, user, model))
            if required and not where.given:
                raise click.UsageError(
                    f"name the archive: --archive FILE.sqlite3, or --dsn DSN --user USER (or set {ENV_PREFIX}_ARCHIVE"
                    f" or {ENV_PREFIX}_DSN)"
                )
            return command(*args, where=where, **kwargs)

        options = [
            click.option(
                "--archive",
                type=click.Path(dir_okay=False, path_type=Path),
                envvar=f"{ENV_PREFIX}_ARCHIVE",
                help="An SQLite archive file.",
            ),
            click.option(
                "--dsn", envvar=f"{ENV_PREFIX}_DSN", help="A PostgreSQL connection string (libpq URI or key=value)."
            ),
            click.option(
                "--user",
                envvar=f"{ENV_PREFIX}_USER",
                help="Whose memory: required with --dsn; with --archive, checked against the user the file records.",
            ),
            click.option(
                "--embedding-model",
                envvar=f"{ENV_PREFIX}_EMBEDDING_MODEL",
                default=DEFAULT_MODEL,
                show_default=True,
                help="The embedding model the archive is (or will be) embedded with.",
            ),
        ]
        for option in reversed(options):
            wrapper = option(wrapper)
        return wrapper  # type: ignore[return-value]

    return decorate


def open_archive(where: ArchiveOptions, *, create: bool = False) -> Archive:
    """The archive the options name (nothing is read from a database until first used).

    Args:
        where: The options.
        create: Whether a missing SQLite file may be created (``import``); else it is an error.

    Raises:
        CommandError: If the SQLite file does not exist and ``create`` is False.
        SemanticMemoryError: If the archive cannot be opened (the library's message).
    """
    if where.path is not None:
        if not create and not where.path.exists():
            raise CommandError(f"no archive file at '{where.path}' (import creates one)")
        from strands_semantic_memory.archives.sqlite import SqliteArchive

        return SqliteArchive(where.path, user_id=where.user)
    from strands_semantic_memory.archives.postgres import PostgresArchive

    assert where.dsn is not None and where.user is not None
    return PostgresArchive(where.dsn, where.user)


def open_memory(where: ArchiveOptions, *, create: bool = False, archive: Archive | None = None) -> SemanticMemory:
    """A memory over the archive the options name, embedding inline (in the command's own thread).

    Args:
        where: The options.
        create: Whether a missing SQLite file may be created.
        archive: An archive already opened from ``where`` (else it is opened here).

    Raises:
        CommandError: If the archive was embedded with another model (the message says how to go on).
    """
    archive = archive if archive is not None else open_archive(where, create=create)
    try:
        return SemanticMemory(archive=archive, embedding_model=where.embedding_model, embedding="inline")
    except EmbeddingModelMismatchError as error:
        archive.close()
        raise model_mismatch(error) from error
    except BaseException:
        archive.close()
        raise


def model_mismatch(error: EmbeddingModelMismatchError) -> CommandError:
    """The command line's words for an archive embedded with another model."""
    return CommandError(
        f"the archive was embedded with '{error.archived_model}', not '{error.configured_model}': pass "
        f"--embedding-model {error.archived_model}, or run 'strands-semantic-memory reembed --embedding-model "
        f"{error.configured_model}' to embed it again with the new model"
    )
