// An INT8 tensor dequantized, put through a float activation and quantized
// again (the float island INT8 lowering gives ops without an integer form,
// e.g. GELU) is a function of the input's 256 values: one tpu.Lut whose
// table is the island evaluated on them, with the interpreter's arithmetic
// (dequantize, round to the island's float type, activate, round, quantize),
// so the results are the same bits; one pass over INT8 data instead of three
// over float. The Lut takes the last QuantCast's location.
//
// An island with a layout change after its activation (a 1-D conv's GELU
// before the reshape back from its 2-D form, or before whisper's permute to
// tokens first) becomes a table too: the quantizing cast moves before the
// reshapes and permutes (casts commute with data movement), which then
// carry INT8 bytes. It moves before a reshape of a network input too (a
// view in DDR): the cast then runs in the group of the reshape's users.
#include "tpuc/Chip/Float16.h"
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Tpu/IR/QuantParams.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuUtils.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace tpuc;

namespace tpu {
namespace {

/// `v` rounded to the float element type `t` (nearest even), as the
/// interpreter rounds every float result.
float roundTo(float v, Type t) {
  if (t.isF16())
    return chip::f16ToF32(chip::f32ToF16(v));
  if (t.isBF16())
    return chip::bf16ToF32(chip::f32ToBF16(v));
  return v;
}

bool isInt8(Type t) {
  if (!isQuantized(t))
    return false;
  auto q = dyn_cast<quant::QuantizedType>(getElementTypeOrSelf(t));
  return q && q.getStorageTypeIntegralWidth() == 8 && q.isSigned();
}

struct Int8IslandToLut : OpRewritePattern<QuantCastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QuantCastOp quantize,
                                PatternRewriter &rewriter) const override {
    auto act = quantize.getInput().getDefiningOp<ActiveOp>();
    if (!act || !act->hasOneUse() || !isInt8(quantize.getOutput().getType()))
      return failure();
    auto dequantize = act.getInput().getDefiningOp<QuantCastOp>();
    if (!dequantize || !dequantize->hasOneUse() ||
        !isInt8(dequantize.getInput().getType()))
      return failure();
    // The table is a new weight of the module's weight store.
    auto module = quantize->getParentOfType<ModuleOp>();
    if (!module || !module->hasAttr(kWeightFileAttr))
      return failure();
    Type island = getElementTypeOrSelf(act.getOutput().getType());
    if (!isa<FloatType>(island) ||
        getElementTypeOrSelf(act.getInput().getType()) != island)
      return failure();
    QParams qi = qparams(dequantize.getInput().getType()),
            qo = qparams(quantize.getOutput().getType());
    auto table = int8Table(
        qi, qo, [&](const float *x, float *y) { return act.evaluate(x, y, 256); },
        [&](float v) { return roundTo(v, island); });
    if (failed(table))
      return failure();
    SmallVector<int64_t> shape{256};
    auto weight = top::WeightOp::createTyped(
        rewriter, dequantize, getOpName(quantize) + "_table",
        RankedTensorType::get(shape, rewriter.getI8Type()),
        NpyArray::of<int8_t>("|i1", *table, shape));
    auto lut = LutOp::create(rewriter, quantize.getLoc(),
                             quantize.getOutput().getType(),
                             dequantize.getInput(), weight.getOutput());
    rewriter.replaceOp(quantize, lut.getOutput());
    rewriter.eraseOp(act);
    rewriter.eraseOp(dequantize);
    return success();
  }
};

/// Whether float `v` is an activation of a dequantized INT8 tensor, seen
/// through reshapes and permutes used once.
bool isIsland(Value v) {
  Operation *def = v.getDefiningOp();
  while (def && isa<ReshapeOp, PermuteOp>(def) && def->hasOneUse())
    def = def->getOperand(0).getDefiningOp();
  auto act = dyn_cast_or_null<ActiveOp>(def);
  if (!act || !act->hasOneUse())
    return false;
  auto dequantize = act.getInput().getDefiningOp<QuantCastOp>();
  return dequantize && isInt8(dequantize.getInput().getType());
}

struct QuantizeBeforeMovement : OpRewritePattern<QuantCastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QuantCastOp quantize,
                                PatternRewriter &rewriter) const override {
    Operation *move = quantize.getInput().getDefiningOp();
    if (!move || !isa<ReshapeOp, PermuteOp>(move) || !move->hasOneUse() ||
        !isInt8(quantize.getOutput().getType()))
      return failure();
    Value x = move->getOperand(0);
    // Elsewhere the layout a layer group holds the float value in may suit
    // the movement better, so the cast stays.
    bool networkInput = isa<ReshapeOp>(move) && x.getDefiningOp<top::InputOp>();
    if (!isa<FloatType>(getElementTypeOrSelf(x.getType())) ||
        !(networkInput || isIsland(x)))
      return failure();
    Type q = getElementTypeOrSelf(quantize.getOutput().getType());
    rewriter.setInsertionPoint(move);
    // The cast keeps its name (unique; the same values in another shape).
    auto cast = QuantCastOp::create(rewriter, quantize.getLoc(),
                                    RankedTensorType::get(getShape(x), q), x);
    rewriter.modifyOpInPlace(move, [&] {
      move->setOperand(0, cast.getOutput());
      move->getResult(0).setType(quantize.getOutput().getType());
    });
    rewriter.replaceOp(quantize, move->getResults());
    return success();
  }
};

} // namespace

void QuantCastOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<Int8IslandToLut, QuantizeBeforeMovement>(context);
}

} // namespace tpu
