//===- CModel.h - Functional + timing simulator of the chip ----*- C++ -*-===//
//
// Executes TIU and GDMA instruction streams on simulated DDR and LMEM byte
// arrays. The two engines run in parallel; an instruction starts when its
// engine is free and the instruction it waits for (wait_id) has completed.
// Instructions read their operands at their start cycle and their results
// become visible at their end cycle, so a missing wait shows up both in the
// timing and in the data read.
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_CHIP_CMODEL_H
#define TPUC_CHIP_CMODEL_H

#include "tpuc/Chip/ISA.h"
#include "tpuc/Chip/Status.h"
#include "tpuc/Chip/Target.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tpuc {
namespace chip {

struct InstRecord {
  Engine engine;
  uint32_t id;
  std::string name; // instructionName()
  uint64_t start, end; // cycles
  uint64_t work;       // MACs or elements or bytes, see docs/isa.md
  bool bank_conflict = false;
};

struct RunStats {
  uint64_t total_cycles = 0;
  uint64_t tiu_busy_cycles = 0, gdma_busy_cycles = 0;
  uint64_t tiu_instructions = 0, gdma_instructions = 0;
  uint64_t macs = 0;            // multiply-accumulates executed by TIU
  uint64_t gdma_bytes = 0;      // bytes moved by GDMA
  uint64_t bank_conflicts = 0;
  double clock_mhz = 0;
  std::vector<InstRecord> records; // in start order
  double tiuUtilization() const {
    return total_cycles ? double(tiu_busy_cycles) / total_cycles : 0.0;
  }
  double gdmaUtilization() const {
    return total_cycles ? double(gdma_busy_cycles) / total_cycles : 0.0;
  }
  double microseconds() const {
    return clock_mhz > 0 ? double(total_cycles) / clock_mhz : 0.0;
  }
};

/// Cycle cost the timing model assigns to one (valid) instruction.
uint64_t instructionCycles(const Instruction &inst, const Target &t,
                           uint64_t *work = nullptr,
                           bool *bank_conflict = nullptr);
/// Cycles of a GDMA request's cost that overlap later requests when the
/// queue keeps several in flight (the DDR latency); 0 for TIU instructions.
uint64_t gdmaOverlappedCycles(const Instruction &inst, const Target &t);

struct MemView; // operand addressing of the functional kernels

/// Frees the simulated memories (mapped: the size of their mapping, 0 for
/// heap memory).
struct MemoryRelease {
  uint64_t mapped = 0;
  void operator()(uint8_t *p) const;
};

class CModel {
public:
  /// Called after an instruction's results are committed.
  using CommitHook = std::function<void(Engine, uint32_t id)>;

  CModel() = default;
  /// Allocates zeroed DDR and LMEM. Fails (no abort) if allocation fails.
  Status init(const Target &t, uint64_t ddr_bytes);

  const Target &target() const { return target_; }
  uint8_t *ddr() { return ddr_.get(); }
  uint64_t ddrSize() const { return ddr_size_; }
  uint8_t *lmem() { return lmem_.get(); } // lane-major: lane * bytes_per_lane
  uint64_t lmemSize() const { return target_.lmemTotalBytes(); }

  Status writeDdr(uint64_t addr, const void *data, uint64_t n);
  Status readDdr(uint64_t addr, void *data, uint64_t n) const;

  /// Validates and executes both streams. DDR operands may touch
  /// [0, ddrSize()) unless `regions` narrows that.
  Status run(const std::vector<Instruction> &tiu,
             const std::vector<Instruction> &gdma, RunStats &stats,
             const CommitHook &hook = CommitHook(),
             const std::vector<DdrRegion> *regions = nullptr);

  /// Times both streams as run() does, without their data (no memory is
  /// needed): what a compiler weighing two instruction streams asks.
  static Status time(const Target &t, const std::vector<Instruction> &tiu,
                     const std::vector<Instruction> &gdma,
                     const std::vector<DdrRegion> &regions, RunStats &stats);

private:
  struct Pending;
  /// Computes the result of `inst` into out's buffer.
  Status compute(const Instruction &inst, Pending &out);
  /// Writes p's result to memory (computing it there if it runs in place)
  /// and keeps its buffer for a later result.
  Status commit(Pending &p);
  /// Whether `inst`, ending at `end`, may compute at its end straight into
  /// its destination: it reads none of it, and none of the results that
  /// commit before its end changes what it reads.
  bool mayRunInPlace(const Instruction &inst, uint64_t end,
                     const std::vector<Pending> &pending) const;
  MemView memView() const;

  using Memory = std::unique_ptr<uint8_t[], MemoryRelease>;
  static Memory allocateZeroed(uint64_t bytes);

  Target target_;
  Memory ddr_, lmem_;
  uint64_t ddr_size_ = 0;
  std::vector<std::vector<uint8_t>> spare_; // result buffers to reuse
  // Test-only fault injection: results of instructions of this name
  // (instructionName or opcode name, from TPUC_CMODEL_FAULT) are corrupted,
  // so tools that compare the chip with a reference can be shown to catch
  // a wrong kernel. Empty: off.
  std::string fault_;
  /// Set by time(): schedule only, no data moved or computed.
  bool timingOnly_ = false;
};

/// Chrome / Perfetto trace (one track per engine, times in microseconds).
std::string traceJson(const RunStats &stats, const std::string &title);
Status writeTrace(const RunStats &stats, const std::string &title,
                  const std::string &path);

} // namespace chip
} // namespace tpuc

#endif
