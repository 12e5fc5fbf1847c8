// Float reference semantics of the Tpu ops (the F32 path of the Tpu
// interpreter). They call the kernels the Top interpreter uses, so an F32
// Tpu module reproduces the Top module's numbers.
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuUtils.h"
#include "tpuc/Dialect/Tpu/IR/QuantParams.h"
#include "QuantInference.h"
#include "tpuc/Interpreter/OpInference.h"
#include "tpuc/Support/OpHelpers.h"
#include <algorithm>
#include <cmath>
#include <functional>

using namespace mlir;
using namespace tpuc;

namespace tpu {

LogicalResult ConvOp::inference(InferenceParam &p) {
  if (isQuantized(getOutput().getType()))
    return convInt8(*this, p);
  auto in = getShape(getInput()), f = getShape(getFilter());
  auto s = getI64s(getStrides()), d = getI64s(getDilations()),
       pads = getI64s(getPads());
  ConvParams c;
  c.n = in[0], c.ic = in[1], c.ih = in[2], c.iw = in[3];
  c.oc = f[0], c.kh = f[2], c.kw = f[3];
  c.sh = s[0], c.sw = s[1], c.dh = d[0], c.dw = d[1];
  c.pt = pads[0], c.pl = pads[1], c.pb = pads[2], c.pr = pads[3];
  c.group = getGroup();
  c.doRelu = getDoRelu();
  c.reluLimit = getReluLimit().convertToDouble();
  conv2d(c, p.inputs[0], p.inputs[1], p.inputs[2], p.outputs[0]);
  return success();
}

LogicalResult MatMulOp::inference(InferenceParam &p) {
  // A transposed right operand [..., N, K] is computed as its transpose
  // [..., K, N], laid out here, times the input.
  SmallVector<int64_t> rShape(getShape(getRight()));
  std::vector<float> kn;
  InferenceParam q = p;
  if (getRightTranspose()) {
    const int64_t r = int64_t(rShape.size()), n = rShape[r - 2],
                  k = rShape[r - 1], mats = numElements(rShape) / (n * k);
    kn.resize(size_t(mats * n * k));
    for (int64_t b = 0; b < mats; ++b)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < k; ++j)
          kn[size_t((b * k + j) * n + i)] = p.inputs[1][(b * n + i) * k + j];
    std::swap(rShape[r - 2], rShape[r - 1]);
    q.inputs[1] = kn.data();
  }
  if (isQuantized(getOutput().getType()))
    return matmulInt8(*this, q, rShape);
  matmul(q.inputs[0], getShape(getInput()), q.inputs[1], rShape, q.inputs[2],
         q.outputs[0], getShape(getOutput()));
  if (getDoRelu())
    relu(q.outputs[0], resultElements(*this));
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult AddOp::inference(InferenceParam &p) {
  if (isQuantized(getOutput().getType()))
    return addSubInt8(*this, p, 1, getDoRelu());
  return binaryInference(*this, p, std::plus<float>());
}
LogicalResult SubOp::inference(InferenceParam &p) {
  if (isQuantized(getOutput().getType()))
    return addSubInt8(*this, p, -1, getDoRelu());
  return binaryInference(*this, p, std::minus<float>());
}
LogicalResult MulOp::inference(InferenceParam &p) {
  if (isQuantized(getOutput().getType()))
    return mulInt8(*this, p);
  return binaryInference(*this, p, std::multiplies<float>());
}
LogicalResult DivOp::inference(InferenceParam &p) {
  return binaryInference(*this, p, std::divides<float>());
}
LogicalResult MaxOp::inference(InferenceParam &p) {
  return binaryInference(*this, p, maxNaN);
}
LogicalResult MinOp::inference(InferenceParam &p) {
  return binaryInference(*this, p, minNaN);
}

LogicalResult ActiveOp::inference(InferenceParam &p) {
  return evaluate(p.inputs[0], p.outputs[0], resultElements(*this));
}

LogicalResult ActiveOp::evaluate(const float *x, float *y, int64_t n) {
  auto map = [&](auto f) {
    unaryMap(x, y, n, f);
    return success();
  };
  // The verifier guarantees the mode parses and its attributes are present.
  switch (*parseActiveMode(getMode())) {
  case ActiveMode::Relu: {
    const float hi =
        getMaxAttr() ? float(getMaxAttr().getValueAsDouble()) : INFINITY;
    return map([hi](float v) { return std::min(std::max(v, 0.0f), hi); });
  }
  case ActiveMode::Clip: {
    const float lo = getMinAttr().getValueAsDouble(),
                hi = getMaxAttr().getValueAsDouble();
    return map([=](float v) { return std::min(std::max(v, lo), hi); });
  }
  case ActiveMode::Sigmoid:
    return map(sigmoid);
  case ActiveMode::Tanh:
    return map([](float v) { return std::tanh(v); });
  case ActiveMode::Gelu:
    return map([](float v) { return gelu(v, /*tanhForm=*/false); });
  case ActiveMode::GeluTanh:
    return map([](float v) { return gelu(v, /*tanhForm=*/true); });
  case ActiveMode::Silu:
    return map([](float v) { return v * sigmoid(v); });
  case ActiveMode::Erf:
    return map([](float v) { return std::erf(v); });
  case ActiveMode::Abs:
    return map([](float v) { return std::fabs(v); });
  case ActiveMode::Exp:
    return map([](float v) { return std::exp(v); });
  case ActiveMode::Log:
    return map([](float v) { return std::log(v); });
  case ActiveMode::Sqrt:
    return map([](float v) { return std::sqrt(v); });
  case ActiveMode::Rsqrt:
    return map([](float v) { return 1.0f / std::sqrt(v); });
  case ActiveMode::Pow: {
    const float e = getExponentAttr().getValueAsDouble();
    return map([e](float v) { return std::pow(v, e); });
  }
  case ActiveMode::LeakyRelu: {
    const float alpha = getAlphaAttr().getValueAsDouble();
    return map([alpha](float v) { return leakyRelu(v, alpha); });
  }
  case ActiveMode::HardSigmoid: {
    const float alpha = getAlphaAttr().getValueAsDouble(),
                beta = getBetaAttr().getValueAsDouble();
    return map([=](float v) { return hardSigmoid(v, alpha, beta); });
  }
  case ActiveMode::HardSwish:
    return map(hardSwish);
  }
  return emitOpError() << "unhandled mode '" << getMode() << "'";
}

LogicalResult CastOp::inference(InferenceParam &p) {
  const CastKind kind = *parseCastKind(getTo());
  unaryMap(p.inputs[0], p.outputs[0], resultElements(*this),
           [kind](float x) { return castValue(x, kind); });
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::inference(InferenceParam &p) {
  auto shape = getShape(getInput());
  int64_t axis = getAxis();
  layerNorm(p.inputs[0], p.inputs[1], p.inputs[2],
            numElements(shape.take_front(axis)),
            numElements(shape.drop_front(axis)),
            float(getEpsilon().convertToDouble()), p.outputs[0]);
  return success();
}

LogicalResult SoftmaxOp::inference(InferenceParam &p) {
  auto shape = getShape(getInput());
  int64_t axis = getAxis();
  const float *x = p.inputs[0];
  std::vector<float> divided;
  if (getDivisor()) {
    float d = float(getDivisor()->convertToDouble());
    divided.assign(x, x + numElements(shape));
    for (float &v : divided)
      v = v / d;
    x = divided.data();
  }
  softmax(x, numElements(shape.take_front(axis)), shape[axis],
          numElements(shape.drop_front(axis + 1)), p.outputs[0]);
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling and reduction
//===----------------------------------------------------------------------===//

template <typename PoolOp>
static PoolParams poolParams(PoolOp op) {
  auto in = getShape(op.getInput()), out = getShape(op.getOutput());
  auto k = getI64s(op.getKernelShape()), s = getI64s(op.getStrides()),
       pads = getI64s(op.getPads());
  PoolParams p;
  p.planes = in[0] * in[1];
  p.ih = in[2], p.iw = in[3], p.oh = out[2], p.ow = out[3];
  p.kh = k[0], p.kw = k[1], p.sh = s[0], p.sw = s[1];
  p.pt = pads[0], p.pl = pads[1], p.pb = pads[2], p.pr = pads[3];
  return p;
}

LogicalResult MaxPoolOp::inference(InferenceParam &p) {
  maxPool2d(poolParams(*this), p.inputs[0], p.outputs[0]);
  return success();
}

LogicalResult AvgPoolOp::inference(InferenceParam &p) {
  if (isQuantized(getOutput().getType()))
    return avgPoolInt8(*this, p);
  PoolParams params = poolParams(*this);
  params.countIncludePad = getCountIncludePad();
  avgPool2d(params, p.inputs[0], p.outputs[0]);
  return success();
}

LogicalResult ReduceOp::inference(InferenceParam &p) {
  auto shape = getShape(getInput());
  SmallVector<bool> reduced(shape.size(), false);
  for (int64_t a : getI64s(getAxes()))
    reduced[a] = true;
  // Dropping size-1 dims does not move data: keepdims only changes the type.
  reduce(p.inputs[0], shape, reduced, *parseReduceMode(getMode()),
         p.outputs[0]);
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::inference(InferenceParam &p) {
  return copyInput(*this, p);
}

LogicalResult PermuteOp::inference(InferenceParam &p) {
  permute(p.inputs[0], getShape(getInput()), getI64s(getOrder()),
          p.outputs[0]);
  return success();
}

LogicalResult ConcatOp::inference(InferenceParam &p) {
  return concatInference(*this, p);
}

LogicalResult SliceOp::inference(InferenceParam &p) {
  stridedSlice(p.inputs[0], getShape(getInput()), getI64s(getOffsets()),
               getI64s(getSteps()), getShape(getOutput()), p.outputs[0]);
  return success();
}

LogicalResult GatherOp::inference(InferenceParam &p) {
  auto in = getShape(getInput());
  int64_t axis = getAxis(), dim = in[axis];
  int64_t n = numElements(getShape(getIndices()));
  // As in ONNX, an index in [-dim, 0) counts from the end; DmaGather wraps
  // run-time indices the same way.
  const float *idx = p.inputs[1];
  if (auto bad = gather(p.inputs[0], numElements(in.take_front(axis)), dim,
                        numElements(in.drop_front(axis + 1)), idx, n,
                        p.outputs[0])) {
    float v = idx[*bad];
    auto diag = emitOpError() << "index ";
    if (std::trunc(v) == v && std::fabs(v) < 9.0e15)
      diag << int64_t(v);
    else
      diag << v;
    return diag << " (at position " << *bad << ") is not an integer in ["
                << -dim << ", " << dim << ") for axis " << axis;
  }
  return success();
}

LogicalResult PadOp::inference(InferenceParam &p) {
  pad(p.inputs[0], getShape(getInput()), getI64s(getPads()),
      *parsePadMode(getMode()), float(getValue().convertToDouble()),
      p.outputs[0]);
  return success();
}

LogicalResult UpsampleOp::inference(InferenceParam &p) {
  auto in = getShape(getInput());
  upsampleNearest(p.inputs[0], in[0] * in[1], in[2], in[3], getScaleH(),
                  getScaleW(), p.outputs[0]);
  return success();
}

LogicalResult DeconvOp::inference(InferenceParam &p) {
  auto in = getShape(getInput()), f = getShape(getFilter()),
       out = getShape(getOutput());
  auto s = getI64s(getStrides()), d = getI64s(getDilations()),
       pads = getI64s(getPads());
  DeconvParams c;
  c.n = in[0], c.ic = in[1], c.ih = in[2], c.iw = in[3];
  c.oc = out[1], c.oh = out[2], c.ow = out[3], c.kh = f[2], c.kw = f[3];
  c.sh = s[0], c.sw = s[1], c.dh = d[0], c.dw = d[1];
  c.pt = pads[0], c.pl = pads[1], c.group = getGroup();
  deconv2d(c, p.inputs[0], p.inputs[1], p.inputs[2], p.outputs[0]);
  return success();
}

LogicalResult InterpOp::inference(InferenceParam &p) {
  auto in = getShape(getInput()), out = getShape(getOutput());
  resizeSeparable(p.inputs[0], in[0] * in[1], in[2], in[3], p.inputs[1],
                  out[2], p.inputs[2], out[3], p.outputs[0]);
  return success();
}

} // namespace tpu
