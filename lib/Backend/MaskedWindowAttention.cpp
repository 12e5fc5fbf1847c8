//===- MaskedWindowAttention.cpp - Window attention over all the rows -----===//
//
// A shifted-window transformer gathers its tokens X [R, C] into windows
// (G = P x X, tpu-row-gather-as-matmul's matmul by a 0/1 permutation P
// [B, N, R]), projects them, attends within each window (B batches of N
// rows, a bias and a mask per window added to the scores), projects back
// and scatters the rows to their places (a matmul by P's inverse). Every
// op but the attention computes each row on its own, so the gather
// commutes with the projections; and attention within windows is attention
// over all R rows whose scores between rows of different windows are
// -1e30, which the softmax turns into exact zeros. So the block becomes the
// projections of X itself, attention over [R, R] scores plus one constant
// bias [H, R, R] (the bias and mask of each window at its rows, -1e30
// elsewhere), and the output projection: no gather, no scatter, and no
// tensor held a window per image, which a layer group would refold across
// the lanes by GDMA moves between the projections (all rows on the lanes)
// and the attention (a window's rows on the lanes). A head's scores take
// R lanes, where the windows' took N of them B times over: the same work
// per lane. The bias is a constant the backend makes (tpu.data_movement:
// not in the roofline, which loses the model's smaller bias and mask), and
// the roofline counts the windows' MACs of the two attention matmuls
// (tpu.model_macs).
// F32 only; the result equals the windowed one up to the order of sums.
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
#define GEN_PASS_DEF_MASKEDWINDOWATTENTION
#include "tpuc/Backend/Passes.h.inc"
} // namespace backend
} // namespace tpuc

using namespace mlir;
using namespace tpuc;
using namespace tpuc::backend;

namespace {

/// Score between rows of different windows: exp of it less the row's
/// maximum is 0 in F32.
constexpr float kMasked = -1e30f;

/// The op defining `v` when it is an `OpT` whose result only `user` reads.
template <typename OpT> OpT onlyFor(Value v, Operation *user) {
  auto op = v.getDefiningOp<OpT>();
  if (!op || !v.hasOneUse() || *v.getUsers().begin() != user)
    return {};
  return op;
}

/// The data of an F32 weight.
std::shared_ptr<std::vector<float>> weightData(Value v) {
  auto w = v.getDefiningOp<top::WeightOp>();
  if (!w || !isF32(v))
    return nullptr;
  auto data = w.read();
  return succeeded(data) ? *data : nullptr;
}

bool hasOrder(tpu::PermuteOp p, ArrayRef<int64_t> order) {
  return llvm::equal(getI64s(p.getOrder()), order);
}

/// A projection of the windows split into heads: Permute [0, 2, 1, 3] of
/// Reshape [B, N, H, D] of x W + b, the layer reading `windows`.
struct Head {
  tpu::MatMulOp linear;
  tpu::ReshapeOp split;
  tpu::PermuteOp permute;
};

std::optional<Head> headOf(Value v, Operation *user, Value windows) {
  Head h;
  h.permute = onlyFor<tpu::PermuteOp>(v, user);
  if (!h.permute || !hasOrder(h.permute, {0, 2, 1, 3}))
    return std::nullopt;
  h.split = onlyFor<tpu::ReshapeOp>(h.permute.getInput(), h.permute);
  if (!h.split)
    return std::nullopt;
  h.linear = onlyFor<tpu::MatMulOp>(h.split.getInput(), h.split);
  if (!h.linear || h.linear.getInput() != windows ||
      h.linear.getRightTranspose() || h.linear.getQuant() ||
      !h.linear.getRight().getDefiningOp<top::WeightOp>() ||
      getShape(h.linear.getRight()).size() != 2)
    return std::nullopt;
  return h;
}

/// One window attention block, from its gather to its scatter.
struct Block {
  tpu::MatMulOp gather, scatter;
  Head q, k, v;
  tpu::MatMulOp scores, context, output;
  SmallVector<tpu::AddOp, 2> biases; // in order from the scores
  tpu::SoftmaxOp softmax;
  tpu::PermuteOp merge;
  tpu::ReshapeOp merged, rows;
  int64_t B = 0, N = 0, R = 0, C = 0, H = 0, D = 0;
  /// Window row (b, n) -> source row, b N + n indexed.
  std::vector<int64_t> source;
};

/// The block whose scatter is `scatter`, when it has the form above.
std::optional<Block> match(tpu::MatMulOp scatter) {
  Block k;
  k.scatter = scatter;
  // The structure first: the permutations' data is read last.
  if (!scatter.getInput().getDefiningOp<top::WeightOp>() ||
      scatter.getRightTranspose() || scatter.getQuant() ||
      !isNone(scatter.getBias()) || !isF32(scatter.getOutput()) ||
      getShape(scatter.getInput()).size() != 2)
    return std::nullopt;
  k.rows = onlyFor<tpu::ReshapeOp>(scatter.getRight(), scatter);
  if (!k.rows)
    return std::nullopt;
  k.output = onlyFor<tpu::MatMulOp>(k.rows.getInput(), k.rows);
  if (!k.output || k.output.getRightTranspose() || k.output.getQuant() ||
      !k.output.getRight().getDefiningOp<top::WeightOp>() ||
      getShape(k.output.getRight()).size() != 2)
    return std::nullopt;
  k.merged = onlyFor<tpu::ReshapeOp>(k.output.getInput(), k.output);
  if (!k.merged)
    return std::nullopt;
  k.merge = onlyFor<tpu::PermuteOp>(k.merged.getInput(), k.merged);
  if (!k.merge || !hasOrder(k.merge, {0, 2, 1, 3}))
    return std::nullopt;
  k.context = onlyFor<tpu::MatMulOp>(k.merge.getInput(), k.merge);
  if (!k.context || k.context.getRightTranspose() || k.context.getQuant() ||
      !isNone(k.context.getBias()))
    return std::nullopt;
  k.softmax = onlyFor<tpu::SoftmaxOp>(k.context.getInput(), k.context);
  if (!k.softmax || k.softmax.getDivisor() ||
      (k.softmax.getAxis() != 3 && k.softmax.getAxis() != -1))
    return std::nullopt;
  // Constant biases added to the scores.
  Value s = k.softmax.getInput();
  Operation *user = k.softmax;
  while (auto add = onlyFor<tpu::AddOp>(s, user)) {
    bool rhs = bool(add.getRhs().getDefiningOp<top::WeightOp>());
    if (add.getDoRelu() || !weightData(rhs ? add.getRhs() : add.getLhs()))
      return std::nullopt;
    s = rhs ? add.getLhs() : add.getRhs();
    k.biases.insert(k.biases.begin(), add);
    user = add;
  }
  k.scores = onlyFor<tpu::MatMulOp>(s, user);
  if (!k.scores || !k.scores.getRightTranspose() || k.scores.getQuant() ||
      !isNone(k.scores.getBias()))
    return std::nullopt;
  // The heads: queries and keys of the scores, values of the context.
  auto q = k.scores.getInput().getDefiningOp<tpu::PermuteOp>();
  auto first = q ? q.getInput().getDefiningOp<tpu::ReshapeOp>() : nullptr;
  auto lin = first ? first.getInput().getDefiningOp<tpu::MatMulOp>() : nullptr;
  if (!lin)
    return std::nullopt;
  Value windows = lin.getInput();
  auto hq = headOf(k.scores.getInput(), k.scores, windows);
  auto hk = headOf(k.scores.getRight(), k.scores, windows);
  auto hv = headOf(k.context.getRight(), k.context, windows);
  if (!hq || !hk || !hv)
    return std::nullopt;
  k.q = *hq, k.k = *hk, k.v = *hv;
  k.gather = windows.getDefiningOp<tpu::MatMulOp>();
  if (!k.gather || k.gather.getRightTranspose() || k.gather.getQuant() ||
      !isNone(k.gather.getBias()) ||
      llvm::any_of(windows.getUsers(), [&](Operation *u) {
        return u != k.q.linear && u != k.k.linear && u != k.v.linear;
      }))
    return std::nullopt;
  ArrayRef<int64_t> ws = getShape(windows), xs = getShape(k.gather.getRight());
  ArrayRef<int64_t> qs = getShape(k.q.split.getOutput());
  if (!k.gather.getInput().getDefiningOp<top::WeightOp>() || ws.size() != 3 ||
      xs.size() != 2 || qs.size() != 4)
    return std::nullopt;
  k.B = ws[0], k.N = ws[1], k.C = ws[2], k.R = xs[0], k.H = qs[2], k.D = qs[3];
  if (k.B * k.N != k.R || xs[1] != k.C ||
      getShape(k.gather.getInput()) != ArrayRef<int64_t>{k.B, k.N, k.R} ||
      getShape(scatter.getInput()) != ArrayRef<int64_t>{k.R, k.R} ||
      getShape(k.rows.getOutput()) != ArrayRef<int64_t>{k.R, k.C} ||
      getShape(k.output.getOutput()) != ArrayRef<int64_t>{k.B, k.N, k.C})
    return std::nullopt;
  for (Head h : {k.q, k.k, k.v})
    if (getShape(h.split.getOutput()) !=
        ArrayRef<int64_t>{k.B, k.N, k.H, k.D})
      return std::nullopt;
  for (Operation *op : {k.gather.getOperation(), k.scores.getOperation(),
                        k.context.getOperation(), k.output.getOperation(),
                        k.q.linear.getOperation(), k.k.linear.getOperation(),
                        k.v.linear.getOperation()})
    if (!isF32(op->getResult(0)))
      return std::nullopt;
  // P a permutation of the rows, and the scatter its inverse.
  auto perm = weightData(k.gather.getInput());
  auto inv = weightData(scatter.getInput());
  if (!perm || !inv)
    return std::nullopt;
  k.source.assign(size_t(k.R), -1);
  std::vector<bool> seen(size_t(k.R), false);
  for (int64_t w = 0; w < k.R; ++w)
    for (int64_t r = 0; r < k.R; ++r) {
      float p = (*perm)[size_t(w * k.R + r)];
      if (p == 0.0f)
        continue;
      if (p != 1.0f || k.source[size_t(w)] >= 0 || seen[size_t(r)])
        return std::nullopt;
      k.source[size_t(w)] = r;
      seen[size_t(r)] = true;
    }
  if (llvm::is_contained(k.source, -1))
    return std::nullopt;
  for (int64_t i = 0; i < k.R; ++i)
    for (int64_t w = 0; w < k.R; ++w)
      if ((*inv)[size_t(i * k.R + w)] != (k.source[size_t(w)] == i ? 1.0f : 0.0f))
        return std::nullopt;
  return k;
}

/// Element of the constant `c` broadcast to [B, H, N, N] at (b, h, n, m).
float broadcastAt(const std::vector<float> &c, ArrayRef<int64_t> shape,
                  std::array<int64_t, 4> at) {
  SmallVector<int64_t, 4> s(4 - shape.size(), 1);
  s.append(shape.begin(), shape.end());
  int64_t f = 0;
  for (size_t d = 0; d < 4; ++d)
    f = f * s[d] + (s[d] == 1 ? 0 : at[d]);
  return c[size_t(f)];
}

struct MaskedWindowAttentionPass
    : public tpuc::backend::impl::MaskedWindowAttentionBase<
          MaskedWindowAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    chip::Target target;
    FailureOr<func::FuncOp> entry = loadChipAndEntry(module, chip, target);
    if (failed(entry))
      return signalPassFailure();
    // The bias is a weight of the module's weight file.
    if (!module->hasAttr(kWeightFileAttr))
      return;
    SmallVector<tpu::MatMulOp> scatters;
    module.walk([&](tpu::MatMulOp op) { scatters.push_back(op); });
    for (tpu::MatMulOp op : scatters)
      if (auto block = match(op))
        rewrite(*block);
  }

  Location named(Operation *op, StringRef suffix) {
    return NameLoc::get(StringAttr::get(
        &getContext(), tpuc::getOpName(op) + suffix.str()));
  }

  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, Float32Type::get(&getContext()));
  }

  void rewrite(Block &k) {
    // The bias over all rows: each window's constants at its rows.
    std::vector<std::shared_ptr<std::vector<float>>> consts;
    std::vector<SmallVector<int64_t, 4>> shapes;
    for (tpu::AddOp add : k.biases) {
      Value c = add.getRhs().getDefiningOp<top::WeightOp>() ? add.getRhs()
                                                            : add.getLhs();
      consts.push_back(weightData(c));
      auto s = getShape(c);
      shapes.emplace_back(s.begin(), s.end());
    }
    const int64_t R = k.R, N = k.N, H = k.H, D = k.D, C = k.C;
    std::vector<float> bias(size_t(H * R * R), kMasked);
    for (int64_t b = 0; b < k.B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t n = 0; n < N; ++n)
          for (int64_t m = 0; m < N; ++m) {
            float v = 0.0f;
            for (size_t c = 0; c < consts.size(); ++c)
              v += broadcastAt(*consts[c], shapes[c], {b, h, n, m});
            int64_t i = k.source[size_t(b * N + n)],
                    j = k.source[size_t(b * N + m)];
            bias[size_t((h * R + i) * R + j)] = v;
          }

    OpBuilder b(k.scatter);
    Value x = k.gather.getRight();
    // Each head over all rows: [1, H, R, D].
    auto head = [&](Head h) {
      Operation *l = h.linear;
      Value y = b.create<tpu::MatMulOp>(named(l, "_unwindowed"), f32({R, C}),
                                        x, h.linear.getRight(),
                                        h.linear.getBias(), Value(), false,
                                        false);
      y = b.create<tpu::ReshapeOp>(named(h.split, "_unwindowed"),
                                   f32({1, R, H, D}), y);
      return b.create<tpu::PermuteOp>(named(h.permute, "_unwindowed"),
                                      f32({1, H, R, D}), y,
                                      b.getI64ArrayAttr({0, 2, 1, 3}))
          .getResult();
    };
    Value q = head(k.q), kk = head(k.k), v = head(k.v);
    Value noBias = b.create<top::NoneOp>(k.scatter.getLoc(), b.getNoneType());
    // The roofline counts the windows' MACs, not those of the masked pairs.
    const int64_t windowMacs = k.B * H * N * N * D;
    auto macs = b.getI64IntegerAttr(windowMacs);
    Value s = b.create<tpu::MatMulOp>(named(k.scores, "_unwindowed"),
                                      f32({1, H, R, R}), q, kk, noBias,
                                      Value(), false, true);
    s.getDefiningOp()->setAttr(kModelMacsAttr, macs);
    Value full = markDataMovement(top::WeightOp::createWithData(
        b, k.scatter, tpuc::getOpName(k.softmax) + "_unwindowed_bias",
        f32({1, H, R, R}), std::move(bias)));
    s = b.create<tpu::AddOp>(named(k.biases.empty() ? k.scores.getOperation()
                                                    : k.biases.back(),
                                   "_unwindowed"),
                             f32({1, H, R, R}), s, full, false);
    s = b.create<tpu::SoftmaxOp>(named(k.softmax, "_unwindowed"),
                                 f32({1, H, R, R}), s, b.getI64IntegerAttr(3),
                                 FloatAttr());
    Value o = b.create<tpu::MatMulOp>(named(k.context, "_unwindowed"),
                                      f32({1, H, R, D}), s, v, noBias, Value(),
                                      false, false);
    o.getDefiningOp()->setAttr(kModelMacsAttr, macs);
    o = b.create<tpu::PermuteOp>(named(k.merge, "_unwindowed"),
                                 f32({1, R, H, D}), o,
                                 b.getI64ArrayAttr({0, 2, 1, 3}));
    o = b.create<tpu::ReshapeOp>(named(k.merged, "_unwindowed"), f32({R, C}),
                                 o);
    // The scatter's result: the rows in their places, named as it is.
    o = b.create<tpu::MatMulOp>(k.scatter.getLoc(), f32({R, C}), o,
                                k.output.getRight(), k.output.getBias(),
                                Value(), false, false);
    k.scatter.getOutput().replaceAllUsesWith(o);
    SmallVector<Operation *> dead{k.scatter, k.rows, k.output, k.merged,
                                  k.merge, k.context, k.softmax};
    for (tpu::AddOp a : llvm::reverse(k.biases))
      dead.push_back(a);
    dead.push_back(k.scores);
    for (Head h : {k.q, k.k, k.v})
      dead.append({h.permute, h.split, h.linear});
    dead.push_back(k.gather);
    // The permutations and the windows' constants, when nothing else reads
    // them.
    SmallVector<Operation *> weights;
    for (Operation *op : dead)
      for (Value v : op->getOperands())
        if (auto w = v.getDefiningOp<top::WeightOp>();
            w && !llvm::is_contained(weights, w.getOperation()))
          weights.push_back(w);
    for (Operation *op : dead)
      op->erase();
    for (Operation *w : weights)
      if (w->use_empty())
        w->erase();
  }
};

} // namespace
