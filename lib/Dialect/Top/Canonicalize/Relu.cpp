// A Relu whose producer can apply it itself (Conv, Add) fuses into it.
#include "tpuc/Dialect/Top/IR/TopDialect.h"

using namespace mlir;

namespace top {
namespace {

struct FuseReluIntoConv : OpRewritePattern<ReluOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReluOp relu,
                                PatternRewriter &rewriter) const override {
    auto conv = relu.getInput().getDefiningOp<ConvOp>();
    if (!conv || !conv->hasOneUse() || conv.getDoRelu())
      return failure();
    // The fused op takes the Relu's name: its output is the Relu's tensor.
    rewriter.modifyOpInPlace(conv, [&] {
      conv.setDoRelu(true);
      conv.setReluLimit(relu.getReluLimit());
      conv->setLoc(relu.getLoc());
      conv.getOutput().setType(relu.getOutput().getType());
    });
    rewriter.replaceOp(relu, conv.getOutput());
    return success();
  }
};

} // namespace

void ReluOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<FuseReluIntoConv>(context);
}

} // namespace top
