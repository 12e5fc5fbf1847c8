#ifndef TPUC_SUPPORT_WEIGHTSTORE_H
#define TPUC_SUPPORT_WEIGHTSTORE_H
// Process-wide cache of weight files. Weights are typed: each is kept as the
// numpy array it is stored as (int8 filters, int32 biases and requantization
// tables, f16 data stay themselves; bf16 is stored as its uint16 bits).
// Passes that create weights (e.g. folding BatchNorm into Conv, quantizing a
// filter) add them here; top::saveWeights writes a module's weights out and
// points the module at the new file.
#include "tpuc/Support/Npz.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include <memory>
#include <vector>

namespace tpuc {

constexpr llvm::StringLiteral kWeightFileAttr = "top.weight_file";

/// Name of an op's first result: its location name (the original model's
/// tensor name), or "" when it has none.
std::string getOpName(mlir::Operation *op);

using WeightData = std::shared_ptr<const NpyArray>;

/// Data of weight `name` from `file` (loaded once, reloaded if it changed).
llvm::Expected<WeightData> readWeight(llvm::StringRef file,
                                      llvm::StringRef name);
/// Registers in-memory data for `name` under `file`.
void addWeight(llvm::StringRef file, llvm::StringRef name, NpyArray data);
/// Forgets every weight registered under `file` (in memory or loaded).
void dropWeights(llvm::StringRef file);
/// Writes `names` (all registered under `file`) to a new npz at `path`.
llvm::Error writeWeights(llvm::StringRef file, llvm::ArrayRef<std::string> names,
                         llvm::ArrayRef<std::vector<int64_t>> shapes,
                         llvm::StringRef path);

} // namespace tpuc
#endif
