#include "tpuc/Support/Module.h"

mlir::func::FuncOp tpuc::getEntryFunction(mlir::ModuleOp module) {
  mlir::func::FuncOp only;
  unsigned count = 0;
  for (auto f : module.getOps<mlir::func::FuncOp>()) {
    if (f.getName() == "main")
      return f;
    only = f, ++count;
  }
  return count == 1 ? only : mlir::func::FuncOp();
}
