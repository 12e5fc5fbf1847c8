//===- FoldScale.cpp - Constant scales into the linear layer before them --===//
//
// Attention scales its queries and keys by constants after their
// projections, often behind the head split (Reshape, Permute): x W + b,
// split, times c. Each scale is an elementwise instruction over the whole
// tensor; folded into the projection's weight and bias (c W, c b) it costs
// nothing. Only through ops that move every element (Reshape, Permute),
// each the single user of the one before, so the scale reaches the whole
// result of the layer. The layer and the moves between compute other
// values than the model's tensors of their names, so they are renamed
// (`…_scaled`). F32 only.
//
//===----------------------------------------------------------------------===//
#include "tpuc/Backend/Codegen.h"
#include "tpuc/Backend/Passes.h"
#include "tpuc/Backend/Target.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tpuc {
namespace backend {
#define GEN_PASS_DEF_FOLDSCALE
#include "tpuc/Backend/Passes.h.inc"
} // namespace backend
} // namespace tpuc

using namespace mlir;
using namespace tpuc;
using namespace tpuc::backend;

namespace {

/// The value of a one-element F32 weight.
std::optional<float> scalarOf(Value v) {
  auto w = v.getDefiningOp<top::WeightOp>();
  if (!w || !isF32(v) || numElements(getShape(v)) != 1)
    return std::nullopt;
  auto data = w.read();
  if (failed(data))
    return std::nullopt;
  return (**data)[0];
}

struct FoldScalePass
    : public tpuc::backend::impl::FoldScaleBase<FoldScalePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    chip::Target target;
    FailureOr<func::FuncOp> entry = loadChipAndEntry(module, chip, target);
    if (failed(entry))
      return signalPassFailure();
    // New weights go to the module's weight file.
    if (!*entry || !module->hasAttr(kWeightFileAttr))
      return;
    SmallVector<tpu::MulOp> muls;
    entry->walk([&](tpu::MulOp op) { muls.push_back(op); });
    for (tpu::MulOp mul : muls)
      if (failed(fold(mul)))
        return signalPassFailure();
  }

  LogicalResult fold(tpu::MulOp mul) {
    // A returned Mul keeps the graph output's name.
    if (mul.getDoRelu() || !isF32(mul.getOutput()) ||
        llvm::any_of(mul->getUsers(),
                     [](Operation *u) { return isa<func::ReturnOp>(u); }))
      return success();
    for (int i = 0; i < 2; ++i) {
      Value v = mul->getOperand(i);
      auto c = scalarOf(mul->getOperand(1 - i));
      if (!c || !isF32(v) || getShape(v) != getShape(mul.getOutput()))
        continue;
      // Back through single-use moves of every element to the layer.
      SmallVector<Operation *> moves;
      Operation *d = v.getDefiningOp();
      while (d && isa<tpu::ReshapeOp, tpu::PermuteOp>(d) &&
             d->getResult(0).hasOneUse()) {
        moves.push_back(d);
        d = d->getOperand(0).getDefiningOp();
      }
      auto mm = dyn_cast_or_null<tpu::MatMulOp>(d);
      if (!mm || !mm.getOutput().hasOneUse() || mm.getQuant() ||
          !isF32(mm.getOutput()))
        continue;
      Value w = mm.getRight(), b = mm.getBias();
      auto wd = w.getDefiningOp<top::WeightOp>();
      auto bd = isNone(b) ? top::WeightOp() : b.getDefiningOp<top::WeightOp>();
      if (!wd || !isF32(w) || (!isNone(b) && (!bd || !isF32(b))))
        continue;
      OpBuilder builder(mm);
      const std::string name = tpuc::getOpName(mm);
      auto scaled = [&](top::WeightOp op, Value old,
                        StringRef suffix) -> FailureOr<Value> {
        auto data = op.read();
        if (failed(data))
          return failure();
        std::vector<float> s(**data);
        for (float &x : s)
          x *= *c;
        return Value(top::WeightOp::createWithData(
            builder, op, name + suffix.str(),
            cast<RankedTensorType>(old.getType()), std::move(s)));
      };
      auto nw = scaled(wd, w, "_scaled_weight");
      if (failed(nw))
        return failure();
      mm->setOperand(1, *nw);
      if (bd) {
        auto nb = scaled(bd, b, "_scaled_bias");
        if (failed(nb))
          return failure();
        mm->setOperand(2, *nb);
      }
      moves.push_back(mm);
      for (Operation *m : moves)
        m->setLoc(NameLoc::get(
            builder.getStringAttr(tpuc::getOpName(m) + "_scaled")));
      mul.getOutput().replaceAllUsesWith(v);
      Value other = mul->getOperand(1 - i);
      mul.erase();
      for (Value old : {w, b, other})
        if (Operation *o = old.getDefiningOp(); o && isa<top::WeightOp>(o) &&
                                                o->use_empty())
          o->erase();
      return success();
    }
    return success();
  }
};

} // namespace
