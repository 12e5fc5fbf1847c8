//===- DataMovement.cpp - Reshape, Permute, Slice, Concat, Pad, ... -------===//
//
// Data movement is strided GDMA moves DDR to DDR: a view of the source with
// permuted / stepped / broadcast strides copied into a view of the result.
// CodegenContext::copy merges contiguous dims and loops over extra ones.
// A Gather whose indices exist only at run time uses dma_gather instead.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "tpuc/Chip/CModel.h"

using namespace mlir;
using namespace tpuc::chip;

namespace tpuc {
namespace backend {
namespace {

FailureOr<std::pair<Tensor, Tensor>> inOut(CodegenContext &ctx,
                                           ArrayRef<unsigned> skip = {}) {
  auto dtype = storageType(ctx, skip);
  if (failed(dtype))
    return failure();
  auto in = getTensor(ctx, ctx.op()->getOperand(0)),
       out = getTensor(ctx, ctx.op()->getResult(0));
  if (failed(in) || failed(out))
    return failure();
  return std::make_pair(*in, *out);
}

/// Layer groups hold a Reshape's or Permute's tensors in the layouts their
/// neighbours compute in, and move elements within their lanes only (a
/// lane-to-lane transpose needs a DDR round trip, so such an op stays out).
/// The layout a group holds `v` in as its producer's result: the
/// producer's own, else NCHW for 4-D tensors and the matrix view for others.
SmallVector<int64_t, 4> heldLayout(Value v) {
  SmallVector<int64_t, 4> l;
  if (Operation *def = v.getDefiningOp())
    if (auto cg = dyn_cast<CodegenInterface>(def))
      l = cg.localResultShape();
  if (!l.empty())
    return l;
  ArrayRef<int64_t> s = getShape(v);
  if (s.size() == 4)
    return SmallVector<int64_t, 4>(s.begin(), s.end());
  return matrixView(s);
}

/// The layout the users of `v` read it in inside a group (looking through
/// Reshapes, which keep the bytes, elementwise ops, which follow it, and
/// out of a group that yields it); empty when none asks for one.
/// With `followElementwise` false, only the users reading `v` in a layout
/// of their own count, not those an elementwise op passes it on to.
SmallVector<int64_t, 4> wantedLayout(Value v, bool followElementwise = true) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (isa<tpu::YieldOp>(user)) {
      Value r = user->getParentOp()->getResult(use.getOperandNumber());
      if (auto l = wantedLayout(r, followElementwise); !l.empty())
        return l;
      continue;
    }
    auto cg = dyn_cast<CodegenInterface>(user);
    if (!cg || isa<tpu::PermuteOp, tpu::SliceOp>(user))
      continue;
    if (isa<tpu::ReshapeOp>(user)) {
      if (auto l = wantedLayout(user->getResult(0), followElementwise);
          !l.empty())
        return l;
      continue;
    }
    if (!cg.supportsLocal())
      continue;
    if (auto l = cg.localShape(use.getOperandNumber()); !l.empty())
      return l;
    // An elementwise op follows the layout it finds: what its users read.
    if (cg.localElementwise()) {
      if (!followElementwise)
        continue;
      Value r = user->getResult(0);
      if (numElements(getShape(r)) == numElements(getShape(v)))
        if (auto l = wantedLayout(r); !l.empty())
          return l;
      continue;
    }
    ArrayRef<int64_t> s = getShape(v);
    if (s.size() <= 4) {
      SmallVector<int64_t, 4> l(4 - s.size(), 1);
      l.append(s.begin(), s.end());
      return l;
    }
  }
  return {};
}

/// Elements beyond which a group does not search a lane copy.
constexpr int64_t kMaxLaneCopyElements = int64_t(1) << 20;

/// (channel, offset within the channel's [N][H][W] block) of the element of
/// the 4-D layout `in` that element (n, c, h, w) of the 4-D layout `out`
/// reads, result element f (row-major) being source element srcFlat(f).
static std::pair<int64_t, int64_t>
sourceElement(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
              llvm::function_ref<int64_t(int64_t)> srcFlat, int64_t n,
              int64_t c, int64_t h, int64_t w) {
  const int64_t iHW = in[2] * in[3];
  const int64_t f = srcFlat(((n * out[1] + c) * out[2] + h) * out[3] + w);
  return {f / iHW % in[1], f / (iHW * in[1]) * iHW + f % iHW};
}

/// A copy within lanes from the 4-D layout `in` to `out` (of as many
/// elements or fewer: a slice), where result element f (row-major) is
/// source element srcFlat(f): every element keeps
/// its channel (so its lane), and its offset within the lane is affine in
/// the result's (n, h, w): base + n sN + h sH + w sW (in elements). A slice
/// may keep the first channels only (the first token of each sequence).
/// Nothing when the elements change lanes or the offsets are not affine.
std::optional<std::array<int64_t, 4>>
laneCopy(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
         llvm::function_ref<int64_t(int64_t)> srcFlat) {
  if (in.size() != 4 || out.size() != 4 || in[1] < out[1] ||
      numElements(in) < numElements(out) ||
      numElements(out) > kMaxLaneCopyElements)
    return std::nullopt;
  const int64_t N = out[0], C = out[1], H = out[2], W = out[3];
  auto src = [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    return sourceElement(in, out, srcFlat, n, c, h, w);
  };
  int64_t base = src(0, 0, 0, 0).second;
  std::array<int64_t, 4> st{base, 0, 0, 0};
  if (N > 1)
    st[1] = src(1, 0, 0, 0).second - base;
  if (H > 1)
    st[2] = src(0, 0, 1, 0).second - base;
  if (W > 1)
    st[3] = src(0, 0, 0, 1).second - base;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) {
          auto [ci, off] = src(n, c, h, w);
          if (ci != c || off != base + n * st[1] + h * st[2] + w * st[3])
            return std::nullopt;
        }
  return st;
}

/// Elements moved within one lane run of a lane move (see laneMoves).
struct LaneRun {
  int64_t n, c, count;   // result image n, channels [c, c + count)
  int64_t srcC, srcBase; // from channels [srcC, srcC + count) at srcBase
  int64_t sH, sW;        // the source's element steps along the result's H, W
};

/// Most GDMA moves a lane move may take, and fewest channels each moves
/// on average: each costs an instruction's issue.
constexpr int64_t kMaxLaneRuns = 32, kMinLaneRun = 4;

/// A copy from the 4-D layout `in` to `out` (as many elements, result
/// element f being source element srcFlat(f)) in which elements change
/// channels (lanes) in runs: runs of consecutive result channels of one
/// image read consecutive source channels, each at the same affine offsets
/// (base + h sH + w sW, in elements of the source's [N][H][W] block per
/// channel) of its own channel, so each run is one GDMA move from local
/// memory to local memory. Nothing when the offsets are not affine, or it
/// takes more than kMaxLaneRuns runs or runs shorter than kMinLaneRun
/// channels on average.
std::optional<SmallVector<LaneRun>>
laneMoves(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
          llvm::function_ref<int64_t(int64_t)> srcFlat) {
  if (in.size() != 4 || out.size() != 4 ||
      numElements(in) != numElements(out) ||
      numElements(out) > kMaxLaneCopyElements)
    return std::nullopt;
  const int64_t N = out[0], C = out[1], H = out[2], W = out[3];
  auto src = [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    return sourceElement(in, out, srcFlat, n, c, h, w);
  };
  SmallVector<LaneRun> runs;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      auto [ci, base] = src(n, c, 0, 0);
      int64_t sH = H > 1 ? src(n, c, 1, 0).second - base : 0;
      int64_t sW = W > 1 ? src(n, c, 0, 1).second - base : 0;
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) {
          auto [cj, off] = src(n, c, h, w);
          if (cj != ci || off != base + h * sH + w * sW)
            return std::nullopt;
        }
      if (!runs.empty()) {
        LaneRun &r = runs.back();
        if (r.n == n && r.c + r.count == c && r.srcC + r.count == ci &&
            r.srcBase == base && r.sH == sH && r.sW == sW) {
          ++r.count;
          continue;
        }
      }
      if (int64_t(runs.size()) == kMaxLaneRuns)
        return std::nullopt;
      runs.push_back({n, c, 1, ci, base, sH, sW});
    }
  if (N * C < kMinLaneRun * int64_t(runs.size()))
    return std::nullopt;
  return runs;
}

/// Moves run `r` takes on `lanes` lanes from result channels starting in
/// lane `outStart` (the source's from lane 0): it splits where either
/// side's channels wrap to the next slot.
int64_t laneRunPieces(const LaneRun &r, int64_t outStart, int64_t lanes) {
  int64_t pieces = 0;
  for (int64_t k = 0; k < r.count; ++pieces) {
    const int64_t dc = outStart + r.c + k, sc = r.srcC + k;
    k += std::min({r.count - k, lanes - dc % lanes, lanes - sc % lanes});
  }
  return pieces;
}

/// Emits the lane move `runs` (see laneMoves) of t's operand 0 into its
/// result, one GDMA move from local memory to local memory per run (split
/// where either side's channels wrap to the next slot of the lanes).
LogicalResult emitLaneMoves(CodegenContext &ctx, LocalOperands &t,
                            ArrayRef<LaneRun> runs) {
  const Operand &in = t.operands[0].lmem, &out = t.result.lmem;
  if (in.dtype != out.dtype || t.rows || !t.operands[0].buf || !t.result.buf)
    return failure();
  const int64_t L = ctx.lanes(), es = dtypeSize(in.dtype);
  for (const LaneRun &r : runs)
    for (int64_t k = 0; k < r.count;) {
      // Channel c of an operand sits in lane (start + c) % L, slot
      // (start + c) / L.
      const int64_t dc = out.start_lane + r.c + k, sc = in.start_lane + r.srcC + k;
      const int64_t count =
          std::min({r.count - k, L - dc % L, L - sc % L});
      Operand to = lmemChannels(out, uint32_t(r.c + k), uint32_t(count),
                                uint32_t(L)),
              from = lmemChannels(in, uint32_t(r.srcC + k), uint32_t(count),
                                  uint32_t(L));
      to.shape[0] = from.shape[0] = 1;
      to.addr += uint64_t(r.n * out.stride[0] * es);
      // The source's offsets are in its [N][H][W] block per channel.
      const int64_t iHW = int64_t(in.shape[2]) * in.shape[3];
      const int64_t ni = r.srcBase / iHW, hw = r.srcBase % iHW;
      from.addr += uint64_t((ni * in.stride[0] +
                             hw / in.shape[3] * in.stride[2] +
                             hw % in.shape[3] * in.stride[3]) * es);
      // Steps along the result's H and W within the source block, in the
      // source's strides: dense blocks only ([N][H][W] back to back).
      if (in.stride[3] != 1 || in.stride[2] != int32_t(in.shape[3]) ||
          in.stride[0] != int32_t(iHW))
        return failure();
      from.shape[2] = to.shape[2];
      from.shape[3] = to.shape[3];
      from.stride[2] = int32_t(r.sH);
      from.stride[3] = int32_t(r.sW);
      ctx.moveLocal(*t.result.buf, to, *t.operands[0].buf, from);
      k += count;
    }
  return success();
}

/// Element strides (base, sN, sC, sH, sW) of the dense source of a result
/// held in the 4-D layout `out`, where result element f (row-major) is
/// source element srcFlat(f); nothing when they are not affine.
std::optional<std::array<int64_t, 5>>
affineSource(ArrayRef<int64_t> out,
             llvm::function_ref<int64_t(int64_t)> srcFlat) {
  if (out.size() != 4 || numElements(out) > kMaxLaneCopyElements)
    return std::nullopt;
  auto at = [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    return srcFlat(((n * out[1] + c) * out[2] + h) * out[3] + w);
  };
  int64_t base = at(0, 0, 0, 0);
  std::array<int64_t, 5> st{base, 0, 0, 0, 0};
  for (int d = 0; d < 4; ++d)
    if (out[d] > 1) {
      std::array<int64_t, 4> i{0, 0, 0, 0};
      i[d] = 1;
      st[d + 1] = at(i[0], i[1], i[2], i[3]) - base;
    }
  for (int64_t n = 0; n < out[0]; ++n)
    for (int64_t c = 0; c < out[1]; ++c)
      for (int64_t h = 0; h < out[2]; ++h)
        for (int64_t w = 0; w < out[3]; ++w)
          if (at(n, c, h, w) !=
              base + n * st[1] + c * st[2] + h * st[3] + w * st[4])
            return std::nullopt;
  return st;
}

/// The moves of a strided load (see loadStrided): none or one dim looped,
/// the dims walked in DDR-stride order or not, and their estimated cycles.
struct StridedMoves {
  int loop = -1;
  bool reorder = false;
  double cycles = 0;
};

/// Calls `emit` on each move loading the strided DDR view `st` at `src`
/// into `dst`, one per index of dim `loop` (-1: one move).
template <typename Emit>
void stridedMoves(const Operand &dst, uint64_t src,
                  const std::array<int64_t, 5> &st, int loop, bool reorder,
                  Emit &&emit) {
  const int64_t es = dtypeSize(dst.dtype);
  int64_t count = loop < 0 ? 1 : dst.shape[loop];
  for (int64_t j = 0; j < count; ++j) {
    Operand to = dst;
    std::array<int64_t, 4> shape, strides;
    for (int d = 0; d < 4; ++d)
      shape[d] = dst.shape[d], strides[d] = st[d + 1];
    int64_t off = st[0];
    if (loop >= 0) {
      shape[loop] = to.shape[loop] = 1;
      off += j * st[loop + 1];
      to.addr += uint64_t(j * dst.stride[loop] * es);
    }
    if (reorder) {
      std::array<int, 3> free{0, 2, 3};
      std::stable_sort(free.begin(), free.end(), [&](int a, int b) {
        auto key = [&](int d) { return shape[d] == 1 ? -1 : strides[d]; };
        return key(a) > key(b);
      });
      std::array<int, 4> walk{free[0], 1, free[1], free[2]};
      Operand from = to;
      auto sh = shape, str = strides;
      for (int d = 0; d < 4; ++d) {
        shape[d] = sh[walk[d]], strides[d] = str[walk[d]];
        to.shape[d] = from.shape[walk[d]];
        to.stride[d] = from.stride[walk[d]];
      }
    }
    // Unit dims take the strides that let contiguous runs merge.
    int64_t run = 1;
    for (int d = 3; d >= 0; --d) {
      if (shape[d] == 1)
        strides[d] = run;
      if (strides[d] != run)
        break;
      run *= shape[d];
    }
    emit(makeDmaMove(to, ddrOperand(src + uint64_t(off * es), shape, strides,
                                    dst.dtype)));
  }
}

/// The fastest moves by the timing model (moves in flight overlap their
/// DDR latency; those beyond the GDMA queue's depth wait a round of it).
StridedMoves bestStridedMoves(const chip::Target &t, const Operand &dst,
                              const std::array<int64_t, 5> &st) {
  StridedMoves best;
  const int64_t depth = std::max<int64_t>(1, t.gdma_queue_depth);
  // Not along C: the moves keep the tensor's lane placement whole.
  for (int loop = -1; loop < 4; ++loop) {
    if (loop == 1 || (loop >= 0 && dst.shape[loop] == 1))
      continue;
    int64_t count = loop < 0 ? 1 : dst.shape[loop];
    for (bool reorder : {false, true}) {
      double c = double(ceilDiv(count, depth)) * t.ddr_latency_cycles;
      stridedMoves(dst, 0, st, loop, reorder, [&](const Instruction &i) {
        c += double(instructionCycles(i, t)) - t.ddr_latency_cycles;
      });
      if ((loop < 0 && !reorder) || c < best.cycles)
        best = {loop, reorder, c};
    }
  }
  return best;
}

/// Loads the strided DDR view `st` (see affineSource) of the tensor at
/// `src` into the LMEM layout `dst`: as one GDMA move, or one move per
/// index of the dim (N, H or W) whose loop leaves the longest DDR runs,
/// whichever the timing model finds faster (moves in flight overlap their
/// DDR latency; those beyond the GDMA queue's depth wait a round of it).
/// Both sides of a move walk one shape, so a move may walk the dims other
/// than C (the lanes) in any order: walked in DDR-stride order, its DDR
/// side reads the longest contiguous runs, scattered on the LMEM side.
LogicalResult loadStrided(CodegenContext &ctx, LBuf &buf, const Operand &dst,
                          uint64_t src, const std::array<int64_t, 5> &st) {
  StridedMoves best = bestStridedMoves(ctx.target(), dst, st);
  stridedMoves(dst, src, st, best.loop, best.reorder,
               [&](const Instruction &i) { ctx.load(buf, i.dst, i.src[0]); });
  return success();
}

/// Emits the lane copy `st` (see laneCopy) as one TIU cast to the same type.
LogicalResult emitLaneCopy(LocalOperands &t, const std::array<int64_t, 4> &st) {
  const Operand &in = t.operands[0].lmem, &out = t.result.lmem;
  if (in.dtype != out.dtype)
    return failure();
  Operand src = out;
  src.addr = in.addr + uint64_t(st[0]) * dtypeSize(in.dtype);
  src.stride[0] = int32_t(st[1]);
  src.stride[1] = in.stride[1];
  src.stride[2] = int32_t(st[2]);
  src.stride[3] = int32_t(st[3]);
  t.emit(makeCast(out, src));
  return success();
}

/// Group-interface methods Reshape and Permute share; `Concrete` provides
/// localResultShape and srcFlat (result element to source element).
template <typename Concrete, typename OpT>
struct LaneMoveModel : public CodegenInterface::ExternalModel<Concrete, OpT> {
  bool localQuantized(Operation *) const { return true; }
  SmallVector<int64_t, 4> localShape(Operation *op, unsigned) const {
    return heldLayout(op->getOperand(0));
  }
  std::optional<std::array<int64_t, 4>> localCopy(Operation *op) const {
    auto self = static_cast<const Concrete *>(this);
    auto fn = self->srcFlat(op);
    return laneCopy(localShape(op, 0), self->localResultShape(op), fn);
  }
  bool supportsLocal(Operation *op) const {
    return chipDType(op->getOperand(0).getType()) ==
               chipDType(op->getResult(0).getType()) &&
           (localCompute(op) ||
            static_cast<const Concrete *>(this)->localLoad(op));
  }
  /// The lane move when elements change lanes (see laneMoves).
  std::optional<SmallVector<LaneRun>> localMoves(Operation *op) const {
    auto self = static_cast<const Concrete *>(this);
    auto fn = self->srcFlat(op);
    return laneMoves(localShape(op, 0), self->localResultShape(op), fn);
  }
  bool localCompute(Operation *op) const {
    return localCopy(op).has_value() || localMoves(op).has_value();
  }
  unsigned localGdmaMoves(Operation *op, unsigned lanes) const {
    if (localCopy(op))
      return 0;
    auto runs = localMoves(op);
    if (!runs)
      return 0;
    unsigned moves = 0;
    for (const LaneRun &r : *runs)
      moves += unsigned(laneRunPieces(r, 0, lanes));
    return moves;
  }
  /// A lane copy that keeps every element in place: a copy reading a
  /// dense run of each lane's bytes in order into a layout of as many
  /// channels. When the channels take more than one slot of each lane, the
  /// run is all of them, in as many images (a lane's slots are its channels
  /// one after the other, each holding every image); else the images are
  /// consecutive runs of the lane's bytes, so attention's heads split from
  /// (or merged into) a matrix's columns, or a Slice of whole images, are
  /// views too.
  std::optional<int64_t> localView(Operation *op, int64_t lanes) const {
    auto in = localShape(op, 0);
    auto out = static_cast<const Concrete *>(this)->localResultShape(op);
    auto st = localCopy(op);
    if (!st || in.size() != 4 || out.size() != 4 || in[1] != out[1])
      return std::nullopt;
    const int64_t inRun = in[0] * in[2] * in[3], outRun = out[0] * out[2] * out[3];
    if (in[1] > lanes && ((*st)[0] != 0 || in[0] != out[0] || inRun != outRun))
      return std::nullopt;
    if ((*st)[0] < 0 || (*st)[0] + outRun > inRun ||
        (out[0] != 1 && (*st)[1] != out[2] * out[3]) ||
        (out[2] != 1 && (*st)[2] != out[3]) || (out[3] != 1 && (*st)[3] != 1))
      return std::nullopt;
    return (*st)[0];
  }
  bool localInputRows(Operation *, unsigned, int64_t, int64_t, int64_t &,
                      int64_t &) const {
    return false;
  }
  LogicalResult codegenLocal(Operation *op, CodegenContext &ctx,
                             LocalOperands &t) const {
    if (auto st = localCopy(op))
      return emitLaneCopy(t, *st);
    if (auto runs = localMoves(op))
      return emitLaneMoves(ctx, t, *runs);
    return failure();
  }
};

struct ReshapeModel : public LaneMoveModel<ReshapeModel, tpu::ReshapeOp> {
  int aliasedOperand(Operation *) const { return 0; }
  /// The bytes stay as they are: the result is held in its input's layout,
  /// or in the one its users read when that splits each lane's bytes into
  /// rows differently (a conv's [C, H, W] read as a matrix [C, H W]).
  /// A model input, in DDR before any group runs, is loaded straight in the
  /// layout its users read, else in its own shape's (NCHW, the matrix view).
  SmallVector<int64_t, 4> localResultShape(Operation *op) const {
    auto in = heldLayout(op->getOperand(0));
    auto want = wantedLayout(op->getResult(0));
    if (sameLaneBytes(in, want))
      return want;
    if (loadsInput(op)) {
      if (want.size() == 4)
        return want;
      ArrayRef<int64_t> s = getShape(op->getResult(0));
      if (s.size() == 4)
        return SmallVector<int64_t, 4>(s.begin(), s.end());
      return matrixView(s);
    }
    // Rows moving to other lanes (a batch of matrices on the same lanes
    // read as one matrix on all of them) move by GDMA in the group, for
    // users with a layout of their own (elementwise ones follow the input's).
    auto own = wantedLayout(op->getResult(0), /*followElementwise=*/false);
    if (own.size() == 4 && own == want &&
        laneMoves(in, own, [](int64_t f) { return f; }))
      return own;
    return in;
  }
  static bool loadsInput(Operation *op) {
    return isa_and_nonnull<top::InputOp>(op->getOperand(0).getDefiningOp());
  }
  std::function<int64_t(int64_t)> srcFlat(Operation *) const {
    return [](int64_t f) { return f; };
  }
  /// Loaded when its elements change lanes (as a transpose is).
  bool localLoad(Operation *op) const {
    return loadsInput(op) && !localCompute(op) &&
           localResultShape(op).size() == 4;
  }
  LogicalResult codegenLocalLoad(Operation *op, CodegenContext &ctx, LBuf &buf,
                                 const Operand &dst, uint64_t src) const {
    auto st = affineSource(localResultShape(op), srcFlat(op));
    if (!st)
      return failure();
    return loadStrided(ctx, buf, dst, src, *st);
  }
  LogicalResult codegen(Operation *op, CodegenContext &ctx) const {
    auto io = inOut(ctx);
    if (failed(io))
      return failure();
    auto &[in, out] = *io;
    // Aliased by tpu-assign-address: the bytes are already in place.
    if (in.addr == out.addr)
      return success();
    int64_t n = in.numElements();
    return ctx.copy(DdrView::dense(out.addr, {n}, out.dtype),
                    DdrView::dense(in.addr, {n}, in.dtype));
  }
};

/// Packs up to three (size, stride) dims into an [N, 1, H, W] operand; the
/// padding dims get the strides that let the cmodel see contiguous runs.
Operand packOperand(uint64_t addr, ArrayRef<int64_t> shape,
                    ArrayRef<int64_t> strides, DType t, bool lmem) {
  std::array<int64_t, 4> sh{1, 1, 1, 1}, st{};
  size_t r = shape.size();
  sh[3] = shape[r - 1], st[3] = strides[r - 1];
  if (r >= 2)
    sh[2] = shape[r - 2], st[2] = strides[r - 2];
  else
    st[2] = sh[3] * st[3];
  st[1] = sh[2] * st[2];
  if (r >= 3)
    sh[0] = shape[r - 3], st[0] = strides[r - 3];
  else
    st[0] = st[1];
  Operand o = lmem ? lmemTensor(addr, sh[0], 1, sh[2], sh[3], t)
                   : ddrOperand(addr, sh, st, t);
  for (int d = 0; d < 4; ++d)
    o.stride[d] = int32_t(st[d]);
  return o;
}

/// Whether a Permute moves only dims of size 1, keeping the row-major order.
bool keepsOrder(tpu::PermuteOp op) {
  auto [shape, perm] = simplifyPermute(getShape(op.getInput()),
                                       getI64s(op.getOrder()));
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != int64_t(i))
      return false;
  return true;
}

/// Group-interface methods of ops that pick elements of their operand
/// (Permute, Slice): held in the layout their users read, computed by a
/// lane copy when every element keeps its lane, else loaded from the
/// operand's DDR buffer.
template <typename Concrete, typename OpT>
struct PickModel : public LaneMoveModel<Concrete, OpT> {
  using LaneMoveModel<Concrete, OpT>::localCompute;
  std::function<int64_t(int64_t)> flat(Operation *op) const {
    return static_cast<const Concrete *>(this)->srcFlat(op);
  }
  /// Held as its users read it, else as a lane copy of its input can make
  /// it: NCHW for 4-D results, the matrix view for others.
  SmallVector<int64_t, 4> localResultShape(Operation *op) const {
    auto l = wantedLayout(op->getResult(0));
    if (!l.empty())
      return l;
    ArrayRef<int64_t> s = getShape(op->getResult(0));
    if (s.size() == 4)
      return SmallVector<int64_t, 4>(s.begin(), s.end());
    return matrixView(s);
  }
  /// A transpose that moves elements across lanes is loaded from DDR, and
  /// so is a slice of a tensor the group does not compute (only the
  /// elements it picks).
  bool localLoad(Operation *op) const {
    return (Concrete::kLoadsPick || !this->localCopy(op)) &&
           affineSource(localResultShape(op), flat(op)).has_value();
  }
  LogicalResult codegenLocalLoad(Operation *op, CodegenContext &ctx, LBuf &buf,
                                 const Operand &dst, uint64_t src) const {
    auto st = affineSource(localResultShape(op), flat(op));
    if (!st)
      return failure();
    return loadStrided(ctx, buf, dst, src, *st);
  }
  double localLoadCycles(Operation *op, const chip::Target &t) const {
    auto l = localResultShape(op);
    auto st = affineSource(l, flat(op));
    if (!st)
      return 0;
    Operand dst = lmemTensor(0, uint32_t(l[0]), uint32_t(l[1]), uint32_t(l[2]),
                             uint32_t(l[3]),
                             chipDType(op->getResult(0).getType()));
    return bestStridedMoves(t, dst, *st).cycles;
  }
};

struct PermuteModel : public PickModel<PermuteModel, tpu::PermuteOp> {
  static constexpr bool kLoadsPick = false;
  /// One that keeps the order shares its operand's buffer, as a Reshape.
  int aliasedOperand(Operation *op) const {
    return keepsOrder(cast<tpu::PermuteOp>(op)) ? 0 : -1;
  }
  std::function<int64_t(int64_t)> srcFlat(Operation *op) const {
    auto in = getShape(op->getOperand(0)), out = getShape(op->getResult(0));
    auto order = getI64s(cast<tpu::PermuteOp>(op).getOrder());
    auto inStrides = denseStrides(in);
    SmallVector<int64_t> shape(out.begin(), out.end()), strides;
    for (int64_t d : order)
      strides.push_back(inStrides[d]);
    return [shape, strides](int64_t f) {
      int64_t g = 0;
      for (size_t i = shape.size(); i-- > 0;) {
        g += f % shape[i] * strides[i];
        f /= shape[i];
      }
      return g;
    };
  }
  LogicalResult codegen(Operation *op, CodegenContext &ctx) const {
    auto io = inOut(ctx);
    if (failed(io))
      return failure();
    auto &[in, out] = *io;
    auto order = getI64s(cast<tpu::PermuteOp>(op).getOrder());
    // Aliased by tpu-assign-address: the bytes are already in place.
    if (in.addr == out.addr && keepsOrder(cast<tpu::PermuteOp>(op)))
      return success();
    if (out.numElements() > 0 && succeeded(viaLocal(ctx, in, out, order)))
      return success();
    auto inStrides = denseStrides(in.shape);
    DdrView src = DdrView::dense(in.addr, out.shape, in.dtype);
    for (size_t i = 0; i < order.size(); ++i)
      src.strides[i] = inStrides[order[i]];
    return ctx.copy(DdrView::dense(out.addr, out.shape, out.dtype), src);
  }

  /// A strided DDR-to-DDR move pays a whole burst for every contiguous run;
  /// when the permutation moves the innermost dim the runs are single
  /// elements. Instead load contiguous input blocks into LMEM, scattering
  /// them into output order on the LMEM side (which has no bursts), and
  /// store output rows back. Taken only when the cycle estimate is lower;
  /// fails (emitting nothing) otherwise.
  LogicalResult viaLocal(CodegenContext &ctx, const Tensor &in,
                         const Tensor &out, ArrayRef<int64_t> order) const {
    auto [S, p] = simplifyPermute(in.shape, order);
    int64_t r = S.size(), es = dtypeSize(in.dtype);
    if (r < 2)
      return failure();
    const chip::Target &t = ctx.target();
    SmallVector<int64_t> inStr = denseStrides(S), outShape(r), pos(r);
    for (int64_t i = 0; i < r; ++i)
      outShape[i] = S[p[i]], pos[p[i]] = i;
    SmallVector<int64_t> outStr = denseStrides(outShape);

    // Old path: runs of the innermost input dim if it stays innermost.
    int64_t run = p[r - 1] == r - 1 ? S[r - 1] : 1, total = in.numElements();
    double oldCycles = double(total / run) * ceilDiv(run * es, t.ddr_burst_bytes) *
                       t.ddr_burst_bytes / t.ddr_bytes_per_cycle;

    // Tile: input dims < k looped one at a time, dim k chunked, the rest
    // whole, so every load reads one contiguous block. LMEM holds the tile
    // in output order, which must fit three operand dims.
    int64_t cap = int64_t(ctx.lmemFree()) / es - 64 / es, k = -1;
    if (total > INT32_MAX)
      return failure();
    for (int64_t d = r - 1, inner = 1;
         d >= std::max<int64_t>(0, r - 3) && inner <= cap; inner *= S[d], --d)
      k = d;
    if (k < 0)
      return failure();
    int64_t inner = numElements(ArrayRef<int64_t>(S).drop_front(k + 1));
    int64_t tk = std::min(S[k], cap / inner);
    if (tk < 1 || tk > (int64_t(1) << 24) || inner * tk > (int64_t(1) << 30))
      return failure();
    // Tile dims (input dims k..r-1) in output order.
    SmallVector<int64_t> tileDims;
    for (int64_t i = 0; i < r; ++i)
      if (p[i] >= k)
        tileDims.push_back(p[i]);
    auto tileShape = [&](int64_t size) {
      SmallVector<int64_t> in(S.begin() + k, S.end()), o;
      in[0] = size;
      for (int64_t d : tileDims)
        o.push_back(in[d - k]);
      return std::make_pair(in, o);
    };
    struct Step {
      Operand load[2], store[2];
    };
    SmallVector<Step> steps;
    double newCycles = 0;
    int64_t outer = numElements(ArrayRef<int64_t>(S).take_front(k));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k0 = 0; k0 < S[k]; k0 += tk) {
        int64_t size = std::min(tk, S[k] - k0), inOff = k0 * inStr[k],
                outOff = k0 * outStr[pos[k]], rem = o;
        for (int64_t d = k - 1; d >= 0; --d) {
          inOff += rem % S[d] * inStr[d];
          outOff += rem % S[d] * outStr[pos[d]];
          rem /= S[d];
        }
        auto [inTile, outTile] = tileShape(size);
        SmallVector<int64_t> lmemStr = denseStrides(outTile), scatter(r - k),
                             ddrOut;
        for (size_t j = 0; j < tileDims.size(); ++j) {
          scatter[tileDims[j] - k] = lmemStr[j];
          ddrOut.push_back(outStr[pos[tileDims[j]]]);
        }
        SmallVector<int64_t> ddrIn(inStr.begin() + k, inStr.end());
        Step s;
        // LMEM addresses are filled in once the buffer is allocated.
        s.load[0] = packOperand(0, inTile, scatter, in.dtype, true);
        s.load[1] = packOperand(in.addr + inOff * es, inTile, ddrIn, in.dtype,
                                false);
        s.store[0] = packOperand(out.addr + outOff * es, outTile, ddrOut,
                                 out.dtype, false);
        s.store[1] = packOperand(0, outTile, lmemStr, out.dtype, true);
        newCycles += instructionCycles(makeDmaMove(s.load[0], s.load[1]), t) +
                     instructionCycles(makeDmaMove(s.store[0], s.store[1]), t);
        steps.push_back(s);
        if (newCycles >= oldCycles)
          return failure();
      }
    auto buf = ctx.alloc(tk * inner * es);
    if (!buf)
      return failure();
    for (Step &s : steps) {
      s.load[0].addr = s.store[1].addr = buf->addr;
      ctx.load(*buf, s.load[0], s.load[1]);
      ctx.store(s.store[0], *buf, s.store[1]);
    }
    return success();
  }
};

/// Element offset of a Slice that takes one contiguous run of its input
/// (unit steps, unit output dims before the sliced one, whole dims after).
std::optional<int64_t> contiguousSliceOffset(tpu::SliceOp slice) {
  auto inType = dyn_cast<RankedTensorType>(slice.getInput().getType());
  auto outType = dyn_cast<RankedTensorType>(slice.getOutput().getType());
  if (!inType || !outType || !inType.hasStaticShape())
    return std::nullopt;
  auto in = inType.getShape(), out = outType.getShape();
  auto offsets = getI64s(slice.getOffsets()), steps = getI64s(slice.getSteps());
  auto strides = denseStrides(in);
  int64_t off = 0;
  bool inner = false; // at or past the first dim with more than one element
  for (size_t d = 0; d < in.size(); ++d) {
    if (out[d] > 1 && steps[d] != 1)
      return std::nullopt;
    if (inner && out[d] != in[d])
      return std::nullopt;
    inner = inner || out[d] > 1;
    off += offsets[d] * strides[d];
  }
  return off;
}

struct SliceModel : public PickModel<SliceModel, tpu::SliceOp> {
  static constexpr bool kLoadsPick = true;
  std::function<int64_t(int64_t)> srcFlat(Operation *op) const {
    auto slice = cast<tpu::SliceOp>(op);
    SmallVector<int64_t> out(getShape(slice.getOutput())),
        inStrides = denseStrides(getShape(slice.getInput())),
        offsets = getI64s(slice.getOffsets()), steps = getI64s(slice.getSteps());
    return [=](int64_t f) {
      int64_t g = 0;
      for (size_t d = out.size(); d-- > 0;) {
        g += (offsets[d] + f % out[d] * steps[d]) * inStrides[d];
        f /= out[d];
      }
      return g;
    };
  }
  int aliasedOperand(Operation *op) const {
    return contiguousSliceOffset(cast<tpu::SliceOp>(op)) ? 0 : -1;
  }
  int64_t aliasedByteOffset(Operation *op) const {
    auto slice = cast<tpu::SliceOp>(op);
    auto t = cast<RankedTensorType>(slice.getOutput().getType());
    return contiguousSliceOffset(slice).value_or(0) *
           dtypeSize(chipDType(t));
  }
  LogicalResult codegen(Operation *op, CodegenContext &ctx) const {
    auto io = inOut(ctx);
    if (failed(io))
      return failure();
    auto &[in, out] = *io;
    auto slice = cast<tpu::SliceOp>(op);
    // A view placed by tpu-assign-address: the bytes are already in place.
    if (auto off = contiguousSliceOffset(slice);
        off && out.addr == in.addr + *off * dtypeSize(in.dtype))
      return success();
    auto offsets = getI64s(slice.getOffsets()), steps = getI64s(slice.getSteps());
    auto inStrides = denseStrides(in.shape);
    DdrView src = DdrView::dense(in.addr, out.shape, in.dtype);
    int64_t es = dtypeSize(in.dtype), off = 0;
    for (size_t d = 0; d < out.shape.size(); ++d) {
      off += offsets[d] * inStrides[d];
      src.strides[d] = inStrides[d] * steps[d];
    }
    src.addr += off * es;
    DdrView dst = DdrView::dense(out.addr, out.shape, out.dtype);
    if (auto bs = ddrBlockStride(op->getResult(0))) {
      // Placed in a Concat's result: blocks of the trailing dims whose
      // elements make `block`, each `stride` elements after the last.
      auto [block, stride] = *bs;
      auto first = blockDims(out.shape, block);
      if (!first)
        return ctx.error() << "internal: block stride does not fit the slice";
      const size_t k = *first;
      for (size_t d = k; d-- > 0;)
        dst.strides[d] = d + 1 == k ? stride : dst.strides[d + 1] * out.shape[d + 1];
    }
    return ctx.copy(dst, src);
  }
  bool writesBlocks(Operation *) const { return true; }
};

struct ConcatModel
    : public CodegenInterface::ExternalModel<ConcatModel, tpu::ConcatOp> {
  LogicalResult codegen(Operation *op, CodegenContext &ctx) const {
    auto concat = cast<tpu::ConcatOp>(op);
    auto dtype = storageType(ctx);
    auto out = getTensor(ctx, concat.getOutput());
    if (failed(dtype) || failed(out))
      return failure();
    for (OpOperand &use : concat->getOpOperands())
      if (!ctx.copiedAhead.contains(&use) &&
          failed(copyConcatOperand(ctx, use)))
        return failure();
    if (!concat.getDoRelu())
      return success();
    // The fused ReLU runs in place over the assembled result (activations
    // are float-only: integers take max(x, 0)).
    return streamFlat(ctx, out->numElements(), out->addr, {out->addr}, *dtype,
                      0, [&](StreamTile &t) {
                        t.emit(isFloat(*dtype)
                                   ? makeActive(ActOp::Relu, t.out, t.ins[0])
                                   : makeBinaryScalar(BinaryOp::Max, t.out,
                                                      t.ins[0], 0.0));
                      });
  }

  /// In a group: along the last axis, each operand's columns are copied
  /// into the result's within their lanes (the matrix view keeps a row's
  /// elements in one lane), so a row assembled from pieces (Swin's patch
  /// merging) stays in the group rather than meeting in DDR.
  bool supportsLocal(Operation *op) const {
    auto concat = cast<tpu::ConcatOp>(op);
    ArrayRef<int64_t> out = getShape(concat.getOutput());
    if (concat.getDoRelu() || out.size() < 2 ||
        concat.getAxis() != int64_t(out.size()) - 1)
      return false;
    auto rows = matrixView(out);
    return llvm::all_of(concat.getInputs(), [&](Value v) {
      auto l = matrixView(getShape(v));
      return chipDType(v.getType()) == chipDType(concat.getType()) &&
             !l.empty() && l[0] == rows[0] && l[1] == rows[1];
    });
  }
  bool localQuantized(Operation *) const { return true; }
  SmallVector<int64_t, 4> localShape(Operation *op, unsigned index) const {
    return matrixView(getShape(op->getOperand(index)));
  }
  SmallVector<int64_t, 4> localResultShape(Operation *op) const {
    return matrixView(getShape(op->getResult(0)));
  }
  bool localInputRows(Operation *, unsigned, int64_t, int64_t, int64_t &,
                      int64_t &) const {
    return false;
  }
  LogicalResult codegenLocal(Operation *, CodegenContext &,
                             LocalOperands &t) const {
    const Operand &out = t.result.lmem;
    uint32_t col = 0;
    for (const LocalTensor &in : t.operands) {
      if (in.lmem.dtype != out.dtype)
        return failure();
      Operand dst = out;
      dst.shape[3] = in.lmem.shape[3];
      dst.addr += uint64_t(col) * dtypeSize(out.dtype);
      t.emit(makeCast(dst, in.lmem));
      col += in.lmem.shape[3];
    }
    return col == out.shape[3] ? success() : failure();
  }
};

} // namespace

LogicalResult copyConcatOperand(CodegenContext &ctx, OpOperand &use) {
  auto concat = cast<tpu::ConcatOp>(use.getOwner());
  auto out = getTensor(ctx, concat.getOutput());
  auto in = getTensor(ctx, use.get());
  if (failed(out) || failed(in))
    return failure();
  int64_t axis = concat.getAxis(), pos = 0, es = dtypeSize(out->dtype);
  for (unsigned k = 0; k < use.getOperandNumber(); ++k)
    pos += getShape(concat.getInputs()[k])[axis];
  auto outStrides = denseStrides(out->shape);
  DdrView dst = DdrView::dense(out->addr + pos * outStrides[axis] * es,
                               in->shape, out->dtype);
  dst.strides = outStrides;
  // With unit dims before the axis each operand is a contiguous range.
  bool contiguous =
      numElements(ArrayRef<int64_t>(out->shape).take_front(axis)) == 1;
  // Placed in place by tpu-assign-address (in strided blocks when dims
  // precede the axis; a layer group stored it so): nothing to copy.
  if ((contiguous || ddrBlockStride(use.get())) && in->addr == dst.addr)
    return success();
  return ctx.copy(dst, DdrView::dense(in->addr, in->shape, out->dtype));
}

namespace {

struct PadModel
    : public CodegenInterface::ExternalModel<PadModel, tpu::PadOp> {
  LogicalResult codegen(Operation *op, CodegenContext &ctx) const {
    auto io = inOut(ctx);
    if (failed(io))
      return failure();
    auto &[in, out] = *io;
    auto pad = cast<tpu::PadOp>(op);
    auto pads = getI64s(pad.getPads());
    size_t rank = in.shape.size();
    auto mode = *parsePadMode(pad.getMode());
    int64_t es = dtypeSize(in.dtype);
    auto outStrides = denseStrides(out.shape);
    // A sub-box of the result: per dim a start and an extent.
    auto box = [&](ArrayRef<int64_t> start, ArrayRef<int64_t> size) {
      DdrView v = DdrView::dense(out.addr, size, out.dtype);
      v.strides = outStrides;
      for (size_t d = 0; d < rank; ++d)
        v.addr += start[d] * outStrides[d] * es;
      return v;
    };
    // Constant mode fills only the border: the GDMA may hold the fill and
    // the interior copy in flight together, and writes in flight must not
    // overlap. Per dim d, the slabs before and after the interior, over the
    // interior of the dims before d and the full extent of those after.
    if (mode == PadMode::Constant) {
      double value = pad.getValue().convertToDouble();
      for (size_t d = 0; d < rank; ++d) {
        SmallVector<int64_t> st(rank), sz(rank);
        for (size_t k = 0; k < rank; ++k) {
          st[k] = k < d ? pads[k] : 0;
          sz[k] = k < d ? in.shape[k] : out.shape[k];
        }
        int64_t before = pads[d], after = pads[rank + d];
        for (auto [first, count] : {std::pair{int64_t(0), before},
                                    std::pair{before + in.shape[d], after}}) {
          if (count <= 0)
            continue;
          st[d] = first, sz[d] = count;
          if (failed(ctx.fill(box(st, sz), value)))
            return failure();
        }
      }
    }
    SmallVector<int64_t> start(pads.begin(), pads.begin() + rank);
    if (failed(ctx.copy(box(start, in.shape),
                        DdrView::dense(in.addr, in.shape, in.dtype))))
      return failure();
    if (mode == PadMode::Constant)
      return success();
    // Edge / reflect: fill the pads of dim d from the result itself, over
    // the full extent of the dims already padded and the interior of the
    // others; the GDMA's program order makes the earlier writes visible.
    for (size_t d = 0; d < rank; ++d) {
      int64_t before = pads[d], after = pads[rank + d], n = in.shape[d];
      SmallVector<int64_t> st(rank), sz(rank);
      for (size_t k = 0; k < rank; ++k) {
        st[k] = k < d ? 0 : pads[k];
        sz[k] = k < d ? out.shape[k] : in.shape[k];
      }
      auto side = [&](int64_t dstStart, int64_t count, int64_t srcStart,
                      int64_t step) {
        if (count == 0)
          return success();
        SmallVector<int64_t> s1 = st, z1 = sz, s2 = st, z2 = sz;
        s1[d] = dstStart, z1[d] = count;
        s2[d] = srcStart, z2[d] = step == 0 ? 1 : count;
        DdrView src = box(s2, z2);
        if (step < 0)
          src.strides[d] = -outStrides[d];
        return ctx.copy(box(s1, z1), src);
      };
      bool edge = mode == PadMode::Edge;
      if (failed(side(0, before, edge ? before : 2 * before, edge ? 0 : -1)) ||
          failed(side(before + n, after,
                      edge ? before + n - 1 : before + n - 2, edge ? 0 : -1)))
        return failure();
    }
    return success();
  }
};

struct UpsampleModel
    : public CodegenInterface::ExternalModel<UpsampleModel, tpu::UpsampleOp> {
  LogicalResult codegen(Operation *op, CodegenContext &ctx) const {
    auto io = inOut(ctx);
    if (failed(io))
      return failure();
    auto &[in, out] = *io;
    auto up = cast<tpu::UpsampleOp>(op);
    int64_t P = in.shape[0] * in.shape[1], H = in.shape[2], W = in.shape[3],
            sh = up.getScaleH(), sw = up.getScaleW();
    // out[p, h, i, w, j] = in[p, h, w]: the scale dims broadcast.
    DdrView dst = DdrView::dense(out.addr, {P, H, sh, W, sw}, out.dtype);
    DdrView src = DdrView::dense(in.addr, {P, H, 1, W, 1}, in.dtype);
    return ctx.copy(dst, src);
  }
};

/// Gather with indices known only at run time: DmaGather reads them from DDR
/// and moves the selected rows DDR to DDR, in pieces that respect the
/// operand limits. Viewed as [1, outer, dim, inner] gathered along H.
LogicalResult emitRuntimeGather(CodegenContext &ctx, const Tensor &in,
                                const Tensor &out, const Tensor &idx,
                                int64_t outer, int64_t dim, int64_t inner) {
  int64_t n = idx.numElements(), es = dtypeSize(in.dtype),
          ies = dtypeSize(idx.dtype);
  if (dim * inner > INT32_MAX || n * inner > INT32_MAX)
    return ctx.error() << "gather rows of " << dim * inner
                       << " elements exceed the GDMA stride range";
  int64_t maxDim = kMaxDim, maxElems = kMaxElements;
  int64_t nc = std::min(n, maxDim);
  int64_t wc = std::min({inner, maxDim, maxElems / std::max(dim, nc)});
  int64_t oc = std::min(
      {outer, maxDim, maxElems / (std::max(dim, nc) * wc)});
  for (int64_t o = 0; o < outer; o += oc)
    for (int64_t i = 0; i < n; i += nc)
      for (int64_t w = 0; w < inner; w += wc) {
        int64_t so = std::min(oc, outer - o), si = std::min(nc, n - i),
                sw = std::min(wc, inner - w);
        Operand src = ddrOperand(in.addr + (o * dim * inner + w) * es,
                                 {1, so, dim, sw}, {0, dim * inner, inner, 1},
                                 in.dtype);
        Operand dst =
            ddrOperand(out.addr + ((o * n + i) * inner + w) * es,
                       {1, so, si, sw}, {0, n * inner, inner, 1}, out.dtype);
        Operand index = ddrTensor(idx.addr + i * ies, 1, 1, 1, uint32_t(si),
                                  idx.dtype);
        ctx.gdmaDdr(makeDmaGather(dst, src, index, /*axis=*/2));
      }
  return success();
}

/// Whether a group can load a Gather's result straight from its table:
/// rows of a 2-D weight picked along axis 0 by indices the model is given
/// (in DDR before any group runs).
bool gathersWeightRows(tpu::GatherOp op) {
  Value idx = op.getIndices();
  Operation *def = idx.getDefiningOp();
  auto table = getShape(op.getInput());
  return op.getAxis() == 0 && table.size() == 2 &&
         op.getInput().getDefiningOp<top::WeightOp>() && def &&
         isa<top::InputOp>(def) && getShape(op.getOutput()).size() <= 4 &&
         llvm::is_contained({DType::F32, DType::INT32},
                            chipDType(idx.getType())) &&
         chipDType(op.getInput().getType()) ==
             chipDType(op.getOutput().getType());
}

struct GatherModel
    : public CodegenInterface::ExternalModel<GatherModel, tpu::GatherOp> {
  /// In a group: loaded from the table by dma_gather, each picked row a W
  /// row of the layout [N, C, 1, W] (W the table's row) its users read,
  /// else the matrix view.
  SmallVector<int64_t, 4> localResultShape(Operation *op) const {
    Value res = op->getResult(0);
    int64_t w = getShape(cast<tpu::GatherOp>(op).getInput()).back();
    auto l = wantedLayout(res);
    if (l.size() == 4 && l[2] == 1 && l[3] == w)
      return l;
    return matrixView(getShape(res));
  }
  bool supportsLocal(Operation *op) const {
    return gathersWeightRows(cast<tpu::GatherOp>(op));
  }
  bool localCompute(Operation *) const { return false; }
  bool localLoad(Operation *op) const {
    auto l = localResultShape(op);
    int64_t w = getShape(cast<tpu::GatherOp>(op).getInput()).back();
    return gathersWeightRows(cast<tpu::GatherOp>(op)) && l.size() == 4 &&
           l[2] == 1 && l[3] == w;
  }
  /// One gather per image of the layout: its C rows are the next C
  /// indices.
  LogicalResult codegenLocalLoad(Operation *op, CodegenContext &ctx, LBuf &buf,
                                 const Operand &dst, uint64_t src) const {
    auto gather = cast<tpu::GatherOp>(op);
    auto table = getShape(gather.getInput());
    auto idxAddr = ddrAddr(gather.getIndices());
    if (!idxAddr || dst.shape[2] != 1 || dst.shape[3] != table[1])
      return failure();
    DType it = chipDType(gather.getIndices().getType());
    int64_t dim = table[0], w = table[1], c = dst.shape[1];
    Operand from = ddrOperand(src, {1, dim, 1, w}, {dim * w, w, w, 1},
                              dst.dtype);
    for (uint32_t n = 0; n < dst.shape[0]; ++n) {
      Operand to = dst;
      to.shape[0] = 1;
      to.addr += uint64_t(n) * uint64_t(dst.stride[0]) * dtypeSize(dst.dtype);
      Operand index = ddrTensor(*idxAddr + uint64_t(n * c) * dtypeSize(it), 1,
                                1, 1, uint32_t(c), it);
      ctx.gatherLocal(buf, to, from, index, /*axis=*/1);
    }
    return success();
  }

  LogicalResult codegen(Operation *op, CodegenContext &ctx) const {
    auto io = inOut(ctx, /*skip indices=*/{1});
    if (failed(io))
      return failure();
    auto &[in, out] = *io;
    auto gather = cast<tpu::GatherOp>(op);
    int64_t axis = gather.getAxis(), dim = in.shape[axis];
    ArrayRef<int64_t> shape = in.shape;
    int64_t outer = numElements(shape.take_front(axis)),
            inner = numElements(shape.drop_front(axis + 1));
    if (out.numElements() == 0)
      return success();
    if (!gather.getIndices().getDefiningOp<top::WeightOp>()) {
      auto idx = getTensor(ctx, gather.getIndices());
      if (failed(idx))
        return failure();
      if (idx->dtype != DType::F32 && idx->dtype != DType::INT32)
        return ctx.error() << "run-time gather indices must be f32 or i32, got "
                           << gather.getIndices().getType();
      return emitRuntimeGather(ctx, in, out, *idx, outer, dim, inner);
    }
    auto idx = ctx.constant(gather.getIndices());
    if (failed(idx))
      return failure();
    int64_t n = int64_t(idx->size()), es = dtypeSize(in.dtype);
    SmallVector<int64_t> rows(n);
    for (int64_t i = 0; i < n; ++i) {
      float v = (*idx)[i];
      if (v != std::trunc(v) || v < -dim || v >= dim)
        return ctx.error() << "index " << v << " (at position " << i
                           << ") is not an integer in [" << -dim << ", " << dim
                           << ")";
      rows[i] = v < 0 ? int64_t(v) + dim : int64_t(v);
    }
    // Runs of consecutive indices move as one block.
    for (int64_t i = 0; i < n;) {
      int64_t first = rows[i], len = 1;
      while (i + len < n && rows[i + len] == first + len)
        ++len;
      DdrView dst, src;
      dst.dtype = src.dtype = in.dtype;
      dst.addr = out.addr + i * inner * es;
      dst.shape = {outer, len, inner};
      dst.strides = {n * inner, inner, 1};
      src.addr = in.addr + first * inner * es;
      src.shape = {outer, len, inner};
      src.strides = {dim * inner, inner, 1};
      if (failed(ctx.copy(dst, src)))
        return failure();
      i += len;
    }
    return success();
  }
};

} // namespace

void attachDataMovementModels(MLIRContext *ctx) {
  tpu::ReshapeOp::attachInterface<ReshapeModel>(*ctx);
  tpu::PermuteOp::attachInterface<PermuteModel>(*ctx);
  tpu::SliceOp::attachInterface<SliceModel>(*ctx);
  tpu::ConcatOp::attachInterface<ConcatModel>(*ctx);
  tpu::PadOp::attachInterface<PadModel>(*ctx);
  tpu::UpsampleOp::attachInterface<UpsampleModel>(*ctx);
  tpu::GatherOp::attachInterface<GatherModel>(*ctx);
}

} // namespace backend
} // namespace tpuc
