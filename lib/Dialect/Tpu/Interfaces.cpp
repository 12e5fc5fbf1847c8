// Float reference semantics of Tpu ops (the F32 path of the Tpu interpreter).
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Interpreter/Kernels.h"
#include "tpuc/Support/OpHelpers.h"

using namespace mlir;
using namespace tpuc;

namespace tpu {

LogicalResult ConvOp::inference(InferenceParam &p) {
  return emitOpError() << "interpretation is not implemented yet";
}

LogicalResult AddOp::inference(InferenceParam &p) {
  broadcastBinary(p.inputs[0], getShape(getLhs()), p.inputs[1],
                  getShape(getRhs()), p.outputs[0], getShape(getOutput()),
                  [](float a, float b) { return a + b; });
  if (getDoRelu())
    relu(p.outputs[0], numElements(getShape(getOutput())));
  return success();
}

} // namespace tpu
