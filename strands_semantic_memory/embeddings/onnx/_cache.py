"""The cache of exported graphs: where it lives, how an entry is keyed, written and checked.

Exporting the bundled model to ONNX takes seconds (PyTorch and sentence-transformers are imported, the model is
traced, the query graph quantized): 6-7 s on a quiet 2-core machine, 15 s under load, in every new process. A
cached entry loads in well under a second without importing PyTorch.

Where: ``platformdirs.user_cache_dir("strands-semantic-memory")/onnx`` (``~/.cache/strands-semantic-memory/onnx``
on Linux), or ``<STRANDS_SEMANTIC_MEMORY_CACHE>/onnx`` when that environment variable names a folder; the variable
set to ``0``, ``off``, ``false`` or ``no`` turns the cache off (the model is then exported in memory in each
process and nothing is written). An empty or unset variable means the default folder. ``OnnxEmbedder(cache_dir=...)``
names the folder of entries directly. The folder is safe to delete at any time.

An entry is one folder, ``<model>-<key>``, holding ``fp32.onnx`` (documents), ``int8.onnx`` (queries) and
``entry.json`` (what the graphs were built from, each file's size and sha256, the tokenizer and the model's
settings, and a sha256 of all of that). The key is a digest of
everything the graphs depend on: the model folder (each file's name, size and modification time, and the contents
of its small files: configuration, tokenizer), this module's format, the exporter's and the query graph's versions,
and the major versions of torch, transformers, sentence-transformers, onnx and onnxruntime. A changed model or
toolchain gets a new entry; an old entry is never loaded for it.

Writes are atomic: an entry is written into a hidden temporary folder beside it and renamed into place in one
step, so a reader sees a whole entry or none. Two processes that export at once both succeed; the first rename
wins and the other process drops its copy. Every load checks ``entry.json`` against the digest written into it at
export (it holds the tokenizer and the settings that shape the vectors: a changed ``max_seq_length`` changes every
long text's vector), then each graph file's size and sha256 against ``entry.json``: a damaged or truncated entry
(or one without a digest, written by an older release) is logged, exported again and replaced. Temporary folders
that a killed writer left behind are removed by the next writer once they are an hour old.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_semantic_memory.embeddings.onnx._export import (
    EXPORT_VERSION,
    OPSET,
    ExportedModel,
    export_sentence_transformer,
)
from strands_semantic_memory.embeddings.onnx._quantize import QUANT_BITS, QUERY_GRAPH_VERSION, quantize_weights_int8

logger = logging.getLogger(__name__)

__all__ = [
    "CACHE_ENV",
    "CACHE_FORMAT",
    "GraphCache",
    "cache_root",
    "onnx_cache_dir",
    "prepare_graphs",
]

CACHE_ENV = "STRANDS_SEMANTIC_MEMORY_CACHE"
"""The one environment variable of the cache: a folder moves it; ``0``, ``off``, ``false`` or ``no`` turns it off."""
CACHE_FORMAT = 2
"""Version of an entry's layout; a change makes every older entry unused."""
_DISABLED = frozenset({"0", "off", "false", "no"})
_APP_NAME = "strands-semantic-memory"
_SMALL_FILE = 1 << 20
"""Files of the model folder up to this size (configuration, tokenizer, vocabulary) are hashed whole; larger ones
(the weights) by name, size and modification time, so a cached load never reads the weights."""
_TOOLCHAIN = ("torch", "transformers", "sentence-transformers", "onnx", "onnxruntime")
_STALE_SECONDS = 3600.0
"""A temporary folder this old was left by a writer that died; the next writer removes it."""
_FILES = ("fp32.onnx", "int8.onnx")


def cache_root() -> Path | None:
    """The cache's root folder as the environment sets it, or None when the cache is turned off.

    Read on every call (never at import), so a process may change the variable before it loads a model.
    """
    value = os.environ.get(CACHE_ENV, "").strip()
    if value.lower() in _DISABLED:
        return None
    if value:
        return Path(value).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir(_APP_NAME, appauthor=False))


def onnx_cache_dir(explicit: Path | None) -> Path | None:
    """The folder of ONNX entries: the caller's ``cache_dir`` if given, else ``<cache root>/onnx`` (None: off)."""
    if explicit is not None:
        return explicit
    root = cache_root()
    return None if root is None else root / "onnx"


def _major(package: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(package).split(".")[0]
    except metadata.PackageNotFoundError:
        return "absent"


def _model_fingerprint(folder: Path) -> list[list[Any]]:
    """``[name, size, mtime_ns, sha256 of small files or ""]`` for every file of a model folder, sorted by name."""
    rows: list[list[Any]] = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts) or not path.is_file():
            continue  # hidden files (VCS metadata, download locks) do not change the graph
        status = path.stat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if status.st_size <= _SMALL_FILE else ""
        rows.append([relative.as_posix(), status.st_size, status.st_mtime_ns, digest])
    return rows


def _slug(name: str) -> str:
    tail = name.rstrip("/\\").replace("\\", "/").split("/")[-1] or "model"
    return re.sub(r"[^A-Za-z0-9._-]+", "-", tail)[:64]


@dataclass(frozen=True)
class _Inputs:
    """What an entry's graphs depend on; its digest is the entry's key."""

    fields: dict[str, Any]

    @classmethod
    def of(cls, model_folder: Path) -> _Inputs:
        return cls(
            {
                "format": CACHE_FORMAT,
                "exporter": EXPORT_VERSION,
                "opset": OPSET,
                "query_graph": QUERY_GRAPH_VERSION,
                "query_bits": QUANT_BITS,
                "toolchain": {package: _major(package) for package in _TOOLCHAIN},
                "model": _model_fingerprint(model_folder),
            }
        )

    @property
    def key(self) -> str:
        return hashlib.sha256(json.dumps(self.fields, sort_keys=True).encode("utf-8")).hexdigest()


def _entry_digest(meta: dict[str, Any]) -> str:
    """The sha256 of everything in ``entry.json`` but the digest itself, over its canonical JSON."""
    body = {key: value for key, value in meta.items() if key != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


class _Damaged(Exception):
    """An entry exists but does not match its ``entry.json`` (or that file is unreadable)."""


class GraphCache:
    """One model's entry in a cache folder: loaded with every file checked, written atomically."""

    def __init__(self, folder: Path, model_folder: Path, name: str) -> None:
        """Locate the entry of the model in ``model_folder`` (its key is computed now; nothing is read yet).

        Args:
            folder: The cache folder of entries (created when the first entry is written).
            model_folder: The sentence-transformers model folder the graphs are exported from.
            name: The model's name, for the entry's folder name.
        """
        self.folder = folder
        self.inputs = _Inputs.of(model_folder)
        self.key = self.inputs.key
        self.path = folder / f"{_slug(name)}-{self.key[:16]}"

    def load(self) -> tuple[ExportedModel, bytes] | None:
        """The cached graphs, each file checked against ``entry.json``; None when absent or damaged (logged).

        Returns:
            The exported model and the int8 query graph, or None.
        """
        try:
            return self._read()
        except FileNotFoundError:
            return None
        except _Damaged as damage:
            logger.warning("entry=<%s>, problem=<%s> | damaged ONNX cache entry: exporting it again", self.path, damage)
            return None
        except OSError as error:
            logger.warning("entry=<%s>, error=<%s> | cannot read the ONNX cache entry: exporting", self.path, error)
            return None

    def _read(self) -> tuple[ExportedModel, bytes]:
        meta_path = self.path / "entry.json"
        if not meta_path.exists() and self.path.exists():
            raise _Damaged("entry.json is missing")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if "digest" not in meta:
                raise _Damaged("entry.json has no digest (an older release wrote it)")
            if meta["digest"] != _entry_digest(meta):
                raise _Damaged("entry.json does not match its digest (the tokenizer or the settings changed)")
            if meta.get("format") != CACHE_FORMAT or meta.get("key") != self.key:
                raise _Damaged("entry.json belongs to another key or format")
            files = {name: meta["files"][name] for name in _FILES}
            model = meta["model"]
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
            raise _Damaged(f"entry.json is unreadable: {type(error).__name__}: {str(error)[:200]}") from error
        graphs: dict[str, bytes] = {}
        for name, expected in files.items():
            data = (self.path / name).read_bytes()
            if len(data) != expected.get("size"):
                raise _Damaged(f"{name} has {len(data)} bytes, entry.json says {expected.get('size')}")
            if hashlib.sha256(data).hexdigest() != expected.get("sha256"):
                raise _Damaged(f"{name} does not match its sha256")
            graphs[name] = data
        try:
            exported = ExportedModel(
                graph=graphs["fp32.onnx"],
                tokenizer=str(model["tokenizer"]),
                max_seq_length=int(model["max_seq_length"]),
                do_lower_case=bool(model["do_lower_case"]),
                dimension=int(model["dimension"]),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise _Damaged(f"entry.json lacks the model's settings: {error}") from error
        return exported, graphs["int8.onnx"]

    def save(self, exported: ExportedModel, int8: bytes) -> bool:
        """Write the entry atomically (a damaged one in its place is replaced); failures are logged, never raised.

        Returns:
            Whether this call's entry, or an identical one another process wrote first, is now in place.
        """
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._sweep()
            staging = Path(tempfile.mkdtemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.folder))
        except OSError as error:
            logger.warning("folder=<%s>, error=<%s> | cannot write the ONNX cache", self.folder, error)
            return False
        try:
            graphs = {"fp32.onnx": exported.graph, "int8.onnx": int8}
            for name, data in graphs.items():
                (staging / name).write_bytes(data)
            meta = {
                "format": CACHE_FORMAT,
                "key": self.key,
                "inputs": self.inputs.fields,
                "files": {
                    name: {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
                    for name, data in graphs.items()
                },
                "model": {
                    "tokenizer": exported.tokenizer,
                    "max_seq_length": exported.max_seq_length,
                    "do_lower_case": exported.do_lower_case,
                    "dimension": exported.dimension,
                },
                "written_at": time.time(),
            }
            meta["digest"] = _entry_digest(meta)
            (staging / "entry.json").write_text(json.dumps(meta), encoding="utf-8")
            return self._publish(staging)
        except OSError as error:
            logger.warning("entry=<%s>, error=<%s> | cannot write the ONNX cache entry", self.path, error)
            return False
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _publish(self, staging: Path) -> bool:
        """Rename ``staging`` into place; a damaged entry there is moved aside first, a sound one is kept."""
        for _ in range(3):
            try:
                os.rename(staging, self.path)
                logger.info("entry=<%s> | ONNX graphs cached", self.path)
                return True
            except OSError:
                if not self.path.exists():
                    raise
            try:
                self._read()
                return True  # another process wrote the same entry first
            except (_Damaged, OSError):
                aside = self.folder / f".{self.path.name}.{os.getpid()}.{time.monotonic_ns()}.stale"
                with contextlib.suppress(FileNotFoundError):
                    os.rename(self.path, aside)
                shutil.rmtree(aside, ignore_errors=True)
        return False

    def _sweep(self) -> None:
        """Remove temporary folders that writers which died left behind (an hour old or more)."""
        cutoff = time.time() - _STALE_SECONDS
        for path in self.folder.glob(".*"):
            if path.suffix not in (".tmp", ".stale") or not path.is_dir():
                continue
            with contextlib.suppress(OSError):
                if path.stat().st_mtime < cutoff:
                    shutil.rmtree(path, ignore_errors=True)


def prepare_graphs(
    load_target: str, name: str, want_int8: bool, cache_dir: Path | None
) -> tuple[ExportedModel, bytes | None]:
    """The fp32 graph and, if wanted, the int8 query graph: from the cache, else exported (and then cached).

    Args:
        load_target: The model folder sentence-transformers loads.
        name: The model's name (names the cache entry).
        want_int8: Whether the int8 query graph is needed.
        cache_dir: The folder of cache entries; None exports in memory and writes nothing.

    Returns:
        The exported model and the int8 graph (None when not wanted).

    Raises:
        MissingDependencyError, ConfigurationError, EmbeddingError: As ``export_sentence_transformer``.
    """
    model_folder = Path(load_target)
    cache = GraphCache(cache_dir, model_folder, name) if cache_dir is not None and model_folder.is_dir() else None
    found = cache.load() if cache is not None else None
    if found is not None:
        assert cache is not None
        logger.info("model=<%s>, entry=<%s> | loaded the ONNX graphs from the cache", name, cache.path)
        exported, int8 = found
        return exported, int8 if want_int8 else None
    exported = export_sentence_transformer(load_target)
    if cache is None:
        return exported, quantize_weights_int8(exported.graph) if want_int8 else None
    quantized = quantize_weights_int8(exported.graph)  # cached whatever this process needs: an entry is complete
    cache.save(exported, quantized)
    return exported, quantized if want_int8 else None
