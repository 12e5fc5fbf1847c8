// QuantizeInterface for every Tpu op: how each family computes in F16/BF16
// (the float form: operands cast, weights converted) and in INT8.
#include "tpuc/Conversion/TopToTpu/Quantize.h"
#include "tpuc/Dialect/Tpu/IR/QuantParams.h"
#include "tpuc/Dialect/Tpu/IR/TpuUtils.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"
#include "mlir/IR/TypeUtilities.h"
#include <cmath>

#include "tpuc/Conversion/TopToTpu/QuantizeInterface.cpp.inc"

using namespace mlir;
using namespace tpuc;
using tpu::LoweringMode;

namespace {

bool isInt8(Value v) { return tpu::isQuantized(v.getType()); }

int64_t roundHalfAway(double v) {
  return chip::roundToInt(v, tpu::kQuantRound, chip::DType::INT32);
}

/// Symmetric i8 values of `data` with `scale` (|q| <= 127).
std::vector<int8_t> quantizeSymmetric(ArrayRef<float> data, double scale) {
  std::vector<int8_t> q(data.size());
  for (size_t i = 0; i < data.size(); ++i)
    q[i] = int8_t(std::clamp<int64_t>(roundHalfAway(data[i] / scale), -127, 127));
  return q;
}

double absMaxScale(ArrayRef<float> data) {
  float m = 0;
  for (float v : data)
    m = std::max(m, std::fabs(v));
  return m > 0 ? m / 127.0 : 1.0 / 127.0;
}

/// A per-tensor symmetric i8 weight of a float weight operand, of `shape`
/// (the same elements in the same order) when one is given.
FailureOr<Value> int8Weight(QuantizeContext &ctx, Operation *op, Value w,
                            StringRef suffix, ArrayRef<int64_t> shape = {}) {
  auto weight = w.getDefiningOp<top::WeightOp>();
  auto data = weight.read();
  if (failed(data))
    return failure();
  double scale = absMaxScale(**data);
  auto q = quantizeSymmetric(**data, scale);
  auto *c = ctx.context();
  auto type = quant::UniformQuantizedType::get(
      quant::QuantizationFlags::Signed, IntegerType::get(c, 8),
      Float32Type::get(c), scale, 0, -128, 127);
  if (shape.empty())
    shape = getShape(w);
  return ctx.newWeight(op, getOpName(op) + "_" + suffix.str(),
                       RankedTensorType::get(shape, type),
                       NpyArray::of<int8_t>("|i1", q, shape));
}

/// The i32 [rows, 2] (multiplier, shift) weight of a Conv or MatMul.
Value requantTable(QuantizeContext &ctx, Operation *op,
                   ArrayRef<std::pair<int32_t, int>> rows) {
  std::vector<int32_t> flat;
  for (auto [m, s] : rows) {
    flat.push_back(m);
    flat.push_back(s);
  }
  SmallVector<int64_t> shape{int64_t(rows.size()), 2};
  return ctx.newWeight(op, getOpName(op) + "_requant",
                       RankedTensorType::get(shape, ctx.b.getI32Type()),
                       NpyArray::of<int32_t>("<i4", flat, shape));
}

Value biasWeight(QuantizeContext &ctx, Operation *op, ArrayRef<int64_t> bias) {
  std::vector<int32_t> b(bias.size());
  for (size_t i = 0; i < bias.size(); ++i)
    b[i] = int32_t(chip::saturate(bias[i], chip::DType::INT32));
  SmallVector<int64_t> shape{int64_t(b.size())};
  return ctx.newWeight(op, getOpName(op) + "_bias_i32",
                       RankedTensorType::get(shape, ctx.b.getI32Type()),
                       NpyArray::of<int32_t>("<i4", b, shape));
}

/// The float values of an optional bias operand (n zeros when none).
FailureOr<std::vector<float>> biasValues(Value bias, int64_t n) {
  if (isNone(bias))
    return std::vector<float>(n, 0.0f);
  auto w = bias.getDefiningOp<top::WeightOp>();
  auto data = w.read();
  if (failed(data))
    return failure();
  return **data;
}

bool isWeight(Value v) { return v.getDefiningOp<top::WeightOp>() != nullptr; }

/// An INT8 op's data input (cast to its calibrated type if float) and its
/// calibrated result type, with both types' scale and zero point.
struct Int8Io {
  Value in;
  quant::UniformQuantizedType out;
  tpu::QParams qi, qo;
};
FailureOr<Int8Io> int8Io(QuantizeContext &ctx, Operation *op, Value input,
                         double limit = -1) {
  auto in = ctx.int8Operand(input);
  auto out = ctx.int8ResultType(op, limit);
  if (failed(in) || failed(out))
    return failure();
  return Int8Io{*in, *out, tpu::qparams((*in).getType()), tpu::qparams(*out)};
}

/// Replaces `op`, an INT8 function of one INT8 tensor, by a 256-entry
/// tpu.Lut: `fn` evaluates it in float on the 256 dequantized inputs, its
/// results quantized to the result type.
LogicalResult replaceByLut(
    QuantizeContext &ctx, Operation *op, const Int8Io &io,
    function_ref<LogicalResult(const float *x, float *y)> fn) {
  auto table = tpu::int8Table(io.qi, io.qo, fn);
  if (failed(table))
    return failure();
  SmallVector<int64_t> shape{256};
  Value t = ctx.newWeight(op, getOpName(op) + "_table",
                          RankedTensorType::get(shape, ctx.b.getI8Type()),
                          NpyArray::of<int8_t>("|i1", *table, shape));
  OpBuilder::InsertionGuard g(ctx.b);
  ctx.b.setInsertionPoint(op);
  auto lut = tpu::LutOp::create(
      ctx.b, op->getLoc(),
      RankedTensorType::get(getShape(op->getResult(0)), io.out), io.in, t);
  op->getResult(0).replaceAllUsesWith(lut.getOutput());
  op->erase();
  return success();
}

//===----------------------------------------------------------------------===//
// Families
//===----------------------------------------------------------------------===//

/// Ops without an INT8 form (norms, softmax, reductions, division, ...).
template <unsigned... Keep>
struct FloatOnly {
  static constexpr bool movesValues = false;
  static bool hasInt8(Operation *, QuantizeContext &) { return false; }
  static LogicalResult int8(Operation *, QuantizeContext &) {
    return failure();
  }
  static LogicalResult floatForm(Operation *op, QuantizeContext &ctx,
                                 LoweringMode mode) {
    return ctx.quantizeFloat(op, mode, {Keep...});
  }
};

/// Data movement: INT8 when the data already is, in its type; an INT8 op
/// whose data is float (its producer fell back) stays in that float type
/// rather than casting twice.
template <unsigned... Keep>
struct Passthrough : FloatOnly<Keep...> {
  static constexpr bool movesValues = true;
  static LogicalResult floatForm(Operation *op, QuantizeContext &ctx,
                                 LoweringMode mode) {
    Type in = getElementTypeOrSelf(op->getOperand(0).getType());
    if (ctx.types.requestedMode(getOpName(op)) == LoweringMode::INT8 &&
        isa<FloatType>(in))
      return ctx.quantizeFloat(op, in, {Keep...});
    return ctx.quantizeFloat(op, mode, {Keep...});
  }
  static bool hasInt8(Operation *op, QuantizeContext &) {
    return isInt8(op->getOperand(0));
  }
  static LogicalResult int8(Operation *op, QuantizeContext &ctx) {
    Type t = getElementTypeOrSelf(op->getOperand(0).getType());
    QuantizeContext::setElementType(op, t);
    if (auto pad = dyn_cast<tpu::PadOp>(op)) {
      tpu::QParams q = tpu::qparams(t);
      float v = float(pad.getValue().convertToDouble());
      pad.setValueAttr(ctx.b.getF64FloatAttr(double(tpu::quantizeF32(v, q))));
    }
    return success();
  }
};

struct ConcatFamily : FloatOnly<> {
  static bool hasInt8(Operation *op, QuantizeContext &) {
    return llvm::all_of(op->getOperands(), isInt8);
  }
  static LogicalResult int8(Operation *op, QuantizeContext &ctx) {
    auto out = ctx.int8ResultType(op);
    if (failed(out))
      return failure();
    for (OpOperand &use : op->getOpOperands()) {
      Value v = use.get();
      if (getElementTypeOrSelf(v.getType()) == *out)
        continue;
      OpBuilder::InsertionGuard g(ctx.b);
      ctx.b.setInsertionPoint(op);
      auto loc = NameLoc::get(ctx.b.getStringAttr(
          getOpName(op) + "_in" + std::to_string(use.getOperandNumber())));
      use.set(tpu::RequantOp::create(ctx.b, loc,
                                     RankedTensorType::get(getShape(v), *out), v));
    }
    QuantizeContext::setElementType(op, *out);
    return success();
  }
};

struct ConvFamily : FloatOnly<> {
  static bool hasInt8(Operation *op, QuantizeContext &) {
    auto conv = cast<tpu::ConvOp>(op);
    return isWeight(conv.getFilter()) &&
           (isNone(conv.getBias()) || isWeight(conv.getBias()));
  }
  static LogicalResult int8(Operation *op, QuantizeContext &ctx) {
    auto conv = cast<tpu::ConvOp>(op);
    double limit = conv.getDoRelu() ? conv.getReluLimit().convertToDouble() : -1;
    auto io = int8Io(ctx, op, conv.getInput(), limit);
    if (failed(io))
      return failure();
    auto fw = conv.getFilter().getDefiningOp<top::WeightOp>().read();
    auto f = getShape(conv.getFilter());
    const int64_t oc = f[0], per = numElements(f) / oc;
    auto bias = biasValues(conv.getBias(), oc);
    if (failed(fw) || failed(bias))
      return failure();
    const tpu::QParams qi = io->qi, qo = io->qo;
    SmallVector<double> scales;
    std::vector<int8_t> q;
    SmallVector<int64_t> b(oc);
    SmallVector<std::pair<int32_t, int>> rq;
    for (int64_t c = 0; c < oc; ++c) {
      ArrayRef<float> row(&(**fw)[c * per], per);
      double s = absMaxScale(row);
      auto qr = quantizeSymmetric(row, s);
      int64_t sum = 0;
      for (int8_t v : qr)
        sum += v;
      q.insert(q.end(), qr.begin(), qr.end());
      scales.push_back(s);
      // The input's zero point, applied to every tap (the pad value too).
      b[c] = roundHalfAway((*bias)[c] / (qi.scale * s)) - qi.zp * sum;
      rq.push_back(tpu::quantizeMultiplier(qi.scale * s / qo.scale));
    }
    auto *c = ctx.context();
    auto ftype = quant::UniformQuantizedPerAxisType::get(
        quant::QuantizationFlags::Signed, IntegerType::get(c, 8),
        Float32Type::get(c), scales, SmallVector<int64_t>(oc, 0), 0, -128, 127);
    Value filter = ctx.newWeight(op, getOpName(op) + "_filter_i8",
                                 RankedTensorType::get(f, ftype),
                                 NpyArray::of<int8_t>("|i1", q, f));
    // The conv pads with the input's zero point (real 0) itself.
    conv.getInputMutable().assign(io->in);
    conv.getFilterMutable().assign(filter);
    conv.getBiasMutable().assign(biasWeight(ctx, op, b));
    conv.getQuantMutable().assign(requantTable(ctx, op, rq));
    QuantizeContext::setElementType(op, io->out);
    return success();
  }
};

struct MatMulFamily : FloatOnly<> {
  static bool hasInt8(Operation *op, QuantizeContext &ctx) {
    auto mm = cast<tpu::MatMulOp>(op);
    if (!isNone(mm.getBias()) && !isWeight(mm.getBias()))
      return false;
    if (isWeight(mm.getRight())) {
      // The zero-point correction is per column of one right matrix.
      auto r = getShape(mm.getRight());
      return !ctx.types.options().asymmetric ||
             numElements(r.drop_back(2)) == 1;
    }
    // Products of two run-time operands need symmetric types.
    return !ctx.types.options().asymmetric;
  }
  static LogicalResult int8(Operation *op, QuantizeContext &ctx) {
    auto mm = cast<tpu::MatMulOp>(op);
    auto io = int8Io(ctx, op, mm.getInput());
    if (failed(io))
      return failure();
    const tpu::QParams qi = io->qi, qo = io->qo;
    auto r = getShape(mm.getRight());
    const int64_t n = r.back(), k = r[r.size() - 2];
    Value right;
    if (isWeight(mm.getRight())) {
      auto w = int8Weight(ctx, op, mm.getRight(), "right_i8");
      if (failed(w))
        return failure();
      right = *w;
    } else {
      auto w = ctx.int8Operand(mm.getRight());
      if (failed(w))
        return failure();
      right = *w;
    }
    tpu::QParams qr = tpu::qparams(right.getType());
    auto bias = biasValues(mm.getBias(), n);
    if (failed(bias))
      return failure();
    SmallVector<int64_t> b(n);
    std::vector<float> rv;
    if (qi.zp != 0) {
      auto data = right.getDefiningOp<top::WeightOp>().read();
      if (failed(data))
        return failure();
      rv = **data;
    }
    bool anyBias = !isNone(mm.getBias()) || qi.zp != 0;
    for (int64_t j = 0; j < n; ++j) {
      int64_t sum = 0;
      for (int64_t kk = 0; qi.zp != 0 && kk < k; ++kk)
        sum += int64_t(rv[kk * n + j]);
      b[j] = roundHalfAway((*bias)[j] / (qi.scale * qr.scale)) - qi.zp * sum;
    }
    mm.getInputMutable().assign(io->in);
    mm.getRightMutable().assign(right);
    if (anyBias)
      mm.getBiasMutable().assign(biasWeight(ctx, op, b));
    mm.getQuantMutable().assign(requantTable(
        ctx, op, {tpu::quantizeMultiplier(qi.scale * qr.scale / qo.scale)}));
    QuantizeContext::setElementType(op, io->out);
    return success();
  }
};

/// Add, Sub and Mul: activations cast to INT8, constants quantized alone.
struct BinaryFamily : FloatOnly<> {
  static bool hasInt8(Operation *, QuantizeContext &) { return true; }
  static LogicalResult int8(Operation *op, QuantizeContext &ctx) {
    for (unsigned k = 0; k < 2; ++k)
      if (auto c = scalarWeight(op->getOperand(k));
          c && getShape(op->getOperand(1 - k)) == getShape(op->getResult(0)))
        return scalarLut(ctx, op, k, *c);
    auto out = ctx.int8ResultType(op);
    if (failed(out))
      return failure();
    auto outShape = getShape(op->getResult(0));
    for (OpOperand &use : op->getOpOperands()) {
      Value v = use.get();
      // A constant of the result's elements (a position embedding [L, D]
      // added to [1, L, D]) takes the result's shape: same-shape INT8
      // operands join layer groups.
      auto shape = numElements(getShape(v)) == numElements(outShape)
                       ? outShape
                       : getShape(v);
      auto q = isWeight(v) && !isInt8(v)
                   ? int8Weight(ctx, op, v,
                                "operand" + std::to_string(use.getOperandNumber()),
                                shape)
                   : ctx.int8Operand(v);
      if (failed(q))
        return failure();
      use.set(*q);
    }
    QuantizeContext::setElementType(op, *out);
    return success();
  }

private:
  /// The value of a one-element float weight (attention's scale of Q and K).
  static std::optional<float> scalarWeight(Value v) {
    auto w = v.getDefiningOp<top::WeightOp>();
    if (!w || isInt8(v) || numElements(getShape(v)) != 1)
      return std::nullopt;
    auto data = w.read();
    if (failed(data))
      return std::nullopt;
    return (**data)[0];
  }
  /// A binary op of a tensor and constant `c` (operand `k`) is a function
  /// of the tensor's 256 INT8 values: one table lookup, which joins layer
  /// groups, in place of two rescales, the op and a requant.
  static LogicalResult scalarLut(QuantizeContext &ctx, Operation *op,
                                 unsigned k, float c) {
    auto io = int8Io(ctx, op, op->getOperand(1 - k));
    if (failed(io))
      return failure();
    bool relu = false;
    if (auto add = dyn_cast<tpu::AddOp>(op))
      relu = add.getDoRelu();
    else if (auto sub = dyn_cast<tpu::SubOp>(op))
      relu = sub.getDoRelu();
    else
      relu = cast<tpu::MulOp>(op).getDoRelu();
    return replaceByLut(ctx, op, *io, [&](const float *x, float *y) {
      for (int i = 0; i < 256; ++i) {
        float a = k ? x[i] : c, b = k ? c : x[i];
        float r = isa<tpu::AddOp>(op) ? a + b : isa<tpu::SubOp>(op) ? a - b : a * b;
        y[i] = relu ? std::max(r, 0.0f) : r;
      }
      return success();
    });
  }
};

struct AvgPoolFamily : FloatOnly<> {
  static bool hasInt8(Operation *, QuantizeContext &) { return true; }
  static LogicalResult int8(Operation *op, QuantizeContext &ctx) {
    auto io = int8Io(ctx, op, op->getOperand(0));
    if (failed(io))
      return failure();
    op->setOperand(0, io->in);
    QuantizeContext::setElementType(op, io->out);
    return success();
  }
};

/// tpu.Active becomes a 256-entry tpu.Lut. GELU keeps its float form: its
/// INT8 error on transformer activations is what the users avoid.
struct ActiveFamily : FloatOnly<> {
  static bool hasInt8(Operation *op, QuantizeContext &) {
    auto mode = cast<tpu::ActiveOp>(op).getMode();
    return mode != "gelu" && mode != "gelu_tanh";
  }
  static LogicalResult int8(Operation *op, QuantizeContext &ctx) {
    auto act = cast<tpu::ActiveOp>(op);
    auto io = int8Io(ctx, op, act.getInput());
    if (failed(io))
      return failure();
    return replaceByLut(ctx, op, *io, [&](const float *x, float *y) {
      return act.evaluate(x, y, 256);
    });
  }
};

/// The new ops exist only in typed modules; they keep their types.
struct Typed {
  static constexpr bool movesValues = false;
  static bool hasInt8(Operation *, QuantizeContext &) { return true; }
  static LogicalResult int8(Operation *, QuantizeContext &) { return success(); }
  static LogicalResult floatForm(Operation *, QuantizeContext &, LoweringMode) {
    return success();
  }
};

template <typename Op, typename Family>
struct Model : QuantizeInterface::ExternalModel<Model<Op, Family>, Op> {
  bool hasInt8Form(Operation *op, QuantizeContext &ctx) const {
    return Family::hasInt8(op, ctx);
  }
  bool movesOperandValues(Operation *) const { return Family::movesValues; }
  LogicalResult quantize(Operation *op, QuantizeContext &ctx,
                         LoweringMode mode) const {
    if (mode == LoweringMode::INT8)
      return Family::int8(op, ctx);
    return Family::floatForm(op, ctx, mode);
  }
};

template <typename Family, typename... Ops>
void attach(MLIRContext *ctx) {
  (Ops::template attachInterface<Model<Ops, Family>>(*ctx), ...);
}

} // namespace

void tpuc::registerQuantizeExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tpu::TpuDialect *) {
    using namespace tpu;
    attach<ConvFamily, ConvOp>(ctx);
    attach<MatMulFamily, MatMulOp>(ctx);
    attach<BinaryFamily, AddOp, SubOp, MulOp>(ctx);
    attach<AvgPoolFamily, AvgPoolOp>(ctx);
    attach<ActiveFamily, ActiveOp>(ctx);
    attach<ConcatFamily, ConcatOp>(ctx);
    attach<Passthrough<>, ReshapeOp, PermuteOp, SliceOp, UpsampleOp, MaxPoolOp,
           PadOp>(ctx);
    attach<Passthrough<1>, GatherOp>(ctx);
    attach<FloatOnly<>, DivOp, MaxOp, MinOp, LayerNormOp, SoftmaxOp, ReduceOp,
           CastOp, DeconvOp, InterpOp>(ctx);
    attach<Typed, QuantCastOp, RequantOp, LutOp>(ctx);
  });
}
