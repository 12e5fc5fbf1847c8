//===- LayerGroup.cpp - Partition the network into layer groups -----------===//
//
// Greedy over the entry function in program order: a run of consecutive ops
// that can run LMEM-resident grows while planLayerGroup still places all of
// its tensors and the cost model says the op is faster in the run than on
// its own; an op that cannot join, does not fit or does not pay closes the
// run. Runs of two or more ops become groups (a single op gains nothing over
// its own tiled codegen).
//
// Cost model. On its own an op streams its tiles, overlapping DDR traffic
// with compute: max(TIU cycles, DDR bytes / bandwidth) plus the latency of
// its first load and last store. A group saves the DDR round trips of its
// inner tensors but computes whole tensors: its GDMA loads every input and
// weight up front in order of first use, each op starts once its operands
// are in and the previous op is done, and stored results leave after their
// op. A group whose weights take long to load before the TIU can start (a
// large filter on a small chip) is slower than the ops' own pipelines and is
// not formed.
//
//===----------------------------------------------------------------------===//
#include "tpuc/Backend/CodegenInterface.h"
#include "tpuc/Backend/LayerGroup.h"
#include "tpuc/Backend/Passes.h"
#include "tpuc/Backend/Target.h"
#include "tpuc/Support/Module.h"
#include "tpuc/Support/OpHelpers.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <algorithm>

namespace tpuc {
namespace backend {
#define GEN_PASS_DEF_LAYERGROUP
#include "tpuc/Backend/Passes.h.inc"
} // namespace backend
} // namespace tpuc

using namespace mlir;
using namespace tpuc;
using namespace tpuc::backend;
using namespace tpuc::chip;

namespace {

uint64_t tensorBytes(Value v) {
  if (isNone(v) || !isa<ShapedType>(v.getType()))
    return 0;
  return uint64_t(numElements(getShape(v))) * dtypeSize(chipDType(v.getType()));
}

/// TIU cycles of `op` on whole tensors: MACs (or result elements) over the
/// lanes its channels occupy and the dtype's execution units.
double tiuCycles(Operation *op, const Target &t) {
  auto cg = cast<CodegenInterface>(op);
  Value res = op->getResult(0);
  auto shape = getShape(res);
  int64_t work = cg.getMacs();
  if (work == 0)
    work = numElements(shape);
  int64_t c = shape.size() == 4 ? shape[1] : t.lanes;
  double lanes = double(c) / double((c + t.lanes - 1) / t.lanes);
  DType dt = chipDType(op->getOperand(0).getType());
  if (!isFloat(dt) && dt != DType::INT8)
    dt = chipDType(res.getType());
  // Quantized ops add a requant (or rescale) pass over the result.
  double extra = isFloat(chipDType(res.getType())) ? 0 : 2 * numElements(shape);
  return (double(work) + extra) / lanes / double(t.euFor(dt)) + t.tiu_issue_cycles;
}

/// Share of the shorter of compute and DDR traffic an op's own pipeline
/// fails to hide.
constexpr double kSoloOverlapLoss = 0.5;

/// Cycles of `op` with its own tiled codegen.
double soloCycles(Operation *op, const Target &t) {
  uint64_t bytes = tensorBytes(op->getResult(0));
  for (Value v : op->getOperands())
    bytes += tensorBytes(v);
  double ddr = double(bytes) / t.ddr_bytes_per_cycle, tiu = tiuCycles(op, t);
  // Tiles overlap imperfectly: the first load and the last store are not
  // hidden, and tiles small enough to double-buffer cost per-tile overhead.
  return std::max(tiu, ddr) + kSoloOverlapLoss * std::min(tiu, ddr) +
         2.0 * (t.ddr_latency_cycles + t.gdma_issue_cycles);
}

/// Cycles of `ops` as one group (see the file comment).
double groupCycles(ArrayRef<Operation *> ops, const Target &t) {
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  llvm::SmallPtrSet<void *, 16> loaded;
  const double bw = t.ddr_bytes_per_cycle,
               fixed = t.ddr_latency_cycles + t.gdma_issue_cycles;
  double gdma = 0, tiu = 0;
  std::vector<double> ready(ops.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    for (Value v : ops[k]->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (tensorBytes(v) == 0 || (def && members.contains(def)) ||
          !loaded.insert(v.getAsOpaquePointer()).second)
        continue;
      gdma += tensorBytes(v) / bw + t.gdma_issue_cycles;
    }
    ready[k] = gdma + t.ddr_latency_cycles;
  }
  double end = 0;
  for (size_t k = 0; k < ops.size(); ++k) {
    tiu = std::max(tiu, ready[k]) + tiuCycles(ops[k], t);
    Value res = ops[k]->getResult(0);
    if (llvm::any_of(res.getUsers(),
                     [&](Operation *u) { return !members.contains(u); }) ||
        res.use_empty()) {
      gdma = std::max(gdma, tiu) + tensorBytes(res) / bw;
      end = std::max(end, gdma + fixed);
    }
  }
  return std::max(end, tiu);
}

struct LayerGroupPass
    : public tpuc::backend::impl::LayerGroupBase<LayerGroupPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerCodegenExternalModels(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    chip::Target target;
    if (failed(loadChip(module, chip, target)))
      return signalPassFailure();
    func::FuncOp func = getEntryFunction(module);
    if (!func)
      return;
    auto i64 = IntegerType::get(module.getContext(), 64);
    int64_t next = 0;
    SmallVector<Operation *> run;
    auto close = [&]() {
      if (run.size() >= 2) {
        for (Operation *op : run)
          op->setAttr(kGroupAttr, IntegerAttr::get(i64, next));
        ++next;
      }
      run.clear();
    };
    for (Operation &op : func.getBody().front().without_terminator()) {
      if (!isa<tpu::TpuDialect>(op.getDialect()))
        continue;
      op.removeAttr(kGroupAttr);
      if (!canJoinLayerGroup(&op)) {
        close();
        continue;
      }
      double before = run.empty() ? 0 : groupCycles(run, target);
      run.push_back(&op);
      bool fits = (maxOps <= 0 || int64_t(run.size()) <= maxOps) &&
                  succeeded(planLayerGroup(run, target));
      bool pays = run.size() == 1 ||
                  groupCycles(run, target) <=
                      (run.size() == 2 ? soloCycles(run[0], target) : before) +
                          soloCycles(&op, target);
      if (fits && pays)
        continue;
      run.pop_back();
      close();
      run.push_back(&op);
      if (failed(planLayerGroup(run, target)))
        run.clear(); // too big even alone: its own codegen tiles it
    }
    close();
  }
};

} // namespace
