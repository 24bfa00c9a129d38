"""The int8 query graph: dynamic int8 quantization of an exported fp32 ONNX graph, in memory.

Every MatMul with a constant 2-D weight ``W`` becomes integer arithmetic that ONNX Runtime fuses into its
``DynamicQuantizeMatMul`` kernel: ``DynamicQuantizeLinear`` of the input (uint8, one scale and zero point for the
whole tensor, computed at run time), ``MatMulInteger`` with ``W`` quantized per output column (symmetric, 7 bits,
zero point 0), a cast and a rescale. Embeddings, attention products, layer norms and pooling stay fp32.

Row scaling (``row_scaling=True``, the default): one scale for a whole tensor lets its largest rows set the
step for every token (in all-MiniLM-L6-v2 the ``[CLS]`` row often peaks 3-8 times higher than the other tokens'
rows). So before it is quantized, each row (token) of a MatMul input is divided by its largest
absolute value, and the product is multiplied back by it: four small nodes per input and one per product, and
the fused kernel is unchanged. The input shared by the attention's query, key and value projections keeps one
scale per tensor (scaling it too cost time and measured slightly further from fp32). Measured on the 996 LoCoMo
dev questions with all-MiniLM-L6-v2, one at a time, against the fp32 graph (recall: dense retrieval, the query
vector alone deciding, change in points against fp32 queries over the same document vectors):

| query graph | cosine mean | cosine min | dense R@5/10/25/50 change | p50, 1 thread |
| --- | --- | --- | --- | --- |
| per tensor (``row_scaling=False``) | 0.9940 | 0.9887 | +0.3 +1.3 +0.7 -0.3 | 2.9 ms |
| row scaling (default) | 0.9974 | 0.9960 | +0.5 +0.4 +0.4 +0.5 | 3.3 ms |
| fp32 | 1 | 1 | 0 | 6.5 ms |

(latency: 13-token median question, variants taking turns question by question in one process, on 2 cores
with a load average of 3.7; in a later run at a load of 5.6 the CPU time of one query was 3.6, 4.0 and 7.1 ms.)
Also measured and not chosen (cosine mean; p50 against about 3 ms per tensor in the same runs): 8-bit weights
(0.9948; u8 x s8 products can then overflow 16 bits on CPUs without VNNI), the attention and feed-forward output
projections kept fp32 (0.9967, 4.5 ms), row scaling on all 24 inputs (0.9971, 3.4 ms), asymmetric per-row uint8
activations (0.9981, 5.0 ms), 8-bit uint8 weights with row scaling (0.9982, +1 ms), ONNX Runtime's contrib
operator ``MatMulNBits`` with 8-bit blocks of 128 and int8 compute (0.9992, 3.9 ms; slower, and not checked on the
oldest onnxruntime this package accepts, 1.17).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from strands_semantic_memory.embeddings.onnx._dependencies import require_package
from strands_semantic_memory.errors import ConfigurationError

logger = logging.getLogger(__name__)

__all__ = ["QUANT_BITS", "QUERY_GRAPH_VERSION", "quantize_weights_int8"]

QUANT_BITS = 7
"""Bits of the int8 weights: 7 keeps u8 x s8 products within 16 bits on every x86 CPU (VNNI or not)."""
QUERY_GRAPH_VERSION = 2
"""Version of what ``quantize_weights_int8`` builds by default (1: per-tensor, 2: row scaling). Cached query
graphs are stored under it, so a cache never serves a graph built with other settings."""
_ROW_FLOOR = 1e-12
"""Smallest row scale (an all-zero row divides by this, not by zero)."""


def quantize_weights_int8(graph: bytes, bits: int = QUANT_BITS, *, row_scaling: bool = True) -> bytes:
    """Dynamic int8 quantization of every MatMul with a constant 2-D weight (see the module documentation).

    (onnxruntime's own ``quantize_dynamic`` writes temporary files, has no row scaling, and also quantizes the
    embedding tables, which costs accuracy and gains no speed.)

    Args:
        graph: A serialized fp32 ONNX model.
        bits: Bits of the weights, 2..8; 7 keeps u8 x s8 products within 16 bits on every x86 CPU.
        row_scaling: Scale each row of a MatMul input that feeds no other MatMul to unit maximum before it is
            quantized (more accurate, about 0.4 ms more per short query); False: one scale per tensor.

    Returns:
        The serialized quantized model.

    Raises:
        MissingDependencyError: If ``onnx`` is not installed.
        ConfigurationError: For bits outside 2..8.
    """
    if not 2 <= bits <= 8:
        raise ConfigurationError(f"bits must be in 2..8, got {bits}")

    onnx = require_package("onnx")
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load_from_string(graph)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 17)
    initializers = {init.name: init for init in model.graph.initializer}

    def weight_of(node: Any) -> Any:
        weight = initializers.get(node.input[1]) if node.op_type == "MatMul" and len(node.input) == 2 else None
        return weight if weight is not None and len(weight.dims) == 2 else None

    consumers: dict[str, int] = {}
    for node in model.graph.node:
        if weight_of(node) is not None:
            consumers[node.input[0]] = consumers.get(node.input[0], 0) + 1
    limit = 2 ** (bits - 1) - 1
    nodes: list[Any] = []
    added: list[Any] = []
    replaced: set[str] = set()
    quantized_inputs: dict[str, tuple[str, str, str, str | None]] = {}
    if row_scaling:
        added.append(numpy_helper.from_array(np.array(_ROW_FLOOR, np.float32), "row_scale/floor"))
        if opset >= 18:  # ReduceMax takes its axes as an input from opset 18 on
            added.append(numpy_helper.from_array(np.array([-1], np.int64), "row_scale/axes"))
    for node in model.graph.node:
        weight = weight_of(node)
        if weight is None:
            nodes.append(node)
            continue
        values = numpy_helper.to_array(weight).astype(np.float32)
        scale = np.abs(values).max(axis=0) / limit
        scale[scale == 0] = 1.0
        quantized = np.clip(np.rint(values / scale), -limit, limit).astype(np.int8)
        source = node.input[0]
        if source not in quantized_inputs:  # q, k and v share their input: quantize it once
            row_scale = f"{source}/row_scale" if row_scaling and consumers[source] == 1 else None
            unit = source
            if row_scale is not None:
                unit = f"{source}/unit_rows"
                reduce = (
                    helper.make_node("ReduceMax", [f"{source}/abs", "row_scale/axes"], [f"{row_scale}/raw"], keepdims=1)
                    if opset >= 18
                    else helper.make_node("ReduceMax", [f"{source}/abs"], [f"{row_scale}/raw"], keepdims=1, axes=[-1])
                )
                nodes += [
                    helper.make_node("Abs", [source], [f"{source}/abs"]),
                    reduce,
                    helper.make_node("Max", [f"{row_scale}/raw", "row_scale/floor"], [row_scale]),
                    helper.make_node("Div", [source, row_scale], [unit]),
                ]
            quantized_inputs[source] = (f"{source}/q", f"{source}/scale", f"{source}/zero", row_scale)
            nodes.append(helper.make_node("DynamicQuantizeLinear", [unit], list(quantized_inputs[source][:3])))
        q_input, input_scale, input_zero, row_scale = quantized_inputs[source]
        name = f"{weight.name}/int8"
        replaced.add(weight.name)
        added += [
            numpy_helper.from_array(quantized, name),
            numpy_helper.from_array(np.zeros(values.shape[1], np.int8), f"{name}/zero"),
            numpy_helper.from_array(scale.astype(np.float32), f"{name}/scale"),
        ]
        out = node.output[0]
        product = out if row_scale is None else f"{out}/unit_rows"
        nodes += [
            helper.make_node("MatMulInteger", [q_input, name, input_zero, f"{name}/zero"], [f"{out}/i32"]),
            helper.make_node("Cast", [f"{out}/i32"], [f"{out}/f32"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [input_scale, f"{name}/scale"], [f"{out}/scale"]),
            helper.make_node("Mul", [f"{out}/f32", f"{out}/scale"], [product]),
        ]
        if row_scale is not None:
            nodes.append(helper.make_node("Mul", [product, row_scale], [out]))
    kept = [init for init in model.graph.initializer if init.name not in replaced]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept + added)
    logger.debug(
        "matmuls=<%d>, row_scaled_inputs=<%d> | quantized the query graph to int8",
        len(replaced),
        sum(1 for entry in quantized_inputs.values() if entry[3] is not None),
    )
    return bytes(model.SerializeToString())
