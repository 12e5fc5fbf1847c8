"""The one Top-building layer that every frontend (ONNX, FX) calls.

A frontend names each tensor and knows the shapes of some of them; the
builder turns a name into the op's result type (ranked when the shape is
known, unranked otherwise, for `top-shape-infer` to fill in) and its
location (the tensor name, which every later stage keeps so dumps line up).
Helper ops of a one-to-many mapping are named `<out>_<suffix>`.

Weights are float32 arrays kept in `weights` (in memory) and referenced by
`top.Weight` ops named by their key; `write_weights` stores them where
the passes read them. Every value Top carries is float32 (integer indices and booleans
included), so frontends convert data at the boundary.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .. import compiler
from ..mlir import ir
from ..mlir.dialects import func, top

BINARY = {"add": top.AddOp, "sub": top.SubOp, "mul": top.MulOp,
          "div": top.DivOp, "max": top.MaxOp, "min": top.MinOp}
UNARY = {"relu": top.ReluOp, "sigmoid": top.SigmoidOp, "tanh": top.TanhOp,
         "erf": top.ErfOp, "exp": top.ExpOp, "log": top.LogOp,
         "sqrt": top.SqrtOp, "rsqrt": top.RsqrtOp, "abs": top.AbsOp,
         "silu": top.SiLUOp, "hardswish": top.HardSwishOp}
REDUCE_MODES = ("sum", "mean", "max", "min")
F32_MAX = float(np.finfo(np.float32).max)

log = logging.getLogger(__name__)


def write_weights(module: ir.Module, weights: dict[str, np.ndarray], weight_file) -> None:
    """Writes `weights` to an npz and points the module at it."""
    np.savez(weight_file, **weights)
    with module.context:
        module.operation.attributes[compiler.WEIGHT_FILE_ATTR] = \
            ir.StringAttr.get(str(weight_file))


def save_top(module: ir.Module, weights: dict[str, np.ndarray], directory, name: str,
             mlir=None) -> Path:
    """The import stage's files: `<name>_top_weights.npz`, `<name>_origin.mlir`
    (as imported) and the cleaned-up top.mlir (`mlir`, default
    `<name>.mlir`), whose weight file holds exactly what it uses."""
    from ..transform import TOP_PIPELINE  # transform imports the frontends

    directory = Path(directory)
    mlir = Path(mlir) if mlir else directory / f"{name}.mlir"
    weight_file = directory / f"{name}_top_weights.npz"
    write_weights(module, weights, weight_file)
    with module.context:
        compiler.save_module(module, directory / f"{name}_origin.mlir")
        compiler.run_pipeline(module, TOP_PIPELINE)
        # Canonicalization may make new weights (BatchNorm folded into Conv).
        compiler.save_weights(module, weight_file)
        compiler.save_module(module, mlir)
    return mlir


class TopBuilder:
    """Builds one Top module in `ctx`; see the module doc."""

    def __init__(self, ctx: ir.Context):
        self.ctx = ctx
        self.shapes: dict[str, list[int]] = {}
        self.weights: dict[str, np.ndarray] = {}
        self._weight_values: dict[str, ir.Value] = {}

    # -- names, types, constants -------------------------------------------

    def type_of(self, name: str | None) -> ir.Type:
        f32 = ir.F32Type.get()
        if name and name in self.shapes:
            return ir.RankedTensorType.get(list(self.shapes[name]), f32)
        return ir.UnrankedTensorType.get(f32)

    def loc(self, name: str) -> ir.Location:
        return ir.Location.name(name)

    def none(self) -> ir.Value:
        return top.NoneOp(ir.NoneType.get()).result

    def weight(self, name: str, array) -> ir.Value:
        """A top.Weight named `name` holding `array` (as float32); one op per
        name, so a second call returns the first one's value."""
        if name in self._weight_values:
            return self._weight_values[name]
        # np.array, not np.ascontiguousarray: that makes a 0-d array 1-d.
        array = np.array(array, dtype=np.float32, order="C")
        self.weights[name] = array
        t = ir.RankedTensorType.get(list(array.shape), ir.F32Type.get())
        v = top.WeightOp(t, loc=self.loc(name)).result
        self._weight_values[name] = v
        return v

    def scalar(self, name: str, value: float) -> ir.Value:
        return self.weight(name, np.array(value, np.float32))

    # -- module skeleton ---------------------------------------------------

    def build_module(self, module_name: str, inputs: Sequence[str],
                     body: Callable[[list[ir.Value]], list[ir.Value]]) -> ir.Module:
        """A module whose `main` takes one argument per name of `inputs`
        (each marked by a top.Input of that name) and returns what `body`
        returns, given those inputs' values."""
        with self.ctx, ir.Location.unknown():
            module = ir.Module.create()
            module.operation.attributes["module.name"] = ir.StringAttr.get(module_name)
            arg_types = [self.type_of(n) for n in inputs]
            with ir.InsertionPoint(module.body):
                fn = func.FuncOp("main", ir.FunctionType.get(arg_types, []))
                block = fn.add_entry_block()
            with ir.InsertionPoint(block):
                args = [top.InputOp(self.type_of(n), a, loc=self.loc(n)).result
                        for n, a in zip(inputs, block.arguments)]
                results = body(args)
                func.ReturnOp(results)
            fn.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(arg_types, [r.type for r in results]))
        return module

    # -- ops: each named `out`, typed from its shape when known ------------

    def conv(self, out, x, w, bias, *, kernel, strides, pads, dilations, group=1):
        return top.ConvOp(self.type_of(out), x, w, bias, kernel_shape=list(kernel),
                          strides=list(strides), pads=list(pads),
                          dilations=list(dilations), group=group,
                          loc=self.loc(out)).result

    def deconv(self, out, x, w, bias, *, kernel, strides, pads, dilations,
               output_padding, group=1):
        return top.DeconvOp(self.type_of(out), x, w, bias, kernel_shape=list(kernel),
                            strides=list(strides), pads=list(pads),
                            dilations=list(dilations), output_padding=list(output_padding),
                            group=group, loc=self.loc(out)).result

    def batch_norm(self, out, x, scale, bias, mean, var, *, epsilon):
        return top.BatchNormOp(self.type_of(out), x, scale, bias, mean, var,
                               epsilon=float(epsilon), loc=self.loc(out)).result

    def binary(self, kind: str, out, lhs, rhs):
        return BINARY[kind](self.type_of(out), lhs, rhs, loc=self.loc(out)).result

    def fold(self, kind: str, out, values: Sequence[ir.Value]):
        """`kind` applied left to right; the last op is named `out`, the
        others `out_1`, `out_2`, ...; one value is returned as is."""
        acc = values[0]
        for i, v in enumerate(values[1:], start=1):
            acc = self.binary(kind, out if i == len(values) - 1 else f"{out}_{i}", acc, v)
        return acc

    def unary(self, kind: str, out, x):
        return UNARY[kind](self.type_of(out), x, loc=self.loc(out)).result

    def leaky_relu(self, out, x, alpha):
        return top.LeakyReluOp(self.type_of(out), x, alpha=float(alpha),
                               loc=self.loc(out)).result

    def hard_sigmoid(self, out, x, alpha, beta):
        return top.HardSigmoidOp(self.type_of(out), x, alpha=float(alpha),
                                 beta=float(beta), loc=self.loc(out)).result

    def gelu(self, out, x, approximate="none"):
        return top.GELUOp(self.type_of(out), x, approximate=approximate,
                          loc=self.loc(out)).result

    def pow(self, out, x, exponent):
        return top.PowOp(self.type_of(out), x, exponent=float(exponent),
                         loc=self.loc(out)).result

    def cast(self, out, x, to: str):
        return top.CastOp(self.type_of(out), x, to=to, loc=self.loc(out)).result

    def clip(self, out, x, lo=-np.inf, hi=np.inf):
        if lo == 0.0:  # ReLU / ReLU6: fuses into the producer
            return top.ReluOp(self.type_of(out), x,
                              relu_limit=float(hi) if np.isfinite(hi) else -1.0,
                              loc=self.loc(out)).result
        return top.ClipOp(self.type_of(out), x, min=float(lo), max=float(hi),
                          loc=self.loc(out)).result

    def neg(self, out, x):
        return self.binary("mul", out, x, self.scalar(f"{out}_neg_one", -1.0))

    def reciprocal(self, out, x):
        return self.binary("div", out, self.scalar(f"{out}_one", 1.0), x)

    # -- masks: a bool is 0.0 or 1.0, so comparisons and selects are
    # arithmetic on existing ops.

    def positive(self, out, d, integral=False):
        """1.0 where d > 0, else 0.0. An integer-valued d is clip(d, 0, 1);
        a float d is scaled first, d * F32_MAX >= 1 for every normal d > 0
        (the sign of a float difference a - b is exact, so d = a - b compares
        a and b; only subnormal differences, which the chip flushes, are lost)."""
        if not integral:
            d = self.binary("mul", f"{out}_saturate", d, self.scalar(f"{out}_f32_max", F32_MAX))
        return self.clip(out, d, 0.0, 1.0)

    def logical_not(self, out, c):
        return self.binary("sub", out, self.scalar(f"{out}_one", 1.0), c)

    def select_branch(self, name, value: Callable[[], ir.Value], const=None):
        """A branch of `select`: None for a constant zero; a constant with
        infinities (the -inf of additive attention masks) as a weight with the
        float32 limits instead, which give the same softmax; else `value()`."""
        if const is None:
            return value()
        c = np.asarray(const, np.float32)
        if not np.any(c):
            return None
        if np.all(np.isfinite(c)):
            return value()
        log.info("infinite constant '%s' of a select becomes +-%g", name, F32_MAX)
        return self.weight(f"{name}_finite", np.clip(c, -F32_MAX, F32_MAX))

    def select(self, out, c, x, y):
        """c * x + (1 - c) * y for a 0/1 mask c, exact for finite x and y;
        x or y None stands for a constant zero."""
        if x is None and y is None:
            return self.binary("mul", out, c, self.scalar(f"{out}_zero", 0.0))
        if y is None:
            return self.binary("mul", out, c, x)
        not_c = self.logical_not(f"{out}_not_cond", c)
        if x is None:
            return self.binary("mul", out, not_c, y)
        return self.binary("add", out, self.binary("mul", f"{out}_x", c, x),
                           self.binary("mul", f"{out}_y", not_c, y))

    def prelu(self, out, x, slope):
        """max(x, 0) + slope * min(x, 0): exact, since one term is zero."""
        pos = self.unary("relu", f"{out}_pos", x)
        neg = self.binary("min", f"{out}_neg", x, self.scalar(f"{out}_zero", 0.0))
        neg = self.binary("mul", f"{out}_neg_scaled", neg, slope)
        return self.binary("add", out, pos, neg)

    def matmul(self, out, a, b, bias=None, do_relu=False):
        return top.MatMulOp(self.type_of(out), a, b, self.none() if bias is None else bias,
                            do_relu=do_relu, loc=self.loc(out)).result

    def reshape(self, out, x, shape):
        return top.ReshapeOp(self.type_of(out), x, shape=[int(d) for d in shape],
                             loc=self.loc(out)).result

    def permute(self, out, x, order):
        return top.PermuteOp(self.type_of(out), x, order=[int(d) for d in order],
                             loc=self.loc(out)).result

    def expand(self, out, x, in_shape, out_shape):
        """Broadcast `x` of `in_shape` to `out_shape` (numpy rules)."""
        aligned = [1] * (len(out_shape) - len(in_shape)) + list(in_shape)
        if aligned == list(out_shape):
            if list(in_shape) == list(out_shape):
                return x
            return self.reshape(out, x, out_shape)
        # x * 1 is exact; the ones span only the dims the broadcast adds.
        ones = [o if a == 1 else 1 for a, o in zip(aligned, out_shape)]
        return self.binary("mul", out, x, self.weight(f"{out}_ones", np.ones(ones, np.float32)))

    def softmax(self, out, x, axis):
        return top.SoftmaxOp(self.type_of(out), x, axis=int(axis), loc=self.loc(out)).result

    def layer_norm(self, out, x, weight=None, bias=None, *, axis, epsilon):
        return top.LayerNormOp(self.type_of(out), x,
                               self.none() if weight is None else weight,
                               self.none() if bias is None else bias,
                               axis=int(axis), epsilon=float(epsilon),
                               loc=self.loc(out)).result

    def global_avg_pool(self, out, x):
        return top.GlobalAvgPoolOp(self.type_of(out), x, loc=self.loc(out)).result

    def pool(self, kind: str, out, x, *, kernel, strides, pads, ceil_mode=False,
             count_include_pad=False):
        """`kind` "max" or "avg"; pads are begins then ends."""
        common = dict(kernel_shape=list(kernel), strides=list(strides), pads=list(pads),
                      ceil_mode=bool(ceil_mode), loc=self.loc(out))
        if kind == "max":
            return top.MaxPoolOp(self.type_of(out), x, **common).result
        return top.AvgPoolOp(self.type_of(out), x, count_include_pad=bool(count_include_pad),
                             **common).result

    def concat(self, out, values, axis):
        return top.ConcatOp(self.type_of(out), list(values), axis=int(axis),
                            loc=self.loc(out)).result

    def slice(self, out, x, *, starts, ends, axes, steps):
        return top.SliceOp(self.type_of(out), x, starts=[int(v) for v in starts],
                           ends=[int(v) for v in ends], axes=[int(v) for v in axes],
                           steps=[int(v) for v in steps], loc=self.loc(out)).result

    def gather(self, out, x, indices, axis):
        return top.GatherOp(self.type_of(out), x, indices, axis=int(axis),
                            loc=self.loc(out)).result

    def pad(self, out, x, pads, mode="constant", value=0.0):
        return top.PadOp(self.type_of(out), x, pads=[int(p) for p in pads], mode=mode,
                         value=float(value), loc=self.loc(out)).result

    def reduce(self, out, x, mode: str, axes, keepdims=True):
        return top.ReduceOp(self.type_of(out), x, mode=mode, axes=[int(a) for a in axes],
                            keepdims=bool(keepdims), loc=self.loc(out)).result

    def upsample(self, out, x, scale_h, scale_w):
        return top.UpsampleOp(self.type_of(out), x, scale_h=int(scale_h),
                              scale_w=int(scale_w), loc=self.loc(out)).result

    def interp(self, out, x, *, mode, coord_mode, nearest_mode, target_h, target_w,
               scale_h, scale_w):
        return top.InterpOp(self.type_of(out), x, mode=mode, coord_mode=coord_mode,
                            nearest_mode=nearest_mode, target_h=int(target_h),
                            target_w=int(target_w), scale_h=float(scale_h),
                            scale_w=float(scale_w), loc=self.loc(out)).result
