"""The ONNX Runtime backend against the real bundled model and the PyTorch backend (issue 16.2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest

from strands_semantic_memory.embeddings import (
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    onnx_available,
    resolve_embedder,
)
from strands_semantic_memory.embeddings._local import bundled_model_path, resolve_local_model
from strands_semantic_memory.errors import ConfigurationError, MissingDependencyError
from tests.support.scores import SCORE_TOLERANCE

needs_onnx = pytest.mark.skipif(not onnx_available(), reason="the onnx extra is not installed")

TEXTS = [
    "The cat sat on the mat.",
    "Quarterly revenue grew by 8 percent.",
    "a",
    "Ünïcödé, emoji 🎉 and CAPITALS are tokenized like PyTorch's tokenizer does.",
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful. [shares a photo: a rainbow flag]",
    "a very long message " + " ".join(f"word{i}" for i in range(400)),  # past the 256-token truncation
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """One in-memory export of the bundled model, checked to write no file in the working or temp folder."""
    if not onnx_available():
        pytest.skip("the onnx extra is not installed")
    from strands_semantic_memory.embeddings.onnx._export import export_sentence_transformer

    work = tmp_path_factory.mktemp("cwd")
    scratch = tmp_path_factory.mktemp("tmp")
    before_cwd, before_tmp = os.getcwd(), tempfile.tempdir
    os.chdir(work)
    tempfile.tempdir = str(scratch)
    try:
        result = export_sentence_transformer(resolve_local_model("all-MiniLM-L6-v2")[0])
    finally:
        os.chdir(before_cwd)
        tempfile.tempdir = before_tmp
    assert list(work.iterdir()) == [] and list(scratch.iterdir()) == []
    return result


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory, exported) -> Path:
    """A cache folder filled from the export (so the embedders below load without exporting again)."""
    from strands_semantic_memory.embeddings.onnx._cache import GraphCache
    from strands_semantic_memory.embeddings.onnx._quantize import quantize_weights_int8

    folder = tmp_path_factory.mktemp("onnx-cache")
    model_folder = bundled_model_path()
    assert model_folder is not None
    assert GraphCache(folder, model_folder, "all-MiniLM-L6-v2").save(exported, quantize_weights_int8(exported.graph))
    return folder


@pytest.fixture(scope="module")
def onnx_embedder(cache_dir) -> OnnxEmbedder:
    return OnnxEmbedder(cache_dir=cache_dir)


@needs_onnx
def test_documents_equal_pytorch_vectors_so_archives_are_interchangeable(onnx_embedder, embedder):
    assert onnx_embedder.model_id == embedder.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    ours = onnx_embedder.embed_documents(TEXTS)
    reference = embedder.embed_documents(TEXTS)
    assert ours.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    assert float(np.abs(ours - reference).max()) < 1e-5
    # one at a time (no padding) gives the same rows as the padded, length-sorted batch
    singles = np.concatenate([onnx_embedder.embed_documents([text]) for text in TEXTS])
    assert float(np.abs(singles - ours).max()) < 1e-5


@needs_onnx
def test_int8_queries_stay_close_to_pytorch_and_rank_the_same_way(onnx_embedder, embedder):
    queries = ["Where did the cat sit?", "How did revenue change?", "What happened at the support group?"]
    ours = onnx_embedder.embed_queries(queries)
    reference = embedder.embed_queries(queries)
    cosines = np.sum(ours * reference, axis=1)
    assert cosines.min() > 0.995  # 0.98 before row scaling (per-tensor activation scales)
    assert float(np.abs(ours - reference).max()) > 1e-4  # it is really the quantized graph
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, rtol=1e-5)
    docs = embedder.embed_documents(TEXTS[:5])
    assert list(np.argmax(ours @ docs.T, axis=1)) == [0, 1, 4] == list(np.argmax(reference @ docs.T, axis=1))


@needs_onnx
def test_float32_queries_equal_pytorch(cache_dir, embedder):
    exact = OnnxEmbedder(cache_dir=cache_dir, query_precision="float32")
    queries = ["Where did the cat sit?", "What was my booking reference?"]
    assert float(np.abs(exact.embed_queries(queries) - embedder.embed_queries(queries)).max()) < 1e-5


QUESTIONS = [
    "Where did the cat sit?",
    "How did revenue change last quarter?",
    "What happened at the support group?",
    "When did Maria move to the new apartment?",
    "What instrument does John play on weekends?",
    "Which city did they visit for the conference in 2023?",
    "Why did the deployment fail on Friday night?",
    "What is the name of Sam's dog?",
    "How many kids does the author have?",
    "What did Alex recommend for the trip to Japan?",
    "Did the doctor say anything about the knee injury?",
    "What book was she reading during the holidays?",
    "Who organized the charity run?",
    "What was my booking reference?",
    "How long has he been learning to paint?",
    "What does the error ECONNRESET mean in the logs?",
    "Which restaurant did we pick for the anniversary dinner?",
    "What hobby did Caroline start after the workshop?",
    "When is the next team meeting scheduled?",
    "What color was the car they bought?",
]


def _op_counts(graph: bytes) -> dict[str, int]:
    import onnx

    counts: dict[str, int] = {}
    for node in onnx.load_from_string(graph).graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return counts


def _quantized_inputs(graph: bytes) -> dict[str, tuple[str, str]]:
    """For each MatMulInteger (by weight name): the op making the tensor that was quantized, and its output name."""
    import onnx

    nodes = list(onnx.load_from_string(graph).graph.node)
    producer = {output: node for node in nodes for output in node.output}
    found = {}
    for node in nodes:
        if node.op_type == "MatMulInteger":
            quantize = producer[node.input[0]]
            assert quantize.op_type == "DynamicQuantizeLinear"
            source = producer[quantize.input[0]]
            found[node.input[1]] = (source.op_type, source.output[0])
    return found


@needs_onnx
def test_quantization_replaces_every_weight_matmul(exported):
    from strands_semantic_memory.embeddings.onnx._quantize import quantize_weights_int8

    before, after = _op_counts(exported.graph), _op_counts(quantize_weights_int8(exported.graph))
    assert after.get("MatMulInteger", 0) == 36  # 6 layers x (q, k, v, output, 2 feed-forward)
    assert after.get("DynamicQuantizeLinear", 0) == 24  # q, k and v share one quantized input
    assert after.get("MatMul", 0) == before["MatMul"] - 36 == 12  # attention products stay fp32
    plain = _op_counts(quantize_weights_int8(exported.graph, row_scaling=False))
    assert plain.get("MatMulInteger", 0) == 36 and plain.get("DynamicQuantizeLinear", 0) == 24
    assert plain.get("ReduceMax", 0) == 0 and plain.get("Div", 0) == before.get("Div", 0)
    with pytest.raises(ConfigurationError, match="bits"):
        quantize_weights_int8(exported.graph, bits=9)


@needs_onnx
def test_row_scaling_covers_every_input_but_the_shared_attention_input(exported):
    from strands_semantic_memory.embeddings.onnx._quantize import quantize_weights_int8

    graph = quantize_weights_int8(exported.graph)
    sources = _quantized_inputs(graph)
    assert len(sources) == 36
    scaled = {weight for weight, (op, _) in sources.items() if op == "Div"}  # rows divided by their max |x|
    shared = {weight for weight, (op, _) in sources.items() if op == "LayerNormalization"}
    assert len(scaled) == 18 and len(shared) == 18 and len(scaled | shared) == 36
    by_input: dict[str, int] = {}
    for weight in shared:
        by_input[sources[weight][1]] = by_input.get(sources[weight][1], 0) + 1
    assert sorted(by_input.values()) == [3] * 6  # the query, key and value projections of each of 6 layers
    counts = _op_counts(graph)
    assert counts["ReduceMax"] == counts["Abs"] == 18
    assert {op for op, _ in _quantized_inputs(quantize_weights_int8(exported.graph, row_scaling=False)).values()} == {
        "LayerNormalization",  # q/k/v and the first feed-forward product
        "Reshape",  # the attention output projection
        "Mul",  # the second feed-forward product, after GELU
    }


@needs_onnx
def test_row_scaled_queries_are_closer_to_the_fp32_graph(exported, cache_dir):
    """The bounds were measured: row scaling min cosine 0.9963, per tensor 0.9903 on these questions (LoCoMo dev:
    0.9960 and 0.9887 over 996 questions); the mean error 1 - cosine was 0.44 of per tensor's."""
    from strands_semantic_memory.embeddings.onnx._quantize import quantize_weights_int8
    from strands_semantic_memory.embeddings.onnx._runtime import _session

    reference = OnnxEmbedder(cache_dir=cache_dir, query_precision="float32")
    runtime = reference._runtime
    row = _session(quantize_weights_int8(exported.graph), 1)
    tensor = _session(quantize_weights_int8(exported.graph, row_scaling=False), 1)
    fp32 = np.concatenate([reference.embed_queries([q]) for q in QUESTIONS])
    rows = np.concatenate([reference._run(row, [q], "") for q in QUESTIONS])
    tensors = np.concatenate([reference._run(tensor, [q], "") for q in QUESTIONS])
    assert runtime.queries is runtime.documents  # float32 queries run the fp32 graph
    row_cosines, tensor_cosines = np.sum(rows * fp32, axis=1), np.sum(tensors * fp32, axis=1)
    assert row_cosines.min() > 0.995 > tensor_cosines.min()
    assert float(np.mean(1 - row_cosines)) < 0.6 * float(np.mean(1 - tensor_cosines))
    assert float(np.abs(rows - fp32).max()) > 1e-4  # still quantized


@pytest.mark.subprocess
@needs_onnx
def test_cached_model_loads_in_a_new_process_without_pytorch(cache_dir, onnx_embedder):
    script = (
        "import json, sys\n"
        "from strands_semantic_memory.embeddings import OnnxEmbedder\n"
        f"vectors = OnnxEmbedder(cache_dir={str(cache_dir)!r}).embed_queries(['Where did the cat sit?'])\n"
        "print(json.dumps({'torch': 'torch' in sys.modules, 'st': 'sentence_transformers' in sys.modules,"
        " 'vector': vectors[0].tolist()}))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    report = json.loads(result.stdout)
    assert report["torch"] is False and report["st"] is False
    np.testing.assert_allclose(report["vector"], onnx_embedder.embed_queries(["Where did the cat sit?"])[0], atol=1e-6)
    assert result.stderr == ""


@needs_onnx
def test_queries_from_many_threads_match_one_thread(onnx_embedder):
    queries = [f"what did person {i} say about topic {i % 7}?" for i in range(24)]
    expected = [onnx_embedder.embed_queries([q])[0] for q in queries]
    results: dict[int, np.ndarray] = {}

    def work(offset: int) -> None:
        for i in range(offset, len(queries), 4):
            results[i] = onnx_embedder.embed_queries([queries[i]])[0]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Each query embedded twice, under other thread schedules: equal up to float rounding, while a call that read
    # another thread's input or buffers would give a wholly different vector.
    np.testing.assert_allclose(
        np.stack([results[i] for i in range(len(queries))]), np.stack(expected), rtol=0, atol=SCORE_TOLERANCE
    )


@needs_onnx
def test_models_the_export_does_not_reproduce_are_refused(embedder):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.models import Dense

    from strands_semantic_memory.embeddings.onnx._export import _pooling_mode

    base = embedder.model
    assert _pooling_mode(base) == "mean"
    with_dense = SentenceTransformer(modules=[base[0], base[1], Dense(384, 8)], device="cpu")
    with pytest.raises(ConfigurationError, match="Transformer \\+ Pooling"):
        _pooling_mode(with_dense)


def test_backend_resolution():
    assert isinstance(resolve_embedder("all-MiniLM-L6-v2", backend="torch"), SentenceTransformerEmbedder)
    assert isinstance(resolve_embedder("all-MiniLM-L6-v2", backend="onnx"), OnnxEmbedder)  # nothing loaded yet
    auto = resolve_embedder("all-MiniLM-L6-v2")
    assert isinstance(auto, OnnxEmbedder if onnx_available() else SentenceTransformerEmbedder)
    other_folder = str(bundled_model_path())  # a model named by folder: auto keeps PyTorch
    assert isinstance(resolve_embedder(other_folder), SentenceTransformerEmbedder)
    with pytest.raises(ConfigurationError, match="backend must be one of"):
        resolve_embedder("all-MiniLM-L6-v2", backend="tensorflow")
    with pytest.raises(ConfigurationError, match="backend='onnx' only"):
        resolve_embedder("all-MiniLM-L6-v2", backend="torch", cache_dir="/nonexistent")
    with pytest.raises(ConfigurationError, match="local models only"):
        resolve_embedder("bedrock:amazon.titan-embed-text-v2:0", backend="onnx")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"query_precision": "int4"}, "query_precision"),
        ({"batch_size": 0}, "batch_size"),
        ({"query_threads": 0}, "thread counts"),
        ({"document_threads": -1}, "thread counts"),
    ],
)
def test_bad_options_are_named(kwargs, match):
    with pytest.raises(ConfigurationError, match=match):
        OnnxEmbedder(**kwargs)


@pytest.mark.skipif(onnx_available(), reason="checks the message shown when the onnx extra is missing")
def test_without_the_extra_the_error_names_it(tmp_path):
    with pytest.raises(MissingDependencyError, match=r"strands-semantic-memory\[onnx\]"):
        OnnxEmbedder(cache_dir=tmp_path).embed_queries(["hello"])
