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

/// out = f(lhs, rhs), then the fused ReLU if the op asks for it.
template <typename OpTy, typename F>
static LogicalResult binaryInference(OpTy op, InferenceParam &p, F f) {
  broadcastBinary(p.inputs[0], getShape(op.getLhs()), p.inputs[1],
                  getShape(op.getRhs()), p.outputs[0], getShape(op.getOutput()),
                  f);
  if (op.getDoRelu())
    relu(p.outputs[0], resultElements(op));
  return success();
}

LogicalResult InputOp::inferShapes() { return inferSameAsInput(*this); }

LogicalResult InputOp::inference(InferenceParam &p) {
  std::copy(p.inputs[0], p.inputs[0] + resultElements(*this), p.outputs[0]);
  return success();
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

// NaN propagates, as in numpy and ONNX Max/Min.
LogicalResult MaxOp::inferShapes() { return inferBroadcast(*this); }
LogicalResult MaxOp::inference(InferenceParam &p) {
  return binaryInference(*this, p, [](float a, float b) {
    return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
  });
}

LogicalResult MinOp::inferShapes() { return inferBroadcast(*this); }
LogicalResult MinOp::inference(InferenceParam &p) {
  return binaryInference(*this, p, [](float a, float b) {
    return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
  });
}

} // namespace top
