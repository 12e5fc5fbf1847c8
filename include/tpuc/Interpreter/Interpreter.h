#ifndef TPUC_INTERPRETER_INTERPRETER_H
#define TPUC_INTERPRETER_INTERPRETER_H
// Runs a module's entry function op by op through InferenceInterface, for any
// dialect whose ops implement it (Top: float reference; Tpu: per mode).
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include <string>
#include <utility>
#include <vector>

namespace tpuc {

struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// Named tensors in network order.
using TensorList = std::vector<std::pair<std::string, HostTensor>>;

/// Interprets the module's `main` function (or its only function). `inputs`
/// are keyed by the name of each input op. Returns the function's results, or
/// with `allTensors` every named op result, in op order. Errors name the op.
llvm::Expected<TensorList> interpret(mlir::ModuleOp module,
                                     const TensorList &inputs,
                                     bool allTensors);

} // namespace tpuc
#endif
