// Shape inference and reference semantics of Reduce.
#include "Common.h"
#include "tpuc/Interpreter/Kernels.h"

using namespace mlir;
using namespace tpuc;

namespace top {

/// Which dims the op reduces (empty axes: all of them).
static SmallVector<bool> reducedDims(ReduceOp op) {
  size_t rank = getShape(op.getInput()).size();
  auto axes = getI64s(op.getAxes());
  SmallVector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes)
    reduced[normalizeAxis(a, rank)] = true;
  return reduced;
}

LogicalResult ReduceOp::inferShapes() {
  if (failed(requireRankedOperands(*this)))
    return failure();
  auto in = getShape(getInput());
  SmallVector<bool> reduced = reducedDims(*this);
  SmallVector<int64_t> out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!reduced[d])
      out.push_back(in[d]);
    else if (getKeepdims())
      out.push_back(1);
  }
  return setResultShape(*this, 0, out);
}

LogicalResult ReduceOp::inference(InferenceParam &p) {
  // Dropping size-1 dims does not move data: keepdims only changes the type.
  reduce(p.inputs[0], getShape(getInput()), reducedDims(*this),
         *parseReduceMode(getMode()), p.outputs[0]);
  return success();
}

} // namespace top
