#ifndef TPUC_TPU_OPS
#define TPUC_TPU_OPS
include "tpuc/Dialect/Tpu/IR/TpuDialect.td"
include "tpuc/Dialect/Tpu/IR/TpuEnums.td"
include "tpuc/Interfaces/InferenceInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Dialect/Quant/IR/QuantBase.td"

// Element types the chip computes in. INT8 modes use quant.uniform types
// (scale and zero point live in the type); integer tensors carry indices.
def Tpu_Tensor : RankedTensorOf<[F32, F16, BF16, quant_QuantizedType, I8, UI8,
                                 I32]>;
def Tpu_TensorOrNone : AnyTypeOf<[Tpu_Tensor, NoneType]>;

// Tpu ops keep the Top op's location (the model's tensor name). Top.Input,
// top.Weight and top.None stay in Tpu modules as the graph's leaves.
class Tpu_ComputeOp<string mnemonic, list<Trait> traits = []> :
    Tpu_Op<mnemonic, !listconcat(traits, [Pure,
        DeclareOpInterfaceMethods<InferenceInterface>])>;

def Tpu_ConvOp : Tpu_ComputeOp<"Conv"> {
  let summary = "2-D convolution (a 1-D conv is lowered with height 1)";
  let description = [{
    NCHW input, OIHW filter (O x I/group x KH x KW), optional bias of O
    elements. `pads` = [top, left, bottom, right].

    INT8 (quantized input and result, per-channel quantized filter, i32
    bias): acc = sum(input * filter) + bias exactly in 32 bits, padded
    cells holding the input's zero point (real 0; the lowering folds
    zp * sum(filter) into the bias, so the border is exact), relu on acc, then
    result = requantize(acc, multiplier[c], shift[c], zero point) where
    `quant` is an i32 [O, 2] weight of (multiplier, shift) per channel
    (QuantMath.h, half away from zero).
  }];
  let arguments = (ins
    Tpu_Tensor:$input, Tpu_Tensor:$filter, Tpu_TensorOrNone:$bias,
    Optional<Tpu_Tensor>:$quant,
    I64ArrayAttr:$kernel_shape, I64ArrayAttr:$strides, I64ArrayAttr:$pads,
    I64ArrayAttr:$dilations,
    DefaultValuedAttr<I64Attr, "1">:$group,
    DefaultValuedAttr<BoolAttr, "false">:$do_relu,
    DefaultValuedAttr<F64Attr, "-1.0">:$relu_limit);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
}

def Tpu_MatMulOp : Tpu_ComputeOp<"MatMul"> {
  let summary = "batched matmul [..., M, K] x [..., K, N] (+ bias on N)";
  let description = [{
    INT8 (quantized operands, zero point 0 on `right`, i32 bias): acc =
    sum(input * right) + bias exactly in 32 bits (the lowering folds the
    input's zero point into the bias of a constant `right`; a run-time
    `right` needs a symmetric input), relu on acc, result = requantize(acc,
    multiplier, shift, zero point) with `quant` an i32 [1, 2] weight.
    With `right_transpose`, `right` is [..., N, K] and the op computes
    input x right^T (the matmul instruction's transposed right operand), so
    a transposed run-time operand (attention's keys) needs no Permute.
  }];
  let arguments = (ins Tpu_Tensor:$input, Tpu_Tensor:$right,
                   Tpu_TensorOrNone:$bias, Optional<Tpu_Tensor>:$quant,
                   DefaultValuedAttr<BoolAttr, "false">:$do_relu,
                   DefaultValuedAttr<BoolAttr, "false">:$right_transpose);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

class Tpu_BinaryOp<string mnemonic, string desc, list<Trait> traits = []> :
    Tpu_ComputeOp<mnemonic, traits> {
  let summary = desc # " with numpy broadcasting";
  let arguments = (ins Tpu_Tensor:$lhs, Tpu_Tensor:$rhs,
                   DefaultValuedAttr<BoolAttr, "false">:$do_relu);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
}

def Tpu_AddOp : Tpu_BinaryOp<"Add", "elementwise lhs + rhs", [Commutative]>;
def Tpu_SubOp : Tpu_BinaryOp<"Sub", "elementwise lhs - rhs">;
def Tpu_MulOp : Tpu_BinaryOp<"Mul", "elementwise lhs * rhs", [Commutative]>;
def Tpu_DivOp : Tpu_BinaryOp<"Div", "elementwise lhs / rhs">;
def Tpu_MaxOp : Tpu_BinaryOp<"Max", "elementwise max(lhs, rhs)", [Commutative]>;
def Tpu_MinOp : Tpu_BinaryOp<"Min", "elementwise min(lhs, rhs)", [Commutative]>;

def Tpu_ActiveOp : Tpu_ComputeOp<"Active"> {
  let summary = "elementwise function computed by the chip's function unit";
  let description = [{
    `mode` is one of relu, clip, sigmoid, tanh, gelu, gelu_tanh, silu, erf,
    abs, exp, log, sqrt, rsqrt, pow, leaky_relu, hard_sigmoid, hard_swish.
    relu uses `max` as its upper limit when it is given; clip clamps to
    [min, max]; pow raises to `exponent`; leaky_relu is x >= 0 ? x : alpha*x;
    hard_sigmoid is clamp(alpha*x + beta, 0, 1); hard_swish is
    x * hard_sigmoid(x) with alpha 1/6 and beta 1/2 (ONNX HardSwish).
    A mode's attributes are required and other modes must not carry them.
  }];
  let extraClassDeclaration = [{
    /// y[i] = the function of x[i] (f32), for the interpreter and for the
    /// INT8 lowering's tables.
    ::mlir::LogicalResult evaluate(const float *x, float *y, int64_t n);
  }];
  let arguments = (ins Tpu_Tensor:$input, StrAttr:$mode,
                   OptionalAttr<F64Attr>:$min, OptionalAttr<F64Attr>:$max,
                   OptionalAttr<F64Attr>:$exponent,
                   OptionalAttr<F64Attr>:$alpha, OptionalAttr<F64Attr>:$beta);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
}

def Tpu_LayerNormOp : Tpu_ComputeOp<"LayerNorm"> {
  let summary = "normalization over dims [axis, rank) with optional affine";
  let arguments = (ins Tpu_Tensor:$input, Tpu_TensorOrNone:$weight,
                   Tpu_TensorOrNone:$bias, I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
}

def Tpu_SoftmaxOp : Tpu_ComputeOp<"Softmax"> {
  let summary = "softmax along a non-negative axis";
  let description = [{
    softmax(input / divisor): a constant `divisor` (attention's scores /
    sqrt(head dim), fused by canonicalization; none means 1) divides the
    input in float32 before the max is taken.
  }];
  let arguments = (ins Tpu_Tensor:$input, I64Attr:$axis,
                   OptionalAttr<F64Attr>:$divisor);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

class Tpu_PoolOp<string mnemonic, string desc, dag extraArgs = (ins)> :
    Tpu_ComputeOp<mnemonic> {
  let summary = desc;
  let description = [{
    2-D pooling over NCHW (1-D is lowered with height 1). `pads` =
    [top, left, bottom, right] after ceil_mode has been folded into the
    end pads by the lowering. The output size is
    (in + pad_begin + pad_end - kernel) / stride + 1 (rounded down); every
    pad is smaller than its kernel, so each window covers input cells.
    Padded cells never win a max; an average divides by the number of
    input cells in the window, or with `count_include_pad` by the window
    clipped to the padded input.
  }];
  let arguments = !con((ins Tpu_Tensor:$input, I64ArrayAttr:$kernel_shape,
                        I64ArrayAttr:$strides, I64ArrayAttr:$pads),
                       extraArgs);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
}

def Tpu_MaxPoolOp : Tpu_PoolOp<"MaxPool", "max pooling">;
def Tpu_AvgPoolOp : Tpu_PoolOp<"AvgPool", "average pooling",
    (ins DefaultValuedAttr<BoolAttr, "false">:$count_include_pad)>;

def Tpu_ReduceOp : Tpu_ComputeOp<"Reduce"> {
  let summary = "reduction (sum, mean, max, min) over non-negative axes";
  let description = [{
    `axes` lists every reduced dim (non-empty, no repeats); with `keepdims`
    they stay as size 1, otherwise they are dropped.
  }];
  let arguments = (ins Tpu_Tensor:$input, StrAttr:$mode, I64ArrayAttr:$axes,
                   BoolAttr:$keepdims);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
}

def Tpu_ReshapeOp : Tpu_ComputeOp<"Reshape"> {
  let summary = "same elements, the result type's shape";
  let arguments = (ins Tpu_Tensor:$input);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Tpu_PermuteOp : Tpu_ComputeOp<"Permute"> {
  let summary = "transpose: output dim i is input dim order[i]";
  let arguments = (ins Tpu_Tensor:$input, I64ArrayAttr:$order);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Tpu_ConcatOp : Tpu_ComputeOp<"Concat"> {
  let summary = "concatenation along a non-negative axis";
  let arguments = (ins Variadic<Tpu_Tensor>:$inputs, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$do_relu);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
}

def Tpu_SliceOp : Tpu_ComputeOp<"Slice"> {
  let summary = "strided slice: per dim, a resolved start and step";
  let description = [{
    Output element i of dim d reads input element offsets[d] + i * steps[d]
    (steps may be negative); the output shape is the result type's.
  }];
  let arguments = (ins Tpu_Tensor:$input, I64ArrayAttr:$offsets,
                   I64ArrayAttr:$steps);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
}

def Tpu_GatherOp : Tpu_ComputeOp<"Gather"> {
  let summary = "take along axis by integer indices";
  let description = [{
    Output shape: input[:axis] + indices + input[axis+1:]. Indices are f32
    (integral values) or integers in [-dim, dim); as in ONNX, a negative
    index counts from the end. The lowering normalizes constant indices;
    run-time indices (an input or a computed tensor) are wrapped when the
    gather executes, and one outside the range is an interpreter (and
    cmodel) error.
  }];
  let arguments = (ins Tpu_Tensor:$input, Tpu_Tensor:$indices, I64Attr:$axis);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
}

def Tpu_PadOp : Tpu_ComputeOp<"Pad"> {
  let summary = "pad every dim (begins then ends) by constant, reflect or edge";
  let arguments = (ins Tpu_Tensor:$input, I64ArrayAttr:$pads, StrAttr:$mode,
                   F64Attr:$value);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
}

def Tpu_CastOp : Tpu_ComputeOp<"Cast"> {
  let summary = "element type conversion (and Top's value casts via `to`)";
  let arguments = (ins Tpu_Tensor:$input, StrAttr:$to);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
}

def Tpu_UpsampleOp : Tpu_ComputeOp<"Upsample"> {
  let summary = "nearest-neighbour upsampling of H and W by integer scales";
  let arguments = (ins Tpu_Tensor:$input, I64Attr:$scale_h, I64Attr:$scale_w);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
}

def Tpu_DeconvOp : Tpu_ComputeOp<"Deconv"> {
  let summary = "2-D transposed convolution (1-D is lowered with height 1)";
  let description = [{
    NCHW input, filter [IC, OC/group, KH, KW], optional bias of OC
    elements. Input pixel (h, w) lands on output (h*sh - top + kh*dh,
    w*sw - left + kw*dw); `pads` = [top, left, bottom, right] and the result
    type carries the output padding.
  }];
  let arguments = (ins Tpu_Tensor:$input, Tpu_Tensor:$filter,
                   Tpu_TensorOrNone:$bias, I64ArrayAttr:$kernel_shape,
                   I64ArrayAttr:$strides, I64ArrayAttr:$pads,
                   I64ArrayAttr:$dilations,
                   DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
}

def Tpu_InterpOp : Tpu_ComputeOp<"Interp"> {
  let summary = "separable resize of H and W: out = A_h x in x A_w^T";
  let description = [{
    Every NCHW plane is multiplied by `height_matrix` [OH, H] on the left
    and by the transpose of `width_matrix` [OW, W] on the right (H first).
    The lowering builds the matrices from top.Interp's mode and coordinate
    transform; each row holds one output's interpolation weights.
  }];
  let arguments = (ins Tpu_Tensor:$input, Tpu_Tensor:$height_matrix,
                   Tpu_Tensor:$width_matrix);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
}

def Tpu_QuantCastOp : Tpu_ComputeOp<"QuantCast"> {
  let summary = "conversion between float and quantized element types";
  let description = [{
    Changes only the element type, keeping values as the types define them.
    Quantize (float -> !quant.uniform<i8>): q = sat(round(f32(f32(x * inv) +
    zp))) with inv = f32(1 / scale), rounding half away from zero.
    Dequantize: y = f32(f32(q - zp) * f32(scale)), then rounded to the
    result's float type (nearest even). Float -> float: nearest even.
  }];
  let arguments = (ins Tpu_Tensor:$input);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Tpu_RequantOp : Tpu_ComputeOp<"Requant"> {
  let summary = "INT8 rescale from one quantized type to another";
  let description = [{
    result = requantize(input - zp_in, multiplier, shift, zp_out), with the
    multiplier and shift derived from the two scales (QuantParams.h).
  }];
  let arguments = (ins Tpu_Tensor:$input);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
}

def Tpu_LutOp : Tpu_ComputeOp<"Lut"> {
  let summary = "INT8 function by a 256-entry table";
  let description = [{
    result[i] = table[uint8(input[i])]: the lowering tabulates a function of
    the input's quantized values in the result's quantized type.
  }];
  let arguments = (ins Tpu_Tensor:$input, Tpu_Tensor:$table);
  let results = (outs Tpu_Tensor:$output);
  let hasVerifier = 1;
}
//===----------------------------------------------------------------------===//
// Layer groups
//===----------------------------------------------------------------------===//

def Tpu_GroupOp : Tpu_Op<"Group", [SingleBlock, NoRegionArguments,
    RecursiveMemoryEffects]> {
  let summary = "a layer group: ops computing on LMEM-resident tensors";
  let description = [{
    The ops of the body run as one unit on the chip: the group's inputs
    (values defined before it, read directly by the body's ops) and weights
    are loaded into local memory once, every op computes local memory to
    local memory, and only the values the `tpu.Yield` returns (those used
    after the group) are stored to DDR and become the group's results.
    Every body op must be a Tpu op that can run in a group (the backend
    decides: CodegenInterface::supportsLocal and the operand types); groups
    do not nest.

    The plan: `n_slices` > 1 runs an NCHW group as a loop over that many
    equal slices of the batch (N), which need no halo; `h_slices` > 1 runs
    it as a loop over that many slices of rows (H) (within each slice of
    the batch), recomputing the halo rows the windows need;
    `row_chunk` > 0 runs a group in the rows view (elementwise ops on
    tensors that are not NCHW) as a loop over chunks of that many rows per
    lane; `tile_epilogue` runs a group whose first op is a tpu.MatMul or
    tpu.Conv too big to hold whole, followed by a chain of elementwise ops
    on its result (an activation, a lookup table, a residual Add whose
    other operand is read tile by tile), as that op's own tiled code
    applying the chain to each output tile in local memory before its
    store, so only the chain's last result reaches DDR; a chain that
    closes with a second tpu.MatMul by a weight runs the pair fused over
    chunks of the hidden columns; a tpu.Conv may also follow a
    per-channel tpu.Conv (a folded BatchNorm and relu, its prologue) whose
    result only it reads, applying it to each input tile after the load,
    so the prologue's result never reaches DDR either. The default plan
    holds every tensor whole.

    ```mlir
    %r = tpu.Group -> (tensor<1x16x64x129xf32>) attributes {h_slices = 4 : i64} {
      %a = "tpu.Active"(%x) {mode = "abs"} : (...) -> tensor<1x16x64x129xf32>
      %b = "tpu.Active"(%a) {mode = "sigmoid"} : (...) -> tensor<1x16x64x129xf32>
      tpu.Yield %b : tensor<1x16x64x129xf32>
    }
    ```
  }];
  let arguments = (ins DefaultValuedAttr<I64Attr, "1">:$n_slices,
                       DefaultValuedAttr<I64Attr, "1">:$h_slices,
                       DefaultValuedAttr<I64Attr, "0">:$row_chunk,
                       DefaultValuedAttr<BoolAttr, "false">:$tile_epilogue);
  let results = (outs Variadic<Tpu_Tensor>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`->` `(` type($outputs)^ `)`)? attr-dict-with-keyword $body
  }];
  let extraClassDeclaration = [{
    /// The body's ops in order, without the terminator.
    ::llvm::SmallVector<::mlir::Operation *> getMembers();
    /// The body value returned as result `index`.
    ::mlir::Value getYielded(unsigned index);
    /// The checks of a `tile_epilogue` group's structure.
    ::mlir::LogicalResult verifyTileEpilogue();
  }];
  let hasVerifier = 1;
}

def Tpu_YieldOp : Tpu_Op<"Yield", [Pure, Terminator,
    HasParent<"GroupOp">]> {
  let summary = "the values of a tpu.Group used after it";
  let arguments = (ins Variadic<Tpu_Tensor>:$operands);
  let assemblyFormat = "($operands^ `:` type($operands))? attr-dict";
}
#endif
