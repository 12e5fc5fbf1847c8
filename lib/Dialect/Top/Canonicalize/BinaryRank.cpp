// A binary op on tensors of more than four dims whose leading dims are 1
// (Swin's shifted-window mask added to the scores viewed as [1, windows,
// heads, tokens, tokens]) computes on the tensors without those dims,
// between Reshapes, which cost nothing: at rank four the op can join a layer
// group (the scores' own, which then stays whole) instead of running on its
// own through DDR. The last Reshape keeps the op's name.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Support/OpHelpers.h"

using namespace mlir;
using namespace tpuc;

namespace top {
namespace {

template <typename OpT>
struct DropLeadingUnitDims : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    auto out = dyn_cast<RankedTensorType>(op.getOutput().getType());
    if (!out || !out.hasStaticShape() || out.getRank() <= 4 ||
        !isRanked(op.getLhs()) || !isRanked(op.getRhs()))
      return rewriter.notifyMatchFailure(op, "not a static rank above four");
    auto s = out.getShape();
    const int64_t r = out.getRank();
    int64_t drop = 0;
    while (r - drop > 4 && s[drop] == 1)
      ++drop;
    if (drop == 0)
      return rewriter.notifyMatchFailure(op, "no leading unit dim");
    std::string name = getOpName(op);
    // Operands broadcast from the right: each loses the dropped dims it has.
    auto narrow = [&](Value v, StringRef suffix) -> Value {
      auto t = cast<RankedTensorType>(v.getType());
      int64_t lose = std::max<int64_t>(0, drop - (r - t.getRank()));
      if (lose == 0)
        return v;
      auto shape = t.getShape().drop_front(lose);
      return rewriter.create<ReshapeOp>(
          NameLoc::get(rewriter.getStringAttr(name + suffix.str())),
          t.clone(shape), v, rewriter.getI64ArrayAttr(shape));
    };
    Value lhs = narrow(op.getLhs(), "_lhs"), rhs = narrow(op.getRhs(), "_rhs");
    auto inner = rewriter.create<OpT>(
        NameLoc::get(rewriter.getStringAttr(name + "_rank4")),
        out.clone(s.drop_front(drop)), lhs, rhs, op.getDoRelu());
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, out, inner.getOutput(),
                                           rewriter.getI64ArrayAttr(s));
    return success();
  }
};

} // namespace

void populateAddRankPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<DropLeadingUnitDims<AddOp>>(context);
}

void populateMulRankPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<DropLeadingUnitDims<MulOp>>(context);
}

} // namespace top
