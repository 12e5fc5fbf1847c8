#ifndef TPUC_LIB_DIALECT_TOP_INTERFACES_COMMON_H
#define TPUC_LIB_DIALECT_TOP_INTERFACES_COMMON_H
// Shape-inference building blocks shared by the Top op interface files.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Interpreter/OpInference.h"
#include "tpuc/Support/OpHelpers.h"

namespace top {

/// Fails with a diagnostic unless every tensor operand of `op` is ranked.
inline mlir::LogicalResult requireRankedOperands(mlir::Operation *op) {
  for (mlir::OpOperand &o : op->getOpOperands())
    if (!tpuc::isNone(o.get()) && !tpuc::isRanked(o.get()))
      return op->emitOpError() << "operand #" << o.getOperandNumber()
                               << " shape is unknown";
  return mlir::success();
}

/// The result has the shape of operand 0.
inline mlir::LogicalResult inferSameAsInput(mlir::Operation *op) {
  if (!tpuc::isRanked(op->getOperand(0)))
    return op->emitOpError() << "input shape is unknown";
  return tpuc::setResultShape(op, 0, tpuc::getShape(op->getOperand(0)));
}

} // namespace top
#endif
