//===- TransposeLinear.cpp - Linear layers of few rows, transposed --------===//
//
// A matmul instruction puts its result's rows on the lanes and costs, per
// lane, the columns times the depth: a linear layer Y = X W + b over M
// tokens (M below the lanes) leaves most lanes idle. Computed transposed,
// Y^T = W^T X^T, the N output features are on the lanes and each lane does
// M x K MACs: tpu.MatMul(W^T, X, right_transpose) reads X as it is (tokens
// on lanes). The tokens come back on the lanes through the matmul by the
// identity I_M (transposed right operand, exact), which also adds the bias.
// When the layer's result only goes through activations to a second linear
// layer (an MLP), the activations run on Y^T and the second layer reads it
// as its plain right operand, Z^T = W2^T act(Y^T + b), so only Z^T goes back.
// Chosen by the chip's matmul cost; F32 only (the identity is F32 data).
//
//===----------------------------------------------------------------------===//
#include "tpuc/Backend/Codegen.h"
#include "tpuc/Backend/Passes.h"
#include "tpuc/Backend/Target.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include <cmath>

namespace tpuc {
namespace backend {
#define GEN_PASS_DEF_TRANSPOSELINEAR
#include "tpuc/Backend/Passes.h.inc"
} // namespace backend
} // namespace tpuc

using namespace mlir;
using namespace tpuc;
using namespace tpuc::backend;

namespace {

/// A linear layer the pass can transpose: an F32 X [B.., M, K] (M at most
/// the lanes) times a weight [K, N], bias none or [N]. With batches (B > 1)
/// the transposed weight and the identity have none: the matmul
/// instruction shares a left operand without batches by every batch.
struct Linear {
  mutable tpu::MatMulOp op;
  int64_t M = 0, K = 0, N = 0, B = 1;
};

std::optional<Linear> linearOf(Operation *o, int64_t lanes) {
  auto mm = dyn_cast_or_null<tpu::MatMulOp>(o);
  if (!mm || mm.getRightTranspose() || mm.getQuant())
    return std::nullopt;
  Value x = mm.getInput(), w = mm.getRight(), out = mm.getOutput();
  auto f32 = [](Value v) { return chipDType(v.getType()) == chip::DType::F32; };
  if (!f32(x) || !f32(w) || !f32(out) || !w.getDefiningOp<top::WeightOp>())
    return std::nullopt;
  auto xs = getShape(x), ws = getShape(w);
  const size_t r = xs.size();
  if (r < 2 || ws.size() < 2 || getShape(out).size() != r ||
      numElements(ws) != ws[ws.size() - 2] * ws.back())
    return std::nullopt;
  Linear l{mm, xs[r - 2], xs[r - 1], ws.back(),
           numElements(xs) / (xs[r - 2] * xs[r - 1])};
  if (ws[ws.size() - 2] != l.K || l.M > lanes || l.M < 2)
    return std::nullopt;
  Value b = mm.getBias();
  if (!isNone(b) &&
      (!b.getDefiningOp<top::WeightOp>() || !f32(b) ||
       numElements(getShape(b)) != l.N))
    return std::nullopt;
  return l;
}

/// Whether a group would likely hold `l`'s result with its batch folded
/// into the rows (every user folds its batch too, and the rows fit the
/// lanes), so the plain layer fills B x M lanes.
bool foldsBatch(const Linear &l, Value result, int64_t lanes) {
  if (l.B <= 1 || l.B * l.M > lanes || result.use_empty())
    return false;
  return llvm::all_of(result.getUsers(), [](Operation *u) {
    auto cg = dyn_cast<CodegenInterface>(u);
    return cg && cg.localFoldsBatch();
  });
}

struct Cost {
  const chip::Target &t;
  double eu() const { return t.euFor(chip::DType::F32); }
  double rows(int64_t c) const { return double((c + t.lanes - 1) / t.lanes); }
  /// out [rows, cols] with depth k per element.
  double matmul(int64_t r, int64_t c, int64_t k) const {
    return t.tiu_issue_cycles + std::ceil(rows(r) * double(c * k) / eu());
  }
  double elementwise(int64_t r, int64_t c, double factor) const {
    return t.tiu_issue_cycles +
           std::max(1.0, std::ceil(rows(r) * double(c) / eu() * factor));
  }
};

/// The single-use activations from `l`'s result to a second linear layer
/// reading their result as its input (with K = l.N), else nothing.
std::optional<std::pair<SmallVector<tpu::ActiveOp>, Linear>>
mlpOf(const Linear &l, int64_t lanes) {
  SmallVector<tpu::ActiveOp> acts;
  Value v = l.op.getOutput();
  while (v.hasOneUse()) {
    OpOperand &use = *v.getUses().begin();
    Operation *u = use.getOwner();
    if (auto a = dyn_cast<tpu::ActiveOp>(u)) {
      if (getShape(a.getOutput()) != getShape(v))
        return std::nullopt;
      acts.push_back(a);
      v = a.getOutput();
      continue;
    }
    auto second = linearOf(u, lanes);
    if (!second || use.getOperandNumber() != 0 || second->M != l.M ||
        second->K != l.N || getShape(second->op.getInput()).drop_back(2) !=
                                getShape(l.op.getInput()).drop_back(2))
      return std::nullopt;
    return std::make_pair(acts, *second);
  }
  return std::nullopt;
}

struct TransposeLinearPass
    : public tpuc::backend::impl::TransposeLinearBase<TransposeLinearPass> {
  using Base::Base;

  chip::Target target;
  Operation *front = nullptr; // weights shared by several layers go here
  // By the rank of their leading dims (see shared).
  llvm::DenseMap<std::pair<Value, size_t>, Value> transposed;
  llvm::DenseMap<std::pair<int64_t, size_t>, Value> identities;

  /// The leading dims of the weights the pass makes for `l`: its input's
  /// (all 1) without batches, else none, shared by every batch.
  static ArrayRef<int64_t> shared(const Linear &l, ArrayRef<int64_t> lead) {
    return l.B > 1 ? ArrayRef<int64_t>() : lead;
  }

  RankedTensorType f32Type(ArrayRef<int64_t> lead, int64_t r, int64_t c) {
    SmallVector<int64_t> s(lead.begin(), lead.end());
    s.append({r, c});
    return RankedTensorType::get(s, Float32Type::get(&getContext()));
  }

  /// W^T [1.., N, K] of a weight W [K, N].
  Value transposeWeight(OpBuilder &b, const Linear &l, ArrayRef<int64_t> lead) {
    Value w = l.op.getRight();
    lead = shared(l, lead);
    if (Value t = transposed.lookup({w, lead.size()}))
      return t;
    auto data = w.getDefiningOp<top::WeightOp>().read();
    if (failed(data))
      return {};
    std::vector<float> t(size_t(l.N * l.K));
    for (int64_t k = 0; k < l.K; ++k)
      for (int64_t n = 0; n < l.N; ++n)
        t[size_t(n * l.K + k)] = (**data)[size_t(k * l.N + n)];
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(front);
    Value v = top::WeightOp::createWithData(
        b, front, tpuc::getOpName(w.getDefiningOp()) + "_transposed",
        f32Type(lead, l.N, l.K), std::move(t));
    transposed[{w, lead.size()}] = v;
    return v;
  }

  Value identity(OpBuilder &b, const Linear &l, ArrayRef<int64_t> lead) {
    lead = shared(l, lead);
    if (Value i = identities.lookup({l.M, lead.size()}))
      return i;
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(front);
    Value v = identityRows(b, front, tpuc::getOpName(l.op) + "_identity",
                           f32Type(lead, l.M, l.M), l.M);
    identities[{l.M, lead.size()}] = v;
    return v;
  }

  /// Y = I_M x (Y^T)^T + bias: the tokens back on the lanes, named as `l`.
  void back(OpBuilder &b, const Linear &l, Value yt, ArrayRef<int64_t> lead) {
    Value i = identity(b, l, lead);
    auto mm = b.create<tpu::MatMulOp>(
        l.op.getLoc(), l.op.getOutput().getType(), i, yt, l.op.getBias(),
        Value(), l.op.getDoRelu(), /*right_transpose=*/true);
    l.op.getOutput().replaceAllUsesWith(mm.getOutput());
  }

  Location named(Operation *op, StringRef suffix) {
    return NameLoc::get(StringAttr::get(&getContext(), tpuc::getOpName(op) + suffix.str()));
  }

  void eraseIfDead(Value v) {
    if (Operation *d = v.getDefiningOp(); d && isa<top::WeightOp>(d) &&
                                          d->use_empty())
      d->erase();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<func::FuncOp> entry = loadChipAndEntry(module, chip, target);
    if (failed(entry))
      return signalPassFailure();
    // New weights go to the module's weight file.
    if (!*entry || !module->hasAttr(kWeightFileAttr) || entry->getBody().empty())
      return;
    front = &entry->getBody().front().front();
    Cost cost{target};
    const int64_t lanes = target.lanes;
    SmallVector<tpu::MatMulOp> matmuls;
    entry->walk([&](tpu::MatMulOp op) { matmuls.push_back(op); });
    llvm::DenseSet<Operation *> done;
    for (tpu::MatMulOp op : matmuls) {
      if (done.contains(op))
        continue;
      auto l = linearOf(op, lanes);
      if (!l)
        continue;
      auto lead = getShape(op.getInput()).drop_back(2);
      // Each transposed layer pays the trip back of its result. A batch
      // repeats each matmul's columns, unless a group folds it into the
      // plain layer's rows.
      const int64_t B = l->B;
      auto rowsOf = [&](Value result) {
        return foldsBatch(*l, result, lanes) ? std::pair(B * l->M, int64_t(1))
                                             : std::pair(l->M, B);
      };
      auto [R, C] = rowsOf(op.getOutput());
      double plain = cost.matmul(R, C * l->N, l->K);
      double flipped = cost.matmul(l->N, B * l->M, l->K);
      // A fused relu needs the bias add to apply it.
      auto mlp = isNone(op.getBias()) && op.getDoRelu() ? std::nullopt
                                                          : mlpOf(*l, lanes);
      if (mlp) {
        const Linear &l2 = mlp->second;
        auto [R2, C2] = rowsOf(l2.op.getOutput());
        double act = target.tiu_sfu_factor;
        double p = cost.matmul(R2, C2 * l->N, l->K) +
                   cost.matmul(R2, C2 * l2.N, l2.K),
               f = flipped + cost.matmul(l2.N, B * l2.M, l2.K) +
                   cost.matmul(l2.M, B * l2.N, l2.M);
        if (!isNone(op.getBias()))
          f += cost.elementwise(l->N, B * l->M, 1.0);
        for (size_t k = 0; k < mlp->first.size(); ++k)
          p += cost.elementwise(R2, C2 * l->N, act),
              f += cost.elementwise(l->N, B * l->M, act);
        if (f < p) {
          rewriteMlp(*l, mlp->first, l2, lead);
          done.insert(l2.op);
          continue;
        }
      }
      // A batched layer left unfolded must save a quarter: its pair
      // loads an identity and may still fold in a group with moves.
      if (flipped + cost.matmul(l->M, B * l->N, l->M) >=
          plain * (C > 1 ? 0.75 : 1.0))
        continue;
      OpBuilder b(op);
      Value wt = transposeWeight(b, *l, lead);
      if (!wt)
        return signalPassFailure();
      Value none = b.create<top::NoneOp>(op.getLoc(), b.getNoneType());
      auto yt = b.create<tpu::MatMulOp>(
          named(op, "_transposed"), f32Type(lead, l->N, l->M), wt,
          op.getInput(), none, Value(), false, /*right_transpose=*/true);
      back(b, *l, yt.getOutput(), lead);
      Value w = op.getRight();
      op.erase();
      eraseIfDead(w);
    }
  }

  void rewriteMlp(const Linear &l, ArrayRef<tpu::ActiveOp> acts,
                  const Linear &l2, ArrayRef<int64_t> lead) {
    tpu::MatMulOp op = l.op;
    OpBuilder b(op);
    Value wt = transposeWeight(b, l, lead);
    Value wt2 = transposeWeight(b, l2, lead);
    if (!wt || !wt2)
      return signalPassFailure();
    Value none = b.create<top::NoneOp>(op.getLoc(), b.getNoneType());
    RankedTensorType ht = f32Type(lead, l.N, l.M);
    Value h = b.create<tpu::MatMulOp>(named(op, "_transposed"), ht, wt,
                                      op.getInput(), none, Value(), false,
                                      /*right_transpose=*/true)
                  .getOutput();
    // The bias of Y^T is one number per row: a column [N, 1].
    if (Value bias = op.getBias(); !isNone(bias)) {
      auto data = bias.getDefiningOp<top::WeightOp>().read();
      if (failed(data))
        return signalPassFailure();
      Value column = top::WeightOp::createWithData(
          b, front, tpuc::getOpName(bias.getDefiningOp()) + "_column",
          f32Type(shared(l, lead), l.N, 1), **data);
      h = b.create<tpu::AddOp>(named(op, "_transposed_bias"), ht, h, column,
                               op.getDoRelu())
              .getOutput();
    }
    for (tpu::ActiveOp a : acts) {
      b.setInsertionPoint(a);
      Operation *c = b.clone(*a);
      c->setOperand(0, h);
      c->getResult(0).setType(ht);
      c->setLoc(named(a, "_transposed"));
      h = c->getResult(0);
    }
    b.setInsertionPoint(l2.op);
    Value zt = b.create<tpu::MatMulOp>(named(l2.op, "_transposed"),
                                       f32Type(lead, l2.N, l2.M), wt2, h, none,
                                       Value(), false, /*right_transpose=*/false)
                   .getOutput();
    back(b, l2, zt, lead);
    tpu::MatMulOp op2 = l2.op;
    Value w = op.getRight(), w2 = op2.getRight(), b1 = op.getBias();
    op2.erase();
    for (auto it = acts.rbegin(); it != acts.rend(); ++it)
      const_cast<tpu::ActiveOp &>(*it)->erase();
    op.erase();
    eraseIfDead(w);
    eraseIfDead(w2);
    eraseIfDead(b1);
  }
};

} // namespace
