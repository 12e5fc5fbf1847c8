// tpu.Reshape folding: identity reshapes vanish, chains collapse, and the
// reshape of a constant becomes the constant with the new type (the weight
// store keeps row-major data, so only the type changes).
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace tpu {

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getOutput().getType())
    return getInput();
  if (auto prev = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(prev.getInput());
    return getOutput();
  }
  return {};
}

namespace {

struct ReshapeOfWeight : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto weight = op.getInput().getDefiningOp<top::WeightOp>();
    // A shared weight keeps its type for its other users; the name is the
    // data's key, so two types under one name must not coexist.
    if (!weight || !weight->hasOneUse())
      return failure();
    rewriter.setInsertionPoint(weight);
    auto reshaped = top::WeightOp::create(rewriter, weight.getLoc(),
                                          op.getOutput().getType());
    rewriter.replaceOp(op, reshaped.getOutput());
    rewriter.eraseOp(weight);
    return success();
  }
};

} // namespace

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<ReshapeOfWeight>(context);
}

} // namespace tpu
