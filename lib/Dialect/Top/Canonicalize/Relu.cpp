// A Relu whose producer can apply it itself (Conv, MatMul, Add, Concat) fuses
// into it. The fused op takes the Relu's location: its output is the Relu's
// tensor, and the pre-activation tensor no longer exists.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include <type_traits>

using namespace mlir;

namespace top {
namespace {

/// Whether OpTy can clamp its fused ReLU (has a `relu_limit` attribute).
template <typename OpTy, typename = void>
struct HasReluLimit : std::false_type {};
template <typename OpTy>
struct HasReluLimit<OpTy,
                    std::void_t<decltype(std::declval<OpTy>().getReluLimit())>>
    : std::true_type {};

template <typename OpTy>
struct FuseReluInto : OpRewritePattern<ReluOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReluOp relu,
                                PatternRewriter &rewriter) const override {
    auto producer = relu.getInput().getDefiningOp<OpTy>();
    // Another user would need the value before the ReLU.
    if (!producer || !producer->hasOneUse() || producer.getDoRelu())
      return failure();
    bool limited = relu.getReluLimit().convertToDouble() >= 0;
    if constexpr (!HasReluLimit<OpTy>::value)
      if (limited)
        return rewriter.notifyMatchFailure(relu, "producer cannot clamp");
    rewriter.modifyOpInPlace(producer, [&] {
      producer.setDoRelu(true);
      if constexpr (HasReluLimit<OpTy>::value)
        producer.setReluLimitAttr(relu.getReluLimitAttr());
      producer->setLoc(relu.getLoc());
      producer.getOutput().setType(relu.getOutput().getType());
    });
    rewriter.replaceOp(relu, producer.getOutput());
    return success();
  }
};

} // namespace

void ReluOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<FuseReluInto<ConvOp>, FuseReluInto<MatMulOp>, FuseReluInto<AddOp>,
              FuseReluInto<ConcatOp>>(context);
}

} // namespace top
