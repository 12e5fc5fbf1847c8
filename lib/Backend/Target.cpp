//===- Target.cpp - Chip descriptions by name or path ---------------------===//
#include "tpuc/Backend/Target.h"
#include "tpuc/Support/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>

namespace tpuc {
namespace backend {

namespace {
/// Directory of the executable or shared library this code was loaded from:
/// build/bin for tpuc-opt in the build tree, tpuc/_bin or
/// tpuc/mlir/_mlir_libs in an installed package.
std::string loadedFromDir() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&chipDirs), &info) || !info.dli_fname)
    return "";
  llvm::SmallString<256> path;
  if (llvm::sys::fs::real_path(info.dli_fname, path))
    return "";
  return llvm::sys::path::parent_path(path).str();
}
} // namespace

std::vector<std::string> chipDirs() {
  std::vector<std::string> dirs;
  if (const char *env = std::getenv("TPUC_CHIP_DIR"); env && *env)
    dirs.push_back(env);
  // The package's chips/ (tpuc/chips) is a sibling of a parent of the
  // directory the code was loaded from; the first one that exists wins.
  std::string here = loadedFromDir();
  llvm::StringRef dir = here;
  for (int up = 0; up < 3 && !dir.empty(); ++up) {
    llvm::SmallString<256> candidate(dir);
    llvm::sys::path::append(candidate, "chips");
    if (llvm::sys::fs::is_directory(candidate)) {
      dirs.push_back(candidate.str().str());
      break;
    }
    dir = llvm::sys::path::parent_path(dir);
  }
  llvm::SmallString<256> source;
  if (llvm::sys::fs::real_path(TPUC_CHIPS_DIR, source))
    source = TPUC_CHIPS_DIR;
  if (std::find(dirs.begin(), dirs.end(), source.str()) == dirs.end())
    dirs.push_back(source.str().str());
  return dirs;
}

static bool isChipPath(const std::string &chip) {
  return chip.find('/') != std::string::npos ||
         (chip.size() > 5 && chip.compare(chip.size() - 5, 5, ".json") == 0);
}

std::string chipPath(const std::string &chip) {
  if (isChipPath(chip))
    return chip;
  std::vector<std::string> dirs = chipDirs();
  for (const std::string &dir : dirs) {
    std::string p = dir + "/" + chip + ".json";
    if (llvm::sys::fs::is_regular_file(p))
      return p;
  }
  return dirs.front() + "/" + chip + ".json";
}

chip::Status loadChip(const std::string &chip, chip::Target &out) {
  if (chip.empty())
    return chip::Status::error("no chip given");
  std::string path = chipPath(chip);
  if (!isChipPath(chip) && !llvm::sys::fs::exists(path)) {
    std::string searched;
    for (const std::string &dir : chipDirs())
      searched += (searched.empty() ? "" : ", ") + dir;
    return chip::Status::error("chip '" + chip +
                               "': no description " + chip + ".json in " + searched);
  }
  return chip::loadTarget(path, out).withContext("chip '" + chip + "'");
}

mlir::LogicalResult loadChip(mlir::ModuleOp module, const std::string &chip,
                             chip::Target &out) {
  chip::Status st = loadChip(chip, out);
  if (!st.ok())
    return module.emitError() << st.message();
  return mlir::success();
}

mlir::FailureOr<mlir::func::FuncOp>
loadChipAndEntry(mlir::ModuleOp module, const std::string &chip,
                 chip::Target &out) {
  if (mlir::failed(loadChip(module, chip, out)))
    return mlir::failure();
  return getEntryFunction(module);
}

} // namespace backend
} // namespace tpuc
