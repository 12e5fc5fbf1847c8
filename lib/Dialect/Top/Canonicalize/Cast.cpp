// Casts move toward the tensors they convert: a Reshape of a Cast becomes a
// Cast of the Reshape, so the Reshape reads its producer directly (a model
// input a layer group loads in the layout its users read, rather than in the
// input's and moved across lanes), and a Cast to the type its operand
// already holds disappears.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Support/WeightStore.h"

using namespace mlir;
using namespace tpuc;

namespace top {
namespace {

/// Reshape(Cast(x)) -> Cast(Reshape(x)): a Cast converts each element on its
/// own, so it commutes with any change of shape. The Cast takes the
/// Reshape's location (it now produces that tensor).
struct ReshapeBeforeCast : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto cast = op.getInput().getDefiningOp<CastOp>();
    if (!cast || !cast->hasOneUse())
      return failure();
    auto out = dyn_cast<RankedTensorType>(op.getOutput().getType());
    auto in = dyn_cast<RankedTensorType>(cast.getInput().getType());
    if (!out || !in)
      return failure();
    auto type = RankedTensorType::get(out.getShape(), in.getElementType());
    Value reshaped = rewriter.create<ReshapeOp>(
        NameLoc::get(rewriter.getStringAttr(getOpName(cast) + "_reshaped")),
        type, cast.getInput(), op.getShapeAttr());
    rewriter.replaceOpWithNewOp<CastOp>(op, out, reshaped, cast.getToAttr());
    rewriter.eraseOp(cast);
    return success();
  }
};

/// Cast(Cast(x, t), t) -> Cast(x, t): the inner result already holds values
/// of type t, which the outer Cast keeps as they are.
struct FoldCastOfCast : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<CastOp>();
    if (!inner || inner.getTo() != op.getTo() ||
        inner.getInput().getType() != op.getInput().getType())
      return failure();
    rewriter.modifyOpInPlace(
        op, [&] { op.getInputMutable().assign(inner.getInput()); });
    if (inner->use_empty())
      rewriter.eraseOp(inner);
    return success();
  }
};

} // namespace

void populateReshapeCastPatterns(RewritePatternSet &results,
                                 MLIRContext *context) {
  results.add<ReshapeBeforeCast>(context);
}

void CastOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<FoldCastOfCast>(context);
}

} // namespace top
