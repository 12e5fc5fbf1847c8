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
///
/// `references` runs every op on reference inputs (local mode): a result
/// whose op is named in `references` is recorded as computed, then replaced
/// by the reference converted to the result's element type (quantized for
/// INT8, rounded for F16/BF16) before its users read it. Each recorded
/// tensor then shows the error of its op alone.
llvm::Expected<TensorList> interpret(mlir::ModuleOp module,
                                     const TensorList &inputs,
                                     bool allTensors,
                                     const TensorList &references = {});

} // namespace tpuc
#endif
