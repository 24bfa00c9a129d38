"""The bundled model run by ONNX Runtime: exported from sentence-transformers, int8 query graph.

Modules: ``_runtime`` (``OnnxEmbedder``), ``_export`` (exporting a model and caching the graphs),
``_quantize`` (the int8 query graph).
"""

from strands_semantic_memory.embeddings.onnx._runtime import OnnxEmbedder, onnx_available

__all__ = ["OnnxEmbedder", "onnx_available"]
