//===- DType.h - Element types understood by the chip -----------*- C++ -*-===//
#ifndef TPUC_CHIP_DTYPE_H
#define TPUC_CHIP_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace tpuc {
namespace chip {

// Values are part of the binary ISA/bmodel encoding: never renumber.
enum class DType : uint8_t {
  Invalid = 0,
  F32 = 1,
  F16 = 2,
  BF16 = 3,
  INT8 = 4,
  UINT8 = 5,
  INT32 = 6,
};

inline bool isValidDType(uint8_t v) { return v >= 1 && v <= 6; }

inline size_t dtypeSize(DType t) {
  switch (t) {
  case DType::F32:
  case DType::INT32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::INT8:
  case DType::UINT8:
    return 1;
  default:
    return 0;
  }
}

inline bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}
inline bool isInt(DType t) {
  return t == DType::INT8 || t == DType::UINT8 || t == DType::INT32;
}

inline const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::INT8:
    return "int8";
  case DType::UINT8:
    return "uint8";
  case DType::INT32:
    return "int32";
  default:
    return "invalid";
  }
}

/// Parses the lower-case names produced by dtypeName(); returns Invalid on
/// anything else.
inline DType parseDType(const std::string &s) {
  for (uint8_t v = 1; v <= 6; ++v)
    if (s == dtypeName(static_cast<DType>(v)))
      return static_cast<DType>(v);
  return DType::Invalid;
}

} // namespace chip
} // namespace tpuc

#endif
