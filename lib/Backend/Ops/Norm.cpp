//===- Norm.cpp - LayerNorm and Softmax from Reduce/Binary/Active ---------===//
//
// LayerNorm views its input as [1, O, 1, I] rows (O on lanes) and computes
// per tile: mean (reduce), centred x (binary sub, broadcast), variance
// (square + reduce mean), rsqrt(var + eps) (binary scalar + active), the
// normalised product and the affine weight/bias (broadcast over lanes,
// loaded once). Softmax views [O, D, I] as [1, O, D, I] and reduces D along
// H: max, subtract, exp, sum, divide.
//
// A normalised row too long for LMEM is streamed in chunks of D (LayerNorm
// viewed as [1, O, I, 1]) three times: two passes reduce each chunk into a
// column of partial results that one more reduction combines (mean then
// variance, or max then the sum of exponentials), the third computes and
// stores the output. Two separate statistics passes keep the variance
// exact (centred) like the single-tile path.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

using namespace mlir;
using namespace tpuc::chip;

namespace tpuc {
namespace backend {
namespace {

/// Picks a tile of O (lane multiples) and I for rows needing `need(o, i)`
/// elements per lane; fails when a single row does not fit.
bool pickRows(int64_t O, int64_t I, int64_t L, int64_t budget,
              function_ref<int64_t(int64_t, int64_t)> need, bool splitI,
              int64_t &oT, int64_t &iT) {
  oT = std::min(O, L);
  iT = I;
  while (need(oT, iT) > budget) {
    if (splitI && iT > 1)
      iT = ceilDiv(iT, 2);
    else if (oT > 1)
      oT = ceilDiv(oT, 2);
    else
      return false;
  }
  if (iT == I)
    while (oT < O && need(std::min(O, oT + L), I) <= budget)
      oT = std::min(O, oT + L);
  return true;
}

/// A tile of `oT` rows (of `rowBytes` in DDR) cut to about a quarter of the
/// O rows (whole lanes), so the loads and stores of four tiles overlap
/// their compute instead of one load, the compute and one store running
/// back to back; unchanged when a quarter's transfer would not outlast the
/// DDR latency (small tensors gain nothing from more instructions).
int64_t overlapRows(CodegenContext &ctx, int64_t O, int64_t oT,
                    int64_t rowBytes) {
  const chip::Target &t = ctx.target();
  const int64_t L = ctx.lanes(), quarter = ceilDiv(ceilDiv(O, 4), L) * L;
  if (quarter >= oT ||
      double(quarter * rowBytes) / t.ddr_bytes_per_cycle < t.ddr_latency_cycles)
    return oT;
  return quarter;
}

/// One chunk of rows [o0, o0+o) x [d0, d0+d) x [i0, i0+i) in pass `pass`.
struct Chunk {
  int64_t o0, o, d0, d, i0, i;
  int pass;
  int64_t c, nC;
  bool last() const { return c == nC - 1; }
};

/// The LMEM operands of a chunk: x and y [1,o,d,i]; `part` is row c of the
/// partial results `parts` [1,o,nC,i]; s0, s1 [1,o,1,i] statistics; vecs
/// [1,1,d,i] per-chunk slices of broadcast inputs (last pass only).
struct ChunkOps {
  Operand x, y, part, parts, s0, s1;
  SmallVector<Operand, 2> vecs;
  SmallVector<LBuf *, 10> bufs;
  CodegenContext *ctx;
  uint32_t emit(const Instruction &inst) { return ctx->tiu(inst, bufs); }
};

/// Streams [O, D, I] through LMEM in D-chunks, three passes per (O, I)
/// tile; `compute` emits the TIU work of a chunk and y is stored after the
/// last pass. `vecAddrs` are [D, I] inputs broadcast over O, loaded chunk by
/// chunk for the last pass.
LogicalResult
streamRowChunks(CodegenContext &ctx, uint64_t inAddr, uint64_t outAddr,
                int64_t O, int64_t D, int64_t I, DType io,
                ArrayRef<uint64_t> vecAddrs,
                function_ref<void(const Chunk &, ChunkOps &)> compute) {
  // `io` in DDR; F16/BF16 chunks and statistics are F32 in LMEM.
  const DType t = wideFloat(io);
  const int64_t L = ctx.lanes(), es = dtypeSize(t), ies = dtypeSize(io);
  const int64_t nv = int64_t(vecAddrs.size());
  const int64_t budget = int64_t(ctx.lmemFree()) / es - (10 + 2 * nv) * 64 / es;
  auto need = [&](int64_t o, int64_t d, int64_t i) {
    return ceilDiv(o, L) * (4 * d * i + ceilDiv(D, d) * i + 2 * i) +
           2 * nv * d * i;
  };
  int64_t oT = std::min(O, L), dT = D, iT = I;
  while (need(oT, dT, iT) > budget) {
    // Shorter chunks mean more partial results: stop when they cost more.
    if (dT > 1 && need(oT, ceilDiv(dT, 2), iT) < need(oT, dT, iT))
      dT = ceilDiv(dT, 2);
    else if (iT > 1)
      iT = ceilDiv(iT, 2);
    else if (oT > 1)
      oT = ceilDiv(oT, 2);
    else
      return ctx.error() << "does not fit local memory: " << D
                         << " partial results per row";
  }
  const int64_t nC = ceilDiv(D, dT);
  Pipeline pipe;
  enum { kIn, kOut, kParts, kS0, kS1, kVec };
  if (failed(pipe.addGroup(ctx, ctx.lmemBytes({1, oT, dT, iT}, t), 2)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, oT, dT, iT}, t), 2)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, oT, nC, iT}, t), 1)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, oT, 1, iT}, t), 1)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, oT, 1, iT}, t), 1)))
    return failure();
  for (int64_t v = 0; v < nv; ++v)
    if (failed(pipe.addGroup(ctx, ctx.lmemBytes({1, 1, dT, iT}, t), 2)))
      return failure();
  LBuf *parts = pipe.acquire(kParts, 0).first, *s0 = pipe.acquire(kS0, 0).first,
       *s1 = pipe.acquire(kS1, 0).first;

  SmallVector<Chunk> steps;
  for (int64_t o = 0; o < O; o += oT)
    for (int64_t i = 0; i < I; i += iT)
      for (int pass = 0; pass < 3; ++pass)
        for (int64_t c = 0; c < nC; ++c)
          steps.push_back({o, std::min(oT, O - o), c * dT,
                           std::min(dT, D - c * dT), i, std::min(iT, I - i),
                           pass, c, nC});
  auto view = [&](uint64_t base, const Chunk &k) {
    return ddrOperand(base + ((k.o0 * D + k.d0) * I + k.i0) * ies,
                      {1, k.o, k.d, k.i}, {O * D * I, D * I, I, 1}, io);
  };
  std::vector<ChunkOps> ops(steps.size());
  auto loadStep = [&](size_t n) {
    const Chunk &k = steps[n];
    ChunkOps &c = ops[n];
    c.ctx = &ctx;
    LBuf *x = pipe.acquire(kIn, int64_t(n)).first,
         *y = pipe.acquire(kOut, int64_t(n)).first;
    c.x = lmemTensor(x->addr, 1, k.o, k.d, k.i, t);
    c.y = lmemTensor(y->addr, 1, k.o, k.d, k.i, t);
    ctx.load(*x, c.x, view(inAddr, k));
    c.bufs = {x, y, parts, s0, s1};
    if (k.pass == 2)
      for (int64_t v = 0; v < nv; ++v) {
        auto [b, fresh] = pipe.acquire(kVec + v, k.i0 / iT * nC + k.c);
        Operand vl = lmemTensor(b->addr, 1, 1, k.d, k.i, t);
        if (fresh)
          ctx.load(*b, vl,
                   ddrOperand(vecAddrs[v] + (k.d0 * I + k.i0) * ies,
                              {1, 1, k.d, k.i}, {D * I, D * I, I, 1}, io));
        c.vecs.push_back(vl);
        c.bufs.push_back(b);
      }
    c.parts = lmemTensor(parts->addr, 1, k.o, k.nC, k.i, t);
    c.part = c.parts;
    c.part.addr += uint64_t(k.c * k.i * es);
    c.part.shape[2] = 1;
    c.s0 = lmemTensor(s0->addr, 1, k.o, 1, k.i, t);
    c.s1 = lmemTensor(s1->addr, 1, k.o, 1, k.i, t);
  };
  loadStep(0);
  for (size_t n = 0; n < steps.size(); ++n) {
    if (n + 1 < steps.size())
      loadStep(n + 1);
    compute(steps[n], ops[n]);
    if (steps[n].pass == 2)
      ctx.store(view(outAddr, steps[n]), *ops[n].bufs[1], ops[n].y);
  }
  return success();
}

/// Whether a local op's F16/BF16 result needs an F32 scratch of its shape
/// for the unrounded values.
bool isWideResult(Operation *op) {
  DType t = chipDType(op->getResult(0).getType());
  return wideFloat(t) != t;
}

/// Two per-row statistics [n, c, h, 1] (F32) at the start of an F32
/// scratch of the rows' shape [n, c, h, w], w >= 2: the first, then the
/// second right after it in every lane.
std::pair<Operand, Operand> rowStats(const Operand &scratch) {
  const auto &s = scratch.shape;
  Operand a = lmemTensor(scratch.addr, s[0], s[1], s[2], 1, DType::F32,
                         scratch.start_lane);
  Operand b = a;
  b.addr += uint64_t(s[0]) * s[2] * dtypeSize(DType::F32);
  return {a, b};
}

/// What LayerNorm and Softmax share in a group: rows along the last axis,
/// held in the matrix view, F32 scratch, and no halo (a slice of rows needs
/// the same rows of its input).
template <typename Concrete, typename OpT>
struct RowwiseLocalModel : public CodegenInterface::ExternalModel<Concrete, OpT> {
  bool localRowwise(Operation *) const { return true; }
  SmallVector<int64_t, 4> localResultShape(Operation *op) const {
    return matrixView(getShape(op->getResult(0)));
  }
  Type localTempType(Operation *op, unsigned) const {
    return Float32Type::get(op->getContext());
  }
  bool localInputRows(Operation *, unsigned, int64_t, int64_t, int64_t &,
                      int64_t &) const {
    return false;
  }
};

struct LayerNormModel : public RowwiseLocalModel<LayerNormModel, tpu::LayerNormOp> {
  /// In a group: rows along the last axis, reduced along W as the tiled
  /// code does, in the matrix view [batch, rows, 1, D] beside matmuls or
  /// the rows view [1, C, H, D] beside row-wise ops. Temps (F32): the
  /// centred rows, the two statistics of each row, and for an F16/BF16
  /// result the unrounded one (the last instruction rounds once).
  bool supportsLocal(Operation *operation) const {
    auto op = cast<tpu::LayerNormOp>(operation);
    int64_t rank = int64_t(getShape(op.getInput()).size());
    int64_t d = getShape(op.getInput()).back();
    auto vec = [&](Value v) {
      return isNone(v) || numElements(getShape(v)) == d;
    };
    return rank >= 2 && d >= 2 && op.getAxis() == rank - 1 &&
           isFloat(chipDType(op.getOutput().getType())) && vec(op.getWeight()) &&
           vec(op.getBias());
  }
  SmallVector<int64_t, 4> localShape(Operation *op, unsigned index) const {
    if (index > 0)
      return {1, 1, 1, getShape(op->getOperand(0)).back()};
    return matrixView(getShape(op->getOperand(0)));
  }
  unsigned localTemps(Operation *op) const {
    return isWideResult(op) ? 3 : 2;
  }
  LogicalResult codegenLocal(Operation *operation, CodegenContext &,
                             LocalOperands &t) const {
    auto op = cast<tpu::LayerNormOp>(operation);
    const Operand &x = t.operands[0].lmem, &r = t.result.lmem,
                  &c = t.temps[0].lmem;
    // The unrounded result: the result itself in F32.
    const Operand &y = t.temps.size() > 2 ? t.temps[2].lmem : r;
    auto [mean, rstd] = rowStats(t.temps[1].lmem);
    const float eps = float(op.getEpsilon().convertToDouble());
    bool hasW = t.operands[1].buf, hasB = t.operands[2].buf;
    t.emit(makeReduce(chip::ReduceMode::Mean, mean, x, 3));
    t.emit(makeBinary(BinaryOp::Sub, c, x, mean));
    t.emit(makeActive(ActOp::Square, y, c));
    t.emit(makeReduce(chip::ReduceMode::Mean, rstd, y, 3));
    t.emit(makeBinaryScalar(BinaryOp::Add, rstd, rstd, eps));
    t.emit(makeActive(ActOp::Rsqrt, rstd, rstd));
    t.emit(makeBinary(BinaryOp::Mul, hasW || hasB ? y : r, c, rstd));
    if (hasW)
      t.emit(makeBinary(BinaryOp::Mul, hasB ? y : r, y, t.operands[1].lmem));
    if (hasB)
      t.emit(makeBinary(BinaryOp::Add, r, y, t.operands[2].lmem));
    return success();
  }

  LogicalResult codegen(Operation *operation, CodegenContext &ctx) const {
    auto op = cast<tpu::LayerNormOp>(operation);
    auto dtype = floatComputeType(ctx);
    auto in = getTensor(ctx, op.getInput()),
         out = getTensor(ctx, op.getOutput());
    if (failed(dtype) || failed(in) || failed(out))
      return failure();
    bool hasW = !isNone(op.getWeight()), hasB = !isNone(op.getBias());
    uint64_t wAddr = 0, bAddr = 0;
    if (hasW) {
      auto t = getTensor(ctx, op.getWeight());
      if (failed(t))
        return failure();
      wAddr = t->addr;
    }
    if (hasB) {
      auto t = getTensor(ctx, op.getBias());
      if (failed(t))
        return failure();
      bAddr = t->addr;
    }
    ArrayRef<int64_t> shape = in->shape;
    int64_t axis = op.getAxis();
    int64_t O = numElements(shape.take_front(axis)),
            I = numElements(shape.drop_front(axis));
    if (O * I == 0)
      return success();
    // F16/BF16 intermediates stay F32 in LMEM (loads and the store
    // convert), so the result rounds once.
    const DType lt = wideFloat(*dtype);
    const int64_t L = ctx.lanes(), es = dtypeSize(*dtype);
    const int64_t budget = int64_t(ctx.lmemFree()) / dtypeSize(lt) - 10 * 64;
    int64_t oT, iT;
    auto need = [&](int64_t o, int64_t i) {
      return ceilDiv(o, L) * (5 * i + 2) + 2 * i;
    };
    const float eps = float(op.getEpsilon().convertToDouble());
    bool rowsFit = pickRows(O, I, L, budget, need, /*splitI=*/false, oT, iT);
    if (rowsFit)
      oT = overlapRows(ctx, O, oT, I * es);
    if (!rowsFit) {
      SmallVector<uint64_t, 2> vecs;
      if (hasW)
        vecs.push_back(wAddr);
      if (hasB)
        vecs.push_back(bAddr);
      const double n = double(I);
      return streamRowChunks(
          ctx, in->addr, out->addr, O, I, 1, *dtype, vecs,
          [&](const Chunk &k, ChunkOps &c) {
            if (k.pass == 0) { // mean
              c.emit(makeReduce(chip::ReduceMode::Sum, c.part, c.x, 2));
              if (k.last()) {
                c.emit(makeReduce(chip::ReduceMode::Sum, c.s0, c.parts, 2));
                c.emit(makeBinaryScalar(BinaryOp::Div, c.s0, c.s0, n));
              }
            } else if (k.pass == 1) { // 1 / sqrt(variance + eps)
              c.emit(makeBinary(BinaryOp::Sub, c.y, c.x, c.s0));
              c.emit(makeActive(ActOp::Square, c.y, c.y));
              c.emit(makeReduce(chip::ReduceMode::Sum, c.part, c.y, 2));
              if (k.last()) {
                c.emit(makeReduce(chip::ReduceMode::Sum, c.s1, c.parts, 2));
                c.emit(makeBinaryScalar(BinaryOp::Div, c.s1, c.s1, n));
                c.emit(makeBinaryScalar(BinaryOp::Add, c.s1, c.s1, eps));
                c.emit(makeActive(ActOp::Rsqrt, c.s1, c.s1));
              }
            } else {
              c.emit(makeBinary(BinaryOp::Sub, c.y, c.x, c.s0));
              c.emit(makeBinary(BinaryOp::Mul, c.y, c.y, c.s1));
              for (size_t v = 0; v < c.vecs.size(); ++v) {
                BinaryOp f = hasW && v == 0 ? BinaryOp::Mul : BinaryOp::Add;
                c.emit(makeBinary(f, c.y, c.y, c.vecs[v]));
              }
            }
          });
    }
    Pipeline pipe;
    enum { kIn, kOut, kTmp, kMean, kVar, kW, kB };
    std::array<int64_t, 4> row{1, oT, 1, I}, stat{1, oT, 1, 1},
        vec{1, 1, 1, I};
    // An F16/BF16 input tile stays narrow (its load moves half the bytes of
    // a widening one); the TIU reads it into F32 and the last instruction
    // rounds the F32 result into it, once, as a widening store would.
    if (failed(pipe.addGroup(ctx, ctx.lmemBytes(row, *dtype), 2)) ||
        failed(pipe.addGroup(ctx, ctx.lmemBytes(row, lt), 2)) ||
        failed(pipe.addGroup(ctx, ctx.lmemBytes(row, lt), 1)) ||
        failed(pipe.addGroup(ctx, ctx.lmemBytes(stat, lt), 1)) ||
        failed(pipe.addGroup(ctx, ctx.lmemBytes(stat, lt), 1)) ||
        failed(pipe.addGroup(ctx, ctx.lmemBytes(vec, lt), 1)) ||
        failed(pipe.addGroup(ctx, ctx.lmemBytes(vec, lt), 1)))
      return failure();
    LBuf *tmp = pipe.acquire(kTmp, 0).first, *mean = pipe.acquire(kMean, 0).first,
         *var = pipe.acquire(kVar, 0).first, *w = pipe.acquire(kW, 0).first,
         *b = pipe.acquire(kB, 0).first;
    Operand wL = lmemTensor(w->addr, 1, 1, 1, I, lt),
            bL = lmemTensor(b->addr, 1, 1, 1, I, lt);
    if (hasW)
      ctx.load(*w, wL, ddrOperand(wAddr, {1, 1, 1, I}, {I, I, I, 1}, *dtype));
    if (hasB)
      ctx.load(*b, bL, ddrOperand(bAddr, {1, 1, 1, I}, {I, I, I, 1}, *dtype));

    SmallVector<int64_t> starts;
    for (int64_t o = 0; o < O; o += oT)
      starts.push_back(o);
    SmallVector<std::array<LBuf *, 2>> bufs(starts.size());
    auto loadStep = [&](size_t k) {
      int64_t o0 = starts[k], o = std::min(oT, O - o0);
      LBuf *x = pipe.acquire(kIn, int64_t(k)).first;
      ctx.load(*x, lmemTensor(x->addr, 1, o, 1, I, *dtype),
               ddrOperand(in->addr + o0 * I * es, {1, o, 1, I}, {O * I, I, I, 1},
                          *dtype));
      bufs[k] = {x, pipe.acquire(kOut, int64_t(k)).first};
    };
    loadStep(0);
    for (size_t k = 0; k < starts.size(); ++k) {
      if (k + 1 < starts.size())
        loadStep(k + 1);
      int64_t o0 = starts[k], o = std::min(oT, O - o0);
      auto [x, y] = bufs[k];
      Operand xL = lmemTensor(x->addr, 1, o, 1, I, *dtype),
              yL = lmemTensor(y->addr, 1, o, 1, I, lt),
              tL = lmemTensor(tmp->addr, 1, o, 1, I, lt),
              mL = lmemTensor(mean->addr, 1, o, 1, 1, lt),
              vL = lmemTensor(var->addr, 1, o, 1, 1, lt);
      SmallVector<LBuf *> all{x, y, tmp, mean, var, w, b};
      ctx.tiu(makeReduce(chip::ReduceMode::Mean, mL, xL, 3), all);
      ctx.tiu(makeBinary(BinaryOp::Sub, tL, xL, mL), all);
      ctx.tiu(makeActive(ActOp::Square, yL, tL), all);
      ctx.tiu(makeReduce(chip::ReduceMode::Mean, vL, yL, 3), all);
      ctx.tiu(makeBinaryScalar(BinaryOp::Add, vL, vL, eps), all);
      ctx.tiu(makeActive(ActOp::Rsqrt, vL, vL), all);
      // The result: y, or (narrow) x, no longer read once centred.
      const bool narrow = lt != *dtype;
      LBuf *res = narrow ? x : y;
      const Operand &rL = narrow ? xL : yL;
      ctx.tiu(makeBinary(BinaryOp::Mul, hasW || hasB ? yL : rL, tL, vL), all);
      if (hasW)
        ctx.tiu(makeBinary(BinaryOp::Mul, hasB ? yL : rL, yL, wL), all);
      if (hasB)
        ctx.tiu(makeBinary(BinaryOp::Add, rL, yL, bL), all);
      ctx.store(ddrOperand(out->addr + o0 * I * es, {1, o, 1, I},
                           {O * I, I, I, 1}, *dtype),
                *res, rL);
    }
    return success();
  }
};

struct SoftmaxModel : public RowwiseLocalModel<SoftmaxModel, tpu::SoftmaxOp> {
  /// In a group: rows along the last axis, held as the matrix view
  /// [batch, rows, 1, D] or the rows view [1, C, H, D] and reduced along W.
  /// Temps (F32): the per-row max and sum, and for an F16/BF16 result the
  /// unrounded one.
  bool supportsLocal(Operation *operation) const {
    auto op = cast<tpu::SoftmaxOp>(operation);
    int64_t rank = int64_t(getShape(op.getInput()).size());
    return rank >= 2 && getShape(op.getInput()).back() >= 2 &&
           op.getAxis() == rank - 1 &&
           isFloat(chipDType(op.getOutput().getType()));
  }
  SmallVector<int64_t, 4> localShape(Operation *op, unsigned) const {
    return matrixView(getShape(op->getOperand(0)));
  }
  unsigned localTemps(Operation *op) const {
    return isWideResult(op) ? 2 : 1;
  }
  LogicalResult codegenLocal(Operation *operation, CodegenContext &,
                             LocalOperands &t) const {
    auto op = cast<tpu::SoftmaxOp>(operation);
    const Operand &x = t.operands[0].lmem, &r = t.result.lmem;
    const Operand &y = t.temps.size() > 1 ? t.temps[1].lmem : r;
    auto [mx, sum] = rowStats(t.temps[0].lmem);
    Operand src = x;
    if (auto d = op.getDivisor()) {
      t.emit(makeBinaryScalar(BinaryOp::Div, y, x, d->convertToDouble()));
      src = y;
    }
    t.emit(makeReduce(chip::ReduceMode::Max, mx, src, 3));
    t.emit(makeBinary(BinaryOp::Sub, y, src, mx));
    t.emit(makeActive(ActOp::Exp, y, y));
    t.emit(makeReduce(chip::ReduceMode::Sum, sum, y, 3));
    t.emit(makeBinary(BinaryOp::Div, r, y, sum));
    return success();
  }

  LogicalResult codegen(Operation *operation, CodegenContext &ctx) const {
    auto op = cast<tpu::SoftmaxOp>(operation);
    auto dtype = floatComputeType(ctx);
    auto in = getTensor(ctx, op.getInput()),
         out = getTensor(ctx, op.getOutput());
    if (failed(dtype) || failed(in) || failed(out))
      return failure();
    ArrayRef<int64_t> shape = in->shape;
    int64_t axis = op.getAxis();
    int64_t O = numElements(shape.take_front(axis)), D = shape[axis],
            I = numElements(shape.drop_front(axis + 1));
    if (O * D * I == 0)
      return success();
    // The input divided first (in F32, as the interpreter divides).
    const bool divide = op.getDivisor().has_value();
    const float divisor = divide ? float(op.getDivisor()->convertToDouble()) : 1;
    // F16/BF16 intermediates stay F32 in LMEM (loads and the store
    // convert), so the result rounds once.
    const DType lt = wideFloat(*dtype);
    const int64_t L = ctx.lanes(), es = dtypeSize(*dtype);
    const int64_t budget = int64_t(ctx.lmemFree()) / dtypeSize(lt) - 6 * 64;
    auto need = [&](int64_t o, int64_t i) {
      return ceilDiv(o, L) * (4 * D * i + 2 * i);
    };
    int64_t oT, iT;
    if (!pickRows(O, I, L, budget, need, /*splitI=*/true, oT, iT))
      return streamRowChunks(
          ctx, in->addr, out->addr, O, D, I, *dtype, {},
          [&](const Chunk &k, ChunkOps &c) {
            if (divide) // every pass reloads the chunk
              c.emit(makeBinaryScalar(BinaryOp::Div, c.x, c.x, divisor));
            if (k.pass == 0) { // max
              c.emit(makeReduce(chip::ReduceMode::Max, c.part, c.x, 2));
              if (k.last())
                c.emit(makeReduce(chip::ReduceMode::Max, c.s0, c.parts, 2));
              return;
            }
            c.emit(makeBinary(BinaryOp::Sub, c.y, c.x, c.s0));
            c.emit(makeActive(ActOp::Exp, c.y, c.y));
            if (k.pass == 1) { // sum of exponentials
              c.emit(makeReduce(chip::ReduceMode::Sum, c.part, c.y, 2));
              if (k.last())
                c.emit(makeReduce(chip::ReduceMode::Sum, c.s1, c.parts, 2));
            } else {
              c.emit(makeBinary(BinaryOp::Div, c.y, c.y, c.s1));
            }
          });
    if (iT == I)
      oT = overlapRows(ctx, O, oT, D * I * es);
    Pipeline pipe;
    enum { kIn, kOut, kMax, kSum };
    // As LayerNorm's: a narrow input tile, which also takes the result.
    if (failed(pipe.addGroup(ctx, ctx.lmemBytes({1, oT, D, iT}, *dtype), 2)) ||
        failed(pipe.addGroup(ctx, ctx.lmemBytes({1, oT, D, iT}, lt), 2)) ||
        failed(pipe.addGroup(ctx, ctx.lmemBytes({1, oT, 1, iT}, lt), 1)) ||
        failed(pipe.addGroup(ctx, ctx.lmemBytes({1, oT, 1, iT}, lt), 1)))
      return failure();
    LBuf *mx = pipe.acquire(kMax, 0).first, *sum = pipe.acquire(kSum, 0).first;
    struct Step {
      int64_t o0, o, i0, i;
    };
    SmallVector<Step> steps;
    for (int64_t o = 0; o < O; o += oT)
      for (int64_t i = 0; i < I; i += iT)
        steps.push_back({o, std::min(oT, O - o), i, std::min(iT, I - i)});
    SmallVector<std::array<LBuf *, 2>> bufs(steps.size());
    auto view = [&](const Step &s) {
      return ddrOperand(0, {1, s.o, D, s.i}, {O * D * I, D * I, I, 1}, *dtype);
    };
    auto loadStep = [&](size_t k) {
      const Step &s = steps[k];
      LBuf *x = pipe.acquire(kIn, int64_t(k)).first;
      Operand src = view(s);
      src.addr = in->addr + (s.o0 * D * I + s.i0) * es;
      ctx.load(*x, lmemTensor(x->addr, 1, s.o, D, s.i, *dtype), src);
      bufs[k] = {x, pipe.acquire(kOut, int64_t(k)).first};
    };
    loadStep(0);
    for (size_t k = 0; k < steps.size(); ++k) {
      if (k + 1 < steps.size())
        loadStep(k + 1);
      const Step &s = steps[k];
      auto [x, y] = bufs[k];
      Operand xL = lmemTensor(x->addr, 1, s.o, D, s.i, *dtype),
              yL = lmemTensor(y->addr, 1, s.o, D, s.i, lt),
              mL = lmemTensor(mx->addr, 1, s.o, 1, s.i, lt),
              sL = lmemTensor(sum->addr, 1, s.o, 1, s.i, lt);
      SmallVector<LBuf *> all{x, y, mx, sum};
      Operand src = xL;
      if (divide) {
        ctx.tiu(makeBinaryScalar(BinaryOp::Div, yL, xL, divisor), all);
        src = yL;
      }
      ctx.tiu(makeReduce(chip::ReduceMode::Max, mL, src, 2), all);
      ctx.tiu(makeBinary(BinaryOp::Sub, yL, src, mL), all);
      ctx.tiu(makeActive(ActOp::Exp, yL, yL), all);
      ctx.tiu(makeReduce(chip::ReduceMode::Sum, sL, yL, 2), all);
      const bool narrow = lt != *dtype;
      ctx.tiu(makeBinary(BinaryOp::Div, narrow ? xL : yL, yL, sL), all);
      Operand dst = view(s);
      dst.addr = out->addr + (s.o0 * D * I + s.i0) * es;
      ctx.store(dst, narrow ? *x : *y, narrow ? xL : yL);
    }
    return success();
  }
};

} // namespace

void attachNormModels(MLIRContext *ctx) {
  tpu::LayerNormOp::attachInterface<LayerNormModel>(*ctx);
  tpu::SoftmaxOp::attachInterface<SoftmaxModel>(*ctx);
}

} // namespace backend
} // namespace tpuc
