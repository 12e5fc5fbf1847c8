// tpu.Permute canonicalization. A transpose that moves only unit dims keeps
// the row-major order: it is a Reshape, a view of its operand's buffer that
// layer groups hold in their neighbours' layout. One of more than four dims
// (a window partition, a head split of a [.., 1, heads, ..] tensor) cannot
// join a layer group; with its unit dims dropped and the dims that stay
// adjacent merged it often has four or fewer, and becomes that Permute
// between two Reshapes, which fold into their neighbours.
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Support/OpHelpers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace tpu {
namespace {

struct PermuteAsReshape : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PermuteOp op,
                                PatternRewriter &rewriter) const override {
    auto in = dyn_cast<RankedTensorType>(op.getInput().getType());
    if (!in || !in.hasStaticShape())
      return failure();
    auto [shape, perm] =
        tpuc::simplifyPermute(in.getShape(), tpuc::getI64s(op.getOrder()));
    for (auto [i, d] : llvm::enumerate(perm))
      if (int64_t(i) != d)
        return rewriter.notifyMatchFailure(op, "moves elements");
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getOutput().getType(),
                                           op.getInput());
    return success();
  }
};

struct LowerPermuteRank : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PermuteOp op,
                                PatternRewriter &rewriter) const override {
    auto in = dyn_cast<RankedTensorType>(op.getInput().getType());
    if (!in || !in.hasStaticShape() || in.getRank() <= 4)
      return failure();
    auto [shape, perm] =
        tpuc::simplifyPermute(in.getShape(), tpuc::getI64s(op.getOrder()));
    if (int64_t(shape.size()) >= in.getRank() || shape.size() < 2)
      return rewriter.notifyMatchFailure(op, "no dims to drop or merge");
    SmallVector<int64_t> outShape;
    for (int64_t d : perm)
      outShape.push_back(shape[d]);
    Value x = ReshapeOp::create(rewriter, tpuc::withNameSuffix(op.getLoc(), "_in"),
                                in.clone(shape), op.getInput());
    x = PermuteOp::create(rewriter, tpuc::withNameSuffix(op.getLoc(), "_reduced"),
                          in.clone(outShape), x,
                          rewriter.getI64ArrayAttr(perm));
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getOutput().getType(), x);
    return success();
  }
};

} // namespace

void PermuteOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<PermuteAsReshape, LowerPermuteRank>(context);
}

} // namespace tpu
