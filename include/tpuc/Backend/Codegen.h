//===- Codegen.h - State and helpers shared by op code generators -*- C++ -*-===//
//
// A CodegenContext holds the two instruction streams of the network being
// built and hands each Tpu op the whole local memory while it runs. Ops
// describe LMEM buffers as LBufs; the context derives every wait_id from the
// last instruction of each engine that touched a buffer, so double-buffered
// loops need no hand-written synchronisation:
//   * a GDMA write into a buffer waits for the last TIU instruction using it,
//   * a TIU instruction waits for the last GDMA touching any of its buffers,
//   * a store waits for the TIU instruction that produced the data.
// DDR needs no waits: the GDMA engine runs in program order.
//
// Overlap between ops: a new buffer starts fenced only on the earlier
// instructions that touched its LMEM range, and successive ops allocate
// from opposite ends of LMEM, so an op's first loads need not wait for the
// previous op's compute. The previous op's trailing stores (after its last
// compute) are held back and emitted once something could depend on them:
// a load reading bytes they write (their strided runs, not the hulls: the
// next op's first rows of a tensor do not wait for the stores of its last
// rows), a load, fill or compute instruction using their LMEM range, any
// store or DDR-to-DDR move. Allocating over that range does not: ops
// allocate all their buffers before their first load. The next op's first
// loads (weights, first input tile) thus enter the GDMA queue ahead of
// them and run while the previous op's last tiles compute; a load reading
// some channels (or rows) they write loads the others ahead of them and
// only the rest after.
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_BACKEND_CODEGEN_H
#define TPUC_BACKEND_CODEGEN_H
#include "tpuc/Backend/CodegenInterface.h"
#include "tpuc/Chip/ISA.h"
#include "tpuc/Chip/Target.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/FunctionExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace tpuc {
namespace backend {

/// Attributes written by tpu-assign-address.
constexpr llvm::StringLiteral kAddrAttr = "ddr.addr";
constexpr llvm::StringLiteral kWeightSizeAttr = "tpu.weight_size";
constexpr llvm::StringLiteral kActAddrAttr = "tpu.activation_addr";
constexpr llvm::StringLiteral kActSizeAttr = "tpu.activation_size";

/// Address recorded on the op defining `v` (or on the top.Input consuming a
/// block argument), if any.
std::optional<uint64_t> ddrAddr(mlir::Value v);
/// Set by tpu-assign-address on a layer-group result placed inside an
/// interleaving Concat (and on the ops aliasing it): [block, stride], the
/// tensor's elements in runs of `block` (its H*W or C*H*W) `stride`
/// elements apart instead of back to back. Only the group's stores write it.
constexpr llvm::StringLiteral kBlockStrideAttr = "ddr.block_stride";
/// Marks an op tpu-recompute-scaled-map copied: its MACs are not the
/// model's (the roofline counts each computation once).
constexpr llvm::StringLiteral kRecomputedAttr = "tpu.recomputed";
/// Marks a constant a backend pass made to move data with a matmul (an
/// identity or 0/1 matrix: a transpose or a gather of rows computed on the
/// matmul unit): neither it nor the matmuls reading it are the model's work,
/// so the roofline counts neither their bytes nor their MACs.
constexpr llvm::StringLiteral kDataMovementAttr = "tpu.data_movement";
/// The model's MACs of an op computing more than the model does (attention
/// over all rows where the model's attends within windows); the roofline
/// counts these instead of the op's own.
constexpr llvm::StringLiteral kModelMacsAttr = "tpu.model_macs";
/// `weight` (a new top.Weight) marked with kDataMovementAttr.
mlir::Value markDataMovement(mlir::Value weight);
/// The data-movement weight [1.., R, W] (R = `type`'s rows, its leading
/// dims) whose rows [at, at + W) are the identity I_W and whose other rows
/// are 0, created before `anchor`.
mlir::Value identityRows(mlir::OpBuilder &b, mlir::Operation *anchor,
                         const std::string &name, mlir::RankedTensorType type,
                         int64_t W, int64_t at = 0);
/// Channels [c0, c0 + n) of the local-memory operand `o` on `lanes` lanes:
/// its channel c sits in lane (start_lane + c) % lanes, in slot
/// (start_lane + c) / lanes of the channel stride.
chip::Operand lmemChannels(chip::Operand o, uint32_t c0, uint32_t n,
                           uint32_t lanes);
/// Whether `op`'s MACs are the model's: not a recomputed copy, and not a
/// matmul by a data-movement constant.
bool countsModelMacs(mlir::Operation *op);
/// The model's MACs of `op` (kModelMacsAttr, else its own); 0 when
/// countsModelMacs does not hold.
int64_t modelMacs(mlir::Operation *op);
/// The [block, stride] of `v`'s DDR placement, if it is not dense.
std::optional<std::pair<int64_t, int64_t>> ddrBlockStride(mlir::Value v);
/// `o` (a DDR view of rows of the 4-D `shape`, dense strides) with the
/// strides of a tensor placed in blocks of `bs` (see kBlockStrideAttr);
/// nullopt when the blocks are not whole dims from 1 or 2 on.
std::optional<chip::Operand> withBlockStride(chip::Operand o,
                                             std::array<int64_t, 4> shape,
                                             std::pair<int64_t, int64_t> bs);
/// The first of the trailing dims of `shape` whose elements make `block`
/// (a tensor placed in a Concat's result in blocks of them); nullopt when no
/// run of trailing dims makes exactly `block`.
inline std::optional<size_t> blockDims(llvm::ArrayRef<int64_t> shape,
                                       int64_t block) {
  int64_t inner = 1;
  size_t k = shape.size();
  while (k > 0 && inner < block)
    inner *= shape[--k];
  return inner == block ? std::optional<size_t>(k) : std::nullopt;
}
/// Chip dtype of a tensor's element type (Invalid when the chip has none).
chip::DType chipDType(mlir::Type type);
/// Whether `v`'s elements are F32.
inline bool isF32(mlir::Value v) {
  return chipDType(v.getType()) == chip::DType::F32;
}

/// A GDMA load of a later op's weight tile ahead of that op, into LMEM it
/// reserves (CodegenContext::beginPrefetch): `to` is where the prefetch puts
/// it, `unit` the index of the unit (WeightPrefetcher's) that takes it,
/// `parts` how many parts of its load are issued (it goes out in parts of
/// about a DDR latency's bytes), `gdma` the last part's id once all are,
/// `used` whether the op took it.
struct PrefetchLoad {
  chip::Operand from, to;
  size_t unit = 0;
  unsigned parts = 0;
  uint32_t gdma = 0;
  bool used = false;
};

/// A local-memory buffer: per-lane byte range and the last instruction of
/// each engine that touched it. When that GDMA instruction is a store
/// (gdma == storeId), it only read the buffer: a TIU instruction that only
/// reads it too waits for the GDMA that wrote it before (writtenBy), not
/// for the store.
struct LBuf {
  uint64_t addr = 0, bytes = 0;
  uint32_t tiu = 0, gdma = 0;
  uint32_t storeId = 0, writtenBy = 0;
};

/// A strided N-d view of DDR (element strides).
struct DdrView {
  uint64_t addr = 0;
  chip::DType dtype = chip::DType::F32;
  llvm::SmallVector<int64_t, 6> shape, strides;

  static DdrView dense(uint64_t addr, llvm::ArrayRef<int64_t> shape,
                       chip::DType t);
  int64_t numElements() const;
};

/// A 4-D DDR operand with explicit strides.
chip::Operand ddrOperand(uint64_t addr, std::array<int64_t, 4> shape,
                         std::array<int64_t, 4> strides, chip::DType t);
/// Dense row-major strides of a shape.
llvm::SmallVector<int64_t, 6> denseStrides(llvm::ArrayRef<int64_t> shape);

class CodegenContext {
public:
  CodegenContext(const chip::Target &target, std::vector<chip::DdrRegion> ddr);

  const chip::Target &target() const { return target_; }
  const std::vector<chip::DdrRegion> &ddrRegions() const { return ddr_; }
  uint32_t lanes() const { return target_.lanes; }
  /// LMEM per lane ops may allocate: the lane less a weight prefetch's
  /// reserved top.
  uint64_t laneBytes() const {
    return target_.lmem_bytes_per_lane - prefetchReserve_;
  }

  /// Starts code for `op`: frees all LMEM.
  void beginOp(mlir::Operation *op);
  /// Checks the instructions emitted since beginOp (errors name the op) and
  /// holds back the op's trailing stores.
  mlir::LogicalResult endOp();
  /// Calls `done` with the GDMA id after which every store of the last
  /// ended op has completed (once those stores are emitted).
  void whenStored(llvm::unique_function<void(uint32_t)> done);
  /// Emits the held-back stores (ahead of the loads emitted next).
  void flushStores();
  /// Whether a held-back store reads LMEM in [lo, hi) per lane.
  bool overlapsDeferred(uint64_t lo, uint64_t hi) const;
  /// Whether load(dst, ..., from) would first emit the held-back stores
  /// (it reads DDR they write or overwrites LMEM they read).
  bool loadWaitsForDeferred(const LBuf &dst, const chip::Operand &from) const;
  /// The earliest TIU instruction a held-back store waits for (UINT32_MAX
  /// when none is held back).
  uint32_t deferredTiuWait() const;
  /// Emits the held-back stores; call before taking the streams.
  void finish() { flushStores(); }
  mlir::Operation *op() const { return op_; }
  mlir::InFlightDiagnostic error() { return op_->emitOpError(); }

  /// Frees all LMEM of the op; later buffers are fenced on the earlier
  /// instructions touching their range.
  void freeAll();
  /// Allocates `bytesPerLane` in every lane (aligned); nullopt when full.
  std::optional<LBuf> alloc(uint64_t bytesPerLane);
  /// Like alloc, but starting in another LMEM bank than every address of
  /// `apart` (skipping to the next bank boundary when needed), so a TIU
  /// instruction reading this buffer and one of those pays no bank
  /// conflict; a plain alloc when no bank is free of them. It skips only
  /// while `keepFree` bytes per lane stay free for the op's later buffers.
  std::optional<LBuf> allocApart(uint64_t bytesPerLane,
                                 llvm::ArrayRef<uint64_t> apart,
                                 uint64_t keepFree = 0);
  /// The part [addr, addr + bytesPerLane) of an allocated buffer, fenced
  /// only on the earlier ops' instructions that touched that part.
  LBuf part(uint64_t addr, uint64_t bytesPerLane) const;
  uint64_t lmemFree() const;
  /// Where alloc(bytesPerLane) would start after an alloc(gap) (gap 0: none).
  uint64_t allocStart(uint64_t bytesPerLane, uint64_t gap = 0) const;
  /// Bytes per lane an LMEM tensor of this shape occupies.
  uint64_t lmemBytes(std::array<int64_t, 4> shape, chip::DType t) const;

  /// GDMA from any operand into LMEM buffer `dst`.
  uint32_t load(LBuf &dst, const chip::Operand &to, const chip::Operand &from);
  /// GDMA move from LMEM buffer `src` into LMEM buffer `dst` (it may move
  /// channels to other lanes), after the TIU instructions touching either.
  uint32_t moveLocal(LBuf &dst, const chip::Operand &to, LBuf &src,
                     const chip::Operand &from);
  /// GDMA gather of rows of the DDR `table` picked by the DDR `index`
  /// into the view `to` of LMEM buffer `dst` (dma_gather along `axis`).
  uint32_t gatherLocal(LBuf &dst, const chip::Operand &to,
                       const chip::Operand &table, const chip::Operand &index,
                       int axis);
  /// GDMA fill of the view `to` of LMEM buffer `dst` with a constant.
  uint32_t fillLocal(LBuf &dst, const chip::Operand &to, double value);
  /// GDMA from LMEM buffer `src` to DDR.
  uint32_t store(const chip::Operand &to, LBuf &src,
                 const chip::Operand &from);
  /// A TIU instruction reading/writing `bufs`.
  uint32_t tiu(const chip::Instruction &inst,
               llvm::ArrayRef<LBuf *> bufs);
  /// A GDMA instruction touching DDR only.
  uint32_t gdmaDdr(const chip::Instruction &inst);

  /// DDR-to-DDR copy of views of any rank (equal shapes; a source dim of 1
  /// broadcasts), coalescing dims and looping over dims beyond four.
  mlir::LogicalResult copy(const DdrView &dst, const DdrView &src);
  /// Fills a DDR view with a constant.
  mlir::LogicalResult fill(const DdrView &dst, double value);

  /// Compile-time data of a constant operand (a top.Weight), row-major.
  mlir::FailureOr<std::vector<float>> constant(mlir::Value v);
  /// The same for an integer constant (INT32 quantization parameters, which
  /// floats would round), read from its typed storage.
  mlir::FailureOr<std::vector<int64_t>> intConstant(mlir::Value v);

  /// Weight prefetch (WeightPrefetch.h): `loads` (DDR weight -> LMEM moves
  /// a later op makes, retargeted into the top `reserve` bytes of every
  /// lane) go out while the ops before it leave the DDR idle. Ops allocate
  /// below the reserve until endPrefetch.
  void beginPrefetch(uint64_t reserve, std::vector<PrefetchLoad> loads);
  /// The current op (begun) issues prefetch loads into the idle GDMA time
  /// after its own requests: `gaps[k]` cycles after its k-th, as timed on
  /// its own.
  void setPrefetchGaps(std::vector<double> gaps) {
    prefetchGaps_ = std::move(gaps);
  }
  /// Prefetch loads also go into `idle[t]` GDMA cycles during the
  /// network's TIU instruction t (as timed in an earlier emission).
  void setPrefetchIdle(std::vector<double> idle) {
    prefetchIdle_ = std::move(idle);
    countedTiu_ = builder_.tiuStream().size();
  }
  /// Unit `unit` begins: the prefetch loads for it (or an earlier unit) not
  /// yet issued are dropped (it loads those itself); those partly issued
  /// are completed.
  void dropUnissuedPrefetch(size_t unit);
  /// Releases the reserved LMEM (after the consuming op).
  void endPrefetch();

  chip::StreamBuilder &streams() { return builder_; }
  int64_t macs = 0;
  /// Concat operands a layer group copied into place while it computed
  /// (copyConcatOperand); their Concat copies them no more.
  llvm::SmallPtrSet<mlir::OpOperand *, 8> copiedAhead;

private:
  /// A per-lane LMEM byte range [lo, hi) and its last TIU / GDMA users.
  struct Region {
    uint64_t lo, hi;
    uint32_t tiu, gdma;
  };
  /// A held-back store with the LMEM range it reads.
  struct Deferred {
    chip::Instruction inst;
    uint64_t lo, hi;
  };
  void touch(const LBuf &b);
  /// Issues prefetch loads while the TIU work emitted since the op began
  /// covers the DDR time of its own GDMA requests and of the prefetch.
  void pumpPrefetch();
  /// Issues the next part of `p`'s load (`parts`: all of them).
  void issuePrefetchPart(
      PrefetchLoad &p,
      llvm::ArrayRef<std::pair<chip::Operand, chip::Operand>> parts);
  /// The issued prefetch load of `from` into a tile shaped like `to`.
  PrefetchLoad *prefetched(const chip::Operand &to, const chip::Operand &from);
  /// A load the prefetch served: its destination's per-lane LMEM range
  /// [lo, hi) is read from the reserved LMEM instead, `delta` bytes on,
  /// until something writes the range.
  struct Alias {
    uint64_t lo, hi;
    int64_t delta;
    uint32_t gdma;
    chip::Operand to, at;
  };
  /// Rewrites `o` (an LMEM source) to read the reserved LMEM when aliases
  /// cover it wholly; raises `wait` to their loads. Else moves the aliased
  /// data it overlaps into place (raising `wait` to the moves) and drops
  /// those aliases.
  void readThroughAliases(chip::Operand &o, uint32_t &wait);
  /// Drops the aliases over LMEM about to be written by `o`; with
  /// `materialize`, their data moves into place first.
  void dropAliases(const chip::Operand &o, bool materialize);
  std::vector<Alias> aliases_;
  /// A store of an LMEM buffer to DDR whose bytes are still in place: a
  /// later load of that DDR copies them within LMEM instead (no DDR
  /// latency, no wait for the store). Any write over either forgets it.
  struct Forward {
    chip::Operand ddr, lmem;
    uint64_t lo, hi; ///< per-lane bytes of `lmem`
    uint32_t tiu;    ///< the last TIU instruction that touched them
    uint32_t gdma;   ///< the GDMA instruction that wrote them, if any
  };
  std::vector<Forward> forwards_;
  /// The LMEM bytes this op's forward copies read, and the copies' ids.
  llvm::SmallVector<Region, 4> forwardReads_;
  /// LMEM copies (destination, source) that serve a load (none: the bytes
  /// are in place), the bytes per lane they read and Forward's tiu, gdma.
  struct ForwardCopy {
    llvm::SmallVector<std::pair<chip::Operand, chip::Operand>, 4> moves;
    uint64_t lo = 0, hi = 0;
    uint32_t tiu = 0, gdma = 0;
  };
  /// The copies that serve a load of `from` into `to` from a forward: none
  /// where it was stored from, the stored view in its layout, each image
  /// of the load from a run of the stored image's channels, or each
  /// stored image into a run of the load's channels.
  std::optional<ForwardCopy> forwardFor(const chip::Operand &to,
                                        const chip::Operand &from) const;
  /// Forgets the forwards whose LMEM bytes [lo, hi) per lane overwrite, or
  /// whose DDR bytes DDR operand `ddr` overwrites.
  void clobberForwards(uint64_t lo, uint64_t hi);
  void clobberForwards(const chip::Operand &ddr);
  /// A GDMA instruction (its LMEM or DDR destination clobbers forwards).
  uint32_t emitGdma(const chip::Instruction &inst, uint32_t wait);
  /// Reserved LMEM the TIU instruction being emitted reads through aliases.
  llvm::SmallVector<LBuf, 4> aliasReads_;
  /// Folds the buffers touched since the last fold into the granule fences.
  void fold();

  const chip::Target &target_;
  std::vector<chip::DdrRegion> ddr_;
  chip::StreamBuilder builder_;
  mlir::Operation *op_ = nullptr;
  /// Allocation: bottom-up ops use [0, lmemUsed_), top-down ones
  /// [lmemLow_, lane size); successive ops alternate.
  bool topDown_ = true;
  uint64_t lmemUsed_ = 0, lmemLow_ = 0;
  /// Last TIU / GDMA id touching each 64-byte LMEM granule (folded).
  std::vector<uint32_t> granTiu_, granGdma_;
  llvm::SmallVector<Region, 16> touched_;
  /// LMEM ranges read by the current op's stores, by GDMA id.
  llvm::SmallVector<std::pair<uint32_t, Region>, 16> storeRanges_;
  std::vector<Deferred> deferred_;
  /// LMEM ranges of the held-back stores emitted during the current op:
  /// buffers allocated over them before wait for them when computed on.
  llvm::SmallVector<std::pair<uint64_t, uint64_t>, 4> flushed_;
  std::vector<llvm::unique_function<void(uint32_t)>> waiting_;
  size_t firstTiu_ = 0, firstGdma_ = 0;
  uint64_t prefetchReserve_ = 0;
  std::vector<PrefetchLoad> prefetch_;

  /// The current op's idle GDMA time (setPrefetchGaps) not yet filled, its
  /// own requests counted so far, the stream prefix counted.
  std::vector<double> prefetchGaps_;
  double prefetchBudget_ = 0;
  size_t ownGdma_ = 0, countedGdma_ = 0;
  /// setPrefetchIdle's, and the TIU instructions counted.
  std::vector<double> prefetchIdle_;
  size_t countedTiu_ = 0;
  /// Prefetch loads, and held-back stores of the previous op emitted during
  /// this one: not the op's own requests.
  llvm::DenseSet<uint32_t> prefetchIds_, flushedIds_;
};

//===----------------------------------------------------------------------===//
// Layer groups
//===----------------------------------------------------------------------===//

/// A whole tensor resident in LMEM inside a layer group.
struct LocalTensor {
  chip::Operand lmem;
  LBuf *buf = nullptr;
  /// A weight loaded in parts of its columns (localColumnParts): the GDMA
  /// instruction of each part, in column order. Empty: one load. Part p
  /// (W / parts columns) is dense in `lmem`'s layout at lmem.addr + p
  /// times its bytes per lane, so no instruction reading one part spans
  /// another's bytes.
  llvm::SmallVector<uint32_t, 8> partLoads;
};

/// What CodegenInterface::codegenLocal computes on: one entry per op operand
/// (no buffer for a none operand), the result and scratch tensors.
struct LocalOperands {
  llvm::SmallVector<LocalTensor, 4> operands;
  LocalTensor result;
  llvm::SmallVector<LocalTensor, 2> temps;
  CodegenContext *ctx = nullptr;
  /// In a group sliced along H: the result rows [first, second) computed,
  /// each operand holding the rows localInputRows named. Unset: whole.
  std::optional<std::pair<int64_t, int64_t>> rows;
  /// The group's choice of spreading over idle lanes (GroupPlan::lanes).
  LaneSplit lanes;
  /// Emits a TIU instruction touching every buffer of the op.
  uint32_t emit(const chip::Instruction &inst);
};

//===----------------------------------------------------------------------===//
// Tiling
//===----------------------------------------------------------------------===//

/// One tile of a 4-D [N, C, H, W] iteration space.
struct Tile {
  std::array<int64_t, 4> off, size;
};

/// Splits `shape` into tiles whose LMEM footprint (channels across lanes)
/// is at most `maxPerLane` elements per lane, keeping W, then H, then N
/// whole when possible and stacking channels per lane when all else fits.
llvm::SmallVector<Tile> tile4D(std::array<int64_t, 4> shape,
                               int64_t maxPerLane, uint32_t lanes);

/// A DDR input of a streamed elementwise computation: 4-D strides into the
/// tensor; a dim of extent 1 broadcasts over the iteration space.
struct StreamInput {
  uint64_t addr;
  std::array<int64_t, 4> shape, strides;
};

/// A small DDR tensor every tile reads whole (a lut table): loaded once.
struct StreamConst {
  uint64_t addr;
  std::array<int64_t, 4> shape;
  chip::DType dtype;
};

/// Element types of a streamed computation other than its output's, and
/// its constants.
struct StreamOptions {
  /// Per input (missing or Invalid: the output's dtype).
  llvm::SmallVector<chip::DType, 4> inTypes;
  /// Of the scratch buffers (Invalid: the output's dtype).
  chip::DType tempType = chip::DType::Invalid;
  llvm::SmallVector<StreamConst, 1> consts;
};

/// The LMEM operands of one tile handed to a streamed computation.
struct StreamTile {
  chip::Operand out;
  llvm::SmallVector<chip::Operand, 4> ins, temps, consts;
  llvm::SmallVector<LBuf *, 8> bufs;
  CodegenContext *ctx;
  /// Emits a TIU instruction touching every buffer of the tile.
  uint32_t emit(const chip::Instruction &inst) { return ctx->tiu(inst, bufs); }
};

/// Streams a 4-D elementwise computation through LMEM: tiles the output
/// `shape`, loads each input tile (inputs invariant over all tiles once),
/// calls `compute` and stores the result, double-buffering loads against
/// compute. `numTemps` scratch buffers of the tile's shape are provided.
/// Streaming owns the whole LMEM: it frees every earlier buffer.
mlir::LogicalResult
streamElementwise(CodegenContext &ctx, std::array<int64_t, 4> shape,
                  uint64_t outAddr, std::array<int64_t, 4> outStrides,
                  llvm::ArrayRef<StreamInput> ins, chip::DType dtype,
                  unsigned numTemps,
                  llvm::function_ref<void(StreamTile &)> compute,
                  const StreamOptions &opts = {});

/// The same for dense tensors of `elements` values with identical layout:
/// the data is viewed as [1, lanes, 1, W] rows (plus a tail).
mlir::LogicalResult
streamFlat(CodegenContext &ctx, int64_t elements, uint64_t outAddr,
           llvm::ArrayRef<uint64_t> inAddrs, chip::DType dtype,
           unsigned numTemps, llvm::function_ref<void(StreamTile &)> compute,
           const StreamOptions &opts = {});

/// Copies the operand `use` of a tpu.Concat to its place in the Concat's
/// DDR result, unless tpu-assign-address placed it there already.
mlir::LogicalResult copyConcatOperand(CodegenContext &ctx, mlir::OpOperand &use);

} // namespace backend
} // namespace tpuc
#endif
