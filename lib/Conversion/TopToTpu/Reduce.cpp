// top.Reduce -> tpu.Reduce with explicit, sorted, non-negative axes (Top's
// empty axes, "every dim", become the full list).
#include "Common.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace tpuc;

namespace {

struct LowerReduce : OpConversionPattern<top::ReduceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(top::ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t rank = getShape(op.getInput()).size();
    SmallVector<int64_t> axes;
    for (int64_t a : getI64s(op.getAxes()))
      axes.push_back(normalizeAxis(a, rank));
    if (axes.empty())
      axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    llvm::sort(axes);
    rewriter.replaceOpWithNewOp<tpu::ReduceOp>(
        op, op.getOutput().getType(), adaptor.getInput(), op.getModeAttr(),
        rewriter.getI64ArrayAttr(axes), op.getKeepdimsAttr());
    return success();
  }
};

} // namespace

void tpuc::populateTopToTpuReducePatterns(RewritePatternSet &patterns) {
  patterns.add<LowerReduce>(patterns.getContext());
}
