// Top's unary functions -> tpu.Active with a mode naming the function the
// chip's function unit computes; Top's Cast -> tpu.Cast.
#include "Common.h"

using namespace mlir;
using namespace tpuc;

namespace {

/// What tpu.Active computes for a Top op: a mode and its parameters.
struct ActiveDesc {
  StringRef mode;
  FloatAttr min, max, exponent, alpha, beta;
};

ActiveDesc describe(top::ReluOp op) {
  // A negative relu_limit means "no upper limit".
  FloatAttr limit = op.getReluLimitAttr();
  return {"relu", {}, limit.getValueAsDouble() >= 0 ? limit : FloatAttr(), {}};
}
ActiveDesc describe(top::ClipOp op) {
  return {"clip", op.getMinAttr(), op.getMaxAttr(), {}};
}
ActiveDesc describe(top::PowOp op) {
  return {"pow", {}, {}, op.getExponentAttr()};
}
ActiveDesc describe(top::GELUOp op) {
  return {op.getApproximate() == "tanh" ? "gelu_tanh" : "gelu", {}, {}, {}};
}
ActiveDesc describe(top::LeakyReluOp op) {
  return {"leaky_relu", {}, {}, {}, op.getAlphaAttr(), {}};
}
ActiveDesc describe(top::HardSigmoidOp op) {
  return {"hard_sigmoid", {}, {}, {}, op.getAlphaAttr(), op.getBetaAttr()};
}
ActiveDesc describe(top::HardSwishOp) { return {"hard_swish", {}, {}, {}}; }
ActiveDesc describe(top::SigmoidOp) { return {"sigmoid", {}, {}, {}}; }
ActiveDesc describe(top::TanhOp) { return {"tanh", {}, {}, {}}; }
ActiveDesc describe(top::SiLUOp) { return {"silu", {}, {}, {}}; }
ActiveDesc describe(top::ErfOp) { return {"erf", {}, {}, {}}; }
ActiveDesc describe(top::AbsOp) { return {"abs", {}, {}, {}}; }
ActiveDesc describe(top::ExpOp) { return {"exp", {}, {}, {}}; }
ActiveDesc describe(top::LogOp) { return {"log", {}, {}, {}}; }
ActiveDesc describe(top::SqrtOp) { return {"sqrt", {}, {}, {}}; }
ActiveDesc describe(top::RsqrtOp) { return {"rsqrt", {}, {}, {}}; }

template <typename TopOp>
struct LowerToActive : OpConversionPattern<TopOp> {
  using OpConversionPattern<TopOp>::OpConversionPattern;
  using OpAdaptor = typename TopOp::Adaptor;

  LogicalResult
  matchAndRewrite(TopOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ActiveDesc d = describe(op);
    rewriter.replaceOpWithNewOp<tpu::ActiveOp>(
        op, op.getOutput().getType(), adaptor.getInput(),
        rewriter.getStringAttr(d.mode), d.min, d.max, d.exponent, d.alpha,
        d.beta);
    return success();
  }
};

struct LowerCast : OpConversionPattern<top::CastOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(top::CastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tpu::CastOp>(op, op.getOutput().getType(),
                                             adaptor.getInput(),
                                             op.getToAttr());
    return success();
  }
};

} // namespace

void tpuc::populateTopToTpuActivationPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerToActive<top::ReluOp>, LowerToActive<top::ClipOp>,
               LowerToActive<top::PowOp>, LowerToActive<top::GELUOp>,
               LowerToActive<top::SigmoidOp>, LowerToActive<top::TanhOp>,
               LowerToActive<top::SiLUOp>, LowerToActive<top::ErfOp>,
               LowerToActive<top::AbsOp>, LowerToActive<top::ExpOp>,
               LowerToActive<top::LogOp>, LowerToActive<top::SqrtOp>,
               LowerToActive<top::RsqrtOp>, LowerToActive<top::LeakyReluOp>,
               LowerToActive<top::HardSigmoidOp>,
               LowerToActive<top::HardSwishOp>, LowerCast>(patterns.getContext());
}
