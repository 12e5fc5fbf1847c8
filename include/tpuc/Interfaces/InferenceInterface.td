#ifndef TPUC_INTERFACES_INFERENCEINTERFACE
#define TPUC_INTERFACES_INFERENCEINTERFACE
include "mlir/IR/OpBase.td"

def InferenceInterface : OpInterface<"InferenceInterface"> {
  let description = [{
    Reference semantics of an op for the interpreter: reads its operand buffers
    and writes its result buffers (dense, row-major, float32; quantized values
    are carried as integral floats). Shapes come from the (ranked) types.
  }];
  let cppNamespace = "::tpuc";
  let methods = [
    InterfaceMethod<"Compute the results from the operands.",
                    "::mlir::LogicalResult", "inference",
                    (ins "::tpuc::InferenceParam &":$param)>,
  ];
}
#endif
