#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Interpreter/Kernels.h"
#include "tpuc/Support/OpHelpers.h"

using namespace mlir;
using namespace tpuc;

namespace top {

static ConvParams convParams(ConvOp op) {
  ConvParams p;
  auto in = getShape(op.getInput()), f = getShape(op.getFilter());
  size_t k = f.size() - 2;
  auto strides = getI64s(op.getStrides()), dil = getI64s(op.getDilations()),
       pads = getI64s(op.getPads());
  p.n = in[0];
  p.ic = in[1];
  p.oc = f[0];
  p.group = op.getGroup();
  // A 1-D conv is a 2-D conv with height 1.
  p.ih = k == 2 ? in[2] : 1;
  p.iw = in[1 + k];
  p.kh = k == 2 ? f[2] : 1;
  p.kw = f[1 + k];
  p.sh = k == 2 ? strides[0] : 1;
  p.sw = strides[k - 1];
  p.dh = k == 2 ? dil[0] : 1;
  p.dw = dil[k - 1];
  p.pt = k == 2 ? pads[0] : 0;
  p.pl = pads[k - 1];
  p.pb = k == 2 ? pads[2] : 0;
  p.pr = pads[2 * k - 1];
  p.doRelu = op.getDoRelu();
  p.reluLimit = op.getReluLimit().convertToDouble();
  return p;
}

LogicalResult ConvOp::inferShapes() {
  if (!isRanked(getInput()))
    return emitOpError() << "input shape is unknown";
  auto in = getShape(getInput());
  size_t k = getKernelShape().size();
  if (in.size() != k + 2)
    return emitOpError() << "input must have rank " << k + 2;
  auto strides = getI64s(getStrides()), dil = getI64s(getDilations()),
       pads = getI64s(getPads()), kernel = getI64s(getKernelShape());
  SmallVector<int64_t> out{in[0], getShape(getFilter())[0]};
  for (size_t i = 0; i < k; ++i) {
    int64_t extent = in[2 + i] + pads[i] + pads[k + i];
    int64_t window = dil[i] * (kernel[i] - 1) + 1;
    if (extent < window)
      return emitOpError() << "padded input dim " << i << " (" << extent
                           << ") is smaller than the dilated kernel ("
                           << window << ")";
    out.push_back((extent - window) / strides[i] + 1);
  }
  return setResultShape(*this, 0, out);
}

LogicalResult ConvOp::inference(InferenceParam &p) {
  conv2d(convParams(*this), p.inputs[0], p.inputs[1], p.inputs[2],
         p.outputs[0]);
  return success();
}

} // namespace top
