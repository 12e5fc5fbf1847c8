//===- CodegenInterface.h - Tpu op -> chip instructions ---------*- C++ -*-===//
#ifndef TPUC_BACKEND_CODEGENINTERFACE_H
#define TPUC_BACKEND_CODEGENINTERFACE_H
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"
#include <vector>

namespace tpuc {
namespace backend {
class CodegenContext;
struct LocalOperands;
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
