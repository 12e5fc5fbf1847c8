//===- RecomputeScaledMap.cpp - Recompute maps scaled by their own pool ---===//
//
// y = Mul(m, s) where s ([N, C, 1, 1]) is computed from m (squeeze-
// excitation): the multiply reads a copy of the chain of ops producing m
// from its frontier (tensors at most half m's size, inputs, weights), when
// the TIU cycles of the copy are fewer than the DDR cycles of storing m and
// reading it back, less those of reading the frontier again.
//
//===----------------------------------------------------------------------===//
#include "tpuc/Backend/Codegen.h"
#include "tpuc/Backend/CodegenInterface.h"
#include "tpuc/Backend/LayerGroup.h"
#include "tpuc/Backend/Passes.h"
#include "tpuc/Backend/Target.h"
#include "tpuc/Support/OpHelpers.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace tpuc {
namespace backend {
#define GEN_PASS_DEF_RECOMPUTESCALEDMAP
#include "tpuc/Backend/Passes.h.inc"
} // namespace backend
} // namespace tpuc

using namespace mlir;
using namespace tpuc;
using namespace tpuc::backend;

namespace {

/// Most ops copied for one map.
constexpr size_t kMaxChain = 12;
/// Most ops searched backwards from a scale for the map it reduces.
constexpr size_t kMaxScaleSlice = 32;
/// The DDR cycles saved must exceed the TIU cycles added this many times
/// (the copy may not share a layer group with the multiply).
constexpr double kMargin = 3.0;

uint64_t bytesOf(Value v) {
  return uint64_t(numElements(getShape(v))) * chip::dtypeSize(chipDType(v.getType()));
}

bool is4d(Value v) { return isRanked(v) && getShape(v).size() == 4; }

/// Whether `m` is among the values `s` is computed from (a bounded search).
bool dependsOn(Value s, Value m) {
  SmallVector<Value> work{s};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (v == m)
      return true;
    Operation *d = v.getDefiningOp();
    if (!d || !seen.insert(d).second || seen.size() > kMaxScaleSlice)
      continue;
    llvm::append_range(work, d->getOperands());
  }
  return false;
}

/// The ops producing `m` from its frontier, in program order; empty when
/// any of them cannot join a layer group or there are too many.
SmallVector<Operation *> chainOf(Value m, SmallVectorImpl<Value> &frontier) {
  llvm::SetVector<Operation *> chain;
  SmallVector<Value> work{m};
  const uint64_t limit = bytesOf(m) / 2;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *d = v.getDefiningOp();
    if (d && isa<top::WeightOp, top::NoneOp>(d))
      continue;
    if (v != m && (!d || !is4d(v) || bytesOf(v) <= limit ||
                   !isa<tpu::TpuDialect>(d->getDialect()))) {
      if (!llvm::is_contained(frontier, v))
        frontier.push_back(v);
      continue;
    }
    if (!d || chain.contains(d))
      continue;
    if (!canJoinLayerGroup(d) || d->getNumResults() != 1 ||
        chain.size() >= kMaxChain)
      return {};
    chain.insert(d);
    llvm::append_range(work, d->getOperands());
  }
  SmallVector<Operation *> ops(chain.begin(), chain.end());
  llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ops;
}

struct RecomputeScaledMapPass
    : public tpuc::backend::impl::RecomputeScaledMapBase<RecomputeScaledMapPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerCodegenExternalModels(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    chip::Target target;
    FailureOr<func::FuncOp> entry = loadChipAndEntry(module, chip, target);
    if (failed(entry))
      return signalPassFailure();
    func::FuncOp func = *entry;
    if (!func)
      return;
    SmallVector<tpu::MulOp> muls;
    func.walk([&](tpu::MulOp mul) {
      if (mul->getParentOp() == func.getOperation())
        muls.push_back(mul);
    });
    for (tpu::MulOp mul : muls) {
      for (unsigned i = 0; i < 2; ++i) {
        Value m = mul->getOperand(i), s = mul->getOperand(1 - i);
        if (!is4d(m) || !is4d(s) || getShape(s)[2] != 1 || getShape(s)[3] != 1 ||
            getShape(m)[2] * getShape(m)[3] == 1 ||
            !chip::isFloat(chipDType(m.getType())) || !dependsOn(s, m))
          continue;
        SmallVector<Value> frontier;
        SmallVector<Operation *> chain = chainOf(m, frontier);
        if (chain.empty())
          continue;
        // TIU cycles of the copy against the DDR cycles it saves.
        const double peak =
            double(target.lanes) * target.euFor(chipDType(m.getType()));
        double tiu = 0;
        for (Operation *op : chain) {
          int64_t macs = cast<CodegenInterface>(op).getMacs();
          tiu += macs ? double(macs)
                      : target.tiu_sfu_factor * numElements(getShape(op->getResult(0)));
        }
        tiu /= peak;
        double ddr = 2.0 * bytesOf(m);
        for (Value v : frontier)
          ddr -= bytesOf(v);
        ddr /= target.ddr_bytes_per_cycle;
        if (ddr <= kMargin * tiu)
          continue;
        OpBuilder b(mul);
        IRMapping map;
        for (Operation *op : chain) {
          Operation *copy = b.clone(*op, map);
          copy->setAttr(kRecomputedAttr, b.getUnitAttr());
          std::string name = tpuc::getOpName(op);
          if (!name.empty())
            copy->setLoc(NameLoc::get(b.getStringAttr(name + "_recomputed")));
        }
        mul->setOperand(i, map.lookup(m));
        break;
      }
    }
  }
};

} // namespace
