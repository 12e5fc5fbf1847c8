// top.Deconv -> tpu.Deconv (a 1-D deconv becomes a 2-D one of height 1
// between reshapes) and top.Interp -> tpu.Interp, whose per-axis
// interpolation matrices are built here as weights so the chip resizes with
// two matmuls.
#include "Common.h"
#include "tpuc/Interpreter/Kernels.h"

using namespace mlir;
using namespace tpuc;
using namespace tpuc::lowering;

namespace {

struct LowerDeconv : OpConversionPattern<top::DeconvOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(top::DeconvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto kernel = getI64s(op.getKernelShape());
    auto strides = getI64s(op.getStrides()), dil = getI64s(op.getDilations()),
         pads = getI64s(op.getPads());
    Value input = adaptor.getInput(), filter = adaptor.getFilter();
    auto outType = cast<RankedTensorType>(op.getOutput().getType());
    RankedTensorType type = outType;
    const bool is1d = kernel.size() == 1;
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
      type = RankedTensorType::get({out[0], out[1], 1, out[2]},
                                   outType.getElementType());
    }
    auto deconv = tpu::DeconvOp::create(
        rewriter, is1d ? helperLoc(op, "2d") : op.getLoc(), type, input,
        filter, adaptor.getBias(), rewriter.getI64ArrayAttr(kernel),
        rewriter.getI64ArrayAttr(strides), rewriter.getI64ArrayAttr(pads),
        rewriter.getI64ArrayAttr(dil), op.getGroupAttr());
    Value result = deconv.getOutput();
    if (is1d)
      result = tpu::ReshapeOp::create(rewriter, op.getLoc(), outType, result)
                   .getOutput();
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LowerInterp : OpConversionPattern<top::InterpOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(top::InterpOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireWeightFile(op)))
      return failure();
    auto in = getShape(adaptor.getInput());
    auto outType = cast<RankedTensorType>(op.getOutput().getType());
    auto mode = *parseResizeMode(op.getMode());
    auto coord = *parseResizeCoord(op.getCoordMode());
    auto round = *parseNearestRound(op.getNearestMode());
    int64_t oh = op.getTargetH(), ow = op.getTargetW();
    std::string name = getOpName(op);
    auto matrix = [&](StringRef suffix, int64_t inLen, int64_t outLen,
                      double scale) {
      auto type =
          RankedTensorType::get({outLen, inLen}, outType.getElementType());
      return top::WeightOp::createWithData(
                 rewriter, op, name + suffix.str(), type,
                 resizeMatrix(inLen, outLen, scale, mode, coord, round))
          .getOutput();
    };
    Value ah = matrix("_tpu_height_matrix", in[2], oh,
                      op.getScaleH().convertToDouble());
    Value aw = matrix("_tpu_width_matrix", in[3], ow,
                      op.getScaleW().convertToDouble());
    rewriter.replaceOpWithNewOp<tpu::InterpOp>(op, outType, adaptor.getInput(),
                                               ah, aw);
    return success();
  }
};

} // namespace

void tpuc::populateTopToTpuResamplePatterns(RewritePatternSet &patterns) {
  patterns.add<LowerDeconv, LowerInterp>(patterns.getContext());
}
