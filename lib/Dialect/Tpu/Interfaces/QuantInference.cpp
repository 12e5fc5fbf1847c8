// INT8 semantics of the Tpu ops (the integer path of the Tpu interpreter).
// Quantized tensors are carried as integral floats; every accumulation is
// exact (int64 or double on integers) and every rounding, saturation and
// requantization comes from QuantMath.h / QuantParams.h, which the cmodel
// shares, so the two agree bit for bit.
#include "QuantInference.h"
#include "tpuc/Dialect/Tpu/IR/QuantParams.h"
#include "tpuc/Interpreter/OpInference.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include <cstring>
#include <algorithm>
#include <vector>

using namespace mlir;
using namespace tpuc;
using tpuc::chip::DType;
using tpuc::chip::requantize;
using tpuc::chip::saturate;

namespace tpu {
namespace {

inline int64_t i(float v) { return static_cast<int64_t>(v); }

/// Requantizes per channel with the (multiplier, shift) rows of `quant`
/// (one row, or one per channel).
struct Requantizer {
  std::vector<int64_t> quant;
  int64_t rows;
  int32_t zp;
  int64_t operator()(int64_t acc, int64_t channel) const {
    int64_t r = rows == 1 ? 0 : channel;
    int32_t x = int32_t(saturate(acc, DType::INT32));
    return requantize(x, int32_t(quant[2 * r]), int(quant[2 * r + 1]), zp,
                      kQuantRound, DType::INT8);
  }
};

/// The values of an i32 operand (a `quant` operand's (multiplier, shift)
/// rows, a bias) exactly: multipliers have 31 bits, more than the float32
/// the interpreter carries tensors in, so a constant's are read from its
/// typed storage.
std::vector<int64_t> exactInts(Value quant, const float *values) {
  int64_t n = numElements(getShape(quant));
  std::vector<int64_t> rows(values, values + n);
  if (auto w = quant.getDefiningOp<top::WeightOp>()) {
    auto data = w.readTyped();
    if (succeeded(data) && (*data)->descr == "<i4" &&
        (*data)->numElements() == n)
      for (int64_t k = 0; k < n; ++k) {
        int32_t v;
        std::memcpy(&v, (*data)->data.data() + 4 * k, 4);
        rows[k] = v;
      }
  }
  return rows;
}

int64_t reluAcc(int64_t acc, bool relu) {
  acc = saturate(acc, DType::INT32);
  return relu ? std::max<int64_t>(acc, 0) : acc;
}

} // namespace

LogicalResult convInt8(ConvOp op, InferenceParam &p) {
  auto in = getShape(op.getInput()), f = getShape(op.getFilter()),
       out = getShape(op.getOutput());
  auto s = getI64s(op.getStrides()), d = getI64s(op.getDilations()),
       pads = getI64s(op.getPads());
  const int64_t n = in[0], ic = in[1], ih = in[2], iw = in[3], oc = f[0],
                kh = f[2], kw = f[3], oh = out[2], ow = out[3];
  const int64_t g = op.getGroup(), icg = ic / g, ocg = oc / g;
  const float *x = p.inputs[0], *w = p.inputs[1];
  std::vector<int64_t> bias;
  if (p.inputs[2])
    bias = exactInts(op.getBias(), p.inputs[2]);
  Requantizer rq{exactInts(op.getQuant(), p.inputs[3]),
                 getShape(op.getQuant())[0],
                 int32_t(qparams(op.getOutput().getType()).zp)};
  // Padded cells hold the input's zero point (real 0).
  const int64_t pad = qparams(op.getInput().getType()).zp;
  std::vector<int64_t> acc(oh * ow);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < oc; ++o) {
      std::fill(acc.begin(), acc.end(), bias.empty() ? 0 : bias[o]);
      int64_t grp = o / ocg;
      for (int64_t c = 0; c < icg; ++c) {
        const float *plane = x + ((b * ic) + grp * icg + c) * ih * iw;
        for (int64_t ky = 0; ky < kh; ++ky)
          for (int64_t kx = 0; kx < kw; ++kx) {
            int64_t wv = i(w[((o * icg + c) * kh + ky) * kw + kx]);
            if (wv == 0)
              continue;
            for (int64_t y = 0; y < oh; ++y) {
              int64_t sy = y * s[0] - pads[0] + ky * d[0];
              bool rowIn = sy >= 0 && sy < ih;
              if (!rowIn && pad == 0)
                continue;
              for (int64_t xx = 0; xx < ow; ++xx) {
                int64_t sx = xx * s[1] - pads[1] + kx * d[1];
                acc[y * ow + xx] += wv * (rowIn && sx >= 0 && sx < iw
                                              ? i(plane[sy * iw + sx])
                                              : pad);
              }
            }
          }
      }
      float *dst = p.outputs[0] + (b * oc + o) * oh * ow;
      for (int64_t k = 0; k < oh * ow; ++k)
        dst[k] = float(rq(reluAcc(acc[k], op.getDoRelu()), o));
    }
  return success();
}

LogicalResult matmulInt8(MatMulOp op, InferenceParam &p,
                         ArrayRef<int64_t> rightShape) {
  auto outShape = getShape(op.getOutput());
  int64_t total = numElements(outShape), cols = outShape.back();
  std::vector<double> acc(total);
  // An input zero point is folded into the bias by the lowering.
  matmulDouble(p.inputs[0], getShape(op.getInput()), p.inputs[1], rightShape,
               acc.data(), outShape);
  std::vector<int64_t> bias;
  if (p.inputs[2])
    bias = exactInts(op.getBias(), p.inputs[2]);
  Requantizer rq{exactInts(op.getQuant(), p.inputs[3]), 1,
                 int32_t(qparams(op.getOutput().getType()).zp)};
  for (int64_t k = 0; k < total; ++k) {
    int64_t v = int64_t(acc[k]) + (bias.empty() ? 0 : bias[k % cols]);
    p.outputs[0][k] = float(rq(reluAcc(v, op.getDoRelu()), 0));
  }
  return success();
}

LogicalResult addSubInt8(Operation *op, InferenceParam &p, int sign,
                         bool relu) {
  Value l = op->getOperand(0), r = op->getOperand(1), o = op->getResult(0);
  QParams ql = qparams(l.getType()), qr = qparams(r.getType()),
          qo = qparams(o.getType());
  SharedShift sp = addParams(ql, qr, qo);
  broadcastBinary(p.inputs[0], getShape(l), p.inputs[1], getShape(r),
                  p.outputs[0], getShape(o), [&](float a, float b) {
                    int64_t acc = (i(a) - ql.zp) * sp.m[0] +
                                  sign * (i(b) - qr.zp) * sp.m[1];
                    acc = reluAcc(acc, relu);
                    return float(requantize(int32_t(acc), 1, sp.shift, qo.zp,
                                            kQuantRound, DType::INT8));
                  });
  return success();
}

LogicalResult mulInt8(MulOp op, InferenceParam &p) {
  QParams ql = qparams(op.getLhs().getType()),
          qr = qparams(op.getRhs().getType()),
          qo = qparams(op.getOutput().getType());
  auto [m, shift] = mulParams(ql, qr, qo);
  bool relu = op.getDoRelu();
  broadcastBinary(p.inputs[0], getShape(op.getLhs()), p.inputs[1],
                  getShape(op.getRhs()), p.outputs[0],
                  getShape(op.getOutput()), [&](float a, float b) {
                    int64_t acc = reluAcc((i(a) - ql.zp) * (i(b) - qr.zp),
                                          relu);
                    return float(requantize(int32_t(acc), m, shift, qo.zp,
                                            kQuantRound, DType::INT8));
                  });
  return success();
}

LogicalResult avgPoolInt8(AvgPoolOp op, InferenceParam &p) {
  auto in = getShape(op.getInput()), out = getShape(op.getOutput());
  auto k = getI64s(op.getKernelShape()), s = getI64s(op.getStrides()),
       pads = getI64s(op.getPads());
  QParams qi = qparams(op.getInput().getType()),
          qo = qparams(op.getOutput().getType());
  SharedShift sp = avgPoolParams(qi, qo);
  const int64_t planes = in[0] * in[1], ih = in[2], iw = in[3], oh = out[2],
                ow = out[3];
  for (int64_t pl = 0; pl < planes; ++pl) {
    const float *x = p.inputs[0] + pl * ih * iw;
    float *y = p.outputs[0] + pl * oh * ow;
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        int64_t y0 = oy * s[0] - pads[0], x0 = ox * s[1] - pads[1];
        int64_t y1 = std::min(y0 + k[0], ih + pads[2]),
                x1 = std::min(x0 + k[1], iw + pads[3]);
        int64_t sum = 0, cells = 0;
        int64_t padded = (y1 - y0) * (x1 - x0);
        for (int64_t yy = std::max<int64_t>(y0, 0); yy < std::min(y1, ih); ++yy)
          for (int64_t xx = std::max<int64_t>(x0, 0); xx < std::min(x1, iw);
               ++xx) {
            sum += (i(x[yy * iw + xx]) - qi.zp) * sp.m[0];
            ++cells;
          }
        int64_t count = op.getCountIncludePad() ? padded : cells;
        int64_t avg = saturate(
            tpuc::chip::divRound(sum, std::max<int64_t>(count, 1), kQuantRound),
            DType::INT32);
        y[oy * ow + ox] = float(requantize(int32_t(avg), 1, sp.shift, qo.zp,
                                           kQuantRound, DType::INT8));
      }
  }
  return success();
}

LogicalResult QuantCastOp::inference(InferenceParam &p) {
  Type in = getInput().getType(), out = getOutput().getType();
  int64_t n = resultElements(*this);
  const float *x = p.inputs[0];
  float *y = p.outputs[0];
  if (isQuantized(out)) {
    QParams q = qparams(out);
    for (int64_t k = 0; k < n; ++k)
      y[k] = float(quantizeF32(x[k], q));
  } else if (isQuantized(in)) {
    QParams q = qparams(in);
    for (int64_t k = 0; k < n; ++k)
      y[k] = dequantizeF32(i(x[k]), q);
  } else {
    std::copy(x, x + n, y); // rounding to the float result type: the driver
  }
  return success();
}

LogicalResult RequantOp::inference(InferenceParam &p) {
  QParams qi = qparams(getInput().getType()),
          qo = qparams(getOutput().getType());
  auto [m, shift] = requantParams(qi, qo);
  int64_t n = resultElements(*this);
  for (int64_t k = 0; k < n; ++k)
    p.outputs[0][k] = float(requantize(int32_t(i(p.inputs[0][k]) - qi.zp), m,
                                       shift, qo.zp, kQuantRound, DType::INT8));
  return success();
}

LogicalResult LutOp::inference(InferenceParam &p) {
  int64_t n = resultElements(*this);
  for (int64_t k = 0; k < n; ++k)
    p.outputs[0][k] = p.inputs[1][uint8_t(int8_t(i(p.inputs[0][k])))];
  return success();
}

} // namespace tpu
