#ifndef TPUC_INTERPRETER_OPINFERENCE_H
#define TPUC_INTERPRETER_OPINFERENCE_H
// InferenceInterface building blocks shared by Top and Tpu ops: the two
// dialects name their operands alike, so one template serves both.
#include "tpuc/Interfaces/InferenceInterface.h"
#include "tpuc/Interpreter/Kernels.h"
#include "tpuc/Support/OpHelpers.h"
#include <algorithm>
#include <cmath>

namespace tpuc {

/// Number of elements of result 0 (ranked once shapes are known).
inline int64_t resultElements(mlir::Operation *op) {
  return numElements(getShape(op->getResult(0)));
}

/// The result is operand 0's data (reshapes, inputs).
inline mlir::LogicalResult copyInput(mlir::Operation *op, InferenceParam &p) {
  std::copy(p.inputs[0], p.inputs[0] + resultElements(op), p.outputs[0]);
  return mlir::success();
}

/// out = f(lhs, rhs) with broadcasting, then the fused ReLU if asked for.
template <typename OpTy, typename F>
mlir::LogicalResult binaryInference(OpTy op, InferenceParam &p, F f) {
  broadcastBinary(p.inputs[0], getShape(op.getLhs()), p.inputs[1],
                  getShape(op.getRhs()), p.outputs[0],
                  getShape(op.getOutput()), f);
  if (op.getDoRelu())
    relu(p.outputs[0], resultElements(op));
  return mlir::success();
}

// Max/Min propagate NaN, as numpy and ONNX do.
inline float maxNaN(float a, float b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
inline float minNaN(float a, float b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

/// Batched matmul with optional bias, then the fused ReLU.
template <typename OpTy>
mlir::LogicalResult matmulInference(OpTy op, InferenceParam &p) {
  matmul(p.inputs[0], getShape(op.getInput()), p.inputs[1],
         getShape(op.getRight()), p.inputs[2], p.outputs[0],
         getShape(op.getOutput()));
  if (op.getDoRelu())
    relu(p.outputs[0], resultElements(op));
  return mlir::success();
}

/// Concatenation along the (possibly negative) axis, then the fused ReLU.
template <typename OpTy>
mlir::LogicalResult concatInference(OpTy op, InferenceParam &p) {
  auto out = getShape(op.getOutput());
  int64_t axis = normalizeAxis(op.getAxis(), out.size());
  llvm::SmallVector<int64_t> dims;
  for (mlir::Value v : op.getInputs())
    dims.push_back(getShape(v)[axis]);
  concat(p.inputs, dims, numElements(out.take_front(axis)),
         numElements(out.drop_front(axis + 1)), p.outputs[0]);
  if (op.getDoRelu())
    relu(p.outputs[0], resultElements(op));
  return mlir::success();
}

} // namespace tpuc
#endif
