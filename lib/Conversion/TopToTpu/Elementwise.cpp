// Broadcasting binary Top ops map one to one onto their Tpu counterparts.
#include "Common.h"

using namespace mlir;
using namespace tpuc;

namespace {

template <typename TopOp, typename TpuOp>
struct LowerBinary : OpConversionPattern<TopOp> {
  using OpConversionPattern<TopOp>::OpConversionPattern;
  using OpAdaptor = typename TopOp::Adaptor;

  LogicalResult
  matchAndRewrite(TopOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<TpuOp>(op, op.getOutput().getType(),
                                       adaptor.getLhs(), adaptor.getRhs(),
                                       op.getDoReluAttr());
    return success();
  }
};

} // namespace

void tpuc::populateTopToTpuElementwisePatterns(RewritePatternSet &patterns) {
  patterns.add<LowerBinary<top::AddOp, tpu::AddOp>,
               LowerBinary<top::SubOp, tpu::SubOp>,
               LowerBinary<top::MulOp, tpu::MulOp>,
               LowerBinary<top::DivOp, tpu::DivOp>,
               LowerBinary<top::MaxOp, tpu::MaxOp>,
               LowerBinary<top::MinOp, tpu::MinOp>>(patterns.getContext());
}
