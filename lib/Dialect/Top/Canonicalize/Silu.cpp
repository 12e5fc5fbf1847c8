// x * sigmoid(x) (how ONNX exporters emit nn.SiLU before opset 22's Swish)
// becomes one SiLU: one special-function pass on the chip instead of the
// sigmoid's and a multiply's, and in INT8 one float island instead of a
// lookup table and a quantized multiply. The SiLU takes the location of
// the Mul, whose tensor it produces.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Support/OpHelpers.h"

using namespace mlir;
using namespace tpuc;

namespace top {

namespace {
struct FuseSigmoidMulToSiLU : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp mul,
                                PatternRewriter &rewriter) const override {
    if (mul.getDoRelu() || !isRanked(mul.getOutput()))
      return failure();
    for (int i = 0; i < 2; ++i) {
      auto sig = mul->getOperand(i).getDefiningOp<SigmoidOp>();
      Value x = mul->getOperand(1 - i);
      if (!sig || !sig->hasOneUse() || sig.getInput() != x ||
          getShape(x) != getShape(mul.getOutput()))
        continue;
      auto silu = SiLUOp::create(rewriter, mul.getLoc(),
                                 mul.getOutput().getType(), x);
      rewriter.replaceOp(mul, silu.getOutput());
      rewriter.eraseOp(sig);
      return success();
    }
    return rewriter.notifyMatchFailure(mul, "not x * sigmoid(x)");
  }
};
} // namespace

void populateSiLUPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<FuseSigmoidMulToSiLU>(context);
}

} // namespace top
