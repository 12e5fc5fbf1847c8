// Shape inference and reference semantics of elementwise ops.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Interpreter/Kernels.h"
#include "tpuc/Support/OpHelpers.h"
#include <cmath>

using namespace mlir;
using namespace tpuc;

namespace top {

/// Broadcast shape of two operands, or an error naming both shapes.
static LogicalResult inferBroadcast(Operation *op) {
  Value a = op->getOperand(0), b = op->getOperand(1);
  if (!isRanked(a) || !isRanked(b))
    return op->emitOpError() << "operand shapes are unknown";
  auto out = broadcastShapes(getShape(a), getShape(b));
  if (failed(out))
    return op->emitOpError() << "operands " << a.getType() << " and "
                             << b.getType() << " do not broadcast";
  return setResultShape(op, 0, *out);
}

static LogicalResult inferSameAsInput(Operation *op) {
  if (!isRanked(op->getOperand(0)))
    return op->emitOpError() << "input shape is unknown";
  return setResultShape(op, 0, getShape(op->getOperand(0)));
}

LogicalResult InputOp::inferShapes() { return inferSameAsInput(*this); }

LogicalResult InputOp::inference(InferenceParam &p) {
  int64_t n = numElements(getShape(getOutput()));
  std::copy(p.inputs[0], p.inputs[0] + n, p.outputs[0]);
  return success();
}

LogicalResult AddOp::inferShapes() { return inferBroadcast(*this); }

LogicalResult AddOp::inference(InferenceParam &p) {
  broadcastBinary(p.inputs[0], getShape(getLhs()), p.inputs[1],
                  getShape(getRhs()), p.outputs[0], getShape(getOutput()),
                  [](float a, float b) { return a + b; });
  if (getDoRelu())
    relu(p.outputs[0], numElements(getShape(getOutput())));
  return success();
}

LogicalResult ReluOp::inferShapes() { return inferSameAsInput(*this); }

LogicalResult ReluOp::inference(InferenceParam &p) {
  int64_t n = numElements(getShape(getOutput()));
  std::copy(p.inputs[0], p.inputs[0] + n, p.outputs[0]);
  relu(p.outputs[0], n, getReluLimit().convertToDouble());
  return success();
}

LogicalResult BatchNormOp::inferShapes() { return inferSameAsInput(*this); }

LogicalResult BatchNormOp::inference(InferenceParam &p) {
  auto shape = getShape(getOutput());
  int64_t c = shape[1], inner = numElements(shape.drop_front(2));
  double eps = getEpsilon().convertToDouble();
  const float *x = p.inputs[0], *scale = p.inputs[1], *bias = p.inputs[2],
              *mean = p.inputs[3], *var = p.inputs[4];
  float *y = p.outputs[0];
  for (int64_t n = 0; n < shape[0]; ++n)
    for (int64_t ch = 0; ch < c; ++ch) {
      float s = scale[ch] / std::sqrt(var[ch] + float(eps));
      float b = bias[ch] - mean[ch] * s;
      int64_t base = (n * c + ch) * inner;
      for (int64_t i = 0; i < inner; ++i)
        y[base + i] = x[base + i] * s + b;
    }
  return success();
}

} // namespace top
