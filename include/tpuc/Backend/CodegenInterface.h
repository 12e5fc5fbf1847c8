//===- CodegenInterface.h - Tpu op -> chip instructions ---------*- C++ -*-===//
#ifndef TPUC_BACKEND_CODEGENINTERFACE_H
#define TPUC_BACKEND_CODEGENINTERFACE_H
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>
#include <vector>

namespace tpuc {
namespace chip {
struct Operand;
struct Target;
} // namespace chip
namespace backend {
class CodegenContext;
struct LocalOperands;
struct LBuf;
/// How an op in a layer group spreads its work over idle lanes
/// (CodegenInterface::localLaneParts): over `parts` times its result's
/// lanes, its partial sums added by LMEM moves and adds (`moves`) or by a
/// 1x1 conv reading across the lanes.
struct LaneSplit {
  unsigned parts = 1;
  bool moves = false;
};

/// CodegenInterface::localInputRows of elementwise ops: the same rows of an
/// operand of the result's height, row 0 of one broadcast along H.
bool elementwiseInputRows(mlir::Operation *op, unsigned operandIndex,
                          int64_t lo, int64_t hi, int64_t &inLo,
                          int64_t &inHi);
/// How an operand of shape `in` broadcasts against a result of shape `out`
/// (rank >= 3) in the matrix view [batch, rows, 1, cols], where the batch
/// is every dim before the last two: the operand has the result's last
/// two dims, and its batch dims are the result's up to a split and 1 after
/// it (`heldOuter`: it holds the outer `outer` batches and is broadcast
/// over the inner `inner`, e.g. an attention mask [B, 1, L, L] over the
/// heads of scores [B, heads, L, L]) or 1 up to the split and the result's
/// after it (`!heldOuter`, e.g. a bias [1, heads, L, L] over windows);
/// one with no batch broadcasts over all (`outer` 1). Nothing for
/// operands of the result's size or other shapes.
struct BatchBroadcast {
  int64_t outer, inner;
  bool heldOuter;
};
std::optional<BatchBroadcast> batchBroadcast(llvm::ArrayRef<int64_t> in,
                                             llvm::ArrayRef<int64_t> out);
} // namespace backend
} // namespace tpuc

#include "tpuc/Backend/CodegenInterface.h.inc"

namespace tpuc {
namespace backend {
/// Attaches CodegenInterface to the Tpu ops (a dialect extension).
void registerCodegenExternalModels(mlir::DialectRegistry &registry);
} // namespace backend
} // namespace tpuc
#endif
