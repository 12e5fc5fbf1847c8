#ifndef TPUC_INTERFACES_INFERENCEINTERFACE_H
#define TPUC_INTERFACES_INFERENCEINTERFACE_H
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"

namespace tpuc {
/// Buffers handed to InferenceInterface::inference. `inputs[i]` is null for an
/// absent optional operand. Buffers are dense row-major float32.
struct InferenceParam {
  llvm::SmallVector<const float *> inputs;
  llvm::SmallVector<float *> outputs;
};
} // namespace tpuc

#include "tpuc/Interfaces/InferenceInterface.h.inc"
#endif
