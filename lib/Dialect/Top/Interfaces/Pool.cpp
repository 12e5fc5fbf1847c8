// Shape inference and reference semantics of the pooling ops.
#include "Common.h"
#include "tpuc/Interpreter/Kernels.h"

using namespace mlir;
using namespace tpuc;

namespace top {

/// Output size of one pooled dim. With ceil_mode the size rounds up, but a
/// last window that would start in the end padding is dropped (as in ONNX
/// and PyTorch), so every window covers at least one input element.
static int64_t pooledSize(int64_t in, int64_t kernel, int64_t stride,
                          int64_t padBegin, int64_t padEnd, bool ceilMode) {
  int64_t span = in + padBegin + padEnd - kernel;
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceilMode && (out - 1) * stride >= in + padBegin)
    --out;
  return out;
}

template <typename PoolOp>
static LogicalResult inferPool(PoolOp op) {
  if (failed(requireRankedOperands(op)))
    return failure();
  auto in = getShape(op.getInput());
  auto kernel = getI64s(op.getKernelShape()), strides = getI64s(op.getStrides()),
       pads = getI64s(op.getPads());
  size_t k = kernel.size();
  SmallVector<int64_t> out{in[0], in[1]};
  for (size_t i = 0; i < k; ++i) {
    int64_t extent = in[2 + i] + pads[i] + pads[k + i];
    if (extent < kernel[i])
      return op.emitOpError() << "padded input dim " << i << " (" << extent
                              << ") is smaller than the kernel ("
                              << kernel[i] << ")";
    out.push_back(pooledSize(in[2 + i], kernel[i], strides[i], pads[i],
                             pads[k + i], op.getCeilMode()));
  }
  return setResultShape(op, 0, out);
}

/// A 1-D pool is a 2-D pool with height 1.
template <typename PoolOp>
static PoolParams poolParams(PoolOp op) {
  auto in = getShape(op.getInput()), out = getShape(op.getOutput());
  auto kernel = getI64s(op.getKernelShape()), strides = getI64s(op.getStrides()),
       pads = getI64s(op.getPads());
  bool is2d = kernel.size() == 2;
  PoolParams p;
  p.planes = in[0] * in[1];
  p.ih = is2d ? in[2] : 1;
  p.iw = in.back();
  p.oh = is2d ? out[2] : 1;
  p.ow = out.back();
  p.kh = is2d ? kernel[0] : 1;
  p.kw = kernel.back();
  p.sh = is2d ? strides[0] : 1;
  p.sw = strides.back();
  p.pt = is2d ? pads[0] : 0;
  p.pl = is2d ? pads[1] : pads[0];
  p.pb = is2d ? pads[2] : 0;
  p.pr = pads.back();
  return p;
}

LogicalResult MaxPoolOp::inferShapes() { return inferPool(*this); }

LogicalResult MaxPoolOp::inference(InferenceParam &p) {
  maxPool2d(poolParams(*this), p.inputs[0], p.outputs[0]);
  return success();
}

LogicalResult AvgPoolOp::inferShapes() { return inferPool(*this); }

LogicalResult AvgPoolOp::inference(InferenceParam &p) {
  PoolParams params = poolParams(*this);
  params.countIncludePad = getCountIncludePad();
  avgPool2d(params, p.inputs[0], p.outputs[0]);
  return success();
}

LogicalResult GlobalAvgPoolOp::inferShapes() {
  if (failed(requireRankedOperands(*this)))
    return failure();
  auto in = getShape(getInput());
  if (in.size() < 3)
    return emitOpError() << "input must be N x C x spatial dims (rank >= 3), "
                         << "got " << getInput().getType();
  SmallVector<int64_t> out(in.size(), 1);
  out[0] = in[0];
  out[1] = in[1];
  return setResultShape(*this, 0, out);
}

LogicalResult GlobalAvgPoolOp::inference(InferenceParam &p) {
  auto in = getShape(getInput());
  SmallVector<bool> reduced(in.size(), true);
  reduced[0] = reduced[1] = false;
  reduce(p.inputs[0], in, reduced, ReduceMode::Mean, p.outputs[0]);
  return success();
}

} // namespace top
