"""``doctor``: the model, the ONNX graph cache, the database, the archive and its backlog, each OK or FAILED.

Every check answers one line: what was found, and for a failure what to do about it. A check whose subject is
absent says so in an OK line (the cache of a model that does not run on ONNX Runtime, say). Checks run in order and
a later one is told when an earlier one failed (no backlog verdict without an archive).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from strands_semantic_memory.cli._opening import ArchiveOptions, CommandError, mask_password, open_memory
from strands_semantic_memory.cli._output import counted
from strands_semantic_memory.embeddings import Embedder, OnnxEmbedder, resolve_embedder
from strands_semantic_memory.engine import SemanticMemory
from strands_semantic_memory.errors import (
    EmbeddingModelMismatchError,
    MissingDependencyError,
    ModelUnavailableError,
    SemanticMemoryError,
)

__all__ = ["Check", "run_checks"]

COMMAND = "strands-semantic-memory"


@dataclass(frozen=True)
class Check:
    """One line of the doctor's report.

    Attributes:
        name: What was checked (``model``, ``onnx cache``, ``database``, ``archive``, ``backlog``).
        ok: Whether it is fine.
        detail: What was found.
        fix: What to do, for a failure.
    """

    name: str
    ok: bool
    detail: str
    fix: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The check as JSON types."""
        return asdict(self)


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


# ------------------------------------------------------------------------------------------- model and cache


def _backend(embedder: Embedder) -> str:
    names = {
        "OnnxEmbedder": "ONNX Runtime",
        "SentenceTransformerEmbedder": "PyTorch",
        "BedrockEmbedder": "Amazon Bedrock",
    }
    return names.get(type(embedder).__name__, type(embedder).__name__)


def _cache_state(embedder: OnnxEmbedder) -> tuple[Path | None, str | None]:
    """``(entry folder, problem)`` of the model's cache entry; ``(None, None)`` when the cache is off.

    The problem is None for a valid entry, ``"missing"``, or what is damaged.
    """
    from strands_semantic_memory.embeddings._local import locate_model
    from strands_semantic_memory.embeddings.onnx._cache import GraphCache, onnx_cache_dir

    folder = onnx_cache_dir(embedder.cache_dir)
    if folder is None:
        return None, None
    load_target, model_id = locate_model(embedder.model_id)
    cache = GraphCache(folder, Path(load_target), model_id)
    if not cache.path.exists():
        return cache.path, "missing"
    try:
        cache._read()
    except Exception as error:  # _Damaged, OSError: what the entry's own load would refuse
        return cache.path, _first_line(error)
    return cache.path, None


def check_model(model: str) -> tuple[list[Check], Embedder | None]:
    """Whether the model loads (and its dimension), and the state of its ONNX graph cache."""
    try:
        embedder = resolve_embedder(model)
    except SemanticMemoryError as error:
        fix = (
            "install the model on this machine (models are never downloaded), or pass --embedding-model"
            if isinstance(error, ModelUnavailableError)
            else "check --embedding-model"
        )
        return [Check("model", False, f"{model}: {_first_line(error)}", fix)], None
    before: tuple[Path | None, str | None] | None = None
    if isinstance(embedder, OnnxEmbedder):
        try:
            before = _cache_state(embedder)
        except Exception as error:  # the model folder cannot be read: the model check below says so
            before = (None, _first_line(error))
    started = time.monotonic()
    try:
        vectors = embedder.embed_documents(["doctor"])
        dimension = int(vectors.shape[1])
    except Exception as error:
        fix = (
            f"pip install 'strands-semantic-memory[{error.extra}]'"
            if isinstance(error, MissingDependencyError)
            else "check the model's files (or the credentials and region of a Bedrock model); "
            "--debug shows the traceback"
        )
        checks = [Check("model", False, f"{embedder.model_id} does not load: {_first_line(error)}", fix)]
        return checks, None
    seconds = time.monotonic() - started
    checks = [
        Check(
            "model", True, f"{embedder.model_id} loads ({_backend(embedder)}, {dimension} dimensions, {seconds:.1f} s)"
        )
    ]
    if isinstance(embedder, OnnxEmbedder) and before is not None:
        checks.append(_cache_check(embedder, before))
    else:
        checks.append(Check("onnx cache", True, f"not used: the model runs on {_backend(embedder)}"))
    return checks, embedder


def _cache_check(embedder: OnnxEmbedder, before: tuple[Path | None, str | None]) -> Check:
    """The cache entry as found before loading the model, and after (a load exports a missing or damaged one)."""
    path, problem = before
    if path is None and problem is None:
        return Check(
            "onnx cache", True, "turned off (STRANDS_SEMANTIC_MEMORY_CACHE): every process exports the graphs (6-7 s)"
        )
    if problem is None:
        return Check("onnx cache", True, f"{path} (valid)")
    after_path, after_problem = _cache_state(embedder)
    if after_problem is None:
        return Check("onnx cache", True, f"{after_path} (was {problem}; exported again by this load)")
    return Check(
        "onnx cache",
        False,
        f"{after_path}: {after_problem} (was {problem}), and loading the model did not write it",
        "make the folder writable, or point STRANDS_SEMANTIC_MEMORY_CACHE at a writable folder (each process "
        "otherwise exports the graphs again, 6-7 s)",
    )


# ------------------------------------------------------------------------------------------- database


def check_database(where: ArchiveOptions) -> Check:
    """Whether the database is reachable, and its schema version against this release's."""
    if where.path is not None:
        return _check_sqlite(where.path)
    return _check_postgres(where.dsn or "")


def _check_sqlite(path: Path) -> Check:
    from strands_semantic_memory.archives.sqlite._schema import FILE_FORMAT, SCHEMA_VERSION

    if not path.exists():
        return Check("database", False, f"no file at {path}", "check the path (import creates a new archive)")
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=1)
        try:
            meta = dict(connection.execute("SELECT key, value FROM ssm_meta").fetchall())
        finally:
            connection.close()
    except sqlite3.Error as error:
        if "locked" in str(error) or "busy" in str(error):
            return Check(
                "database",
                False,
                f"{path} is open in another process ({error})",
                "an SQLite archive has one owner at a time: stop the process that holds it, then run this again",
            )
        return Check("database", False, f"{path} cannot be read as an archive ({error})", "check the path")
    if meta.get("format") != FILE_FORMAT:
        return Check("database", False, f"{path} is not a strands-semantic-memory archive", "check the path")
    version = meta.get("schema_version")
    if version != SCHEMA_VERSION:
        return Check(
            "database",
            False,
            f"{path}: schema version {version}, this release reads {SCHEMA_VERSION}",
            "install the release that wrote it, or export with it and import here",
        )
    return Check("database", True, f"SQLite file {path}, schema version {version}")


def _check_postgres(dsn: str) -> Check:
    shown = mask_password(dsn)
    try:
        import psycopg
    except ImportError:
        return Check("database", False, "psycopg is not installed", "pip install 'strands-semantic-memory[pgvector]'")
    from strands_semantic_memory.archives.postgres._schema import SCHEMA_VERSION

    try:
        with psycopg.connect(dsn, connect_timeout=10, autocommit=True) as connection:
            server = connection.execute("SHOW server_version").fetchone()
            vector = connection.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
            table = connection.execute("SELECT to_regclass('ssm_meta')").fetchone()
            version = None
            if table is not None and table[0] is not None:
                row = connection.execute("SELECT value FROM ssm_meta WHERE key = 'schema_version'").fetchone()
                version = None if row is None else row[0]
    except psycopg.Error as error:
        return Check(
            "database",
            False,
            f"cannot reach {shown}: {_first_line(error)}",
            "check the DSN (host, port, database, user, password) and that the server runs and accepts this client",
        )
    release = f"PostgreSQL {server[0] if server else '?'}"
    if vector is None:
        return Check(
            "database",
            False,
            f"{release} at {shown} has no pgvector extension",
            "install pgvector on the server, then CREATE EXTENSION vector (once, as a superuser)",
        )
    if version is None:
        return Check("database", True, f"{release}, pgvector {vector[0]}, no schema yet (created by the first write)")
    if int(version) != SCHEMA_VERSION:
        return Check(
            "database",
            False,
            f"{release}: schema version {version}, this release reads {SCHEMA_VERSION}",
            "run the release that matches the schema on every worker",
        )
    return Check("database", True, f"{release}, pgvector {vector[0]}, schema version {version}")


# ------------------------------------------------------------------------------------------- archive and backlog


def check_archive(where: ArchiveOptions) -> tuple[Check, SemanticMemory | None]:
    """Whether the archive opens for this user and model, and its damaged rows (SQLite)."""
    memory: SemanticMemory | None = None
    try:
        memory = open_memory(where)
        count = len(memory)
    except (SemanticMemoryError, CommandError, OSError) as error:
        if memory is not None:
            memory.close()
        mismatch = error if isinstance(error, EmbeddingModelMismatchError) else error.__cause__
        if isinstance(mismatch, EmbeddingModelMismatchError):
            return Check(
                "archive",
                False,
                f"embedded with '{mismatch.archived_model}', not '{mismatch.configured_model}'",
                f"pass --embedding-model {mismatch.archived_model}, or run '{COMMAND} reembed' to embed it again "
                "with the new model",
            ), None
        return Check("archive", False, f"does not open: {_first_line(error)}", "see the database line"), None
    user = memory.user_id
    owner = f", user {user}" if user else ""
    damaged = getattr(memory.archive, "damaged_rows", {})
    if damaged:
        rows = sorted(damaged)
        shown = ", ".join(map(str, rows[:10])) + (", ..." if len(rows) > 10 else "")
        return Check(
            "archive",
            False,
            f"{counted(count, 'message')}{owner}; {counted(len(rows), 'damaged row')} left out of searches "
            f"(indices {shown})",
            f"restore the file from a backup, or '{COMMAND} forget --index N' each damaged row",
        ), memory
    return Check("archive", True, f"{counted(count, 'message')}{owner}, no damaged rows"), memory


def check_backlog(memory: SemanticMemory, model_ok: bool) -> Check:
    """How many messages wait for their vectors."""
    pending = memory.stats().pending_embedding_count
    if not pending:
        return Check("backlog", True, "no message waits for its vectors")
    if not model_ok:
        return Check(
            "backlog",
            False,
            f"{counted(pending, 'message')} waiting for vectors, and the model does not load",
            "fix the model (see the model line); searches find them lexically meanwhile",
        )
    return Check(
        "backlog",
        True,
        f"{counted(pending, 'message')} waiting for vectors (a running agent embeds them; "
        f"'{COMMAND} reembed --pending-only' does now)",
    )


def run_checks(where: ArchiveOptions) -> Iterator[Check]:
    """Every check, in order (the archive's only when one is named)."""
    model_checks, embedder = check_model(where.embedding_model)
    yield from model_checks
    if not where.given:
        return
    database = check_database(where)
    yield database
    archive, memory = check_archive(where)
    yield archive
    if memory is None:
        return
    try:
        yield check_backlog(memory, embedder is not None)
    finally:
        memory.close()
