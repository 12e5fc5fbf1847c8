#ifndef TPUC_INTERFACES_SHAPEINTERFACE_H
#define TPUC_INTERFACES_SHAPEINTERFACE_H
#include "mlir/IR/OpDefinition.h"

#include "tpuc/Interfaces/ShapeInterface.h.inc"

namespace tpuc {
/// Sets result `idx` of `op` to a ranked tensor of `shape` keeping the element
/// type; fails (with a diagnostic) when the result is already ranked with a
/// different shape.
mlir::LogicalResult setResultShape(mlir::Operation *op, unsigned idx,
                                   llvm::ArrayRef<int64_t> shape);
/// Numpy-style broadcast of two shapes; fails when they are incompatible.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);
} // namespace tpuc
#endif
