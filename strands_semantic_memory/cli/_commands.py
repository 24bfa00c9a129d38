"""The commands: ``stats``, ``search``, ``show``, ``export``, ``import``, ``forget``, ``reembed``, ``doctor``.

Each is a thin layer over the library: it opens the archive (``_opening``), calls ``SemanticMemory`` or the engine's
history functions, and prints the result (``_output``). Errors are raised, never printed here: ``_main`` turns them
into one line and an exit code.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

import click
from rich.table import Table
from rich.text import Text

from strands_semantic_memory import __version__
from strands_semantic_memory.cli._doctor import run_checks
from strands_semantic_memory.cli._opening import (
    ArchiveOptions,
    CommandError,
    Refused,
    archive_options,
    model_mismatch,
    open_archive,
    open_memory,
)
from strands_semantic_memory.cli._output import (
    Bar,
    counted,
    echo_json,
    err_console,
    iso,
    out_console,
    progress_bar,
    snippet,
    when,
)
from strands_semantic_memory.embeddings import resolve_embedder
from strands_semantic_memory.engine import (
    ImportProgress,
    ReembedProgress,
    SemanticMemory,
    check_history,
    drop_vectors,
    export_history,
    history_line,
    import_history,
)
from strands_semantic_memory.engine._history import DEFAULT_IMPORT_BATCH, export_record
from strands_semantic_memory.errors import EmbeddingModelMismatchError
from strands_semantic_memory.messages import encode_message

__all__ = ["COMMAND", "cli", "debug_requested"]

COMMAND = "strands-semantic-memory"

_F = TypeVar("_F", bound=Callable[..., Any])

if TYPE_CHECKING:  # click's ParamType is generic in recent releases only
    _TimeParam = click.ParamType[float]
    _RangeParam = click.ParamType[tuple[int, int]]
else:
    _TimeParam = _RangeParam = click.ParamType

_debug = {"on": False}


def debug_requested() -> bool:
    """Whether ``--debug`` was given (tracebacks and debug logs)."""
    return _debug["on"]


def _set_debug(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        _debug["on"] = True


def debug_option(command: _F) -> _F:
    """``--debug``, accepted before or after the command's name."""
    return click.option(
        "--debug",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_set_debug,
        help="Show the traceback of an error, and the library's debug log.",
    )(command)


def json_option(command: _F) -> _F:
    """``--json``: print JSON instead of a table."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")(command)


class TimeType(_TimeParam):
    """A time: ISO 8601 (UTC unless it says otherwise) or seconds since the epoch."""

    name = "TIME"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        """The time in seconds since the epoch."""
        if isinstance(value, float):
            return value
        text = str(value).strip()
        try:
            return float(text)
        except ValueError:
            pass
        if text[-1:] in ("Z", "z"):
            text = text[:-1] + "+00:00"
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            self.fail(f"{value!r} is not an ISO 8601 time (2024-05-01T09:30:00Z) or a number of seconds", param, ctx)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return moment.timestamp()


class RangeType(_RangeParam):
    """An inclusive range of archive indices, ``A-B``."""

    name = "A-B"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[int, int]:
        """``(A, B)`` with ``0 <= A <= B``."""
        if isinstance(value, tuple):
            return value
        first, dash, last = str(value).strip().partition("-")
        try:
            low, high = int(first), int(last)
        except ValueError:
            self.fail(f"{value!r} is not a range of indices such as 10-20", param, ctx)
        if not dash or low < 0 or high < low:
            self.fail(f"{value!r} is not a range of indices A-B with 0 <= A <= B", param, ctx)
        return low, high


TIME = TimeType()


def time_options(command: _F) -> _F:
    """``--since`` and ``--until``."""
    command = click.option(
        "--until", type=TIME, help="Only messages said (else archived) at or before this time (ISO 8601 or epoch s)."
    )(command)
    return click.option(
        "--since", type=TIME, help="Only messages said (else archived) at or after this time (ISO 8601 or epoch s)."
    )(command)


@contextlib.contextmanager
def opened(where: ArchiveOptions, *, create: bool = False) -> Iterator[SemanticMemory]:
    """The memory over the named archive, closed when the block ends."""
    memory = open_memory(where, create=create)
    try:
        yield memory
    finally:
        memory.close()


def session_option(help_text: str) -> Callable[[_F], _F]:
    """``--session ID``, repeatable."""
    return click.option("--session", "sessions", multiple=True, metavar="ID", help=help_text)


def _message_json(message: Any) -> Any:
    """A message as JSON types (bytes in Strands' session form), as an export line holds it."""
    return json.loads(encode_message(message))


CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 110}


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, prog_name=COMMAND)
@debug_option
def cli() -> None:
    """Inspect and operate strands-semantic-memory archives: an SQLite file or a PostgreSQL user.

    Name the archive with --archive FILE.sqlite3, or --dsn DSN --user USER (each also read from
    STRANDS_SEMANTIC_MEMORY_ARCHIVE, _DSN, _USER). Exit codes: 0 done, 1 failed, 2 usage error,
    3 not confirmed or refused, 130 interrupted.
    """


# ------------------------------------------------------------------------------------------- stats


_STATS_ROWS = (
    ("message_count", "messages"),
    ("pending_embedding_count", "waiting for vectors"),
    ("vector_count", "vectors"),
    ("embedding_dimension", "dimension"),
    ("embedding_model", "embedding model"),
    ("oldest_index", "oldest index"),
    ("newest_index", "newest index"),
    ("archived_total", "archived ever"),
    ("evicted_count", "evicted"),
    ("forgotten_count", "forgotten"),
    ("total_memory", "estimated bytes"),
    ("message_bytes", "message bytes"),
)


@cli.command()
@archive_options()
@json_option
@debug_option
def stats(where: ArchiveOptions, as_json: bool) -> None:
    """How large the archive is, and how many messages wait for their vectors.

    Example: strands-semantic-memory stats --archive alice.sqlite3
    """
    with opened(where) as memory:
        figures = memory.stats().as_dict()
        user = memory.user_id
    if as_json:
        echo_json({"location": where.describe(), "user_id": user, **figures})
        return
    table = Table(show_header=False)
    table.add_column("", style="bold")
    table.add_column("", justify="right")
    table.add_row("user", user or "")
    for key, label in _STATS_ROWS:
        value = figures[key]
        table.add_row(label, "" if value is None else f"{value:,}" if isinstance(value, int) else str(value))
    console = out_console()
    console.print(where.describe(), markup=False, soft_wrap=True)  # a path is never folded, so it can be copied
    console.print(table)


# ------------------------------------------------------------------------------------------- search


@cli.command()
@click.argument("query")
@click.option("--top-k", type=click.IntRange(min=1), default=10, show_default=True, help="Hits at most.")
@session_option("Only messages said in this session (repeatable).")
@time_options
@archive_options()
@json_option
@debug_option
def search(
    where: ArchiveOptions,
    query: str,
    top_k: int,
    sessions: tuple[str, ...],
    since: float | None,
    until: float | None,
    as_json: bool,
) -> None:
    """Search the archive as the agent's memory does (hybrid: meaning and words).

    Example: strands-semantic-memory search "booking reference" --archive alice.sqlite3 --top-k 5
    """
    with opened(where) as memory:
        hits = memory.search(query, top_k, since=since, until=until, sessions=sessions or None)
    if as_json:
        echo_json(
            [
                {
                    "index": hit.index,
                    "score": hit.score,
                    "similarity": hit.similarity,
                    "role": hit.role,
                    "session_id": hit.session_id,
                    "said_at": None if hit.said_at is None else iso(hit.said_at),
                    "archived_at": iso(hit.archived_at),
                    "message": _message_json(hit.message),
                }
                for hit in hits
            ]
        )
        return
    table = Table(title=f"{len(hits)} hits for {query!r}", title_justify="left")
    for name, justify in (("index", "right"), ("score", "right"), ("role", "left"), ("said", "left")):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    table.add_column("session", overflow="fold")
    table.add_column("text", overflow="fold")
    for hit in hits:
        said = hit.said_at if hit.said_at is not None else hit.archived_at
        row = (str(hit.index), f"{hit.score:.3f}", hit.role, when(said), hit.session_id or "", snippet(hit.message))
        table.add_row(*row)
    out_console().print(table)


# ------------------------------------------------------------------------------------------- show


@cli.command()
@click.argument("index", type=click.IntRange(min=0))
@archive_options()
@json_option
@debug_option
def show(where: ArchiveOptions, index: int, as_json: bool) -> None:
    """One archived message, exactly as archived (--json: as an export line).

    Example: strands-semantic-memory show 12 --archive alice.sqlite3
    """
    with opened(where) as memory:
        record = memory.record(index)
    line = export_record(record)
    if as_json:
        echo_json(line)
        return
    message = record.message
    table = Table(title=f"message {index}", show_header=False, title_justify="left")
    table.add_column("", style="bold", no_wrap=True)
    table.add_column("", overflow="fold")
    table.add_row("role", record.role)
    table.add_row("session", line["session_id"] or "")
    table.add_row("said", when(record.said_at))
    table.add_row("archived", when(record.archived_at))
    table.add_row("tracking id", str(message.get("tracking_id") or ""))
    table.add_row("bytes", f"{len(record.data):,}")
    table.add_row("text", snippet(message, width=10_000))
    out_console().print(table)


# ------------------------------------------------------------------------------------------- export


@contextlib.contextmanager
def _output_file(path: Path, overwrite: bool) -> Iterator[IO[str]]:
    """Standard output for ``-``; else a temporary file beside ``path``, renamed into place when complete."""
    if str(path) == "-":
        stream = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n", write_through=False)
        try:
            yield stream
        finally:
            stream.flush()
            stream.detach()
        return
    if path.exists() and not overwrite:
        raise Refused(f"'{path}' exists; pass --overwrite to replace it")
    partial = path.with_name(f".{path.name}.partial")
    try:
        with partial.open("w", encoding="utf-8", newline="\n") as stream:
            yield stream
        os.replace(partial, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()


@cli.command()
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path, allow_dash=True),
    default="-",
    show_default=True,
    help="The JSON Lines file to write (- for standard output); written whole or not at all.",
)
@click.option("--overwrite", is_flag=True, help="Replace an existing output file.")
@session_option("Only messages said in this session (repeatable).")
@time_options
@archive_options()
@debug_option
def export(
    where: ArchiveOptions,
    output: Path,
    overwrite: bool,
    sessions: tuple[str, ...],
    since: float | None,
    until: float | None,
) -> None:
    """Write the archive as JSON Lines: one archived message per line, oldest first.

    Each line holds version (1), index, session_id, role, said_at, archived_at (ISO 8601, UTC) and the message
    exactly as archived. 'import' reads it back.

    Example: strands-semantic-memory export --archive alice.sqlite3 -o alice.jsonl
    """
    with opened(where) as memory:
        total = memory.stats().message_count
        written = 0
        with _output_file(output, overwrite) as stream, progress_bar("exporting", total) as bar:
            for record in export_history(memory, since=since, until=until, sessions=sessions or None):
                stream.write(history_line(record) + "\n")
                written += 1
                if written % 256 == 0:
                    bar.update(written)
            bar.update(total)
    if str(output) != "-":
        err_console().print(f"exported {counted(written, 'message')} to {output}")


# ------------------------------------------------------------------------------------------- import


class _CountingLines:
    """The lines of a binary stream, counting the bytes read and telling ``bar`` every 1,024 lines."""

    def __init__(self, stream: IO[bytes], bar: Bar) -> None:
        self._stream = stream
        self._bar = bar
        self.read = 0

    def __iter__(self) -> Iterator[bytes]:
        for number, line in enumerate(self._stream, start=1):
            self.read += len(line)
            if number % 1024 == 0:
                self._bar.update(self.read)
            yield line


@cli.command(name="import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path, allow_dash=True))
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=DEFAULT_IMPORT_BATCH,
    show_default=True,
    help="Lines archived (and embedded) per commit.",
)
@click.option("--session", "session_id", metavar="ID", help="The session of lines that name none.")
@archive_options()
@json_option
@debug_option
def import_(where: ArchiveOptions, file: Path, batch_size: int, session_id: str | None, as_json: bool) -> None:
    """Archive a history from JSON Lines; run it again after a failure: it adds only what is missing.

    FILE is the JSON Lines file (- for standard input). A line holds "message" (a Strands message) or "text" and
    "role", and optionally "time" (ISO 8601 or epoch seconds), "session_id", "id" and "version" (1). An export
    imports as it is. The whole file is checked first: a bad line is named, and nothing is archived. A missing
    SQLite file is created.

    Example: strands-semantic-memory import chats.jsonl --archive alice.sqlite3 --user alice
    """
    stdin = str(file) == "-"
    if not stdin and not file.is_file():
        raise CommandError(f"no file at '{file}'")
    with contextlib.ExitStack() as stack:
        if stdin:  # read twice (checked, then imported): a copy in a temporary file
            source: IO[bytes] = stack.enter_context(tempfile.TemporaryFile())
            shutil.copyfileobj(sys.stdin.buffer, source)
            source.seek(0)
        else:
            source = stack.enter_context(file.open("rb"))
        with progress_bar("checking", os.fstat(source.fileno()).st_size, unit="bytes") as bar:
            count = check_history(_CountingLines(source, bar), session_id=session_id)
            bar.update(source.tell())
        source.seek(0)
        memory = stack.enter_context(opened(where, create=True))  # only once the input is known to be good
        bar = stack.enter_context(progress_bar("importing", count))

        def progress(done: ImportProgress) -> None:
            bar.update(done.lines)

        report = import_history(memory, source, batch_size=batch_size, session_id=session_id, progress=progress)
        pending = memory.stats().pending_embedding_count
    summary = {
        "lines": report.lines,
        "added": report.added,
        "already_present": report.already_present,
        "pending_embedding_count": pending,
    }
    if as_json:
        echo_json(summary)
        return
    waiting = f"; {pending:,} wait for their vectors" if pending else ""
    out_console().print(
        f"imported {report.lines:,} lines: {report.added:,} added, {report.already_present:,} already archived{waiting}"
    )


# ------------------------------------------------------------------------------------------- forget


def _listing(indices: list[int], limit: int = 20) -> str:
    shown = ", ".join(map(str, indices[:limit]))
    return shown + (f", ... ({len(indices) - limit:,} more)" if len(indices) > limit else "")


@cli.command()
@click.option("--query", help="Forget every message whose text contains this (case-insensitive, exact substring).")
@click.option("--index", "indices", type=click.IntRange(min=0), multiple=True, help="Forget this index (repeatable).")
@click.option(
    "--range", "ranges", type=RangeType(), multiple=True, help="Forget indices A to B, inclusive (repeatable)."
)
@click.option("--all", "everything", is_flag=True, help="Forget everything of the archive's user.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@archive_options()
@json_option
@debug_option
def forget(
    where: ArchiveOptions,
    query: str | None,
    indices: tuple[int, ...],
    ranges: tuple[tuple[int, int], ...],
    everything: bool,
    yes: bool,
    as_json: bool,
) -> None:
    """Delete messages for good: by text, by index or range, or everything of the user (--all).

    Shows what it will delete and asks first (unless --yes); then reports exactly what it deleted.

    Example: strands-semantic-memory forget --query "card number" --archive alice.sqlite3 --yes
    """
    selective = query is not None or indices or ranges
    if everything and selective:
        raise click.UsageError("--all forgets everything; do not combine it with --query, --index or --range")
    if not everything and not selective:
        raise click.UsageError("say what to forget: --query TEXT, --index N, --range A-B, or --all")
    with opened(where) as memory:
        if everything:
            _forget_all(memory, yes, as_json)
            return
        figures = memory.stats()
        oldest, newest = figures.oldest_index, figures.newest_index
        wanted: set[int] = set()
        if oldest is not None and newest is not None:  # a range reads only the live span, however wide it is
            wanted.update(i for i in indices if oldest <= i <= newest)
            wanted.update(*(range(max(low, oldest), min(high, newest) + 1) for low, high in ranges))
        targets = set(memory.archive.get(sorted(wanted))) if wanted else set()
        if query is not None:
            targets.update(memory.find_text(query))
        chosen = sorted(targets)
        if not chosen:
            _report_forgotten([], as_json, "nothing matches; nothing was forgotten")
            return
        if not yes:
            _confirm(f"Forget {counted(len(chosen), 'message')} for good (indices {_listing(chosen)})?")
        removed = memory.forget(chosen)
    _report_forgotten(removed, as_json, f"forgot {counted(len(removed), 'message')}: {_listing(removed, 1000)}")


def _forget_all(memory: SemanticMemory, yes: bool, as_json: bool) -> None:
    user = memory.user_id
    count = len(memory)
    if not yes:
        whose = f"user '{user}'" if user else "this archive (it names no user)"
        _confirm(f"Forget everything of {whose}: {counted(count, 'message')}, their vectors and terms, for good?")
    removed = memory.forget_all()
    if as_json:
        echo_json({"user_id": user, "forgotten_count": removed})
    else:
        out_console().print(f"forgot everything of user '{user}': {counted(removed, 'message')}")


def _confirm(question: str) -> None:
    """Ask; anything but yes (or no answer at all) refuses."""
    try:
        answer = click.confirm(question, default=False, err=True)
    except click.Abort:  # no answer (end of input): the prompt's line is ended, and it counts as no
        click.echo(err=True)
        answer = False
    if not answer:
        raise Refused("not confirmed; nothing was forgotten")


def _report_forgotten(removed: list[int], as_json: bool, text: str) -> None:
    if as_json:
        echo_json({"forgotten": removed})
    else:
        out_console().print(text)


# ------------------------------------------------------------------------------------------- reembed


@cli.command()
@click.option(
    "--pending-only", is_flag=True, help="Keep the vectors there are; embed only the messages waiting for theirs."
)
@archive_options()
@json_option
@debug_option
def reembed(where: ArchiveOptions, pending_only: bool, as_json: bool) -> None:
    """Embed every message again with --embedding-model (after a change of model).

    The model is loaded first: one that does not load changes nothing. The messages stay; until their new vectors
    are stored, searches find them by their words. Interrupted, it can simply run again.

    Example: strands-semantic-memory reembed --archive alice.sqlite3 --embedding-model all-MiniLM-L6-v2
    """
    embedder = resolve_embedder(where.embedding_model)
    embedder.embed_documents(["warm up"])  # a model that does not load fails here, before any vector is dropped
    archive = open_archive(where)
    try:
        try:
            memory = SemanticMemory(archive=archive, embedder=embedder, embedding="inline")
        except EmbeddingModelMismatchError as error:  # SQLite refuses another model while it holds vectors
            if pending_only:
                raise model_mismatch(error) from error
            drop_vectors(archive, embedder.model_id)
            memory = SemanticMemory(archive=archive, embedder=embedder, embedding="inline")
    except BaseException:
        archive.close()
        raise
    with memory, progress_bar("embedding", None) as bar:

        def progress(done: ReembedProgress) -> None:
            bar.update(done.done, done.total)

        count = memory.reembed(progress=progress, pending_only=pending_only)
    if as_json:
        echo_json({"embedded": count, "embedding_model": embedder.model_id})
    else:
        out_console().print(f"embedded {counted(count, 'message')} with {embedder.model_id}")


# ------------------------------------------------------------------------------------------- doctor


@cli.command()
@archive_options(required=False)
@json_option
@debug_option
def doctor(where: ArchiveOptions, as_json: bool) -> None:
    """Check the model, its ONNX graph cache, the database, the archive and its backlog.

    One line each, OK or FAILED with the fix; exit code 1 when anything failed. Without an archive, only the
    model and the cache are checked.

    Example: strands-semantic-memory doctor --archive alice.sqlite3
    """
    checks = []
    console = out_console()
    for check in run_checks(where):
        checks.append(check)
        if not as_json:
            status = ("OK    ", "green") if check.ok else ("FAILED", "red")
            fix = f" Fix: {check.fix}" if check.fix else ""
            console.print(Text.assemble(status, f" {check.name:<10} {check.detail}{fix}"), soft_wrap=True)
    if as_json:
        echo_json([check.as_dict() for check in checks])
    if not all(check.ok for check in checks):
        raise click.exceptions.Exit(1)
