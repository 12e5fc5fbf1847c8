#include "tpuc/Interpreter/Kernels.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSwitch.h"
#include <algorithm>
#include <cmath>
#include <vector>
#include <cstring>
#include <limits>

namespace tpuc {

using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::SmallVectorImpl;

namespace {

SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    s[d - 1] = s[d] * shape[d];
  return s;
}

int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Calls f(outIndex, inOffset) for every element of `outShape` in row-major
/// order, where inOffset = base + sum(idx[d] * inStrides[d]).
template <typename F>
void forEachStrided(ArrayRef<int64_t> outShape, ArrayRef<int64_t> inStrides,
                    int64_t base, F f) {
  const int64_t total = product(outShape);
  const size_t rank = outShape.size();
  SmallVector<int64_t> idx(rank, 0);
  int64_t off = base;
  for (int64_t i = 0; i < total; ++i) {
    f(i, off);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < outShape[d]) {
        off += inStrides[d];
        break;
      }
      off -= inStrides[d] * (outShape[d] - 1);
      idx[d] = 0;
    }
  }
}

} // namespace

void conv2d(const ConvParams &p, const float *input, const float *filter,
            const float *bias, float *output) {
  const int64_t oh = p.oh(), ow = p.ow(), plane = oh * ow;
  const int64_t icg = p.ic / p.group, ocg = p.oc / p.group;
  const int64_t kdim = icg * p.kh * p.kw;
  // im2col: one row per (input channel, ky, kx) holding the input value each
  // output position reads (0 in the padding), so the multiply-accumulate
  // below runs over contiguous, branch-free rows.
  std::vector<float> col(size_t(kdim * plane));
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t g = 0; g < p.group; ++g) {
      for (int64_t i = 0; i < icg; ++i) {
        const float *in = input + (n * p.ic + g * icg + i) * p.ih * p.iw;
        for (int64_t ky = 0; ky < p.kh; ++ky)
          for (int64_t kx = 0; kx < p.kw; ++kx) {
            float *row = col.data() + ((i * p.kh + ky) * p.kw + kx) * plane;
            for (int64_t y = 0; y < oh; ++y) {
              const int64_t iy = y * p.sh - p.pt + ky * p.dh;
              float *dst = row + y * ow;
              if (iy < 0 || iy >= p.ih) {
                std::fill(dst, dst + ow, 0.0f);
                continue;
              }
              const float *src = in + iy * p.iw;
              for (int64_t x = 0; x < ow; ++x) {
                const int64_t ix = x * p.sw - p.pl + kx * p.dw;
                dst[x] = ix >= 0 && ix < p.iw ? src[ix] : 0.0f;
              }
            }
          }
      }
      // Four output channels per pass over `col` halve its memory traffic.
      for (int64_t o0 = 0; o0 < ocg; o0 += 4) {
        const int64_t cnt = std::min<int64_t>(4, ocg - o0);
        float *out[4];
        const float *w[4];
        for (int64_t u = 0; u < 4; ++u) {
          const int64_t oc = g * ocg + o0 + std::min(u, cnt - 1);
          out[u] = output + (n * p.oc + oc) * plane;
          w[u] = filter + oc * kdim;
        }
        for (int64_t u = 0; u < cnt; ++u)
          std::fill(out[u], out[u] + plane,
                    bias ? bias[g * ocg + o0 + u] : 0.0f);
        if (cnt < 4) { // remainder: one channel at a time
          for (int64_t u = 0; u < cnt; ++u)
            for (int64_t k = 0; k < kdim; ++k) {
              const float wv = w[u][k];
              const float *row = col.data() + k * plane;
              for (int64_t j = 0; j < plane; ++j)
                out[u][j] += wv * row[j];
            }
          continue;
        }
        for (int64_t k = 0; k < kdim; ++k) {
          const float w0 = w[0][k], w1 = w[1][k], w2 = w[2][k], w3 = w[3][k];
          const float *row = col.data() + k * plane;
          float *o0p = out[0], *o1p = out[1], *o2p = out[2], *o3p = out[3];
          for (int64_t j = 0; j < plane; ++j) {
            const float v = row[j];
            o0p[j] += w0 * v;
            o1p[j] += w1 * v;
            o2p[j] += w2 * v;
            o3p[j] += w3 * v;
          }
        }
      }
    }
  if (p.doRelu)
    relu(output, p.n * p.oc * oh * ow, p.reluLimit);
}

void broadcastBinary(const float *a, ArrayRef<int64_t> aShape, const float *b,
                     ArrayRef<int64_t> bShape, float *out,
                     ArrayRef<int64_t> outShape,
                     const std::function<float(float, float)> &f) {
  const size_t rank = outShape.size();
  // Strides of each input in output coordinates (0 along broadcast dims).
  SmallVector<int64_t> sa(rank, 0), sb(rank, 0);
  auto strides = [&](ArrayRef<int64_t> shape, SmallVectorImpl<int64_t> &s) {
    int64_t acc = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      size_t d = shape.size() - 1 - i, o = rank - 1 - i;
      s[o] = shape[d] == 1 ? 0 : acc;
      acc *= shape[d];
    }
  };
  strides(aShape, sa);
  strides(bShape, sb);
  const int64_t total = product(outShape);
  SmallVector<int64_t> idx(rank, 0);
  int64_t ia = 0, ib = 0;
  for (int64_t i = 0; i < total; ++i) {
    out[i] = f(a[ia], b[ib]);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < outShape[d]) {
        ia += sa[d];
        ib += sb[d];
        break;
      }
      ia -= sa[d] * (outShape[d] - 1);
      ib -= sb[d] * (outShape[d] - 1);
      idx[d] = 0;
    }
  }
}

void relu(float *data, int64_t n, double limit) {
  const float hi = limit >= 0 ? float(limit) : INFINITY;
  for (int64_t i = 0; i < n; ++i)
    data[i] = std::min(std::max(data[i], 0.0f), hi);
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

float gelu(float x, bool tanhForm) {
  // Evaluated in double so that the reference is as exact as float allows.
  double v = x;
  if (tanhForm) {
    const double c = std::sqrt(2.0 / M_PI);
    return float(0.5 * v * (1.0 + std::tanh(c * (v + 0.044715 * v * v * v))));
  }
  return float(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
}

std::optional<CastKind> parseCastKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<CastKind>>(name)
      .Case("f32", CastKind::F32)
      .Case("f16", CastKind::F16)
      .Case("bf16", CastKind::BF16)
      .Case("i32", CastKind::I32)
      .Case("i8", CastKind::I8)
      .Case("ui8", CastKind::UI8)
      .Case("bool", CastKind::Bool)
      .Default(std::nullopt);
}

static float roundToFormat(float x, const llvm::fltSemantics &sem) {
  bool lost;
  llvm::APFloat v(x);
  v.convert(sem, llvm::APFloat::rmNearestTiesToEven, &lost);
  v.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return v.convertToFloat();
}

static float truncSaturate(float x, double lo, double hi) {
  if (std::isnan(x))
    return 0.0f;
  return float(std::clamp(std::trunc(double(x)), lo, hi));
}

float castValue(float x, CastKind kind) {
  switch (kind) {
  case CastKind::F32:
    return x;
  case CastKind::F16:
    return roundToFormat(x, llvm::APFloat::IEEEhalf());
  case CastKind::BF16:
    return roundToFormat(x, llvm::APFloat::BFloat());
  case CastKind::I32:
    // Not every int32 is a float: the saturated ends are the float bounds.
    return truncSaturate(x, -2147483648.0, 2147483520.0);
  case CastKind::I8:
    return truncSaturate(x, -128.0, 127.0);
  case CastKind::UI8:
    return truncSaturate(x, 0.0, 255.0);
  case CastKind::Bool:
    return x != 0.0f ? 1.0f : 0.0f;
  }
  return x;
}

void matmulDouble(const float *a, ArrayRef<int64_t> aShape, const float *b,
                  ArrayRef<int64_t> bShape, double *out,
                  ArrayRef<int64_t> outShape) {
  const int64_t m = aShape[aShape.size() - 2], k = aShape.back(),
                n = bShape.back();
  ArrayRef<int64_t> batch = outShape.drop_back(2);
  // Matrix strides of each operand along the output's batch dims.
  auto batchStrides = [&](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> s(batch.size(), 0);
    ArrayRef<int64_t> own = shape.drop_back(2);
    int64_t acc = shape[shape.size() - 2] * shape.back();
    for (size_t i = 0; i < own.size(); ++i) {
      size_t d = own.size() - 1 - i, o = batch.size() - 1 - i;
      s[o] = own[d] == 1 ? 0 : acc;
      acc *= own[d];
    }
    return s;
  };
  SmallVector<int64_t> sa = batchStrides(aShape), sb = batchStrides(bShape);
  const int64_t batches = product(batch);
  SmallVector<int64_t> idx(batch.size(), 0);
  int64_t oa = 0, ob = 0;
  for (int64_t bi = 0; bi < batches; ++bi) {
    const float *pa = a + oa, *pb = b + ob;
    for (int64_t i = 0; i < m; ++i) {
      double *acc = out + (bi * m + i) * n;
      std::fill(acc, acc + n, 0.0);
      for (int64_t kk = 0; kk < k; ++kk) {
        const double av = pa[i * k + kk];
        const float *row = pb + kk * n;
        for (int64_t j = 0; j < n; ++j)
          acc[j] += av * row[j];
      }
    }
    for (size_t d = batch.size(); d-- > 0;) {
      if (++idx[d] < batch[d]) {
        oa += sa[d];
        ob += sb[d];
        break;
      }
      oa -= sa[d] * (batch[d] - 1);
      ob -= sb[d] * (batch[d] - 1);
      idx[d] = 0;
    }
  }
}

void matmul(const float *a, ArrayRef<int64_t> aShape, const float *b,
            ArrayRef<int64_t> bShape, const float *bias, float *out,
            ArrayRef<int64_t> outShape) {
  const int64_t n = bShape.back(), total = product(outShape);
  std::vector<double> acc(total);
  matmulDouble(a, aShape, b, bShape, acc.data(), outShape);
  for (int64_t i = 0; i < total; ++i)
    out[i] = float(acc[i] + (bias ? bias[i % n] : 0.0f));
}

void layerNorm(const float *x, const float *weight, const float *bias,
               int64_t outer, int64_t inner, float eps, float *out) {
  for (int64_t o = 0; o < outer; ++o) {
    const float *row = x + o * inner;
    float *orow = out + o * inner;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; ++i)
      mean += row[i];
    mean /= inner;
    for (int64_t i = 0; i < inner; ++i)
      var += (row[i] - mean) * (row[i] - mean);
    var /= inner;
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < inner; ++i) {
      double v = (row[i] - mean) * inv;
      if (weight)
        v *= weight[i];
      if (bias)
        v += bias[i];
      orow[i] = float(v);
    }
  }
}

void softmax(const float *x, int64_t outer, int64_t dim, int64_t inner,
             float *out) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      const float *px = x + o * dim * inner + in;
      float *py = out + o * dim * inner + in;
      // Subtracting the max keeps exp() from overflowing.
      float mx = -INFINITY;
      for (int64_t d = 0; d < dim; ++d)
        mx = std::max(mx, px[d * inner]);
      double sum = 0;
      for (int64_t d = 0; d < dim; ++d)
        sum += (py[d * inner] = std::exp(px[d * inner] - mx));
      for (int64_t d = 0; d < dim; ++d)
        py[d * inner] = float(py[d * inner] / sum);
    }
}

template <typename Init, typename Visit, typename Finish>
static void pool2d(const PoolParams &p, const float *in, float *out, Init init,
                   Visit visit, Finish finish) {
  for (int64_t c = 0; c < p.planes; ++c) {
    const float *plane = in + c * p.ih * p.iw;
    float *oplane = out + c * p.oh * p.ow;
    for (int64_t y = 0; y < p.oh; ++y)
      for (int64_t x = 0; x < p.ow; ++x) {
        const int64_t y0 = y * p.sh - p.pt, x0 = x * p.sw - p.pl;
        // The window clipped to the padded input, then to the input.
        const int64_t py1 = std::min(y0 + p.kh, p.ih + p.pb),
                      px1 = std::min(x0 + p.kw, p.iw + p.pr);
        const int64_t padded = (py1 - y0) * (px1 - x0);
        const int64_t iy0 = std::max<int64_t>(y0, 0),
                      ix0 = std::max<int64_t>(x0, 0),
                      iy1 = std::min(py1, p.ih), ix1 = std::min(px1, p.iw);
        auto acc = init();
        for (int64_t iy = iy0; iy < iy1; ++iy)
          for (int64_t ix = ix0; ix < ix1; ++ix)
            visit(acc, plane[iy * p.iw + ix]);
        const int64_t valid =
            std::max<int64_t>(iy1 - iy0, 0) * std::max<int64_t>(ix1 - ix0, 0);
        oplane[y * p.ow + x] = finish(acc, valid, padded);
      }
  }
}

void maxPool2d(const PoolParams &p, const float *in, float *out) {
  pool2d(
      p, in, out, [] { return -INFINITY; },
      [](float &acc, float v) { acc = std::max(acc, v); },
      [](float acc, int64_t, int64_t) { return acc; });
}

void avgPool2d(const PoolParams &p, const float *in, float *out) {
  const bool include = p.countIncludePad;
  pool2d(
      p, in, out, [] { return 0.0; },
      [](double &acc, float v) { acc += v; },
      [include](double acc, int64_t valid, int64_t padded) {
        int64_t count = include ? padded : valid;
        return count > 0 ? float(acc / count) : 0.0f;
      });
}

std::optional<ReduceMode> parseReduceMode(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ReduceMode>>(name)
      .Case("sum", ReduceMode::Sum)
      .Case("mean", ReduceMode::Mean)
      .Case("max", ReduceMode::Max)
      .Case("min", ReduceMode::Min)
      .Default(std::nullopt);
}

void reduce(const float *in, ArrayRef<int64_t> shape, ArrayRef<bool> reduced,
            ReduceMode mode, float *out) {
  SmallVector<int64_t> outShape(shape);
  int64_t count = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (reduced[d]) {
      outShape[d] = 1;
      count *= shape[d];
    }
  // Walk the input in order; each element lands at its reduced position.
  SmallVector<int64_t> outStrides = rowMajorStrides(outShape);
  for (size_t d = 0; d < shape.size(); ++d)
    if (reduced[d])
      outStrides[d] = 0;
  const int64_t outN = product(outShape);
  std::vector<double> acc(outN, mode == ReduceMode::Max   ? -INFINITY
                                : mode == ReduceMode::Min ? INFINITY
                                                          : 0.0);
  forEachStrided(shape, outStrides, 0, [&](int64_t i, int64_t o) {
    double v = in[i];
    switch (mode) {
    case ReduceMode::Sum:
    case ReduceMode::Mean:
      acc[o] += v;
      break;
    case ReduceMode::Max:
      acc[o] = std::max(acc[o], v);
      break;
    case ReduceMode::Min:
      acc[o] = std::min(acc[o], v);
      break;
    }
  });
  for (int64_t o = 0; o < outN; ++o)
    out[o] = float(mode == ReduceMode::Mean ? acc[o] / count : acc[o]);
}

void permute(const float *in, ArrayRef<int64_t> shape, ArrayRef<int64_t> order,
             float *out) {
  SmallVector<int64_t> strides = rowMajorStrides(shape), outShape, inStrides;
  for (int64_t d : order) {
    outShape.push_back(shape[d]);
    inStrides.push_back(strides[d]);
  }
  forEachStrided(outShape, inStrides, 0,
                 [&](int64_t i, int64_t off) { out[i] = in[off]; });
}

void concat(ArrayRef<const float *> ins, ArrayRef<int64_t> axisDims,
            int64_t outer, int64_t inner, float *out) {
  for (int64_t o = 0; o < outer; ++o)
    for (size_t i = 0; i < ins.size(); ++i) {
      const int64_t n = axisDims[i] * inner;
      std::copy(ins[i] + o * n, ins[i] + (o + 1) * n, out);
      out += n;
    }
}

void stridedSlice(const float *in, ArrayRef<int64_t> shape,
                  ArrayRef<int64_t> starts, ArrayRef<int64_t> steps,
                  ArrayRef<int64_t> outShape, float *out) {
  if (product(outShape) == 0)
    return;
  SmallVector<int64_t> strides = rowMajorStrides(shape), inStrides;
  int64_t base = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    base += starts[d] * strides[d];
    inStrides.push_back(steps[d] * strides[d]);
  }
  forEachStrided(outShape, inStrides, base,
                 [&](int64_t i, int64_t off) { out[i] = in[off]; });
}

std::optional<int64_t> gather(const float *in, int64_t outer, int64_t dim,
                              int64_t inner, const float *indices,
                              int64_t numIndices, float *out) {
  SmallVector<int64_t> idx(numIndices);
  for (int64_t i = 0; i < numIndices; ++i) {
    float v = indices[i];
    if (!(std::trunc(v) == v) || v < -float(dim) || v >= float(dim))
      return i;
    idx[i] = v < 0 ? int64_t(v) + dim : int64_t(v);
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < numIndices; ++i) {
      const float *src = in + (o * dim + idx[i]) * inner;
      std::copy(src, src + inner, out + (o * numIndices + i) * inner);
    }
  return std::nullopt;
}

std::optional<PadMode> parsePadMode(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<PadMode>>(name)
      .Case("constant", PadMode::Constant)
      .Case("reflect", PadMode::Reflect)
      .Case("edge", PadMode::Edge)
      .Default(std::nullopt);
}

void pad(const float *in, ArrayRef<int64_t> shape, ArrayRef<int64_t> pads,
         PadMode mode, float value, float *out) {
  const size_t rank = shape.size();
  SmallVector<int64_t> outShape(rank), strides = rowMajorStrides(shape);
  for (size_t d = 0; d < rank; ++d)
    outShape[d] = shape[d] + pads[d] + pads[rank + d];
  const int64_t total = product(outShape);
  SmallVector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t off = 0;
    bool inside = true;
    for (size_t d = 0; d < rank; ++d) {
      int64_t c = idx[d] - pads[d];
      if (c < 0 || c >= shape[d]) {
        if (mode == PadMode::Constant) {
          inside = false;
          break;
        }
        if (mode == PadMode::Edge)
          c = c < 0 ? 0 : shape[d] - 1;
        else // Reflect about the edge element, which is not repeated.
          c = c < 0 ? -c : 2 * (shape[d] - 1) - c;
      }
      off += c * strides[d];
    }
    out[i] = inside ? in[off] : value;
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < outShape[d])
        break;
      idx[d] = 0;
    }
  }
}

void upsampleNearest(const float *in, int64_t planes, int64_t h, int64_t w,
                     int64_t scaleH, int64_t scaleW, float *out) {
  const int64_t oh = h * scaleH, ow = w * scaleW;
  for (int64_t c = 0; c < planes; ++c)
    for (int64_t y = 0; y < oh; ++y) {
      const float *row = in + (c * h + y / scaleH) * w;
      float *orow = out + (c * oh + y) * ow;
      for (int64_t x = 0; x < ow; ++x)
        orow[x] = row[x / scaleW];
    }
}

void deconv2d(const DeconvParams &p, const float *input, const float *filter,
              const float *bias, float *output) {
  const int64_t icg = p.ic / p.group, ocg = p.oc / p.group;
  const int64_t osize = p.oh * p.ow;
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t o = 0; o < p.oc; ++o)
      std::fill_n(output + (n * p.oc + o) * osize, osize,
                  bias ? bias[o] : 0.f);
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t g = 0; g < p.group; ++g)
      for (int64_t i = 0; i < icg; ++i) {
        const int64_t c = g * icg + i;
        const float *x = input + (n * p.ic + c) * p.ih * p.iw;
        for (int64_t o = 0; o < ocg; ++o) {
          const float *f = filter + (c * ocg + o) * p.kh * p.kw;
          float *y = output + (n * p.oc + g * ocg + o) * osize;
          for (int64_t kh = 0; kh < p.kh; ++kh)
            for (int64_t kw = 0; kw < p.kw; ++kw) {
              const float wv = f[kh * p.kw + kw];
              for (int64_t ih = 0; ih < p.ih; ++ih) {
                int64_t oy = ih * p.sh - p.pt + kh * p.dh;
                if (oy < 0 || oy >= p.oh)
                  continue;
                for (int64_t iw = 0; iw < p.iw; ++iw) {
                  int64_t ox = iw * p.sw - p.pl + kw * p.dw;
                  if (ox >= 0 && ox < p.ow)
                    y[oy * p.ow + ox] += x[ih * p.iw + iw] * wv;
                }
              }
            }
        }
      }
  if (p.doRelu)
    relu(output, p.n * p.oc * osize);
}

std::optional<ResizeMode> parseResizeMode(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ResizeMode>>(name)
      .Case("linear", ResizeMode::Linear)
      .Case("nearest", ResizeMode::Nearest)
      .Default(std::nullopt);
}

std::optional<ResizeCoord> parseResizeCoord(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ResizeCoord>>(name)
      .Case("half_pixel", ResizeCoord::HalfPixel)
      .Case("pytorch_half_pixel", ResizeCoord::PytorchHalfPixel)
      .Case("align_corners", ResizeCoord::AlignCorners)
      .Case("asymmetric", ResizeCoord::Asymmetric)
      .Default(std::nullopt);
}

std::optional<NearestRound> parseNearestRound(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<NearestRound>>(name)
      .Case("round_prefer_floor", NearestRound::RoundPreferFloor)
      .Case("round_prefer_ceil", NearestRound::RoundPreferCeil)
      .Case("floor", NearestRound::Floor)
      .Case("ceil", NearestRound::Ceil)
      .Default(std::nullopt);
}

std::vector<float> resizeMatrix(int64_t inLen, int64_t outLen, double scale,
                                ResizeMode mode, ResizeCoord coord,
                                NearestRound round) {
  std::vector<float> m(outLen * inLen, 0.f);
  // Coordinates in float, as onnxruntime computes them.
  const float s = float(scale);
  for (int64_t i = 0; i < outLen; ++i) {
    float x;
    switch (coord) {
    case ResizeCoord::HalfPixel:
      x = (float(i) + 0.5f) / s - 0.5f;
      break;
    case ResizeCoord::PytorchHalfPixel:
      x = outLen > 1 ? (float(i) + 0.5f) / s - 0.5f : 0.f;
      break;
    case ResizeCoord::AlignCorners:
      x = outLen > 1 ? float(i) * float(inLen - 1) / float(outLen - 1) : 0.f;
      break;
    case ResizeCoord::Asymmetric:
      x = float(i) / s;
      break;
    }
    float *row = &m[i * inLen];
    if (mode == ResizeMode::Nearest) {
      float r;
      switch (round) {
      case NearestRound::RoundPreferFloor:
        r = x == std::floor(x) + 0.5f ? std::floor(x) : std::round(x);
        break;
      case NearestRound::RoundPreferCeil:
        r = std::round(x);
        break;
      case NearestRound::Floor:
        r = std::floor(x);
        break;
      case NearestRound::Ceil:
        r = std::ceil(x);
        break;
      }
      int64_t k = std::clamp<int64_t>(int64_t(r), 0, inLen - 1);
      row[k] = 1.f;
      continue;
    }
    x = std::clamp(x, 0.f, float(inLen - 1));
    int64_t x0 = int64_t(x), x1 = std::min(x0 + 1, inLen - 1);
    float d = x - float(x0);
    row[x0] += 1.f - d;
    row[x1] += d;
  }
  return m;
}

void resizeSeparable(const float *in, int64_t planes, int64_t h, int64_t w,
                     const float *ah, int64_t oh, const float *aw, int64_t ow,
                     float *out) {
  std::vector<float> t(oh * w);
  for (int64_t p = 0; p < planes; ++p) {
    const float *x = in + p * h * w;
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t c = 0; c < w; ++c) {
        float acc = 0.f;
        for (int64_t k = 0; k < h; ++k)
          acc += ah[i * h + k] * x[k * w + c];
        t[i * w + c] = acc;
      }
    float *y = out + p * oh * ow;
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        float acc = 0.f;
        for (int64_t k = 0; k < w; ++k)
          acc += t[i * w + k] * aw[j * w + k];
        y[i * ow + j] = acc;
      }
  }
}

} // namespace tpuc
