// Pooling: the chip pools in 2-D with floor rounding, so 1-D pools get a
// height of 1, ceil_mode becomes extra end padding, and GlobalAvgPool becomes
// an AvgPool over the plane (over its rows, then the column of row means,
// unless the plane is small).
#include "Common.h"
#include "tpuc/Dialect/Tpu/IR/TpuUtils.h"

using namespace mlir;
using namespace tpuc;
using namespace tpuc::lowering;

namespace {

/// 2-D window parameters of a Top pool: kernel, strides, pads [t, l, b, r].
struct Window2d {
  SmallVector<int64_t> kernel, strides, pads, inHW, outHW;
};

template <typename TopPool>
static Window2d window2d(TopPool op) {
  auto k = getI64s(op.getKernelShape()), s = getI64s(op.getStrides()),
       p = getI64s(op.getPads());
  auto in = getShape(op.getInput()), out = getShape(op.getOutput());
  if (k.size() == 1)
    return {{1, k[0]}, {1, s[0]}, {0, p[0], 0, p[1]}, {1, in[2]}, {1, out[2]}};
  return {k, s, p, {in[2], in[3]}, {out[2], out[3]}};
}

template <typename TopPool, typename TpuPool>
struct LowerPool : OpConversionPattern<TopPool> {
  using OpConversionPattern<TopPool>::OpConversionPattern;
  using OpAdaptor = typename TopPool::Adaptor;

  LogicalResult
  matchAndRewrite(TopPool op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Window2d w = window2d(op);
    SmallVector<int64_t> pads = w.pads;
    bool grewEndPad = false;
    for (int i = 0; i < 2; ++i) {
      int64_t in = w.inHW[i], out = w.outHW[i], k = w.kernel[i],
              s = w.strides[i];
      if (tpu::windowedSize(in, pads[i], pads[2 + i], k, s) == out)
        continue;
      // ceil_mode: pad the end just enough for the last window, which Top
      // has already made start inside the input or its begin padding.
      int64_t end = (out - 1) * s + k - in - pads[i];
      if (end < 0 || end >= k ||
          tpu::windowedSize(in, pads[i], end, k, s) != out)
        return op.emitOpError()
               << "cannot be lowered: no end padding gives " << out
               << " outputs for spatial dim " << i;
      grewEndPad |= end > pads[2 + i];
      pads[2 + i] = end;
    }

    auto outType = cast<RankedTensorType>(op.getOutput().getType());
    auto in = getShape(op.getInput());
    const bool is1d = in.size() == 3;
    Value input = adaptor.getInput();
    if (is1d)
      input = reshape(rewriter, helperLoc(op, "input_2d"), input,
                      {in[0], in[1], 1, in[2]});
    bool countIncludePad = false;
    if constexpr (std::is_same_v<TopPool, top::AvgPoolOp>)
      countIncludePad = op.getCountIncludePad();
    // Top counts padded cells only up to the original end pads; cells of the
    // ceil_mode extension must not count. Materialize the original padding
    // as zeros, so those cells are input, and count input cells only.
    if (countIncludePad && grewEndPad) {
      auto s = getShape(input);
      SmallVector<int64_t> padAll{0,       0,       w.pads[0], w.pads[1],
                                  0,       0,       w.pads[2], w.pads[3]};
      SmallVector<int64_t> padded{s[0], s[1], s[2] + w.pads[0] + w.pads[2],
                                  s[3] + w.pads[1] + w.pads[3]};
      input = tpu::PadOp::create(rewriter, helperLoc(op, "pad"),
                                 withShape(input, padded), input,
                                 rewriter.getI64ArrayAttr(padAll),
                                 rewriter.getStringAttr("constant"),
                                 rewriter.getF64FloatAttr(0.0));
      pads = {0, 0, pads[2] - w.pads[2], pads[3] - w.pads[3]};
      countIncludePad = false;
    }

    auto out = outType.getShape();
    RankedTensorType poolType =
        is1d ? RankedTensorType::get({out[0], out[1], 1, out[2]},
                                     outType.getElementType())
             : outType;
    Location loc = is1d ? helperLoc(op, "2d") : op.getLoc();
    Value result;
    auto kernel = rewriter.getI64ArrayAttr(w.kernel),
         strides = rewriter.getI64ArrayAttr(w.strides),
         padsAttr = rewriter.getI64ArrayAttr(pads);
    if constexpr (std::is_same_v<TpuPool, tpu::AvgPoolOp>)
      result = tpu::AvgPoolOp::create(rewriter, loc, poolType, input, kernel,
                                      strides, padsAttr,
                                      rewriter.getBoolAttr(countIncludePad));
    else
      result = tpu::MaxPoolOp::create(rewriter, loc, poolType, input, kernel,
                                      strides, padsAttr);
    if (is1d)
      result = tpu::ReshapeOp::create(rewriter, op.getLoc(), outType, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LowerGlobalAvgPool : OpConversionPattern<top::GlobalAvgPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  /// Planes of more elements pool in two steps (see below); a small one
  /// fits any group whole, and one window keeps its rounding of the mean.
  static constexpr int64_t kSmallPlane = 8 * 8;

  LogicalResult
  matchAndRewrite(top::GlobalAvgPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto in = getShape(op.getInput());
    auto outType = cast<RankedTensorType>(op.getOutput().getType());
    Value input = adaptor.getInput();
    // Any number of spatial dims pools as one H x W plane.
    const bool is2d = in.size() == 4;
    int64_t h = is2d ? in[2] : 1,
            w = is2d ? in[3] : numElements(in.drop_front(2));
    if (!is2d)
      input = reshape(rewriter, helperLoc(op, "input_2d"), input,
                      {in[0], in[1], h, w});
    auto poolType = RankedTensorType::get({in[0], in[1], 1, 1},
                                          outType.getElementType());
    auto pool = [&](Location loc, Type type, Value x, int64_t kh, int64_t kw) {
      return tpu::AvgPoolOp::create(
          rewriter, loc, type, x, rewriter.getI64ArrayAttr({kh, kw}),
          rewriter.getI64ArrayAttr({1, 1}),
          rewriter.getI64ArrayAttr({0, 0, 0, 0}), rewriter.getBoolAttr(false));
    };
    // A plane of several rows pools its rows first, then the column of row
    // means (equal-sized groups: the mean of the means is the mean): no
    // pooling window has to hold the whole plane in local memory, and the
    // row pool joins a layer group sliced along H, so the map it reads never
    // goes back to DDR (squeeze-excitation blocks read it twice otherwise).
    // The row means keep the input's type: a mean stays in the input's range.
    if (h > 1 && h * w > kSmallPlane) {
      input = pool(helperLoc(op, "rows"), withShape(input, {in[0], in[1], h, 1}),
                   input, 1, w);
      w = 1;
    }
    Value result =
        pool(is2d ? op.getLoc() : helperLoc(op, "2d"), poolType, input, h, w);
    if (!is2d)
      result = tpu::ReshapeOp::create(rewriter, op.getLoc(), outType, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tpuc::populateTopToTpuPoolPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerPool<top::MaxPoolOp, tpu::MaxPoolOp>,
               LowerPool<top::AvgPoolOp, tpu::AvgPoolOp>, LowerGlobalAvgPool>(
      patterns.getContext());
}
