// Op verifiers of the Top dialect: each message says which attribute or
// operand is wrong and what was expected.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Support/OpHelpers.h"

using namespace mlir;
using namespace tpuc;

namespace top {

LogicalResult ConvOp::verify() {
  auto kernel = getI64s(getKernelShape());
  size_t k = kernel.size();
  if (k != 1 && k != 2)
    return emitOpError() << "supports 1-D and 2-D convolution, got "
                         << "kernel_shape of " << k << " dims";
  if (getStrides().size() != k)
    return emitOpError() << "strides needs " << k << " values, got "
                         << getStrides().size();
  if (getDilations().size() != k)
    return emitOpError() << "dilations needs " << k << " values, got "
                         << getDilations().size();
  if (getPads().size() != 2 * k)
    return emitOpError() << "pads needs " << 2 * k
                         << " values (begins then ends), got "
                         << getPads().size();
  for (int64_t s : getI64s(getStrides()))
    if (s <= 0)
      return emitOpError() << "strides must be positive";
  for (int64_t d : getI64s(getDilations()))
    if (d <= 0)
      return emitOpError() << "dilations must be positive";
  for (int64_t p : getI64s(getPads()))
    if (p < 0)
      return emitOpError() << "pads must be non-negative";
  int64_t group = getGroup();
  if (group < 1)
    return emitOpError() << "group must be >= 1, got " << group;
  auto f = getShape(getFilter());
  if (f.size() != k + 2)
    return emitOpError() << "filter must have rank " << k + 2 << ", got "
                         << f.size();
  for (size_t i = 0; i < k; ++i)
    if (f[2 + i] != kernel[i])
      return emitOpError() << "filter spatial dim " << i << " is " << f[2 + i]
                           << " but kernel_shape says " << kernel[i];
  if (f[0] % group != 0)
    return emitOpError() << "output channels " << f[0]
                         << " not divisible by group " << group;
  if (isRanked(getInput())) {
    auto in = getShape(getInput());
    if (in.size() != k + 2)
      return emitOpError() << "input must have rank " << k + 2 << ", got "
                           << in.size();
    if (in[1] != f[1] * group)
      return emitOpError() << "input has " << in[1]
                           << " channels but filter expects " << f[1] * group
                           << " (" << f[1] << " x group " << group << ")";
  }
  if (!isNone(getBias()) && numElements(getShape(getBias())) != f[0])
    return emitOpError() << "bias must have " << f[0] << " elements, got "
                         << numElements(getShape(getBias()));
  return success();
}

LogicalResult BatchNormOp::verify() {
  int64_t c = -1;
  for (Value v : {getScale(), getBias(), getMean(), getVariance()}) {
    auto s = getShape(v);
    if (s.size() != 1)
      return emitOpError() << "scale, bias, mean and variance must be 1-D";
    if (c >= 0 && s[0] != c)
      return emitOpError() << "scale, bias, mean and variance sizes differ";
    c = s[0];
  }
  if (isRanked(getInput())) {
    auto in = getShape(getInput());
    if (in.size() < 2 || in[1] != c)
      return emitOpError() << "input channel dim must be " << c;
  }
  if (getEpsilon().convertToDouble() < 0)
    return emitOpError() << "epsilon must be non-negative";
  return success();
}

} // namespace top
