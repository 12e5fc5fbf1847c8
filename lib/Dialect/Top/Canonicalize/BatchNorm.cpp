// BatchNorm after a Conv whose weights are constants folds into the Conv's
// filter and bias: w' = w * s, b' = (b - mean) * s + beta, s = gamma/sqrt(var+eps).
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

} // namespace

void BatchNormOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<FoldBatchNormIntoConv>(context);
}

} // namespace top
