// Channel shuffles (ShuffleNet) with fewer copies of the tensor.
//
// ShuffleNetV2 concatenates its branches, shuffles the channels
// (Reshape [N, g, m, H, W] -> Permute(0,2,1,3,4) -> Reshape [N, g*m, H, W])
// and splits the result again with channel Slices. Each of Concat, Permute
// and Slice is a DDR-to-DDR copy of the whole tensor.
// - A shuffle of a Concat of g inputs of m channels interleaves them: one
//   Concat on axis 2 of the inputs seen as [N, m, 1, H, W].
// - A Slice of a shuffle (or of such an interleaving) of a batch takes one
//   run of channels from each of the g sources and interleaves those:
//     Slice(shuffle(x), [s, s+len)) = interleave_k(Slice(src_k, [s/g, len/g]))
//   With one image a channel Slice is a view of its source's buffer and
//   copies nothing, so it stays: taking the pieces instead would split the
//   branch's last Conv in narrower ones (below), each a full pass over the
//   lanes its channels leave idle.
// - A Slice of a Conv whose users all take channel Slices is the Conv with
//   those output channels, so a branch's last Conv writes the pieces itself.
// Per ShuffleNet unit one copy of the passed-through half and the
// interleaving Concats remain, instead of three copies of the whole tensor.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"

using namespace mlir;
using namespace tpuc;

namespace top {
namespace {

/// The channel range [start, start + size) of a Slice that takes every
/// element of the other dims of a rank-4 input in order.
std::optional<std::pair<int64_t, int64_t>> channelRange(SliceOp s) {
  if (!isRanked(s.getInput()) || !isRanked(s.getOutput()))
    return std::nullopt;
  auto in = getShape(s.getInput());
  if (in.size() != 4)
    return std::nullopt;
  SmallVector<int64_t> starts, steps, sizes;
  s.getBounds(starts, steps, sizes);
  for (size_t d = 0; d < 4; ++d)
    if (d != 1 && sizes[d] != in[d])
      return std::nullopt;
  if (steps[1] != 1 && sizes[1] > 1)
    return std::nullopt;
  return std::make_pair(starts[1], sizes[1]);
}

Value channelSlice(PatternRewriter &rewriter, Location loc, Value x,
                   int64_t start, int64_t size) {
  auto in = getShape(x);
  auto type = RankedTensorType::get({in[0], size, in[2], in[3]},
                                    cast<ShapedType>(x.getType()).getElementType());
  return rewriter.create<SliceOp>(loc, type, x, rewriter.getI64ArrayAttr({start}),
                                  rewriter.getI64ArrayAttr({start + size}),
                                  rewriter.getI64ArrayAttr({1}),
                                  rewriter.getI64ArrayAttr({1}));
}

/// Channels of the equally sized rank-4 `parts` interleaved (channel i of
/// part k goes to i * parts + k), named and shaped as `op`'s result.
Value interleaveChannels(PatternRewriter &rewriter, Operation *op, ArrayRef<Value> parts) {
  std::string name = getOpName(op);
  auto s = getShape(parts[0]);
  const int64_t g = parts.size();
  auto elem = cast<ShapedType>(parts[0].getType()).getElementType();
  SmallVector<Value> stacked;
  for (auto [k, part] : llvm::enumerate(parts))
    stacked.push_back(rewriter.create<ReshapeOp>(
        NameLoc::get(rewriter.getStringAttr(name + "_part" + std::to_string(k))),
        RankedTensorType::get({s[0], s[1], 1, s[2], s[3]}, elem), part,
        rewriter.getI64ArrayAttr({s[0], s[1], 1, s[2], s[3]})));
  auto concat = rewriter.create<ConcatOp>(
      NameLoc::get(rewriter.getStringAttr(name + "_interleave")),
      RankedTensorType::get({s[0], s[1], g, s[2], s[3]}, elem), stacked,
      int64_t(2), false);
  return rewriter.create<ReshapeOp>(
      op->getLoc(), op->getResult(0).getType(), concat,
      rewriter.getI64ArrayAttr({s[0], s[1] * g, s[2], s[3]}));
}

/// v = Reshape(Permute(Reshape(x, [N, g, m, H, W]), [0, 2, 1, 3, 4]), x's
/// shape): the channels of x shuffled in g groups of m.
struct Shuffle {
  Value x;
  int64_t g, m;
};

std::optional<Shuffle> matchShuffle(Value v) {
  auto outer = v.getDefiningOp<ReshapeOp>();
  auto perm = outer ? outer.getInput().getDefiningOp<PermuteOp>() : nullptr;
  auto inner = perm ? perm.getInput().getDefiningOp<ReshapeOp>() : nullptr;
  if (!inner || !isRanked(v) || !isRanked(inner.getInput()) ||
      !isRanked(perm.getInput()) ||
      !llvm::equal(getI64s(perm.getOrder()), ArrayRef<int64_t>{0, 2, 1, 3, 4}))
    return std::nullopt;
  Value x = inner.getInput();
  auto xs = getShape(x), split = getShape(perm.getInput());
  if (xs.size() != 4 || xs != getShape(v) || split.size() != 5 ||
      split[0] != xs[0] || split[1] * split[2] != xs[1] || split[3] != xs[2] ||
      split[4] != xs[3])
    return std::nullopt;
  return Shuffle{x, split[1], split[2]};
}

/// The inputs of `x` when it is a channel Concat of the shuffle's g groups
/// (each of m channels); empty otherwise.
SmallVector<Value> concatGroups(const Shuffle &sh) {
  auto concat = sh.x.getDefiningOp<ConcatOp>();
  if (!concat || concat.getDoRelu() || concat.getAxis() != 1 ||
      concat.getInputs().size() != size_t(sh.g) ||
      !llvm::all_of(concat.getInputs(), [&](Value v) {
        return isRanked(v) && getShape(v).size() == 4 && getShape(v)[1] == sh.m;
      }))
    return {};
  return SmallVector<Value>(concat.getInputs());
}

struct SliceOfChannelShuffle : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto range = channelRange(op);
    if (!range)
      return rewriter.notifyMatchFailure(op, "not a channel Slice");
    auto in = getShape(op.getInput());
    if (in[0] == 1)
      return rewriter.notifyMatchFailure(op, "a channel Slice of one image is a view");
    auto [start, size] = *range;
    int64_t g = 0, m = 0, base = 0;
    SmallVector<Value> sources;
    auto outer = op.getInput().getDefiningOp<ReshapeOp>();
    Value mid = outer ? outer.getInput() : Value();
    if (auto stacked = mid ? mid.getDefiningOp<ConcatOp>() : nullptr) {
      // Already interleaved: Concat on axis 2 of [N, m, 1, H, W] parts.
      auto st = getShape(stacked.getOutput());
      if (stacked.getAxis() != 2 || st.size() != 5 || st[0] != in[0] ||
          st[3] != in[2] || st[4] != in[3] || st[2] != int64_t(stacked.getInputs().size()))
        return rewriter.notifyMatchFailure(op, "not an interleaving Concat");
      g = st[2], m = st[1];
      for (Value v : stacked.getInputs()) {
        auto r = v.getDefiningOp<ReshapeOp>();
        if (!r || !isRanked(r.getInput()) || getShape(r.getInput()).size() != 4)
          return rewriter.notifyMatchFailure(op, "an interleaved part is not a 4-D tensor");
        sources.push_back(r.getInput());
      }
    } else {
      auto sh = matchShuffle(op.getInput());
      if (!sh)
        return rewriter.notifyMatchFailure(op, "input is not a channel shuffle");
      g = sh->g, m = sh->m;
      // The g sources: a Concat's inputs of m channels each, or x's blocks.
      sources = concatGroups(*sh);
      if (sources.empty()) {
        sources.assign(g, sh->x);
        base = m;
      }
    }
    if (start % g || size % g)
      return rewriter.notifyMatchFailure(op, "the range splits a shuffled group");
    const int64_t per = size / g;
    SmallVector<Value> pieces;
    for (int64_t k = 0; k < g; ++k)
      pieces.push_back(channelSlice(
          rewriter,
          NameLoc::get(rewriter.getStringAttr(getOpName(op) + "_src" + std::to_string(k))),
          sources[k], k * base + start / g, per));
    rewriter.replaceOp(op, interleaveChannels(rewriter, op, pieces));
    return success();
  }
};

/// shuffle(Concat(a_0, ..., a_{g-1})) with each a_k of m channels is
/// Reshape(Concat_axis2(Reshape(a_k, [N, m, 1, H, W]))): one copy that
/// interleaves the inputs instead of a Concat and a Permute.
struct ShuffleOfConcat : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto sh = matchShuffle(op.getOutput());
    SmallVector<Value> parts = sh ? concatGroups(*sh) : SmallVector<Value>();
    if (parts.empty())
      return rewriter.notifyMatchFailure(op, "not a channel shuffle of a Concat");
    rewriter.replaceOp(op, interleaveChannels(rewriter, op, parts));
    return success();
  }
};

/// Slice(Conv(x), channels) -> Conv(x) with those filters, when every user of
/// the Conv is a channel Slice and together they take at most all of its
/// channels (so, split in disjoint ranges, no output is computed twice).
struct SliceOfConv : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto range = channelRange(op);
    auto conv = op.getInput().getDefiningOp<ConvOp>();
    if (!range || !conv || conv.getGroup() != 1 ||
        getShape(conv.getFilter()).size() != 4)
      return rewriter.notifyMatchFailure(op, "not a channel Slice of a dense Conv");
    int64_t taken = 0;
    for (Operation *user : conv->getUsers()) {
      auto s = dyn_cast<SliceOp>(user);
      auto r = s ? channelRange(s) : std::nullopt;
      if (!r)
        return rewriter.notifyMatchFailure(op, "the Conv has other users");
      taken += r->second;
    }
    auto oc = getShape(conv.getOutput())[1];
    auto filterOp = conv.getFilter().getDefiningOp<WeightOp>();
    auto biasOp = conv.getBias().getDefiningOp<WeightOp>();
    if (taken > oc || !filterOp || (!isNone(conv.getBias()) && !biasOp))
      return rewriter.notifyMatchFailure(op, "overlapping Slices or non-constant weights");
    auto filter = filterOp.read();
    if (failed(filter))
      return failure();
    auto [start, size] = *range;
    auto fs = getShape(conv.getFilter());
    const int64_t per = fs[1] * fs[2] * fs[3];
    std::vector<float> f((*filter)->begin() + start * per,
                         (*filter)->begin() + (start + size) * per);
    std::string name = getOpName(op);
    auto f32 = rewriter.getF32Type();
    Value nf = WeightOp::createWithData(
        rewriter, conv, name + "_filter",
        RankedTensorType::get({size, fs[1], fs[2], fs[3]}, f32), std::move(f));
    Value nb = conv.getBias();
    if (biasOp) {
      auto bias = biasOp.read();
      if (failed(bias))
        return failure();
      nb = WeightOp::createWithData(
          rewriter, conv, name + "_bias", RankedTensorType::get({size}, f32),
          std::vector<float>((*bias)->begin() + start, (*bias)->begin() + start + size));
    }
    // Right after the Conv, so that the narrowed Convs stay next to the ops
    // that feed them and can join their layer group.
    rewriter.setInsertionPointAfter(conv);
    auto narrow = rewriter.create<ConvOp>(
        op.getLoc(), op.getOutput().getType(), conv.getInput(), nf, nb,
        conv.getKernelShape(), conv.getStrides(), conv.getPads(),
        conv.getDilations(), uint64_t(1), conv.getDoRelu(), conv.getReluLimit());
    rewriter.replaceOp(op, narrow.getOutput());
    return success();
  }
};

} // namespace

void populateChannelShufflePatterns(RewritePatternSet &results,
                                    MLIRContext *context) {
  results.add<SliceOfChannelShuffle, ShuffleOfConcat, SliceOfConv>(context);
}

} // namespace top
