#ifndef TPUC_DIALECT_TPU_IR_TPUUTILS_H
#define TPUC_DIALECT_TPU_IR_TPUUTILS_H
// Helpers shared by Tpu verifiers, the Tpu interpreter and the lowering.
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"
#include <cstdint>
#include <optional>

namespace tpu {

/// Functions of tpu.Active.
enum class ActiveMode {
  Relu, Clip, Sigmoid, Tanh, Gelu, GeluTanh, Silu, Erf, Abs, Exp, Log, Sqrt,
  Rsqrt, Pow
};

inline std::optional<ActiveMode> parseActiveMode(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ActiveMode>>(name)
      .Case("relu", ActiveMode::Relu)
      .Case("clip", ActiveMode::Clip)
      .Case("sigmoid", ActiveMode::Sigmoid)
      .Case("tanh", ActiveMode::Tanh)
      .Case("gelu", ActiveMode::Gelu)
      .Case("gelu_tanh", ActiveMode::GeluTanh)
      .Case("silu", ActiveMode::Silu)
      .Case("erf", ActiveMode::Erf)
      .Case("abs", ActiveMode::Abs)
      .Case("exp", ActiveMode::Exp)
      .Case("log", ActiveMode::Log)
      .Case("sqrt", ActiveMode::Sqrt)
      .Case("rsqrt", ActiveMode::Rsqrt)
      .Case("pow", ActiveMode::Pow)
      .Default(std::nullopt);
}

constexpr llvm::StringLiteral kActiveModeNames =
    "relu, clip, sigmoid, tanh, gelu, gelu_tanh, silu, erf, abs, exp, log, "
    "sqrt, rsqrt, pow";

/// Output size of a Tpu conv or pool dim (floor rounding; pads already hold
/// any ceil_mode extension).
inline int64_t windowedSize(int64_t in, int64_t padBegin, int64_t padEnd,
                            int64_t window, int64_t stride) {
  return (in + padBegin + padEnd - window) / stride + 1;
}

/// Element types a Tpu module computes in (convert-top-to-tpu's `mode`).
enum class LoweringMode { F32, F16, BF16, INT8 };

inline llvm::StringRef stringifyLoweringMode(LoweringMode mode) {
  switch (mode) {
  case LoweringMode::F32:
    return "F32";
  case LoweringMode::F16:
    return "F16";
  case LoweringMode::BF16:
    return "BF16";
  case LoweringMode::INT8:
    return "INT8";
  }
  return "?";
}

/// Module attributes set by convert-top-to-tpu.
constexpr llvm::StringLiteral kModeAttr = "tpu.mode";
constexpr llvm::StringLiteral kChipAttr = "tpu.chip";

} // namespace tpu
#endif
