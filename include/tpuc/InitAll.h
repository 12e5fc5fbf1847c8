#ifndef TPUC_INITALL_H
#define TPUC_INITALL_H
#include "mlir/IR/DialectRegistry.h"

namespace tpuc {
/// Dialects a tpuc module may contain.
void registerAllDialects(mlir::DialectRegistry &registry);
/// tpuc's passes plus the upstream ones its pipelines use.
void registerAllPasses();
} // namespace tpuc
#endif
