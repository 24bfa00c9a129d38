"""The embedding checks: the configuration alone (``--embedding-test-only``), local against Bedrock (``--compare``)."""

from __future__ import annotations

import argparse
import time
from typing import Any

from demo.components import aws_credentials_available, load_embedder
from demo.console import Console, shorten

DEFAULT_BEDROCK_EMBEDDING = "bedrock:amazon.titan-embed-text-v2:0"


def check_embedder(embedder: Any, console: Console) -> dict[str, float]:
    """Dimension, a similarity sanity check and timing for one embedder."""
    import numpy as np

    pairs = [
        ("How do I reset my password?", "Steps to change a forgotten login password", "The train leaves at noon."),
        ("Quicksort picks a pivot element.", "The pivot choice drives quicksort's speed.", "Tomatoes need sun."),
    ]
    started = time.perf_counter()
    correct = 0
    for anchor, similar, unrelated in pairs:
        query = embedder.embed_queries([anchor])[0]
        docs = embedder.embed_documents([similar, unrelated])
        near, far = (float(np.dot(query, d) / (np.linalg.norm(query) * np.linalg.norm(d))) for d in docs)
        correct += near > far
        console.item(f"similar {near:+.3f} vs unrelated {far:+.3f}: {shorten(anchor, 50)}")
    batch = [f"Sentence number {i} about data structures and algorithms." for i in range(32)]
    batch_started = time.perf_counter()
    embedder.embed_documents(batch)
    per_text_ms = (time.perf_counter() - batch_started) * 1000 / len(batch)
    console.item(f"dimension: {embedder.dimension}; batch of 32 texts: {per_text_ms:.1f} ms per text")
    if correct == len(pairs):
        console.ok("similar texts score above unrelated ones")
    else:
        console.warn("the similarity check failed: this model ranks unrelated text above similar text")
    return {
        "per_text_ms": per_text_ms,
        "passed": float(correct == len(pairs)),
        "seconds": time.perf_counter() - started,
    }


def embedding_test(args: argparse.Namespace, console: Console) -> int:
    console.section("Embedding configuration check")
    embedder = load_embedder(args.embedding_model, args.region, console)
    result = check_embedder(embedder, console)
    return 0 if result["passed"] else 1


def compare_embedders(args: argparse.Namespace, console: Console) -> int:
    console.section("Local vs Bedrock embeddings")
    bedrock_name = args.embedding_model if args.embedding_model.startswith("bedrock:") else DEFAULT_BEDROCK_EMBEDDING
    local_name = "all-MiniLM-L6-v2" if args.embedding_model.startswith("bedrock:") else args.embedding_model
    console.item(f"local: {local_name}")
    local = check_embedder(load_embedder(local_name, None, console), console)
    if not aws_credentials_available():
        console.warn(
            f"skipping {bedrock_name}: no AWS credentials found. Configure credentials with bedrock:InvokeModel "
            "permission to compare."
        )
        return 0 if local["passed"] else 1
    console.item(f"bedrock: {bedrock_name}")
    remote = check_embedder(load_embedder(bedrock_name, args.region, console), console)
    console.item(f"per text: local {local['per_text_ms']:.1f} ms, Bedrock {remote['per_text_ms']:.1f} ms")
    return 0 if local["passed"] and remote["passed"] else 1
