//===- Pool.cpp - Max and average pooling ---------------------------------===//
//
// Channels go on lanes. Output rows are tiled with their input halo like the
// convolution; each tile's pads are the part of the halo outside the image,
// which keeps count_include_pad averages exact (a window never reaches past
// the rows a tile loads). Whole planes stack batches, then channels per lane.
//
// INT8 average pooling (QuantParams.h): the tile is rescaled into INT32,
// a = (x - zi) * m, pooled there (integer average, half away from zero, of
// the exact sum) and requantized with the shared shift.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "tpuc/Dialect/Tpu/IR/QuantParams.h"

using namespace mlir;
using namespace tpuc::chip;

namespace tpuc {
namespace backend {
namespace {

template <typename OpTy>
LogicalResult poolCodegen(OpTy op, CodegenContext &ctx, PoolMode mode,
                          bool countPad) {
  // Max pooling selects values of any dtype; INT8 averages go through INT32
  // (see the header).
  const bool quant = mode == PoolMode::Avg && isQuantizedOp(op);
  auto dtype = mode == PoolMode::Max ? storageType(ctx)
               : quant               ? storageType(ctx)
                                     : floatComputeType(ctx);
  auto in = getTensor(ctx, op.getInput()), out = getTensor(ctx, op.getOutput());
  if (failed(dtype) || failed(in) || failed(out))
    return failure();
  if (quant && *dtype != DType::INT8)
    return ctx.error() << "INT8 average pooling needs INT8 tensors";
  tpu::QParams qi = tpu::qparams(op.getInput().getType());
  tpu::SharedShift sp;
  if (quant)
    sp = tpu::avgPoolParams(qi, tpu::qparams(op.getOutput().getType()));
  const int64_t N = in->shape[0], C = in->shape[1], H = in->shape[2],
                W = in->shape[3], OH = out->shape[2], OW = out->shape[3];
  if (out->numElements() == 0)
    return success();
  auto k = getI64s(op.getKernelShape()), s = getI64s(op.getStrides()),
       pads = getI64s(op.getPads());
  const int64_t KH = k[0], sh = s[0], pt = pads[0];
  // Quantized: the rescaled input and the average are INT32.
  const DType acc = quant ? DType::INT32 : *dtype;
  const int64_t L = ctx.lanes(), es = dtypeSize(*dtype), aes = dtypeSize(acc);
  const int64_t budget = int64_t(ctx.lmemFree()) - 8 * 64;
  auto rowsFor = [&](int64_t ohT) {
    return std::min((ohT - 1) * sh + KH, H);
  };
  auto need = [&](int64_t cT, int64_t nT, int64_t ohT) {
    int64_t slots = ceilDiv(cT, L);
    int64_t inB = rowsFor(ohT) * W, outB = ohT * OW;
    return slots * nT *
           (2 * inB * es + 2 * outB * aes +
            (quant ? inB * aes + 2 * outB * es : 0));
  };
  int64_t cT = std::min(C, L), nT = 1, ohT = 0;
  for (int64_t h = OH; h >= 1; --h)
    if (need(cT, 1, h) <= budget) {
      ohT = h;
      break;
    }
  if (!ohT)
    return ctx.error() << "does not fit local memory: one output row needs "
                       << need(cT, 1, 1) << " bytes per lane";
  if (ohT == OH) {
    while (nT < N && need(cT, nT + 1, OH) <= budget)
      ++nT;
    if (nT == N)
      while (cT < C && need(std::min(C, cT + L), N, OH) <= budget)
        cT = std::min(C, cT + L);
  }

  struct Step {
    int64_t c0, c, n0, n, oh0, oh;
  };
  SmallVector<Step> steps;
  for (int64_t c = 0; c < C; c += cT)
    for (int64_t n = 0; n < N; n += nT)
      for (int64_t oh = 0; oh < OH; oh += ohT)
        steps.push_back({c, std::min(cT, C - c), n, std::min(nT, N - n), oh,
                         std::min(ohT, OH - oh)});
  Pipeline pipe;
  enum { kIn, kOut, kTmp, kQOut };
  if (failed(pipe.addGroup(ctx, ctx.lmemBytes({nT, cT, rowsFor(ohT), W}, *dtype),
                           2)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({nT, cT, ohT, OW}, acc), 2)))
    return failure();
  if (quant &&
      (failed(pipe.addGroup(ctx, ctx.lmemBytes({nT, cT, rowsFor(ohT), W}, acc),
                            1)) ||
       failed(pipe.addGroup(ctx, ctx.lmemBytes({nT, cT, ohT, OW}, *dtype), 2))))
    return failure();

  auto rows = [&](const Step &st, int64_t &r0, int64_t &n, int64_t &padT,
                  int64_t &padB) {
    int64_t start = st.oh0 * sh - pt, end = (st.oh0 + st.oh - 1) * sh - pt + KH;
    r0 = std::max<int64_t>(start, 0);
    n = std::min(end, H) - r0;
    padT = std::max<int64_t>(0, -start);
    padB = std::max<int64_t>(0, end - H);
  };
  SmallVector<std::array<LBuf *, 2>> bufs(steps.size());
  auto loadStep = [&](size_t i) {
    const Step &st = steps[i];
    auto [x, isNew] = pipe.acquire(kIn, int64_t(i));
    (void)isNew;
    int64_t r0, nr, padT, padB;
    rows(st, r0, nr, padT, padB);
    ctx.load(*x, lmemTensor(x->addr, st.n, st.c, nr, W, *dtype),
             ddrOperand(in->addr + ((st.n0 * C + st.c0) * H + r0) * W * es,
                        {st.n, st.c, nr, W}, {C * H * W, H * W, W, 1}, *dtype));
    bufs[i] = {x, pipe.acquire(kOut, int64_t(i)).first};
  };
  loadStep(0);
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i + 1 < steps.size())
      loadStep(i + 1);
    const Step &st = steps[i];
    auto [x, o] = bufs[i];
    int64_t r0, nr, padT, padB;
    rows(st, r0, nr, padT, padB);
    chip::PoolParams pp;
    pp.kh = int(KH), pp.kw = int(k[1]);
    pp.stride_h = int(sh), pp.stride_w = int(s[1]);
    pp.pad_top = int(padT), pp.pad_bottom = int(padB);
    pp.pad_left = int(pads[1]), pp.pad_right = int(pads[3]);
    pp.count_include_pad = countPad;
    Operand outL = lmemTensor(o->addr, st.n, st.c, st.oh, OW, acc);
    Operand inL = lmemTensor(x->addr, st.n, st.c, nr, W, *dtype);
    Operand result = outL;
    LBuf *rb = o;
    if (quant) {
      LBuf *tmp = pipe.acquire(kTmp, 0).first,
           *qo = pipe.acquire(kQOut, int64_t(i)).first;
      auto emit = [&](const Instruction &inst) {
        return ctx.tiu(inst, {x, o, tmp, qo});
      };
      Operand scaled = lmemTensor(tmp->addr, st.n, st.c, nr, W, acc);
      emitRescale(emit, scaled, inL, qi.zp, sp.m[0]);
      inL = scaled;
      result = lmemTensor(qo->addr, st.n, st.c, st.oh, OW, *dtype);
      pp.round = tpu::kQuantRound;
      emit(makePool(mode, outL, inL, pp));
      Requant rq;
      rq.shift = sp.shift;
      rq.zp = resultZeroPoint(op);
      emitRequant(emit, result, outL, rq);
      rb = qo;
    } else {
      ctx.tiu(makePool(mode, outL, inL, pp), {x, o});
    }
    ctx.store(ddrOperand(out->addr + ((st.n0 * C + st.c0) * OH + st.oh0) * OW * es,
                         {st.n, st.c, st.oh, OW}, {C * OH * OW, OH * OW, OW, 1},
                         *dtype),
              *rb, result);
  }
  return success();
}

template <typename OpTy>
LogicalResult poolLocal(OpTy op, LocalOperands &t, PoolMode mode,
                        bool countPad) {
  auto k = getI64s(op.getKernelShape()), s = getI64s(op.getStrides()),
       pads = getI64s(op.getPads());
  chip::PoolParams pp;
  pp.kh = int(k[0]), pp.kw = int(k[1]);
  pp.stride_h = int(s[0]), pp.stride_w = int(s[1]);
  pp.pad_top = int(pads[0]), pp.pad_left = int(pads[1]);
  pp.pad_bottom = int(pads[2]), pp.pad_right = int(pads[3]);
  pp.count_include_pad = countPad;
  if (t.rows) {
    WindowRows r = windowRows(t.rows->first, t.rows->second,
                              getShape(op->getOperand(0))[2], k[0], s[0], 1,
                              pads[0]);
    pp.pad_top = int(r.padTop), pp.pad_bottom = int(r.padBottom);
  }
  t.emit(makePool(mode, t.result.lmem, t.operands[0].lmem, pp));
  return success();
}

/// The input rows of the output rows' windows.
template <typename OpTy>
bool poolInputRows(OpTy op, unsigned index, int64_t lo, int64_t hi,
                   int64_t &inLo, int64_t &inHi) {
  auto k = getI64s(op.getKernelShape()), s = getI64s(op.getStrides()),
       pads = getI64s(op.getPads());
  WindowRows r = windowRows(lo, hi, getShape(op->getOperand(0))[2], k[0],
                            s[0], 1, pads[0]);
  inLo = r.lo, inHi = r.hi;
  return index == 0;
}

/// Pads must stay below the kernel (the instruction's rule) and 2-D.
template <typename OpTy> bool poolSupportsLocal(OpTy op) {
  auto k = getI64s(op.getKernelShape()), pads = getI64s(op.getPads());
  return k.size() == 2 && pads.size() == 4 && pads[0] < k[0] &&
         pads[2] < k[0] && pads[1] < k[1] && pads[3] < k[1];
}

struct MaxPoolModel
    : public CodegenInterface::ExternalModel<MaxPoolModel, tpu::MaxPoolOp> {
  LogicalResult codegen(Operation *op, CodegenContext &ctx) const {
    return poolCodegen(cast<tpu::MaxPoolOp>(op), ctx, PoolMode::Max, false);
  }
  bool supportsLocal(Operation *op) const {
    return poolSupportsLocal(cast<tpu::MaxPoolOp>(op));
  }
  bool localInputRows(Operation *op, unsigned index, int64_t lo, int64_t hi,
                      int64_t &inLo, int64_t &inHi) const {
    return poolInputRows(cast<tpu::MaxPoolOp>(op), index, lo, hi, inLo, inHi);
  }
  /// The maximum selects values: one quantized type in and out.
  bool localQuantized(Operation *op) const {
    return getElementTypeOrSelf(op->getOperand(0)) ==
           getElementTypeOrSelf(op->getResult(0));
  }
  LogicalResult codegenLocal(Operation *op, CodegenContext &,
                             LocalOperands &t) const {
    return poolLocal(cast<tpu::MaxPoolOp>(op), t, PoolMode::Max, false);
  }
};

struct AvgPoolModel
    : public CodegenInterface::ExternalModel<AvgPoolModel, tpu::AvgPoolOp> {
  LogicalResult codegen(Operation *op, CodegenContext &ctx) const {
    auto pool = cast<tpu::AvgPoolOp>(op);
    return poolCodegen(pool, ctx, PoolMode::Avg, pool.getCountIncludePad());
  }
  bool supportsLocal(Operation *op) const {
    return poolSupportsLocal(cast<tpu::AvgPoolOp>(op));
  }
  bool localInputRows(Operation *op, unsigned index, int64_t lo, int64_t hi,
                      int64_t &inLo, int64_t &inHi) const {
    return poolInputRows(cast<tpu::AvgPoolOp>(op), index, lo, hi, inLo, inHi);
  }
  LogicalResult codegenLocal(Operation *op, CodegenContext &,
                             LocalOperands &t) const {
    auto pool = cast<tpu::AvgPoolOp>(op);
    return poolLocal(pool, t, PoolMode::Avg, pool.getCountIncludePad());
  }
};

} // namespace

void attachPoolModels(MLIRContext *ctx) {
  tpu::MaxPoolOp::attachInterface<MaxPoolModel>(*ctx);
  tpu::AvgPoolOp::attachInterface<AvgPoolModel>(*ctx);
}

} // namespace backend
} // namespace tpuc
