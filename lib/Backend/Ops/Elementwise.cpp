//===- Elementwise.cpp - Binary ops, activations and casts ----------------===//
//
// Same-shape operands stream as flat [1, lanes, 1, W] rows. Broadcasting
// operands are coalesced to at most four dims and streamed as 4-D tiles in
// which a broadcast dim has extent 1 and the TIU repeats it. A one-element
// constant operand becomes the instruction's scalar.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "tpuc/Dialect/Tpu/IR/QuantParams.h"
#include <tuple>

using namespace mlir;
using namespace tpuc::chip;

namespace tpuc {
namespace backend {
namespace {

/// Dims of a broadcast binary after dropping unit dims and merging dims
/// contiguous in the output and both inputs.
struct BDim {
  int64_t size, out, a, b;
};

SmallVector<BDim> coalesceBinary(ArrayRef<int64_t> outShape,
                                 ArrayRef<int64_t> aShape,
                                 ArrayRef<int64_t> bShape) {
  size_t r = outShape.size();
  auto aligned = [&](ArrayRef<int64_t> s) {
    SmallVector<int64_t> full(r - s.size(), 1);
    full.append(s.begin(), s.end());
    return full;
  };
  SmallVector<int64_t> as = aligned(aShape), bs = aligned(bShape);
  auto os = denseStrides(outShape), ast = denseStrides(as),
       bst = denseStrides(bs);
  SmallVector<BDim> dims;
  for (size_t i = 0; i < r; ++i) {
    if (outShape[i] == 1)
      continue;
    BDim d{outShape[i], os[i], as[i] == 1 ? 0 : ast[i],
           bs[i] == 1 ? 0 : bst[i]};
    if (!dims.empty()) {
      BDim &p = dims.back();
      if (p.out == d.out * d.size && p.a == d.a * d.size &&
          p.b == d.b * d.size) {
        p.size *= d.size;
        p.out = d.out, p.a = d.a, p.b = d.b;
        continue;
      }
    }
    dims.push_back(d);
  }
  return dims;
}

/// A one-element weight's value, if `v` is one.
std::optional<float> scalarConstant(CodegenContext &ctx, Value v) {
  auto w = v.getDefiningOp<top::WeightOp>();
  if (!w || numElements(getShape(v)) != 1)
    return std::nullopt;
  auto data = w.read();
  if (failed(data))
    return std::nullopt;
  return (**data)[0];
}

/// Streams `compute` over out = f(a, b), a and b broadcasting to out:
/// same-size operands as flat rows, others as coalesced 4-D tiles.
LogicalResult streamBinary(CodegenContext &ctx, const Tensor &a,
                           const Tensor &b, const Tensor &out,
                           unsigned numTemps, DType tempType,
                           function_ref<void(StreamTile &)> compute) {
  int64_t n = out.numElements();
  StreamOptions opts;
  opts.inTypes = {a.dtype, b.dtype};
  opts.tempType = tempType;
  if (a.numElements() == n && b.numElements() == n)
    return streamFlat(ctx, n, out.addr, {a.addr, b.addr}, out.dtype, numTemps,
                      compute, opts);
  SmallVector<BDim> dims = coalesceBinary(out.shape, a.shape, b.shape);
  if (dims.size() > 4)
    return ctx.error() << "codegen cannot broadcast "
                       << ctx.op()->getOperand(0).getType() << " with "
                       << ctx.op()->getOperand(1).getType()
                       << " (more than 4 dims after merging)";
  // One dim (a tensor and a broadcast scalar) would put every element on
  // its own channel row: split it over the lanes instead, as streamFlat does.
  const int64_t lanes = ctx.lanes();
  if (dims.size() == 1 && dims[0].size >= lanes && dims[0].size % lanes == 0) {
    BDim d = dims[0];
    int64_t w = d.size / lanes;
    dims.assign({BDim{lanes, d.out * w, d.a * w, d.b * w}, BDim{w, d.out, d.a, d.b}});
  }
  // Place the coalesced dims as [N, C, H, W], channels on lanes.
  static const int kSlots[5][4] = {
      {}, {1}, {1, 3}, {0, 1, 3}, {0, 1, 2, 3}};
  std::array<int64_t, 4> shape{1, 1, 1, 1}, os{0, 0, 0, 0};
  StreamInput ia{a.addr, {1, 1, 1, 1}, {0, 0, 0, 0}},
      ib{b.addr, {1, 1, 1, 1}, {0, 0, 0, 0}};
  for (size_t i = 0; i < dims.size(); ++i) {
    int s = kSlots[dims.size()][i];
    shape[s] = dims[i].size;
    os[s] = dims[i].out;
    ia.shape[s] = dims[i].a ? dims[i].size : 1;
    ia.strides[s] = dims[i].a;
    ib.shape[s] = dims[i].b ? dims[i].size : 1;
    ib.strides[s] = dims[i].b;
  }
  return streamElementwise(ctx, shape, out.addr, os, {ia, ib}, out.dtype,
                           numTemps, compute, opts);
}

/// INT8 Add/Sub/Mul (QuantParams.h): both operands rescaled into INT32
/// scratch, combined there (relu on the accumulator), then requantized.
struct QuantBinary {
  BinaryOp kind;
  bool relu;
  int32_t zl = 0, zr = 0, ml = 1, mr = 1;
  Requant rq;

  QuantBinary(Operation *op, BinaryOp kind, bool relu) : kind(kind), relu(relu) {
    tpu::QParams ql = tpu::qparams(op->getOperand(0).getType()),
                 qr = tpu::qparams(op->getOperand(1).getType()),
                 qo = tpu::qparams(op->getResult(0).getType());
    zl = ql.zp, zr = qr.zp, rq.zp = qo.zp;
    if (kind == BinaryOp::Mul) {
      std::tie(rq.multiplier, rq.shift) = tpu::mulParams(ql, qr, qo);
    } else {
      tpu::SharedShift sp = tpu::addParams(ql, qr, qo);
      ml = sp.m[0], mr = sp.m[1], rq.shift = sp.shift;
    }
  }
  static bool supports(Operation *op, BinaryOp kind) {
    return (kind == BinaryOp::Add || kind == BinaryOp::Sub ||
            kind == BinaryOp::Mul) &&
           llvm::all_of(op->getOperandTypes(), [](Type t) {
             return tpu::isQuantized(t) && chipDType(t) == DType::INT8;
           }) &&
           chipDType(op->getResult(0).getType()) == DType::INT8;
  }
  /// `t0`, `t1`: INT32 scratch of the result's shape.
  void emit(function_ref<uint32_t(const Instruction &)> e, const Operand &out,
            const Operand &a, const Operand &b, const Operand &t0,
            const Operand &t1) const {
    emitRescale(e, t0, a, zl, ml);
    emitRescale(e, t1, b, zr, mr);
    e(makeBinary(kind, t0, t0, t1, relu));
    emitRequant(e, out, t0, rq);
  }
};

LogicalResult quantBinaryCodegen(CodegenContext &ctx, const Tensor &a,
                                 const Tensor &b, const Tensor &out,
                                 BinaryOp kind, bool relu) {
  Operation *op = ctx.op();
  if (a.dtype != DType::INT8 || b.dtype != DType::INT8 ||
      out.dtype != DType::INT8 || !tpu::isQuantized(op->getOperand(0).getType()) ||
      !tpu::isQuantized(op->getOperand(1).getType()))
    return ctx.error() << "INT8 codegen needs quantized INT8 operands";
  if (!QuantBinary::supports(op, kind))
    return ctx.error() << "has no INT8 codegen";
  QuantBinary q(op, kind, relu);
  return streamBinary(ctx, a, b, out, 2, DType::INT32, [&](StreamTile &t) {
    q.emit([&](const Instruction &i) { return t.emit(i); }, t.out, t.ins[0],
           t.ins[1], t.temps[0], t.temps[1]);
  });
}

LogicalResult binaryCodegen(CodegenContext &ctx, BinaryOp kind, bool relu) {
  Operation *op = ctx.op();
  auto a = getTensor(ctx, op->getOperand(0)),
       b = getTensor(ctx, op->getOperand(1)),
       out = getTensor(ctx, op->getResult(0));
  if (failed(a) || failed(b) || failed(out))
    return failure();
  bool selects = kind == BinaryOp::Max || kind == BinaryOp::Min;
  // Max/Min of one quantized type select values: no rescaling.
  if (isQuantizedOp(op) && !selects)
    return quantBinaryCodegen(ctx, *a, *b, *out, kind, relu);
  auto dtype = selects ? storageType(ctx) : floatComputeType(ctx);
  if (failed(dtype))
    return failure();
  int64_t n = out->numElements();

  // A one-element constant operand is folded into the instruction.
  for (int k = 0; k < 2; ++k) {
    auto s = scalarConstant(ctx, op->getOperand(k));
    const Tensor &other = k == 0 ? *b : *a;
    if (!s || other.numElements() != n)
      continue;
    return streamFlat(ctx, n, out->addr, {other.addr}, *dtype, 0,
                      [&](StreamTile &t) {
                        Instruction i = makeBinaryScalar(
                            kind, t.out, t.ins[0], *s, /*scalar_first=*/k == 0);
                        if (relu)
                          i.flags |= kFlagRelu;
                        t.emit(i);
                      });
  }
  return streamBinary(ctx, *a, *b, *out, 0, *dtype, [&](StreamTile &t) {
    t.emit(makeBinary(kind, t.out, t.ins[0], t.ins[1], relu));
  });
}

template <typename OpTy, BinaryOp Kind>
struct BinaryModel
    : public CodegenInterface::ExternalModel<BinaryModel<OpTy, Kind>, OpTy> {
  LogicalResult codegen(Operation *op, CodegenContext &ctx) const {
    return binaryCodegen(ctx, Kind, cast<OpTy>(op).getDoRelu());
  }

  /// Operands broadcast to the result dim by dim (leading dims added).
  bool supportsLocal(Operation *op) const {
    auto out = getShape(op->getResult(0));
    for (Value v : op->getOperands()) {
      auto s = getShape(v);
      if (s.size() > out.size())
        return false;
      size_t lead = out.size() - s.size();
      for (size_t i = 0; i < s.size(); ++i)
        if (s[i] != 1 && s[i] != out[lead + i])
          return false;
    }
    return true;
  }
  bool localElementwise(Operation *) const { return true; }
  /// Operands broadcasting to the result as supportsLocal's (the INT32
  /// scratch has the result's shape: each rescale broadcasts its operand).
  bool localQuantized(Operation *op) const {
    return QuantBinary::supports(op, Kind) && supportsLocal(op);
  }
  unsigned localTemps(Operation *op) const { return isQuantizedOp(op) ? 2 : 0; }
  Type localTempType(Operation *op, unsigned) const {
    return IntegerType::get(op->getContext(), 32);
  }
  LogicalResult codegenLocal(Operation *op, CodegenContext &,
                             LocalOperands &t) const {
    bool relu = cast<OpTy>(op).getDoRelu();
    if (isQuantizedOp(op)) {
      QuantBinary(op, Kind, relu)
          .emit([&](const Instruction &i) { return t.emit(i); }, t.result.lmem,
                t.operands[0].lmem, t.operands[1].lmem, t.temps[0].lmem,
                t.temps[1].lmem);
      return success();
    }
    Operand out = t.result.lmem, a = t.operands[0].lmem,
            b = t.operands[1].lmem;
    for (int k = 0; k < 2; ++k) {
      Operand &bc = k ? b : a, &full = k ? a : b;
      auto rs = getShape(op->getResult(0));
      auto bb = batchBroadcast(getShape(op->getOperand(k)), rs);
      // Only an operand held as some of the batches of the matrix view
      // [batch, rows, 1, cols] (one batch broadcasts natively).
      if (!bb || bc.shape[0] == 1 || bc.shape[0] == out.shape[0] ||
          out.shape[0] != bb->outer * bb->inner ||
          out.shape[1] != rs[rs.size() - 2] || out.shape[2] != 1 ||
          out.shape[3] != rs.back())
        continue;
      // The batch [outer * inner] as N = outer, H = inner, so the TIU
      // broadcasts the operand along N or H.
      if (full.shape[0] != out.shape[0])
        return failure();
      for (Operand *o : {&out, &full}) {
        o->shape[0] = uint32_t(bb->outer), o->shape[2] = uint32_t(bb->inner);
        o->stride[2] = o->stride[0];
        o->stride[0] *= int32_t(bb->inner);
      }
      if (!bb->heldOuter) {
        bc.shape[2] = bc.shape[0], bc.stride[2] = bc.stride[0];
        bc.shape[0] = 1;
      }
      break;
    }
    t.emit(makeBinary(Kind, out, a, b, relu));
    return success();
  }
  /// Float ops take an operand broadcast over a split of the batch.
  bool localBatchBroadcast(Operation *op) const { return !isQuantizedOp(op); }
};

struct ActiveModel
    : public CodegenInterface::ExternalModel<ActiveModel, tpu::ActiveOp> {
  LogicalResult codegen(Operation *op, CodegenContext &ctx) const {
    auto dtype = floatComputeType(ctx);
    auto in = getTensor(ctx, op->getOperand(0)),
         out = getTensor(ctx, op->getResult(0));
    if (failed(dtype) || failed(in) || failed(out))
      return failure();
    bool failedAny = false;
    LogicalResult r = streamFlat(
        ctx, out->numElements(), out->addr, {in->addr}, *dtype, 1,
        [&](StreamTile &t) {
          failedAny |= failed(emitActive(
              [&](const Instruction &i) { return t.emit(i); }, op, t.out,
              t.ins[0], t.temps[0]));
        });
    return success(succeeded(r) && !failedAny);
  }

  bool supportsLocal(Operation *) const { return true; }
  bool localElementwise(Operation *) const { return true; }
  unsigned localTemps(Operation *op) const {
    return activeNeedsTemp(op) ? 1 : 0;
  }
  LogicalResult codegenLocal(Operation *op, CodegenContext &,
                             LocalOperands &t) const {
    const Operand &out = t.result.lmem;
    return emitActive([&](const Instruction &i) { return t.emit(i); }, op, out,
                      t.operands[0].lmem,
                      t.temps.empty() ? out : t.temps[0].lmem);
  }
};

/// The format a Cast converts through (values stay in the float dtype:
/// converted to it and back) and how it rounds; Invalid for F32.
std::pair<DType, RoundMode> castVia(tpu::CastOp op) {
  switch (*parseCastKind(op.getTo())) {
  case CastKind::F32:
    break;
  case CastKind::F16:
    return {DType::F16, RoundMode::HalfToEven};
  case CastKind::BF16:
    return {DType::BF16, RoundMode::HalfToEven};
  case CastKind::I32:
    return {DType::INT32, RoundMode::TowardZero};
  case CastKind::I8:
    return {DType::INT8, RoundMode::TowardZero};
  case CastKind::UI8:
    return {DType::UINT8, RoundMode::TowardZero};
  case CastKind::Bool:
    return {DType::INT8, RoundMode::Up};
  }
  return {DType::Invalid, RoundMode::TowardZero};
}

/// A Cast from `in` to `out` with `tmp` (of their shape, at least as wide
/// as the format it converts through) as scratch.
void emitCast(function_ref<uint32_t(const Instruction &)> emit,
              tpu::CastOp op, const Operand &out, const Operand &in,
              const Operand &tmp) {
  auto [via, round] = castVia(op);
  if (via == DType::Invalid) {
    emit(makeBinaryScalar(BinaryOp::Mul, out, in, 1.0));
    return;
  }
  Operand src = in;
  if (*parseCastKind(op.getTo()) == CastKind::Bool) {
    // x != 0  ==  ceil(min(|x|, 1)) for every non-NaN x.
    emit(makeActive(ActOp::Abs, tmp, src));
    emit(makeBinaryScalar(BinaryOp::Min, tmp, tmp, 1.0));
    src = tmp;
  }
  Operand mid = tmp;
  mid.dtype = via;
  emit(makeCast(mid, src, round));
  emit(makeCast(out, mid));
}

struct CastModel
    : public CodegenInterface::ExternalModel<CastModel, tpu::CastOp> {
  LogicalResult codegen(Operation *op, CodegenContext &ctx) const {
    auto dtype = floatComputeType(ctx);
    auto in = getTensor(ctx, op->getOperand(0)),
         out = getTensor(ctx, op->getResult(0));
    if (failed(dtype) || failed(in) || failed(out))
      return failure();
    return streamFlat(ctx, out->numElements(), out->addr, {in->addr}, *dtype,
                      1, [&](StreamTile &t) {
                        emitCast([&](const Instruction &i) { return t.emit(i); },
                                 cast<tpu::CastOp>(op), t.out, t.ins[0],
                                 t.temps[0]);
                      });
  }

  /// In a group its scratch is a buffer of the result's dtype, which must
  /// hold the format it converts through.
  bool supportsLocal(Operation *op) const {
    DType t = chipDType(op->getResult(0).getType());
    DType via = castVia(cast<tpu::CastOp>(op)).first;
    return isFloat(t) && chipDType(op->getOperand(0).getType()) == t &&
           (via == DType::Invalid || dtypeSize(via) <= dtypeSize(t));
  }
  bool localElementwise(Operation *) const { return true; }
  unsigned localTemps(Operation *) const { return 1; }
  LogicalResult codegenLocal(Operation *op, CodegenContext &,
                             LocalOperands &t) const {
    emitCast([&](const Instruction &i) { return t.emit(i); },
             cast<tpu::CastOp>(op), t.result.lmem, t.operands[0].lmem,
             t.temps[0].lmem);
    return success();
  }
};

/// QuantCast's arithmetic in F32 (QuantParams.h) from `in` to `out`, `tmp`
/// an F32 scratch of their shape: quantize x * inv (+ zp) then cast half
/// away from zero; dequantize (q - zp) * scale rounded once to the result.
/// Float to float: one cast.
void emitQuantCast(function_ref<uint32_t(const Instruction &)> emit,
                   Operation *op, const Operand &out, const Operand &in,
                   const Operand &tmp) {
  Type inType = op->getOperand(0).getType(),
       outType = op->getResult(0).getType();
  if (tpu::isQuantized(outType)) {
    tpu::QParams q = tpu::qparams(outType);
    float inv = float(1.0 / q.scale);
    emit(makeBinaryScalar(BinaryOp::Mul, tmp, in, inv));
    if (q.zp != 0)
      emit(makeBinaryScalar(BinaryOp::Add, tmp, tmp, float(q.zp)));
    emit(makeCast(out, tmp, tpu::kQuantRound));
  } else if (tpu::isQuantized(inType)) {
    tpu::QParams q = tpu::qparams(inType);
    emit(makeBinaryScalar(BinaryOp::Sub, tmp, in, float(q.zp)));
    emit(makeBinaryScalar(BinaryOp::Mul, out, tmp, float(q.scale)));
  } else {
    emit(makeCast(out, in, RoundMode::HalfToEven));
  }
}

/// Float <-> INT8 and float <-> float casts (emitQuantCast).
struct QuantCastModel
    : public CodegenInterface::ExternalModel<QuantCastModel, tpu::QuantCastOp> {
  LogicalResult codegen(Operation *op, CodegenContext &ctx) const {
    auto in = getTensor(ctx, op->getOperand(0)),
         out = getTensor(ctx, op->getResult(0));
    if (failed(in) || failed(out))
      return failure();
    Type inType = op->getOperand(0).getType(), outType = op->getResult(0).getType();
    bool quantize = tpu::isQuantized(outType), dequantize = tpu::isQuantized(inType);
    if ((quantize && (!isFloat(in->dtype) || out->dtype != DType::INT8)) ||
        (dequantize && (in->dtype != DType::INT8 || !isFloat(out->dtype))) ||
        (!quantize && !dequantize && (!isFloat(in->dtype) || !isFloat(out->dtype))))
      return ctx.error() << "codegen supports float <-> INT8 and float <-> "
                         << "float casts, got " << inType << " -> " << outType;
    StreamOptions opts;
    opts.inTypes = {in->dtype};
    opts.tempType = DType::F32;
    return streamFlat(
        ctx, out->numElements(), out->addr, {in->addr}, out->dtype, 1,
        [&](StreamTile &t) {
          emitQuantCast([&](const Instruction &i) { return t.emit(i); }, op,
                        t.out, t.ins[0], t.temps[0]);
        },
        opts);
  }

  /// In a group: the casts around float islands (F16 LayerNorm, Softmax)
  /// between INT8 ops, elementwise on the two types.
  bool supportsLocal(Operation *op) const {
    DType in = chipDType(op->getOperand(0).getType()),
          out = chipDType(op->getResult(0).getType());
    return getShape(op->getOperand(0)) == getShape(op->getResult(0)) &&
           ((isFloat(in) && (isFloat(out) || out == DType::INT8)) ||
            (in == DType::INT8 && isFloat(out)));
  }
  bool localElementwise(Operation *) const { return true; }
  bool localQuantized(Operation *) const { return true; }
  unsigned localTemps(Operation *) const { return 1; }
  Type localTempType(Operation *op, unsigned) const {
    return Float32Type::get(op->getContext());
  }
  LogicalResult codegenLocal(Operation *op, CodegenContext &,
                             LocalOperands &t) const {
    emitQuantCast([&](const Instruction &i) { return t.emit(i); }, op,
                  t.result.lmem, t.operands[0].lmem, t.temps[0].lmem);
    return success();
  }
};

/// INT8 rescale: requantize(x - zi, m, s, zo) through an INT32 scratch.
struct RequantModel
    : public CodegenInterface::ExternalModel<RequantModel, tpu::RequantOp> {
  LogicalResult codegen(Operation *op, CodegenContext &ctx) const {
    auto in = getTensor(ctx, op->getOperand(0)),
         out = getTensor(ctx, op->getResult(0));
    if (failed(in) || failed(out))
      return failure();
    if (in->dtype != DType::INT8 || out->dtype != DType::INT8)
      return ctx.error() << "codegen supports INT8 -> INT8 requant only";
    tpu::QParams qi = tpu::qparams(op->getOperand(0).getType()),
                 qo = tpu::qparams(op->getResult(0).getType());
    Requant rq;
    std::tie(rq.multiplier, rq.shift) = tpu::requantParams(qi, qo);
    rq.zp = qo.zp;
    StreamOptions opts;
    opts.inTypes = {in->dtype};
    opts.tempType = DType::INT32;
    return streamFlat(
        ctx, out->numElements(), out->addr, {in->addr}, out->dtype, 1,
        [&](StreamTile &t) {
          auto emit = [&](const Instruction &i) { return t.emit(i); };
          emitRescale(emit, t.temps[0], t.ins[0], qi.zp, 1);
          emitRequant(emit, t.out, t.temps[0], rq);
        },
        opts);
  }
};

/// INT8 function by table: the 256 entries stay in LMEM for every tile.
struct LutModel : public CodegenInterface::ExternalModel<LutModel, tpu::LutOp> {
  LogicalResult codegen(Operation *op, CodegenContext &ctx) const {
    auto lut = cast<tpu::LutOp>(op);
    auto in = getTensor(ctx, lut.getInput()), table = getTensor(ctx, lut.getTable()),
         out = getTensor(ctx, lut.getOutput());
    if (failed(in) || failed(table) || failed(out))
      return failure();
    if (in->dtype != DType::INT8 && in->dtype != DType::UINT8)
      return ctx.error() << "lut indices must be 8-bit, got " << lut.getInput().getType();
    if (table->numElements() != 256 || table->dtype != out->dtype)
      return ctx.error() << "lut table must hold 256 values of the result's "
                         << "type, got " << lut.getTable().getType();
    StreamOptions opts;
    opts.inTypes = {in->dtype};
    opts.consts.push_back({table->addr, {1, 1, 1, 256}, table->dtype});
    return streamFlat(ctx, out->numElements(), out->addr, {in->addr},
                      out->dtype, 0,
                      [&](StreamTile &t) {
                        t.emit(makeLut(t.out, t.ins[0], t.consts[0]));
                      },
                      opts);
  }

  /// In a group: elementwise on 8-bit indices, the 256-entry table held
  /// as [1, 1, 1, 256] for every lane, as the tiled code holds it.
  bool supportsLocal(Operation *op) const {
    auto lut = cast<tpu::LutOp>(op);
    DType in = chipDType(lut.getInput().getType()),
          out = chipDType(lut.getOutput().getType());
    return (in == DType::INT8 || in == DType::UINT8) &&
           numElements(getShape(lut.getTable())) == 256 &&
           chipDType(lut.getTable().getType()) == out &&
           lut.getTable().getDefiningOp<top::WeightOp>();
  }
  bool localElementwise(Operation *) const { return true; }
  bool localQuantized(Operation *) const { return true; }
  SmallVector<int64_t, 4> localShape(Operation *, unsigned index) const {
    if (index == 1)
      return {1, 1, 1, 256};
    return {};
  }
  LogicalResult codegenLocal(Operation *, CodegenContext &,
                             LocalOperands &t) const {
    t.emit(makeLut(t.result.lmem, t.operands[0].lmem, t.operands[1].lmem));
    return success();
  }
};

} // namespace

void attachElementwiseModels(MLIRContext *ctx) {
  tpu::QuantCastOp::attachInterface<QuantCastModel>(*ctx);
  tpu::RequantOp::attachInterface<RequantModel>(*ctx);
  tpu::LutOp::attachInterface<LutModel>(*ctx);
  tpu::AddOp::attachInterface<BinaryModel<tpu::AddOp, BinaryOp::Add>>(*ctx);
  tpu::SubOp::attachInterface<BinaryModel<tpu::SubOp, BinaryOp::Sub>>(*ctx);
  tpu::MulOp::attachInterface<BinaryModel<tpu::MulOp, BinaryOp::Mul>>(*ctx);
  tpu::DivOp::attachInterface<BinaryModel<tpu::DivOp, BinaryOp::Div>>(*ctx);
  tpu::MaxOp::attachInterface<BinaryModel<tpu::MaxOp, BinaryOp::Max>>(*ctx);
  tpu::MinOp::attachInterface<BinaryModel<tpu::MinOp, BinaryOp::Min>>(*ctx);
  tpu::ActiveOp::attachInterface<ActiveModel>(*ctx);
  tpu::CastOp::attachInterface<CastModel>(*ctx);
}

} // namespace backend
} // namespace tpuc
