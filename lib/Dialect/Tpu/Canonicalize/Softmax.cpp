// A Softmax of a tensor divided by a constant scalar (attention's scores /
// sqrt(head dim)) divides as its first step in local memory: one pass over
// the scores through DDR less. The Div's own rounding to its result type
// goes away with it; the Softmax keeps its location.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Support/OpHelpers.h"
#include "mlir/IR/PatternMatch.h"
#include <cmath>

using namespace mlir;
using namespace tpuc;

namespace tpu {
namespace {

struct FuseDivisorIntoSoftmax : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    auto div = op.getInput().getDefiningOp<DivOp>();
    if (!div || !div->hasOneUse() || div.getDoRelu() ||
        op.getDivisor() ||
        div.getLhs().getType() != div.getOutput().getType())
      return failure();
    auto weight = div.getRhs().getDefiningOp<top::WeightOp>();
    if (!weight || numElements(getShape(div.getRhs())) != 1)
      return failure();
    auto value = weight.read();
    if (failed(value))
      return failure();
    float d = (**value)[0];
    if (!std::isfinite(d) || d == 0)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputMutable().assign(div.getLhs());
      op.setDivisorAttr(rewriter.getF64FloatAttr(d));
    });
    rewriter.eraseOp(div);
    return success();
  }
};

} // namespace

void SoftmaxOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<FuseDivisorIntoSoftmax>(context);
}

} // namespace tpu
