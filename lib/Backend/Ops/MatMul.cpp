//===- MatMul.cpp - Batched matrix multiplication -------------------------===//
//
// The matmul instruction puts the M rows of the left operand on lanes and
// the K rows of the right operand on lanes: [1,M,1,K] x [1,K,1,N]. A right
// operand without batch dims (a weight) is shared by every batch, so the
// batches fold into M. M, N and K are tiled to fit LMEM; K tiles accumulate
// into the output tile (accumulate flag), the bias is added by the first K
// tile and the ReLU applied by the last. Weights keep their row-major [K, N]
// layout, which is already the right operand's.
//
// Without batches the tile order is chosen by estimated DDR bytes. The
// default order (m, n, k) re-reads the left K slices for every N tile and
// the right operand for every M tile. The output-stationary order (m, k, n)
// keeps the whole [mT, N] output row block in LMEM, so each left tile is read
// once and reused across all N tiles, and (with a single M tile) the right
// operand is read once: the weights plus activations, the roofline's bytes.
// When that block is too wide the left-resident order (m, n, k) instead
// keeps the whole [mT, K] left tile and streams the right operand past it.
//
// With a single row (M = 1, e.g. batch-1 fully-connected layers) that layout
// would use one lane. A constant [K, N] right operand is then stored
// transposed, [N, K], and becomes the left operand of out^T = W^T x^T, so
// the N outputs spread over the lanes; the bias and relu follow as one
// binary add (the bias varies along lanes, the matmul bias along N').
//
// A tile epilogue group (tpu.Group with tile_epilogue, Epilogue.h) runs its matmul
// with this tiled code and applies the ops after it (an activation, a lookup
// table: elementwise, in place) to each finished output tile in LMEM before
// the store, so the matmul's own result never goes to DDR; their weights
// (a table) load once before the tiles. When the chain closes with a second
// matmul by a weight (a transformer's FFN: GELU(x W1 + b1) W2 + b2), the
// pair runs fused over chunks of the hidden columns: x and the second
// matmul's sums stay in LMEM, each chunk's columns of W1 and rows of W2
// stream past them, and the chunk of the hidden result lives only in LMEM.
//
//===----------------------------------------------------------------------===//
#include "Epilogue.h"
#include "tpuc/Backend/LayerGroup.h"
#include <numeric>

using namespace mlir;
using namespace tpuc::chip;

namespace tpuc {
namespace backend {
namespace {

/// A single row times a constant [K, N] weight used by this op only.
bool isRowTimesWeight(tpu::MatMulOp op) {
  auto a = getShape(op.getInput()), b = getShape(op.getRight());
  return b.size() == 2 && !op.getRightTranspose() &&
         op.getRight().getDefiningOp<top::WeightOp>() &&
         op.getRight().hasOneUse() && !a.empty() &&
         numElements(a) == a.back();
}

LogicalResult emitMatMul(tpu::MatMulOp op, CodegenContext &ctx,
                         TileEpilogue *epilogue);
tpu::MatMulOp closingMatMul(ArrayRef<Operation *> ops);
LogicalResult emitFusedPair(CodegenContext &ctx, ArrayRef<Operation *> ops);

using StoreHook = function_ref<void(LBuf &, const Operand &)>;

struct MatMulModel
    : public CodegenInterface::ExternalModel<MatMulModel, tpu::MatMulOp> {
  LogicalResult layoutWeight(Operation *op, unsigned index,
                             std::vector<int64_t> &data,
                             const chip::Target &) const {
    if (index != 1 || !isRowTimesWeight(cast<tpu::MatMulOp>(op)))
      return success();
    auto b = getShape(op->getOperand(1));
    int64_t K = b[0], N = b[1];
    std::vector<int64_t> t(data.size());
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n)
        t[n * K + k] = data[k * N + n];
    data = std::move(t);
    return success();
  }
  int64_t getMacs(Operation *op) const {
    auto a = getShape(op->getOperand(0));
    return numElements(getShape(op->getResult(0))) * a.back();
  }
  LogicalResult codegen(Operation *op, CodegenContext &ctx) const {
    return emitMatMul(cast<tpu::MatMulOp>(op), ctx, nullptr);
  }

  /// Elementwise ops reading only the tile and weights (no scratch); not
  /// after a single row times a weight, whose result is transposed.
  /// A chain closing with a second matmul by a weight that reads its last
  /// result is a fused pair (emitFusedPair).
  bool takesTileEpilogue(Operation *op, ArrayRef<Operation *> epilogue) const {
    if (isRowTimesWeight(cast<tpu::MatMulOp>(op)))
      return false;
    SmallVector<Operation *> all{op};
    llvm::append_range(all, epilogue);
    if (closingMatMul(all))
      return epilogue.size() == 1 ||
             isElementwiseEpilogue(op, epilogue.drop_back(),
                                   /*allowResiduals=*/false);
    return isElementwiseEpilogue(op, epilogue, /*allowResiduals=*/false);
  }
  LogicalResult codegenTileEpilogue(Operation *op, CodegenContext &ctx,
                                    Operation *prologue,
                                    ArrayRef<Operation *> ops) const {
    if (prologue)
      return ctx.error() << "takes no tile prologue";
    SmallVector<Operation *> all{op};
    llvm::append_range(all, ops);
    if (closingMatMul(all))
      return emitFusedPair(ctx, all);
    TileEpilogue epilogue;
    if (failed(epilogue.init(ctx, ops)))
      return failure();
    return emitMatMul(cast<tpu::MatMulOp>(op), ctx, &epilogue);
  }

  /// In a group (F32, F16 or BF16), operands and result are held whole in
  /// the matmul instruction's own layout, [batch, rows, 1, cols] (rows on lanes), so a
  /// single instruction computes every batch.
  bool supportsLocal(Operation *operation) const {
    auto op = cast<tpu::MatMulOp>(operation);
    auto a = getShape(op.getInput()), b = getShape(op.getRight()),
         o = getShape(op.getOutput());
    // One instruction sums all of K, so an F16/BF16 result rounds once,
    // as the tiled code's single K tile does.
    // A single row times a weight reads the weight transposed, as its
    // tiled code lays it out ([N, K], N on lanes), in float only.
    const bool floatOut = isFloat(chipDType(op.getOutput().getType()));
    if (a.size() < 2 || b.size() < 2 ||
        (!floatOut && (isRowTimesWeight(op) || !localQuantized(operation))))
      return false;
    // Each operand has the result's batches or none (shared by all, as
    // the instruction reads an operand of batch 1); not both shared.
    auto batchOf = [&](ArrayRef<int64_t> s) {
      return s.size() == 2 || s.drop_back(2) == o.drop_back(2);
    };
    return batchOf(a) && batchOf(b) &&
           (a.size() != 2 || b.size() != 2 || o.size() == 2);
  }
  /// INT8 x INT8 into an INT32 accumulator (+ INT32 bias), requantized per
  /// tensor, as the tiled code.
  bool localQuantized(Operation *operation) const {
    auto op = cast<tpu::MatMulOp>(operation);
    auto is = [](Value v, DType t) { return chipDType(v.getType()) == t; };
    return is(op.getInput(), DType::INT8) && is(op.getRight(), DType::INT8) &&
           is(op.getOutput(), DType::INT8) &&
           (isNone(op.getBias()) || is(op.getBias(), DType::INT32)) &&
           op.getQuant() && op.getQuant().getDefiningOp<top::WeightOp>() &&
           getShape(op.getQuant()) == ArrayRef<int64_t>{1, 2};
  }
  /// A right operand without batch dims is shared by every row of the
  /// left one, as the tiled code folds the batches into M.
  bool localFoldsBatch(Operation *op) const {
    return getShape(op->getOperand(1)).size() == 2 &&
           !isRowTimesWeight(cast<tpu::MatMulOp>(op));
  }
  unsigned localTemps(Operation *op) const { return isQuantizedOp(op); }
  Type localTempType(Operation *op, unsigned) const {
    return IntegerType::get(op->getContext(), 32);
  }
  SmallVector<int64_t, 4> localShape(Operation *op, unsigned index) const {
    if (index == 2)
      return {1, 1, 1, getShape(op->getResult(0)).back()};
    if (index == 3) // the requant's (multiplier, shift)
      return {1, 1, 1, 2};
    if (index == 1 && isRowTimesWeight(cast<tpu::MatMulOp>(op))) {
      auto b = getShape(op->getOperand(1));
      return {1, b[1], 1, b[0]};
    }
    return matrixView(getShape(op->getOperand(index)));
  }
  SmallVector<int64_t, 4> localResultShape(Operation *op) const {
    return matrixView(getShape(op->getResult(0)));
  }
  bool localInputRows(Operation *, unsigned, int64_t, int64_t, int64_t &,
                      int64_t &) const {
    return false;
  }
  /// A weight of many columns used by this op only loads in up to 8
  /// equal parts of at least 128 columns, so the matmul of the first part
  /// overlaps the others' loads.
  unsigned localColumnParts(Operation *operation, unsigned index) const {
    auto op = cast<tpu::MatMulOp>(operation);
    auto b = getShape(op.getRight());
    if (index != 1 || b.size() != 2 || !op.getRight().hasOneUse() ||
        !op.getRight().getDefiningOp<top::WeightOp>() || isRowTimesWeight(op))
      return 1;
    for (int64_t parts = std::min<int64_t>(8, b[1] / 128); parts > 1; --parts)
      if (b[1] % parts == 0)
        return unsigned(parts);
    return 1;
  }
  /// A large F32 weight of few columns used by this op only loads in up
  /// to 8 parts of its rows (whole slots of the lanes, at least 16 KB
  /// each), so the matmul of the first rows overlaps the others' loads
  /// and the parts' products accumulate.
  unsigned localRowParts(Operation *operation, unsigned index,
                         unsigned lanes) const {
    auto op = cast<tpu::MatMulOp>(operation);
    auto b = getShape(op.getRight());
    if (index != 1 || b.size() != 2 || !op.getRight().hasOneUse() ||
        !op.getRight().getDefiningOp<top::WeightOp>() || isRowTimesWeight(op) ||
        chipDType(op.getOutput().getType()) != DType::F32 ||
        chipDType(op.getRight().getType()) != DType::F32 || op.getDoRelu() ||
        localColumnParts(operation, index) > 1)
      return 1;
    const int64_t minRows = std::max<int64_t>(lanes, 16 * 1024 / 4 / b[1]);
    for (int64_t parts = std::min<int64_t>(8, b[0] / minRows); parts > 1;
         --parts)
      if (b[0] % (parts * lanes) == 0 && b[0] / parts >= minRows)
        return unsigned(parts);
    return 1;
  }
  LogicalResult codegenLocal(Operation *operation, CodegenContext &ctx,
                             LocalOperands &t) const {
    auto op = cast<tpu::MatMulOp>(operation);
    Operand bias = t.operands[2].buf ? t.operands[2].lmem : Operand();
    bool quant = isQuantizedOp(op);
    const LocalTensor &outT = quant ? t.temps[0] : t.result;
    const Operand &out = outT.lmem;
    const LocalTensor &right = t.operands[1];
    if (right.partLoads.size() > 1 &&
        localRowParts(operation, 1, ctx.lanes()) == right.partLoads.size()) {
      // One matmul per part of the weight's rows, each waiting only for
      // its own part's load and adding into the sums of those before.
      const Operand &r = right.lmem, &l = t.operands[0].lmem;
      const int64_t parts = int64_t(right.partLoads.size()),
                    nr = r.shape[1] / parts;
      const uint64_t partBytes =
          ctx.lmemBytes({r.shape[0], nr, r.shape[2], r.shape[3]}, r.dtype);
      LBuf part = *right.buf;
      for (int64_t p = 0; p < parts; ++p) {
        part.gdma = right.partLoads[size_t(p)];
        Operand left = l;
        left.addr += uint64_t(p * nr) * dtypeSize(l.dtype);
        left.shape[3] = uint32_t(nr);
        SmallVector<LBuf *, 4> bufs{t.operands[0].buf, &part, outT.buf};
        if (t.operands[2].buf)
          bufs.push_back(t.operands[2].buf);
        ctx.tiu(makeMatMul(out, left,
                           lmemTensor(r.addr + uint64_t(p) * partBytes,
                                      r.shape[0], uint32_t(nr), r.shape[2],
                                      r.shape[3], r.dtype),
                           p == 0 ? bias : Operand(),
                           /*accumulate=*/p > 0,
                           op.getDoRelu() && p == parts - 1),
                bufs);
      }
      right.buf->tiu = std::max(right.buf->tiu, part.tiu);
    } else if (right.partLoads.size() > 1) {
      // One matmul per part of the weight's columns, each waiting only for
      // its own part's load; every column sums all of K, as one would.
      auto columns = [](Operand o, int64_t c0, int64_t w) {
        o.addr += uint64_t(c0) * dtypeSize(o.dtype);
        o.shape[3] = uint32_t(w);
        return o;
      };
      const Operand &r = right.lmem;
      const int64_t w = r.shape[3] / int64_t(right.partLoads.size());
      const uint64_t partBytes =
          ctx.lmemBytes({r.shape[0], r.shape[1], r.shape[2], w}, r.dtype);
      LBuf part = *right.buf;
      for (size_t p = 0; p < right.partLoads.size(); ++p) {
        int64_t c0 = int64_t(p) * w;
        part.gdma = right.partLoads[p];
        SmallVector<LBuf *, 4> bufs{t.operands[0].buf, &part, outT.buf};
        if (t.operands[2].buf)
          bufs.push_back(t.operands[2].buf);
        ctx.tiu(makeMatMul(columns(out, c0, w), t.operands[0].lmem,
                           lmemTensor(r.addr + p * partBytes, r.shape[0],
                                      r.shape[1], r.shape[2], uint32_t(w),
                                      r.dtype),
                           bias.space == Space::LMEM ? columns(bias, c0, w)
                                                     : Operand(),
                           /*accumulate=*/false, op.getDoRelu()),
                bufs);
      }
      right.buf->tiu = std::max(right.buf->tiu, part.tiu);
    } else {
      t.emit(makeMatMul(out, t.operands[0].lmem, right.lmem, bias,
                        /*accumulate=*/false, op.getDoRelu(),
                        op.getRightTranspose() || isRowTimesWeight(op)));
    }
    if (!quant)
      return success();
    auto m = ctx.intConstant(op.getQuant());
    if (failed(m))
      return failure();
    Requant rq;
    rq.zp = resultZeroPoint(op);
    rq.multiplier = int32_t((*m)[0]);
    rq.shift = int((*m)[1]);
    emitRequant([&](const Instruction &i) { return t.emit(i); }, t.result.lmem,
                out, rq);
    return success();
  }
};

/// out^T [N, 1] = W^T [N, K] x^T [K, 1] with N on lanes (see the header).
LogicalResult rowTimesWeight(tpu::MatMulOp op, CodegenContext &ctx,
                             const Tensor &x, const Tensor &w,
                             const Tensor &out, bool hasBias,
                             uint64_t biasAddr, const MacTypes &ty,
                             const MacEpilogue &ep) {
  const int64_t L = ctx.lanes(), ies = dtypeSize(ty.in),
                wes = dtypeSize(ty.weight), bes = dtypeSize(ty.bias),
                oes = dtypeSize(ty.out);
  // Sums over K tiles and the bias add stay F32 for F16/BF16 results.
  const int64_t es = std::max({ies, wes, bes, int64_t(4)});
  const int64_t K = x.shape.back(), N = out.shape.back();
  const int64_t budget = int64_t(ctx.lmemFree()) - 10 * 64;
  auto roundLanes = [&](int64_t v) { return std::max(L, ceilDiv(v, L) * L); };
  // At least a few N tiles so loads overlap compute; whole K if it fits.
  int64_t nT = std::min(N, roundLanes(ceilDiv(N, 4))), kT = K;
  auto fits = [&]() {
    int64_t rows = ceilDiv(nT, L);
    return (2 * rows * kT + 2 * ceilDiv(kT, L) + 6 * rows) * es <= budget;
  };
  while (!fits()) {
    if (nT > L)
      nT = roundLanes(nT / 2);
    else if (kT > L)
      kT = std::max(L, kT / L / 2 * L);
    else if (kT > 1)
      kT = ceilDiv(kT, 2);
    else if (nT > 1)
      nT = ceilDiv(nT, 2);
    else
      return ctx.error() << "does not fit local memory";
  }
  const int64_t nN = ceilDiv(N, nT), nK = ceilDiv(K, kT);
  const DType acc = nK > 1 || hasBias ? wideFloat(ty.acc) : ty.acc;
  Pipeline pipe;
  enum { kLeft, kRight, kBias, kOut, kQOut };
  if (failed(pipe.addGroup(ctx, ctx.lmemBytes({1, nT, 1, kT}, ty.weight), 2)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, kT, 1, 1}, ty.in),
                           nK == 1 ? 1 : 2)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, nT, 1, 1}, ty.bias), 2)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, nT, 1, 1}, acc), 2)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, nT, 1, 1}, ty.out), 2)))
    return failure();
  auto ext = [](int64_t i, int64_t tile, int64_t total) {
    return std::min(tile, total - i * tile);
  };
  SmallVector<std::pair<int64_t, int64_t>> steps; // (n tile, k tile)
  for (int64_t ni = 0; ni < nN; ++ni)
    for (int64_t ki = 0; ki < nK; ++ki)
      steps.push_back({ni, ki});
  SmallVector<std::array<LBuf *, 5>> bufs(steps.size());
  auto loadStep = [&](size_t i) {
    auto [ni, ki] = steps[i];
    int64_t n = ext(ni, nT, N), k = ext(ki, kT, K);
    auto [l, newL] = pipe.acquire(kLeft, ni * nK + ki);
    if (newL)
      ctx.load(*l, lmemTensor(l->addr, 1, n, 1, k, ty.weight),
               ddrOperand(w.addr + (ni * nT * K + ki * kT) * wes, {1, n, 1, k},
                          {N * K, K, K, 1}, ty.weight));
    auto [r, newR] = pipe.acquire(kRight, ki);
    if (newR)
      ctx.load(*r, lmemTensor(r->addr, 1, k, 1, 1, ty.in),
               ddrOperand(x.addr + ki * kT * ies, {1, k, 1, 1}, {K, 1, 1, 1},
                          ty.in));
    auto [bb, newB] = pipe.acquire(kBias, ni);
    if (newB && hasBias)
      ctx.load(*bb, lmemTensor(bb->addr, 1, n, 1, 1, ty.bias),
               ddrOperand(biasAddr + ni * nT * bes, {1, n, 1, 1}, {N, 1, 1, 1},
                          ty.bias));
    bufs[i] = {l, r, bb, pipe.acquire(kOut, ni).first,
               pipe.acquire(kQOut, ni).first};
  };
  loadStep(0);
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i + 1 < steps.size())
      loadStep(i + 1);
    auto [ni, ki] = steps[i];
    int64_t n = ext(ni, nT, N), k = ext(ki, kT, K);
    auto [l, r, bb, o, qo] = bufs[i];
    bool last = ki == nK - 1;
    Operand outL = lmemTensor(o->addr, 1, n, 1, 1, acc);
    ctx.tiu(makeMatMul(outL, lmemTensor(l->addr, 1, n, 1, k, ty.weight),
                       lmemTensor(r->addr, 1, k, 1, 1, ty.in), {},
                       /*accumulate=*/ki > 0,
                       /*relu=*/last && !hasBias && op.getDoRelu()),
            {l, r, bb, o});
    if (!last)
      continue;
    if (hasBias)
      ctx.tiu(makeBinary(BinaryOp::Add, outL, outL,
                         lmemTensor(bb->addr, 1, n, 1, 1, ty.bias),
                         op.getDoRelu()),
              {bb, o});
    storeMacResult(ctx, ty, ep,
                   ddrOperand(out.addr + ni * nT * oes, {1, n, 1, 1},
                              {N, 1, 1, 1}, ty.out),
                   *o, outL, qo);
  }
  return success();
}

/// `cols` rounded down to whole DDR bursts of a row-major operand's row
/// (`burstCols` elements), when it spans more than one: a tile of the right
/// operand is read row by row, and a run that ends inside a burst pays for
/// all of it.
int64_t wholeBursts(int64_t cols, int64_t burstCols) {
  return cols > burstCols ? cols / burstCols * burstCols : cols;
}

/// Tiles of a resident order (see the header): the [mT, N] output block
/// (leftResident false) or the [mT, K] left block stays in LMEM; nullopt
/// when it does not fit.
struct OsTiles {
  int64_t mT, kT, nT;
  bool leftResident;
};
std::optional<OsTiles> outputStationaryTiles(int64_t M, int64_t K, int64_t N,
                                             int64_t L, int64_t es,
                                             int64_t budget, bool leftResident,
                                             int64_t burstCols) {
  int64_t mT = M, kT = K, nT = N;
  auto roundLanes = [&](int64_t v) { return std::max(L, v / L * L); };
  auto halveN = [&](int64_t v) { return wholeBursts(ceilDiv(v, 2), burstCols); };
  auto fits = [&]() {
    int64_t rows = ceilDiv(mT, L), slots = mT == M ? 1 : 2;
    bool oneRight = mT == M && kT == K && nT == N;
    int64_t right = (oneRight ? 1 : 2) * ceilDiv(kT, L) * nT;
    int64_t total = leftResident
                        ? slots * rows * K + right + 2 * rows * nT + 2 * nT
                        : slots * rows * N + 2 * rows * kT + right + N;
    return total * es <= budget;
  };
  while (!fits()) {
    if (nT > 128)
      nT = halveN(nT);
    else if (kT > 4 * L)
      kT = roundLanes(ceilDiv(kT, 2));
    else if (mT > L)
      mT = roundLanes(ceilDiv(mT, 2));
    else if (nT > 32)
      nT = halveN(nT);
    else if (kT > L)
      kT = roundLanes(ceilDiv(kT, 2));
    else
      return std::nullopt;
  }
  return OsTiles{mT, kT, nT, leftResident};
}

/// DDR bytes read by the (m, n, k) order: left K slices are reloaded per N
/// tile unless K is whole, the right operand per M tile unless it is whole.
int64_t defaultOrderBytes(int64_t M, int64_t K, int64_t N, int64_t mT,
                          int64_t kT, int64_t nT) {
  int64_t nM = ceilDiv(M, mT), nN = ceilDiv(N, nT), nK = ceilDiv(K, kT);
  return M * K * (nK > 1 ? nN : 1) + K * N * (nN * nK > 1 ? nM : 1);
}

int64_t outputStationaryBytes(int64_t M, int64_t K, int64_t N,
                              const OsTiles &t) {
  int64_t nM = ceilDiv(M, t.mT), nN = ceilDiv(N, t.nT), nK = ceilDiv(K, t.kT);
  return M * K + K * N * (nN * nK > 1 ? nM : 1);
}

/// out [M, N] = a [M, K] x b [K, N] (+ bias, relu) in (m, k, n) order with
/// the output row block resident, or in (m, n, k) order with the left row
/// block resident; every operand is read once per M tile.
LogicalResult outputStationary(tpu::MatMulOp op, CodegenContext &ctx,
                               const Tensor &a, const Tensor &b,
                               const Tensor &out, bool hasBias,
                               uint64_t biasAddr, const MacTypes &ty,
                               const MacEpilogue &ep, int64_t M, int64_t K,
                               int64_t N, const OsTiles &tiles,
                               TileEpilogue *epilogue) {
  const int64_t ies = dtypeSize(ty.in), wes = dtypeSize(ty.weight),
                bes = dtypeSize(ty.bias), oes = dtypeSize(ty.out);
  const int64_t mT = tiles.mT, kT = tiles.kT, nT = tiles.nT;
  const int64_t nM = ceilDiv(M, mT), nN = ceilDiv(N, nT), nK = ceilDiv(K, kT);
  const DType t = nK > 1 ? wideFloat(ty.acc) : ty.acc;
  const int64_t es = dtypeSize(t);
  const bool lr = tiles.leftResident, quant = ty.quantized();
  const unsigned rowSlots = nM == 1 ? 1 : 2;
  Pipeline pipe;
  enum { kLeft, kRight, kBias, kOut, kQOut };
  const uint64_t biasBytes = ctx.lmemBytes({1, 1, 1, lr ? nT : N}, ty.bias),
                 outBytes = ctx.lmemBytes({1, mT, 1, lr ? nT : N}, t),
                 qOutBytes = ctx.lmemBytes({1, mT, 1, nT}, ty.out);
  const unsigned biasSlots = lr ? 2 : 1, outSlots = lr ? 2 : rowSlots;
  const uint64_t afterRight = Pipeline::footprint(biasBytes, biasSlots) +
                              Pipeline::footprint(outBytes, outSlots) +
                              (quant ? Pipeline::footprint(qOutBytes, 2) : 0);
  if (failed(pipe.addGroup(ctx, ctx.lmemBytes({1, mT, 1, lr ? K : kT}, ty.in),
                           lr ? rowSlots : 2)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, kT, 1, nT}, ty.weight),
                           nN * nK == 1 && nM == 1 ? 1 : 2, kLeft,
                           afterRight)) ||
      failed(pipe.addGroup(ctx, biasBytes, biasSlots)) ||
      failed(pipe.addGroup(ctx, outBytes, outSlots)) ||
      (quant && failed(pipe.addGroup(ctx, qOutBytes, 2))))
    return failure();
  auto ext = [](int64_t i, int64_t tile, int64_t total) {
    return std::min(tile, total - i * tile);
  };
  // An [m, w] window at column c0 of a [mT, width] LMEM row block.
  auto window = [&](LBuf *buf, int64_t width, int64_t c0, int64_t m,
                    int64_t w, DType dt) {
    Operand v = lmemTensor(buf->addr + c0 * dtypeSize(dt), 1, m, 1, w, dt);
    v.stride[0] = v.stride[1] = v.stride[2] = int32_t(width);
    return v;
  };
  struct Step {
    int64_t m, k, n;
  };
  SmallVector<Step> steps;
  for (int64_t mi = 0; mi < nM; ++mi)
    for (int64_t i = 0; i < nK * nN; ++i)
      steps.push_back(lr ? Step{mi, i % nK, i / nK} : Step{mi, i / nN, i % nN});
  SmallVector<std::array<LBuf *, 5>> bufs(steps.size());
  auto loadStep = [&](size_t i) {
    const Step &s = steps[i];
    int64_t m = ext(s.m, mT, M), n = ext(s.n, nT, N), k = ext(s.k, kT, K);
    auto [l, newL] = pipe.acquire(kLeft, lr ? s.m : s.m * nK + s.k);
    if (newL && lr)
      ctx.load(*l, lmemTensor(l->addr, 1, m, 1, K, ty.in),
               ddrOperand(a.addr + s.m * mT * K * ies, {1, m, 1, K},
                          {M * K, K, K, 1}, ty.in));
    else if (newL)
      ctx.load(*l, lmemTensor(l->addr, 1, m, 1, k, ty.in),
               ddrOperand(a.addr + (s.m * mT * K + s.k * kT) * ies,
                          {1, m, 1, k}, {M * K, K, K, 1}, ty.in));
    auto [r, newR] = pipe.acquire(kRight, s.k * nN + s.n);
    if (newR)
      ctx.load(*r, lmemTensor(r->addr, 1, k, 1, n, ty.weight),
               ddrOperand(b.addr + (s.k * kT * N + s.n * nT) * wes,
                          {1, k, 1, n}, {K * N, N, N, 1}, ty.weight));
    auto [bb, newB] = pipe.acquire(kBias, lr ? s.n : 0);
    int64_t b0 = lr ? s.n * nT : 0, bn = lr ? n : N;
    if (newB && hasBias)
      ctx.load(*bb, lmemTensor(bb->addr, 1, 1, 1, bn, ty.bias),
               ddrOperand(biasAddr + b0 * bes, {1, 1, 1, bn}, {N, N, N, 1},
                          ty.bias));
    bufs[i] = {l, r, bb,
               pipe.acquire(kOut, lr ? s.m * nN + s.n : s.m).first,
               quant ? pipe.acquire(kQOut, int64_t(i)).first : nullptr};
  };
  auto applyEpilogue = [&](LBuf &buf, const Operand &tile) {
    epilogue->apply(ctx, buf, tile);
  };
  StoreHook hook = epilogue ? StoreHook(applyEpilogue) : StoreHook();
  loadStep(0);
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i + 1 < steps.size())
      loadStep(i + 1);
    const Step &s = steps[i];
    int64_t m = ext(s.m, mT, M), n = ext(s.n, nT, N), k = ext(s.k, kT, K);
    auto [l, r, bb, o, qo] = bufs[i];
    bool first = s.k == 0, last = s.k == nK - 1;
    Operand outL = lr ? lmemTensor(o->addr, 1, m, 1, n, t)
                      : window(o, N, s.n * nT, m, n, t);
    Operand leftL = lr ? window(l, K, s.k * kT, m, k, ty.in)
                       : lmemTensor(l->addr, 1, m, 1, k, ty.in);
    Operand biasL;
    if (hasBias && first)
      biasL = lmemTensor(bb->addr + (lr ? 0 : s.n * nT) * bes, 1, 1, 1, n,
                         ty.bias);
    ctx.tiu(makeMatMul(outL, leftL,
                       lmemTensor(r->addr, 1, k, 1, n, ty.weight), biasL,
                       /*accumulate=*/!first, /*relu=*/last && op.getDoRelu()),
            {l, r, bb, o});
    if (!last)
      continue;
    // Store each finished N tile right away so stores overlap compute.
    storeMacResult(ctx, ty, ep,
                   ddrOperand(out.addr + (s.m * mT * N + s.n * nT) * oes,
                              {1, m, 1, n}, {M * N, N, N, 1}, ty.out),
                   *o, outL, qo, nullptr, hook);
  }
  return success(!epilogue || !epilogue->broken);
}

LogicalResult emitMatMul(tpu::MatMulOp op, CodegenContext &ctx,
                         TileEpilogue *epilogue) {
  auto types = macTypes(ctx, op.getRight(), op.getBias());
  if (failed(types))
    return failure();
  const MacTypes &ty = *types;
  auto ep = macEpilogue(ctx, op.getQuant(), ty);
  if (failed(ep))
    return failure();
  if (ep->table) // the table's channels would be M's rows, not N's columns
    return ctx.error() << "INT8 matmul needs a per-tensor [1, 2] quant operand";
  // With an epilogue the matmul's own result stays in local memory; its
  // tiles are stored, transformed, where the epilogue's result lives.
  auto a = getTensor(ctx, op.getInput()), b = getTensor(ctx, op.getRight()),
       out = epilogue ? FailureOr<Tensor>(
                            tensorAt(op.getOutput(), epilogue->outAddr))
                      : getTensor(ctx, op.getOutput());
  if (failed(a) || failed(b) || failed(out))
    return failure();
  bool hasBias = !isNone(op.getBias());
  uint64_t biasAddr = 0;
  if (hasBias) {
    auto t = getTensor(ctx, op.getBias());
    if (failed(t))
      return failure();
    biasAddr = t->addr;
  }
  const int64_t ies = dtypeSize(ty.in), wes = dtypeSize(ty.weight),
                bes = dtypeSize(ty.bias), oes = dtypeSize(ty.out),
                L = ctx.lanes();
  const bool quant = ty.quantized();
  // Tiles are sized for the widest buffer (a K-split F16 accumulator is F32).
  const int64_t es =
      std::max({ies, wes, int64_t(dtypeSize(wideFloat(ty.acc)))});
  // A transposed right operand ([..., N, K]) loads in its own layout.
  const bool rt = op.getRightTranspose();
  int64_t M = a->shape[a->shape.size() - 2], K = a->shape.back(),
          N = rt ? b->shape[b->shape.size() - 2] : b->shape.back();
  ArrayRef<int64_t> batch = ArrayRef<int64_t>(out->shape).drop_back(2);
  int64_t B = numElements(batch);
  if (M * K * N == 0 || out->numElements() == 0)
    return success();
  if (epilogue) {
    if (isRowTimesWeight(op))
      return ctx.error() << "a single row times a weight takes no epilogue";
    if (failed(epilogue->load(ctx)))
      return failure();
  }
  if (isRowTimesWeight(op))
    return rowTimesWeight(op, ctx, *a, *b, *out, hasBias, biasAddr, ty, *ep);

  // Matrix offsets (in elements) of each operand for every output batch.
  auto batchOffsets = [&](ArrayRef<int64_t> shape) {
    ArrayRef<int64_t> own = shape.drop_back(2);
    int64_t mat = shape[shape.size() - 2] * shape.back();
    SmallVector<int64_t> strides(batch.size(), 0);
    int64_t st = mat;
    for (int i = int(own.size()) - 1; i >= 0; --i) {
      int j = int(batch.size()) - int(own.size()) + i;
      strides[j] = own[i] == 1 ? 0 : st;
      st *= own[i];
    }
    SmallVector<int64_t> offs;
    for (int64_t idx = 0; idx < B; ++idx) {
      int64_t rem = idx, off = 0;
      for (int i = int(batch.size()) - 1; i >= 0; --i) {
        off += (rem % batch[i]) * strides[i];
        rem /= batch[i];
      }
      offs.push_back(off);
    }
    return offs;
  };
  SmallVector<int64_t> aOff = batchOffsets(a->shape),
                       bOff = batchOffsets(b->shape);
  // A shared right operand lets dense left batches fold into M.
  bool shared = llvm::all_of(bOff, [](int64_t o) { return o == 0; });
  bool dense = true;
  for (int64_t i = 0; i < B; ++i)
    dense &= aOff[i] == i * M * K;
  if (shared && dense && B > 1) {
    M *= B;
    B = 1;
    aOff = {0};
    bOff = {0};
  }

  // Tile sizes: shrink N, K, M (in lane multiples first) until it fits.
  int64_t mT = M, nT = N, kT = K;
  const int64_t burstCols =
      std::max<int64_t>(1, ctx.target().ddr_burst_bytes / wes);
  auto roundLanes = [&](int64_t v) { return std::max(L, v / L * L); };
  // A quantized result adds an INT8 tile at most half the accumulator's.
  const int64_t budget =
      (int64_t(ctx.lmemFree()) - 12 * 64) * (quant ? 2 : 3) / 3;
  auto fits = [&]() {
    int64_t left = ceilDiv(mT, L) * kT,
            right = rt ? ceilDiv(nT, L) * kT : ceilDiv(kT, L) * nT,
            o = ceilDiv(mT, L) * nT;
    bool oneRight = B == 1 && nT == N && kT == K;
    int64_t total = 2 * left + (oneRight ? 1 : 2) * right + 2 * o + 2 * nT;
    return total * es <= budget;
  };
  while (!fits()) {
    if (nT > 512)
      nT = wholeBursts(ceilDiv(nT, 2), burstCols);
    else if (kT > 4 * L)
      kT = roundLanes(ceilDiv(kT, 2));
    else if (mT > L)
      mT = roundLanes(ceilDiv(mT, 2));
    else if (nT > 32)
      nT = wholeBursts(ceilDiv(nT, 2), burstCols);
    else if (kT > 1)
      kT = ceilDiv(kT, 2);
    else if (mT > 1)
      mT = ceilDiv(mT, 2);
    else if (nT > 1)
      nT = wholeBursts(ceilDiv(nT, 2), burstCols);
    else
      return ctx.error() << "does not fit local memory";
  }
  // With one M and one K tile, N tiles add no DDR bytes (the left tile
  // stays) but let the right operand's loads overlap the matmuls: up to 8
  // tiles of at least 128 columns, so one tile's load is all that shows.
  if (B == 1 && mT == M && kT == K)
    nT = std::min(nT, wholeBursts(std::max<int64_t>(128, ceilDiv(N, 8)),
                                  burstCols));
  if (B == 1 && !rt) {
    // The cheapest order by DDR bytes; ties keep the default order.
    std::optional<OsTiles> best;
    int64_t bestBytes = defaultOrderBytes(M, K, N, mT, kT, nT);
    for (bool leftResident : {false, true}) {
      auto os = outputStationaryTiles(M, K, N, L, es, budget, leftResident,
                                      burstCols);
      if (os && outputStationaryBytes(M, K, N, *os) < bestBytes) {
        bestBytes = outputStationaryBytes(M, K, N, *os);
        best = os;
      }
    }
    if (best)
      return outputStationary(op, ctx, *a, *b, *out, hasBias, biasAddr, ty,
                              *ep, M, K, N, *best, epilogue);
  }
  const int64_t nM = ceilDiv(M, mT), nN = ceilDiv(N, nT), nK = ceilDiv(K, kT);
  bool oneRight = B == 1 && nN == 1 && nK == 1;

  const DType acc = nK > 1 ? wideFloat(ty.acc) : ty.acc;
  Pipeline pipe;
  enum { kLeft, kRight, kBias, kOut, kQOut };
  const uint64_t biasBytes = ctx.lmemBytes({1, 1, 1, nT}, ty.bias),
                 accBytes = ctx.lmemBytes({1, mT, 1, nT}, acc),
                 qOutBytes = ctx.lmemBytes({1, mT, 1, nT}, ty.out);
  const uint64_t afterRight = Pipeline::footprint(biasBytes, 2) +
                              Pipeline::footprint(accBytes, 2) +
                              (quant ? Pipeline::footprint(qOutBytes, 2) : 0);
  if (failed(pipe.addGroup(ctx, ctx.lmemBytes({1, mT, 1, kT}, ty.in), 2)) ||
      failed(pipe.addGroup(ctx,
                           rt ? ctx.lmemBytes({1, nT, 1, kT}, ty.weight)
                              : ctx.lmemBytes({1, kT, 1, nT}, ty.weight),
                           oneRight ? 1 : 2, kLeft, afterRight)) ||
      failed(pipe.addGroup(ctx, biasBytes, 2)) ||
      failed(pipe.addGroup(ctx, accBytes, 2)) ||
      (quant && failed(pipe.addGroup(ctx, qOutBytes, 2))))
    return failure();

  struct Step {
    int64_t b, m, n, k;
  };
  SmallVector<Step> steps;
  for (int64_t bi = 0; bi < B; ++bi)
    for (int64_t mi = 0; mi < nM; ++mi)
      for (int64_t ni = 0; ni < nN; ++ni)
        for (int64_t ki = 0; ki < nK; ++ki)
          steps.push_back({bi, mi, ni, ki});
  auto ext = [](int64_t i, int64_t t, int64_t total) {
    return std::min(t, total - i * t);
  };
  SmallVector<std::array<LBuf *, 5>> bufs(steps.size());
  // A transposed right operand's tile keeps its rows ([n, k], N on lanes),
  // read by the matmul's transposed form.
  auto rightTile = [&](uint64_t addr, int64_t k, int64_t n) {
    return rt ? lmemTensor(addr, 1, n, 1, k, ty.weight)
              : lmemTensor(addr, 1, k, 1, n, ty.weight);
  };
  auto loadStep = [&](size_t i) {
    const Step &s = steps[i];
    int64_t m = ext(s.m, mT, M), n = ext(s.n, nT, N), k = ext(s.k, kT, K);
    auto [l, newL] = pipe.acquire(kLeft, (s.b * nM + s.m) * nK + s.k);
    if (newL)
      ctx.load(*l, lmemTensor(l->addr, 1, m, 1, k, ty.in),
               ddrOperand(a->addr + (aOff[s.b] + s.m * mT * K + s.k * kT) * ies,
                          {1, m, 1, k}, {M * K, K, K, 1}, ty.in));
    int64_t rKey = bOff[s.b] / std::max<int64_t>(K * N, 1) * nN * nK +
                   s.n * nK + s.k;
    auto [r, newR] = pipe.acquire(kRight, rKey);
    if (newR)
      ctx.load(*r, rightTile(r->addr, k, n),
               rt ? ddrOperand(b->addr + (bOff[s.b] + s.n * nT * K + s.k * kT) * wes,
                               {1, n, 1, k}, {K * N, K, K, 1}, ty.weight)
                  : ddrOperand(b->addr + (bOff[s.b] + s.k * kT * N + s.n * nT) * wes,
                               {1, k, 1, n}, {K * N, N, N, 1}, ty.weight));
    auto [bb, newB] = pipe.acquire(kBias, s.n);
    if (newB && hasBias)
      ctx.load(*bb, lmemTensor(bb->addr, 1, 1, 1, n, ty.bias),
               ddrOperand(biasAddr + s.n * nT * bes, {1, 1, 1, n}, {N, N, N, 1},
                          ty.bias));
    auto [o, unused] = pipe.acquire(kOut, (s.b * nM + s.m) * nN + s.n);
    (void)unused;
    bufs[i] = {l, r, bb, o,
               quant ? pipe.acquire(kQOut, int64_t(i)).first : nullptr};
  };

  auto applyEpilogue = [&](LBuf &buf, const Operand &tile) {
    epilogue->apply(ctx, buf, tile);
  };
  StoreHook hook = epilogue ? StoreHook(applyEpilogue) : StoreHook();
  loadStep(0);
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i + 1 < steps.size())
      loadStep(i + 1);
    const Step &s = steps[i];
    int64_t m = ext(s.m, mT, M), n = ext(s.n, nT, N), k = ext(s.k, kT, K);
    auto [l, r, bb, o, qo] = bufs[i];
    bool first = s.k == 0, last = s.k == nK - 1;
    Operand outL = lmemTensor(o->addr, 1, m, 1, n, acc);
    Operand biasL;
    if (hasBias && first)
      biasL = lmemTensor(bb->addr, 1, 1, 1, n, ty.bias);
    ctx.tiu(makeMatMul(outL, lmemTensor(l->addr, 1, m, 1, k, ty.in),
                       rightTile(r->addr, k, n), biasL,
                       /*accumulate=*/!first, /*relu=*/last && op.getDoRelu(),
                       rt),
            {l, r, bb, o});
    if (!last)
      continue;
    // Output rows of batch b: folded batches are rows of M.
    uint64_t addr = out->addr + (s.b * M * N + s.m * mT * N + s.n * nT) * oes;
    storeMacResult(ctx, ty, *ep,
                   ddrOperand(addr, {1, m, 1, n}, {M * N, N, N, 1}, ty.out), *o,
                   outL, qo, nullptr, hook);
  }
  return success(!epilogue || !epilogue->broken);
}

} // namespace

namespace {

/// A matmul of a [rows, K] activation by a [K, N] weight used by it alone
/// (with a bias or none, and a per-tensor requant when INT8): the shape
/// both matmuls of a fused pair have.
bool isWeightMatMul(tpu::MatMulOp op) {
  auto b = getShape(op.getRight());
  return op && !isRowTimesWeight(op) && b.size() == 2 &&
         op.getRight().getDefiningOp<top::WeightOp>() &&
         op.getRight().hasOneUse() &&
         (isNone(op.getBias()) || op.getBias().getDefiningOp<top::WeightOp>()) &&
         (!op.getQuant() || isNone(op.getQuant()) ||
          getShape(op.getQuant()) == ArrayRef<int64_t>{1, 2});
}

/// The closing matmul of a fused pair `ops`, or null.
tpu::MatMulOp closingMatMul(ArrayRef<Operation *> ops) {
  auto mm = ops.size() < 2 ? tpu::MatMulOp()
                           : dyn_cast<tpu::MatMulOp>(ops.back());
  if (!mm || !isWeightMatMul(mm) ||
      !isWeightMatMul(cast<tpu::MatMulOp>(ops.front())) ||
      mm.getInput() != ops[ops.size() - 2]->getResult(0) ||
      !mm.getInput().hasOneUse() ||
      chipDType(mm.getInput().getType()) !=
          chipDType(mm.getOutput().getType()))
    return {};
  return mm;
}

struct PairShape {
  int64_t M, K, H, N;
  DType in, acc1, acc2, out, bias1, bias2;
  bool quant;
};

PairShape pairShape(ArrayRef<Operation *> ops) {
  auto mm1 = cast<tpu::MatMulOp>(ops.front()),
       mm2 = cast<tpu::MatMulOp>(ops.back());
  PairShape p;
  auto w1 = getShape(mm1.getRight()), w2 = getShape(mm2.getRight());
  p.K = w1[0], p.H = w1[1], p.N = w2[1];
  p.M = numElements(getShape(mm1.getInput())) / p.K;
  p.in = chipDType(mm1.getInput().getType());
  p.out = chipDType(mm2.getOutput().getType());
  p.quant = isQuantizedOp(mm1);
  p.acc1 = p.quant ? DType::INT32 : chipDType(mm1.getOutput().getType());
  p.acc2 = p.quant ? DType::INT32 : wideFloat(p.out);
  auto biasType = [&](tpu::MatMulOp op) {
    return isNone(op.getBias()) ? (p.quant ? DType::INT32 : p.out)
                                : chipDType(op.getBias().getType());
  };
  p.bias1 = biasType(mm1), p.bias2 = biasType(mm2);
  return p;
}

/// Per-lane bytes of the fused pair's buffers with chunks of `c` hidden
/// columns, as emitFusedPair allocates them.
uint64_t pairFootprint(const PairShape &p, int64_t c, const Target &t,
                       uint64_t epilogueBytes) {
  auto bytes = [&](int64_t n, int64_t ch, int64_t w, DType dt) {
    return lmemBytesPerLane(uint32_t(n), uint32_t(ch), 1, uint32_t(w), dt, 0,
                            t.lanes);
  };
  uint64_t total = epilogueBytes;
  auto add = [&](uint64_t b, unsigned slots) {
    total += slots * ((b + 63) / 64 * 64);
  };
  add(bytes(1, p.M, p.K, p.in), 1);      // the resident activation
  add(bytes(1, p.M, p.N, p.acc2), 1);    // the second matmul's sums
  add(bytes(1, 1, p.N, p.bias2), 1);     // its bias
  add(bytes(1, p.M, c, p.acc1), 1);      // a chunk of the first's result
  if (p.quant)
    add(bytes(1, p.M, c, p.in), 1);      // that chunk requantized
  add(bytes(1, p.K, c, p.in), 2);        // first weight's columns
  add(bytes(1, 1, c, p.bias1), 2);       // and their bias
  add(bytes(1, c, p.N, p.in), 2);        // second weight's rows
  if (p.quant)
    add(bytes(1, p.M, p.N, p.out), 1);   // the requantized result
  return total;
}

uint64_t epilogueWeightBytes(ArrayRef<Operation *> ops, const Target &t) {
  uint64_t total = 0;
  for (Operation *op : ops.drop_front().drop_back())
    for (unsigned i = 1; i < op->getNumOperands(); ++i) {
      Value v = op->getOperand(i);
      if (isNone(v))
        continue;
      auto s = cast<CodegenInterface>(op).localShape(i);
      if (s.size() == 4)
        total += (lmemBytesPerLane(uint32_t(s[0]), uint32_t(s[1]),
                                   uint32_t(s[2]), uint32_t(s[3]),
                                   chipDType(v.getType()), 0, t.lanes) +
                  63) / 64 * 64;
    }
  return total;
}

} // namespace

int64_t fusedPairChunk(ArrayRef<Operation *> ops, const Target &t) {
  if (!closingMatMul(ops))
    return 0;
  PairShape p = pairShape(ops);
  // At least 8 chunks, so one chunk's weight load is all that shows; the
  // widest that fits, whole lanes of the second weight's rows and whole
  // DDR bursts of each row of the first weight's columns.
  const uint64_t epi = epilogueWeightBytes(ops, t);
  const int64_t burst = std::max<int64_t>(1, t.ddr_burst_bytes / dtypeSize(p.in));
  const int64_t step = std::lcm<int64_t>(t.lanes, burst);
  for (int64_t c = std::min<int64_t>(256, p.H / 8) / step * step; c >= step;
       c -= step)
    if (p.H % c == 0 && pairFootprint(p, c, t, epi) <= t.lmem_bytes_per_lane)
      return c;
  return 0;
}

namespace {

/// A fused pair (see the header): out = chain(x W1 + b1) W2 + b2 with the
/// hidden columns in chunks of c. x and the [M, N] sums stay in LMEM; each
/// chunk loads its columns of W1 and rows of W2 (two slots each, so the
/// next chunk's loads overlap this one's compute), computes its [M, c]
/// slice of the first result, applies the chain in place and adds its
/// product with the W2 rows to the sums. Each weight is read once and the
/// hidden result never reaches DDR.
LogicalResult emitFusedPair(CodegenContext &ctx, ArrayRef<Operation *> ops) {
  auto mm1 = cast<tpu::MatMulOp>(ops.front()),
       mm2 = cast<tpu::MatMulOp>(ops.back());
  const PairShape p = pairShape(ops);
  const int64_t c = fusedPairChunk(ops, ctx.target());
  if (c == 0)
    return ctx.error() << "fused matmul pair does not fit local memory";
  auto ty1 = macTypes(ctx, mm1, mm1.getRight(), mm1.getBias()),
       ty2 = macTypes(ctx, mm2, mm2.getRight(), mm2.getBias());
  if (failed(ty1) || failed(ty2))
    return failure();
  auto ep1 = macEpilogue(ctx, mm1, mm1.getQuant(), *ty1),
       ep2 = macEpilogue(ctx, mm2, mm2.getQuant(), *ty2);
  if (failed(ep1) || failed(ep2))
    return failure();
  if (ep1->table || ep2->table)
    return ctx.error() << "INT8 matmul needs a per-tensor [1, 2] quant operand";
  auto x = getTensor(ctx, mm1.getInput()), w1 = getTensor(ctx, mm1.getRight()),
       w2 = getTensor(ctx, mm2.getRight()),
       out = getTensor(ctx, mm2.getOutput());
  if (failed(x) || failed(w1) || failed(w2) || failed(out))
    return failure();
  std::optional<uint64_t> b1, b2;
  for (auto [op, addr] : {std::pair{mm1, &b1}, std::pair{mm2, &b2}}) {
    if (isNone(op.getBias()))
      continue;
    auto t = getTensor(ctx, op.getBias());
    if (failed(t))
      return failure();
    *addr = t->addr;
  }
  TileEpilogue chain;
  chain.ops.assign(ops.begin() + 1, ops.end() - 1);
  if (failed(chain.load(ctx)))
    return failure();

  const int64_t M = p.M, K = p.K, H = p.H, N = p.N, nC = H / c;
  const int64_t es = dtypeSize(p.in);
  Pipeline pipe;
  // INT8 adds kHq, the chunk requantized (the second matmul's left).
  enum { kX, kAcc, kB2, kH, kW1, kB1, kW2, kHq };
  // The weights' slots start in other banks than the activation they meet
  // where the buffers after them still fit.
  const uint64_t b1Bytes = ctx.lmemBytes({1, 1, 1, c}, p.bias1),
                 w2Bytes = ctx.lmemBytes({1, c, 1, N}, p.in),
                 hqBytes = ctx.lmemBytes({1, M, 1, c}, p.in),
                 qBytes = ctx.lmemBytes({1, M, 1, N}, p.out),
                 quantBytes = p.quant ? hqBytes + qBytes + 128 : 0;
  const uint64_t afterW1 = 2 * ((b1Bytes + 63) / 64 * 64) +
                           2 * ((w2Bytes + 63) / 64 * 64) + quantBytes;
  if (failed(pipe.addGroup(ctx, ctx.lmemBytes({1, M, 1, K}, p.in), 1)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, M, 1, N}, p.acc2), 1)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, 1, 1, N}, p.bias2), 1)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, M, 1, c}, p.acc1), 1)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, K, 1, c}, p.in), 2, kX,
                           afterW1)) ||
      failed(pipe.addGroup(ctx, b1Bytes, 2)) ||
      failed(pipe.addGroup(ctx, w2Bytes, 2, kH, quantBytes)) ||
      (p.quant && failed(pipe.addGroup(ctx, hqBytes, 1, kW2, qBytes + 64))))
    return failure();
  // INT8: the requantized result.
  std::optional<LBuf> q;
  if (p.quant && !(q = ctx.alloc(qBytes)))
    return ctx.error() << "fused matmul pair does not fit local memory";
  LBuf *hq = p.quant ? pipe.acquire(kHq, 0).first : nullptr;
  LBuf *xb = pipe.acquire(kX, 0).first, *acc = pipe.acquire(kAcc, 0).first,
       *b2b = pipe.acquire(kB2, 0).first, *hb = pipe.acquire(kH, 0).first;
  ctx.load(*xb, lmemTensor(xb->addr, 1, M, 1, K, p.in),
           ddrOperand(x->addr, {1, M, 1, K}, {M * K, K, K, 1}, p.in));
  SmallVector<std::array<LBuf *, 3>> bufs(nC);
  auto loadChunk = [&](int64_t j) {
    LBuf *w = pipe.acquire(kW1, j).first, *bb = pipe.acquire(kB1, j).first,
         *r = pipe.acquire(kW2, j).first;
    ctx.load(*w, lmemTensor(w->addr, 1, K, 1, c, p.in),
             ddrOperand(w1->addr + j * c * es, {1, K, 1, c}, {K * H, H, H, 1},
                        p.in));
    if (b1)
      ctx.load(*bb, lmemTensor(bb->addr, 1, 1, 1, c, p.bias1),
               ddrOperand(*b1 + j * c * dtypeSize(p.bias1), {1, 1, 1, c},
                          {H, H, H, 1}, p.bias1));
    if (j == 0 && b2)
      ctx.load(*b2b, lmemTensor(b2b->addr, 1, 1, 1, N, p.bias2),
               ddrOperand(*b2, {1, 1, 1, N}, {N, N, N, 1}, p.bias2));
    ctx.load(*r, lmemTensor(r->addr, 1, c, 1, N, p.in),
             ddrOperand(w2->addr + j * c * N * es, {1, c, 1, N},
                        {H * N, N, N, 1}, p.in));
    bufs[j] = {w, bb, r};
  };
  const Operand xL = lmemTensor(xb->addr, 1, M, 1, K, p.in),
                hL = lmemTensor(hb->addr, 1, M, 1, c, p.acc1),
                accL = lmemTensor(acc->addr, 1, M, 1, N, p.acc2);
  loadChunk(0);
  for (int64_t j = 0; j < nC; ++j) {
    if (j + 1 < nC)
      loadChunk(j + 1);
    auto [w, bb, r] = bufs[j];
    Operand bias1 = b1 ? lmemTensor(bb->addr, 1, 1, 1, c, p.bias1) : Operand();
    ctx.tiu(makeMatMul(hL, xL, lmemTensor(w->addr, 1, K, 1, c, p.in), bias1,
                       /*accumulate=*/false, mm1.getDoRelu()),
            {xb, w, bb, hb});
    LBuf *left = hb;
    Operand leftL = hL;
    if (p.quant) {
      left = hq;
      leftL = lmemTensor(hq->addr, 1, M, 1, c, p.in);
      emitRequant([&](const Instruction &i) { return ctx.tiu(i, {hb, left}); },
                  leftL, hL, ep1->rq);
    }
    chain.apply(ctx, *left, leftL);
    Operand bias2 = b2 && j == 0 ? lmemTensor(b2b->addr, 1, 1, 1, N, p.bias2)
                                 : Operand();
    ctx.tiu(makeMatMul(accL, leftL, lmemTensor(r->addr, 1, c, 1, N, p.in),
                       bias2, /*accumulate=*/j > 0,
                       /*relu=*/j == nC - 1 && mm2.getDoRelu()),
            {left, r, b2b, acc});
  }
  storeMacResult(ctx, *ty2, *ep2,
                 ddrOperand(out->addr, {1, M, 1, N}, {M * N, N, N, 1}, p.out),
                 *acc, accL, q ? &*q : nullptr);
  return success(!chain.broken);
}

} // namespace

void attachMatMulModels(MLIRContext *ctx) {
  tpu::MatMulOp::attachInterface<MatMulModel>(*ctx);
}

} // namespace backend
} // namespace tpuc
