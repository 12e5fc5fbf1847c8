#ifndef TPUC_TPU_OPS
#define TPUC_TPU_OPS
include "tpuc/Dialect/Tpu/IR/TpuDialect.td"
include "tpuc/Interfaces/InferenceInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Dialect/Quant/IR/QuantBase.td"

// Element types the chip computes in.
def Tpu_Tensor : RankedTensorOf<[F32, F16, BF16, quant_QuantizedType, I8, UI8, I32]>;

class Tpu_ComputeOp<string mnemonic, list<Trait> traits = []> :
    Tpu_Op<mnemonic, !listconcat(traits, [Pure,
        DeclareOpInterfaceMethods<InferenceInterface>])>;

def Tpu_ConvOp : Tpu_ComputeOp<"Conv"> {
  let summary = "convolution on typed tensors";
  let arguments = (ins
    Tpu_Tensor:$input, Tpu_Tensor:$filter,
    AnyTypeOf<[Tpu_Tensor, NoneType]>:$bias,
    I64ArrayAttr:$kernel_shape, I64ArrayAttr:$strides, I64ArrayAttr:$pads,
    I64ArrayAttr:$dilations,
    DefaultValuedAttr<I64Attr, "1">:$group,
    DefaultValuedAttr<BoolAttr, "false">:$do_relu,
    DefaultValuedAttr<F64Attr, "-1.0">:$relu_limit);
  let results = (outs Tpu_Tensor:$output);
}

def Tpu_AddOp : Tpu_ComputeOp<"Add", [Commutative]> {
  let summary = "elementwise add with broadcasting on typed tensors";
  let arguments = (ins Tpu_Tensor:$lhs, Tpu_Tensor:$rhs,
                   DefaultValuedAttr<BoolAttr, "false">:$do_relu);
  let results = (outs Tpu_Tensor:$output);
}
#endif
