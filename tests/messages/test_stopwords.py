"""The stopword list is bm25s's, word for word, without importing bm25s (and SciPy) at run time."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from bm25s.stopwords import STOPWORDS_EN_PLUS as BM25S_STOPWORDS

from strands_semantic_memory.messages._stopwords import STOPWORDS_EN_PLUS

ROOT = Path(__file__).resolve().parents[2]


def test_the_list_is_bm25s_extended_english_list():
    assert STOPWORDS_EN_PLUS == tuple(BM25S_STOPWORDS)


@pytest.mark.subprocess
def test_importing_the_package_imports_no_heavy_dependency():
    heavy = ("bm25s", "scipy", "torch", "transformers", "sentence_transformers", "onnxruntime", "onnx", "faiss")
    script = (
        "import json, sys\n"
        "import strands_semantic_memory\n"
        f"print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT, timeout=300
    )
    assert json.loads(result.stdout) == []
