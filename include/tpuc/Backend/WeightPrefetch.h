//===- WeightPrefetch.h - Later ops' weights loaded early --------*- C++ -*-===//
//
// An op whose weight loads take longer than its compute (the wide late
// convs of a CNN on a chip with little DDR bandwidth) keeps the DDR busy
// and the TIU waiting, while the compute-bound ops before it leave the DDR
// idle part of the time. A weight prefetch loads the last weight tiles of
// such an op during those ops into the top of every lane's LMEM, reserved
// from the first of them to the op itself (they allocate below it). The
// op's loads of those tiles are not emitted: its TIU instructions read
// them where the prefetch put them (CodegenContext::load and tiu).
//
// The plan is measured, not guessed: units are emitted into scratch
// contexts (dry runs) and timed by the cmodel's timing model (no data).
// The consumer alone gives its exact weight loads; the units from a few
// before the first host to the one after the consumer, with and without a
// prefetch of each reserve size and first host, give the cycles it saves,
// the smaller LMEM's cost to every unit it spans included. The loads go
// out into the GDMA time each host's own schedule leaves idle after its
// requests (CodegenContext::pumpPrefetch), in parts; a tile never issued
// is loaded by the consumer itself, one partly issued completed.
//
// A network whose weight tiles all fit a part of every lane keeps them there
// instead (planResident): every tile loads once, in parts, into the GDMA
// time the whole network leaves idle during each TIU instruction, measured
// on the emission before.
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_BACKEND_WEIGHTPREFETCH_H
#define TPUC_BACKEND_WEIGHTPREFETCH_H
#include "tpuc/Backend/Codegen.h"
#include "tpuc/Chip/CModel.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <map>
#include <optional>

namespace tpuc {
namespace backend {

/// Emits one unit of the network (a tpu.Group or a single op) into a
/// context: beginOp, its codegen, endOp.
using EmitUnitFn =
    llvm::function_ref<mlir::LogicalResult(CodegenContext &, mlir::Operation *)>;

struct PrefetchPlan {
  /// Index of the unit that takes the prefetched tiles.
  size_t consumer = 0;
  /// LMEM bytes per lane reserved at the top of every lane.
  uint64_t reserve = 0;
  std::vector<PrefetchLoad> loads;
  /// Estimated cycles saved.
  double gain = 0;
  /// Every unit's weights (planResident), issued into `idle[t]` cycles
  /// during the network's TIU instruction t.
  bool resident = false;
  std::vector<double> idle;
};

/// Plans weight prefetches over the units of a network, in order.
class WeightPrefetcher {
public:
  /// `weights` is the DDR byte range of the weight blob: only loads from it
  /// (constants) are prefetched.
  WeightPrefetcher(llvm::ArrayRef<mlir::Operation *> units,
                   const chip::Target &target,
                   const std::vector<chip::DdrRegion> &ddr,
                   std::pair<uint64_t, uint64_t> weights, EmitUnitFn emit)
      : units_(units), target_(target), ddr_(ddr), weights_(weights),
        emit_(emit) {}

  /// Plans the prefetches: every weight of the network, when they fit a
  /// part of the lanes and that saves cycles (planResident); else unit by
  /// unit (each one, when none is under way, the one that saves the most
  /// cycles starting before it), kept when the whole network takes fewer
  /// cycles with them.
  void planNetwork();
  /// Emits units[i] into `ctx` (the units in order) with the prefetches
  /// planned.
  mlir::LogicalResult emit(CodegenContext &ctx, size_t i);
  /// The prefetches taken, by the unit they start before.
  const std::map<size_t, PrefetchPlan> &plans() const { return accepted_; }

private:
  /// What a dry run of a unit measured.
  struct DryRun {
    /// Cycles of the unit on its own (the cmodel's timing), the TIU's and
    /// the GDMA's busy cycles.
    double cycles = 0, tiu = 0, gdma = 0;
    /// The GDMA's idle cycles after each of its requests.
    std::vector<double> gdmaGaps;
    /// Its loads from the weight blob: (DDR source, LMEM destination).
    std::vector<std::pair<chip::Operand, chip::Operand>> weightLoads;
  };
  /// Emits units_[i] with `reserve` bytes per lane held back (nullptr: it
  /// does not fit); memoized.
  const DryRun *dryRun(size_t i, uint64_t reserve);
  /// Cycles of the units from a few before `extraFirst` to `last` emitted
  /// in turn with the prefetches taken so far and `extra` (nullptr: none)
  /// starting before unit `extraFirst`; nullopt when one does not fit.
  std::optional<double> prefixCycles(size_t last, const PrefetchPlan *extra,
                                     size_t extraFirst);
  /// The prefetch loads of unit `consumer` (its dry run `cons`) a reserve
  /// of `reserve` bytes per lane holds.
  std::vector<PrefetchLoad> tilesFor(size_t consumer, const DryRun &cons,
                                     uint64_t reserve) const;
  /// Appends `weightLoads` of unit `unit` retargeted into the reserve from
  /// per-lane byte `at` on (advanced); false when they do not fit the lane.
  bool place(size_t unit,
             llvm::ArrayRef<std::pair<chip::Operand, chip::Operand>> weightLoads,
             uint64_t &at, std::vector<PrefetchLoad> &loads) const;
  /// The prefetch of every unit's weight tiles into a reserve of `reserve`
  /// bytes per lane (nullopt when they or a unit do not fit).
  std::optional<PrefetchPlan> residentPlan(uint64_t reserve);
  /// Emits the whole network with resident plan `p` and times it; sets
  /// p.idle to the GDMA's idle time during each TIU instruction, the
  /// prefetch's own loads counted as idle.
  std::optional<double> residentRun(PrefetchPlan &p);
  /// A small network's weights stay in LMEM: each tile loads once, into
  /// its own place in a reserve held through the network, in parts into
  /// the GDMA's idle time (measured over the whole network, run after run),
  /// and is read there by its op. Taken (as the only plan) when that saves
  /// cycles over the whole network.
  bool planResident();
  /// Emits `ctx`'s held-back stores and times its streams on the target
  /// (nullopt when the timing model rejects them); `cycles` takes the total.
  std::optional<chip::RunStats> timed(CodegenContext &ctx) const;
  std::optional<double> cycles(CodegenContext &ctx) const;
  /// GDMA cycles `inst` holds the engine (its DDR latency overlaps).
  double held(const chip::Instruction &inst) const;
  /// Cycles of the whole network emitted with the prefetches (planned as
  /// it goes) or without; nullopt when a unit does not fit.
  std::optional<double> networkCycles(bool prefetch);
  /// Takes the prefetch that saves the most cycles starting before
  /// units[first], if one saves enough.
  void plan(size_t first);
  /// Emits units[i] following the prefetches taken and `extra` (starting
  /// before units[extraFirst]); `active` is the one under way.
  mlir::LogicalResult step(CodegenContext &ctx, size_t i,
                           const PrefetchPlan *&active,
                           const PrefetchPlan *extra, size_t extraFirst);

  llvm::ArrayRef<mlir::Operation *> units_;
  const chip::Target &target_;
  const std::vector<chip::DdrRegion> &ddr_;
  std::pair<uint64_t, uint64_t> weights_;
  EmitUnitFn emit_;
  std::map<std::pair<size_t, uint64_t>, std::optional<DryRun>> runs_;
  /// The prefetches taken, by the unit they start before.
  std::map<size_t, PrefetchPlan> accepted_;
  const PrefetchPlan *active_ = nullptr;
};

} // namespace backend
} // namespace tpuc
#endif
