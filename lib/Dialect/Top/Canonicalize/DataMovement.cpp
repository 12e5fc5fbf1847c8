// Canonicalization of data-movement ops: chains collapse and ops that do not
// move anything disappear. A surviving op keeps its own location, so the
// tensor it produces keeps the original model's name.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Support/OpHelpers.h"

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

} // namespace

// ChannelsLast.cpp: NHWC islands of NCHW models back to channel-first ops.
void populateChannelsLastPatterns(RewritePatternSet &results,
                                  MLIRContext *context);
// ChannelShuffle.cpp: Slices of channel shuffles and of Convs.
void populateChannelShufflePatterns(RewritePatternSet &results,
                                    MLIRContext *context);

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<FoldReshapeChain, RemoveIdentityReshape>(context);
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
}

void PadOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<RemoveZeroPad>(context);
}

} // namespace top
