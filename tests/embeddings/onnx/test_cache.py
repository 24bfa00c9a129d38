"""The cache of exported ONNX graphs: location, keys, reuse across processes, damage, concurrent writers."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from strands_semantic_memory.embeddings import onnx_available
from strands_semantic_memory.embeddings._local import bundled_model_path

pytestmark = pytest.mark.skipif(not onnx_available(), reason="the onnx extra is not installed")

NAME = "all-MiniLM-L6-v2"
ROOT = Path(__file__).resolve().parents[3]


def _run(script: str, cache: Path, *, timeout: float = 600) -> dict:
    """Run ``script`` in a fresh interpreter with the cache moved to ``cache``; it prints one JSON line."""
    environment = {**os.environ, "STRANDS_SEMANTIC_MEMORY_CACHE": str(cache), "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout, env=environment, check=False
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


FIRST_RETRIEVE = """
import json, sys
from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.embeddings.onnx._export import export_count
memory = SemanticMemory()
notes = [f"note {i}: the booking reference is BK-{i}" for i in range(10)]
memory.add([{"role": "user", "content": [{"text": note}]} for note in notes])
hits = memory.search("what was the booking reference?")
print(json.dumps({"exports": export_count(), "torch": "torch" in sys.modules, "hits": len(hits),
                  "similarity": hits[0].similarity}))
"""


def _entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if not p.name.startswith("."))


@pytest.fixture(scope="module")
def model_folder() -> Path:
    folder = bundled_model_path()
    assert folder is not None
    return folder


@pytest.fixture(scope="module")
def graphs(tmp_path_factory, model_folder):
    """One export of the bundled model and its query graph (the exporter itself writes no file: test_runtime)."""
    from strands_semantic_memory.embeddings.onnx._export import export_sentence_transformer
    from strands_semantic_memory.embeddings.onnx._quantize import quantize_weights_int8

    exported = export_sentence_transformer(str(model_folder))
    return exported, quantize_weights_int8(exported.graph)


def test_the_environment_variable_moves_or_turns_off_the_cache(monkeypatch, tmp_path):
    import platformdirs

    from strands_semantic_memory.embeddings.onnx._cache import CACHE_ENV, cache_root, onnx_cache_dir

    monkeypatch.delenv(CACHE_ENV, raising=False)
    default = Path(platformdirs.user_cache_dir("strands-semantic-memory", appauthor=False))
    assert cache_root() == default and onnx_cache_dir(None) == default / "onnx"
    monkeypatch.setenv(CACHE_ENV, "")
    assert cache_root() == default, "an empty value means the default, as if unset"
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "moved"))
    assert onnx_cache_dir(None) == tmp_path / "moved" / "onnx"
    for off in ("0", "off", "OFF", "false", "no"):
        monkeypatch.setenv(CACHE_ENV, off)
        assert cache_root() is None and onnx_cache_dir(None) is None
    assert onnx_cache_dir(tmp_path / "mine") == tmp_path / "mine", "an explicit cache_dir wins over the variable"
    assert not (tmp_path / "moved").exists(), "locating the cache writes nothing"


@pytest.mark.subprocess
def test_a_second_process_reuses_the_cache_without_exporting_or_importing_pytorch(tmp_path):
    cache = tmp_path / "cache"
    first = _run(FIRST_RETRIEVE, cache)
    assert first["exports"] == 1 and first["hits"] > 0 and first["similarity"] is not None
    [entry] = _entries(cache / "onnx")
    assert entry.name.startswith(f"{NAME}-") and {p.name for p in entry.iterdir()} == {
        "entry.json",
        "fp32.onnx",
        "int8.onnx",
    }
    second = _run(FIRST_RETRIEVE, cache)
    assert second["exports"] == 0 and second["torch"] is False
    assert second["hits"] == first["hits"] and second["similarity"] == pytest.approx(first["similarity"], abs=1e-6)
    assert _entries(cache / "onnx") == [entry] and not [p for p in (cache / "onnx").iterdir() if p.name[0] == "."]


@pytest.mark.subprocess
def test_with_the_cache_turned_off_every_process_exports_in_memory_and_writes_nothing(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    script = (
        f"import os; os.environ.update(HOME={str(home)!r}, XDG_CACHE_HOME={str(home / 'xdg')!r})\n" + FIRST_RETRIEVE
    )
    report = _run(script, Path("off"))
    assert report["exports"] == 1 and report["hits"] > 0
    written = [p.relative_to(home).as_posix() for p in home.rglob("*") if p.is_file()]
    # ``import onnxruntime`` itself keeps a device id under the user cache folder; nothing else may appear
    assert all(name.startswith("xdg/Microsoft/DeveloperTools/.onnxruntime/") for name in written), written
    assert not (home / "xdg" / "strands-semantic-memory").exists()


@pytest.mark.parametrize("damage", ["truncated graph", "flipped byte", "garbage entry.json", "missing entry.json"])
def test_a_damaged_or_partial_entry_is_detected(tmp_path, graphs, model_folder, damage, caplog):
    from strands_semantic_memory.embeddings.onnx._cache import GraphCache

    exported, int8 = graphs
    cache = GraphCache(tmp_path, model_folder, NAME)
    assert cache.save(exported, int8)
    loaded = cache.load()
    assert loaded is not None and loaded[0] == exported and loaded[1] == int8
    if damage == "truncated graph":
        (cache.path / "int8.onnx").write_bytes(int8[: len(int8) // 2])
    elif damage == "flipped byte":
        data = bytearray(exported.graph)
        data[len(data) // 2] ^= 0x01
        (cache.path / "fp32.onnx").write_bytes(bytes(data))
    elif damage == "garbage entry.json":
        (cache.path / "entry.json").write_text("{not json", encoding="utf-8")
    else:
        (cache.path / "entry.json").unlink()
    with caplog.at_level(logging.WARNING, logger="strands_semantic_memory.embeddings.onnx._cache"):
        assert GraphCache(tmp_path, model_folder, NAME).load() is None
    assert "damaged ONNX cache entry" in caplog.text


def test_a_damaged_entry_is_exported_again_and_replaced(tmp_path, graphs, model_folder):
    from strands_semantic_memory.embeddings.onnx._cache import GraphCache, prepare_graphs
    from strands_semantic_memory.embeddings.onnx._export import export_count

    exported, int8 = graphs
    cache = GraphCache(tmp_path, model_folder, NAME)
    cache.save(exported, int8)
    (cache.path / "fp32.onnx").write_bytes(exported.graph[:1000])
    before = export_count()
    rebuilt, rebuilt_int8 = prepare_graphs(str(model_folder), NAME, True, tmp_path)
    assert export_count() == before + 1 and rebuilt == exported and rebuilt_int8 == int8
    assert (cache.path / "fp32.onnx").read_bytes() == exported.graph
    assert _entries(tmp_path) == [cache.path] and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    again, _ = prepare_graphs(str(model_folder), NAME, False, tmp_path)
    assert export_count() == before + 1 and again == exported, "the replaced entry is served without an export"


# ------------------------------------------------------------------ entry.json is checked whole (issue 39, point 5)

FLIP_TEXTS = [
    "Where is the harbour office?",
    "THE BOOKING REFERENCE IS BK-7731-QZ",  # lower-casing matters
    " ".join(f"word{n} harbour tide anchor" for n in range(120)),  # longer than max_seq_length: truncation matters
]


def _vectors(model, session):
    """Document vectors of ``FLIP_TEXTS`` with ``model``'s tokenizer and settings, through ``session``."""
    import numpy as np
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(model.tokenizer)
    tokenizer.no_padding()
    tokenizer.enable_truncation(model.max_seq_length)
    texts = [t.lower() for t in FLIP_TEXTS] if model.do_lower_case else FLIP_TEXTS
    rows = []
    for text in texts:
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        rows.append(session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0])
    return np.stack(rows)


def _flip_positions(raw: bytes) -> list[int]:
    """A deterministic sample of byte positions of ``entry.json``, and every byte of the settings' values."""
    import random

    positions = set(random.Random(39).sample(range(len(raw)), 48))
    for field in (b'"max_seq_length": ', b'"do_lower_case": ', b'"dimension": ', b'"digest": "', b'"key": "'):
        if field in raw:
            start = raw.index(field) + len(field)
            positions.update(range(start, start + 4))
    tokenizer = raw.index(b'"tokenizer": "') + len(b'"tokenizer": "')
    positions.update(range(tokenizer + 1000, tokenizer + 1008))  # inside the tokenizer's JSON
    return sorted(positions)


def test_every_bit_flip_in_entry_json_loads_the_same_model_or_is_exported_again(tmp_path, graphs, model_folder):
    """Each bit of a sample of positions, flipped alone: the load is the exported model exactly, or refused.

    Before: 26 of 40 random flips loaded silently with another tokenizer or settings. The graph files are checked by
    their sha256 (tested above); here the entry holds a small stand-in graph so that each of the few hundred loads
    stays cheap, and vectors come from one session of the real graph.
    """
    import dataclasses

    import numpy as np

    from strands_semantic_memory.embeddings.onnx._cache import GraphCache
    from strands_semantic_memory.embeddings.onnx._runtime import _session

    exported, _ = graphs
    stand_in = dataclasses.replace(exported, graph=b"fp32 stand-in")
    cache = GraphCache(tmp_path, model_folder, NAME)
    assert cache.save(stand_in, b"int8 stand-in")
    entry = cache.path / "entry.json"
    raw = entry.read_bytes()
    session = _session(exported.graph, 1)
    fresh = _vectors(exported, session)
    outcomes = {"identical": 0, "exported again": 0}
    wrong: list[str] = []
    for position in _flip_positions(raw):
        for bit in range(8):
            damaged = bytearray(raw)
            damaged[position] ^= 1 << bit
            entry.write_bytes(bytes(damaged))
            loaded = GraphCache(tmp_path, model_folder, NAME).load()
            if loaded is None:
                outcomes["exported again"] += 1  # prepare_graphs exports and replaces it (tested below)
                continue
            model, int8 = loaded
            if model == stand_in and int8 == b"int8 stand-in":
                outcomes["identical"] += 1
                continue
            try:
                same = np.allclose(_vectors(dataclasses.replace(model, graph=exported.graph), session), fresh)
            except Exception as error:  # a tokenizer that does not load: the process would be on word search only
                wrong.append(f"byte {position} bit {bit}: loaded, and then fails ({type(error).__name__})")
                continue
            if not same:
                wrong.append(f"byte {position} bit {bit}: loaded with other vectors")
    entry.write_bytes(raw)
    assert not wrong, f"{len(wrong)} flips loaded something else: {wrong[:10]}"
    assert outcomes["exported again"] > 0


def test_a_damaged_tokenizer_byte_is_exported_again_and_the_embedder_works(tmp_path, graphs, model_folder):
    """Before: every process loaded the entry, failed to read its tokenizer and stayed on word search only."""
    from strands_semantic_memory.embeddings.onnx._cache import GraphCache, prepare_graphs
    from strands_semantic_memory.embeddings.onnx._export import export_count

    exported, int8 = graphs
    cache = GraphCache(tmp_path, model_folder, NAME)
    cache.save(exported, int8)
    entry = cache.path / "entry.json"
    raw = entry.read_bytes()
    at = raw.index(b'"tokenizer": "') + len(b'"tokenizer": "') + 2000
    entry.write_bytes(raw[:at] + bytes([raw[at] ^ 0x04]) + raw[at + 1 :])
    before = export_count()
    rebuilt, rebuilt_int8 = prepare_graphs(str(model_folder), NAME, True, tmp_path)
    assert export_count() == before + 1 and rebuilt == exported and rebuilt_int8 == int8
    assert GraphCache(tmp_path, model_folder, NAME).load() == (exported, int8), "the entry was replaced"


TWO_WRITERS = """
import json, sys, time
from pathlib import Path
start = float(sys.argv[1])
from strands_semantic_memory.embeddings._local import bundled_model_path
from strands_semantic_memory.embeddings.onnx._cache import onnx_cache_dir, prepare_graphs
from strands_semantic_memory.embeddings.onnx._export import export_count
time.sleep(max(0.0, start - time.time()))  # both processes go on together
exported, int8 = prepare_graphs(str(bundled_model_path()), "all-MiniLM-L6-v2", True, onnx_cache_dir(None))
print(json.dumps({"exports": export_count(), "graph": len(exported.graph), "int8": len(int8)}))
"""


@pytest.mark.subprocess
def test_two_processes_starting_together_on_an_empty_cache_both_succeed_and_leave_one_entry(tmp_path, model_folder):
    from strands_semantic_memory.embeddings.onnx._cache import GraphCache

    cache = tmp_path / "cache"
    environment = {**os.environ, "STRANDS_SEMANTIC_MEMORY_CACHE": str(cache), "PYTHONPATH": str(ROOT)}
    start = str(time.time() + 5)  # both are importing by then; the exports themselves take seconds and overlap
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", TWO_WRITERS, start],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
        )
        for _ in range(2)
    ]
    outputs = [process.communicate(timeout=900) for process in processes]
    assert [process.returncode for process in processes] == [0, 0], [err for _, err in outputs]
    reports = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert reports[0]["graph"] == reports[1]["graph"] and reports[0]["int8"] == reports[1]["int8"]
    folder = cache / "onnx"
    entry = GraphCache(folder, model_folder, NAME)
    assert _entries(folder) == [entry.path], "one entry"
    assert not [p for p in folder.iterdir() if p.name.startswith(".")], "no temporary folder left behind"
    loaded = entry.load()
    assert loaded is not None and len(loaded[0].graph) == reports[0]["graph"]


def _synthetic_model(folder: Path) -> Path:
    folder.mkdir()
    (folder / "config.json").write_text('{"hidden_size": 384}', encoding="utf-8")
    (folder / "model.safetensors").write_bytes(b"\0" * ((1 << 20) + 1))  # above the size that is hashed whole
    (folder / ".cache").mkdir()
    (folder / ".cache" / "download.lock").write_text("", encoding="utf-8")
    return folder


def test_the_key_changes_with_the_model_and_the_toolchain_and_not_otherwise(tmp_path, monkeypatch):
    from strands_semantic_memory.embeddings.onnx import _cache
    from strands_semantic_memory.embeddings.onnx._cache import GraphCache

    model = _synthetic_model(tmp_path / "model")
    key = GraphCache(tmp_path, model, NAME).key
    assert GraphCache(tmp_path / "elsewhere", model, "another name").key == key, "the key is the model's, not a path"
    (model / ".cache" / "download.lock").write_text("changed", encoding="utf-8")
    assert GraphCache(tmp_path, model, NAME).key == key, "hidden files do not count"

    (model / "config.json").write_text('{"hidden_size": 768}', encoding="utf-8")  # same size, other contents
    changed_config = GraphCache(tmp_path, model, NAME).key
    assert changed_config != key
    weights = model / "model.safetensors"
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # new weights, same size
    changed_weights = GraphCache(tmp_path, model, NAME).key
    assert changed_weights != changed_config

    real_major = _cache._major
    monkeypatch.setattr(_cache, "_major", lambda package: "99" if package == "onnxruntime" else real_major(package))
    new_runtime = GraphCache(tmp_path, model, NAME).key
    assert new_runtime != changed_weights
    monkeypatch.setattr(_cache, "EXPORT_VERSION", _cache.EXPORT_VERSION + 1)
    assert GraphCache(tmp_path, model, NAME).key != new_runtime


def test_an_entry_is_never_served_for_another_key(tmp_path, graphs, model_folder, monkeypatch):
    from strands_semantic_memory.embeddings.onnx import _cache
    from strands_semantic_memory.embeddings.onnx._cache import GraphCache

    exported, int8 = graphs
    GraphCache(tmp_path, model_folder, NAME).save(exported, int8)
    monkeypatch.setattr(_cache, "QUERY_GRAPH_VERSION", _cache.QUERY_GRAPH_VERSION + 1)
    newer = GraphCache(tmp_path, model_folder, NAME)
    assert newer.load() is None
    # an entry.json copied under the new key's name (a hand-made mix-up) is refused by its recorded key
    old_entry = _entries(tmp_path)[0]
    newer.path.mkdir()
    for name in ("entry.json", "fp32.onnx", "int8.onnx"):
        (newer.path / name).write_bytes((old_entry / name).read_bytes())
    assert newer.load() is None


def test_temporary_folders_of_a_dead_writer_are_swept_after_an_hour(tmp_path, graphs, model_folder):
    from strands_semantic_memory.embeddings.onnx._cache import GraphCache

    old, fresh = tmp_path / ".all-MiniLM-L6-v2-x.abc.tmp", tmp_path / ".all-MiniLM-L6-v2-x.def.tmp"
    for folder in (old, fresh):
        folder.mkdir()
        (folder / "fp32.onnx").write_bytes(b"partial")
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    GraphCache(tmp_path, model_folder, NAME).save(*graphs)
    assert not old.exists() and fresh.exists(), "a writer that may still run keeps its folder"
