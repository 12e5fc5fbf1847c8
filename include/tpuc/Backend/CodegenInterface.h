//===- CodegenInterface.h - Tpu op -> chip instructions ---------*- C++ -*-===//
#ifndef TPUC_BACKEND_CODEGENINTERFACE_H
#define TPUC_BACKEND_CODEGENINTERFACE_H
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"
#include <vector>

namespace tpuc {
namespace chip {
struct Operand;
} // namespace chip
namespace backend {
class CodegenContext;
struct LocalOperands;
struct LBuf;
/// CodegenInterface::localInputRows of elementwise ops: the same rows of an
/// operand of the result's height, row 0 of one broadcast along H.
bool elementwiseInputRows(mlir::Operation *op, unsigned operandIndex,
                          int64_t lo, int64_t hi, int64_t &inLo,
                          int64_t &inHi);
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
