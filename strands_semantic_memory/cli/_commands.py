"""The operator commands: stats, search, show, profile, export, import, forget, reembed, doctor.

Each opens the archive (``_opening``), calls the library and prints (``_output``); errors are raised, and ``_main``
turns them into one line and an exit code. Only ``search`` and ``import`` build a ``SemanticMemory`` (they embed
through it); the others use the archive alone, so they never wait for the model to load.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import IO, Any

import click

from strands_semantic_memory.archives import StoredRecord
from strands_semantic_memory.cli import _output as out
from strands_semantic_memory.cli._doctor import run_checks
from strands_semantic_memory.cli._opening import (
    CommandError,
    Refused,
    Target,
    archive_options,
    as_indices,
    as_time,
    open_archive,
    open_memory,
)
from strands_semantic_memory.embeddings import resolve_embedder
from strands_semantic_memory.embeddings._worker import worker_for
from strands_semantic_memory.engine import SemanticMemory, check_history, export_history, history_line, import_history
from strands_semantic_memory.engine._history import DEFAULT_IMPORT_BATCH
from strands_semantic_memory.messages import render_message
from strands_semantic_memory.messages._profile import self_statements

_session_option = click.option("--session", "sessions", multiple=True, metavar="ID", help="Only this session.")
_since = click.option("--since", callback=as_time, metavar="TIME", help="Only messages said at or after this time.")
_until = click.option("--until", callback=as_time, metavar="TIME", help="Only messages said at or before this time.")


def _as_json(record: StoredRecord) -> dict[str, Any]:
    fields: dict[str, Any] = json.loads(history_line(record))
    return fields


@click.command()
@archive_options()
def stats(target: Target, as_json: bool) -> None:
    """How many messages the archive holds, how many wait for their vectors, and its model.

    Example: strands-semantic-memory stats --file alice.sqlite3
    """
    with closing(open_archive(target)) as archive:
        figures, user, kind = archive.stats(), archive.user_id, type(archive).__name__
    if as_json:
        out.echo_json({"location": target.describe(), "archive": kind, "user_id": user, **dataclasses.asdict(figures)})
        return
    oldest, dimension = ("" if v is None else str(v) for v in (figures.oldest, figures.dimension))
    rows = [("user", out.whose(user)), ("messages", f"{figures.count:,}"),
            ("waiting for vectors", f"{figures.pending:,}"), ("bytes", f"{figures.nbytes:,}"), ("oldest index", oldest),
            ("next index", str(figures.next_index)), ("embedding model", figures.model_id or "(none yet)"),
            ("dimension", dimension)]  # fmt: skip
    out.print_rows(None, rows, title=target.describe())


@click.command()
@click.argument("query")
@click.option("--top-k", type=click.IntRange(1, 1000), default=10, show_default=True, help="Hits at most.")
@_session_option
@_since
@_until
@archive_options()
def search(target: Target, as_json: bool, query: str, top_k: int, sessions: tuple[str, ...], **times: Any) -> None:
    """Search the archive as the agent's memory does (meaning and words).

    Example: strands-semantic-memory search "booking reference" --file alice.sqlite3 --top-k 5
    """
    with open_memory(target, open_archive(target)) as memory:
        hits = memory.search(query, top_k=top_k, context_radius=0, sessions=sessions or None, **times)
    if as_json:
        out.echo_json([{"score": h.score, "similarity": h.similarity, **_as_json(h.record)} for h in hits])
        return
    rows = [(str(h.index), f"{h.score:.3f}", h.role, out.said(h.record), h.session_id or "", out.snippet(h.record))
            for h in hits]  # fmt: skip
    header = ("index", "score", "role", "said", "session", "text")
    out.print_rows(header, rows, title=f"{out.counted(len(hits), 'hit')} for '{query}'")


@click.command()
@click.argument("index", callback=as_indices)
@archive_options()
def show(target: Target, as_json: bool, index: int) -> None:
    """One archived message, exactly as archived (--json: its export line).

    Example: strands-semantic-memory show 12 --file alice.sqlite3
    """
    with closing(open_archive(target)) as archive:
        found, figures = archive.get([index]), archive.stats()
    if not found:
        held = f"indices {figures.oldest} to {figures.next_index - 1}" if figures.count else "no message"
        raise CommandError(f"no archived message with index {index} (the archive holds {held})")
    record, message = found[0], found[0].message
    if as_json:
        out.echo_json(_as_json(record))
        return
    rows = [("role", record.role), ("session", record.session_id or ""), ("said", out.said(record)),
            ("archived", out.when(record.archived_at)), ("tracking id", str(message.get("tracking_id") or "")),
            ("bytes", f"{len(record.data):,}"), ("text", render_message(message))]  # fmt: skip
    out.print_rows(None, rows, title=f"message {index}")


@click.command()
@click.option("--limit", type=click.IntRange(1, 100_000), default=200, show_default=True, help="Statements at most.")
@archive_options()
def profile(target: Target, as_json: bool, limit: int) -> None:
    """What the user said about themselves: their own sentences, newest first, with the message each is from.

    Forgetting a message (``forget``) removes what came from it. Example: strands-semantic-memory profile --file
    alice.sqlite3
    """
    rows: list[tuple[StoredRecord, str]] = []
    with closing(open_archive(target)) as archive:
        previous: StoredRecord | None = None
        after = -1
        while batch := archive.records(after, 1000):
            for record in batch:
                asked = previous.text if previous is not None and previous.role == "assistant" else None
                if record.role == "user":
                    rows.extend((record, sentence) for sentence in self_statements(record.text, asked))
                previous, after = record, record.index
    rows = sorted(rows, key=lambda row: (-row[0].time, -row[0].index))[:limit]
    if as_json:
        out.echo_json([{"index": r.index, "said": r.time, "session_id": r.session_id, "text": s} for r, s in rows])
        return
    table = [(str(r.index), out.said(r), r.session_id or "", s) for r, s in rows]
    out.print_rows(("index", "said", "session", "statement"), table, title=out.counted(len(rows), "statement"))


@contextlib.contextmanager
def _output_file(path: Path, overwrite: bool) -> Iterator[IO[str]]:
    """Standard output for ``-``; else a temporary file beside ``path``, renamed into place when complete."""
    if str(path) == "-":
        yield sys.stdout
        return
    if path.exists() and not overwrite:
        raise Refused(f"'{path}' exists; pass --overwrite to replace it")
    partial = path.with_name(f".{path.name}.partial")
    try:
        with partial.open("w", encoding="utf-8", newline="\n") as stream:
            yield stream
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


@click.command()
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path, allow_dash=True), default="-",
              help="The JSON Lines file to write, whole or not at all (default: standard output).")  # fmt: skip
@click.option("--overwrite", is_flag=True, help="Replace an existing output file.")
@_session_option
@_since
@_until
@archive_options(json_output=False)
def export(target: Target, output: Path, overwrite: bool, sessions: tuple[str, ...], **times: Any) -> None:
    """Write the archive as JSON Lines, oldest first: one message per line, exactly as archived.

    Each line holds version (1), index, session_id, role, said_at, archived_at (ISO 8601, UTC) and the message;
    'import' reads it back.

    Example: strands-semantic-memory export --file alice.sqlite3 -o alice.jsonl
    """
    written = 0
    with closing(open_archive(target)) as archive, _output_file(output, overwrite) as stream:
        for line in export_history(archive, sessions=sessions or None, **times):
            stream.write(line + "\n")
            written += 1
        stream.flush()
    if str(output) != "-":
        click.echo(f"exported {out.counted(written, 'message')} to {out.visible(str(output))}", err=True)


@click.command(name="import")
@click.argument("source", type=click.Path(dir_okay=False, path_type=Path, allow_dash=True))
@click.option("--batch-size", type=click.IntRange(min=1), default=DEFAULT_IMPORT_BATCH, show_default=True,
              help="Lines archived (and embedded) per transaction.")  # fmt: skip
@click.option("--session", "session_id", metavar="ID", help="The session of lines that name none.")
@archive_options()
def import_(target: Target, as_json: bool, source: Path, batch_size: int, session_id: str | None) -> None:
    """Archive a history from JSON Lines; run again after a failure, it adds only what is missing.

    SOURCE is the file (- for standard input). A line holds "message" (a Strands message) or "text" and "role",
    and optionally "time" (ISO 8601 or epoch seconds), "session_id", "id" and "version" (1); an export imports as
    it is. The whole input is checked first: a bad line is named and nothing is archived. A missing file is created,
    recording --user (without it: the archive of a user not named, which no user may claim later).

    Example: strands-semantic-memory import chats.jsonl --file alice.sqlite3 --user alice
    """
    with contextlib.ExitStack() as stack:
        if str(source) == "-":  # read twice (checked, then imported): a copy in a temporary file
            stream: IO[bytes] = stack.enter_context(tempfile.TemporaryFile())
            shutil.copyfileobj(sys.stdin.buffer, stream)
        elif source.is_file():
            stream = stack.enter_context(source.open("rb"))
        else:
            raise CommandError(f"no file at '{source}'")
        stream.seek(0)
        count = check_history(stream, session_id=session_id)  # before the archive is even opened
        stream.seek(0)
        memory = stack.enter_context(open_memory(target, open_archive(target, write=True, create=True)))
        with out.progress("importing", count) as advance:
            done = import_history(memory, stream, batch_size=batch_size, session_id=session_id,
                                  progress=lambda report: advance(report.lines))  # fmt: skip
        pending = memory.embed_pending()  # an inline add may return while its last vectors are being stored
    if as_json:
        out.echo_json({**{k: v for k, v in dataclasses.asdict(done).items() if k != "indices"}, "pending": pending})
        return
    forgotten = f", {done.forgotten:,} forgotten before (not archived again)" if done.forgotten else ""
    waiting = f"; {pending:,} wait for their vectors" if pending else ""
    click.echo(f"imported {out.counted(done.lines, 'line')}: {done.added:,} added, {done.already_present:,} already "
               f"archived{forgotten}{waiting}")  # fmt: skip


def _confirm(question: str) -> None:
    """Ask on standard error; anything but yes, or no answer at all, refuses."""
    try:
        answer = click.confirm(question, default=False, err=True)
    except click.Abort:  # end of input: the prompt's line is ended, and it counts as no
        click.echo(err=True)
        answer = False
    if not answer:
        raise Refused("not confirmed; nothing was forgotten")


def _listing(indices: list[int], limit: int) -> str:
    more = f", ... ({len(indices) - limit:,} more)" if len(indices) > limit else ""
    return ", ".join(map(str, indices[:limit])) + more


@click.command()
@click.option(
    "--query", "text", help="Every message whose text contains this (case-insensitive; 3 characters or more)."
)
@click.option("--index", "indices", multiple=True, callback=as_indices, help="This index (repeatable).")
@click.option("--range", "ranges", multiple=True, callback=as_indices, help="Indices FIRST-LAST (repeatable).")
@click.option("--all", "everything", is_flag=True, help="Everything of the archive's user.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask first.")
@archive_options()
def forget(target: Target, as_json: bool, text: str | None, everything: bool, yes: bool, **which: Any) -> None:
    """Delete messages for good: by text, by index or range, or everything of the user (--all).

    Shows what it will delete and asks first (unless --yes); then says what it deleted.

    Example: strands-semantic-memory forget --query "card number" --file alice.sqlite3 --yes
    """
    if everything == bool(text is not None or which["indices"] or which["ranges"]):
        raise click.UsageError("say what to forget: --query TEXT, --index N and --range A-B, or --all alone")
    if text is not None and len(text.strip()) < 3:
        raise click.UsageError("--query needs at least 3 characters (a shorter one matches almost everything)")
    with closing(open_archive(target, write=True)) as archive:
        user, figures = archive.user_id, archive.stats()
        if everything:
            if not yes:
                _confirm(f"Forget everything of {out.whose(user)}: {out.counted(figures.count, 'message')}, for good?")
            count = archive.forget_all()
            if as_json:
                out.echo_json({"user_id": user, "forgotten_count": count})
            else:
                click.echo(f"forgot everything of {out.whose(user)}: {out.counted(count, 'message')}")
            return
        wanted = set(which["indices"])
        for first, last in which["ranges"] if figures.count else ():  # only the live span, however wide the range
            wanted.update(range(max(first, figures.oldest or 0), min(last, figures.next_index - 1) + 1))
        chosen = {record.index for record in archive.get(wanted)} if wanted else set()
        if text is not None:
            chosen.update(archive.find_text(text.strip(), None, figures.count + 1))
        targets = sorted(chosen)
        if targets and not yes:
            _confirm(f"Forget {out.counted(len(targets), 'message')} for good (indices {_listing(targets, 20)})?")
        if targets:
            archive.forget(targets)
        left = {record.index for record in archive.get(targets)} if targets else set()
        removed = [index for index in targets if index not in left]
    if as_json:
        out.echo_json({"forgotten": removed})
    elif removed:
        click.echo(f"forgot {out.counted(len(removed), 'message')}: {_listing(removed, 1000)}")
    else:
        click.echo("nothing matches; nothing was forgotten")


@click.command()
@archive_options()
def reembed(target: Target, as_json: bool) -> None:
    """Embed every message again with --embedding-model (after a change of model, say).

    The model is loaded first: one that does not load changes nothing. Then the old vectors go and the messages
    are embedded as an agent's memory embeds them; meanwhile they are found by their words. Interrupted, it can
    simply run again.

    Example: strands-semantic-memory reembed --file alice.sqlite3 --embedding-model all-MiniLM-L6-v2
    """
    embedder = resolve_embedder(target.model)
    worker_for(embedder).embed_documents(["warm up"]).result()  # a model that does not load stops here
    archive = open_archive(target, write=True)
    try:
        rebind = getattr(archive, "rebind", None)  # SqliteArchive's: drop every vector, record the model
        if rebind is None:
            raise CommandError(f"{type(archive).__name__} cannot be embedded again from the command line")
        rebind(embedder.model_id)
        total = archive.stats().pending
        memory = SemanticMemory(embedder=embedder, archive=archive)
    except BaseException:
        archive.close()
        raise
    with memory, out.progress("embedding", total) as advance:
        while left := memory.embed_pending(timeout=1.0):
            advance(total - left)
    if as_json:
        out.echo_json({"embedded": total, "embedding_model": embedder.model_id})
    else:
        click.echo(f"embedded {out.counted(total, 'message')} with {embedder.model_id}")


@click.command()
@archive_options(required=False)
def doctor(target: Target, as_json: bool) -> None:
    """Check the model, the database, the archive and its backlog: one line each, OK or FAILED with the fix.

    Exit code 1 when anything failed. Without an archive, only the model is checked. Nothing is changed.

    Example: strands-semantic-memory doctor --file alice.sqlite3
    """
    checks = []
    for check in run_checks(target):
        checks.append(check)
        if not as_json:
            fix = f" Fix: {check.fix}" if check.fix else ""
            click.echo(out.visible(f"{'OK    ' if check.ok else 'FAILED'} {check.name:<9} {check.detail}{fix}"))
    if as_json:
        out.echo_json([dataclasses.asdict(check) for check in checks])
    if not all(check.ok for check in checks):
        raise click.exceptions.Exit(1)


COMMANDS = (stats, search, show, profile, export, import_, forget, reembed, doctor)
"""Every command, in the order ``--help`` lists them."""
