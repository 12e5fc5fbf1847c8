#ifndef TPUC_LIB_DIALECT_TPU_INTERFACES_QUANTINFERENCE_H
#define TPUC_LIB_DIALECT_TPU_INTERFACES_QUANTINFERENCE_H
// INT8 inference of the Tpu ops that also have a float form.
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"

namespace tpu {
mlir::LogicalResult convInt8(ConvOp op, tpuc::InferenceParam &p);
/// `rightShape` is [..., K, N]: the right operand as inputs[1] holds it.
mlir::LogicalResult matmulInt8(MatMulOp op, tpuc::InferenceParam &p,
                               llvm::ArrayRef<int64_t> rightShape);
/// Add (sign 1) or Sub (sign -1).
mlir::LogicalResult addSubInt8(mlir::Operation *op, tpuc::InferenceParam &p,
                               int sign, bool relu);
mlir::LogicalResult mulInt8(MulOp op, tpuc::InferenceParam &p);
mlir::LogicalResult avgPoolInt8(AvgPoolOp op, tpuc::InferenceParam &p);
} // namespace tpu
#endif
