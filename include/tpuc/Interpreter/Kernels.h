#ifndef TPUC_INTERPRETER_KERNELS_H
#define TPUC_INTERPRETER_KERNELS_H
// Float reference kernels shared by the Top and Tpu interpreters. Buffers are
// dense row-major float32. Kernels trust their shape arguments (ops verify
// them); data-dependent errors (e.g. a bad gather index) are reported back.
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

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

/// out[i] = f(in[i]).
template <typename F>
void unaryMap(const float *in, float *out, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = f(in[i]);
}

/// In-place ReLU, clamped at `limit` when limit >= 0.
void relu(float *data, int64_t n, double limit = -1.0);

float sigmoid(float x);

/// x >= 0 ? x : alpha * x (ONNX LeakyRelu; PRelu with a scalar slope).
inline float leakyRelu(float x, float alpha) {
  return x >= 0.f ? x : alpha * x;
}
/// clamp(alpha * x + beta, 0, 1), NaN propagating (ONNX HardSigmoid).
inline float hardSigmoid(float x, float alpha, float beta) {
  float y = alpha * x + beta;
  return y < 0.f ? 0.f : (y > 1.f ? 1.f : y);
}
/// ONNX HardSwish: x * hardSigmoid(x) with alpha 1/6 and beta 1/2.
constexpr float kHardSwishAlpha = 1.0f / 6.0f, kHardSwishBeta = 0.5f;
inline float hardSwish(float x) {
  return x * hardSigmoid(x, kHardSwishAlpha, kHardSwishBeta);
}
/// x * Phi(x), exact (erf) or with the tanh approximation.
float gelu(float x, bool tanhForm);

/// Element types a Cast converts to; values stay carried as float.
enum class CastKind { F32, F16, BF16, I32, I8, UI8, Bool };
std::optional<CastKind> parseCastKind(llvm::StringRef name);
/// Integers truncate toward zero and saturate (NaN becomes 0); f16/bf16
/// round to nearest even; bool is x != 0.
float castValue(float x, CastKind kind);

/// numpy matmul of [..., M, K] by [..., K, N] with broadcast batch dims into
/// `outShape` [..., M, N]; `bias` (N values, may be null) is added.
/// The same products accumulated in double, without bias (exact for the
/// integral values of quantized operands).
void matmulDouble(const float *a, llvm::ArrayRef<int64_t> aShape,
                  const float *b, llvm::ArrayRef<int64_t> bShape, double *out,
                  llvm::ArrayRef<int64_t> outShape);
void matmul(const float *a, llvm::ArrayRef<int64_t> aShape, const float *b,
            llvm::ArrayRef<int64_t> bShape, const float *bias, float *out,
            llvm::ArrayRef<int64_t> outShape);

/// Normalizes each of `outer` rows of `inner` values; `weight`/`bias`
/// (`inner` values each) may be null.
void layerNorm(const float *x, const float *weight, const float *bias,
               int64_t outer, int64_t inner, float eps, float *out);

/// Softmax over the middle dim of an [outer, dim, inner] view.
void softmax(const float *x, int64_t outer, int64_t dim, int64_t inner,
             float *out);

/// 2-D pooling over `planes` (N*C) planes; a 1-D pool has ih = kh = 1.
struct PoolParams {
  int64_t planes, ih, iw, oh, ow, kh, kw, sh, sw, pt, pl, pb, pr;
  bool countIncludePad = false;
};
void maxPool2d(const PoolParams &p, const float *in, float *out);
void avgPool2d(const PoolParams &p, const float *in, float *out);

enum class ReduceMode { Sum, Mean, Max, Min };
std::optional<ReduceMode> parseReduceMode(llvm::StringRef name);
/// Reduces the dims with `reduced[d]` set; `out` has those dims as size 1.
void reduce(const float *in, llvm::ArrayRef<int64_t> shape,
            llvm::ArrayRef<bool> reduced, ReduceMode mode, float *out);

/// Output dim i is input dim order[i].
void permute(const float *in, llvm::ArrayRef<int64_t> shape,
             llvm::ArrayRef<int64_t> order, float *out);

/// Concatenates [outer, axisDims[i], inner] views along the middle dim.
void concat(llvm::ArrayRef<const float *> ins, llvm::ArrayRef<int64_t> axisDims,
            int64_t outer, int64_t inner, float *out);

/// out[i...] = in[starts[d] + i[d] * steps[d] ...] for every dim d; starts
/// must be valid indices for every non-empty output dim.
void stridedSlice(const float *in, llvm::ArrayRef<int64_t> shape,
                  llvm::ArrayRef<int64_t> starts, llvm::ArrayRef<int64_t> steps,
                  llvm::ArrayRef<int64_t> outShape, float *out);

/// Takes [outer, dim, inner] slices at `indices` (integral floats, negative
/// from the end). Returns the position of the first index that is out of
/// range or not integral, or std::nullopt on success.
std::optional<int64_t> gather(const float *in, int64_t outer, int64_t dim,
                              int64_t inner, const float *indices,
                              int64_t numIndices, float *out);

enum class PadMode { Constant, Reflect, Edge };
std::optional<PadMode> parsePadMode(llvm::StringRef name);
/// `pads` holds the begin pad of every dim then the end pads (all >= 0);
/// reflect needs every pad smaller than its dim, edge a non-empty dim.
void pad(const float *in, llvm::ArrayRef<int64_t> shape,
         llvm::ArrayRef<int64_t> pads, PadMode mode, float value, float *out);

/// Nearest-neighbour upsampling of `planes` HxW planes by integer scales.
void upsampleNearest(const float *in, int64_t planes, int64_t h, int64_t w,
                     int64_t scaleH, int64_t scaleW, float *out);

/// Transposed convolution: input [N, IC, IH, IW], filter [IC, OC/group,
/// KH, KW] (ONNX ConvTranspose), optional bias; input pixel (ih, iw) lands
/// on output (ih*sh - pt + kh*dh, iw*sw - pl + kw*dw). oh/ow include the
/// output padding.
struct DeconvParams {
  int64_t n, ic, ih, iw, oc, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, group;
  bool doRelu = false;
};
void deconv2d(const DeconvParams &p, const float *input, const float *filter,
              const float *bias, float *output);

/// Resize along one axis as an [outLen, inLen] matrix whose row i holds the
/// weights output i gives each input (ONNX Resize, antialias off).
enum class ResizeMode { Linear, Nearest };
enum class ResizeCoord { HalfPixel, PytorchHalfPixel, AlignCorners, Asymmetric };
enum class NearestRound { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };
std::optional<ResizeMode> parseResizeMode(llvm::StringRef name);
std::optional<ResizeCoord> parseResizeCoord(llvm::StringRef name);
std::optional<NearestRound> parseNearestRound(llvm::StringRef name);
std::vector<float> resizeMatrix(int64_t inLen, int64_t outLen, double scale,
                                ResizeMode mode, ResizeCoord coord,
                                NearestRound round);
/// out[p] = ah [oh, h] x in[p] [h, w] x aw^T for `planes` planes (H first,
/// then W: the order the chip computes in).
void resizeSeparable(const float *in, int64_t planes, int64_t h, int64_t w,
                     const float *ah, int64_t oh, const float *aw, int64_t ow,
                     float *out);

} // namespace tpuc
#endif
