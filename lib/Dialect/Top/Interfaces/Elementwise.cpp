// Shape inference and reference semantics of Input and the broadcasting
// binary ops.
#include "Common.h"
#include "tpuc/Interpreter/Kernels.h"
#include <algorithm>
#include <cmath>
#include <functional>

using namespace mlir;
using namespace tpuc;

namespace top {

/// Numpy broadcast of the two operands.
static LogicalResult inferBroadcast(Operation *op) {
  if (failed(requireRankedOperands(op)))
    return failure();
  Value a = op->getOperand(0), b = op->getOperand(1);
  auto out = broadcastShapes(getShape(a), getShape(b));
  if (failed(out))
    return op->emitOpError() << "operands " << a.getType() << " and "
                             << b.getType() << " do not broadcast";
  return setResultShape(op, 0, *out);
}

LogicalResult InputOp::inferShapes() { return inferSameAsInput(*this); }

LogicalResult InputOp::inference(InferenceParam &p) {
  return copyInput(*this, p);
}

LogicalResult AddOp::inferShapes() { return inferBroadcast(*this); }
LogicalResult AddOp::inference(InferenceParam &p) {
  return binaryInference(*this, p, std::plus<float>());
}

LogicalResult SubOp::inferShapes() { return inferBroadcast(*this); }
LogicalResult SubOp::inference(InferenceParam &p) {
  return binaryInference(*this, p, std::minus<float>());
}

LogicalResult MulOp::inferShapes() { return inferBroadcast(*this); }
LogicalResult MulOp::inference(InferenceParam &p) {
  return binaryInference(*this, p, std::multiplies<float>());
}

LogicalResult DivOp::inferShapes() { return inferBroadcast(*this); }
LogicalResult DivOp::inference(InferenceParam &p) {
  return binaryInference(*this, p, std::divides<float>());
}

LogicalResult MaxOp::inferShapes() { return inferBroadcast(*this); }
LogicalResult MaxOp::inference(InferenceParam &p) {
  return binaryInference(*this, p, maxNaN);
}

LogicalResult MinOp::inferShapes() { return inferBroadcast(*this); }
LogicalResult MinOp::inference(InferenceParam &p) {
  return binaryInference(*this, p, minNaN);
}

} // namespace top
