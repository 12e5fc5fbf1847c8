"""Reference execution of an ONNX model with every intermediate tensor.

The first stage of the tpuc dump chain: onnxruntime runs the original model
with graph optimizations disabled (so no fusion renames or removes tensors,
e.g. Conv+BatchNorm stays two tensors) and every node output is exposed as an
extra graph output.  The result is keyed by ONNX tensor name in topological
order, ready to be saved with ``np.savez`` and compared against later stages.
"""

from __future__ import annotations

import collections
import heapq
import logging
import os
from typing import Mapping

import numpy as np
import onnx
import onnxruntime as ort

from .errors import FrontendError

logger = logging.getLogger(__name__)

__all__ = ["graph_inputs", "make_test_inputs", "run_reference", "topological_nodes"]

DEFAULT_INT_RANGE = (0, 8)  # [low, high) for integer inputs without an explicit range


def _load(model: str | os.PathLike | onnx.ModelProto) -> onnx.ModelProto:
    if isinstance(model, onnx.ModelProto):
        copy = onnx.ModelProto()
        copy.CopyFrom(model)  # we add graph outputs; never touch the caller's proto
        return copy
    path = os.fspath(model)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such ONNX file")
    return onnx.load(path)  # also loads external weight files next to it


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """Inputs the caller must feed: graph inputs that are not initializers.

    Models exported with IR < 4 also list their weights as graph inputs.
    """
    weights = {init.name for init in model.graph.initializer}
    return [vi for vi in model.graph.input if vi.name not in weights]


def _np_dtype(vi: onnx.ValueInfoProto) -> np.dtype:
    if not vi.type.HasField("tensor_type") or vi.type.tensor_type.elem_type == onnx.TensorProto.UNDEFINED:
        raise ValueError(f"input {vi.name!r} is not a typed tensor")
    return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type))


def _dims(vi: onnx.ValueInfoProto) -> list[int | str | None] | None:
    """Static dims as int, symbolic dims as their name, unknown as None; None if rank unknown."""
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tt.shape.dim]


def _check_inputs(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    expected = graph_inputs(model)
    names = [vi.name for vi in expected]
    unknown = [n for n in inputs if n not in names]
    if unknown:
        raise ValueError(f"unknown input {unknown[0]!r}; the model's inputs are {names}")
    feeds = {}
    for vi in expected:
        if vi.name not in inputs:
            raise ValueError(f"missing input {vi.name!r}; the model's inputs are {names}")
        arr = np.asarray(inputs[vi.name])
        dtype = _np_dtype(vi)
        if arr.dtype != dtype:
            raise ValueError(f"input {vi.name!r} has dtype {arr.dtype}, the model expects {dtype}")
        dims = _dims(vi)
        if dims is not None:
            ok = len(dims) == arr.ndim and all(not isinstance(d, int) or d == s for d, s in zip(dims, arr.shape))
            if not ok:
                want = tuple(d if d is not None else "?" for d in dims)
                raise ValueError(f"input {vi.name!r} has shape {arr.shape}, the model expects {want}")
        feeds[vi.name] = arr
    return feeds


def _subgraph_inputs(node: onnx.NodeProto) -> set[str]:
    """Names a node's subgraphs (If/Loop/Scan bodies) read from the outer scope."""
    names: set[str] = set()
    for attr in node.attribute:
        graphs = list(attr.graphs) + ([attr.g] if attr.HasField("g") else [])
        for g in graphs:
            for n in g.node:
                names.update(n.input)
                names.update(_subgraph_inputs(n))
    return names


def topological_nodes(graph: onnx.GraphProto) -> list[onnx.NodeProto]:
    """Nodes in a topological order, keeping the file order among ready nodes."""
    producer = {out: i for i, node in enumerate(graph.node) for out in node.output if out}
    deps = []
    users = collections.defaultdict(list)
    for i, node in enumerate(graph.node):
        srcs = {producer[n] for n in set(node.input) | _subgraph_inputs(node) if n in producer and producer[n] != i}
        deps.append(len(srcs))
        for s in srcs:
            users[s].append(i)
    ready = [i for i, d in enumerate(deps) if d == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for u in users[i]:
            deps[u] -= 1
            if deps[u] == 0:
                heapq.heappush(ready, u)
    if len(order) != len(graph.node):
        raise ValueError("ONNX graph has a cycle")
    return [graph.node[i] for i in order]


def _expose_intermediates(model: onnx.ModelProto) -> list[str]:
    """Add every typed node output as a graph output; return node outputs in topological order."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception as exc:  # inference is best effort; ORT will still check the model
        logger.warning("ONNX shape inference failed (%s); only typed tensors are exposed", exc)
        inferred = model
    g = inferred.graph
    types = {vi.name: vi for vi in list(g.value_info) + list(g.output) + list(g.input)}
    existing = {o.name for o in model.graph.output}

    order = []
    for node in topological_nodes(model.graph):
        for name in node.output:
            if not name:  # omitted optional output
                continue
            if name not in existing:
                vi = types.get(name)
                if vi is None or not vi.type.HasField("tensor_type") or vi.type.tensor_type.elem_type == 0:
                    logger.warning("skipping %r (output of %s node %r): its type cannot be inferred",
                                   name, node.op_type, node.name)
                    continue
                model.graph.output.append(vi)
                existing.add(name)
            order.append(name)
    return order


def run_reference(
    model: str | os.PathLike | onnx.ModelProto,
    inputs: Mapping[str, np.ndarray],
    all_tensors: bool = True,
    name: str = "",
) -> dict[str, np.ndarray]:
    """Run ``model`` in onnxruntime (CPU, no graph optimizations).

    Returns the inputs, then every node output in topological order (when
    ``all_tensors``), then any remaining graph outputs, keyed by ONNX name.
    Raises ValueError naming the input when one is missing, unknown, or has
    the wrong dtype or shape, and FrontendError (naming ``name``, else the
    file) when onnxruntime cannot run the model.
    """
    name = name or (str(model) if not isinstance(model, onnx.ModelProto) else "")
    model = _load(model)
    feeds = _check_inputs(model, inputs)
    graph_outputs = [o.name for o in model.graph.output]
    if all_tensors:
        order = _expose_intermediates(model)
        order += [n for n in graph_outputs if n not in order]
    else:
        order = graph_outputs

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 4  # failures are raised below, not logged too
    fetch = [n for n in order if n not in feeds]
    try:
        session = ort.InferenceSession(model.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
        values = session.run(fetch, feeds)
    except Exception as e:  # onnxruntime raises its own unrelated classes
        lines = [ln for ln in str(e).splitlines() if ln.strip()]
        raise FrontendError("onnxruntime cannot run the model: "
                            + (lines[0] if lines else type(e).__name__),
                            model=name or model.graph.name) from None

    result: dict[str, np.ndarray] = dict(feeds)
    result.update(zip(fetch, values))
    logger.debug("reference run produced %d tensors", len(result))
    return result


def make_test_inputs(
    model: str | os.PathLike | onnx.ModelProto,
    seed: int = 0,
    int_ranges: Mapping[str, tuple[int, int]] | None = None,
    dim_values: Mapping[str, int] | None = None,
) -> dict[str, np.ndarray]:
    """Random inputs for the model's graph inputs, deterministic in ``seed``.

    Floats are standard normal.  Integer inputs (typically indices) are
    uniform in ``int_ranges[name] = (low, high)`` (high exclusive), default
    ``DEFAULT_INT_RANGE``.  Symbolic dims take ``dim_values[dim_name]``,
    default 1.
    """
    model = _load(model)
    int_ranges = dict(int_ranges or {})
    dim_values = dict(dim_values or {})
    rng = np.random.default_rng(seed)
    out = {}
    for vi in graph_inputs(model):
        dtype = _np_dtype(vi)
        dims = _dims(vi)
        if dims is None:
            raise ValueError(f"input {vi.name!r} has unknown rank; cannot make a test input")
        shape = []
        for d in dims:
            if isinstance(d, int) and d > 0:
                shape.append(d)
            else:
                shape.append(dim_values.get(d, 1) if isinstance(d, str) else 1)
                logger.info("input %r: dynamic dim %r set to %d", vi.name, d, shape[-1])
        if dtype.kind == "f":
            arr = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind in "iu":
            low, high = int_ranges.get(vi.name, DEFAULT_INT_RANGE)
            if high <= low:
                raise ValueError(f"input {vi.name!r}: empty integer range [{low}, {high})")
            arr = rng.integers(low, high, size=shape).astype(dtype)
        elif dtype.kind == "b":
            arr = rng.random(shape) < 0.5
        else:
            raise ValueError(f"input {vi.name!r}: cannot make random data of dtype {dtype}")
        out[vi.name] = arr
    unused = set(int_ranges) - out.keys()
    if unused:
        raise ValueError(f"int_ranges names unknown inputs: {sorted(unused)}")
    return out
