// Shape inference and reference semantics of the ops that move data without
// arithmetic: Reshape, Permute, Concat, Slice, Gather, Pad, Upsample.
#include "Common.h"
#include "tpuc/Interpreter/Kernels.h"
#include <algorithm>

using namespace mlir;
using namespace tpuc;

namespace top {

//===----------------------------------------------------------------------===//
// Reshape
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::inferShapes() {
  if (failed(requireRankedOperands(*this)))
    return failure();
  // The verifier has checked that the element counts fit.
  SmallVector<int64_t> out = getI64s(getShape());
  int64_t n = numElements(tpuc::getShape(getInput())), known = 1;
  for (int64_t d : out)
    if (d != -1)
      known *= d;
  for (int64_t &d : out)
    if (d == -1)
      d = n / known;
  return setResultShape(*this, 0, out);
}

LogicalResult ReshapeOp::inference(InferenceParam &p) {
  return copyInput(*this, p);
}

//===----------------------------------------------------------------------===//
// Permute
//===----------------------------------------------------------------------===//

LogicalResult PermuteOp::inferShapes() {
  if (failed(requireRankedOperands(*this)))
    return failure();
  auto in = getShape(getInput());
  SmallVector<int64_t> out;
  for (int64_t d : getI64s(getOrder()))
    out.push_back(in[d]);
  return setResultShape(*this, 0, out);
}

LogicalResult PermuteOp::inference(InferenceParam &p) {
  permute(p.inputs[0], getShape(getInput()), getI64s(getOrder()),
          p.outputs[0]);
  return success();
}

//===----------------------------------------------------------------------===//
// Concat
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferShapes() {
  if (failed(requireRankedOperands(*this)))
    return failure();
  // The verifier has checked ranks, the axis and the other dims.
  SmallVector<int64_t> out(getShape(getInputs()[0]));
  int64_t axis = normalizeAxis(getAxis(), out.size());
  out[axis] = 0;
  for (Value v : getInputs())
    out[axis] += getShape(v)[axis];
  return setResultShape(*this, 0, out);
}

LogicalResult ConcatOp::inference(InferenceParam &p) {
  return concatInference(*this, p);
}

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

void SliceOp::getBounds(SmallVectorImpl<int64_t> &starts,
                        SmallVectorImpl<int64_t> &steps,
                        SmallVectorImpl<int64_t> &sizes) {
  auto in = getShape(getInput());
  starts.assign(in.size(), 0);
  steps.assign(in.size(), 1);
  sizes.assign(in.begin(), in.end());
  auto b = getI64s(getStarts()), e = getI64s(getEnds()), s = getI64s(getSteps());
  for (auto [i, a] : llvm::enumerate(getI64s(getAxes()))) {
    int64_t d = normalizeAxis(a, in.size()), dim = in[d], step = s[i];
    if (dim == 0) {
      sizes[d] = 0;
      continue;
    }
    int64_t start = b[i] < 0 ? b[i] + dim : b[i];
    int64_t end = e[i] < 0 ? e[i] + dim : e[i];
    // Clamp to the range of valid starts; a negative step may end at -1
    // (just before the first element).
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    int64_t span = step > 0 ? end - start : start - end;
    int64_t mag = step > 0 ? step : -step;
    starts[d] = start;
    steps[d] = step;
    sizes[d] = span > 0 ? (span + mag - 1) / mag : 0;
  }
}

LogicalResult SliceOp::inferShapes() {
  if (failed(requireRankedOperands(*this)))
    return failure();
  SmallVector<int64_t> starts, steps, sizes;
  getBounds(starts, steps, sizes);
  return setResultShape(*this, 0, sizes);
}

LogicalResult SliceOp::inference(InferenceParam &p) {
  SmallVector<int64_t> starts, steps, sizes;
  getBounds(starts, steps, sizes);
  stridedSlice(p.inputs[0], getShape(getInput()), starts, steps, sizes,
               p.outputs[0]);
  return success();
}

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::inferShapes() {
  if (failed(requireRankedOperands(*this)))
    return failure();
  auto in = getShape(getInput());
  int64_t axis = normalizeAxis(getAxis(), in.size());
  SmallVector<int64_t> out(in.take_front(axis));
  llvm::append_range(out, getShape(getIndices()));
  llvm::append_range(out, in.drop_front(axis + 1));
  return setResultShape(*this, 0, out);
}

LogicalResult GatherOp::inference(InferenceParam &p) {
  auto in = getShape(getInput());
  int64_t axis = normalizeAxis(getAxis(), in.size());
  int64_t n = numElements(getShape(getIndices()));
  if (auto bad = gather(p.inputs[0], numElements(in.take_front(axis)),
                        in[axis], numElements(in.drop_front(axis + 1)),
                        p.inputs[1], n, p.outputs[0]))
    return emitOpError() << "index " << p.inputs[1][*bad] << " (at position "
                         << *bad << ") is not an integer in [" << -in[axis]
                         << ", " << in[axis] << ") for axis " << axis
                         << " of size " << in[axis];
  return success();
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

LogicalResult PadOp::inferShapes() {
  if (failed(requireRankedOperands(*this)))
    return failure();
  auto in = getShape(getInput());
  auto pads = getI64s(getPads());
  SmallVector<int64_t> out;
  for (size_t d = 0; d < in.size(); ++d)
    out.push_back(in[d] + pads[d] + pads[in.size() + d]);
  return setResultShape(*this, 0, out);
}

LogicalResult PadOp::inference(InferenceParam &p) {
  pad(p.inputs[0], getShape(getInput()), getI64s(getPads()),
      *parsePadMode(getMode()), float(getValue().convertToDouble()),
      p.outputs[0]);
  return success();
}

//===----------------------------------------------------------------------===//
// Upsample
//===----------------------------------------------------------------------===//

LogicalResult UpsampleOp::inferShapes() {
  if (failed(requireRankedOperands(*this)))
    return failure();
  auto in = getShape(getInput());
  return setResultShape(
      *this, 0, {in[0], in[1], in[2] * getScaleH(), in[3] * getScaleW()});
}

LogicalResult UpsampleOp::inference(InferenceParam &p) {
  auto in = getShape(getInput());
  upsampleNearest(p.inputs[0], in[0] * in[1], in[2], in[3], getScaleH(),
                  getScaleW(), p.outputs[0]);
  return success();
}

} // namespace top
