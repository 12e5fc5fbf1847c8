//===- Reduce.cpp - Sum, mean, max and min over contiguous axes -----------===//
//
// The reduced axes (ignoring unit dims) must be adjacent: the input is then
// an [O, R, I] view, laid out as [1, O, R, I] with O on lanes and reduced
// along H. R is split into chunks when it does not fit; partial results are
// combined by a Binary instruction (a mean sums, then scales by 1/R).
//
//===----------------------------------------------------------------------===//
#include "Common.h"

using namespace mlir;
using namespace tpuc::chip;

namespace tpuc {
namespace backend {
namespace {

struct ReduceModel
    : public CodegenInterface::ExternalModel<ReduceModel, tpu::ReduceOp> {
  LogicalResult codegen(Operation *op, CodegenContext &ctx) const;
};

LogicalResult ReduceModel::codegen(Operation *operation,
                                   CodegenContext &ctx) const {
  auto op = cast<tpu::ReduceOp>(operation);
  auto dtype = floatComputeType(ctx);
  auto in = getTensor(ctx, op.getInput()), out = getTensor(ctx, op.getOutput());
  if (failed(dtype) || failed(in) || failed(out))
    return failure();
  SmallVector<bool> reduced(in->shape.size(), false);
  for (int64_t a : getI64s(op.getAxes()))
    reduced[a] = true;
  // [O, R, I] with the reduced non-unit dims in the middle.
  int64_t O = 1, R = 1, I = 1;
  int phase = 0; // 0 before, 1 inside, 2 after the reduced dims
  for (size_t d = 0; d < in->shape.size(); ++d) {
    int64_t n = in->shape[d];
    if (n == 1)
      continue;
    if (reduced[d]) {
      if (phase == 2)
        return ctx.error() << "codegen supports reducing adjacent axes only";
      phase = 1;
      R *= n;
    } else if (phase == 0) {
      O *= n;
    } else {
      phase = 2;
      I *= n;
    }
  }
  if (in->numElements() == 0)
    return success();
  if (R == 1)
    return ctx.copy(DdrView::dense(out->addr, {in->numElements()}, *dtype),
                    DdrView::dense(in->addr, {in->numElements()}, *dtype));

  // F16/BF16 partial results stay F32 in LMEM: the result rounds once.
  const DType t = wideFloat(*dtype);
  const int64_t L = ctx.lanes(), es = dtypeSize(*dtype);
  const int64_t budget = int64_t(ctx.lmemFree()) / dtypeSize(t) - 6 * 64;
  int64_t oT = std::min(O, L), rT = R, iT = I;
  auto need = [&](int64_t o, int64_t r, int64_t i) {
    int64_t slots = ceilDiv(o, L);
    return slots * (2 * r * i + 3 * i);
  };
  while (need(oT, rT, iT) > budget) {
    if (rT > 1)
      rT = ceilDiv(rT, 2);
    else if (iT > 1)
      iT = ceilDiv(iT, 2);
    else if (oT > 1)
      oT = ceilDiv(oT, 2);
    else
      return ctx.error() << "does not fit local memory";
  }
  if (rT == R && iT == I)
    while (oT < O && need(std::min(O, oT + L), R, I) <= budget)
      oT = std::min(O, oT + L);
  const int64_t nR = ceilDiv(R, rT);

  auto mode = *parseReduceMode(op.getMode());
  chip::ReduceMode first;
  BinaryOp combine = BinaryOp::Add;
  switch (mode) {
  case tpuc::ReduceMode::Sum:
    first = chip::ReduceMode::Sum;
    break;
  case tpuc::ReduceMode::Mean:
    first = nR == 1 ? chip::ReduceMode::Mean : chip::ReduceMode::Sum;
    break;
  case tpuc::ReduceMode::Max:
    first = chip::ReduceMode::Max, combine = BinaryOp::Max;
    break;
  case tpuc::ReduceMode::Min:
    first = chip::ReduceMode::Min, combine = BinaryOp::Min;
    break;
  }

  struct Step {
    int64_t o0, o, i0, i, r0, r, tile;
  };
  SmallVector<Step> steps;
  int64_t tile = 0;
  for (int64_t o = 0; o < O; o += oT)
    for (int64_t i = 0; i < I; i += iT, ++tile)
      for (int64_t r = 0; r < R; r += rT)
        steps.push_back({o, std::min(oT, O - o), i, std::min(iT, I - i), r,
                         std::min(rT, R - r), tile});
  Pipeline pipe;
  enum { kIn, kOut, kTmp };
  if (failed(pipe.addGroup(ctx, ctx.lmemBytes({1, oT, rT, iT}, t), 2)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, oT, 1, iT}, t), 2)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, oT, 1, iT}, t), 1)))
    return failure();
  LBuf *tmp = pipe.acquire(kTmp, 0).first;
  SmallVector<std::array<LBuf *, 2>> bufs(steps.size());
  auto loadStep = [&](size_t k) {
    const Step &s = steps[k];
    LBuf *x = pipe.acquire(kIn, int64_t(k)).first;
    ctx.load(*x, lmemTensor(x->addr, 1, s.o, s.r, s.i, t),
             ddrOperand(in->addr + ((s.o0 * R + s.r0) * I + s.i0) * es,
                        {1, s.o, s.r, s.i}, {O * R * I, R * I, I, 1}, *dtype));
    bufs[k] = {x, pipe.acquire(kOut, s.tile).first};
  };
  loadStep(0);
  for (size_t k = 0; k < steps.size(); ++k) {
    if (k + 1 < steps.size())
      loadStep(k + 1);
    const Step &s = steps[k];
    auto [x, o] = bufs[k];
    Operand xL = lmemTensor(x->addr, 1, s.o, s.r, s.i, t);
    Operand oL = lmemTensor(o->addr, 1, s.o, 1, s.i, t);
    if (s.r0 == 0) {
      ctx.tiu(makeReduce(first, oL, xL, 2), {x, o});
    } else {
      Operand tL = lmemTensor(tmp->addr, 1, s.o, 1, s.i, t);
      ctx.tiu(makeReduce(first, tL, xL, 2), {x, tmp});
      ctx.tiu(makeBinary(combine, oL, oL, tL), {o, tmp});
    }
    if (s.r0 + s.r == R) {
      if (mode == tpuc::ReduceMode::Mean && nR > 1)
        ctx.tiu(makeBinaryScalar(BinaryOp::Mul, oL, oL, 1.0 / double(R)), {o});
      ctx.store(ddrOperand(out->addr + (s.o0 * I + s.i0) * es,
                           {1, s.o, 1, s.i}, {O * I, I, I, 1}, *dtype),
                *o, oL);
    }
  }
  return success();
}

} // namespace

void attachReduceModels(MLIRContext *ctx) {
  tpu::ReduceOp::attachInterface<ReduceModel>(*ctx);
}

} // namespace backend
} // namespace tpuc
