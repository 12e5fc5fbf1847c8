// Normalization: LayerNorm and Softmax get non-negative axes; a BatchNorm
// that was not folded into a Conv becomes x * s + b with per-channel
// constants s = scale / sqrt(var + eps), b = bias - mean * s.
#include "Common.h"
#include <cmath>

using namespace mlir;
using namespace tpuc;
using namespace tpuc::lowering;

namespace {

struct LowerLayerNorm : OpConversionPattern<top::LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(top::LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t axis = normalizeAxis(op.getAxis(), getShape(op.getInput()).size());
    rewriter.replaceOpWithNewOp<tpu::LayerNormOp>(
        op, op.getOutput().getType(), adaptor.getInput(), adaptor.getWeight(),
        adaptor.getBias(), rewriter.getI64IntegerAttr(axis),
        op.getEpsilonAttr());
    return success();
  }
};

struct LowerSoftmax : OpConversionPattern<top::SoftmaxOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(top::SoftmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t axis = normalizeAxis(op.getAxis(), getShape(op.getInput()).size());
    rewriter.replaceOpWithNewOp<tpu::SoftmaxOp>(
        op, op.getOutput().getType(), adaptor.getInput(),
        rewriter.getI64IntegerAttr(axis), FloatAttr());
    return success();
  }
};

struct LowerBatchNorm : OpConversionPattern<top::BatchNormOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(top::BatchNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<top::WeightOp> params;
    for (Value v : {op.getScale(), op.getBias(), op.getMean(),
                    op.getVariance()})
      if (auto w = v.getDefiningOp<top::WeightOp>())
        params.push_back(w);
    if (params.size() != 4)
      return op.emitOpError()
             << "cannot be lowered: scale, bias, mean and variance must be "
             << "top.Weight constants";
    if (failed(requireWeightFile(op)))
      return failure();
    SmallVector<std::shared_ptr<std::vector<float>>> p;
    for (top::WeightOp w : params) {
      auto data = w.read();
      if (failed(data))
        return failure();
      p.push_back(*data);
    }
    auto in = getShape(op.getInput());
    const int64_t c = in[1];
    const float eps = float(op.getEpsilon().convertToDouble());
    // The same float arithmetic as Top's BatchNorm reference.
    std::vector<float> scale(c), bias(c);
    for (int64_t ch = 0; ch < c; ++ch) {
      scale[ch] = (*p[0])[ch] / std::sqrt((*p[3])[ch] + eps);
      bias[ch] = (*p[1])[ch] - (*p[2])[ch] * scale[ch];
    }
    // [C, 1, ...]: broadcasts over the dims after the channel.
    SmallVector<int64_t> shape(in.size() - 1, 1);
    shape[0] = c;
    auto type = RankedTensorType::get(
        shape, cast<RankedTensorType>(op.getOutput().getType()).getElementType());
    std::string name = getOpName(op);
    auto s = top::WeightOp::createWithData(rewriter, op, name + "_tpu_scale",
                                           type, std::move(scale));
    auto b = top::WeightOp::createWithData(rewriter, op, name + "_tpu_bias",
                                           type, std::move(bias));
    auto mul = tpu::MulOp::create(rewriter, helperLoc(op, "mul"),
                                  op.getOutput().getType(), adaptor.getInput(),
                                  s.getOutput(), rewriter.getBoolAttr(false));
    rewriter.replaceOpWithNewOp<tpu::AddOp>(op, op.getOutput().getType(),
                                            mul.getOutput(), b.getOutput(),
                                            rewriter.getBoolAttr(false));
    return success();
  }
};

} // namespace

void tpuc::populateTopToTpuNormPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerLayerNorm, LowerSoftmax, LowerBatchNorm>(
      patterns.getContext());
}
