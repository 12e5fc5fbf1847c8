// BatchNorm after a Conv whose weights are constants folds into the Conv's
// filter and bias: w' = w * s, b' = (b - mean) * s + beta, s = gamma/sqrt(var+eps).
// Any other BatchNorm over NCHW is a depthwise 1x1 Conv (filter s, bias
// beta - mean * s): one op that joins layer groups, quantizes per channel in
// INT8 and fuses a following ReLU (DenseNet's pre-activation BN-ReLU-Conv).
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Support/OpHelpers.h"
#include <cmath>
#include "tpuc/Support/WeightStore.h"

using namespace mlir;
using namespace tpuc;

namespace top {
namespace {

struct FoldBatchNormIntoConv : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BatchNormOp bn,
                                PatternRewriter &rewriter) const override {
    auto conv = bn.getInput().getDefiningOp<ConvOp>();
    if (!conv || !conv->hasOneUse() || conv.getDoRelu())
      return rewriter.notifyMatchFailure(bn, "input is not a plain Conv");
    auto filterOp = conv.getFilter().getDefiningOp<WeightOp>();
    auto biasOp = conv.getBias().getDefiningOp<WeightOp>();
    if (!filterOp || (!isNone(conv.getBias()) && !biasOp))
      return rewriter.notifyMatchFailure(bn, "conv weights are not constant");
    SmallVector<WeightOp> params;
    for (Value v : {bn.getScale(), bn.getBias(), bn.getMean(), bn.getVariance()})
      if (auto w = v.getDefiningOp<WeightOp>())
        params.push_back(w);
    if (params.size() != 4)
      return rewriter.notifyMatchFailure(bn, "parameters are not constant");

    auto filter = filterOp.read();
    if (failed(filter))
      return failure();
    SmallVector<std::shared_ptr<std::vector<float>>> p;
    for (WeightOp w : params) {
      auto d = w.read();
      if (failed(d))
        return failure();
      p.push_back(*d);
    }
    std::vector<float> bias(p[0]->size(), 0.0f);
    if (biasOp) {
      auto b = biasOp.read();
      if (failed(b))
        return failure();
      bias = **b;
    }
    const int64_t oc = bias.size();
    const int64_t per = (*filter)->size() / oc;
    const float eps = float(bn.getEpsilon().convertToDouble());
    std::vector<float> newFilter(**filter);
    for (int64_t c = 0; c < oc; ++c) {
      float s = (*p[0])[c] / std::sqrt((*p[3])[c] + eps);
      for (int64_t i = 0; i < per; ++i)
        newFilter[c * per + i] *= s;
      bias[c] = (bias[c] - (*p[2])[c]) * s + (*p[1])[c];
    }
    std::string name = getOpName(bn);
    auto f = WeightOp::createWithData(
        rewriter, conv, name + "_filter_bn",
        cast<RankedTensorType>(conv.getFilter().getType()),
        std::move(newFilter));
    auto b = WeightOp::createWithData(
        rewriter, conv, name + "_bias_bn",
        RankedTensorType::get({oc}, rewriter.getF32Type()), std::move(bias));
    auto fused = rewriter.create<ConvOp>(
        bn.getLoc(), bn.getOutput().getType(), conv.getInput(), f, b,
        conv.getKernelShape(), conv.getStrides(), conv.getPads(),
        conv.getDilations(), conv.getGroup(), false, conv.getReluLimit());
    rewriter.replaceOp(bn, fused.getOutput());
    rewriter.eraseOp(conv);
    return success();
  }
};

struct BatchNormToDepthwiseConv : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BatchNormOp bn,
                                PatternRewriter &rewriter) const override {
    if (!isRanked(bn.getInput()) || getShape(bn.getInput()).size() != 4 ||
        !isRanked(bn.getOutput()))
      return rewriter.notifyMatchFailure(bn, "not an NCHW BatchNorm");
    if (auto conv = bn.getInput().getDefiningOp<ConvOp>())
      if (conv->hasOneUse() && !conv.getDoRelu())
        return rewriter.notifyMatchFailure(bn, "folds into the Conv before it");
    SmallVector<std::shared_ptr<std::vector<float>>> p;
    for (Value v : {bn.getScale(), bn.getBias(), bn.getMean(), bn.getVariance()}) {
      auto w = v.getDefiningOp<WeightOp>();
      if (!w)
        return rewriter.notifyMatchFailure(bn, "parameters are not constant");
      auto d = w.read();
      if (failed(d))
        return failure();
      p.push_back(*d);
    }
    const int64_t c = getShape(bn.getInput())[1];
    const float eps = float(bn.getEpsilon().convertToDouble());
    std::vector<float> filter(c), bias(c);
    for (int64_t ch = 0; ch < c; ++ch) {
      filter[ch] = (*p[0])[ch] / std::sqrt((*p[3])[ch] + eps);
      bias[ch] = (*p[1])[ch] - (*p[2])[ch] * filter[ch];
    }
    std::string name = getOpName(bn);
    auto f32 = rewriter.getF32Type();
    auto f = WeightOp::createWithData(rewriter, bn, name + "_dw_filter",
                                      RankedTensorType::get({c, 1, 1, 1}, f32),
                                      std::move(filter));
    auto b = WeightOp::createWithData(rewriter, bn, name + "_dw_bias",
                                      RankedTensorType::get({c}, f32), std::move(bias));
    auto ones = rewriter.getI64ArrayAttr({1, 1});
    rewriter.replaceOpWithNewOp<ConvOp>(
        bn, bn.getOutput().getType(), bn.getInput(), f, b, ones, ones,
        rewriter.getI64ArrayAttr({0, 0, 0, 0}), ones, uint64_t(c), false,
        APFloat(-1.0));
    return success();
  }
};

} // namespace

void BatchNormOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<FoldBatchNormIntoConv, BatchNormToDepthwiseConv>(context);
}

} // namespace top
