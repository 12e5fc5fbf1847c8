#ifndef TPUC_DIALECT_TOP_UTILS_H
#define TPUC_DIALECT_TOP_UTILS_H
#include "mlir/IR/BuiltinOps.h"

namespace top {
/// The module's weight file attribute, or an error on `op`.
mlir::FailureOr<llvm::StringRef> getWeightFile(mlir::Operation *op);
/// Writes every weight the module references to a new npz at `path` and
/// points the module's weight file attribute at it.
mlir::LogicalResult saveWeights(mlir::ModuleOp module, llvm::StringRef path);
} // namespace top
#endif
