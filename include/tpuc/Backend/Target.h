//===- Target.h - Chip descriptions for the compiler ------------*- C++ -*-===//
#ifndef TPUC_BACKEND_TARGET_H
#define TPUC_BACKEND_TARGET_H
#include "tpuc/Chip/Target.h"
#include "mlir/IR/BuiltinOps.h"
#include <string>

namespace tpuc {
namespace backend {
/// Path of a chip description: `chip` itself when it names a file (has a
/// '/' or ends in .json), else <chips dir>/<chip>.json, the chips dir being
/// $TPUC_CHIP_DIR or the source tree's chips/.
std::string chipPath(const std::string &chip);
/// Loads a chip by name or path; the message names the chip on failure.
chip::Status loadChip(const std::string &chip, chip::Target &out);
/// The same for a pass: a failure becomes an error diagnostic on `module`.
mlir::LogicalResult loadChip(mlir::ModuleOp module, const std::string &chip,
                             chip::Target &out);
} // namespace backend
} // namespace tpuc
#endif
