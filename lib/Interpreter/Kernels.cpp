#include "tpuc/Interpreter/Kernels.h"
#include "llvm/ADT/SmallVector.h"
#include <algorithm>
#include <cmath>
#include <cstring>

namespace tpuc {

void conv2d(const ConvParams &p, const float *input, const float *filter,
            const float *bias, float *output) {
  const int64_t oh = p.oh(), ow = p.ow();
  const int64_t icg = p.ic / p.group, ocg = p.oc / p.group;
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t g = 0; g < p.group; ++g)
      for (int64_t o = 0; o < ocg; ++o) {
        const int64_t oc = g * ocg + o;
        float *out = output + (n * p.oc + oc) * oh * ow;
        std::fill(out, out + oh * ow, bias ? bias[oc] : 0.0f);
        for (int64_t i = 0; i < icg; ++i) {
          const float *in = input + (n * p.ic + g * icg + i) * p.ih * p.iw;
          const float *w = filter + (oc * icg + i) * p.kh * p.kw;
          for (int64_t ky = 0; ky < p.kh; ++ky)
            for (int64_t kx = 0; kx < p.kw; ++kx) {
              const float wv = w[ky * p.kw + kx];
              for (int64_t y = 0; y < oh; ++y) {
                const int64_t iy = y * p.sh - p.pt + ky * p.dh;
                if (iy < 0 || iy >= p.ih)
                  continue;
                const float *row = in + iy * p.iw;
                float *orow = out + y * ow;
                for (int64_t x = 0; x < ow; ++x) {
                  const int64_t ix = x * p.sw - p.pl + kx * p.dw;
                  if (ix >= 0 && ix < p.iw)
                    orow[x] += wv * row[ix];
                }
              }
            }
        }
      }
  if (p.doRelu)
    relu(output, p.n * p.oc * oh * ow, p.reluLimit);
}

void broadcastBinary(const float *a, llvm::ArrayRef<int64_t> aShape,
                     const float *b, llvm::ArrayRef<int64_t> bShape,
                     float *out, llvm::ArrayRef<int64_t> outShape,
                     const std::function<float(float, float)> &f) {
  const size_t rank = outShape.size();
  // Strides of each input in output coordinates (0 along broadcast dims).
  llvm::SmallVector<int64_t> sa(rank, 0), sb(rank, 0);
  auto strides = [&](llvm::ArrayRef<int64_t> shape,
                     llvm::SmallVectorImpl<int64_t> &s) {
    int64_t acc = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      size_t d = shape.size() - 1 - i, o = rank - 1 - i;
      s[o] = shape[d] == 1 ? 0 : acc;
      acc *= shape[d];
    }
  };
  strides(aShape, sa);
  strides(bShape, sb);
  int64_t total = 1;
  for (int64_t d : outShape)
    total *= d;
  llvm::SmallVector<int64_t> idx(rank, 0);
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

} // namespace tpuc
