// A Slice of a block of columns of a MatMul by a constant [K, N] matrix is
// the MatMul by those columns. Attention with a fused input projection
// (torchvision's Swin: qkv = x W + b, reshaped [.., 3, heads, d], permuted
// to [3, .., heads, .., d] and sliced into q, k and v along the 3) then
// computes q, k and v by three matmuls, each of whose results keeps its
// rows on the lanes and joins the attention's layer group, instead of one
// matmul whose result a rank-5 transpose copies through DDR before the
// slices. Matched: a Slice along one axis of a Reshape (or of a Permute of
// a Reshape) of the MatMul, where that axis is the outermost factor of the
// Reshape's split of the matmul's last dim, and every user of the Reshape
// (or Permute) is such a Slice, so no column is computed twice.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"

using namespace mlir;
using namespace tpuc;

namespace top {
namespace {

/// The one axis `s` takes a contiguous range of: (axis, start, size).
std::optional<std::array<int64_t, 3>> slicedAxis(SliceOp s) {
  if (!isRanked(s.getInput()) || !isRanked(s.getOutput()))
    return std::nullopt;
  auto in = getShape(s.getInput());
  SmallVector<int64_t> starts, steps, sizes;
  s.getBounds(starts, steps, sizes);
  std::optional<std::array<int64_t, 3>> axis;
  for (size_t d = 0; d < in.size(); ++d) {
    if (sizes[d] == in[d])
      continue;
    if (axis || (steps[d] != 1 && sizes[d] > 1))
      return std::nullopt;
    axis = {int64_t(d), starts[d], sizes[d]};
  }
  return axis;
}

struct SliceOfMatMulColumns : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto range = slicedAxis(op);
    if (!range)
      return rewriter.notifyMatchFailure(op, "not a Slice along one axis");
    auto [axis, start, size] = *range;
    Value picked = op.getInput();
    auto perm = picked.getDefiningOp<PermuteOp>();
    int64_t d = axis;
    if (perm) {
      d = getI64s(perm.getOrder())[axis];
      picked = perm.getInput();
    }
    auto reshape = picked.getDefiningOp<ReshapeOp>();
    auto mm = reshape ? reshape.getInput().getDefiningOp<MatMulOp>() : nullptr;
    if (!mm || !mm->hasOneUse() || !reshape->hasOneUse() ||
        !isRanked(mm.getOutput()) || !isRanked(reshape.getOutput()))
      return rewriter.notifyMatchFailure(op, "not a Slice of a reshaped MatMul");
    auto wOp = mm.getRight().getDefiningOp<WeightOp>();
    auto bOp = mm.getBias().getDefiningOp<WeightOp>();
    auto mType = cast<RankedTensorType>(mm.getOutput().getType());
    auto ws = getShape(mm.getRight());
    if (!wOp || ws.size() != 2 || (!isNone(mm.getBias()) && !bOp) ||
        !mType.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not a MatMul by a constant matrix");
    // The Reshape keeps the matmul's leading dims and splits its last one,
    // whose outermost factor is the sliced axis.
    auto ms = mType.getShape(), rs = getShape(reshape.getOutput());
    const int64_t m = int64_t(ms.size()), N = ms.back(), K = ws[0];
    if (d != m - 1 || int64_t(rs.size()) <= d ||
        ms.drop_back() != rs.take_front(m - 1) || N % rs[d] != 0)
      return rewriter.notifyMatchFailure(op, "the axis does not split the columns");
    // Every Slice of the result takes its own block of columns.
    Operation *sliced = perm ? perm.getOperation() : reshape.getOperation();
    int64_t taken = 0;
    for (Operation *user : sliced->getUsers()) {
      auto s = dyn_cast<SliceOp>(user);
      auto r = s ? slicedAxis(s) : std::nullopt;
      if (!r || (*r)[0] != axis)
        return rewriter.notifyMatchFailure(op, "other users of the columns");
      taken += (*r)[2];
    }
    if (taken > rs[d])
      return rewriter.notifyMatchFailure(op, "overlapping Slices");
    auto w = wOp.read();
    if (failed(w))
      return failure();
    const int64_t per = N / rs[d], c0 = start * per, cols = size * per;
    std::vector<float> nw;
    nw.reserve(size_t(K * cols));
    for (int64_t k = 0; k < K; ++k)
      nw.insert(nw.end(), (*w)->begin() + k * N + c0,
                (*w)->begin() + k * N + c0 + cols);
    std::string name = getOpName(op);
    auto f32 = rewriter.getF32Type();
    Value right = WeightOp::createWithData(
        rewriter, mm, name + "_weight", RankedTensorType::get({K, cols}, f32),
        std::move(nw));
    Value bias = mm.getBias();
    if (bOp) {
      auto b = bOp.read();
      if (failed(b))
        return failure();
      bias = WeightOp::createWithData(
          rewriter, mm, name + "_bias", RankedTensorType::get({cols}, f32),
          std::vector<float>((*b)->begin() + c0, (*b)->begin() + c0 + cols));
    }
    // Right after the MatMul, beside the ops that feed it.
    rewriter.setInsertionPointAfter(mm);
    auto loc = [&](StringRef suffix) {
      return NameLoc::get(rewriter.getStringAttr(name + suffix.str()));
    };
    SmallVector<int64_t> outShape(ms.begin(), ms.end());
    outShape.back() = cols;
    Value narrow = rewriter.create<MatMulOp>(loc("_matmul"),
                                             mType.clone(outShape),
                                             mm.getInput(), right, bias,
                                             mm.getDoRelu());
    SmallVector<int64_t> split(rs.begin(), rs.end());
    split[d] = size;
    auto splitType = mType.clone(split);
    if (!perm) {
      rewriter.replaceOpWithNewOp<ReshapeOp>(op, splitType, narrow,
                                             rewriter.getI64ArrayAttr(split));
      return success();
    }
    Value r = rewriter.create<ReshapeOp>(loc("_split"), splitType, narrow,
                                         rewriter.getI64ArrayAttr(split));
    rewriter.replaceOpWithNewOp<PermuteOp>(op, op.getOutput().getType(), r,
                                           perm.getOrder());
    return success();
  }
};

} // namespace

void populateMatMulColumnsPatterns(RewritePatternSet &results,
                                   MLIRContext *context) {
  results.add<SliceOfMatMulColumns>(context);
}

} // namespace top
