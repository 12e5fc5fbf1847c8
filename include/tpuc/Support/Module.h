#ifndef TPUC_SUPPORT_MODULE_H
#define TPUC_SUPPORT_MODULE_H
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace tpuc {
/// The network's function: `main`, or the module's only function; null when
/// neither exists.
mlir::func::FuncOp getEntryFunction(mlir::ModuleOp module);
} // namespace tpuc
#endif
