//===- Runtime.h - Run a bmodel on the cmodel -------------------*- C++ -*-===//
#ifndef TPUC_CHIP_RUNTIME_H
#define TPUC_CHIP_RUNTIME_H

#include "tpuc/Chip/BModel.h"
#include "tpuc/Chip/CModel.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tpuc {
namespace chip {

struct RunResult {
  std::map<std::string, std::vector<uint8_t>> outputs; // raw bytes per output
  std::map<std::string, std::vector<uint8_t>> tensors; // dumped intermediates
  RunStats stats;
};

class Runtime {
public:
  Status load(const std::string &path);
  Status loadFromMemory(const uint8_t *data, size_t size);
  /// Takes an already built model (validated here).
  Status loadModel(BModel m);
  const BModel &model() const { return model_; }

  /// Called with (committed, total) instructions as a run advances, at most
  /// about a hundred times a run.
  using Progress = std::function<void(uint64_t done, uint64_t total)>;

  /// Runs network `net` with raw input bytes keyed by input name (sizes must
  /// match exactly). With dump_tensors every named tensor is captured when
  /// its producing instruction commits.
  Status run(size_t net, const std::map<std::string, std::vector<uint8_t>> &in,
             bool dump_tensors, RunResult &out, const Progress &progress = Progress());

private:
  /// Brings the simulated memory to the state of a fresh cmodel (weights in
  /// place, everything else zero). The memory is kept between runs, so
  /// later runs clear the activation region and local memory instead of
  /// allocating and faulting in the whole DDR again, and copy the weights
  /// again only after a network that may write to them.
  Status prepareMemory();
  /// What `n` may write: the weight region, and local memory below which
  /// per-lane offset.
  static void scanWrites(const Network &n, const DdrPlan &plan, const Target &t,
                         bool &weights, uint64_t &lmem_end);

  BModel model_;
  bool loaded_ = false;
  CModel sim_;
  bool sim_ready_ = false, weights_intact_ = false;
  uint64_t lmem_dirty_ = 0; // per-lane bytes the last run may have written
};

} // namespace chip
} // namespace tpuc

#endif
