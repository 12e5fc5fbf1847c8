#include "tpuc/Interfaces/ShapeInterface.h"
#include "mlir/IR/BuiltinTypes.h"

#include "tpuc/Interfaces/ShapeInterface.cpp.inc"

using namespace mlir;

namespace tpuc {

LogicalResult setResultShape(Operation *op, unsigned idx,
                             ArrayRef<int64_t> shape) {
  Value result = op->getResult(idx);
  auto type = cast<ShapedType>(result.getType());
  if (auto ranked = dyn_cast<RankedTensorType>(type)) {
    if (ranked.getShape() != shape) {
      std::string want, have;
      llvm::raw_string_ostream w(want), h(have);
      llvm::interleave(shape, w, "x");
      llvm::interleave(ranked.getShape(), h, "x");
      return op->emitOpError() << "result #" << idx << " has shape " << have
                               << " but its operands give " << want;
    }
    return success();
  }
  result.setType(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return failure();
    out[i] = da == 1 ? db : da;
  }
  return out;
}

} // namespace tpuc
