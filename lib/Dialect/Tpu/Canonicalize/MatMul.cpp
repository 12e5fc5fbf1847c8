// tpu.MatMul canonicalization: a run-time right operand transposed in its
// last two dims (attention's K^T) is read through the matmul's transposed
// right operand instead, so the transpose that would move the contracting
// dim across lanes disappears; any remaining outer permutation stays. A
// weight matmul on picked rows reshaped to a matrix (a pooler on the first
// token) reads the picked rows as they are, one row per batch, and the
// reshape moves after it.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Support/OpHelpers.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace tpu {
namespace {

/// An op between the transposing Permute and the matmul that commutes with
/// the Permute: a scale by one number (scaled dot-product attention scales
/// K^T; in INT8 a table lookup) or a per-tensor QuantCast (INT8 attention
/// whose scores compute in a float island casts K after its head split).
/// It moves after the Permute that remains, where it computes in the
/// layout the matmul reads (in a layer group, an op before a head split
/// would hold its result in a layout the split cannot take).
bool commutesWithPermute(Operation *op) {
  if (!op || !op->hasOneUse())
    return false;
  if (auto mul = dyn_cast<MulOp>(op))
    return tpuc::numElements(tpuc::getShape(mul.getRhs())) == 1 &&
           tpuc::getShape(mul.getRhs()).size() <=
               tpuc::getShape(mul.getLhs()).size();
  if (isa<LutOp>(op))
    return true;
  if (auto cast = dyn_cast<QuantCastOp>(op))
    return !isa<quant::UniformQuantizedPerAxisType>(
               getElementTypeOrSelf(cast.getInput().getType())) &&
           !isa<quant::UniformQuantizedPerAxisType>(
               getElementTypeOrSelf(cast.getOutput().getType()));
  return false;
}

struct FoldRightTranspose : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getRightTranspose())
      return failure();
    // The commuting ops from the matmul back to the Permute.
    SmallVector<Operation *, 2> between;
    Value v = op.getRight();
    while (commutesWithPermute(v.getDefiningOp())) {
      between.push_back(v.getDefiningOp());
      v = v.getDefiningOp()->getOperand(0);
    }
    auto perm = v.getDefiningOp<PermuteOp>();
    if (!perm || perm.getInput().getDefiningOp<top::WeightOp>() ||
        (!between.empty() && !perm->hasOneUse()))
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
    // The ops built here hold other data (a transposed layout) than the
    // tensors their names had.
    if (!identity) {
      auto in = cast<RankedTensorType>(right.getType());
      SmallVector<int64_t> shape;
      for (int64_t d : order)
        shape.push_back(in.getDimSize(d));
      right = PermuteOp::create(rewriter,
                                tpuc::withNameSuffix(perm.getLoc(), "_nk"),
                                RankedTensorType::get(shape,
                                                      in.getElementType()),
                                right, rewriter.getI64ArrayAttr(order))
                  .getOutput();
    }
    for (Operation *o : llvm::reverse(between)) {
      IRMapping map;
      map.map(o->getOperand(0), right);
      Operation *moved = rewriter.clone(*o, map);
      moved->setLoc(tpuc::withNameSuffix(o->getLoc(), "_nk"));
      moved->getResult(0).setType(RankedTensorType::get(
          cast<RankedTensorType>(right.getType()).getShape(),
          getElementTypeOrSelf(o->getResult(0).getType())));
      right = moved->getResult(0);
    }
    rewriter.modifyOpInPlace(op, [&] {
      op.getRightMutable().assign(right);
      op.setRightTranspose(true);
    });
    for (Operation *o : between)
      if (o->use_empty())
        rewriter.eraseOp(o);
    if (perm->use_empty())
      rewriter.eraseOp(perm);
    return success();
  }
};

/// MatMul(Reshape(Slice(x)) : [M, K], W : [K, N]) where the Slice keeps one
/// row of each of M matrices ([..., 1, K], M in its outer dims) becomes
/// Reshape(MatMul(Slice(x), W) : [..., 1, N]) : [M, N]. In a layer group
/// the picked rows stay where they are (a lane copy of the first row of
/// each matrix) instead of moving across lanes into an [M, K] matrix, which
/// takes a DDR round trip; the tiled code folds the batches into M anyway.
struct MatMulOnPickedRows : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    auto reshape = op.getInput().getDefiningOp<ReshapeOp>();
    if (!reshape || !reshape->hasOneUse() ||
        !reshape.getInput().getDefiningOp<SliceOp>())
      return failure();
    auto in = cast<RankedTensorType>(reshape.getInput().getType());
    auto a = tpuc::getShape(op.getInput()), b = tpuc::getShape(op.getRight());
    if (a.size() != 2 || b.size() != 2 || op.getRightTranspose() ||
        in.getRank() < 3 || in.getShape()[in.getRank() - 2] != 1 ||
        in.getShape().back() != a[1])
      return failure();
    auto out = cast<RankedTensorType>(op.getOutput().getType());
    SmallVector<int64_t> shape(in.getShape());
    shape.back() = out.getShape().back();
    rewriter.setInsertionPoint(op);
    IRMapping map;
    map.map(op.getInput(), reshape.getInput());
    Operation *mm = rewriter.clone(*op, map);
    mm->getResult(0).setType(
        RankedTensorType::get(shape, out.getElementType(), out.getEncoding()));
    mm->setLoc(tpuc::withNameSuffix(op.getLoc(), "_rows"));
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, out, mm->getResult(0));
    rewriter.eraseOp(reshape);
    return success();
  }
};

} // namespace

void MatMulOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<FoldRightTranspose, MatMulOnPickedRows>(context);
}

} // namespace tpu
