"""The bundled model run by ONNX Runtime: exported from sentence-transformers, int8 query graph.

Modules: ``_runtime`` (``OnnxEmbedder``), ``_export`` (exporting a model to an in-memory graph), ``_cache``
(keeping the graphs between processes: location, keys, atomic writes, checks), ``_quantize`` (the int8 query
graph), ``_dependencies`` (importing the ONNX packages, or naming the extra that installs them).
"""

from strands_semantic_memory.embeddings.onnx._cache import CACHE_ENV
from strands_semantic_memory.embeddings.onnx._runtime import OnnxEmbedder, onnx_available

__all__ = ["CACHE_ENV", "OnnxEmbedder", "onnx_available"]
