// Ops that change spatial resolution by learned or fixed interpolation:
// Deconv (transposed convolution) and Interp (Resize).
#include "Common.h"
#include "tpuc/Interpreter/Kernels.h"

using namespace mlir;
using namespace tpuc;

namespace top {

//===----------------------------------------------------------------------===//
// Deconv
//===----------------------------------------------------------------------===//

LogicalResult DeconvOp::inferShapes() {
  if (!isRanked(getInput()))
    return emitOpError() << "input shape is unknown";
  auto in = getShape(getInput());
  size_t k = getKernelShape().size();
  if (in.size() != k + 2)
    return emitOpError() << "input must have rank " << k + 2;
  auto s = getI64s(getStrides()), d = getI64s(getDilations()),
       pads = getI64s(getPads()), kernel = getI64s(getKernelShape()),
       op = getI64s(getOutputPadding());
  SmallVector<int64_t> out{in[0], getShape(getFilter())[1] * getGroup()};
  for (size_t i = 0; i < k; ++i) {
    int64_t o = (in[2 + i] - 1) * s[i] - pads[i] - pads[k + i] +
                d[i] * (kernel[i] - 1) + 1 + op[i];
    if (o < 1)
      return emitOpError() << "output dim " << i << " would be " << o
                           << " (pads exceed the deconvolved extent)";
    out.push_back(o);
  }
  return setResultShape(*this, 0, out);
}

LogicalResult DeconvOp::inference(InferenceParam &p) {
  auto in = getShape(getInput()), f = getShape(getFilter()),
       out = getShape(getOutput());
  size_t k = f.size() - 2;
  auto s = getI64s(getStrides()), d = getI64s(getDilations()),
       pads = getI64s(getPads());
  // A 1-D deconv is a 2-D one with height 1.
  DeconvParams c;
  c.n = in[0], c.ic = in[1], c.oc = out[1], c.group = getGroup();
  c.ih = k == 2 ? in[2] : 1, c.iw = in[1 + k];
  c.oh = k == 2 ? out[2] : 1, c.ow = out[1 + k];
  c.kh = k == 2 ? f[2] : 1, c.kw = f[1 + k];
  c.sh = k == 2 ? s[0] : 1, c.sw = s[k - 1];
  c.dh = k == 2 ? d[0] : 1, c.dw = d[k - 1];
  c.pt = k == 2 ? pads[0] : 0, c.pl = pads[k - 1];
  deconv2d(c, p.inputs[0], p.inputs[1], p.inputs[2], p.outputs[0]);
  return success();
}

//===----------------------------------------------------------------------===//
// Interp
//===----------------------------------------------------------------------===//

LogicalResult InterpOp::inferShapes() {
  if (failed(requireRankedOperands(*this)))
    return failure();
  auto in = getShape(getInput());
  return setResultShape(*this, 0,
                        {in[0], in[1], int64_t(getTargetH()),
                         int64_t(getTargetW())});
}

LogicalResult InterpOp::inference(InferenceParam &p) {
  auto in = getShape(getInput());
  int64_t oh = getTargetH(), ow = getTargetW();
  auto ah = resizeMatrix(in[2], oh, getScaleH().convertToDouble(),
                         *parseResizeMode(getMode()),
                         *parseResizeCoord(getCoordMode()),
                         *parseNearestRound(getNearestMode()));
  auto aw = resizeMatrix(in[3], ow, getScaleW().convertToDouble(),
                         *parseResizeMode(getMode()),
                         *parseResizeCoord(getCoordMode()),
                         *parseNearestRound(getNearestMode()));
  resizeSeparable(p.inputs[0], in[0] * in[1], in[2], in[3], ah.data(), oh,
                  aw.data(), ow, p.outputs[0]);
  return success();
}

} // namespace top
