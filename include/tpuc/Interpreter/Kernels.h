#ifndef TPUC_INTERPRETER_KERNELS_H
#define TPUC_INTERPRETER_KERNELS_H
// Float reference kernels shared by the Top and Tpu interpreters. Buffers are
// dense row-major float32.
#include "llvm/ADT/ArrayRef.h"
#include <cstdint>
#include <functional>

namespace tpuc {

struct ConvParams {
  int64_t n, ic, ih, iw, oc, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, group;
  bool doRelu = false;
  double reluLimit = -1.0;
  int64_t oh() const { return (ih + pt + pb - dh * (kh - 1) - 1) / sh + 1; }
  int64_t ow() const { return (iw + pl + pr - dw * (kw - 1) - 1) / sw + 1; }
};

/// NCHW input, OIHW (I = ic / group) filter, optional bias (may be null).
void conv2d(const ConvParams &p, const float *input, const float *filter,
            const float *bias, float *output);

/// out = f(a, b) elementwise with numpy broadcasting of `aShape` and `bShape`
/// to `outShape`.
void broadcastBinary(const float *a, llvm::ArrayRef<int64_t> aShape,
                     const float *b, llvm::ArrayRef<int64_t> bShape,
                     float *out, llvm::ArrayRef<int64_t> outShape,
                     const std::function<float(float, float)> &f);

/// In-place ReLU, clamped at `limit` when limit >= 0.
void relu(float *data, int64_t n, double limit = -1.0);

} // namespace tpuc
#endif
