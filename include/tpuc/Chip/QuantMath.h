//===- QuantMath.h - Integer arithmetic shared by chip and compiler -*- C++ -*-//
//
// The single definition of rounding, saturation and requantization. The
// simulator's TIU and the compiler's reference interpreter both include this
// header so that quantized results agree bit for bit. Header-only, no
// dependencies beyond <cstdint>/<cmath>.
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_CHIP_QUANTMATH_H
#define TPUC_CHIP_QUANTMATH_H

#include "tpuc/Chip/DType.h"

#include <cmath>
#include <cstdint>

namespace tpuc {
namespace chip {

// Values are part of the ISA encoding: never renumber.
enum class RoundMode : uint8_t {
  HalfAwayFromZero = 0, // 2.5 -> 3, -2.5 -> -3 (default for requant)
  HalfUp = 1,           // 2.5 -> 3, -2.5 -> -2 (toward +inf on ties)
  HalfToEven = 2,       // 2.5 -> 2, 3.5 -> 4 (IEEE default)
  TowardZero = 3,       // truncation
  Down = 4,             // floor
  Up = 5,               // ceil
};
inline bool isValidRoundMode(int v) { return v >= 0 && v <= 5; }

inline int64_t intMin(DType t) {
  switch (t) {
  case DType::INT8:
    return -128;
  case DType::UINT8:
    return 0;
  case DType::INT32:
    return INT32_MIN;
  default:
    return INT64_MIN;
  }
}
inline int64_t intMax(DType t) {
  switch (t) {
  case DType::INT8:
    return 127;
  case DType::UINT8:
    return 255;
  case DType::INT32:
    return INT32_MAX;
  default:
    return INT64_MAX;
  }
}

/// Clamps v into the range of integer type t.
inline int64_t saturate(int64_t v, DType t) {
  int64_t lo = intMin(t), hi = intMax(t);
  return v < lo ? lo : (v > hi ? hi : v);
}

/// Applies the rounding rule to q + r/2^s where q = floor(x / 2^s) and
/// r in [0, 2^s) is the remainder; `neg` tells the sign of x.
inline int64_t roundQuotient(int64_t q, uint64_t r, uint64_t den, bool neg,
                             RoundMode mode) {
  if (r == 0)
    return q;
  // Compare r with den/2 without overflow: 2r vs den.
  uint64_t twice = r * 2; // r < den <= 2^62 here, so no overflow
  int cmp = twice < den ? -1 : (twice > den ? 1 : 0);
  switch (mode) {
  case RoundMode::HalfAwayFromZero:
    return q + ((cmp > 0 || (cmp == 0 && !neg)) ? 1 : 0);
  case RoundMode::HalfUp:
    return q + (cmp >= 0 ? 1 : 0);
  case RoundMode::HalfToEven:
    return q + ((cmp > 0 || (cmp == 0 && (q & 1))) ? 1 : 0);
  case RoundMode::TowardZero:
    return q + (neg ? 1 : 0);
  case RoundMode::Down:
    return q;
  case RoundMode::Up:
    return q + 1;
  }
  return q;
}

/// x / 2^shift with the given rounding. shift in [0, 62]; shift <= 0 is a
/// (wrapping-free for |x| < 2^31, |shift| <= 31) left shift.
inline int64_t roundingRightShift(int64_t x, int shift, RoundMode mode) {
  if (shift <= 0)
    return x * (int64_t(1) << (-shift));
  uint64_t den = uint64_t(1) << shift;
  int64_t q = x >> shift; // arithmetic shift == floor division
  uint64_t r = static_cast<uint64_t>(x) & (den - 1);
  return roundQuotient(q, r, den, x < 0, mode);
}

/// num / den (den > 0) with the given rounding; used by average pooling and
/// integer mean.
inline int64_t divRound(int64_t num, int64_t den, RoundMode mode) {
  int64_t q = num / den;
  int64_t r = num % den;
  if (r < 0) { // make it floor division with r in [0, den)
    q -= 1;
    r += den;
  }
  return roundQuotient(q, static_cast<uint64_t>(r), static_cast<uint64_t>(den),
                       num < 0, mode);
}

/// Requantizes an INT32 accumulator:
///   out = saturate(zero_point + round((x * multiplier) / 2^shift))
/// The product is formed exactly in 64 bits. shift in [-31, 62]; negative
/// shift multiplies by 2^-shift (with 64-bit saturation before the final
/// clamp not needed because |x * multiplier| < 2^62 and -shift <= 31 is only
/// accepted when the result fits; the simulator validates the range).
inline int64_t requantize(int32_t x, int32_t multiplier, int shift,
                          int32_t zero_point, RoundMode mode, DType out) {
  int64_t prod = static_cast<int64_t>(x) * static_cast<int64_t>(multiplier);
  int64_t v;
  if (shift < 0) {
    // Saturate rather than overflow when scaling up.
    int64_t lim = INT64_MAX >> (-shift);
    if (prod > lim)
      v = INT64_MAX / 2;
    else if (prod < -lim)
      v = INT64_MIN / 2;
    else
      v = prod * (int64_t(1) << (-shift));
  } else {
    v = roundingRightShift(prod, shift, mode);
  }
  // Clamp before adding the zero point to avoid overflow.
  if (v > INT32_MAX)
    v = INT32_MAX;
  if (v < INT32_MIN)
    v = INT32_MIN;
  return saturate(v + zero_point, out);
}

/// Rounds a real value to an integer with the given mode (NaN -> 0), then
/// saturates to type t. Used by casts float -> int.
inline int64_t roundToInt(double v, RoundMode mode, DType t) {
  if (std::isnan(v))
    return 0;
  double lo = static_cast<double>(intMin(t)), hi = static_cast<double>(intMax(t));
  if (v <= lo)
    return intMin(t);
  if (v >= hi)
    return intMax(t);
  double f = std::floor(v);
  double d = v - f; // exact for |v| < 2^52
  int64_t q = static_cast<int64_t>(f);
  if (d == 0.0)
    return q;
  bool neg = v < 0;
  int cmp = d < 0.5 ? -1 : (d > 0.5 ? 1 : 0);
  int64_t r;
  switch (mode) {
  case RoundMode::HalfAwayFromZero:
    r = q + ((cmp > 0 || (cmp == 0 && !neg)) ? 1 : 0);
    break;
  case RoundMode::HalfUp:
    r = q + (cmp >= 0 ? 1 : 0);
    break;
  case RoundMode::HalfToEven:
    r = q + ((cmp > 0 || (cmp == 0 && (q & 1))) ? 1 : 0);
    break;
  case RoundMode::TowardZero:
    r = q + (neg ? 1 : 0);
    break;
  case RoundMode::Down:
    r = q;
    break;
  case RoundMode::Up:
  default:
    r = q + 1;
    break;
  }
  return saturate(r, t);
}

/// Quantizes a real value with scale and zero point: round(v / scale) + zp,
/// saturated to t (half away from zero, as the runtime does for inputs).
inline int64_t quantizeValue(float v, float scale, int32_t zero_point, DType t,
                             RoundMode mode = RoundMode::HalfAwayFromZero) {
  double q = static_cast<double>(v) / static_cast<double>(scale);
  int64_t r = roundToInt(q, mode, DType::INT32);
  return saturate(r + zero_point, t);
}

} // namespace chip
} // namespace tpuc

#endif
