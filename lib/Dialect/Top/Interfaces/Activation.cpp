// Shape inference and reference semantics of the elementwise unary ops: all
// keep their input's shape and map one value at a time.
#include "Common.h"
#include "tpuc/Interpreter/Kernels.h"
#include <cmath>

using namespace mlir;
using namespace tpuc;

namespace top {

template <typename F>
static LogicalResult mapUnary(Operation *op, InferenceParam &p, F f) {
  unaryMap(p.inputs[0], p.outputs[0], resultElements(op), f);
  return success();
}

LogicalResult ReluOp::inferShapes() { return inferSameAsInput(*this); }
LogicalResult ReluOp::inference(InferenceParam &p) {
  const float hi = getReluLimit().convertToDouble() >= 0
                       ? float(getReluLimit().convertToDouble())
                       : INFINITY;
  return mapUnary(*this, p,
                  [hi](float x) { return std::min(std::max(x, 0.0f), hi); });
}

LogicalResult ClipOp::inferShapes() { return inferSameAsInput(*this); }
LogicalResult ClipOp::inference(InferenceParam &p) {
  const float lo = getMin().convertToDouble(), hi = getMax().convertToDouble();
  return mapUnary(*this, p,
                  [=](float x) { return std::min(std::max(x, lo), hi); });
}

LogicalResult LeakyReluOp::inferShapes() { return inferSameAsInput(*this); }
LogicalResult LeakyReluOp::inference(InferenceParam &p) {
  const float alpha = getAlpha().convertToDouble();
  return mapUnary(*this, p, [alpha](float x) { return leakyRelu(x, alpha); });
}

LogicalResult HardSigmoidOp::inferShapes() { return inferSameAsInput(*this); }
LogicalResult HardSigmoidOp::inference(InferenceParam &p) {
  const float alpha = getAlpha().convertToDouble(),
              beta = getBeta().convertToDouble();
  return mapUnary(*this, p,
                  [=](float x) { return hardSigmoid(x, alpha, beta); });
}

LogicalResult HardSwishOp::inferShapes() { return inferSameAsInput(*this); }
LogicalResult HardSwishOp::inference(InferenceParam &p) {
  return mapUnary(*this, p, hardSwish);
}

LogicalResult SigmoidOp::inferShapes() { return inferSameAsInput(*this); }
LogicalResult SigmoidOp::inference(InferenceParam &p) {
  return mapUnary(*this, p, sigmoid);
}

LogicalResult TanhOp::inferShapes() { return inferSameAsInput(*this); }
LogicalResult TanhOp::inference(InferenceParam &p) {
  return mapUnary(*this, p, [](float x) { return std::tanh(x); });
}

LogicalResult GELUOp::inferShapes() { return inferSameAsInput(*this); }
LogicalResult GELUOp::inference(InferenceParam &p) {
  const bool tanhForm = getApproximate() == "tanh";
  return mapUnary(*this, p, [=](float x) { return gelu(x, tanhForm); });
}

LogicalResult SiLUOp::inferShapes() { return inferSameAsInput(*this); }
LogicalResult SiLUOp::inference(InferenceParam &p) {
  return mapUnary(*this, p, [](float x) { return x * sigmoid(x); });
}

LogicalResult ErfOp::inferShapes() { return inferSameAsInput(*this); }
LogicalResult ErfOp::inference(InferenceParam &p) {
  return mapUnary(*this, p, [](float x) { return std::erf(x); });
}

LogicalResult AbsOp::inferShapes() { return inferSameAsInput(*this); }
LogicalResult AbsOp::inference(InferenceParam &p) {
  return mapUnary(*this, p, [](float x) { return std::fabs(x); });
}

LogicalResult ExpOp::inferShapes() { return inferSameAsInput(*this); }
LogicalResult ExpOp::inference(InferenceParam &p) {
  return mapUnary(*this, p, [](float x) { return std::exp(x); });
}

LogicalResult LogOp::inferShapes() { return inferSameAsInput(*this); }
LogicalResult LogOp::inference(InferenceParam &p) {
  return mapUnary(*this, p, [](float x) { return std::log(x); });
}

LogicalResult SqrtOp::inferShapes() { return inferSameAsInput(*this); }
LogicalResult SqrtOp::inference(InferenceParam &p) {
  return mapUnary(*this, p, [](float x) { return std::sqrt(x); });
}

LogicalResult RsqrtOp::inferShapes() { return inferSameAsInput(*this); }
LogicalResult RsqrtOp::inference(InferenceParam &p) {
  return mapUnary(*this, p, [](float x) { return 1.0f / std::sqrt(x); });
}

LogicalResult PowOp::inferShapes() { return inferSameAsInput(*this); }
LogicalResult PowOp::inference(InferenceParam &p) {
  const float e = getExponent().convertToDouble();
  return mapUnary(*this, p, [e](float x) { return std::pow(x, e); });
}

LogicalResult CastOp::inferShapes() { return inferSameAsInput(*this); }
LogicalResult CastOp::inference(InferenceParam &p) {
  const CastKind kind = *parseCastKind(getTo());
  return mapUnary(*this, p, [kind](float x) { return castValue(x, kind); });
}

} // namespace top
