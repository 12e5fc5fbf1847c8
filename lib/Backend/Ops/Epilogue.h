//===- Epilogue.h - Ops applied to a MAC op's output tiles -----*- C++ -*-===//
//
// A tile epilogue group (tpu.Group with tile_epilogue) runs its first op, a
// MatMul or Conv, with that op's own tiled code and applies the ops after it
// to each finished output tile in LMEM before the store, so the first op's
// result never goes to DDR. The epilogue ops' other operands are weights,
// loaded once before the tiles, or residuals: tensors of the result's shape
// that the tiled code loads tile by tile next to its output tile.
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_LIB_BACKEND_OPS_EPILOGUE_H
#define TPUC_LIB_BACKEND_OPS_EPILOGUE_H
#include "Common.h"
#include <deque>

namespace tpuc {
namespace backend {

/// Whether operand `index` of epilogue op `op` is a residual: an activation
/// (not a weight) of the op's result shape, read tile by tile.
bool isResidualOperand(mlir::Operation *op, unsigned index);

/// The common structure of a tile epilogue: each op elementwise on the
/// previous result (its only use, as the first operand), of its shape and
/// element type, able to run in a layer group. `allowResiduals` admits
/// residual operands and ops with scratch (temps); otherwise every other
/// operand is a weight with a local layout.
bool isElementwiseEpilogue(mlir::Operation *head,
                           llvm::ArrayRef<mlir::Operation *> epilogue,
                           bool allowResiduals);

struct TileEpilogue {
  llvm::SmallVector<mlir::Operation *, 2> ops;
  /// Per op: its operands after the first (weights loaded once; residuals
  /// empty here, given per tile to apply).
  llvm::SmallVector<llvm::SmallVector<LocalTensor, 2>, 2> weights;
  /// The residual operands (op, operand index) in order, and their tensors.
  llvm::SmallVector<std::pair<size_t, unsigned>, 2> residualSlots;
  llvm::SmallVector<Tensor, 2> residuals;
  /// The most scratch tiles one op needs, and their largest element size.
  unsigned temps = 0;
  int64_t tempBytes = 0;
  std::deque<LBuf> bufs;
  uint64_t outAddr = 0;
  bool broken = false;

  /// Collects the ops after the head (`ops`, the group's members) and the
  /// DDR address of the last one's result, which the tiles are stored to.
  mlir::LogicalResult init(CodegenContext &ctx,
                           llvm::ArrayRef<mlir::Operation *> epilogue);
  /// Loads the ops' weights into LMEM and finds the residuals; before the
  /// head op sizes its tiles.
  mlir::LogicalResult load(CodegenContext &ctx);
  /// LMEM bytes per element of an output tile the residual tiles (in
  /// `slots` buffers each) and the scratch tiles take.
  int64_t bytesPerElement(unsigned slots) const;
  /// Runs the ops in place on `tile` of `buf`, with the residual tiles (in
  /// residualSlots order) and the scratch buffers (of `temps` entries).
  void apply(CodegenContext &ctx, LBuf &buf, const chip::Operand &tile,
             llvm::ArrayRef<LocalTensor> residualTiles = {},
             llvm::ArrayRef<LBuf *> tempBufs = {});
};

} // namespace backend
} // namespace tpuc
#endif
