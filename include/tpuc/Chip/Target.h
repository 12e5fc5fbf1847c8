//===- Target.h - Chip target description -----------------------*- C++ -*-===//
//
// A Target describes the machine the compiler targets and the simulator
// models: lane count, local memory, execution units, clock, DDR and the
// per-instruction cost parameters. It is loaded from the JSON files in
// chips/ (documented in docs/target.md) and embedded verbatim in every
// bmodel.
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_CHIP_TARGET_H
#define TPUC_CHIP_TARGET_H

#include "tpuc/Chip/DType.h"
#include "tpuc/Chip/Status.h"

#include <cstdint>
#include <string>

namespace tpuc {
namespace chip {

constexpr uint32_t kTargetFormatVersion = 1;

struct Target {
  std::string name;
  std::string description;
  double clock_mhz = 1000.0;

  // Lanes (NPUs) and their local memory.
  uint32_t lanes = 16;
  uint32_t lmem_bytes_per_lane = 64 * 1024;
  uint32_t lmem_banks = 16;

  // Multiply-accumulates per cycle per lane, by operand dtype. INT32 and
  // UINT8 operations use the F32 and INT8 figures respectively.
  uint32_t eu_f32 = 16;
  uint32_t eu_f16 = 32;
  uint32_t eu_bf16 = 32;
  uint32_t eu_int8 = 64;

  // External memory.
  uint64_t ddr_bytes = 256ull << 20;
  double ddr_bytes_per_cycle = 8.0;
  uint32_t ddr_latency_cycles = 200;
  uint32_t ddr_burst_bytes = 64;

  // GDMA engine.
  uint32_t gdma_issue_cycles = 30;
  double gdma_lmem_bytes_per_cycle = 64.0; // LMEM -> LMEM copies
  // Requests in flight: a request occupies the engine for its issue and
  // transfer cycles; its DDR latency overlaps the next ones, up to this many
  // outstanding requests (1: every request waits for the previous one).
  uint32_t gdma_queue_depth = 1;

  // TIU engine.
  uint32_t tiu_issue_cycles = 16;
  double tiu_sfu_factor = 4.0;     // transcendental activations
  double tiu_div_factor = 4.0;     // division / reciprocal
  uint32_t bank_conflict_pct = 50; // extra compute cycles on conflict

  /// Execution units (MACs / cycle / lane) used for an operand dtype.
  uint32_t euFor(DType t) const;
  uint64_t lmemTotalBytes() const {
    return static_cast<uint64_t>(lanes) * lmem_bytes_per_lane;
  }
  uint32_t bankBytes() const { return lmem_bytes_per_lane / lmem_banks; }
  /// Validates ranges (non-zero lanes, power-of-two banks dividing LMEM...).
  Status validate() const;
  /// Canonical JSON serialization (round-trips through parseTarget).
  std::string toJson() const;
};

Status parseTarget(const std::string &json, Target &out);
Status loadTarget(const std::string &path, Target &out);

} // namespace chip
} // namespace tpuc

#endif
