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
    Window2d w = toWindow2d(op, adaptor.getInput(), adaptor.getFilter(),
                            rewriter);
    auto deconv = tpu::DeconvOp::create(
        rewriter, w.loc, w.type, w.input, w.filter, adaptor.getBias(),
        rewriter.getI64ArrayAttr(w.kernel), rewriter.getI64ArrayAttr(w.strides),
        rewriter.getI64ArrayAttr(w.pads), rewriter.getI64ArrayAttr(w.dilations),
        op.getGroupAttr());
    Value result = w.result(rewriter, op, deconv.getOutput());
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
