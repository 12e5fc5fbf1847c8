// Shape inference and reference semantics of MatMul.
#include "Common.h"
#include "tpuc/Interpreter/Kernels.h"

using namespace mlir;
using namespace tpuc;

namespace top {

LogicalResult MatMulOp::inferShapes() {
  if (failed(requireRankedOperands(*this)))
    return failure();
  auto a = getShape(getInput()), b = getShape(getRight());
  // The verifier has checked ranks, K and that the batch dims broadcast.
  SmallVector<int64_t> out =
      *broadcastShapes(a.drop_back(2), b.drop_back(2));
  out.push_back(a[a.size() - 2]);
  out.push_back(b.back());
  return setResultShape(*this, 0, out);
}

LogicalResult MatMulOp::inference(InferenceParam &p) {
  return matmulInference(*this, p);
}

} // namespace top
