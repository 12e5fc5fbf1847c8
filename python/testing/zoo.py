"""A model zoo made by code: small, deterministic ONNX models for end-to-end tests.

Two kinds of entries:

* torch models (plain ``torch.nn``, seeded init, no downloads) exported with
  the legacy TorchScript exporter in eval mode.  Constant folding is off so
  BatchNormalization nodes survive (the exporter would otherwise fold them into
  the preceding Conv), and each spec lists ops its export must contain.
* ``onnx.helper`` graphs for ops torch does not emit easily (Pad, Slice with
  negative axes/steps, Gather, Resize, reductions, broadcasting math); these
  are built for a given opset, with pinned opset-13 and opset-21 variants.

    >>> path = export("cnn_bn", "/tmp/zoo")          # -> /tmp/zoo/cnn_bn.onnx
"""

from __future__ import annotations

import dataclasses
import logging
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

logger = logging.getLogger(__name__)

__all__ = ["LARGE", "ModelSpec", "ZOO", "export", "export_all"]

DEFAULT_OPSET = 17


@dataclass(frozen=True)
class ModelSpec:
    """One zoo entry.

    ``inputs`` maps graph input name to shape (float32 unless listed in
    ``int_ranges``, which gives the valid [low, high) range of int64 index
    inputs).  Exactly one of ``make_module`` (torch) and ``make_onnx``
    (``onnx.helper``, takes the opset) is set.
    """

    name: str
    inputs: dict[str, tuple[int, ...]]
    outputs: tuple[str, ...]
    description: str
    opset: int = DEFAULT_OPSET
    make_module: Callable[[int], "object"] | None = None  # seed -> torch.nn.Module in eval mode
    make_onnx: Callable[[int], onnx.ModelProto] | None = None  # opset -> model
    int_ranges: dict[str, tuple[int, int]] = field(default_factory=dict)
    required_ops: tuple[str, ...] = ()  # op types the exported graph must keep

    @property
    def is_torch(self) -> bool:
        return self.make_module is not None

    def export(self, out_dir: str | Path, opset: int | None = None) -> Path:
        return export(self.name, out_dir, opset)


# --------------------------------------------------------------------------- torch models


def _torch():
    import torch  # imported lazily: the helper models do not need torch

    return torch


def _build_torch_models():
    torch = _torch()
    nn = torch.nn

    def conv_bn(cin, cout, k, stride=1, groups=1, act=nn.ReLU):
        layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
        if act is not None:
            layers.append(act())
        return nn.Sequential(*layers)

    class CnnBn(nn.Module):
        """Conv+BN+ReLU stem, MaxPool, one residual block, GAP, Flatten, Linear."""

        def __init__(self):
            super().__init__()
            self.stem = conv_bn(3, 16, 3)
            self.pool = nn.MaxPool2d(2)
            self.block = nn.Sequential(conv_bn(16, 16, 3), conv_bn(16, 16, 3, act=None))
            self.relu = nn.ReLU()
            self.down = conv_bn(16, 32, 3, stride=2)
            self.gap = nn.AdaptiveAvgPool2d(1)
            self.flatten = nn.Flatten()
            self.fc = nn.Linear(32, 10)

        def forward(self, x):
            x = self.pool(self.stem(x))
            x = self.relu(self.block(x) + x)
            return self.fc(self.flatten(self.gap(self.down(x))))

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = conv_bn(cin, cout, 3, stride)
            self.conv2 = conv_bn(cout, cout, 3, act=None)
            self.downsample = conv_bn(cin, cout, 1, stride, act=None) if stride != 1 or cin != cout else None
            self.relu = nn.ReLU()

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            return self.relu(self.conv2(self.conv1(x)) + identity)

    class ResNet18(nn.Module):
        """ResNet-18 topology (2-2-2-2 BasicBlocks) with widths 16-32-64-128."""

        def __init__(self, widths=(16, 32, 64, 128), num_classes=10):
            super().__init__()
            self.stem = nn.Sequential(conv_bn(3, widths[0], 7, stride=2), nn.MaxPool2d(3, 2, 1))
            blocks, cin = [], widths[0]
            for i, w in enumerate(widths):
                stride = 1 if i == 0 else 2
                blocks += [BasicBlock(cin, w, stride), BasicBlock(w, w, 1)]
                cin = w
            self.layers = nn.Sequential(*blocks)
            self.gap = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(cin, num_classes)

        def forward(self, x):
            x = self.gap(self.layers(self.stem(x)))
            return self.fc(torch.flatten(x, 1))

    class InvertedResidual(nn.Module):
        def __init__(self, cin, cout, stride, expand):
            super().__init__()
            hidden = cin * expand
            layers = [conv_bn(cin, hidden, 1, act=nn.ReLU6)] if expand != 1 else []
            layers += [conv_bn(hidden, hidden, 3, stride, groups=hidden, act=nn.ReLU6),  # depthwise
                       conv_bn(hidden, cout, 1, act=None)]  # linear bottleneck
            self.body = nn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            y = self.body(x)
            return x + y if self.residual else y

    class MobileNetV2(nn.Module):
        """MobileNetV2-style net; (expand, channels, repeats, stride) per stage."""

        config = ((1, 8, 1, 1), (6, 12, 2, 2), (6, 16, 3, 2), (6, 24, 1, 1))

        def __init__(self, num_classes=10):
            super().__init__()
            layers, cin = [conv_bn(3, 16, 3, stride=2, act=nn.ReLU6)], 16
            for t, c, n, s in self.config:
                for i in range(n):
                    layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                    cin = c
            layers.append(conv_bn(cin, 64, 1, act=nn.ReLU6))
            self.features = nn.Sequential(*layers)
            self.gap = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(64, num_classes)

        def forward(self, x):
            return self.fc(torch.flatten(self.gap(self.features(x)), 1))

    class BertLayer(nn.Module):
        """Post-LN BERT encoder layer: self-attention + FFN with erf GELU."""

        def __init__(self, hidden=64, heads=4, ffn=128):
            super().__init__()
            self.heads, self.head_dim = heads, hidden // heads
            self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))
            self.attn_out = nn.Linear(hidden, hidden)
            self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
            self.ffn_in = nn.Linear(hidden, ffn)
            self.gelu = nn.GELU()  # erf form
            self.ffn_out = nn.Linear(ffn, hidden)
            self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

        def split_heads(self, x):
            b, s, _ = x.shape
            return x.reshape(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

        def attend(self, x):
            """Self-attention, output projection, residual and LayerNorm."""
            b, s, h = x.shape
            q, k, v = (self.split_heads(f(x)) for f in (self.query, self.key, self.value))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
            ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
            ctx = ctx.permute(0, 2, 1, 3).reshape(b, s, h)
            return self.ln1(x + self.attn_out(ctx))

        def forward(self, x):
            x = self.attend(x)
            return self.ln2(x + self.ffn_out(self.gelu(self.ffn_in(x))))

    class AttentionBlock(BertLayer):
        """The attention half of a BERT layer (BertAttention)."""

        def forward(self, x):
            return self.attend(x)

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.Sigmoid(),
                                     nn.Linear(64, 16), nn.Tanh())

        def forward(self, x):
            return self.net(x)

    return {"cnn_bn": CnnBn, "resnet18": ResNet18, "mobilenetv2": MobileNetV2, "bert_layer": BertLayer, "attention": AttentionBlock,
            "mlp": Mlp}


def _make_torch(kind: str, **sizes) -> Callable[[int], object]:
    def make(seed: int = 0):
        torch = _torch()
        with torch.random.fork_rng(devices=[]):  # deterministic without disturbing the caller's RNG
            torch.manual_seed(seed)
            module = _build_torch_models()[kind](**sizes)
            # Non-trivial normalization parameters, so BN/LN are not near-identity.
            for m in module.modules():
                if isinstance(m, (torch.nn.BatchNorm2d, torch.nn.LayerNorm)):
                    with torch.no_grad():
                        m.weight.uniform_(0.5, 1.5)
                        m.bias.normal_(0.0, 0.1)
                        if isinstance(m, torch.nn.BatchNorm2d):
                            m.running_mean.normal_(0.0, 0.1)
                            m.running_var.uniform_(0.5, 1.5)
        return module.eval()

    return make


def _export_torch(spec: ModelSpec, path: Path, opset: int) -> None:
    torch = _torch()
    module = spec.make_module(0)
    rng = np.random.default_rng(0)
    args = tuple(torch.from_numpy(rng.standard_normal(s).astype(np.float32)) for s in spec.inputs.values())
    with warnings.catch_warnings():
        # The TorchScript exporter is deprecated but is the one that works without onnxscript.
        warnings.filterwarnings("ignore", message=r".*legacy TorchScript-based ONNX export", category=DeprecationWarning)
        warnings.filterwarnings("ignore", message=r"The feature will be removed", category=DeprecationWarning)
        with torch.no_grad():
            torch.onnx.export(module, args, str(path), dynamo=False, do_constant_folding=False,
                              training=torch.onnx.TrainingMode.EVAL, opset_version=opset,
                              input_names=list(spec.inputs), output_names=list(spec.outputs))


# --------------------------------------------------------------------------- onnx.helper models


def _const(name: str, value, dtype=np.int64) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def _reduce(op: str, x: str, out: str, axes: list[int], opset: int, inits: list) -> onnx.NodeProto:
    # ReduceMean/ReduceMax take axes as an attribute before opset 18 and as an input since.
    if opset < 18:
        return helper.make_node(op, [x], [out], axes=axes, keepdims=1, name=out)
    inits.append(_const(f"{out}_axes", axes))
    return helper.make_node(op, [x, f"{out}_axes"], [out], keepdims=1, name=out)


def _model(graph: onnx.GraphProto, opset: int) -> onnx.ModelProto:
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="tpuc.testing.zoo",
                              ir_version=helper.find_min_ir_version_for(opsets))
    onnx.checker.check_model(model, full_check=True)
    return model


def build_ops_shape(opset: int) -> onnx.ModelProto:
    """Pad -> Slice(negative axes/steps) -> Gather(index input) -> Resize nearest x2 -> reductions -> Concat.

    x: float32[1,4,8,8], idx: int64[3] in [0, 4)  ->  y: float32[1,3,8,2]
    """
    inits = [
        _const("pads", [0, 0, 1, 2, 0, 0, 1, 2]),  # H +1/+1, W +2/+2
        _const("pad_value", 0.5, np.float32),
        _const("starts", [-1, -2]),
        _const("ends", [-100, 0]),  # W reversed entirely; H rows 8,6,4,2
        _const("axes", [-1, -2]),
        _const("steps", [-1, -2]),
        _const("scales", [1.0, 1.0, 2.0, 2.0], np.float32),
    ]
    nodes = [
        helper.make_node("Pad", ["x", "pads", "pad_value"], ["padded"], mode="constant", name="pad"),
        helper.make_node("Slice", ["padded", "starts", "ends", "axes", "steps"], ["sliced"], name="slice"),
        helper.make_node("Gather", ["sliced", "idx"], ["gathered"], axis=1, name="gather"),
        helper.make_node("Resize", ["gathered", "", "scales"], ["resized"], mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode="floor", name="resize"),
        _reduce("ReduceMean", "resized", "mean_hw", [2, 3], opset, inits),
        _reduce("ReduceMax", "resized", "max_w", [-1], opset, inits),
        helper.make_node("Sub", ["max_w", "mean_hw"], ["centered"], name="centered"),  # broadcast over H
        helper.make_node("Concat", ["max_w", "centered"], ["y"], axis=-1, name="concat"),
    ]
    graph = helper.make_graph(
        nodes, f"ops_shape_op{opset}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8]),
         helper.make_tensor_value_info("idx", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 8, 2])],
        initializer=inits,
    )
    return _model(graph, opset)


def build_ops_math(opset: int) -> onnx.ModelProto:
    """Broadcasting Div/Sub/Max/Min, Pow, Sqrt, Exp, Log and Softmax(axis=-1).

    a: float32[2,3,4], b: float32[3,1]  ->  y: float32[2,3,4] (softmax), m: float32[2,3,4]
    """
    inits = [_const("half", 0.5, np.float32), _const("one", 1.0, np.float32),
             _const("exponent", 1.5, np.float32), _const("cap", [1.5], np.float32)]
    n = helper.make_node
    nodes = [
        n("Abs", ["a"], ["abs_a"], name="abs_a"),
        n("Add", ["abs_a", "half"], ["pos"], name="pos"),  # > 0, valid for Sqrt/Log/Pow
        n("Abs", ["b"], ["abs_b"], name="abs_b"),
        n("Add", ["abs_b", "one"], ["den"], name="den"),
        n("Div", ["pos", "den"], ["ratio"], name="ratio"),  # [2,3,4] / [3,1]
        n("Sub", ["a", "b"], ["diff"], name="diff"),
        n("Max", ["ratio", "diff"], ["m"], name="max"),
        n("Min", ["ratio", "diff", "cap"], ["lo"], name="min"),  # three-way broadcast
        n("Pow", ["pos", "exponent"], ["pw"], name="pow"),
        n("Sqrt", ["pos"], ["sq"], name="sqrt"),
        n("Log", ["pos"], ["lg"], name="log"),
        n("Exp", ["lo"], ["ex"], name="exp"),
        n("Mul", ["pw", "sq"], ["prod"], name="prod"),
        n("Sub", ["m", "prod"], ["t1"], name="t1"),
        n("Add", ["t1", "lg"], ["t2"], name="t2"),
        n("Add", ["t2", "ex"], ["logits"], name="logits"),
        n("Softmax", ["logits"], ["y"], axis=-1, name="softmax"),
    ]
    graph = helper.make_graph(
        nodes, f"ops_math_op{opset}",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3, 4]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [3, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4]),
         helper.make_tensor_value_info("m", TensorProto.FLOAT, [2, 3, 4])],
        initializer=inits,
    )
    return _model(graph, opset)


# --------------------------------------------------------------------------- registry


def _torch_spec(name, shape, description, required_ops=(), kind=None, **sizes):
    return ModelSpec(name, {"input": shape}, ("output",), description,
                     make_module=_make_torch(kind or name, **sizes), required_ops=required_ops)


def _helper_specs(base: str, builder, inputs, outputs, description, int_ranges=None):
    return [ModelSpec(f"{base}_op{op}", inputs, outputs, f"{description} (opset {op})", opset=op,
                      make_onnx=builder, int_ranges=dict(int_ranges or {})) for op in (13, 21)]


ZOO: dict[str, ModelSpec] = {
    s.name: s
    for s in [
        _torch_spec("cnn_bn", (1, 3, 32, 32), "small CNN: Conv+BN+ReLU, MaxPool, residual Add, GAP, Gemm",
                    ("Conv", "BatchNormalization", "Relu", "MaxPool", "Add", "GlobalAveragePool", "Flatten", "Gemm")),
        _torch_spec("resnet18", (1, 3, 64, 64), "ResNet-18 topology, widths 16-32-64-128",
                    ("Conv", "BatchNormalization", "MaxPool", "Add", "GlobalAveragePool", "Gemm")),
        _torch_spec("mobilenetv2", (1, 3, 64, 64), "MobileNetV2-style inverted residuals, depthwise conv, ReLU6",
                    ("Conv", "BatchNormalization", "Clip", "Add", "GlobalAveragePool", "Gemm")),
        _torch_spec("bert_layer", (1, 16, 64), "BERT encoder layer: hidden 64, 4 heads, FFN 128",
                    ("MatMul", "Reshape", "Transpose", "Softmax")),
        _torch_spec("mlp", (4, 32), "3-layer MLP with ReLU/Sigmoid/Tanh", ("Gemm", "Relu", "Sigmoid", "Tanh")),
        *_helper_specs("ops_shape", build_ops_shape, {"x": (1, 4, 8, 8), "idx": (3,)}, ("y",),
                       "Pad, Slice with negative axes/steps, Gather, Resize nearest, ReduceMean/Max, Concat",
                       int_ranges={"idx": (0, 4)}),
        *_helper_specs("ops_math", build_ops_math, {"a": (2, 3, 4), "b": (3, 1)}, ("y", "m"),
                       "broadcasting Div/Sub/Max/Min, Pow, Sqrt, Exp, Log, Softmax(-1)"),
    ]
}


# Models for benchmarks only: full-size ones (seconds on the cmodel, too
# slow for tests) and a small latency-bound one.
LARGE: dict[str, ModelSpec] = {
    s.name: s
    for s in [
        _torch_spec("resnet18_full", (1, 3, 224, 224), "ResNet-18, widths 64-128-256-512, 1000 classes",
                    kind="resnet18", widths=(64, 128, 256, 512), num_classes=1000),
        _torch_spec("bert_base_layer", (1, 128, 768), "BERT-base encoder layer: hidden 768, 12 heads, FFN 3072",
                    kind="bert_layer", hidden=768, heads=12, ffn=3072),
        _torch_spec("attention_block", (1, 12, 64), "BERT attention block: 12 tokens, hidden 64, 4 heads",
                    kind="attention", hidden=64, heads=4),
    ]
}


def export(name: str, out_dir: str | Path, opset: int | None = None,
           batch: int | None = None) -> Path:
    """Write zoo model ``name`` to ``out_dir`` and return the path.

    ``opset`` defaults to the entry's own (17 for the torch models, pinned for
    the ``_op13``/``_op21`` variants); a different opset is added to the file
    name, as is a ``batch`` (torch models: the inputs' first dim) other than
    the entry's.  Raises KeyError for an unknown name and RuntimeError when the
    export lost an op the entry requires (e.g. BatchNorm folded away).
    """
    spec = ZOO.get(name) or LARGE.get(name)
    if spec is None:
        raise KeyError(f"unknown zoo model {name!r}; known: {', '.join([*ZOO, *LARGE])}")
    opset = spec.opset if opset is None else opset
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / (f"{name}.onnx" if opset == spec.opset else f"{name}_opset{opset}.onnx")
    if batch is not None:
        if not spec.is_torch:
            raise ValueError(f"zoo model {name!r} is not a torch model: its batch is fixed")
        spec = dataclasses.replace(
            spec, inputs={k: (batch, *s[1:]) for k, s in spec.inputs.items()})
        path = path.with_name(f"{path.stem}_batch{batch}.onnx")
    if spec.is_torch:
        _export_torch(spec, path, opset)
    else:
        onnx.save(spec.make_onnx(opset), str(path))
    ops = {node.op_type for node in onnx.load(str(path), load_external_data=False).graph.node}
    missing = [op for op in spec.required_ops if op not in ops]
    if missing:
        raise RuntimeError(f"{path}: export of {name} lost required ops {missing}")
    logger.info("exported %s (opset %d) to %s", name, opset, path)
    return path


def export_all(out_dir: str | Path) -> dict[str, Path]:
    """Export every zoo model at its default opset."""
    return {name: export(name, out_dir) for name in ZOO}
