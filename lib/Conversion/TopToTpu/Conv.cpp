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
    auto kernel = getI64s(op.getKernelShape());
    auto strides = getI64s(op.getStrides()), dil = getI64s(op.getDilations()),
         pads = getI64s(op.getPads());
    Value input = adaptor.getInput(), filter = adaptor.getFilter();
    auto outType = cast<RankedTensorType>(op.getOutput().getType());
    // Top pads are begins then ends: for 2-D that is already
    // [top, left, bottom, right].
    const bool is1d = kernel.size() == 1;
    RankedTensorType convType = outType;
    if (is1d) {
      auto in = getShape(input), f = getShape(filter);
      input = reshape(rewriter, helperLoc(op, "input_2d"), input,
                      {in[0], in[1], 1, in[2]});
      filter = reshape(rewriter, helperLoc(op, "filter_2d"), filter,
                       {f[0], f[1], 1, f[2]});
      kernel = {1, kernel[0]};
      strides = {1, strides[0]};
      dil = {1, dil[0]};
      pads = {0, pads[0], 0, pads[1]};
      auto out = outType.getShape();
      convType = RankedTensorType::get({out[0], out[1], 1, out[2]},
                                       outType.getElementType());
    }
    auto conv = tpu::ConvOp::create(
        rewriter, is1d ? helperLoc(op, "2d") : op.getLoc(), convType, input,
        filter, adaptor.getBias(), rewriter.getI64ArrayAttr(kernel),
        rewriter.getI64ArrayAttr(strides), rewriter.getI64ArrayAttr(pads),
        rewriter.getI64ArrayAttr(dil), op.getGroupAttr(), op.getDoReluAttr(),
        op.getReluLimitAttr());
    Value result = conv.getOutput();
    if (is1d)
      result = tpu::ReshapeOp::create(rewriter, op.getLoc(), outType, result)
                   .getOutput();
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tpuc::populateTopToTpuConvPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerConv>(patterns.getContext());
}
