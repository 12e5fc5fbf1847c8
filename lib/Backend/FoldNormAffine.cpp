//===- FoldNormAffine.cpp - LayerNorm's affine into the next linear layers ===//
//
// A LayerNorm read only by linear layers (directly or through Reshapes; a pre-norm transformer's norms
// before the attention projections and the MLP) applies its scale gamma
// and shift beta just to be multiplied by the layers' weights:
// (n * gamma + beta) W + b = n (diag(gamma) W) + (beta W + b). Folded into
// each layer's weight and bias at compile time, the norm loses two
// elementwise instructions and the loads of gamma and beta. The normalized
// tensor (and its Reshapes) differ from the model's, so they are renamed
// (`…_normalized`).
// F32 only.
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
#define GEN_PASS_DEF_FOLDNORMAFFINE
#include "tpuc/Backend/Passes.h.inc"
} // namespace backend
} // namespace tpuc

using namespace mlir;
using namespace tpuc;
using namespace tpuc::backend;

namespace {

/// The values of weight `v` with `n` elements, else null.
std::shared_ptr<std::vector<float>> weightData(Value v, int64_t n) {
  auto w = v.getDefiningOp<top::WeightOp>();
  if (!w || !isF32(v) || numElements(getShape(v)) != n)
    return nullptr;
  auto data = w.read();
  return succeeded(data) ? *data : nullptr;
}

/// Whether `op` is a linear layer by a weight [D, N] (leading dims 1) with
/// no bias or a weight bias of N elements, reading `x` as its input only.
bool linearOf(Operation *op, Value x, int64_t d) {
  auto mm = dyn_cast<tpu::MatMulOp>(op);
  if (!mm || mm.getRightTranspose() || mm.getQuant() || mm.getInput() != x ||
      mm.getRight() == x || mm.getBias() == x || !isF32(mm.getOutput()))
    return false;
  Value w = mm.getRight();
  auto ws = getShape(w);
  if (!w.getDefiningOp<top::WeightOp>() || !isF32(w) || ws.size() < 2 ||
      ws[ws.size() - 2] != d || numElements(ws) != d * ws.back())
    return false;
  Value b = mm.getBias();
  return isNone(b) || (b.getDefiningOp<top::WeightOp>() && isF32(b) &&
                       numElements(getShape(b)) == ws.back());
}

struct FoldNormAffinePass
    : public tpuc::backend::impl::FoldNormAffineBase<FoldNormAffinePass> {
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
    SmallVector<tpu::LayerNormOp> norms;
    entry->walk([&](tpu::LayerNormOp op) { norms.push_back(op); });
    for (tpu::LayerNormOp ln : norms)
      if (failed(fold(ln)))
        return signalPassFailure();
  }

  LogicalResult fold(tpu::LayerNormOp ln) {
    Value y = ln.getOutput(), g = ln.getWeight(), be = ln.getBias();
    auto shape = getShape(y);
    if (shape.empty() || !isF32(y) || (isNone(g) && isNone(be)) ||
        ln.getAxis() != int64_t(shape.size()) - 1 || y.use_empty())
      return success();
    const int64_t d = shape.back();
    // The layers, reading y or a Reshape of it keeping rows of d.
    SmallVector<tpu::MatMulOp> users;
    SmallVector<Operation *> views{ln};
    SmallVector<Value> frontier{y};
    while (!frontier.empty()) {
      Value v = frontier.pop_back_val();
      for (Operation *u : v.getUsers()) {
        auto r = dyn_cast<tpu::ReshapeOp>(u);
        if (r && !getShape(r.getOutput()).empty() &&
            getShape(r.getOutput()).back() == d && !r.getOutput().use_empty())
          frontier.push_back(r.getOutput()), views.push_back(r);
        else if (linearOf(u, v, d))
          users.push_back(cast<tpu::MatMulOp>(u));
        else
          return success();
      }
    }
    std::shared_ptr<std::vector<float>> gamma, beta;
    if (!isNone(g) && !(gamma = weightData(g, d)))
      return success();
    if (!isNone(be) && !(beta = weightData(be, d)))
      return success();
    for (tpu::MatMulOp mm : users) {
      Value w = mm.getRight(), b = mm.getBias();
      auto wt = cast<RankedTensorType>(w.getType());
      const int64_t n = wt.getShape().back();
      auto wd = weightData(w, d * n);
      std::shared_ptr<std::vector<float>> bd;
      if (!wd || (!isNone(b) && !(bd = weightData(b, n))))
        return failure();
      std::vector<float> scaled(*wd), bias(size_t(n), 0.0f);
      if (bd)
        bias = *bd;
      for (int64_t k = 0; k < d; ++k)
        for (int64_t j = 0; j < n; ++j) {
          float v = (*wd)[size_t(k * n + j)];
          if (gamma)
            scaled[size_t(k * n + j)] = v * (*gamma)[size_t(k)];
          if (beta)
            bias[size_t(j)] += (*beta)[size_t(k)] * v;
        }
      OpBuilder b0(mm);
      const std::string name = tpuc::getOpName(mm);
      Value nw = top::WeightOp::createWithData(b0, w.getDefiningOp(),
                                               name + "_weight_of_norm", wt,
                                               std::move(scaled));
      mm->setOperand(1, nw);
      if (beta) {
        auto bt = RankedTensorType::get({n}, wt.getElementType());
        Value nb = top::WeightOp::createWithData(
            b0, w.getDefiningOp(), name + "_bias_of_norm", bt, std::move(bias));
        mm->setOperand(2, nb);
      }
      for (Value old : {w, b})
        if (Operation *o = old ? old.getDefiningOp() : nullptr;
            o && isa<top::WeightOp>(o) && o->use_empty())
          o->erase();
    }
    OpBuilder b1(ln);
    Value none = b1.create<top::NoneOp>(ln.getLoc(), b1.getNoneType());
    ln->setOperand(1, none);
    ln->setOperand(2, none);
    for (Operation *v : views)
      v->setLoc(NameLoc::get(
          b1.getStringAttr(tpuc::getOpName(v) + "_normalized")));
    for (Value old : {g, be})
      if (Operation *o = old.getDefiningOp(); o && isa<top::WeightOp>(o) &&
                                              o->use_empty())
        o->erase();
    return success();
  }
};

} // namespace
