//===- Target.h - Chip descriptions for the compiler ------------*- C++ -*-===//
#ifndef TPUC_BACKEND_TARGET_H
#define TPUC_BACKEND_TARGET_H
#include "tpuc/Chip/Target.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include <string>
#include <vector>

namespace tpuc {
namespace backend {
/// Directories searched for chip descriptions, in order: $TPUC_CHIP_DIR, the
/// installed package's chips/ (found from where this code was loaded, e.g.
/// tpuc/_bin/../chips), and the source tree's chips/.
std::vector<std::string> chipDirs();
/// Path of a chip description: `chip` itself when it names a file (has a
/// '/' or ends in .json), else the first <dir>/<chip>.json of chipDirs().
std::string chipPath(const std::string &chip);
/// Loads a chip by name or path; the message names the chip on failure.
chip::Status loadChip(const std::string &chip, chip::Target &out);
/// The same for a pass: a failure becomes an error diagnostic on `module`.
mlir::LogicalResult loadChip(mlir::ModuleOp module, const std::string &chip,
                             chip::Target &out);
/// The prologue of a backend pass: loads the chip (a failure is an error on
/// `module`) and returns the entry function, null when the module has none.
mlir::FailureOr<mlir::func::FuncOp>
loadChipAndEntry(mlir::ModuleOp module, const std::string &chip,
                 chip::Target &out);
} // namespace backend
} // namespace tpuc
#endif
