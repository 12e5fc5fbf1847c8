//===- Target.cpp - Chip descriptions by name or path ---------------------===//
#include "tpuc/Backend/Target.h"
#include <cstdlib>

namespace tpuc {
namespace backend {

std::string chipPath(const std::string &chip) {
  bool isPath = chip.find('/') != std::string::npos ||
                (chip.size() > 5 && chip.compare(chip.size() - 5, 5, ".json") == 0);
  if (isPath)
    return chip;
  const char *dir = std::getenv("TPUC_CHIP_DIR");
  std::string base = dir && *dir ? dir : TPUC_CHIPS_DIR;
  return base + "/" + chip + ".json";
}

chip::Status loadChip(const std::string &chip, chip::Target &out) {
  if (chip.empty())
    return chip::Status::error("no chip given");
  return chip::loadTarget(chipPath(chip), out)
      .withContext("chip '" + chip + "'");
}

mlir::LogicalResult loadChip(mlir::ModuleOp module, const std::string &chip,
                             chip::Target &out) {
  chip::Status st = loadChip(chip, out);
  if (!st.ok())
    return module.emitError() << st.message();
  return mlir::success();
}

} // namespace backend
} // namespace tpuc
