//===- LayerGroup.h - Ops that run with LMEM-resident tensors ---*- C++ -*-===//
//
// A layer group is a run of consecutive Tpu ops whose whole tensors stay in
// local memory: the group's inputs and weights are loaded once, every op
// computes LMEM to LMEM (CodegenInterface::codegenLocal), and only results
// used after the group (or returned) are stored. tpu-layer-group moves the
// ops of each group into a tpu.Group region, recording the plan it chose
// (slices, chunk) on it; tpu-codegen emits it with emitLayerGroup, planning
// with those decisions, so a group the pass forms is one the codegen places.
// Tensors keep their own element types in LMEM (INT8 ops hold INT8 filters,
// INT32 biases and requant tables; scratch may be INT32 accumulators).
// Elementwise groups on tensors that are not NCHW use a rows view instead
// and, when too big, run as a loop over chunks of rows (see planLayerGroup).
// NCHW groups too big for whole tensors run as a loop over slices of the
// batch (N, GroupPlan::nSlices) and of rows (H), recomputing the halos
// their windows need (GroupPlan::slices).
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_BACKEND_LAYERGROUP_H
#define TPUC_BACKEND_LAYERGROUP_H
#include "tpuc/Backend/Codegen.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "mlir/IR/Operation.h"
#include <array>
#include <vector>

namespace tpuc {
namespace backend {

/// Where each tensor of a group lives in LMEM.
struct GroupPlan {
  enum class Kind { Input, Weight, Result, Temp };
  struct Buffer {
    Kind kind;
    mlir::Value value; // the tensor (none for temps)
    std::array<int64_t, 4> shape;
    chip::DType dtype;
    /// Op positions in the group between which the buffer is live.
    int start, end;
    /// Per-lane byte offset from the group's LMEM base and size.
    uint64_t offset = 0, bytes = 0;
    /// Holds `chunk` of the `rows` rows per lane of a rows-view tensor.
    bool chunked = false;
    /// Sliced groups: rows (H) of the whole tensor; the buffer holds at
    /// most shape[2] of them. Inputs and stored results alternate between
    /// two slots, so one slice's loads and stores overlap another's compute.
    int64_t height = 0;
    int slots = 1;
    /// A view's result (GroupPlan::views): the buffer whose space it
    /// shares, in its own layout of the same bytes, from `aliasOffset`
    /// bytes into each lane's; -1 for none.
    int alias = -1;
    uint64_t aliasOffset = 0;
  };
  /// Rows [lo, hi) along H; empty when hi <= lo.
  struct Rows {
    int64_t lo = 0, hi = 0;
    int64_t size() const { return hi > lo ? hi - lo : 0; }
  };
  std::vector<Buffer> buffers;
  /// Per op: buffer of each operand (-1: none), of the result, of temps.
  std::vector<llvm::SmallVector<int, 4>> operands;
  std::vector<int> results;
  std::vector<llvm::SmallVector<int, 2>> temps;
  /// Per op: how it spreads over idle lanes (whole-tensor groups only
  /// move partial sums: a sliced group's GDMA queue holds the next slice's
  /// loads ahead of the moves).
  std::vector<LaneSplit> lanes;
  /// Per op: whether its result is used after the group or returned.
  std::vector<bool> stored;
  /// Per op: whether the group loads its result (CodegenInterface::
  /// localLoad) instead of computing it; its operands have no buffers.
  std::vector<bool> loaded;
  /// Per op: whether its result is a view of its first operand's bytes
  /// (CodegenInterface::localView): its buffer aliases the operand's, and
  /// the op emits no instruction (only its store, when stored).
  std::vector<bool> views;
  /// Per op (empty: none): pairs (from, to) of buffers holding one tensor
  /// with its batch folded into the rows and not (see foldBatches); after
  /// the op, GDMA moves copy `from` into `to`, an image at a time, across
  /// the lanes.
  std::vector<llvm::SmallVector<std::pair<int, int>, 2>> refolds;
  /// Per op with refolds or lane moves (CodegenInterface::localGdmaMoves;
  /// else -1): the loads of the ops from this one on
  /// wait behind its moves in the GDMA's queue (up to the next cut), so the
  /// moves need not wait for loads the TIU needs much later.
  std::vector<int> loadCuts;
  /// Per-lane LMEM bytes of the group.
  uint64_t bytes = 0;
  /// Groups in the rows view ([1, C, rows, W], not NCHW) run as a loop over
  /// chunks of `chunk` rows per lane when the whole tensors do not fit.
  int64_t rows = 0, chunk = 0;
  /// NCHW groups whose whole tensors do not fit run as a loop over
  /// `slices` slices of their results' rows: each slice computes the rows
  /// its stored results and the next ops' windows need (halos recomputed).
  int64_t slices = 1;
  /// NCHW groups of a batch run as a loop over `nSlices` equal slices of
  /// the batch (N) too, each (in `slices` slices of rows) computing its
  /// images: no halo. Input, result and temp buffers hold one slice's
  /// images (shape[0]); `batch` is the whole tensors' N.
  int64_t nSlices = 1, batch = 1;
  /// Whether the group runs as a loop over slices (along N or H).
  bool looped() const { return slices > 1 || nSlices > 1; }
  /// Whether buffer `b` holds a tensor of shape `v` in its own NCHW layout
  /// (whole rows, not chunks; its slice's rows when sliced along H), as a
  /// result stored into a Concat's strided DDR blocks must be.
  bool holdsNchw(const Buffer &b, llvm::ArrayRef<int64_t> v) const {
    return !b.chunked && v.size() == 4 && b.shape[0] == v[0] &&
           b.shape[1] == v[1] && b.shape[3] == v[3] &&
           (slices > 1 ? b.height : b.shape[2]) == v[2];
  }
  /// Per-lane bytes of one of the two halves a rows-view group in chunks
  /// alternates between (chunk c in half c % 2, so the loads of chunk c + 1
  /// overlap the compute of chunk c) when twice its buffers fit in `lmem`
  /// bytes per lane; 0 when it holds one set.
  uint64_t pingPongHalf(uint64_t lmem) const {
    uint64_t half = (bytes + 63) / 64 * 64;
    return rows && chunk < rows && 2 * half <= lmem ? half : 0;
  }
  /// Per slice: the rows of each input and result buffer held.
  std::vector<std::vector<Rows>> held;
  /// Per slice and op: the rows of each operand it reads (inside the held
  /// ones) and the rows of its result stored (those no earlier slice did).
  std::vector<std::vector<llvm::SmallVector<Rows, 4>>> reads;
  std::vector<std::vector<Rows>> storedRows;
  /// Per slice and op: the rows of its result it computes, and the first
  /// of the held ones it copies instead from the previous slice, which
  /// computed them (a halo carried, not recomputed: see sliceRows); held =
  /// carried + computed.
  std::vector<std::vector<Rows>> computed, carried;
};

/// Whether `op` can be a member of a layer group at all.
bool canJoinLayerGroup(mlir::Operation *op);

/// Whether the DDR buffer of `v` holds its data when a layer group of
/// `members` starts: `v` is not computed by a member, or by one that only
/// views (aliases) such a value's buffer, as a Reshape.
bool inDdrBeforeGroup(mlir::Value v, llvm::ArrayRef<mlir::Operation *> members);

/// Whether a layer group of `members` stores the result of member `op` to
/// DDR: it is used after the group, or a member loads from it
/// (CodegenInterface::localLoad of an op that cannot compute it in LMEM)
/// and it is not there already.
bool isStoredInGroup(mlir::Operation *op,
                     llvm::ArrayRef<mlir::Operation *> members);

/// Places the tensors of `ops` (consecutive, each canJoinLayerGroup) in
/// LMEM reusing dead tensors' space; failure when they do not fit.
mlir::FailureOr<GroupPlan> planLayerGroup(llvm::ArrayRef<mlir::Operation *> ops,
                                          const chip::Target &target);

/// The plan of `ops` with the decisions a tpu.Group records: `nSlices` of
/// the batch and `slices` of rows along H (1: whole) and, in the rows view,
/// `chunk` rows per lane (0: all); failure when that does not fit.
mlir::FailureOr<GroupPlan> planLayerGroup(llvm::ArrayRef<mlir::Operation *> ops,
                                          const chip::Target &target,
                                          int64_t nSlices, int64_t slices,
                                          int64_t chunk);

/// Estimated cycles of `ops` run as the group `plan`: loads, compute and
/// stores overlapping as the emitted code lets them (see LayerGroup.cpp).
double estimateGroupCycles(llvm::ArrayRef<mlir::Operation *> ops,
                           const GroupPlan &plan, const chip::Target &target);

/// Estimated TIU cycles of `op` in a group: its result held on `held`
/// channels, spread over idle lanes as `lanes` says.
double estimateLocalTiuCycles(mlir::Operation *op, const chip::Target &target,
                              int64_t held, LaneSplit lanes);

/// Writes `plan` for `ops` readably: one line per LMEM buffer (kind,
/// tensor, shape, dtype, per-lane offset and size, live range), and for a
/// sliced group the rows each input and result holds per slice.
void printGroupPlan(llvm::raw_ostream &os,
                    llvm::ArrayRef<mlir::Operation *> ops,
                    const GroupPlan &plan);

/// Whether `ops` can run as a tile epilogue group (tpu.Group's
/// tile_epilogue): the head (a MatMul or Conv) with its own tiled code,
/// then elementwise ops each reading the previous one's result, applied in
/// place to every output tile before its store
/// (CodegenInterface::takesTileEpilogue). The head may follow a prologue
/// it applies to each input tile after its load instead
/// (CodegenInterface::takesTilePrologue; hasTilePrologue), then the ops
/// after it may be none.
bool isTileEpilogue(llvm::ArrayRef<mlir::Operation *> ops);
/// Whether the first of `ops` is a prologue of the second, their head.
bool hasTilePrologue(llvm::ArrayRef<mlir::Operation *> ops);
/// Emits the tile epilogue group `ops` (see isTileEpilogue).
mlir::LogicalResult emitTileEpilogue(CodegenContext &ctx,
                                     llvm::ArrayRef<mlir::Operation *> ops);
/// The hidden columns per chunk when the tile epilogue group `ops` is a
/// fused matmul pair (a MatMul, elementwise ops, then a second MatMul by a
/// weight reading the last result: a transformer's FFN) on `target`, which
/// runs in chunks of the hidden columns; 0 when `ops` is not one or its
/// buffers do not fit local memory.
int64_t fusedPairChunk(llvm::ArrayRef<mlir::Operation *> ops,
                       const chip::Target &target);
/// Emits a group between ctx.beginOp and ctx.endOp. Errors are diagnostics.
mlir::LogicalResult emitLayerGroup(CodegenContext &ctx, tpu::GroupOp group);

} // namespace backend
} // namespace tpuc
#endif
