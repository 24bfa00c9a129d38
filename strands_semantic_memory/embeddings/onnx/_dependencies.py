"""The ONNX packages the backend imports when it runs, named with the extra that installs them."""

from __future__ import annotations

import importlib
from typing import Any

from strands_semantic_memory.errors import MissingDependencyError

__all__ = ["ONNX_EXTRA", "require_package"]

ONNX_EXTRA = "onnx"
"""The extra that installs ``onnxruntime`` and ``onnx``."""


def require_package(package: str) -> Any:
    """Import an ONNX dependency, or fail with an ImportError that names the extra to install."""
    try:
        return importlib.import_module(package)
    except ImportError as error:
        raise MissingDependencyError("ONNX Runtime embeddings", ONNX_EXTRA, package) from error
