// Op verifiers of the Top dialect: each message says which attribute or
// operand is wrong and what was expected.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Interpreter/Kernels.h"
#include "tpuc/Support/OpHelpers.h"
#include "llvm/ADT/SmallSet.h"
#include <cmath>

using namespace mlir;
using namespace tpuc;

namespace top {

/// Checks Conv and Deconv share: a 1-D or 2-D window whose strides,
/// dilations and pads have the right lengths and signs, a positive group,
/// and a filter whose spatial dims are the kernel's.
template <typename OpTy>
static LogicalResult verifyWindow(OpTy op, StringRef what) {
  auto kernel = getI64s(op.getKernelShape());
  size_t k = kernel.size();
  if (k != 1 && k != 2)
    return op.emitOpError() << "supports 1-D and 2-D " << what << ", got "
                            << "kernel_shape of " << k << " dims";
  if (op.getStrides().size() != k)
    return op.emitOpError() << "strides needs " << k << " values, got "
                            << op.getStrides().size();
  if (op.getDilations().size() != k)
    return op.emitOpError() << "dilations needs " << k << " values, got "
                            << op.getDilations().size();
  if (op.getPads().size() != 2 * k)
    return op.emitOpError() << "pads needs " << 2 * k
                            << " values (begins then ends), got "
                            << op.getPads().size();
  for (int64_t s : getI64s(op.getStrides()))
    if (s <= 0)
      return op.emitOpError() << "strides must be positive";
  for (int64_t d : getI64s(op.getDilations()))
    if (d <= 0)
      return op.emitOpError() << "dilations must be positive";
  for (int64_t p : getI64s(op.getPads()))
    if (p < 0)
      return op.emitOpError() << "pads must be non-negative";
  int64_t group = op.getGroup();
  if (group < 1)
    return op.emitOpError() << "group must be >= 1, got " << group;
  auto f = getShape(op.getFilter());
  if (f.size() != k + 2)
    return op.emitOpError() << "filter must have rank " << k + 2 << ", got "
                            << f.size();
  for (size_t i = 0; i < k; ++i)
    if (f[2 + i] != kernel[i])
      return op.emitOpError() << "filter spatial dim " << i << " is "
                              << f[2 + i] << " but kernel_shape says "
                              << kernel[i];
  return success();
}

LogicalResult ConvOp::verify() {
  if (failed(verifyWindow(*this, "convolution")))
    return failure();
  size_t k = getKernelShape().size();
  int64_t group = getGroup();
  auto f = getShape(getFilter());
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


LogicalResult verifyShapeConsistent(Operation *op) {
  auto known = [](Type t) {
    return isa<RankedTensorType>(t) || isa<NoneType>(t);
  };
  if (!llvm::all_of(op->getOperandTypes(), known) ||
      !llvm::all_of(op->getResultTypes(), known))
    return success();
  // Every result is ranked, so inferShapes only compares.
  return cast<tpuc::ShapeInterface>(op).inferShapes();
}

/// Normalizes `axes` for `rank`, failing on out-of-range or repeated axes.
static FailureOr<SmallVector<int64_t>>
normalizeAxes(Operation *op, ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> out;
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t a : axes) {
    int64_t n = normalizeAxis(a, rank);
    if (n < 0)
      return op->emitOpError() << "axis " << a << " is out of range for rank "
                               << rank;
    if (!seen.insert(n).second)
      return op->emitOpError() << "axis " << a << " is repeated";
    out.push_back(n);
  }
  return out;
}

static LogicalResult verifyAxis(Operation *op, int64_t axis, Value input) {
  if (!isRanked(input))
    return success();
  int64_t rank = getShape(input).size();
  if (normalizeAxis(axis, rank) < 0)
    return op->emitOpError() << "axis " << axis << " is out of range for rank "
                             << rank;
  return success();
}

LogicalResult ClipOp::verify() {
  if (getMin().convertToDouble() > getMax().convertToDouble())
    return emitOpError() << "min (" << getMin().convertToDouble()
                         << ") is greater than max ("
                         << getMax().convertToDouble() << ")";
  return success();
}

LogicalResult LeakyReluOp::verify() {
  if (!std::isfinite(getAlpha().convertToDouble()))
    return emitOpError() << "alpha must be finite";
  return success();
}

LogicalResult HardSigmoidOp::verify() {
  if (!std::isfinite(getAlpha().convertToDouble()) ||
      !std::isfinite(getBeta().convertToDouble()))
    return emitOpError() << "alpha and beta must be finite";
  return success();
}

LogicalResult GELUOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError() << "approximate must be \"none\" or \"tanh\", got \""
                         << getApproximate() << "\"";
  return success();
}

LogicalResult CastOp::verify() {
  if (!parseCastKind(getTo()))
    return emitOpError() << "cannot cast to '" << getTo()
                         << "'; expected f32, f16, bf16, i32, i8, ui8 or bool";
  return success();
}

LogicalResult MatMulOp::verify() {
  for (Value v : {getInput(), getRight()})
    if (isRanked(v) && getShape(v).size() < 2)
      return emitOpError() << "operands must have rank >= 2, got " << v.getType();
  if (!isRanked(getInput()) || !isRanked(getRight()))
    return success();
  auto a = getShape(getInput()), b = getShape(getRight());
  if (a.back() != b[b.size() - 2])
    return emitOpError() << "contracting dims differ: input has K = "
                         << a.back() << ", right has K = " << b[b.size() - 2];
  if (failed(broadcastShapes(a.drop_back(2), b.drop_back(2))))
    return emitOpError() << "batch dims of " << getInput().getType() << " and "
                         << getRight().getType() << " do not broadcast";
  if (!isNone(getBias()) && numElements(getShape(getBias())) != b.back())
    return emitOpError() << "bias must have " << b.back() << " elements, got "
                         << numElements(getShape(getBias()));
  return success();
}

LogicalResult LayerNormOp::verify() {
  if (getEpsilon().convertToDouble() < 0)
    return emitOpError() << "epsilon must be non-negative";
  if (!isRanked(getInput()))
    return success();
  auto in = getShape(getInput());
  int64_t axis = normalizeAxis(getAxis(), in.size());
  if (axis < 0)
    return emitOpError() << "axis " << int64_t(getAxis())
                         << " is out of range for rank "
                         << in.size();
  int64_t inner = numElements(in.drop_front(axis));
  for (Value v : {getWeight(), getBias()})
    if (!isNone(v) && numElements(getShape(v)) != inner)
      return emitOpError() << "weight and bias must have " << inner
                           << " elements (the normalized dims), got "
                           << numElements(getShape(v));
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getInput());
}

/// Checks shared by MaxPool and AvgPool.
template <typename PoolOp>
static LogicalResult verifyPool(PoolOp op) {
  auto kernel = getI64s(op.getKernelShape()), strides = getI64s(op.getStrides()),
       pads = getI64s(op.getPads());
  size_t k = kernel.size();
  if (k != 1 && k != 2)
    return op.emitOpError() << "supports 1-D and 2-D pooling, got "
                            << "kernel_shape of " << k << " dims";
  if (strides.size() != k)
    return op.emitOpError() << "strides needs " << k << " values, got "
                            << strides.size();
  if (pads.size() != 2 * k)
    return op.emitOpError() << "pads needs " << 2 * k
                            << " values (begins then ends), got "
                            << pads.size();
  for (size_t i = 0; i < k; ++i) {
    if (kernel[i] <= 0 || strides[i] <= 0)
      return op.emitOpError() << "kernel_shape and strides must be positive";
    // A window lying wholly in the padding would have nothing to pool.
    if (pads[i] < 0 || pads[k + i] < 0 || pads[i] >= kernel[i] ||
        pads[k + i] >= kernel[i])
      return op.emitOpError() << "pads of spatial dim " << i
                              << " must be in [0, " << kernel[i] << ")";
  }
  if (isRanked(op.getInput()) && getShape(op.getInput()).size() != k + 2)
    return op.emitOpError() << "input must have rank " << k + 2 << ", got "
                            << getShape(op.getInput()).size();
  return success();
}

LogicalResult MaxPoolOp::verify() { return verifyPool(*this); }
LogicalResult AvgPoolOp::verify() { return verifyPool(*this); }

LogicalResult ReduceOp::verify() {
  if (!parseReduceMode(getMode()))
    return emitOpError() << "mode must be sum, mean, max or min, got '"
                         << getMode() << "'";
  if (isRanked(getInput()) &&
      failed(normalizeAxes(*this, getI64s(getAxes()),
                           getShape(getInput()).size())))
    return failure();
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto shape = getI64s(getShape());
  int64_t known = 1, inferred = 0;
  for (int64_t d : shape) {
    if (d == -1) {
      ++inferred;
      continue;
    }
    if (d <= 0)
      return emitOpError() << "shape dims must be positive or -1, got " << d;
    known *= d;
  }
  if (inferred > 1)
    return emitOpError() << "shape may have at most one -1, got " << inferred;
  if (!isRanked(getInput()))
    return success();
  int64_t n = numElements(tpuc::getShape(getInput()));
  if ((inferred == 0 && known != n) || (inferred == 1 && n % known != 0))
    return emitOpError() << "cannot reshape " << n << " elements ("
                         << getInput().getType() << ") to shape "
                         << shapeToString(shape);
  return success();
}

LogicalResult PermuteOp::verify() {
  auto order = getI64s(getOrder());
  SmallVector<bool> seen(order.size(), false);
  for (int64_t d : order) {
    if (d < 0 || d >= int64_t(order.size()) || seen[d])
      return emitOpError() << "order must be a permutation of [0, "
                           << order.size() << ")";
    seen[d] = true;
  }
  if (isRanked(getInput()) && getShape(getInput()).size() != order.size())
    return emitOpError() << "order has " << order.size()
                         << " entries but the input has rank "
                         << getShape(getInput()).size();
  return success();
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  Value first;
  for (Value v : getInputs()) {
    if (!isRanked(v))
      continue;
    if (!first) {
      first = v;
      if (failed(verifyAxis(*this, getAxis(), v)))
        return failure();
      continue;
    }
    auto a = getShape(first), b = getShape(v);
    if (a.size() != b.size())
      return emitOpError() << "inputs must have the same rank, got "
                           << first.getType() << " and " << v.getType();
    int64_t axis = normalizeAxis(getAxis(), a.size());
    for (size_t d = 0; d < a.size(); ++d)
      if (int64_t(d) != axis && a[d] != b[d])
        return emitOpError() << "inputs differ in dim " << d
                             << " (not the concat axis): " << first.getType()
                             << " and " << v.getType();
  }
  return success();
}

LogicalResult SliceOp::verify() {
  size_t n = getAxes().size();
  if (getStarts().size() != n || getEnds().size() != n ||
      getSteps().size() != n)
    return emitOpError() << "starts, ends, axes and steps must have the same "
                         << "length, got " << getStarts().size() << ", "
                         << getEnds().size() << ", " << n << ", "
                         << getSteps().size();
  for (int64_t s : getI64s(getSteps()))
    if (s == 0)
      return emitOpError() << "steps must be non-zero";
  if (isRanked(getInput()) &&
      failed(normalizeAxes(*this, getI64s(getAxes()),
                           getShape(getInput()).size())))
    return failure();
  return success();
}

LogicalResult GatherOp::verify() {
  return verifyAxis(*this, getAxis(), getInput());
}

LogicalResult PadOp::verify() {
  auto mode = parsePadMode(getMode());
  if (!mode)
    return emitOpError() << "mode must be constant, reflect or edge, got '"
                         << getMode() << "'";
  auto pads = getI64s(getPads());
  for (int64_t p : pads)
    if (p < 0)
      return emitOpError() << "pads must be non-negative, got " << p;
  if (!isRanked(getInput()))
    return success();
  auto in = getShape(getInput());
  if (pads.size() != 2 * in.size())
    return emitOpError() << "pads needs " << 2 * in.size()
                         << " values (begins then ends) for rank " << in.size()
                         << ", got " << pads.size();
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t most = std::max(pads[d], pads[in.size() + d]);
    if (*mode == PadMode::Reflect && most >= in[d])
      return emitOpError() << "reflect pads of dim " << d
                           << " must be smaller than its size " << in[d];
    if (*mode == PadMode::Edge && most > 0 && in[d] == 0)
      return emitOpError() << "edge padding needs a non-empty dim " << d;
  }
  return success();
}

LogicalResult UpsampleOp::verify() {
  // I64Attr accessors are unsigned; the attribute itself may be negative.
  int64_t sh = getScaleHAttr().getInt(), sw = getScaleWAttr().getInt();
  if (sh < 1 || sw < 1)
    return emitOpError() << "scales must be >= 1, got " << sh << " and " << sw;
  if (isRanked(getInput()) && getShape(getInput()).size() != 4)
    return emitOpError() << "input must be NCHW (rank 4), got "
                         << getInput().getType();
  return success();
}

} // namespace top

namespace top {

LogicalResult DeconvOp::verify() {
  if (failed(verifyWindow(*this, "deconvolution")))
    return failure();
  size_t k = getKernelShape().size();
  if (getOutputPadding().size() != k)
    return emitOpError() << "output_padding needs " << k << " values, got "
                         << getOutputPadding().size();
  auto kernel = getI64s(getKernelShape());
  auto s = getI64s(getStrides()), d = getI64s(getDilations()),
       op = getI64s(getOutputPadding());
  // ONNX: the extra output cells must not reach past the next input pixel's
  // footprint.
  for (size_t i = 0; i < k; ++i)
    if (op[i] < 0 || op[i] >= std::max(s[i], d[i]))
      return emitOpError() << "output_padding " << op[i]
                           << " must be in [0, max(stride, dilation))";
  int64_t group = getGroup();
  auto f = getShape(getFilter());
  if (f[0] % group != 0)
    return emitOpError() << "filter input channels " << f[0]
                         << " not divisible by group " << group;
  if (isRanked(getInput())) {
    auto in = getShape(getInput());
    if (in.size() != k + 2)
      return emitOpError() << "input must have rank " << k + 2 << ", got "
                           << in.size();
    if (in[1] != f[0])
      return emitOpError() << "input has " << in[1]
                           << " channels but filter expects " << f[0];
    auto pads = getI64s(getPads());
    for (size_t i = 0; i < k; ++i) {
      int64_t o = (in[2 + i] - 1) * s[i] - pads[i] - pads[k + i] +
                  d[i] * (kernel[i] - 1) + 1 + op[i];
      if (o < 1)
        return emitOpError() << "output dim " << i << " would be " << o
                             << " (pads exceed the deconvolved extent)";
    }
  }
  if (!isNone(getBias()) && numElements(getShape(getBias())) != f[1] * group)
    return emitOpError() << "bias must have " << f[1] * group
                         << " elements, got "
                         << numElements(getShape(getBias()));
  return success();
}

LogicalResult InterpOp::verify() {
  if (!parseResizeMode(getMode()))
    return emitOpError() << "unknown mode '" << getMode()
                         << "' (linear or nearest)";
  if (!parseResizeCoord(getCoordMode()))
    return emitOpError() << "unknown coord_mode '" << getCoordMode() << "'";
  if (!parseNearestRound(getNearestMode()))
    return emitOpError() << "unknown nearest_mode '" << getNearestMode()
                         << "'";
  int64_t th = getTargetHAttr().getInt(), tw = getTargetWAttr().getInt();
  if (th < 1 || tw < 1)
    return emitOpError() << "target sizes must be >= 1, got " << th << " and "
                         << tw;
  double sh = getScaleH().convertToDouble(), sw = getScaleW().convertToDouble();
  if (!(sh > 0) || !(sw > 0))
    return emitOpError() << "scales must be positive, got " << sh << " and "
                         << sw;
  if (isRanked(getInput()) && getShape(getInput()).size() != 4)
    return emitOpError() << "input must be NCHW (rank 4), got "
                         << getInput().getType();
  return success();
}

} // namespace top
