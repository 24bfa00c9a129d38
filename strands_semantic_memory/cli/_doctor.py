"""``doctor``'s checks: the model, the database, the archive and its backlog, each OK or FAILED with the fix.

A later check is skipped when an earlier one it needs failed (no archive verdict without a database). An SQLite
file is opened read-only: the doctor changes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, replace

from strands_semantic_memory.cli._opening import COMMAND, CommandError, Target, open_archive
from strands_semantic_memory.cli._output import counted, whose
from strands_semantic_memory.embeddings import resolve_embedder
from strands_semantic_memory.errors import SemanticMemoryError


@dataclass(frozen=True)
class Check:
    """One line of the report: ``name`` (model, database, archive, backlog), ``ok``, ``detail`` and ``fix``."""

    name: str
    ok: bool
    detail: str
    fix: str | None = None


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def run_checks(target: Target) -> Iterator[Check]:
    """Every check in order (the model's only, without an archive)."""
    started, model_id = time.monotonic(), None
    try:
        embedder = resolve_embedder(target.model)
        dimension, model_id = embedder.embed_documents(["doctor"]).shape[1], embedder.model_id
        yield Check("model", True, f"{model_id} loads ({dimension} dimensions, {time.monotonic() - started:.1f} s)")
    except Exception as error:  # any failure to load is the finding, never a crash of the doctor
        fix = "install the model on this machine (models are never downloaded), or pass --embedding-model"
        yield Check("model", False, f"{target.model} does not load: {_first_line(error)}", fix)
    if target.file is None and target.dsn is None:
        return
    try:  # a file is opened as its own user here: another user's file is the archive check's finding
        with closing(open_archive(replace(target, user=None) if target.file else target)) as archive:
            figures, user = archive.stats(), archive.user_id
    except (SemanticMemoryError, CommandError, OSError) as error:
        fix = "check the path (import creates an archive)" if target.file else "check the DSN and that the server runs"
        yield Check("database", False, f"{target.describe()}: {_first_line(error)}", fix)
        return
    yield Check("database", True, f"{'SQLite file' if target.file else 'PostgreSQL'} {target.describe()} opens")
    built = figures.model_id
    if target.user is not None and user != target.user:
        yield Check("archive", False, f"is the archive of {whose(user)}, not of {whose(target.user)}", "check --user")
    elif model_id is not None and built not in (None, model_id):
        fix = f"pass --embedding-model {built}, or run '{COMMAND} reembed' to embed it again with {model_id}"
        yield Check("archive", False, f"embedded with '{built}', not '{model_id}'", fix)
    else:
        yield Check("archive", True, f"{counted(figures.count, 'message')} of {whose(user)}, model {built or '(none)'}")
    waiting = f"{counted(figures.pending, 'message')} wait for their vectors (found by their words meanwhile)"
    if not figures.pending:
        yield Check("backlog", True, "no message waits for its vectors")
    elif model_id is None:
        yield Check("backlog", False, waiting, "fix the model (see the model line)")
    else:
        yield Check("backlog", True, f"{waiting}; an agent embeds them as it runs, '{COMMAND} reembed' now")
