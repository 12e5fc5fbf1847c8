// The erf GELU written out as x * 0.5 * (1 + erf(x / sqrt(2))) (how ONNX
// exporters before opset 20 emit nn.GELU), and its tanh approximation
// x * 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) (GPT-2's
// activation), become one GELU: one
// special-function instruction on the chip instead of five elementwise
// passes, and in INT8 one float island instead of a chain of quantized ops.
// The GELU takes the location of the last Mul, whose tensor it produces.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Support/OpHelpers.h"
#include <cmath>

using namespace mlir;
using namespace tpuc;

namespace top {
namespace {

/// Whether `v` is a one-element weight equal to `expected` (to float32
/// rounding).
bool isScalar(Value v, double expected) {
  auto w = v.getDefiningOp<WeightOp>();
  if (!w || !isRanked(v) || numElements(getShape(v)) != 1)
    return false;
  auto data = w.read();
  return succeeded(data) &&
         std::abs((**data)[0] - expected) <= 1e-6 * std::abs(expected);
}

/// A plain (no fused ReLU) single-use op of type OpTy defining `v`.
template <typename OpTy>
OpTy singleUse(Value v) {
  auto op = v.getDefiningOp<OpTy>();
  if (!op || !op->hasOneUse() || op.getDoRelu())
    return nullptr;
  return op;
}

/// The x of 1 + erf(x / sqrt(2)) (or x * (1 / sqrt(2))), and the ops to
/// erase; null when `v` is not that.
Value erfTerm(Value v, SmallVectorImpl<Operation *> &dead) {
  auto add = singleUse<AddOp>(v);
  if (!add)
    return nullptr;
  for (int i = 0; i < 2; ++i) {
    auto erf = add->getOperand(i).getDefiningOp<ErfOp>();
    if (!erf || !erf->hasOneUse() || !isScalar(add->getOperand(1 - i), 1.0))
      continue;
    Value x;
    Operation *scale = nullptr;
    if (auto div = singleUse<DivOp>(erf.getInput());
        div && isScalar(div.getRhs(), std::sqrt(2.0))) {
      x = div.getLhs();
      scale = div;
    } else if (auto mul = singleUse<MulOp>(erf.getInput())) {
      for (int j = 0; j < 2 && !x; ++j)
        if (isScalar(mul->getOperand(1 - j), 1.0 / std::sqrt(2.0))) {
          x = mul->getOperand(j);
          scale = mul;
        }
    }
    if (!x)
      continue;
    dead.append({add, erf, scale});
    return x;
  }
  return nullptr;
}

/// The x of 1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)), and the ops to
/// erase; null when `v` is not that.
Value tanhTerm(Value v, SmallVectorImpl<Operation *> &dead) {
  auto add = singleUse<AddOp>(v);
  if (!add)
    return nullptr;
  for (int i = 0; i < 2; ++i) {
    auto tanh = add->getOperand(i).getDefiningOp<TanhOp>();
    if (!tanh || !tanh->hasOneUse() || !isScalar(add->getOperand(1 - i), 1.0))
      continue;
    auto scale = singleUse<MulOp>(tanh.getInput());
    if (!scale)
      continue;
    for (int j = 0; j < 2; ++j) {
      auto inner = singleUse<AddOp>(scale->getOperand(j));
      if (!inner || !isScalar(scale->getOperand(1 - j), std::sqrt(2.0 / M_PI)))
        continue;
      for (int k = 0; k < 2; ++k) {
        Value x = inner->getOperand(k);
        auto cubic = singleUse<MulOp>(inner->getOperand(1 - k));
        if (!cubic)
          continue;
        for (int c = 0; c < 2; ++c) {
          auto pow = cubic->getOperand(c).getDefiningOp<PowOp>();
          if (!pow || !pow->hasOneUse() || pow.getInput() != x ||
              pow.getExponent().convertToDouble() != 3.0 ||
              !isScalar(cubic->getOperand(1 - c), 0.044715))
            continue;
          dead.append({add, tanh, scale, inner, cubic, pow});
          return x;
        }
      }
    }
  }
  return nullptr;
}

struct FuseErfGelu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp outer,
                                PatternRewriter &rewriter) const override {
    if (outer.getDoRelu() || !isRanked(outer.getOutput()))
      return failure();
    // The three factors x, 0.5 and (1 + erf(..)) in any grouping: one
    // operand of the outer Mul is itself a single-use Mul.
    for (int i = 0; i < 2; ++i) {
      auto inner = singleUse<MulOp>(outer->getOperand(i));
      if (!inner)
        continue;
      Value f[3] = {inner.getLhs(), inner.getRhs(), outer->getOperand(1 - i)};
      for (int half = 0; half < 3; ++half) {
        if (!isScalar(f[half], 0.5))
          continue;
        for (int term = 0; term < 3; ++term) {
          if (term == half)
            continue;
          Value x = f[3 - half - term];
          SmallVector<Operation *> dead;
          const char *approximate = "none";
          if (!x || getShape(x) != getShape(outer.getOutput()))
            continue;
          if (erfTerm(f[term], dead) != x) {
            dead.clear();
            approximate = "tanh";
            if (tanhTerm(f[term], dead) != x)
              continue;
          }
          auto gelu = GELUOp::create(rewriter, outer.getLoc(),
                                     outer.getOutput().getType(), x,
                                     rewriter.getStringAttr(approximate));
          rewriter.replaceOp(outer, gelu.getOutput());
          rewriter.eraseOp(inner);
          for (Operation *op : dead)
            rewriter.eraseOp(op);
          return success();
        }
      }
    }
    return rewriter.notifyMatchFailure(outer, "not x * 0.5 * (1 + erf(x/sqrt2)) or its tanh form");
  }
};

} // namespace

// BinaryRank.cpp: Muls of more than four dims with leading unit dims.
void populateMulRankPatterns(RewritePatternSet &results, MLIRContext *context);
// Silu.cpp: x * sigmoid(x) as one SiLU.
void populateSiLUPatterns(RewritePatternSet &results, MLIRContext *context);

void MulOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<FuseErfGelu>(context);
  populateMulRankPatterns(results, context);
  populateSiLUPatterns(results, context);
}

} // namespace top
