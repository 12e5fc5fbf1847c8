//===- LayerGroup.cpp - Partition the network into layer groups -----------===//
//
// Greedy over the entry function in program order: a run of consecutive ops
// that can run LMEM-resident grows while planLayerGroup still places all of
// its tensors; an op that cannot join, or does not fit, closes the run. Runs
// of two or more ops become groups (a single op gains nothing over its own
// tiled codegen).
//
//===----------------------------------------------------------------------===//
#include "tpuc/Backend/CodegenInterface.h"
#include "tpuc/Backend/LayerGroup.h"
#include "tpuc/Backend/Passes.h"
#include "tpuc/Backend/Target.h"
#include "tpuc/Support/Module.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tpuc {
namespace backend {
#define GEN_PASS_DEF_LAYERGROUP
#include "tpuc/Backend/Passes.h.inc"
} // namespace backend
} // namespace tpuc

using namespace mlir;
using namespace tpuc;
using namespace tpuc::backend;

namespace {

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
      run.push_back(&op);
      bool fits = (maxOps <= 0 || int64_t(run.size()) <= maxOps) &&
                  succeeded(planLayerGroup(run, target));
      if (fits)
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
