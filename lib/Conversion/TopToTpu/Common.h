#ifndef TPUC_LIB_CONVERSION_TOPTOTPU_COMMON_H
#define TPUC_LIB_CONVERSION_TOPTOTPU_COMMON_H
// Building blocks shared by the Top -> Tpu lowering patterns.
#include "tpuc/Conversion/TopToTpu/TopToTpu.h"
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"
#include "mlir/Transforms/DialectConversion.h"

namespace tpuc::lowering {

/// Location of a helper op a lowering adds around the main one: named
/// "<tensor>_<suffix>" so dumps keep one tensor per name, and wrapping the
/// Top op's location.
inline mlir::Location helperLoc(mlir::Operation *op, llvm::StringRef suffix) {
  return mlir::NameLoc::get(
      mlir::StringAttr::get(op->getContext(), getOpName(op) + "_" + suffix.str()),
      op->getLoc());
}

/// `v`'s tensor type with another shape.
inline mlir::RankedTensorType withShape(mlir::Value v,
                                        llvm::ArrayRef<int64_t> shape) {
  return mlir::RankedTensorType::get(
      shape, llvm::cast<mlir::RankedTensorType>(v.getType()).getElementType());
}

/// tpu.Reshape of `v` to `shape`.
inline mlir::Value reshape(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value v, llvm::ArrayRef<int64_t> shape) {
  return tpu::ReshapeOp::create(b, loc, withShape(v, shape), v).getOutput();
}

/// Fails with a diagnostic naming `op` unless its module has a weight file
/// (new weights are registered in it).
inline mlir::LogicalResult requireWeightFile(mlir::Operation *op) {
  auto module = op->getParentOfType<mlir::ModuleOp>();
  if (!module || !module->getAttrOfType<mlir::StringAttr>(kWeightFileAttr))
    return op->emitOpError()
           << "cannot be lowered: its new weights need the module's '"
           << kWeightFileAttr << "' attribute";
  return mlir::success();
}

} // namespace tpuc::lowering
#endif
