// Data movement: Reshape, Permute, Concat, Slice, Gather, Pad, Upsample.
// Axes become non-negative, a Slice's ONNX starts/ends become resolved
// offsets and steps, and constant Gather indices become non-negative.
#include "Common.h"
#include <cmath>

using namespace mlir;
using namespace tpuc;

namespace {

struct LowerReshape : OpConversionPattern<top::ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(top::ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tpu::ReshapeOp>(op, op.getOutput().getType(),
                                                adaptor.getInput());
    return success();
  }
};

struct LowerPermute : OpConversionPattern<top::PermuteOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(top::PermuteOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tpu::PermuteOp>(op, op.getOutput().getType(),
                                                adaptor.getInput(),
                                                op.getOrderAttr());
    return success();
  }
};

struct LowerConcat : OpConversionPattern<top::ConcatOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(top::ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t axis = normalizeAxis(op.getAxis(), getShape(op.getOutput()).size());
    rewriter.replaceOpWithNewOp<tpu::ConcatOp>(
        op, op.getOutput().getType(), adaptor.getInputs(),
        rewriter.getI64IntegerAttr(axis), op.getDoReluAttr());
    return success();
  }
};

struct LowerSlice : OpConversionPattern<top::SliceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(top::SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<int64_t> starts, steps, sizes;
    op.getBounds(starts, steps, sizes);
    // An empty dim reads nothing; any in-range offset describes it.
    for (size_t d = 0; d < sizes.size(); ++d)
      if (sizes[d] == 0)
        starts[d] = 0;
    if (ArrayRef<int64_t>(sizes) != getShape(op.getOutput()))
      return op.emitOpError() << "cannot be lowered: result type "
                              << op.getOutput().getType()
                              << " disagrees with the slice bounds "
                              << shapeToString(sizes);
    rewriter.replaceOpWithNewOp<tpu::SliceOp>(
        op, op.getOutput().getType(), adaptor.getInput(),
        rewriter.getI64ArrayAttr(starts), rewriter.getI64ArrayAttr(steps));
    return success();
  }
};

struct LowerGather : OpConversionPattern<top::GatherOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(top::GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto in = getShape(op.getInput());
    int64_t axis = normalizeAxis(op.getAxis(), in.size()), dim = in[axis];
    Value indices = adaptor.getIndices();
    // Constant indices are checked and wrapped now, so codegen can merge
    // runs of them into plain moves. Run-time indices stay as they are:
    // tpu.Gather and the chip's dma_gather wrap negative ones themselves.
    if (auto w = indices.getDefiningOp<top::WeightOp>()) {
      auto data = w.read();
      if (failed(data))
        return failure();
      std::vector<float> idx(**data);
      bool changed = false;
      for (auto [i, v] : llvm::enumerate(idx)) {
        if (!(std::trunc(v) == v) || v < -float(dim) || v >= float(dim)) {
          auto diag = op.emitOpError() << "cannot be lowered: index ";
          if (std::trunc(v) == v)
            diag << int64_t(v);
          else
            diag << v;
          return diag << " (at position " << i
                      << ") is not an integer in [" << -dim << ", " << dim
                      << ") for axis " << axis << " of size " << dim;
        }
        if (v < 0) {
          v += float(dim);
          changed = true;
        }
      }
      if (changed) {
        if (failed(lowering::requireWeightFile(op)))
          return failure();
        indices = top::WeightOp::createWithData(
                      rewriter, op, getOpName(op) + "_tpu_indices",
                      cast<RankedTensorType>(indices.getType()),
                      std::move(idx))
                      .getOutput();
      }
    }
    rewriter.replaceOpWithNewOp<tpu::GatherOp>(
        op, op.getOutput().getType(), adaptor.getInput(), indices,
        rewriter.getI64IntegerAttr(axis));
    return success();
  }
};

struct LowerPad : OpConversionPattern<top::PadOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(top::PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tpu::PadOp>(
        op, op.getOutput().getType(), adaptor.getInput(), op.getPadsAttr(),
        op.getModeAttr(), op.getValueAttr());
    return success();
  }
};

struct LowerUpsample : OpConversionPattern<top::UpsampleOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(top::UpsampleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tpu::UpsampleOp>(
        op, op.getOutput().getType(), adaptor.getInput(), op.getScaleHAttr(),
        op.getScaleWAttr());
    return success();
  }
};

} // namespace

void tpuc::populateTopToTpuDataMovementPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerReshape, LowerPermute, LowerConcat, LowerSlice, LowerGather,
               LowerPad, LowerUpsample>(patterns.getContext());
}
