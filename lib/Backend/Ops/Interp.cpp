//===- Interp.cpp - Separable resize as two matmuls -----------------------===//
//
// tpu.Interp computes out[p] = A_h x in[p] x A_w^T for every NCHW plane p
// with two TIU matmuls per tile: T[p] = A_h tile [ohT, hb] x in[p] band
// [hb, wb] (planes batched, the matrix shared), then out[p] = T[p] x
// A_w^T tile [wb, owT]. The blob stores A_w transposed (layoutWeight) so its
// tiles load as the right operand directly. Rows of an interpolation
// matrix are sparse: an output tile reads only the band of input rows
// (columns) its matrix rows touch, found from the constant matrices, so
// big planes tile in H, W and planes alike. Zero weights add exact zeros,
// so the result equals the reference up to the rounding of the sums.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

using namespace mlir;
using namespace tpuc::chip;

namespace tpuc {
namespace backend {
namespace {

/// For rows [r0, r0 + n) of a [rows, cols] matrix: the first and one past
/// the last column holding a non-zero (at least one column).
std::pair<int64_t, int64_t> band(const std::vector<float> &m, int64_t cols,
                                 int64_t r0, int64_t n) {
  int64_t lo = cols, hi = 0;
  for (int64_t r = r0; r < r0 + n; ++r)
    for (int64_t c = 0; c < cols; ++c)
      if (m[r * cols + c] != 0.f) {
        lo = std::min(lo, c);
        hi = std::max(hi, c + 1);
      }
  if (lo >= hi)
    return {0, 1};
  return {lo, hi};
}

struct InterpModel
    : public CodegenInterface::ExternalModel<InterpModel, tpu::InterpOp> {
  LogicalResult layoutWeight(Operation *op, unsigned index,
                             std::vector<int64_t> &data,
                             const chip::Target &) const {
    if (index != 2)
      return success();
    auto s = getShape(op->getOperand(2)); // [OW, W] -> [W, OW]
    std::vector<int64_t> t(data.size());
    for (int64_t i = 0; i < s[0]; ++i)
      for (int64_t j = 0; j < s[1]; ++j)
        t[j * s[0] + i] = data[i * s[1] + j];
    data = std::move(t);
    return success();
  }

  int64_t getMacs(Operation *op) const {
    auto in = getShape(op->getOperand(0)), out = getShape(op->getResult(0));
    return in[0] * in[1] * out[2] * (in[2] * in[3] + in[3] * out[3]);
  }

  LogicalResult codegen(Operation *op, CodegenContext &ctx) const;
};

LogicalResult InterpModel::codegen(Operation *operation,
                                   CodegenContext &ctx) const {
  auto op = cast<tpu::InterpOp>(operation);
  auto dtype = floatComputeType(ctx);
  if (failed(dtype))
    return failure();
  auto in = getTensor(ctx, op.getInput()),
       ah = getTensor(ctx, op.getHeightMatrix()),
       awt = getTensor(ctx, op.getWidthMatrix()),
       out = getTensor(ctx, op.getOutput());
  if (failed(in) || failed(ah) || failed(awt) || failed(out))
    return failure();
  auto mh = ctx.constant(op.getHeightMatrix()),
       mw = ctx.constant(op.getWidthMatrix());
  if (failed(mh) || failed(mw))
    return failure();
  const int64_t P = in->shape[0] * in->shape[1], H = in->shape[2],
                W = in->shape[3], OH = out->shape[2], OW = out->shape[3];
  const int64_t es = dtypeSize(*dtype);

  // Largest band of input rows (columns) any tile of n output rows reads.
  auto maxBand = [&](const std::vector<float> &m, int64_t cols, int64_t rows,
                     int64_t n) {
    int64_t b = 1;
    for (int64_t r = 0; r < rows; r += n) {
      auto [lo, hi] = band(m, cols, r, std::min(n, rows - r));
      b = std::max(b, hi - lo);
    }
    return b;
  };
  // Shrink planes first, then the larger of the output tile's dims, until
  // the double-buffered input/output, the matrix tiles and T fit.
  int64_t pT = P, ohT = OH, owT = OW;
  const uint64_t LB = ctx.lmemFree();
  for (;;) {
    int64_t hb = maxBand(*mh, H, OH, ohT), wb = maxBand(*mw, W, OW, owT);
    uint64_t need = 2 * ctx.lmemBytes({1, ohT, 1, hb}, *dtype) +
                    2 * ctx.lmemBytes({1, wb, 1, owT}, *dtype) +
                    2 * ctx.lmemBytes({pT, hb, 1, wb}, *dtype) +
                    ctx.lmemBytes({pT, ohT, 1, wb}, *dtype) +
                    2 * ctx.lmemBytes({pT, ohT, 1, owT}, *dtype) + 8 * 64;
    if (need <= LB)
      break;
    if (pT > 1)
      pT = ceilDiv(pT, 2);
    else if (owT > 1 && (owT >= ohT || ohT == 1))
      owT = ceilDiv(owT, 2);
    else if (ohT > 1)
      ohT = ceilDiv(ohT, 2);
    else
      return ctx.error() << "does not fit local memory even with one output "
                         << "element per tile";
  }
  const int64_t hbMax = maxBand(*mh, H, OH, ohT), wbMax = maxBand(*mw, W, OW, owT);

  Pipeline pipe;
  enum { kAh, kAw, kIn, kT, kOut };
  if (failed(pipe.addGroup(ctx, ctx.lmemBytes({1, ohT, 1, hbMax}, *dtype), 2)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, wbMax, 1, owT}, *dtype), 2)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({pT, hbMax, 1, wbMax}, *dtype),
                           2)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({pT, ohT, 1, wbMax}, *dtype),
                           1)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({pT, ohT, 1, owT}, *dtype), 2)))
    return failure();

  struct Step {
    int64_t r, oh0, ohT, c, ow0, owT, p0, pT, h0, hb, w0, wb;
  };
  SmallVector<Step> steps;
  int64_t r = 0;
  for (int64_t oh = 0; oh < OH; oh += ohT, ++r) {
    int64_t nh = std::min(ohT, OH - oh);
    auto [h0, h1] = band(*mh, H, oh, nh);
    int64_t c = 0;
    for (int64_t ow = 0; ow < OW; ow += owT, ++c) {
      int64_t nw = std::min(owT, OW - ow);
      auto [w0, w1] = band(*mw, W, ow, nw);
      for (int64_t p = 0; p < P; p += pT)
        steps.push_back({r, oh, nh, c, ow, nw, p, std::min(pT, P - p), h0,
                         h1 - h0, w0, w1 - w0});
    }
  }
  const int64_t nCols = ceilDiv(OW, owT);
  SmallVector<std::array<LBuf *, 4>> bufs(steps.size());
  auto loadStep = [&](size_t i) {
    const Step &st = steps[i];
    auto [a, newA] = pipe.acquire(kAh, st.r);
    if (newA)
      ctx.load(*a, lmemTensor(a->addr, 1, st.ohT, 1, st.hb, *dtype),
               ddrOperand(ah->addr + (st.oh0 * H + st.h0) * es,
                          {1, st.ohT, 1, st.hb}, {OH * H, H, st.hb, 1},
                          *dtype));
    auto [b, newB] = pipe.acquire(kAw, st.r * nCols + st.c);
    if (newB)
      ctx.load(*b, lmemTensor(b->addr, 1, st.wb, 1, st.owT, *dtype),
               ddrOperand(awt->addr + (st.w0 * OW + st.ow0) * es,
                          {1, st.wb, 1, st.owT}, {W * OW, OW, st.owT, 1},
                          *dtype));
    auto [x, newX] = pipe.acquire(kIn, int64_t(i));
    (void)newX;
    ctx.load(*x, lmemTensor(x->addr, st.pT, st.hb, 1, st.wb, *dtype),
             ddrOperand(in->addr + ((st.p0 * H + st.h0) * W + st.w0) * es,
                        {st.pT, st.hb, 1, st.wb}, {H * W, W, st.wb, 1},
                        *dtype));
    auto [y, newY] = pipe.acquire(kOut, int64_t(i));
    (void)newY;
    bufs[i] = {a, b, x, y};
  };

  auto [t, unusedT] = pipe.acquire(kT, 0);
  (void)unusedT;
  loadStep(0);
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i + 1 < steps.size())
      loadStep(i + 1);
    const Step &st = steps[i];
    auto [a, b, x, y] = bufs[i];
    Operand tL = lmemTensor(t->addr, st.pT, st.ohT, 1, st.wb, *dtype);
    Operand yL = lmemTensor(y->addr, st.pT, st.ohT, 1, st.owT, *dtype);
    ctx.tiu(makeMatMul(tL, lmemTensor(a->addr, 1, st.ohT, 1, st.hb, *dtype),
                       lmemTensor(x->addr, st.pT, st.hb, 1, st.wb, *dtype),
                       Operand()),
            {a, x, t});
    ctx.tiu(makeMatMul(yL, tL,
                       lmemTensor(b->addr, 1, st.wb, 1, st.owT, *dtype),
                       Operand()),
            {b, t, y});
    ctx.store(ddrOperand(out->addr + ((st.p0 * OH + st.oh0) * OW + st.ow0) * es,
                         {st.pT, st.ohT, 1, st.owT}, {OH * OW, OW, st.owT, 1},
                         *dtype),
              *y, yL);
  }
  return success();
}

} // namespace

void attachInterpModels(MLIRContext *ctx) {
  tpu::InterpOp::attachInterface<InterpModel>(*ctx);
}

} // namespace backend
} // namespace tpuc
