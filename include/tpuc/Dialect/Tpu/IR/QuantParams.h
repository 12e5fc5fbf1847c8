//===- QuantParams.h - INT8 parameters derived from quantized types -*- C++ -*-//
//
// The integer semantics of INT8 Tpu ops whose requantization is not stored
// as a weight (Add, Sub, Mul, AvgPool, Requant) are fixed by the scales and
// zero points of their types. This header derives the multipliers and
// shifts once, for the lowering, the Tpu interpreter and the codegen alike,
// and states each op's arithmetic as the integer steps the chip executes
// (QuantMath.h provides requantize and rounding). Rounding is half away from
// zero everywhere.
//
//   Add/Sub: acc = (l - zl) * ml +/- (r - zr) * mr   (exact, |acc| < 2^30)
//            relu: acc = max(acc, 0)
//            out = requantize(acc, 1, shift, zo)
//   Mul:     acc = (l - zl) * (r - zr); relu; out = requantize(acc, m, s, zo)
//   AvgPool: a = (x - zi) * m; avg = divRound(sum of a over the window,
//            count); out = requantize(avg, 1, shift, zo)
//   Requant: out = requantize(x - zi, m, s, zo)
//   Conv/MatMul: out = requantize(acc, m[c], s[c], zo) with (m, s) from the
//            op's `quant` weight, made by quantizeMultiplier.
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_DIALECT_TPU_IR_QUANTPARAMS_H
#define TPUC_DIALECT_TPU_IR_QUANTPARAMS_H

#include "tpuc/Chip/QuantMath.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

namespace tpu {

constexpr tpuc::chip::RoundMode kQuantRound =
    tpuc::chip::RoundMode::HalfAwayFromZero;

/// Scale and zero point of a per-tensor quantized element type.
struct QParams {
  double scale = 1.0;
  int32_t zp = 0;
};

inline mlir::quant::UniformQuantizedType uniformType(mlir::Type t) {
  return llvm::dyn_cast<mlir::quant::UniformQuantizedType>(
      mlir::getElementTypeOrSelf(t));
}
inline bool isQuantized(mlir::Type t) {
  return llvm::isa<mlir::quant::QuantizedType>(mlir::getElementTypeOrSelf(t));
}
inline QParams qparams(mlir::Type t) {
  auto q = uniformType(t);
  return q ? QParams{q.getScale(), int32_t(q.getZeroPoint())} : QParams{};
}

/// real ~= multiplier / 2^shift with multiplier in [2^30, 2^31) (31 bits of
/// precision); real <= 0 gives (0, 0). The shift is clamped to [0, 62].
inline std::pair<int32_t, int> quantizeMultiplier(double real) {
  if (!(real > 0))
    return {0, 0};
  int exp;
  double frac = std::frexp(real, &exp); // real = frac * 2^exp, frac in [.5, 1)
  int64_t m = std::llround(frac * double(int64_t(1) << 31));
  if (m == (int64_t(1) << 31)) {
    m /= 2;
    ++exp;
  }
  int shift = 31 - exp;
  while (shift > 62) { // tiny scales: give up precision, not range
    m >>= 1;
    --shift;
  }
  while (shift < 0) { // huge scales saturate anyway
    shift = 0;
    m = INT32_MAX;
  }
  return {int32_t(m), shift};
}

/// Multipliers of `n` rescaled operands sharing one shift: m_i =
/// round(ratio_i * 2^shift) with the largest below 2^20, so (q - zp) * m
/// (|q - zp| <= 255) stays below 2^28 and a sum of two below 2^29.
struct SharedShift {
  int32_t m[2] = {0, 0};
  int shift = 0;
};
inline SharedShift sharedShift(double r0, double r1 = 0) {
  SharedShift p;
  double big = std::max(r0, r1);
  if (!(big > 0))
    return p;
  int exp;
  std::frexp(big, &exp); // big in [2^(exp-1), 2^exp)
  p.shift = std::clamp(20 - exp, 0, 62);
  p.m[0] = int32_t(std::llround(std::ldexp(r0, p.shift)));
  p.m[1] = int32_t(std::llround(std::ldexp(r1, p.shift)));
  return p;
}

/// Add/Sub: (ml, mr, shift) from the operand and result types.
inline SharedShift addParams(QParams l, QParams r, QParams o) {
  return sharedShift(l.scale / o.scale, r.scale / o.scale);
}
/// AvgPool: m = m[0] and shift.
inline SharedShift avgPoolParams(QParams in, QParams out) {
  return sharedShift(in.scale / out.scale);
}
inline std::pair<int32_t, int> mulParams(QParams l, QParams r, QParams o) {
  return quantizeMultiplier(l.scale * r.scale / o.scale);
}
inline std::pair<int32_t, int> requantParams(QParams in, QParams out) {
  return quantizeMultiplier(in.scale / out.scale);
}

/// Quantization of one real value (QuantCast's arithmetic, in float32).
inline int64_t quantizeF32(float x, QParams p) {
  float inv = float(1.0 / p.scale);
  float y = x * inv;
  y = y + float(p.zp);
  return tpuc::chip::roundToInt(y, kQuantRound, tpuc::chip::DType::INT8);
}
inline float dequantizeF32(int64_t q, QParams p) {
  return float(q - p.zp) * float(p.scale);
}

/// The 256-entry table (indexed by the input's byte) of an INT8 -> INT8
/// function: `fn` evaluates it in float on the dequantized inputs, and its
/// results are quantized to `out`. `round` rounds each float on both sides,
/// as a float island between the two casts would.
inline mlir::FailureOr<std::array<int8_t, 256>>
int8Table(QParams in, QParams out,
          llvm::function_ref<mlir::LogicalResult(const float *, float *)> fn,
          llvm::function_ref<float(float)> round = [](float v) { return v; }) {
  float x[256], y[256];
  for (int v = -128; v < 128; ++v)
    x[uint8_t(int8_t(v))] = round(dequantizeF32(v, in));
  if (mlir::failed(fn(x, y)))
    return mlir::failure();
  std::array<int8_t, 256> table;
  for (int i = 0; i < 256; ++i)
    table[i] = int8_t(quantizeF32(round(y[i]), out));
  return table;
}

} // namespace tpu
#endif
