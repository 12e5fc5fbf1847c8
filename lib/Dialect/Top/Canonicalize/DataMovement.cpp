// Canonicalization of data-movement ops: chains collapse and ops that do not
// move anything disappear. A surviving op keeps its own location, so the
// tensor it produces keeps the original model's name.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"
#include <cmath>

using namespace mlir;
using namespace tpuc;

namespace top {
namespace {

/// Replaces `op` by `input` when that changes nothing, type included.
LogicalResult forwardInput(Operation *op, Value input,
                           PatternRewriter &rewriter) {
  if (input.getType() != op->getResult(0).getType())
    return rewriter.notifyMatchFailure(op, "result type differs from input");
  rewriter.replaceOp(op, input);
  return success();
}

/// Reshape(Reshape(x)) -> Reshape(x): only the last shape matters.
struct FoldReshapeChain : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ReshapeOp>();
    if (!inner)
      return failure();
    rewriter.modifyOpInPlace(
        op, [&] { op.getInputMutable().assign(inner.getInput()); });
    return success();
  }
};

struct RemoveIdentityReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    if (!isRanked(op.getInput()))
      return failure();
    return forwardInput(op, op.getInput(), rewriter);
  }
};

/// Permute(Permute(x, inner), outer) -> Permute(x, inner o outer).
struct MergePermuteChain : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PermuteOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<PermuteOp>();
    if (!inner)
      return failure();
    auto innerOrder = getI64s(inner.getOrder());
    SmallVector<int64_t> order;
    for (int64_t d : getI64s(op.getOrder()))
      order.push_back(innerOrder[d]);
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputMutable().assign(inner.getInput());
      op.setOrderAttr(rewriter.getI64ArrayAttr(order));
    });
    return success();
  }
};

struct RemoveIdentityPermute : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PermuteOp op,
                                PatternRewriter &rewriter) const override {
    for (auto [i, d] : llvm::enumerate(getI64s(op.getOrder())))
      if (int64_t(i) != d)
        return failure();
    return forwardInput(op, op.getInput(), rewriter);
  }
};

/// A Slice that takes every element in order is the identity.
struct RemoveFullSlice : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    if (!isRanked(op.getInput()))
      return failure();
    SmallVector<int64_t> starts, steps, sizes;
    op.getBounds(starts, steps, sizes);
    auto in = getShape(op.getInput());
    for (size_t d = 0; d < in.size(); ++d)
      // Taking all of a dim of size > 1 forces start 0 and step 1.
      if (sizes[d] != in[d] || (in[d] > 1 && steps[d] < 0))
        return failure();
    return forwardInput(op, op.getInput(), rewriter);
  }
};

struct RemoveZeroPad : OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PadOp op,
                                PatternRewriter &rewriter) const override {
    if (llvm::any_of(getI64s(op.getPads()), [](int64_t p) { return p != 0; }))
      return failure();
    return forwardInput(op, op.getInput(), rewriter);
  }
};

/// A Gather by constant indices that count up by one along the axis
/// (an arange, a single index) takes one run of the axis: a Slice, then a
/// Reshape to the gathered shape, which keeps the Gather's name. Layer
/// groups and DDR views handle slices; gathers stay on their own.
struct GatherOfRange : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op,
                                PatternRewriter &rewriter) const override {
    auto w = op.getIndices().getDefiningOp<WeightOp>();
    if (!w || !isRanked(op.getInput()) || !isRanked(op.getOutput()))
      return failure();
    ArrayRef<int64_t> in = getShape(op.getInput());
    int64_t axis = op.getAxis();
    if (axis < 0)
      axis += int64_t(in.size());
    if (axis < 0 || axis >= int64_t(in.size()))
      return failure();
    auto idx = w.read();
    if (failed(idx) || (*idx)->empty())
      return failure();
    const int64_t dim = in[axis], n = int64_t((*idx)->size());
    int64_t start = 0;
    for (int64_t i = 0; i < n; ++i) {
      float v = (**idx)[i];
      if (v != std::trunc(v) || v < -dim || v >= dim)
        return failure(); // the Gather reports it
      int64_t k = v < 0 ? int64_t(v) + dim : int64_t(v);
      if (i == 0)
        start = k;
      else if (k != start + i)
        return rewriter.notifyMatchFailure(op, "indices are not a range");
    }
    SmallVector<int64_t> shape(in.begin(), in.end());
    shape[axis] = n;
    auto type = RankedTensorType::get(
        shape, cast<RankedTensorType>(op.getInput().getType()).getElementType());
    // Of the gathered shape already: the Slice takes the Gather's name.
    bool same = type == op.getOutput().getType();
    Value slice = rewriter.create<SliceOp>(
        same ? op.getLoc()
             : NameLoc::get(rewriter.getStringAttr(getOpName(op) + "_range")),
        type, op.getInput(), rewriter.getI64ArrayAttr({start}),
        rewriter.getI64ArrayAttr({start + n}), rewriter.getI64ArrayAttr({axis}),
        rewriter.getI64ArrayAttr({1}));
    if (same) {
      rewriter.replaceOp(op, slice);
      return success();
    }
    rewriter.replaceOpWithNewOp<ReshapeOp>(
        op, op.getOutput().getType(), slice,
        rewriter.getI64ArrayAttr(getShape(op.getOutput())));
    return success();
  }
};

} // namespace

// ChannelsLast.cpp: NHWC islands of NCHW models back to channel-first ops.
void populateChannelsLastPatterns(RewritePatternSet &results,
                                  MLIRContext *context);
// ChannelShuffle.cpp: Slices of channel shuffles and of Convs.
void populateChannelShufflePatterns(RewritePatternSet &results,
                                    MLIRContext *context);
// SliceConcat.cpp: Slices of Concats and of Slices, Concats of Concats.
void populateSliceConcatPatterns(RewritePatternSet &results,
                                 MLIRContext *context);
void populateConcatOfConcatsPatterns(RewritePatternSet &results,
                                     MLIRContext *context);
// Cast.cpp: Reshapes of Casts.
void populateReshapeCastPatterns(RewritePatternSet &results,
                                 MLIRContext *context);
// MatMulColumns.cpp: Slices of a MatMul's blocks of columns.
void populateMatMulColumnsPatterns(RewritePatternSet &results,
                                   MLIRContext *context);

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<FoldReshapeChain, RemoveIdentityReshape>(context);
  populateReshapeCastPatterns(results, context);
}

void PermuteOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<MergePermuteChain, RemoveIdentityPermute>(context);
  populateChannelsLastPatterns(results, context);
}

void SliceOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<RemoveFullSlice>(context);
  populateChannelShufflePatterns(results, context);
  populateMatMulColumnsPatterns(results, context);
  populateSliceConcatPatterns(results, context);
}

void ConcatOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  populateConcatOfConcatsPatterns(results, context);
}

void GatherOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<GatherOfRange>(context);
}

void PadOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<RemoveZeroPad>(context);
}

} // namespace top
