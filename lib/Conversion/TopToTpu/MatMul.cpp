// top.MatMul -> tpu.MatMul: same operands (batch dims broadcast on both).
#include "Common.h"

using namespace mlir;
using namespace tpuc;

namespace {

struct LowerMatMul : OpConversionPattern<top::MatMulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(top::MatMulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tpu::MatMulOp>(
        op, op.getOutput().getType(), adaptor.getInput(), adaptor.getRight(),
        adaptor.getBias(), /*quant=*/Value(), op.getDoReluAttr());
    return success();
  }
};

} // namespace

void tpuc::populateTopToTpuMatMulPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerMatMul>(patterns.getContext());
}
