//===- Float16.h - IEEE half and bfloat16 conversions -----------*- C++ -*-===//
//
// Bit-exact F32 <-> F16 / BF16 conversions with round-to-nearest-even, shared
// by the simulator and the compiler so both produce identical bits.
// NaNs stay NaN (quiet bit forced), overflow rounds to infinity, F16
// subnormals are produced and consumed exactly.
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_CHIP_FLOAT16_H
#define TPUC_CHIP_FLOAT16_H

#include <cstdint>
#include <cstring>

namespace tpuc {
namespace chip {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t f32ToF16(float f) {
  uint32_t x = floatBits(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) { // Inf / NaN
    if (a > 0x7f800000u)
      return sign | 0x7e00u | static_cast<uint16_t>((a >> 13) & 0x3ffu);
    return sign | 0x7c00u;
  }
  // 65520 (= 0x477ff000) is the halfway point between the largest half
  // (65504, odd mantissa) and 2^16, so it and everything above round to Inf.
  if (a >= 0x477ff000u)
    return sign | 0x7c00u;
  if (a < 0x38800000u) { // result is an F16 subnormal or zero
    if (a < 0x33000000u) // below 2^-25: rounds to zero
      return sign;
    uint32_t e = a >> 23;
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e; // value in units of 2^-24 is m >> shift
    uint32_t r = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u)))
      ++r;
    return sign | static_cast<uint16_t>(r);
  }
  uint32_t r = (a - 0x38000000u) >> 13; // rebias exponent 127 -> 15
  uint32_t rem = a & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u)))
    ++r; // a mantissa carry correctly bumps the exponent
  return sign | static_cast<uint16_t>(r);
}

inline float f16ToF32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu;
  uint32_t m = h & 0x3ffu;
  uint32_t out;
  if (e == 0) {
    if (m == 0) {
      out = sign;
    } else { // subnormal: normalise
      uint32_t shift = 0;
      while (!(m & 0x400u)) {
        m <<= 1;
        ++shift;
      }
      m &= 0x3ffu;
      out = sign | ((113u - shift) << 23) | (m << 13);
    }
  } else if (e == 31) {
    out = sign | 0x7f800000u | (m << 13);
  } else {
    out = sign | ((e + 112u) << 23) | (m << 13);
  }
  return bitsToFloat(out);
}

inline uint16_t f32ToBF16(float f) {
  uint32_t x = floatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) // NaN: keep sign and payload top, quiet
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb; // ties go to even; overflow carries into Inf
  return static_cast<uint16_t>(x >> 16);
}

inline float bf16ToF32(uint16_t b) {
  return bitsToFloat(static_cast<uint32_t>(b) << 16);
}

} // namespace chip
} // namespace tpuc

#endif
