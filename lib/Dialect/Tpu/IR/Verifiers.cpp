// Op verifiers of the Tpu dialect. Tpu attributes are resolved (non-negative
// axes, 2-D windows, explicit offsets), so the verifiers also check that each
// result type is exactly what the op computes.
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuUtils.h"
#include "tpuc/Dialect/Tpu/IR/QuantParams.h"
#include "mlir/IR/TypeUtilities.h"
#include "tpuc/Interfaces/ShapeInterface.h"
#include "tpuc/Interpreter/Kernels.h"
#include "tpuc/Support/OpHelpers.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"
#include <cmath>

using namespace mlir;
using namespace tpuc;

namespace tpu {

LogicalResult verifyInt8MacOperands(Operation *op, Value input, Value weight,
                                    Value bias, Value quant, int64_t channels);

/// Fails unless `op`'s result has `expect` as its shape.
static LogicalResult verifyResultShape(Operation *op, ArrayRef<int64_t> expect) {
  auto got = getShape(op->getResult(0));
  if (got != expect)
    return op->emitOpError() << "result shape " << shapeToString(got)
                             << " does not match the computed shape "
                             << shapeToString(expect);
  return success();
}

static LogicalResult verifyAxisRange(Operation *op, StringRef what,
                                     int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError() << what << " " << axis << " must be in [0, "
                             << rank << ")";
  return success();
}

/// Checks that `attr` has `n` values, each at least `min`.
static LogicalResult verifyI64s(Operation *op, StringRef name, ArrayAttr attr,
                                size_t n, int64_t min) {
  if (attr.size() != n)
    return op->emitOpError() << name << " needs " << n << " values, got "
                             << attr.size();
  for (int64_t v : getI64s(attr))
    if (v < min)
      return op->emitOpError() << name << " values must be >= " << min
                               << ", got " << v;
  return success();
}

//===----------------------------------------------------------------------===//
// Conv, MatMul
//===----------------------------------------------------------------------===//

LogicalResult ConvOp::verify() {
  Operation *op = *this;
  if (failed(verifyI64s(op, "kernel_shape", getKernelShape(), 2, 1)) ||
      failed(verifyI64s(op, "strides", getStrides(), 2, 1)) ||
      failed(verifyI64s(op, "dilations", getDilations(), 2, 1)) ||
      failed(verifyI64s(op, "pads", getPads(), 4, 0)))
    return failure();
  auto in = getShape(getInput()), f = getShape(getFilter());
  if (in.size() != 4 || f.size() != 4)
    return emitOpError() << "input and filter must have rank 4 (NCHW, OIHW), "
                         << "got " << in.size() << " and " << f.size();
  auto kernel = getI64s(getKernelShape());
  if (f[2] != kernel[0] || f[3] != kernel[1])
    return emitOpError() << "filter spatial dims " << shapeToString(f.drop_front(2))
                         << " differ from kernel_shape " << shapeToString(kernel);
  int64_t group = getGroup();
  if (group < 1 || f[0] % group != 0)
    return emitOpError() << "group " << group
                         << " must be >= 1 and divide the output channels "
                         << f[0];
  if (in[1] != f[1] * group)
    return emitOpError() << "input has " << in[1]
                         << " channels but filter expects " << f[1] * group
                         << " (" << f[1] << " x group " << group << ")";
  if (!isNone(getBias()) && numElements(getShape(getBias())) != f[0])
    return emitOpError() << "bias must have " << f[0] << " elements, got "
                         << numElements(getShape(getBias()));
  if (failed(verifyInt8MacOperands(op, getInput(), getFilter(), getBias(),
                                   getQuant(), f[0])))
    return failure();
  auto s = getI64s(getStrides()), d = getI64s(getDilations()),
       p = getI64s(getPads());
  SmallVector<int64_t> out{in[0], f[0]};
  for (int i = 0; i < 2; ++i) {
    int64_t window = d[i] * (kernel[i] - 1) + 1;
    if (in[2 + i] + p[i] + p[2 + i] < window)
      return emitOpError() << "padded input dim " << i
                           << " is smaller than the dilated kernel ("
                           << window << ")";
    out.push_back(windowedSize(in[2 + i], p[i], p[2 + i], window, s[i]));
  }
  return verifyResultShape(op, out);
}

LogicalResult MatMulOp::verify() {
  auto a = getShape(getInput()), b = getShape(getRight());
  if (a.size() < 2 || b.size() < 2)
    return emitOpError() << "operands must have rank >= 2, got "
                         << getInput().getType() << " and "
                         << getRight().getType();
  // The right operand's contracting and output dims, [K, N] or ([N, K])^T.
  const int64_t rk = b[b.size() - (getRightTranspose() ? 1 : 2)],
                rn = b[b.size() - (getRightTranspose() ? 2 : 1)];
  if (a.back() != rk)
    return emitOpError() << "contracting dims differ: input has K = "
                         << a.back() << ", right has K = " << rk;
  auto batch = broadcastShapes(a.drop_back(2), b.drop_back(2));
  if (failed(batch))
    return emitOpError() << "batch dims of " << getInput().getType() << " and "
                         << getRight().getType() << " do not broadcast";
  if (!isNone(getBias()) && numElements(getShape(getBias())) != rn)
    return emitOpError() << "bias must have " << rn << " elements, got "
                         << numElements(getShape(getBias()));
  if (failed(verifyInt8MacOperands(*this, getInput(), getRight(), getBias(),
                                   getQuant(), 1)))
    return failure();
  SmallVector<int64_t> out = *batch;
  out.push_back(a[a.size() - 2]);
  out.push_back(rn);
  return verifyResultShape(*this, out);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

static LogicalResult verifyBinary(Operation *op) {
  Value a = op->getOperand(0), b = op->getOperand(1);
  auto out = broadcastShapes(getShape(a), getShape(b));
  if (failed(out))
    return op->emitOpError() << "operands " << a.getType() << " and "
                             << b.getType() << " do not broadcast";
  return verifyResultShape(op, *out);
}

LogicalResult AddOp::verify() { return verifyBinary(*this); }
LogicalResult SubOp::verify() { return verifyBinary(*this); }
LogicalResult MulOp::verify() { return verifyBinary(*this); }
LogicalResult DivOp::verify() { return verifyBinary(*this); }
LogicalResult MaxOp::verify() { return verifyBinary(*this); }
LogicalResult MinOp::verify() { return verifyBinary(*this); }

LogicalResult ActiveOp::verify() {
  const ActiveModeInfo *info = lookupActiveMode(getMode());
  if (!info) {
    std::string names;
    for (const ActiveModeInfo &m : kActiveModes)
      names += (names.empty() ? "" : ", ") + m.name.str();
    return emitOpError() << "unknown mode '" << getMode()
                         << "'; expected one of " << names;
  }
  struct Attr {
    ActiveAttr bit;
    StringRef name;
    FloatAttr value;
  };
  const Attr attrs[] = {{kActiveMin, "min", getMinAttr()},
                        {kActiveMax, "max", getMaxAttr()},
                        {kActiveExponent, "exponent", getExponentAttr()},
                        {kActiveAlpha, "alpha", getAlphaAttr()},
                        {kActiveBeta, "beta", getBetaAttr()}};
  SmallVector<StringRef> missing;
  for (const Attr &a : attrs) {
    // An attribute a mode ignores is a lowering bug, not a no-op.
    if (a.value && !((info->required | info->optional) & a.bit)) {
      SmallVector<StringRef> users;
      for (const ActiveModeInfo &m : kActiveModes)
        if ((m.required | m.optional) & a.bit)
          users.push_back(m.name);
      return emitOpError() << "'" << a.name << "' is only used by mode"
                           << (users.size() > 1 ? "s " : " ")
                           << llvm::join(users, ", ");
    }
    if (!a.value && (info->required & a.bit))
      missing.push_back(a.name);
    // min/max may be infinite (an open clip bound); the slopes may not.
    if (a.value && (a.bit & (kActiveAlpha | kActiveBeta)) &&
        !std::isfinite(a.value.getValueAsDouble()))
      return emitOpError() << "'" << a.name << "' must be finite";
  }
  if (!missing.empty())
    return emitOpError() << "mode " << getMode() << " needs '"
                         << llvm::join(missing, "' and '") << "'";
  if (info->mode == ActiveMode::Clip) {
    double lo = getMinAttr().getValueAsDouble(),
           hi = getMaxAttr().getValueAsDouble();
    if (lo > hi)
      return emitOpError() << "clip min (" << lo << ") is greater than max ("
                           << hi << ")";
  }
  if (info->mode == ActiveMode::Relu && getMax() &&
      getMaxAttr().getValueAsDouble() < 0)
    return emitOpError() << "relu max must be >= 0, got "
                         << getMaxAttr().getValueAsDouble();
  return verifyResultShape(*this, getShape(getInput()));
}

LogicalResult CastOp::verify() {
  if (!parseCastKind(getTo()))
    return emitOpError() << "cannot cast to '" << getTo()
                         << "'; expected f32, f16, bf16, i32, i8, ui8 or bool";
  return verifyResultShape(*this, getShape(getInput()));
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::verify() {
  auto in = getShape(getInput());
  if (failed(verifyAxisRange(*this, "axis", getAxis(), in.size())))
    return failure();
  if (getEpsilon().convertToDouble() < 0)
    return emitOpError() << "epsilon must be non-negative";
  int64_t inner = numElements(in.drop_front(getAxis()));
  for (Value v : {getWeight(), getBias()})
    if (!isNone(v) && numElements(getShape(v)) != inner)
      return emitOpError() << "weight and bias must have " << inner
                           << " elements (the normalized dims), got "
                           << numElements(getShape(v));
  return verifyResultShape(*this, in);
}

LogicalResult SoftmaxOp::verify() {
  double d = getDivisor() ? getDivisor()->convertToDouble() : 1.0;
  if (!std::isfinite(d) || d == 0)
    return emitOpError() << "divisor must be finite and non-zero, got " << d;
  auto in = getShape(getInput());
  if (failed(verifyAxisRange(*this, "axis", getAxis(), in.size())))
    return failure();
  return verifyResultShape(*this, in);
}

//===----------------------------------------------------------------------===//
// Pooling and reduction
//===----------------------------------------------------------------------===//

template <typename PoolOp>
static LogicalResult verifyPool(PoolOp op) {
  if (failed(verifyI64s(op, "kernel_shape", op.getKernelShape(), 2, 1)) ||
      failed(verifyI64s(op, "strides", op.getStrides(), 2, 1)) ||
      failed(verifyI64s(op, "pads", op.getPads(), 4, 0)))
    return failure();
  auto in = getShape(op.getInput());
  if (in.size() != 4)
    return op.emitOpError() << "input must have rank 4 (NCHW), got "
                            << in.size();
  auto k = getI64s(op.getKernelShape()), s = getI64s(op.getStrides()),
       p = getI64s(op.getPads());
  SmallVector<int64_t> out{in[0], in[1]};
  for (int i = 0; i < 2; ++i) {
    // A window wholly in the padding would have nothing to pool.
    if (p[i] >= k[i] || p[2 + i] >= k[i])
      return op.emitOpError() << "pads of spatial dim " << i
                              << " must be smaller than the kernel (" << k[i]
                              << ")";
    if (in[2 + i] + p[i] + p[2 + i] < k[i])
      return op.emitOpError() << "padded input dim " << i
                              << " is smaller than the kernel (" << k[i] << ")";
    out.push_back(windowedSize(in[2 + i], p[i], p[2 + i], k[i], s[i]));
  }
  return verifyResultShape(op, out);
}

LogicalResult MaxPoolOp::verify() { return verifyPool(*this); }
LogicalResult AvgPoolOp::verify() { return verifyPool(*this); }

LogicalResult ReduceOp::verify() {
  if (!parseReduceMode(getMode()))
    return emitOpError() << "mode must be sum, mean, max or min, got '"
                         << getMode() << "'";
  auto in = getShape(getInput());
  SmallVector<bool> reduced(in.size(), false);
  for (int64_t a : getI64s(getAxes())) {
    if (failed(verifyAxisRange(*this, "axis", a, in.size())))
      return failure();
    if (reduced[a])
      return emitOpError() << "axis " << a << " is repeated";
    reduced[a] = true;
  }
  if (getAxes().empty())
    return emitOpError() << "axes must not be empty (list every reduced dim)";
  SmallVector<int64_t> out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!reduced[d])
      out.push_back(in[d]);
    else if (getKeepdims())
      out.push_back(1);
  }
  return verifyResultShape(*this, out);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  int64_t in = numElements(getShape(getInput())),
          out = numElements(getShape(getOutput()));
  if (in != out)
    return emitOpError() << "cannot reshape " << in << " elements to "
                         << getOutput().getType() << " (" << out
                         << " elements)";
  return success();
}

LogicalResult PermuteOp::verify() {
  auto in = getShape(getInput());
  auto order = getI64s(getOrder());
  if (order.size() != in.size())
    return emitOpError() << "order has " << order.size()
                         << " entries but the input has rank " << in.size();
  SmallVector<bool> seen(order.size(), false);
  SmallVector<int64_t> out;
  for (int64_t d : order) {
    if (d < 0 || d >= int64_t(order.size()) || seen[d])
      return emitOpError() << "order must be a permutation of [0, "
                           << order.size() << ")";
    seen[d] = true;
    out.push_back(in[d]);
  }
  return verifyResultShape(*this, out);
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  auto first = getShape(getInputs()[0]);
  int64_t axis = getAxis();
  if (failed(verifyAxisRange(*this, "axis", axis, first.size())))
    return failure();
  SmallVector<int64_t> out(first);
  out[axis] = 0;
  for (Value v : getInputs()) {
    auto s = getShape(v);
    if (s.size() != first.size())
      return emitOpError() << "inputs must have the same rank, got "
                           << getInputs()[0].getType() << " and "
                           << v.getType();
    for (size_t d = 0; d < s.size(); ++d)
      if (int64_t(d) != axis && s[d] != first[d])
        return emitOpError() << "inputs differ in dim " << d
                             << " (not the concat axis " << axis
                             << "): " << getInputs()[0].getType() << " and "
                             << v.getType();
    out[axis] += s[axis];
  }
  return verifyResultShape(*this, out);
}

LogicalResult SliceOp::verify() {
  auto in = getShape(getInput()), out = getShape(getOutput());
  auto offsets = getI64s(getOffsets()), steps = getI64s(getSteps());
  if (offsets.size() != in.size() || steps.size() != in.size())
    return emitOpError() << "offsets and steps need one value per input dim ("
                         << in.size() << "), got " << offsets.size() << " and "
                         << steps.size();
  if (out.size() != in.size())
    return emitOpError() << "result rank " << out.size()
                         << " differs from input rank " << in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    if (steps[d] == 0)
      return emitOpError() << "step of dim " << d << " must be non-zero";
    if (out[d] == 0)
      continue;
    int64_t last = offsets[d] + (out[d] - 1) * steps[d];
    if (offsets[d] < 0 || offsets[d] >= in[d] || last < 0 || last >= in[d])
      return emitOpError() << "dim " << d << " reads elements " << offsets[d]
                           << " to " << last << " (step " << steps[d]
                           << "), outside [0, " << in[d] << ")";
  }
  return success();
}

LogicalResult GatherOp::verify() {
  auto in = getShape(getInput()), idx = getShape(getIndices());
  int64_t axis = getAxis();
  if (failed(verifyAxisRange(*this, "axis", axis, in.size())))
    return failure();
  Type et = getIndices().getType().getElementType();
  if (!et.isF32() && !et.isSignlessInteger())
    return emitOpError() << "indices must be f32 (integral values) or a "
                         << "signless integer type, got " << et;
  SmallVector<int64_t> out(in.take_front(axis));
  llvm::append_range(out, idx);
  llvm::append_range(out, in.drop_front(axis + 1));
  return verifyResultShape(*this, out);
}

LogicalResult PadOp::verify() {
  auto mode = parsePadMode(getMode());
  if (!mode)
    return emitOpError() << "mode must be constant, reflect or edge, got '"
                         << getMode() << "'";
  auto in = getShape(getInput());
  if (failed(verifyI64s(*this, "pads", getPads(), 2 * in.size(), 0)))
    return failure();
  auto pads = getI64s(getPads());
  SmallVector<int64_t> out;
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t most = std::max(pads[d], pads[in.size() + d]);
    if (*mode == PadMode::Reflect && most >= in[d])
      return emitOpError() << "reflect pads of dim " << d
                           << " must be smaller than its size " << in[d];
    if (*mode == PadMode::Edge && most > 0 && in[d] == 0)
      return emitOpError() << "edge padding needs a non-empty dim " << d;
    out.push_back(in[d] + pads[d] + pads[in.size() + d]);
  }
  return verifyResultShape(*this, out);
}

LogicalResult UpsampleOp::verify() {
  if (getScaleH() < 1 || getScaleW() < 1)
    return emitOpError() << "scales must be >= 1, got " << getScaleH()
                         << " and " << getScaleW();
  auto in = getShape(getInput());
  if (in.size() != 4)
    return emitOpError() << "input must be NCHW (rank 4), got "
                         << getInput().getType();
  return verifyResultShape(
      *this, {in[0], in[1], in[2] * getScaleH(), in[3] * getScaleW()});
}

LogicalResult DeconvOp::verify() {
  Operation *op = *this;
  if (failed(verifyI64s(op, "kernel_shape", getKernelShape(), 2, 1)) ||
      failed(verifyI64s(op, "strides", getStrides(), 2, 1)) ||
      failed(verifyI64s(op, "dilations", getDilations(), 2, 1)) ||
      failed(verifyI64s(op, "pads", getPads(), 4, 0)))
    return failure();
  auto in = getShape(getInput()), f = getShape(getFilter()),
       out = getShape(getOutput());
  if (in.size() != 4 || f.size() != 4 || out.size() != 4)
    return emitOpError() << "input, filter and result must have rank 4";
  auto kernel = getI64s(getKernelShape());
  if (f[2] != kernel[0] || f[3] != kernel[1])
    return emitOpError() << "filter spatial dims "
                         << shapeToString(f.drop_front(2))
                         << " differ from kernel_shape "
                         << shapeToString(kernel);
  int64_t group = getGroup();
  if (group < 1 || f[0] % group != 0 || in[1] != f[0])
    return emitOpError() << "filter " << shapeToString(f)
                         << " does not fit an input of " << in[1]
                         << " channels with group " << group;
  if (!isNone(getBias()) && numElements(getShape(getBias())) != f[1] * group)
    return emitOpError() << "bias must have " << f[1] * group
                         << " elements, got "
                         << numElements(getShape(getBias()));
  if (out[0] != in[0] || out[1] != f[1] * group)
    return emitOpError() << "result shape " << shapeToString(out)
                         << " must have batch " << in[0] << " and "
                         << f[1] * group << " channels";
  auto s = getI64s(getStrides()), d = getI64s(getDilations()),
       p = getI64s(getPads());
  for (int i = 0; i < 2; ++i) {
    // The result may exceed the plain extent by the output padding.
    int64_t base =
        (in[2 + i] - 1) * s[i] - p[i] - p[2 + i] + d[i] * (kernel[i] - 1) + 1;
    if (out[2 + i] < std::max<int64_t>(base, 1) ||
        out[2 + i] >= base + std::max(s[i], d[i]))
      return emitOpError() << "result dim " << 2 + i << " is " << out[2 + i]
                           << ", expected " << base
                           << " plus an output padding below "
                           << std::max(s[i], d[i]);
  }
  return success();
}

LogicalResult InterpOp::verify() {
  auto in = getShape(getInput()), ah = getShape(getHeightMatrix()),
       aw = getShape(getWidthMatrix()), out = getShape(getOutput());
  if (in.size() != 4 || out.size() != 4)
    return emitOpError() << "input and result must be NCHW (rank 4)";
  if (ah.size() != 2 || aw.size() != 2 || ah[0] != out[2] ||
      ah[1] != in[2] || aw[0] != out[3] || aw[1] != in[3])
    return emitOpError() << "height_matrix " << shapeToString(ah)
                         << " and width_matrix " << shapeToString(aw)
                         << " must be [OH, H] and [OW, W] for "
                         << shapeToString(in) << " -> "
                         << shapeToString(out);
  if (out[0] != in[0] || out[1] != in[1])
    return emitOpError() << "resizes only H and W";
  return success();
}

} // namespace tpu

//===----------------------------------------------------------------------===//
// Quantized types
//===----------------------------------------------------------------------===//

namespace tpu {

/// An INT8 activation type: per-tensor !quant.uniform with i8 storage.
static bool isInt8Tensor(Type t) {
  auto q = uniformType(t);
  return q && q.getStorageTypeIntegralWidth() == 8 && q.isSigned();
}

static bool isIntegerTensor(Value v, unsigned width) {
  return getElementTypeOrSelf(v.getType()).isInteger(width);
}

LogicalResult verifyInt8MacOperands(Operation *op, Value input, Value weight,
                                    Value bias, Value quant, int64_t channels) {
  bool q = isQuantized(op->getResult(0).getType());
  if (!q) {
    if (quant)
      return op->emitOpError() << "has a 'quant' operand but a float result";
    return success();
  }
  if (!isInt8Tensor(op->getResult(0).getType()) ||
      !isInt8Tensor(input.getType()))
    return op->emitOpError()
           << "INT8 form needs i8 !quant.uniform input and result, got "
           << input.getType() << " -> " << op->getResult(0).getType();
  auto wt = getElementTypeOrSelf(weight.getType());
  auto wq = dyn_cast<quant::QuantizedType>(wt);
  if (!wq || wq.getStorageTypeIntegralWidth() != 8)
    return op->emitOpError() << "INT8 form needs an i8-quantized weight, got "
                             << weight.getType();
  if (!isNone(bias) && !isIntegerTensor(bias, 32))
    return op->emitOpError() << "INT8 form needs an i32 bias, got "
                             << bias.getType();
  if (!quant)
    return op->emitOpError()
           << "INT8 form needs a 'quant' operand of (multiplier, shift)";
  auto qs = getShape(quant);
  if (!isIntegerTensor(quant, 32) || qs.size() != 2 || qs[1] != 2 ||
      (qs[0] != 1 && qs[0] != channels))
    return op->emitOpError() << "'quant' must be i32 [1 or " << channels
                             << ", 2], got " << quant.getType();
  return success();
}

LogicalResult QuantCastOp::verify() {
  Type in = getInput().getType(), out = getOutput().getType();
  if (getShape(getInput()) != getShape(getOutput()))
    return emitOpError() << "changes the shape: " << in << " -> " << out;
  auto ok = [](Type t) {
    Type e = getElementTypeOrSelf(t);
    return isa<FloatType>(e) || isInt8Tensor(t);
  };
  if (!ok(in) || !ok(out))
    return emitOpError() << "converts between float and i8 !quant.uniform "
                         << "types only, got " << in << " -> " << out;
  return success();
}

LogicalResult RequantOp::verify() {
  if (!isInt8Tensor(getInput().getType()) ||
      !isInt8Tensor(getOutput().getType()))
    return emitOpError() << "needs i8 !quant.uniform input and result, got "
                         << getInput().getType() << " -> "
                         << getOutput().getType();
  return verifyResultShape(*this, getShape(getInput()));
}

LogicalResult LutOp::verify() {
  if (!isInt8Tensor(getInput().getType()) ||
      !isInt8Tensor(getOutput().getType()))
    return emitOpError() << "needs i8 !quant.uniform input and result, got "
                         << getInput().getType() << " -> "
                         << getOutput().getType();
  if (numElements(getShape(getTable())) != 256 ||
      !isIntegerTensor(getTable(), 8))
    return emitOpError() << "table must be 256 i8 values, got "
                         << getTable().getType();
  return verifyResultShape(*this, getShape(getInput()));
}

} // namespace tpu
