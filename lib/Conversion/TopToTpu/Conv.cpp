// top.Conv -> tpu.Conv. The chip convolves in 2-D, so a 1-D conv becomes a
// 2-D conv of height 1 between reshapes of its input, filter and output.
#include "Common.h"

using namespace mlir;
using namespace tpuc;
using namespace tpuc::lowering;

namespace {

struct LowerConv : OpConversionPattern<top::ConvOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(top::ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Window2d w = toWindow2d(op, adaptor.getInput(), adaptor.getFilter(),
                            rewriter);
    auto conv = tpu::ConvOp::create(
        rewriter, w.loc, w.type, w.input, w.filter, adaptor.getBias(), /*quant=*/Value(),
        rewriter.getI64ArrayAttr(w.kernel), rewriter.getI64ArrayAttr(w.strides),
        rewriter.getI64ArrayAttr(w.pads), rewriter.getI64ArrayAttr(w.dilations),
        op.getGroupAttr(), op.getDoReluAttr(), op.getReluLimitAttr());
    Value result = w.result(rewriter, op, conv.getOutput());
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tpuc::populateTopToTpuConvPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerConv>(patterns.getContext());
}
