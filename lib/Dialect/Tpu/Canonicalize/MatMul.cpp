// tpu.MatMul canonicalization: a run-time right operand transposed in its
// last two dims (attention's K^T) is read through the matmul's transposed
// right operand instead, so the transpose that would move the contracting
// dim across lanes disappears; any remaining outer permutation stays.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Support/OpHelpers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace tpu {
namespace {

/// `loc` renamed with `suffix`: the op built there holds other data (a
/// transposed layout) than the tensor that name had.
Location renamed(Location loc, StringRef suffix) {
  if (auto n = dyn_cast<NameLoc>(loc))
    return NameLoc::get(
        StringAttr::get(loc.getContext(), n.getName().str() + suffix.str()),
        n.getChildLoc());
  return loc;
}

/// The tensor operand of `op` when `op` computes each element from that
/// element alone (a Mul by one number, a table lookup), so it commutes with
/// a Permute of that operand; null otherwise.
Value elementwiseInput(Operation *op) {
  if (auto mul = dyn_cast<MulOp>(op)) {
    auto lhs = tpuc::getShape(mul.getLhs()), rhs = tpuc::getShape(mul.getRhs());
    if (tpuc::numElements(rhs) == 1 && rhs.size() <= lhs.size())
      return mul.getLhs();
    return {};
  }
  if (auto lut = dyn_cast<LutOp>(op))
    return lut.getInput();
  return {};
}

struct FoldRightTranspose : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getRightTranspose())
      return failure();
    // A scale by one number between them (scaled dot-product attention
    // scales K^T; in INT8 the scale is a table lookup) commutes with the
    // Permute: it stays after the Permute that remains, where it computes
    // in the layout the matmul reads (in a layer group, a scale before a
    // head split would hold its result in a layout the split cannot take).
    Operation *scale = op.getRight().getDefiningOp();
    Value scaled = scale && scale->hasOneUse() ? elementwiseInput(scale) : Value();
    if (!scaled)
      scale = nullptr;
    auto perm = (scale ? scaled : op.getRight()).getDefiningOp<PermuteOp>();
    if (!perm || perm.getInput().getDefiningOp<top::WeightOp>() ||
        (scale && !perm->hasOneUse()))
      return failure();
    SmallVector<int64_t> order = tpuc::getI64s(perm.getOrder());
    const size_t r = order.size();
    if (r < 2)
      return failure();
    // Output dim i of the Permute is input dim order[i]; the last two
    // swapped give the operand the transposed matmul reads.
    std::swap(order[r - 2], order[r - 1]);
    Value right = perm.getInput();
    bool identity = true;
    for (size_t i = 0; i < r; ++i)
      identity &= order[i] == int64_t(i);
    // Worth it when the input's innermost dim stays innermost: what is left
    // of the Permute then keeps each row in its lane.
    if (order[r - 1] != int64_t(r - 1))
      return failure();
    rewriter.setInsertionPoint(op);
    if (!identity) {
      auto in = cast<RankedTensorType>(right.getType());
      SmallVector<int64_t> shape;
      for (int64_t d : order)
        shape.push_back(in.getDimSize(d));
      right = PermuteOp::create(rewriter, renamed(perm.getLoc(), "_nk"),
                                RankedTensorType::get(shape,
                                                      in.getElementType()),
                                right, rewriter.getI64ArrayAttr(order))
                  .getOutput();
    }
    if (scale) {
      auto in = cast<RankedTensorType>(right.getType());
      Operation *moved = rewriter.clone(*scale);
      moved->setOperand(0, right);
      moved->getResult(0).setType(RankedTensorType::get(
          in.getShape(), getElementTypeOrSelf(scale->getResult(0).getType())));
      moved->setLoc(renamed(scale->getLoc(), "_nk"));
      right = moved->getResult(0);
    }
    rewriter.modifyOpInPlace(op, [&] {
      op.getRightMutable().assign(right);
      op.setRightTranspose(true);
    });
    if (scale && scale->use_empty())
      rewriter.eraseOp(scale);
    if (perm->use_empty())
      rewriter.eraseOp(perm);
    return success();
  }
};

} // namespace

void MatMulOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<FoldRightTranspose>(context);
}

} // namespace tpu
