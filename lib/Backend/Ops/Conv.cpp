//===- Conv.cpp - Convolution ---------------------------------------------===//
//
// Weight layout: the blob stores an OIHW filter as [IC/groups, OC, KH, KW]
// (the conv instruction's operand), so the filter slice of an output-channel
// tile is one strided load with runs of the tile's windows per input
// channel. A dense conv running its own tiled code stores it in blocks of
// `lanes` output channels instead, each block's [IC, block, KH, KW]
// contiguous (filterBlock), so a tile loads one dense run per block. A
// filter computed at run time (a trained parameter fed as an input) stays
// OIHW in DDR; its load swaps the two outer strides, so the same local tile
// results.
//
// Tiling: output channels in tiles that are whole groups (or part of one
// group), output rows in tiles whose input rows include the halo (the tile's
// own top/bottom pads are the part of the halo outside the image), batches
// stacked when whole images fit. Among the tile sizes that fit LMEM with
// double buffering, the one with the least estimated time (DDR traffic vs
// TIU work, plus per-instruction overhead and the first step's loads, which
// the TIU waits for) wins, and the loop order (output
// channels or spatial tiles outermost) is the one moving fewer bytes; a
// buffer is only reloaded when its tile changes.
//
// The first step, which the TIU waits for from a cold start, loads its
// input tile in pieces of rows and runs its conv in bands of output rows,
// each waiting only for the pieces its windows read, when the conv is
// estimated compute-bound, or of one or two steps and compute-bound once
// the first step's loads are in (a DDR-bound conv gains nothing from an
// early TIU start and pays each piece's request).
//
// A tile prologue (a folded BatchNorm and ReLU whose result only the conv
// reads) runs in place on each input tile after its load, with its scale
// and bias loaded per input-channel range: the image it normalizes never
// goes through DDR, and the pad rows keep the pad value.
//
// When even one output channel's filter does not fit, the input channels are
// split into slices (innermost loop) whose partial sums accumulate in the
// output tile (conv accumulate flag): bias with the first slice, relu and
// the relu limit after the last.
//
// In a tile epilogue group (Epilogue.h) each finished output tile (after
// the requant in INT8) goes through the ops after the conv before its
// store: a residual Add reads its other operand's tile, loaded next to the
// output tile (double-buffered), so neither the conv's result nor the
// Add's own pass over DDR exists.
//
//===----------------------------------------------------------------------===//
#include "ConvTiling.h"
#include "Epilogue.h"
#include "tpuc/Backend/LayerGroup.h"
#include "tpuc/Chip/CModel.h"

using namespace mlir;
using namespace tpuc::chip;

namespace tpuc {
namespace backend {
namespace {

/// The first step's conv runs in at most this many bands of output rows
/// (see emitConv).
constexpr int64_t kFirstStepBands = 8;

LogicalResult emitConv(tpu::ConvOp op, CodegenContext &ctx,
                       TileEpilogue *tileEp, tpu::ConvOp prologue = {});

/// The one value of the filter of a 1x1 conv to one channel (unstrided,
/// unpadded) whose filter values are all equal: the conv is that value
/// times the sum of its input's channels, plus its bias.
static std::optional<float> equalWeight(tpu::ConvOp op) {
  auto f = getShape(op.getFilter());
  if (f.size() != 4 || f[0] != 1 || f[2] != 1 || f[3] != 1 ||
      op.getGroup() != 1 ||
      llvm::any_of(getI64s(op.getStrides()), [](int64_t x) { return x != 1; }) ||
      llvm::any_of(getI64s(op.getPads()), [](int64_t x) { return x != 0; }) ||
      !op.getFilter().getDefiningOp<top::WeightOp>())
    return std::nullopt;
  auto w = op.getFilter().getDefiningOp<top::WeightOp>().read();
  if (failed(w) || (*w)->empty() ||
      llvm::any_of(**w, [&](float x) { return x != (*w)->front(); }))
    return std::nullopt;
  return (*w)->front();
}

/// channelSum's INT8 counterpart: the INT8 filter value of such a conv,
/// whose INT32 accumulator is then the sum across the lanes times it plus
/// the bias (exact integer arithmetic: equal to the conv's), requantized.
static std::optional<float> int8ChannelSum(tpu::ConvOp op) {
  if (!isQuantizedOp(op) ||
      chipDType(op.getInput().getType()) != DType::INT8)
    return std::nullopt;
  return equalWeight(op);
}

/// A float 1x1 conv to one channel whose weights are all equal (a mean
/// over the channels: LayerNorm over C becomes one) as a sum across the
/// lanes, then the weight and the bias as scalars: (weight, bias). As a
/// conv it would run on one lane.
std::optional<std::pair<float, float>> channelSum(tpu::ConvOp op) {
  if (!isF32(op.getInput()) || !isF32(op.getOutput()) ||
      (!isNone(op.getBias()) && !op.getBias().getDefiningOp<top::WeightOp>()))
    return std::nullopt;
  auto w = equalWeight(op);
  if (!w)
    return std::nullopt;
  float bias = 0;
  if (!isNone(op.getBias())) {
    auto b = op.getBias().getDefiningOp<top::WeightOp>().read();
    if (failed(b) || (*b)->size() != 1)
      return std::nullopt;
    bias = (*b)->front();
  }
  return std::make_pair(*w, bias);
}

/// Passes folding k partial sums in halves onto the first of them.
static int64_t halvings(int64_t k) {
  int64_t n = 0;
  for (; k > 1; k = (k + 1) / 2)
    ++n;
  return n;
}

/// A dense F32 conv whose output channels fill at most half of the lanes
/// leaves the others idle, while the TIU charges a pass over all of them.
/// In a group it computes on `k` times as many lanes instead: one grouped
/// conv puts on lane range j the partial sums over the j-th k-th of the
/// input channels (its filter rows moved onto those lanes). With `moves`
/// the partial sums then fold onto the first lanes in halves: the GDMA
/// moves the upper half down (LMEM to LMEM) and the TIU adds, a pass over
/// the result per halving and one for the bias, worth it when the conv's
/// saved work per output is at least twice those passes and the moves
/// (slow next to the TIU: tpu_pro's GDMA moves 4 bytes per lane and
/// cycle, the TIU adds 16 floats). Otherwise a 1x1 conv by a 0/1 filter
/// adds them (a conv reads across the lanes), k OC MACs per output, worth
/// it when the conv's work per output dwarfs that. A single image (no
/// slices of the batch, so the filter is laid out once) and a filter of
/// its own, which the layout overwrites.
static int64_t laneSplit(tpu::ConvOp op, const Target &t, bool moves) {
  auto f = getShape(op.getFilter()); // [OC, IC, KH, KW]
  auto out = getShape(op.getOutput());
  if (f.size() != 4 || out.size() != 4 || out[0] != 1 || op.getGroup() != 1 ||
      isQuantizedOp(op) || !op.getFilter().hasOneUse() ||
      chipDType(op.getOutput().getType()) != DType::F32 || out[2] * out[3] < 64)
    return 1;
  const int64_t oc = f[0], ic = f[1], kk = f[2] * f[3];
  if (oc < 2) // a channel sum may be a reduce across the lanes (channelSum)
    return 1;
  if (!moves) {
    int64_t k = std::min<int64_t>(int64_t(t.lanes) / oc, 4);
    while (k > 1 && ic % k != 0)
      --k;
    // Saved MACs per output, (1 - 1/k) IC KH KW, against 8 times the sum's
    // k OC (the moves and the scratch tensor cost the GDMA and local memory
    // besides; the sum's filter fits in the rows moved away).
    if (k < 2 || ic * kk * (k - 1) < 8 * k * k * oc)
      return 1;
    return k;
  }
  // Per output position: the TIU cycles saved against the passes and the
  // moves of k - 1 partial sums of OC channels, which the adds wait for.
  // The most cycles saved wins.
  const double eu = t.euFor(DType::F32);
  int64_t best = 1;
  double bestGain = 0;
  for (int64_t k = 2; k <= 4 && k * oc <= int64_t(t.lanes); ++k) {
    if (ic % k != 0)
      continue;
    double saved = double(ic * kk * (k - 1)) / double(k) / eu;
    double spent = double(halvings(k) + 1) / eu +
                   double((k - 1) * oc * 4) / t.gdma_lmem_bytes_per_cycle;
    if (saved >= 2 * spent && saved - spent > bestGain)
      best = k, bestGain = saved - spent;
  }
  return best;
}

/// The output-channel block of the blob layout of `op`'s filter
/// (filterBlobIndex), 0 for the plain [IC/g, OC, KH, KW]. The op's own
/// tiled code (emitConv: outside a layer group, or heading a tile epilogue
/// group) loads tiles of whole lane counts of output channels (or a part of
/// one): in the plain layout each input channel is a run of the tile's
/// windows, whose last DDR burst is partly wasted (16 channels of 3x3 int8
/// windows are 144 bytes in three 64-byte bursts), while blocks of `lanes`
/// channels make a tile one run per block. A layer group loads the whole
/// filter, plain.
static int64_t filterBlock(tpu::ConvOp op, int64_t lanes) {
  auto f = getShape(op.getFilter());
  if (op.getGroup() != 1 || f.size() != 4 || f[0] <= lanes ||
      !op.getFilter().getDefiningOp<top::WeightOp>())
    return 0;
  if (auto g = op->getParentOfType<tpu::GroupOp>()) {
    SmallVector<Operation *> ops = g.getMembers();
    if (!g.getTileEpilogue() || ops.size() < 2 ||
        ops[hasTilePrologue(ops) ? 1 : 0] != op.getOperation())
      return 0;
  }
  return lanes;
}

struct ConvModel
    : public CodegenInterface::ExternalModel<ConvModel, tpu::ConvOp> {
  unsigned localLaneParts(Operation *op, const Target &target,
                          bool moves) const {
    return unsigned(laneSplit(cast<tpu::ConvOp>(op), target, moves));
  }

  /// A channel sum reduces its input's lane rows, then a tree across the
  /// lanes, and scales, biases and clamps its one-lane result (as
  /// codegenLocal emits it); a conv to one channel would run on one lane.
  int64_t localLaneWork(Operation *op, unsigned lanes) const {
    auto conv = cast<tpu::ConvOp>(op);
    auto in = getShape(conv.getInput());
    auto sum = channelSum(conv);
    if (!sum || in.size() != 4)
      return 0;
    const int64_t plane = in[0] * in[2] * in[3];
    const int64_t passes = int64_t(sum->first != 1.f) +
                           int64_t(sum->second != 0.f) +
                           int64_t(conv.getDoRelu()) +
                           int64_t(conv.getDoRelu() &&
                                   conv.getReluLimit().convertToDouble() >= 0);
    return (in[1] + lanes - 1) / lanes * plane + lanes + passes * plane;
  }

  LogicalResult layoutWeight(Operation *op, unsigned index,
                             std::vector<int64_t> &data,
                             const chip::Target &target) const {
    if (index != 1)
      return success();
    auto f = getShape(op->getOperand(1)); // [OC, IC/g, KH, KW]
    int64_t oc = f[0], icg = f[1], k = f[2] * f[3];
    const int64_t block = filterBlock(cast<tpu::ConvOp>(op), target.lanes);
    std::vector<int64_t> out(data.size());
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t i = 0; i < icg; ++i)
        std::copy_n(&data[(o * icg + i) * k], k,
                    &out[filterBlobIndex(o, i, 0, oc, icg, k, block)]);
    data = std::move(out);
    return success();
  }

  int64_t getMacs(Operation *op) const {
    auto f = getShape(op->getOperand(1));
    auto o = getShape(op->getResult(0));
    return numElements(o) * f[1] * f[2] * f[3];
  }

  LogicalResult codegen(Operation *op, CodegenContext &ctx) const {
    return emitConv(cast<tpu::ConvOp>(op), ctx, nullptr);
  }

  /// A float conv whose input is a folded BatchNorm (and relu) with no
  /// other user: the per-channel scale, bias and relu run in place on
  /// each input tile after its load (as a depthwise 1x1 conv), before the
  /// tile is read, so the BatchNorm's result never goes through DDR.
  bool takesTilePrologue(Operation *op, Operation *prologue) const {
    auto conv = cast<tpu::ConvOp>(op);
    auto pre = dyn_cast<tpu::ConvOp>(prologue);
    return pre && conv.getInput() == pre.getOutput() &&
           pre.getOutput().hasOneUse() && localInPlace(pre, 0) &&
           supportsLocal(pre) && supportsLocal(op) && !isQuantizedOp(op) &&
           chipDType(pre.getInput().getType()) ==
               chipDType(pre.getOutput().getType()) &&
           isFloat(chipDType(conv.getOutput().getType()));
  }

  /// Elementwise ops on an F32 or INT8 result (F16/BF16 may accumulate
  /// in F32 tiles), with weights or residual tiles as other operands.
  bool takesTileEpilogue(Operation *op, ArrayRef<Operation *> epilogue) const {
    DType out = chipDType(op->getResult(0).getType());
    return (out == DType::F32 || (out == DType::INT8 && localQuantized(op))) &&
           isElementwiseEpilogue(op, epilogue, /*allowResiduals=*/true);
  }
  LogicalResult codegenTileEpilogue(Operation *op, CodegenContext &ctx,
                                    Operation *prologue,
                                    ArrayRef<Operation *> ops) const {
    TileEpilogue epilogue;
    if (!ops.empty() && failed(epilogue.init(ctx, ops)))
      return failure();
    return emitConv(cast<tpu::ConvOp>(op), ctx,
                    ops.empty() ? nullptr : &epilogue,
                    dyn_cast_or_null<tpu::ConvOp>(prologue));
  }

  bool supportsLocal(Operation *op) const {
    auto conv = cast<tpu::ConvOp>(op);
    auto isWeight = [](Value v) {
      return isNone(v) || v.getDefiningOp<top::WeightOp>();
    };
    return conv.getFilter().getDefiningOp<top::WeightOp>() &&
           getShape(conv.getFilter()).size() == 4 &&
           getShape(conv.getInput()).size() == 4 && isWeight(conv.getBias()) &&
           isWeight(conv.getQuant());
  }

  /// A 1x1 depthwise float conv (a folded BatchNorm: a scale and a bias
  /// per channel) reads only its result's own element of the input.
  bool localInPlace(Operation *op, unsigned index) const {
    auto conv = cast<tpu::ConvOp>(op);
    auto f = getShape(conv.getFilter());
    auto in = getShape(conv.getInput());
    return index == 0 && in.size() == 4 && f.size() == 4 && f[1] == 1 &&
           f[2] == 1 && f[3] == 1 && conv.getGroup() == in[1] &&
           f[0] == in[1] && getShape(conv.getOutput()) == in &&
           llvm::all_of(getI64s(conv.getPads()), [](int64_t p) { return p == 0; }) &&
           isFloat(chipDType(conv.getOutput().getType()));
  }

  /// A dense float conv: output channel c reads filter channel c and bias
  /// c only (INT8's requant table would need its own channel view too).
  bool localChannelRuns(Operation *op) const {
    auto conv = cast<tpu::ConvOp>(op);
    return conv.getGroup() == 1 &&
           isFloat(chipDType(conv.getOutput().getType()));
  }

  /// INT8 x INT8 into an INT32 accumulator (+ INT32 bias), requantized by
  /// a per-tensor or per-channel table.
  bool localQuantized(Operation *op) const {
    auto conv = cast<tpu::ConvOp>(op);
    auto is = [](Value v, DType t) { return chipDType(v.getType()) == t; };
    return is(conv.getInput(), DType::INT8) &&
           is(conv.getFilter(), DType::INT8) &&
           is(conv.getOutput(), DType::INT8) &&
           (isNone(conv.getBias()) || is(conv.getBias(), DType::INT32)) &&
           !isNone(conv.getQuant()) && is(conv.getQuant(), DType::INT32);
  }
  unsigned localTemps(Operation *op) const { return isQuantizedOp(op); }
  Type localTempType(Operation *op, unsigned) const {
    return IntegerType::get(op->getContext(), 32);
  }

  SmallVector<int64_t, 4> localShape(Operation *op, unsigned index) const {
    auto f = getShape(op->getOperand(1)); // [OC, IC/g, KH, KW]
    if (index == 1) // the blob's [IC/g, OC, KH, KW] (layoutWeight)
      return {f[1], f[0], f[2], f[3]};
    if (index == 2)
      return {1, f[0], 1, 1};
    if (index == 3) // requant (multiplier, shift) rows: per tensor or channel
      return {1, getShape(op->getOperand(3))[0], 1, 2};
    return {};
  }

  /// The input rows of the output rows' windows (the filter's halo).
  bool localInputRows(Operation *op, unsigned index, int64_t lo, int64_t hi,
                      int64_t &inLo, int64_t &inHi) const {
    if (index != 0)
      return false;
    WindowRows r = rowsOf(cast<tpu::ConvOp>(op), lo, hi);
    inLo = r.lo, inHi = r.hi;
    return true;
  }

  static WindowRows rowsOf(tpu::ConvOp op, int64_t lo, int64_t hi) {
    auto s = getI64s(op.getStrides()), d = getI64s(op.getDilations()),
         pads = getI64s(op.getPads());
    return windowRows(lo, hi, getShape(op.getInput())[2],
                      getShape(op.getFilter())[2], s[0], d[0], pads[0]);
  }

  /// The sum's [k OC, OC, 1, 1] filter of a conv on k lane ranges added by
  /// a conv (laneSplit): in the filter buffer over the rows moved away, 1
  /// where the input channel % OC is the output channel.
  static Operand sumFilter(const Operand &filter, int64_t k) {
    const uint32_t oc = filter.shape[1], icPart = filter.shape[0] / uint32_t(k);
    const uint64_t rowBytes = uint64_t(filter.stride[0]) * dtypeSize(filter.dtype);
    return lmemTensor(filter.addr + icPart * rowBytes, uint32_t(k) * oc, oc, 1, 1,
                      filter.dtype);
  }

  /// Right behind the filter's load: the rows of input-channel part j
  /// move to lanes [j OC, (j+1) OC) of the filter's own buffer (each lane
  /// has room: it holds all IC rows there), and a sum conv's filter is
  /// zeroed (codegenLocal adds its ones).
  void codegenLocalWeightLayout(Operation *op, CodegenContext &ctx, unsigned index,
                                LBuf &buf, const Operand &filter,
                                LaneSplit lanes) const {
    const int64_t k = lanes.parts;
    if (index != 1 || k < 2)
      return;
    const uint32_t oc = filter.shape[1], icPart = filter.shape[0] / uint32_t(k);
    const uint64_t rowBytes = uint64_t(filter.stride[0]) * dtypeSize(filter.dtype);
    for (int64_t j = 1; j < k; ++j) {
      Operand from = filter, to = filter;
      from.shape[0] = to.shape[0] = icPart;
      from.addr += uint64_t(j) * icPart * rowBytes;
      to.start_lane = uint16_t(uint32_t(j) * oc);
      ctx.moveLocal(buf, to, buf, from);
    }
    if (!lanes.moves)
      ctx.fillLocal(buf, sumFilter(filter, k), 0.0);
  }

  /// The conv of `t` on k lane ranges (laneSplit), its filter laid out by
  /// codegenLocalWeightLayout: one grouped conv writes the k partial sums
  /// into the scratch tensor. With moves, while more than one is left, the
  /// GDMA moves the upper half of them onto the first lanes of the result's
  /// buffer and the TIU adds them to the lower half (the last addition
  /// into the result); then the bias and relu. Otherwise, before the first
  /// rows, the TIU adds the sum filter's ones lane by lane in place (no
  /// GDMA waits for them), and the 1x1 sum conv adds the partial sums with
  /// the bias and relu.
  static void emitLaneSplit(CodegenContext &ctx, LocalOperands &t,
                            chip::ConvParams cp) {
    const int64_t k = t.lanes.parts;
    const Operand &out = t.result.lmem;
    LocalTensor &fl = t.operands[1];
    const uint32_t oc = out.shape[1];
    Operand ones = sumFilter(fl.lmem, k);
    if (!t.lanes.moves && (!t.rows || t.rows->first == 0)) {
      LBuf *b = fl.buf;
      for (uint32_t o = 0; o < oc; ++o) {
        Operand one = ones;
        one.addr += o * dtypeSize(ones.dtype);
        one.shape[0] = uint32_t(k);
        one.shape[1] = 1;
        one.stride[0] = int32_t(oc);
        one.start_lane = uint16_t(o);
        ctx.tiu(makeBinaryScalar(BinaryOp::Add, one, one, 1.0), {b});
      }
    }
    Operand filter = fl.lmem;
    filter.shape[0] /= uint32_t(k);
    filter.shape[1] = oc * uint32_t(k);
    Operand sums = t.temps.back().lmem;
    sums.shape[1] = oc * uint32_t(k);
    const bool relu = cp.relu;
    cp.groups = int(k);
    cp.relu = false;
    t.emit(makeConv(sums, t.operands[0].lmem, filter, Operand(), cp));
    const bool hasBias = t.operands[2].buf;
    if (!t.lanes.moves) {
      chip::ConvParams one;
      one.relu = relu;
      t.emit(makeConv(out, sums, ones, hasBias ? t.operands[2].lmem : Operand(),
                      one));
      return;
    }
    LBuf &sumBuf = *t.temps.back().buf, &outBuf = *t.result.buf;
    for (uint32_t m = uint32_t(k); m > 1;) {
      const uint32_t keep = (m + 1) / 2, moved = m - keep;
      Operand from = sums, to = out, lower = sums;
      from.shape[1] = to.shape[1] = lower.shape[1] = moved * oc;
      from.start_lane = uint16_t(sums.start_lane + keep * oc);
      ctx.moveLocal(outBuf, to, sumBuf, from);
      m = keep;
      const bool last = m == 1;
      t.emit(makeBinary(BinaryOp::Add, last ? out : lower, lower, to,
                        last && relu && !hasBias));
    }
    if (hasBias)
      t.emit(makeBinary(BinaryOp::Add, out, out, t.operands[2].lmem, relu));
  }

  LogicalResult codegenLocal(Operation *operation, CodegenContext &ctx,
                             LocalOperands &t) const {
    auto op = cast<tpu::ConvOp>(operation);
    auto s = getI64s(op.getStrides()), d = getI64s(op.getDilations()),
         pads = getI64s(op.getPads());
    chip::ConvParams cp;
    cp.stride_h = int(s[0]), cp.stride_w = int(s[1]);
    cp.dilation_h = int(d[0]), cp.dilation_w = int(d[1]);
    cp.pad_top = int(pads[0]), cp.pad_left = int(pads[1]);
    cp.pad_bottom = int(pads[2]), cp.pad_right = int(pads[3]);
    if (t.rows) {
      WindowRows r = rowsOf(op, t.rows->first, t.rows->second);
      cp.pad_top = int(r.padTop), cp.pad_bottom = int(r.padBottom);
    }
    cp.groups = int(op.getGroup());
    cp.pad_value = inputZeroPoint(op);
    cp.relu = op.getDoRelu();
    Operand bias = t.operands[2].buf ? t.operands[2].lmem : Operand();
    const Operand &out = t.result.lmem;
    if (isQuantizedOp(op)) {
      // The INT8 relu limit is in the result's type already.
      const Operand &acc = t.temps[0].lmem;
      Instruction conv =
          makeConv(acc, t.operands[0].lmem, t.operands[1].lmem, bias, cp);
      // A sum across the lanes where that takes fewer cycles than the conv
      // on one lane (an INT8 conv reads many channels per cycle).
      SmallVector<Instruction, 3> sum;
      if (auto w = int8ChannelSum(op)) {
        sum.push_back(makeReduce(chip::ReduceMode::Sum, acc, t.operands[0].lmem, 1));
        if (*w != 1.f)
          sum.push_back(makeBinaryScalar(BinaryOp::Mul, acc, acc, *w));
        if (t.operands[2].buf)
          sum.push_back(makeBinary(BinaryOp::Add, acc, acc, bias));
      }
      uint64_t sumCycles = 0;
      for (const Instruction &i : sum)
        sumCycles += chip::instructionCycles(i, ctx.target());
      if (!sum.empty() &&
          sumCycles < chip::instructionCycles(conv, ctx.target()))
        for (const Instruction &i : sum)
          t.emit(i);
      else
        t.emit(conv);
      Requant rq;
      rq.zp = resultZeroPoint(op);
      const Operand &table = t.operands[3].lmem;
      if (table.shape[1] > 1) {
        emitRequant([&](const Instruction &i) { return t.emit(i); }, out, acc,
                    rq, &table);
        return success();
      }
      auto m = ctx.intConstant(op.getQuant());
      if (failed(m))
        return failure();
      rq.multiplier = int32_t((*m)[0]);
      rq.shift = int((*m)[1]);
      emitRequant([&](const Instruction &i) { return t.emit(i); }, out, acc, rq);
      return success();
    }
    if (t.lanes.parts > 1) {
      emitLaneSplit(ctx, t, cp);
    } else if (auto sum = channelSum(op)) {
      auto [w, b] = *sum;
      t.emit(makeReduce(chip::ReduceMode::Sum, out, t.operands[0].lmem, 1));
      if (w != 1.f)
        t.emit(makeBinaryScalar(chip::BinaryOp::Mul, out, out, w));
      if (b != 0.f)
        t.emit(makeBinaryScalar(chip::BinaryOp::Add, out, out, b));
      if (cp.relu)
        t.emit(makeBinaryScalar(chip::BinaryOp::Max, out, out, 0.0));
    } else {
      t.emit(makeConv(out, t.operands[0].lmem, t.operands[1].lmem, bias, cp));
    }
    double limit = op.getReluLimit().convertToDouble();
    if (op.getDoRelu() && limit >= 0)
      t.emit(makeBinaryScalar(BinaryOp::Min, out, out, limit));
    return success();
  }
};

LogicalResult emitConv(tpu::ConvOp op, CodegenContext &ctx,
                       TileEpilogue *tileEp, tpu::ConvOp prologue) {
  auto operands = getConvOperands(
      op, ctx,
      tileEp ? std::optional<uint64_t>(tileEp->outAddr) : std::nullopt,
      prologue ? prologue.getInput() : Value());
  if (failed(operands))
    return failure();
  // The prologue's per-channel scale and bias, loaded per input-channel
  // range of the tiles.
  std::optional<Tensor> proScale, proBias;
  if (prologue) {
    auto sc = getTensor(ctx, prologue.getFilter());
    if (failed(sc))
      return failure();
    proScale = *sc;
    if (!isNone(prologue.getBias())) {
      auto b = getTensor(ctx, prologue.getBias());
      if (failed(b))
        return failure();
      proBias = *b;
    }
  }
  // The epilogue's weights load first; its residual and scratch tiles
  // share the output tile's shape.
  if (tileEp && failed(tileEp->load(ctx)))
    return failure();
  const int64_t epBytes = tileEp ? tileEp->bytesPerElement(1) : 0,
                epBufs = tileEp ? 2 * tileEp->residuals.size() + tileEp->temps
                                : 0;
  const MacTypes types = operands->types;
  const Tensor *in = &operands->in, *fl = &operands->filter,
               *out = &operands->out;
  auto epilogue = macEpilogue(ctx, op.getQuant(), types);
  if (failed(epilogue))
    return failure();
  std::optional<uint64_t> bias = operands->bias;
  bool hasBias = bias.has_value();
  const int64_t N = in->shape[0], IC = in->shape[1], H = in->shape[2],
                W = in->shape[3];
  const int64_t OC = fl->shape[0], ICg = fl->shape[1], KH = fl->shape[2],
                KW = fl->shape[3];
  const int64_t OH = out->shape[2], OW = out->shape[3];
  auto s = getI64s(op.getStrides()), d = getI64s(op.getDilations()),
       pads = getI64s(op.getPads());
  const int64_t sh = s[0], dh = d[0], pt = pads[0];
  const int64_t G = op.getGroup();
  const int64_t L = ctx.lanes(), ies = dtypeSize(types.in),
                wes = dtypeSize(types.weight), bes = dtypeSize(types.bias),
                oes = dtypeSize(types.out);
  // Slices accumulate in the output tile: F16/BF16 partial sums stay F32.
  auto accType = [&](bool split) {
    return split ? wideFloat(types.acc) : types.acc;
  };
  // A quantized result needs a tile of its own next to the accumulator.
  const bool quant = types.quantized();
  const int64_t LB = ctx.lmemFree();
  const Target &tg = ctx.target();
  // A 1x1 conv striding over rows (a ResNet downsample) reads only every
  // sh-th row when that moves fewer DDR bursts than the rows it spans: the
  // loads skip the others (a strided DDR view), and the conv runs with row
  // stride 1 on the rows loaded.
  const int64_t burst = std::max<int64_t>(1, tg.ddr_burst_bytes);
  const bool skipRows =
      KH == 1 && sh > 1 && pt == 0 && pads[2] == 0 &&
      OH * ceilDiv(W * ies, burst) <
          ceilDiv(((OH - 1) * sh + 1) * W * ies, burst);

  auto ocTiles = [&](int64_t ocT) { return makeOcTiles(OC, IC, G, ocT); };
  const int64_t block = operands->filterInBlob ? filterBlock(op, L) : 0;
  auto rowsFor = [&](int64_t ohT) {
    if (skipRows)
      return ohT;
    return std::min((ohT - 1) * sh + dh * (KH - 1) + 1, H);
  };

  // Choose tile sizes; input-channel slices of icT only when whole filters
  // do not fit.
  struct Plan {
    int64_t ocT = 0, nT = 0, ohT = 0;
    unsigned wSlots = 2, inSlots = 2;
    bool ocOuter = true;
    double cost = 0;
    // The first step's conv runs in bands (see emitConv).
    bool bandFirst = false;
  } best;
  SmallVector<int64_t> cands = ocTileCandidates(OC, L);
  const double bw = tg.ddr_bytes_per_cycle;
  const double dmaOverhead = tg.ddr_latency_cycles + tg.gdma_issue_cycles;
  auto burstBytes = [&](int64_t run) {
    int64_t burst = std::max<int64_t>(1, tg.ddr_burst_bytes);
    return double(ceilDiv(run, burst) * burst);
  };
  int64_t icT = ICg;
  for (;;) {
    const bool split = icT < ICg;
    const int64_t nIc = ceilDiv(ICg, icT);
    for (int64_t ocT : cands) {
      SmallVector<OcTile> tiles = ocTiles(ocT);
      int64_t ocMax = 0, icMax = 0;
      for (const OcTile &t : tiles)
        ocMax = std::max(ocMax, t.oc), icMax = std::max(icMax, t.ic);
      // Slices are taken within one group.
      if (split && llvm::any_of(tiles,
                                [](const OcTile &t) { return t.groups != 1; }))
        continue;
      int64_t ocSlots = ceilDiv(ocMax, L),
              icSlotsL = ceilDiv(split ? icT : icMax, L);
      unsigned wSlots = tiles.size() == 1 && !split ? 1 : 2;
      const int64_t aes = dtypeSize(accType(split));
      int64_t fixed = wSlots * ocSlots *
                          (icT * KH * KW * wes + (hasBias ? bes : 0) +
                           (epilogue->table ? 2 * 4 : 0)) +
                      (10 + epBufs) * 64 +
                      (prologue ? 4 * (icSlotsL * 4 + 64) : 0);
      auto inPer = [&](int64_t nT, int64_t ohT) {
        return icSlotsL * nT * rowsFor(ohT) * W * ies;
      };
      auto outPer = [&](int64_t nT, int64_t ohT) {
        return ocSlots * nT * ohT * OW * (aes + (quant ? oes : 0) + epBytes);
      };
      // The largest spatial tile that fits, then smaller ones: more steps let
      // the loads and stores of one step overlap the compute of another.
      SmallVector<Plan, 8> options;
      Plan p;
      p.ocT = ocT;
      p.wSlots = wSlots;
      unsigned wholeSlots = (G == 1 || tiles.size() == 1) && !split ? 1 : 2;
      int64_t maxOh = 0;
      if (fixed + wholeSlots * inPer(N, OH) + 2 * outPer(N, OH) <= LB) {
        p.nT = N, p.ohT = OH, p.inSlots = wholeSlots;
        maxOh = OH;
        options.push_back(p);
      } else {
        for (int64_t ohT = OH; ohT >= 1 && !maxOh; --ohT)
          if (fixed + 2 * inPer(1, ohT) + 2 * outPer(1, ohT) <= LB)
            maxOh = ohT;
        if (!maxOh)
          continue;
        p.nT = 1, p.ohT = maxOh, p.inSlots = 2;
        if (maxOh == OH)
          while (p.nT < N &&
                 fixed + 2 * inPer(p.nT + 1, OH) + 2 * outPer(p.nT + 1, OH) <= LB)
            ++p.nT;
        options.push_back(p);
      }
      // Splitting only pays when it adds no reloads: weights stay resident
      // and the input is read once (plus the halo).
      bool resident = tiles.size() == 1 && maxOh == OH && !split;
      for (int64_t k : {2, 3, 4, 6, 8}) {
        int64_t ohT = ceilDiv(OH, k);
        if (!resident || ohT >= maxOh || ohT < 1 ||
            fixed + 2 * inPer(1, ohT) + 2 * outPer(1, ohT) > LB)
          continue;
        p.nT = 1, p.ohT = ohT, p.inSlots = 2;
        options.push_back(p);
      }
      for (Plan &q : options) {
        double nSp = double(ceilDiv(N, q.nT) * ceilDiv(OH, q.ohT));
        double nOc = double(tiles.size());
        double inBytes =
            double(N) * ceilDiv(OH, q.ohT) * rowsFor(q.ohT) * W * IC * ies;
        // DDR moves whole bursts: in the blob a tile's filter is one run of
        // its channels' windows per input channel, so wider tiles waste
        // less of the last burst. (An OIHW filter computed at run time is
        // one run per window whatever the tile: its dense size ranks the
        // tiles alike.)
        double wBytes = double(OC) * ICg * KH * KW * wes;
        if (operands->filterInBlob) {
          wBytes = 0;
          for (const OcTile &t : tiles)
            for (int64_t a = t.o0; a < t.o0 + t.oc;) {
              // A tile's part of a block of the blob: one run when whole.
              int64_t j = block ? a / block : 0,
                      lb = block ? std::min(block, OC - j * block) : OC,
                      e = block ? std::min(t.o0 + t.oc, j * block + lb)
                                : t.o0 + t.oc;
              wBytes += e - a == lb && block
                            ? burstBytes(ICg * lb * KH * KW * wes)
                            : double(ICg) * burstBytes((e - a) * KH * KW * wes);
              a = e;
            }
        }
        double ocOuter = wBytes + (G == 1 ? nOc : 1.0) * inBytes;
        double spOuter = inBytes + (tiles.size() == 1 ? 1.0 : nSp) * wBytes;
        if (split) // every (output channel, spatial) tile reloads its slices
          ocOuter = spOuter = (G == 1 ? nOc : 1.0) * inBytes + nSp * wBytes;
        q.ocOuter = ocOuter <= spOuter;
        double traffic =
            std::min(ocOuter, spOuter) + double(out->numElements()) * oes;
        double steps = nSp * nOc * nIc;
        double dma = traffic / bw + steps * 2 * dmaOverhead;
        double tiu = steps * tg.tiu_issue_cycles +
                     steps * ceilDiv(ocSlots * q.nT * q.ohT * OW * icT * KH * KW,
                                     tg.euFor(types.in));
        // Engines overlap in the steady state; about one step of the less
        // busy engine does not, and the TIU waits for the first step's
        // filter tile and input rows (a whole filter loaded up front is
        // what a resident plan pays before its first instruction).
        double firstLoad =
            (double(ocMax) * icT * KH * KW * wes +
             double(q.nT) * rowsFor(q.ohT) * W * (split ? icT : icMax) * ies) /
                bw +
            dmaOverhead;
        q.cost = std::max(dma, tiu) + std::min(dma, tiu) / steps + firstLoad;
        // Bands pay off when the TIU is the busier engine, or when a conv
        // of one or two steps is TIU-bound once the first step's loads are
        // in: the TIU's wait for them is then a large share of its time,
        // which no later step hides. (With more steps, the next steps'
        // loads queued behind the first absorb an early start.)
        q.bandFirst = tiu >= dma || (steps <= 2 && tiu * (steps - 1) / steps >=
                                                       dma - firstLoad);
        if (!best.ocT || q.cost < best.cost)
          best = q;
      }
    }
    if (best.ocT || icT == 1)
      break;
    icT = ceilDiv(icT, 2);
  }
  if (!best.ocT)
    return ctx.error() << "does not fit local memory even with one input "
                       << "channel per slice";
  const bool split = icT < ICg;
  const int64_t nIc = ceilDiv(ICg, icT);

  SmallVector<OcTile> tiles = ocTiles(best.ocT);
  struct Sp {
    int64_t n0, nT, oh0, ohT;
  };
  SmallVector<Sp> sps;
  for (int64_t n = 0; n < N; n += best.nT)
    for (int64_t oh = 0; oh < OH; oh += best.ohT)
      sps.push_back({n, std::min(best.nT, N - n), oh, std::min(best.ohT, OH - oh)});
  struct Step {
    int64_t o, p, c; // oc tile, spatial tile, input-channel slice
  };
  SmallVector<Step> steps;
  int64_t nO = int64_t(tiles.size()), nP = int64_t(sps.size());
  for (int64_t a = 0; a < (best.ocOuter ? nO : nP); ++a)
    for (int64_t b = 0; b < (best.ocOuter ? nP : nO); ++b)
      for (int64_t c = 0; c < nIc; ++c)
        steps.push_back(best.ocOuter ? Step{a, b, c} : Step{b, a, c});

  int64_t ocMax = 0, icMax = 0;
  for (const OcTile &t : tiles)
    ocMax = std::max(ocMax, t.oc), icMax = std::max(icMax, t.ic);
  if (split)
    icMax = icT;
  const DType acc = accType(split);
  // With output-channel tiles of whole lane slots, the biases and requant
  // tables of all tiles load once (a tile reads its slots of them): two
  // small requests a tile would each pay the DDR latency.
  const bool wholeParams =
      G == 1 && tiles.size() > 1 &&
      llvm::all_of(tiles, [&](const OcTile &t) { return t.o0 % L == 0; });
  const int64_t paramOc = wholeParams ? OC : ocMax;
  const unsigned paramSlots = wholeParams ? 1 : best.wSlots;
  Pipeline pipe;
  enum { kW, kB, kIn, kOut, kQ, kQOut };
  // The input tiles start in other banks than the filter tiles they are
  // read with, and the requant tables in other banks than the accumulators.
  const uint64_t inBytes = ctx.lmemBytes(
                     {best.nT, icMax, rowsFor(best.ohT), W}, types.in),
                 outBytes =
                     ctx.lmemBytes({best.nT, ocMax, best.ohT, OW}, acc),
                 qBytes = ctx.lmemBytes({1, paramOc, 1, 2}, DType::INT32),
                 qOutBytes = ctx.lmemBytes({best.nT, ocMax, best.ohT, OW},
                                           types.out),
                 align = 64;
  const uint64_t qReserve =
      quant ? 2 * (qOutBytes + align) : 0;
  const uint64_t outReserve =
      2 * (outBytes + align) +
      (quant ? paramSlots * (qBytes + align) + qReserve : 0);
  if (failed(pipe.addGroup(ctx, ctx.lmemBytes({icT, ocMax, KH, KW}, types.weight),
                           best.wSlots)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, paramOc, 1, 1}, types.bias),
                           paramSlots)) ||
      failed(addGroupInOtherBanks(ctx, pipe, inBytes, best.inSlots, kW,
                                  outReserve)) ||
      failed(pipe.addGroup(ctx, outBytes, 2)))
    return failure();
  if (quant &&
      (failed(addGroupInOtherBanks(ctx, pipe, qBytes, paramSlots, kOut,
                                   qReserve)) ||
       failed(pipe.addGroup(ctx, qOutBytes, 2))))
    return failure();
  // The epilogue's residual tiles (two slots each), then its scratch.
  const unsigned kRes = pipe.groups.size();
  if (tileEp) {
    for (const Tensor &r : tileEp->residuals)
      if (failed(pipe.addGroup(
              ctx, ctx.lmemBytes({best.nT, ocMax, best.ohT, OW}, r.dtype), 2)))
        return failure();
    for (unsigned i = 0; i < tileEp->temps; ++i)
      if (failed(pipe.addGroup(
              ctx,
              ctx.lmemBytes({best.nT, ocMax, best.ohT, OW},
                            tileEp->tempBytes == 4 ? DType::INT32 : types.out),
              1)))
        return failure();
  }
  // The prologue's scale and bias (two slots each).
  const unsigned kPro = pipe.groups.size();
  if (prologue)
    for (const std::optional<Tensor> &t : {proScale, proBias})
      if (t && failed(pipe.addGroup(
                   ctx, ctx.lmemBytes({1, icMax, 1, 1}, t->dtype), 2)))
        return failure();
  SmallVector<SmallVector<LBuf *, 2>> resBufs(steps.size());

  const bool relu = op.getDoRelu();
  const double limit = op.getReluLimit().convertToDouble();
  // Padding holds the input's zero point (0 unless asymmetric INT8).
  const int32_t padValue = inputZeroPoint(op);
  SmallVector<std::array<LBuf *, 6>> bufs(steps.size());
  SmallVector<LBuf> qViews(steps.size());
  // Returns false when the tile's windows cover only pad rows.
  auto inRows = [&](const Sp &sp, int64_t &r0, int64_t &rows, int64_t &padT,
                    int64_t &padB) {
    if (skipRows) {
      r0 = sp.oh0 * sh, rows = sp.ohT, padT = padB = 0;
      return true;
    }
    int64_t start = sp.oh0 * sh - pt;
    int64_t end = (sp.oh0 + sp.ohT - 1) * sh - pt + dh * (KH - 1) + 1;
    r0 = std::max<int64_t>(start, 0);
    rows = std::min(end, H) - r0;
    padT = std::max<int64_t>(0, -start);
    padB = std::max<int64_t>(0, end - H);
    // A tile whose windows cover only pad rows reads one row filled with
    // the pad value (loadStep) and pads the rest of its span.
    if (rows > 0)
      return true;
    rows = 1, padT = 0, padB = end - start - 1;
    return false;
  };
  // The TIU waits for the whole first step's input tile unless its conv
  // runs in bands of output rows, each reading the input rows loaded so
  // far: the first band starts once its rows are in.
  struct Band {
    int64_t oh0, ohN;          // output rows of the tile
    int64_t inLo, inRows;      // input rows read (in the image)
    int64_t padT, padB;
    uint32_t gdma = 0;         // the load completing its rows
  };
  SmallVector<Band, 8> bands;
  if (!split && best.bandFirst && !prologue && !skipRows) {
    const Sp &sp = sps[steps[0].p];
    int64_t r0, rows, padT, padB;
    // A band's pieces pay a request each: bands only as long as each
    // band's rows take twice a request's DDR latency to arrive, and each
    // piece's rows of a channel (one DDR run) span four bursts, so the
    // parts of bursts the cuts waste stay small.
    const bool any = inRows(sp, r0, rows, padT, padB);
    const double transfer =
        double(sp.nT * tiles[steps[0].o].ic * rows * W * ies) / bw;
    const int64_t nb = std::min<int64_t>(
        {sp.ohT, kFirstStepBands, int64_t(transfer / (2 * dmaOverhead)),
         rows * W * ies / (4 * burst)});
    if (nb > 1 && any) {
      for (int64_t k = 0; k < nb; ++k) {
        int64_t a = sp.ohT * k / nb, b = sp.ohT * (k + 1) / nb;
        Sp part{sp.n0, sp.nT, sp.oh0 + a, b - a};
        Band bd{a, b - a, 0, 0, 0, 0};
        if (!inRows(part, bd.inLo, bd.inRows, bd.padT, bd.padB)) {
          bands.clear();
          break;
        }
        bands.push_back(bd);
      }
    }
  }
  // The prologue on input tile `tile` of channels [ic0, ic0 + ic), in
  // place: its padding rows stay the conv's pad value (the image it pads
  // is the prologue's result).
  auto applyPrologue = [&](LBuf &x, const Operand &tile, int64_t ic0,
                           int64_t ic) {
    auto loadChannels = [&](unsigned g, const Tensor &t) {
      auto [buf, fresh] = pipe.acquire(g, ic0 * (IC + 1) + ic);
      Operand lm = lmemTensor(buf->addr, 1, ic, 1, 1, t.dtype);
      if (fresh)
        ctx.load(*buf, lm,
                 ddrOperand(t.addr + ic0 * dtypeSize(t.dtype), {1, ic, 1, 1},
                            {IC, 1, 1, 1}, t.dtype));
      return std::make_pair(buf, lm);
    };
    auto [sb, scale] = loadChannels(kPro, *proScale);
    SmallVector<LBuf *, 3> deps{&x, sb};
    Operand biasL;
    if (proBias) {
      auto [bb, b] = loadChannels(kPro + 1, *proBias);
      deps.push_back(bb), biasL = b;
    }
    chip::ConvParams pp;
    pp.groups = int(ic);
    pp.relu = prologue.getDoRelu();
    ctx.tiu(makeConv(tile, tile, scale, biasL, pp), deps);
    const double proLimit = prologue.getReluLimit().convertToDouble();
    if (pp.relu && proLimit >= 0)
      ctx.tiu(makeBinaryScalar(BinaryOp::Min, tile, tile, proLimit), {&x});
  };
  auto loadStep = [&](size_t i) {
    const Step &st = steps[i];
    const OcTile &t = tiles[st.o];
    const Sp &sp = sps[st.p];
    auto [ic0, ic, wi0, wic] = icSlice(t, st.c, icT, ICg);
    auto [w, newW] = pipe.acquire(kW, st.o * nIc + st.c);
    auto [b, newB] = pipe.acquire(kB, wholeParams ? 0 : st.o);
    loadFilterAndBias(ctx, types, fl->addr, bias, OC, KH, KW, t,
                      {ic0, ic, wi0, wic}, *w, newW, *b, newB && !wholeParams,
                      operands->filterInBlob, ICg, block);
    if (wholeParams && newB && bias)
      ctx.load(*b, lmemTensor(b->addr, 1, OC, 1, 1, types.bias),
               ddrOperand(*bias, {1, OC, 1, 1}, {OC, 1, 1, 1}, types.bias));
    LBuf *qt = nullptr, *qo = nullptr;
    if (quant) {
      auto [q, newQ] = pipe.acquire(kQ, wholeParams ? 0 : st.o);
      const int64_t qOc = wholeParams ? OC : t.oc, q0 = wholeParams ? 0 : t.o0;
      if (newQ && epilogue->table)
        ctx.load(*q, lmemTensor(q->addr, 1, qOc, 1, 2, DType::INT32),
                 ddrOperand(*epilogue->table + q0 * 2 * 4, {1, qOc, 1, 2},
                            {OC * 2, 2, 2, 1}, DType::INT32));
      qt = q;
      if (wholeParams) {
        // The tile's slots of the whole table (never reloaded).
        uint64_t off = uint64_t(t.o0 / L) * 2 * 4;
        qViews[i] = *q;
        qViews[i].addr += off;
        qViews[i].bytes -= off;
        qt = &qViews[i];
      }
      qo = pipe.acquire(kQOut, int64_t(i)).first;
    }
    int64_t inKey =
        (G == 1 ? st.p : st.p * int64_t(tiles.size()) + st.o) * nIc + st.c;
    auto [x, newX] = pipe.acquire(kIn, inKey);
    if (newX) {
      int64_t r0, rows, padT, padB;
      // Rows [a, a + n) of the tile, in local memory and in DDR.
      auto tileIn = [&](int64_t a, int64_t n) {
        Operand o = lmemTensor(x->addr, sp.nT, ic, rows, W, types.in);
        o.addr += uint64_t(a * W * ies);
        o.shape[2] = uint32_t(n);
        return o;
      };
      auto tileDdr = [&](int64_t a, int64_t n) {
        const int64_t step = skipRows ? sh : 1;
        return ddrOperand(
            in->addr + ((sp.n0 * IC + ic0) * H + r0 + a * step) * W * ies,
            {sp.nT, ic, n, W}, {IC * H * W, H * W, step * W, 1}, types.in);
      };
      const bool any = inRows(sp, r0, rows, padT, padB);
      if (!any) {
        ctx.fillLocal(*x, tileIn(0, rows), double(padValue));
      } else if (i == 0 && !bands.empty()) {
        // In pieces cut where a band's rows start or end, so each band
        // reads whole pieces and waits for the last of them only.
        SmallVector<int64_t, 16> cuts{0, rows};
        for (const Band &bd : bands)
          cuts.append({bd.inLo - r0, bd.inLo - r0 + bd.inRows});
        llvm::sort(cuts);
        cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
        SmallVector<uint32_t, 16> ids;
        for (size_t k = 0; k + 1 < cuts.size(); ++k) {
          int64_t a = cuts[k], n = cuts[k + 1] - a;
          LBuf part = *x;
          ctx.load(part, tileIn(a, n), tileDdr(a, n));
          x->gdma = part.gdma;
          ids.push_back(part.gdma);
        }
        for (Band &bd : bands)
          bd.gdma = ids[llvm::find(cuts, bd.inLo - r0 + bd.inRows) -
                        cuts.begin() - 1];
      } else {
        ctx.load(*x, tileIn(0, rows), tileDdr(0, rows));
      }
      if (prologue && any)
        applyPrologue(*x, tileIn(0, rows), ic0, ic);
    }
    // The output tile stays put while its slices accumulate.
    auto [o, unused] = pipe.acquire(kOut, st.o * int64_t(sps.size()) + st.p);
    (void)unused;
    // A residual tile loads with the output tile's first slice.
    for (size_t r = 0; tileEp && r < tileEp->residuals.size(); ++r) {
      const Tensor &res = tileEp->residuals[r];
      auto [rb, newR] =
          pipe.acquire(kRes + r, st.o * int64_t(sps.size()) + st.p);
      int64_t es = dtypeSize(res.dtype);
      if (newR)
        ctx.load(*rb, lmemTensor(rb->addr, sp.nT, t.oc, sp.ohT, OW, res.dtype),
                 ddrOperand(res.addr +
                                ((sp.n0 * OC + t.o0) * OH + sp.oh0) * OW * es,
                            {sp.nT, t.oc, sp.ohT, OW},
                            {OC * OH * OW, OH * OW, OW, 1}, res.dtype));
      resBufs[i].push_back(rb);
    }
    bufs[i] = {w, b, x, o, qt, qo};
  };

  loadStep(0);
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i + 1 < steps.size())
      loadStep(i + 1);
    const Step &st = steps[i];
    const OcTile &t = tiles[st.o];
    const Sp &sp = sps[st.p];
    auto [w, b, x, o, qt, qo] = bufs[i];
    auto [ic0, ic, wi0, wic] = icSlice(t, st.c, icT, ICg);
    bool first = st.c == 0, last = st.c == nIc - 1;
    int64_t r0, rows, padT, padB;
    inRows(sp, r0, rows, padT, padB);
    chip::ConvParams cp;
    cp.stride_h = int(skipRows ? 1 : sh), cp.stride_w = int(s[1]);
    cp.dilation_h = int(dh), cp.dilation_w = int(d[1]);
    cp.pad_top = int(padT), cp.pad_bottom = int(padB);
    cp.pad_left = int(pads[1]), cp.pad_right = int(pads[3]);
    cp.groups = int(t.groups);
    cp.pad_value = padValue;
    cp.relu = relu && last;
    cp.accumulate = !first;
    Operand outL = lmemTensor(o->addr, sp.nT, t.oc, sp.ohT, OW, acc);
    Operand biasL;
    if (hasBias && first)
      biasL = lmemTensor(b->addr + (wholeParams ? t.o0 / L * bes : 0), 1,
                         t.oc, 1, 1, types.bias);
    const Operand inL = lmemTensor(x->addr, sp.nT, ic, rows, W, types.in),
                  wL = lmemTensor(w->addr, wic, t.oc, KH, KW, types.weight);
    if (i == 0 && !bands.empty()) {
      for (const Band &bd : bands) {
        chip::ConvParams bp = cp;
        bp.pad_top = int(bd.padT), bp.pad_bottom = int(bd.padB);
        Operand bo = outL, bi = inL;
        bo.addr += uint64_t(bd.oh0 * OW) * dtypeSize(acc);
        bo.shape[2] = uint32_t(bd.ohN);
        bi.addr += uint64_t((bd.inLo - r0) * W * ies);
        bi.shape[2] = uint32_t(bd.inRows);
        LBuf xb = *x;
        xb.gdma = bd.gdma;
        ctx.tiu(makeConv(bo, bi, wL, biasL, bp), {w, b, &xb, o});
        x->tiu = xb.tiu;
      }
    } else {
      ctx.tiu(makeConv(outL, inL, wL, biasL, cp), {w, b, x, o});
    }
    if (!last)
      continue;
    // The INT8 relu limit is in the result's type already (the lowering's).
    if (relu && limit >= 0 && !quant)
      ctx.tiu(makeBinaryScalar(BinaryOp::Min, outL, outL, limit), {o});
    // The epilogue transforms the tile (after the requant) in place.
    auto applyEpilogue = [&](LBuf &buf, const Operand &tile) {
      SmallVector<LocalTensor, 2> res;
      for (auto [r, rb] : llvm::enumerate(resBufs[i]))
        res.push_back({lmemTensor(rb->addr, sp.nT, t.oc, sp.ohT, OW,
                                  tileEp->residuals[r].dtype),
                       rb});
      SmallVector<LBuf *, 2> temps;
      for (unsigned k = 0; k < tileEp->temps; ++k)
        temps.push_back(pipe.acquire(kRes + tileEp->residuals.size() + k, 0)
                            .first);
      tileEp->apply(ctx, buf, tile, res, temps);
    };
    // The store narrows an F32 accumulator to the result's dtype.
    storeMacResult(
        ctx, types, *epilogue,
        ddrOperand(out->addr + ((sp.n0 * OC + t.o0) * OH + sp.oh0) * OW * oes,
                   {sp.nT, t.oc, sp.ohT, OW}, {OC * OH * OW, OH * OW, OW, 1},
                   types.out),
        *o, outL, qo, epilogue->table ? qt : nullptr,
        tileEp ? function_ref<void(LBuf &, const Operand &)>(applyEpilogue)
               : function_ref<void(LBuf &, const Operand &)>());
  }
  return success(!tileEp || !tileEp->broken);
}

} // namespace

void attachConvModels(MLIRContext *ctx) {
  tpu::ConvOp::attachInterface<ConvModel>(*ctx);
}

} // namespace backend
} // namespace tpuc
