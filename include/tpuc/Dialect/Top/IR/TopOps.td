#ifndef TPUC_TOP_OPS
#define TPUC_TOP_OPS
include "tpuc/Dialect/Top/IR/TopDialect.td"
include "tpuc/Interfaces/ShapeInterface.td"
include "tpuc/Interfaces/InferenceInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"

// Every compute op infers its shape and has reference semantics.
class Top_ComputeOp<string mnemonic, list<Trait> traits = []> :
    Top_Op<mnemonic, !listconcat(traits, [Pure,
        DeclareOpInterfaceMethods<ShapeInterface>,
        DeclareOpInterfaceMethods<InferenceInterface>])>;

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
    file named by the enclosing module's `top.weight_file` attribute.
  }];
  let results = (outs AnyRankedTensor:$output);
  let extraClassDeclaration = [{
    /// Reads the data (row-major float32) from the weight store.
    mlir::FailureOr<std::shared_ptr<std::vector<float>>> read();
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

def Top_AddOp : Top_ComputeOp<"Add", [Commutative]> {
  let summary = "elementwise add with numpy broadcasting";
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs,
                   DefaultValuedAttr<BoolAttr, "false">:$do_relu);
  let results = (outs AnyTensor:$output);
}

def Top_ReluOp : Top_ComputeOp<"Relu"> {
  let summary = "max(x, 0), clamped at relu_limit when it is >= 0";
  let arguments = (ins AnyTensor:$input,
                   DefaultValuedAttr<F64Attr, "-1.0">:$relu_limit);
  let results = (outs AnyTensor:$output);
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
#endif
