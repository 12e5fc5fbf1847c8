// A mean over the two spatial dims of an NCHW tensor is a GlobalAvgPool
// (plus a Reshape dropping the unit dims without keepdims): the pool lowers
// to a row pool that joins the layer group computing its input, where a
// Reduce would read the whole map back from DDR.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Support/OpHelpers.h"

using namespace mlir;
using namespace tpuc;

namespace top {
namespace {

struct SpatialMeanToGlobalAvgPool : OpRewritePattern<ReduceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getMode() != "mean" || !isRanked(op.getInput()) ||
        !isRanked(op.getOutput()))
      return rewriter.notifyMatchFailure(op, "not a mean of a ranked tensor");
    auto in = getShape(op.getInput());
    if (in.size() != 4)
      return rewriter.notifyMatchFailure(op, "input is not 4-D");
    SmallVector<int64_t> axes;
    for (int64_t a : getI64s(op.getAxes()))
      axes.push_back(a < 0 ? a + 4 : a);
    llvm::sort(axes);
    if (axes != SmallVector<int64_t>{2, 3})
      return rewriter.notifyMatchFailure(op, "not a mean over H and W");
    auto outType = cast<RankedTensorType>(op.getOutput().getType());
    auto poolType = RankedTensorType::get({in[0], in[1], 1, 1}, outType.getElementType());
    if (op.getKeepdims()) {
      rewriter.replaceOpWithNewOp<GlobalAvgPoolOp>(op, outType, op.getInput());
      return success();
    }
    auto pool = rewriter.create<GlobalAvgPoolOp>(
        NameLoc::get(rewriter.getStringAttr(getOpName(op) + "_pool")), poolType,
        op.getInput());
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, outType, pool,
                                           rewriter.getI64ArrayAttr(outType.getShape()));
    return success();
  }
};

} // namespace

void ReduceOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<SpatialMeanToGlobalAvgPool>(context);
}

} // namespace top
