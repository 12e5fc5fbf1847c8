// Shape inference and reference semantics of BatchNorm, LayerNorm, Softmax.
#include "Common.h"
#include "tpuc/Interpreter/Kernels.h"
#include <cmath>

using namespace mlir;
using namespace tpuc;

namespace top {

LogicalResult BatchNormOp::inferShapes() { return inferSameAsInput(*this); }

LogicalResult BatchNormOp::inference(InferenceParam &p) {
  auto shape = getShape(getOutput());
  int64_t c = shape[1], inner = numElements(shape.drop_front(2));
  float eps = getEpsilon().convertToDouble();
  const float *x = p.inputs[0], *scale = p.inputs[1], *bias = p.inputs[2],
              *mean = p.inputs[3], *var = p.inputs[4];
  float *y = p.outputs[0];
  for (int64_t n = 0; n < shape[0]; ++n)
    for (int64_t ch = 0; ch < c; ++ch) {
      float s = scale[ch] / std::sqrt(var[ch] + eps);
      float b = bias[ch] - mean[ch] * s;
      int64_t base = (n * c + ch) * inner;
      for (int64_t i = 0; i < inner; ++i)
        y[base + i] = x[base + i] * s + b;
    }
  return success();
}

LogicalResult LayerNormOp::inferShapes() { return inferSameAsInput(*this); }

LogicalResult LayerNormOp::inference(InferenceParam &p) {
  auto shape = getShape(getInput());
  int64_t axis = normalizeAxis(getAxis(), shape.size());
  layerNorm(p.inputs[0], p.inputs[1], p.inputs[2],
            numElements(shape.take_front(axis)),
            numElements(shape.drop_front(axis)),
            float(getEpsilon().convertToDouble()), p.outputs[0]);
  return success();
}

LogicalResult SoftmaxOp::inferShapes() { return inferSameAsInput(*this); }

LogicalResult SoftmaxOp::inference(InferenceParam &p) {
  auto shape = getShape(getInput());
  int64_t axis = normalizeAxis(getAxis(), shape.size());
  softmax(p.inputs[0], numElements(shape.take_front(axis)), shape[axis],
          numElements(shape.drop_front(axis + 1)), p.outputs[0]);
  return success();
}

} // namespace top
