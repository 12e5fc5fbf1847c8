//===- LayerGroup.h - Ops that run with LMEM-resident tensors ---*- C++ -*-===//
//
// A layer group is a run of consecutive Tpu ops whose whole tensors stay in
// local memory: the group's inputs and weights are loaded once, every op
// computes LMEM to LMEM (CodegenInterface::codegenLocal), and only results
// used after the group (or returned) are stored. tpu-layer-group marks the
// groups with kGroupAttr; tpu-codegen emits them with emitLayerGroup. Both
// use planLayerGroup, so a group the pass forms is one the codegen can place.
// Tensors keep their own element types in LMEM (INT8 ops hold INT8 filters,
// INT32 biases and requant tables; scratch may be INT32 accumulators).
// Elementwise groups on tensors that are not NCHW use a rows view instead
// and, when too big, run as a loop over chunks of rows (see planLayerGroup).
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_BACKEND_LAYERGROUP_H
#define TPUC_BACKEND_LAYERGROUP_H
#include "tpuc/Backend/Codegen.h"
#include "mlir/IR/Operation.h"
#include <array>
#include <vector>

namespace tpuc {
namespace backend {

/// Group id written on every op of a group by tpu-layer-group.
constexpr llvm::StringLiteral kGroupAttr = "tpu.group";

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
  };
  std::vector<Buffer> buffers;
  /// Per op: buffer of each operand (-1: none), of the result, of temps.
  std::vector<llvm::SmallVector<int, 4>> operands;
  std::vector<int> results;
  std::vector<llvm::SmallVector<int, 2>> temps;
  /// Per op: whether its result is used after the group or returned.
  std::vector<bool> stored;
  /// Per-lane LMEM bytes of the group.
  uint64_t bytes = 0;
  /// Groups in the rows view ([1, C, rows, W], not NCHW) run as a loop over
  /// chunks of `chunk` rows per lane when the whole tensors do not fit.
  int64_t rows = 0, chunk = 0;
};

/// Whether `op` can be a member of a layer group at all.
bool canJoinLayerGroup(mlir::Operation *op);

/// Places the tensors of `ops` (consecutive, each canJoinLayerGroup) in
/// LMEM reusing dead tensors' space; failure when they do not fit.
mlir::FailureOr<GroupPlan> planLayerGroup(llvm::ArrayRef<mlir::Operation *> ops,
                                          const chip::Target &target);

/// Emits a group between ctx.beginOp and ctx.endOp. Errors are diagnostics.
mlir::LogicalResult emitLayerGroup(CodegenContext &ctx,
                                   llvm::ArrayRef<mlir::Operation *> ops);

} // namespace backend
} // namespace tpuc
#endif
