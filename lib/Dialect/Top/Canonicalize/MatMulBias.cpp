// An Add of a constant row vector to a MatMul's result is the MatMul's bias:
// the matmul instruction adds it while the accumulator is still in local
// memory (and INT8 adds it as an INT32 bias before the requant), so the
// separate pass over the result through DDR goes away. The MatMul takes the
// Add's location: its output is the Add's tensor.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Support/OpHelpers.h"

using namespace mlir;
using namespace tpuc;

namespace top {
namespace {

struct FuseBiasAddIntoMatMul : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (int i = 0; i < 2; ++i) {
      auto mm = add->getOperand(i).getDefiningOp<MatMulOp>();
      Value bias = add->getOperand(1 - i);
      if (!mm || !mm->hasOneUse() || mm.getDoRelu() || !isNone(mm.getBias()) ||
          !bias.getDefiningOp<WeightOp>() || !isRanked(add.getOutput()) ||
          !isRanked(mm.getOutput()) || !isRanked(bias))
        continue;
      // The sum must have the MatMul's shape, and the constant one value per
      // output column: [..., 1, N] with N the last dim.
      auto out = getShape(mm.getOutput()), b = getShape(bias);
      if (out.empty() || getShape(add.getOutput()) != out ||
          b.size() > out.size() || b.empty() || b.back() != out.back() ||
          numElements(b) != out.back())
        continue;
      // A weight has no operands: it can move up to where the MatMul is.
      Operation *weight = bias.getDefiningOp();
      if (weight->getBlock() == mm->getBlock() &&
          !weight->isBeforeInBlock(mm))
        rewriter.moveOpBefore(weight, mm);
      rewriter.modifyOpInPlace(mm, [&] {
        mm.getBiasMutable().assign(bias);
        mm.setDoRelu(add.getDoRelu());
        mm->setLoc(add.getLoc());
        mm.getOutput().setType(add.getOutput().getType());
      });
      rewriter.replaceOp(add, mm.getOutput());
      return success();
    }
    return rewriter.notifyMatchFailure(add, "not a MatMul plus a row vector");
  }
};

} // namespace

// BinaryRank.cpp: Adds of more than four dims with leading unit dims.
void populateAddRankPatterns(RewritePatternSet &results, MLIRContext *context);

void AddOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<FuseBiasAddIntoMatMul>(context);
  populateAddRankPatterns(results, context);
}

} // namespace top
