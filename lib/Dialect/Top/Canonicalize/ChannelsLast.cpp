// Channels-last islands in NCHW models become channel-first ops.
//
// ConvNeXt-style blocks move an NCHW tensor to NHWC, normalize over the last
// dim, apply Linear layers and activations, and move back:
//   Permute(0,2,3,1) -> LayerNorm(last) -> MatMul -> GELU -> MatMul
//     -> Permute(0,3,1,2)
// In NCHW the chip keeps channels on lanes: a MatMul over the last dim is a
// 1x1 Conv, an activation is layout-free, and a LayerNorm over the channels
// is a per-pixel mean and variance, which 1x1 Convs to one channel compute
// and 1x1 Convs from one channel broadcast back. The rewritten chain has no
// transposes through DDR and is all conv/elementwise, so it joins layer
// groups. The new ops do only O(C) MACs per pixel beyond the Linear layers.
//
// The chain's inner tensors change layout, so their ops get new names (the
// original names would compare NCHW tensors with NHWC references); the last
// op takes the closing Permute's name and shape.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"

using namespace mlir;
using namespace tpuc;

namespace top {
namespace {

bool hasOrder(PermuteOp p, ArrayRef<int64_t> order) {
  return llvm::equal(getI64s(p.getOrder()), order);
}

/// The constant's values, or none when `v` is None; failure when it is
/// neither a weight nor None.
FailureOr<std::optional<std::vector<float>>> readOptional(Value v) {
  if (isNone(v))
    return std::optional<std::vector<float>>();
  auto w = v.getDefiningOp<WeightOp>();
  if (!w)
    return failure();
  auto d = w.read();
  if (failed(d))
    return failure();
  return std::optional<std::vector<float>>(**d);
}

bool isLayoutFreeUnary(Operation *op) {
  return isa<GELUOp, ReluOp, SiLUOp, SigmoidOp, TanhOp, ErfOp>(op);
}

/// Builds the NCHW chain at the root Permute.
class ChannelFirstBuilder {
public:
  ChannelFirstBuilder(PatternRewriter &rewriter, Operation *anchor,
                      int64_t n, int64_t h, int64_t w)
      : rewriter(rewriter), anchor(anchor), n(n), h(h), w(w),
        f32(rewriter.getF32Type()) {}

  RankedTensorType nchw(int64_t c) const {
    return RankedTensorType::get({n, c, h, w}, f32);
  }

  Value weight(StringRef name, ArrayRef<int64_t> shape, std::vector<float> d) {
    return WeightOp::createWithData(rewriter, anchor, name,
                                    RankedTensorType::get(shape, f32),
                                    std::move(d));
  }

  Value none() {
    if (!noneValue)
      noneValue = rewriter.create<NoneOp>(anchor->getLoc(), rewriter.getNoneType());
    return noneValue;
  }

  /// out[o] = sum_i filter[o][i] * in[i] (+ bias[o]) per pixel.
  Value conv1x1(Location loc, Value in, int64_t oc, StringRef name,
                std::vector<float> filter, std::optional<std::vector<float>> bias,
                bool relu = false) {
    int64_t ic = getShape(in)[1];
    Value f = weight((name + "_filter").str(), {oc, ic, 1, 1}, std::move(filter));
    Value b = bias ? weight((name + "_bias").str(), {oc}, std::move(*bias)) : none();
    auto ones = rewriter.getI64ArrayAttr({1, 1});
    return rewriter.create<ConvOp>(loc, nchw(oc), in, f, b, ones, ones,
                                   rewriter.getI64ArrayAttr({0, 0, 0, 0}), ones,
                                   uint64_t(1), relu, APFloat(-1.0));
  }

  /// LayerNorm over the channels without its beta, which the caller adds
  /// or folds: y = (x - mean) * rsqrt(var + eps) * gamma.
  Value channelNorm(LayerNormOp ln, Value x, const std::optional<std::vector<float>> &gamma,
                    const std::string &name) {
    int64_t c = getShape(x)[1];
    auto at = [&](StringRef s) {
      return NameLoc::get(rewriter.getStringAttr(name + s));
    };
    std::vector<float> avg(c, 1.0f / float(c));
    Value mean = conv1x1(at("_mean"), x, 1, name + "_mean", avg, std::nullopt);
    Value meanC = conv1x1(at("_mean_bcast"), mean, c, name + "_mean_bcast",
                          std::vector<float>(c, 1.0f), std::nullopt);
    Value d = rewriter.create<SubOp>(at("_centered"), nchw(c), x, meanC, false);
    Value sq = rewriter.create<MulOp>(at("_square"), nchw(c), d, d, false);
    float eps = float(ln.getEpsilon().convertToDouble());
    Value var = conv1x1(at("_var"), sq, 1, name + "_var", avg,
                        std::vector<float>{eps});
    Value inv = rewriter.create<RsqrtOp>(at("_rstd"), nchw(1), var);
    Value scale = conv1x1(at("_scale"), inv, c, name + "_scale",
                          gamma ? *gamma : std::vector<float>(c, 1.0f), std::nullopt);
    return rewriter.create<MulOp>(at("_normed"), nchw(c), d, scale, false);
  }

  PatternRewriter &rewriter;
  Operation *anchor;
  int64_t n, h, w;
  Type f32;
  Value noneValue;
};

struct ChannelsLastToChannelsFirst : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PermuteOp root,
                                PatternRewriter &rewriter) const override {
    if (!isRanked(root.getInput()) || getShape(root.getInput()).size() != 4 ||
        !hasOrder(root, {0, 2, 3, 1}) ||
        !cast<ShapedType>(root.getInput().getType()).getElementType().isF32())
      return rewriter.notifyMatchFailure(root, "not an f32 NCHW -> NHWC Permute");
    // The chain: single-use links from the root up to the closing Permute,
    // checked and read before anything is built.
    SmallVector<Operation *> chain;
    struct Params {
      std::optional<std::vector<float>> a, b;
    };
    SmallVector<Params> params;
    Value cur = root.getOutput();
    PermuteOp close;
    while (!close) {
      if (!cur.hasOneUse())
        return rewriter.notifyMatchFailure(root, "a channels-last tensor has other users");
      Operation *user = *cur.getUsers().begin();
      Params p;
      if (auto perm = dyn_cast<PermuteOp>(user)) {
        if (!hasOrder(perm, {0, 3, 1, 2}))
          return rewriter.notifyMatchFailure(root, "the chain ends in another Permute");
        close = perm;
        continue;
      }
      if (auto ln = dyn_cast<LayerNormOp>(user)) {
        auto gamma = readOptional(ln.getWeight());
        auto beta = readOptional(ln.getBias());
        if ((ln.getAxis() != 3 && ln.getAxis() != -1) || failed(gamma) || failed(beta))
          return rewriter.notifyMatchFailure(root, "not a constant LayerNorm over the last dim");
        p = {*gamma, *beta};
      } else if (auto mm = dyn_cast<MatMulOp>(user)) {
        auto right = mm.getRight().getDefiningOp<WeightOp>();
        if (mm.getInput() != cur || !right || getShape(mm.getRight()).size() != 2)
          return rewriter.notifyMatchFailure(root, "MatMul is not by a constant matrix");
        auto r = right.read();
        auto bias = readOptional(mm.getBias());
        if (failed(r) || failed(bias))
          return rewriter.notifyMatchFailure(root, "MatMul weights are not constant");
        p = {**r, *bias};
      } else if (!isLayoutFreeUnary(user)) {
        return rewriter.notifyMatchFailure(root, "an op in the chain needs the layout");
      }
      chain.push_back(user);
      params.push_back(std::move(p));
      cur = user->getResult(0);
      if (!isRanked(cur) || !cast<ShapedType>(cur.getType()).getElementType().isF32())
        return rewriter.notifyMatchFailure(root, "an unranked or non-f32 tensor in the chain");
    }
    if (chain.empty() || !isRanked(close.getOutput()))
      return failure();

    auto in = getShape(root.getInput());
    ChannelFirstBuilder b(rewriter, root, in[0], in[2], in[3]);
    if (b.nchw(getShape(cur).back()) != close.getOutput().getType())
      return failure();
    Value v = root.getInput();
    // A LayerNorm's beta waits for the MatMul after it, which absorbs it.
    std::optional<std::vector<float>> pendingBeta;
    auto flushBeta = [&](const std::string &name) {
      if (!pendingBeta)
        return;
      int64_t c = getShape(v)[1];
      Value bw = b.weight(name + "_beta", {1, c, 1, 1}, *pendingBeta);
      v = rewriter.create<AddOp>(NameLoc::get(rewriter.getStringAttr(name + "_affine")),
                                 b.nchw(c), v, bw, false);
      pendingBeta.reset();
    };
    std::string lastName;
    for (auto [op, p] : llvm::zip(chain, params)) {
      std::string name = getOpName(op) + "_nchw";
      Location loc = NameLoc::get(rewriter.getStringAttr(name));
      if (auto ln = dyn_cast<LayerNormOp>(op)) {
        flushBeta(lastName);
        v = b.channelNorm(ln, v, p.a, name);
        pendingBeta = p.b;
      } else if (auto mm = dyn_cast<MatMulOp>(op)) {
        auto k = getShape(mm.getRight())[0], nOut = getShape(mm.getRight())[1];
        std::vector<float> filter(nOut * k);
        for (int64_t i = 0; i < k; ++i)
          for (int64_t o = 0; o < nOut; ++o)
            filter[o * k + i] = (*p.a)[i * nOut + o];
        std::optional<std::vector<float>> cb = p.b;
        if (pendingBeta) { // W (x + beta) + b = W x + (W beta + b)
          if (!cb)
            cb = std::vector<float>(nOut, 0.0f);
          for (int64_t o = 0; o < nOut; ++o)
            for (int64_t i = 0; i < k; ++i)
              (*cb)[o] += filter[o * k + i] * (*pendingBeta)[i];
          pendingBeta.reset();
        }
        v = b.conv1x1(loc, v, nOut, name, std::move(filter), std::move(cb),
                      mm.getDoRelu());
      } else {
        flushBeta(lastName);
        OperationState st(loc, op->getName(), ValueRange{v},
                          TypeRange{b.nchw(getShape(v)[1])}, op->getAttrs());
        v = rewriter.create(st)->getResult(0);
      }
      lastName = name;
    }
    flushBeta(lastName);
    // The last op produces the closing Permute's tensor under its name.
    v.getDefiningOp()->setLoc(close.getLoc());
    rewriter.replaceOp(close, v);
    for (Operation *op : llvm::reverse(chain))
      rewriter.eraseOp(op);
    rewriter.eraseOp(root);
    return success();
  }
};

} // namespace

void populateChannelsLastPatterns(RewritePatternSet &results,
                                  MLIRContext *context) {
  results.add<ChannelsLastToChannelsFirst>(context);
}

} // namespace top
