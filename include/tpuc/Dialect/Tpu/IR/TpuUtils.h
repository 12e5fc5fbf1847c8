#ifndef TPUC_DIALECT_TPU_IR_TPUUTILS_H
#define TPUC_DIALECT_TPU_IR_TPUUTILS_H
// Helpers shared by Tpu verifiers, the Tpu interpreter and the lowering.
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>

namespace tpu {

/// Functions of tpu.Active.
enum class ActiveMode {
  Relu, Clip, Sigmoid, Tanh, Gelu, GeluTanh, Silu, Erf, Abs, Exp, Log, Sqrt,
  Rsqrt, Pow, LeakyRelu, HardSigmoid, HardSwish
};

/// The optional attributes of tpu.Active, as bits.
enum ActiveAttr : unsigned {
  kActiveMin = 1u << 0,
  kActiveMax = 1u << 1,
  kActiveExponent = 1u << 2,
  kActiveAlpha = 1u << 3,
  kActiveBeta = 1u << 4,
};

/// A mode's name and the attributes it needs (`required`) or may carry
/// (`optional`); the verifier rejects every other attribute.
struct ActiveModeInfo {
  llvm::StringLiteral name;
  ActiveMode mode;
  unsigned required = 0, optional = 0;
};

inline constexpr ActiveModeInfo kActiveModes[] = {
    {"relu", ActiveMode::Relu, 0, kActiveMax},
    {"clip", ActiveMode::Clip, kActiveMin | kActiveMax},
    {"sigmoid", ActiveMode::Sigmoid},
    {"tanh", ActiveMode::Tanh},
    {"gelu", ActiveMode::Gelu},
    {"gelu_tanh", ActiveMode::GeluTanh},
    {"silu", ActiveMode::Silu},
    {"erf", ActiveMode::Erf},
    {"abs", ActiveMode::Abs},
    {"exp", ActiveMode::Exp},
    {"log", ActiveMode::Log},
    {"sqrt", ActiveMode::Sqrt},
    {"rsqrt", ActiveMode::Rsqrt},
    {"pow", ActiveMode::Pow, kActiveExponent},
    {"leaky_relu", ActiveMode::LeakyRelu, kActiveAlpha},
    {"hard_sigmoid", ActiveMode::HardSigmoid, kActiveAlpha | kActiveBeta},
    {"hard_swish", ActiveMode::HardSwish},
};

inline const ActiveModeInfo *lookupActiveMode(llvm::StringRef name) {
  for (const ActiveModeInfo &info : kActiveModes)
    if (info.name == name)
      return &info;
  return nullptr;
}

inline std::optional<ActiveMode> parseActiveMode(llvm::StringRef name) {
  if (const ActiveModeInfo *info = lookupActiveMode(name))
    return info->mode;
  return std::nullopt;
}

/// Output size of a Tpu conv or pool dim (floor rounding; pads already hold
/// any ceil_mode extension).
inline int64_t windowedSize(int64_t in, int64_t padBegin, int64_t padEnd,
                            int64_t window, int64_t stride) {
  return (in + padBegin + padEnd - window) / stride + 1;
}

/// Module attributes set by convert-top-to-tpu.
constexpr llvm::StringLiteral kModeAttr = "tpu.mode";
constexpr llvm::StringLiteral kChipAttr = "tpu.chip";

} // namespace tpu
#endif
