#ifndef TPUC_TOP_OPS
#define TPUC_TOP_OPS
include "tpuc/Dialect/Top/IR/TopDialect.td"
include "tpuc/Interfaces/ShapeInterface.td"
include "tpuc/Interfaces/InferenceInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"

def Top_ShapeConsistent : NativeOpTrait<"ShapeConsistent"> {
  let cppNamespace = "::top::OpTrait";
}

// Every compute op infers its shape and has reference semantics; once fully
// ranked, its types must agree with what it infers.
class Top_ComputeOp<string mnemonic, list<Trait> traits = []> :
    Top_Op<mnemonic, !listconcat(traits, [Pure,
        DeclareOpInterfaceMethods<ShapeInterface>,
        DeclareOpInterfaceMethods<InferenceInterface>,
        Top_ShapeConsistent])>;

def Top_NoneOp : Top_Op<"None", [Pure]> {
  let summary = "absent optional operand";
  let results = (outs NoneType:$output);
  let assemblyFormat = "attr-dict";
}

def Top_InputOp : Top_ComputeOp<"Input"> {
  let summary = "network input";
  let description = [{ Marks a function argument as a named network input. }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyTensor:$output);
}

def Top_WeightOp : Top_Op<"Weight", [Pure,
    DeclareOpInterfaceMethods<InferenceInterface>]> {
  let summary = "constant tensor read from the module's weight file";
  let description = [{
    The data is the array stored under this op's location name in the npz
    file named by the enclosing module's `top.weight_file` attribute, in the
    element type of the result: f32, f16 (`<f2`), bf16 (its bits as `<u2`),
    integers, or a quantized type's storage integers.
  }];
  let results = (outs AnyRankedTensor:$output);
  let extraClassDeclaration = [{
    /// Reads the values (row-major, as float32: quantized types give their
    /// storage integers) from the weight store.
    mlir::FailureOr<std::shared_ptr<std::vector<float>>> read();
    /// The stored array itself (typed bytes).
    mlir::FailureOr<tpuc::WeightData> readTyped();
    /// Creates a weight named `name` holding the typed array `data` (its
    /// element count must match `type`).
    static WeightOp createTyped(mlir::OpBuilder &b,
                                mlir::Operation *insertPoint,
                                llvm::StringRef name, mlir::RankedTensorType type,
                                tpuc::NpyArray data);
    /// Creates a weight named `name` holding `data`, registered in the store
    /// of the module that encloses `insertPoint`.
    static WeightOp createWithData(mlir::OpBuilder &b,
                                   mlir::Operation *insertPoint,
                                   llvm::StringRef name,
                                   mlir::RankedTensorType type,
                                   std::vector<float> data);
  }];
  let hasVerifier = 1;
}

def Top_ConvOp : Top_ComputeOp<"Conv"> {
  let summary = "1-D/2-D convolution (NCHW input, OIHW filter)";
  let description = [{
    `pads` holds the begin pads of every spatial axis, then the end pads
    (ONNX order). `group` > 1 gives grouped and depthwise convolution.
    `do_relu` fuses a ReLU (clamped at `relu_limit` when it is >= 0).
  }];
  let arguments = (ins
    AnyTensor:$input,
    AnyRankedTensor:$filter,
    AnyTypeOf<[AnyRankedTensor, NoneType]>:$bias,
    I64ArrayAttr:$kernel_shape,
    I64ArrayAttr:$strides,
    I64ArrayAttr:$pads,
    I64ArrayAttr:$dilations,
    DefaultValuedAttr<I64Attr, "1">:$group,
    DefaultValuedAttr<BoolAttr, "false">:$do_relu,
    DefaultValuedAttr<F64Attr, "-1.0">:$relu_limit);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Top_DeconvOp : Top_ComputeOp<"Deconv"> {
  let summary = "1-D/2-D transposed convolution (ONNX ConvTranspose)";
  let description = [{
    NC[H]W input, filter [IC, OC/group, K...] (ONNX layout). Input pixel i
    lands on output i*stride - pad_begin + k*dilation; `pads` holds the
    begin pads of every spatial axis, then the end pads (ONNX order), and
    each output dim is (in-1)*stride - begin - end + dilation*(k-1) + 1 +
    output_padding. `group` > 1 gives grouped and depthwise deconvolution.
  }];
  let arguments = (ins
    AnyTensor:$input,
    AnyRankedTensor:$filter,
    AnyTypeOf<[AnyRankedTensor, NoneType]>:$bias,
    I64ArrayAttr:$kernel_shape,
    I64ArrayAttr:$strides,
    I64ArrayAttr:$pads,
    I64ArrayAttr:$dilations,
    I64ArrayAttr:$output_padding,
    DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Top_BinaryOp<string mnemonic, string desc, list<Trait> traits = []> :
    Top_ComputeOp<mnemonic, traits> {
  let summary = desc # " with numpy broadcasting";
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs,
                   DefaultValuedAttr<BoolAttr, "false">:$do_relu);
  let results = (outs AnyTensor:$output);
}

def Top_AddOp : Top_BinaryOp<"Add", "elementwise lhs + rhs", [Commutative]> {
  let hasCanonicalizer = 1;
}
def Top_SubOp : Top_BinaryOp<"Sub", "elementwise lhs - rhs">;
def Top_MulOp : Top_BinaryOp<"Mul", "elementwise lhs * rhs", [Commutative]> {
  let hasCanonicalizer = 1;
}
def Top_DivOp : Top_BinaryOp<"Div", "elementwise lhs / rhs">;
def Top_MaxOp : Top_BinaryOp<"Max", "elementwise max(lhs, rhs)", [Commutative]>;
def Top_MinOp : Top_BinaryOp<"Min", "elementwise min(lhs, rhs)", [Commutative]>;

class Top_UnaryOp<string mnemonic, string desc, dag extraArgs = (ins)> :
    Top_ComputeOp<mnemonic> {
  let summary = desc;
  let arguments = !con((ins AnyTensor:$input), extraArgs);
  let results = (outs AnyTensor:$output);
}

def Top_ReluOp : Top_UnaryOp<"Relu",
    "max(x, 0), clamped at relu_limit when it is >= 0",
    (ins DefaultValuedAttr<F64Attr, "-1.0">:$relu_limit)> {
  let hasCanonicalizer = 1;
}
def Top_ClipOp : Top_UnaryOp<"Clip", "min(max(x, min), max)",
    (ins F64Attr:$min, F64Attr:$max)> {
  let hasVerifier = 1;
}
def Top_LeakyReluOp : Top_UnaryOp<"LeakyRelu", "x >= 0 ? x : alpha * x",
    (ins F64Attr:$alpha)> {
  let hasVerifier = 1;
}
def Top_HardSigmoidOp : Top_UnaryOp<"HardSigmoid",
    "clamp(alpha * x + beta, 0, 1)", (ins F64Attr:$alpha, F64Attr:$beta)> {
  let hasVerifier = 1;
}
def Top_HardSwishOp : Top_UnaryOp<"HardSwish",
    "x * clamp(x / 6 + 1 / 2, 0, 1) (ONNX HardSwish)">;
def Top_SigmoidOp : Top_UnaryOp<"Sigmoid", "1 / (1 + exp(-x))">;
def Top_TanhOp : Top_UnaryOp<"Tanh", "tanh(x)">;
def Top_GELUOp : Top_UnaryOp<"GELU",
    "x * Phi(x); `approximate` is \"none\" (erf form) or \"tanh\"",
    (ins DefaultValuedAttr<StrAttr, "\"none\"">:$approximate)> {
  let hasVerifier = 1;
}
def Top_SiLUOp : Top_UnaryOp<"SiLU", "x * sigmoid(x)">;
def Top_ErfOp : Top_UnaryOp<"Erf", "erf(x)">;
def Top_AbsOp : Top_UnaryOp<"Abs", "|x|">;
def Top_ExpOp : Top_UnaryOp<"Exp", "exp(x)">;
def Top_LogOp : Top_UnaryOp<"Log", "natural log(x)">;
def Top_SqrtOp : Top_UnaryOp<"Sqrt", "sqrt(x)">;
def Top_RsqrtOp : Top_UnaryOp<"Rsqrt", "1 / sqrt(x)">;
def Top_PowOp : Top_UnaryOp<"Pow", "x ^ exponent (a constant)",
    (ins F64Attr:$exponent)>;
def Top_CastOp : Top_UnaryOp<"Cast",
    "values converted to the element type `to` (f32, f16, bf16, i32, i8, "
    "ui8, bool) and carried as f32: integers truncate toward zero and "
    "saturate, f16/bf16 round to nearest even",
    (ins StrAttr:$to)> {
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra and normalization
//===----------------------------------------------------------------------===//

def Top_MatMulOp : Top_ComputeOp<"MatMul"> {
  let summary = "numpy matmul with batch broadcasting, optional bias on N";
  let description = [{
    `input` is [..., M, K], `right` is [..., K, N] (or [K, N]); the batch
    dims broadcast. `bias` (or none) has N elements. `do_relu` fuses a ReLU.
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$right,
                   AnyTypeOf<[AnyRankedTensor, NoneType]>:$bias,
                   DefaultValuedAttr<BoolAttr, "false">:$do_relu);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Top_BatchNormOp : Top_ComputeOp<"BatchNorm"> {
  let summary = "inference batch normalization over axis 1";
  let arguments = (ins AnyTensor:$input, AnyRankedTensor:$scale,
                   AnyRankedTensor:$bias, AnyRankedTensor:$mean,
                   AnyRankedTensor:$variance,
                   DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Top_LayerNormOp : Top_ComputeOp<"LayerNorm"> {
  let summary = "normalization over dims [axis, rank) with optional affine";
  let arguments = (ins AnyTensor:$input,
                   AnyTypeOf<[AnyRankedTensor, NoneType]>:$weight,
                   AnyTypeOf<[AnyRankedTensor, NoneType]>:$bias,
                   I64Attr:$axis,
                   DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Top_SoftmaxOp : Top_ComputeOp<"Softmax"> {
  let summary = "softmax along axis (negative counts from the end)";
  let arguments = (ins AnyTensor:$input, I64Attr:$axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pooling and reduction
//===----------------------------------------------------------------------===//

class Top_PoolOp<string mnemonic, string desc, dag extraArgs = (ins)> :
    Top_ComputeOp<mnemonic> {
  let summary = desc;
  let description = [{
    1-D/2-D pooling over NC[H]W. `pads` are begins then ends. With
    `ceil_mode` the output size rounds up (windows starting in the padding
    are dropped, as in ONNX).
  }];
  let arguments = !con((ins AnyTensor:$input,
                        I64ArrayAttr:$kernel_shape,
                        I64ArrayAttr:$strides,
                        I64ArrayAttr:$pads,
                        DefaultValuedAttr<BoolAttr, "false">:$ceil_mode),
                       extraArgs);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Top_MaxPoolOp : Top_PoolOp<"MaxPool", "max pooling (padding never wins)">;
def Top_AvgPoolOp : Top_PoolOp<"AvgPool", "average pooling",
    (ins DefaultValuedAttr<BoolAttr, "false">:$count_include_pad)>;

def Top_GlobalAvgPoolOp : Top_ComputeOp<"GlobalAvgPool"> {
  let summary = "mean over all spatial dims, keeping them as size 1";
  let arguments = (ins AnyTensor:$input);
  let results = (outs AnyTensor:$output);
}

def Top_ReduceOp : Top_ComputeOp<"Reduce"> {
  let summary = "reduction (sum, mean, max, min) over axes";
  let description = [{
    `mode` is "sum", "mean", "max" or "min". `axes` may be negative (counted
    from the end); empty `axes` reduces every dim, as in ONNX. With
    `keepdims` the reduced dims stay as size 1, otherwise they are dropped.
  }];
  let arguments = (ins AnyTensor:$input, StrAttr:$mode, I64ArrayAttr:$axes,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Top_ReshapeOp : Top_ComputeOp<"Reshape"> {
  let summary = "same elements, new shape (one dim may be -1)";
  let arguments = (ins AnyTensor:$input, I64ArrayAttr:$shape);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Top_PermuteOp : Top_ComputeOp<"Permute"> {
  let summary = "transpose: output dim i is input dim order[i]";
  let arguments = (ins AnyTensor:$input, I64ArrayAttr:$order);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Top_ConcatOp : Top_ComputeOp<"Concat"> {
  let summary = "concatenation along axis";
  let arguments = (ins Variadic<AnyTensor>:$inputs, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$do_relu);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Top_SliceOp : Top_ComputeOp<"Slice"> {
  let summary = "strided slice with ONNX semantics";
  let description = [{
    For each axis in `axes` (negative counts from the end): elements
    starts[i], starts[i] + steps[i], ... up to (excluding) ends[i]; negative
    starts/ends count from the end and are clamped; steps may be negative.
  }];
  let arguments = (ins AnyTensor:$input, I64ArrayAttr:$starts,
                   I64ArrayAttr:$ends, I64ArrayAttr:$axes,
                   I64ArrayAttr:$steps);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    /// For every dim of the (ranked) input: the first index taken, the step
    /// and the number of elements taken, after ONNX clamping.
    void getBounds(llvm::SmallVectorImpl<int64_t> &starts,
                   llvm::SmallVectorImpl<int64_t> &steps,
                   llvm::SmallVectorImpl<int64_t> &sizes);
  }];
}

def Top_GatherOp : Top_ComputeOp<"Gather"> {
  let summary = "take along axis by integer indices (carried as f32)";
  let description = [{
    Output shape: input[:axis] + indices + input[axis+1:]. Negative indices
    count from the end; an out-of-range index is an interpreter error.
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$indices, I64Attr:$axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Top_PadOp : Top_ComputeOp<"Pad"> {
  let summary = "pad every dim (begins then ends) by constant, reflect or edge";
  let arguments = (ins AnyTensor:$input, I64ArrayAttr:$pads,
                   DefaultValuedAttr<StrAttr, "\"constant\"">:$mode,
                   DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Top_UpsampleOp : Top_ComputeOp<"Upsample"> {
  let summary = "nearest-neighbour upsampling of H and W by integer scales";
  let arguments = (ins AnyTensor:$input, I64Attr:$scale_h, I64Attr:$scale_w);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Top_InterpOp : Top_ComputeOp<"Interp"> {
  let summary = "resize of H and W of NCHW (ONNX Resize, linear or nearest)";
  let description = [{
    Output H/W are `target_h`/`target_w`; `scale_h`/`scale_w` (output over
    input, as ONNX derives it from scales or sizes) drive the coordinate
    transform `coord_mode` (half_pixel, pytorch_half_pixel, align_corners,
    asymmetric). `mode` "linear" interpolates bilinearly between the two
    nearest inputs (coordinates clamped to the input); "nearest" picks one
    input by `nearest_mode` (round_prefer_floor, round_prefer_ceil, floor,
    ceil).
  }];
  let arguments = (ins AnyTensor:$input, StrAttr:$mode, StrAttr:$coord_mode,
                   DefaultValuedAttr<StrAttr, "\"round_prefer_floor\"">:$nearest_mode,
                   I64Attr:$target_h, I64Attr:$target_w,
                   F64Attr:$scale_h, F64Attr:$scale_w);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}
#endif
