//===- Elementwise.cpp - Binary ops, activations and casts ----------------===//
//
// Same-shape operands stream as flat [1, lanes, 1, W] rows. Broadcasting
// operands are coalesced to at most four dims and streamed as 4-D tiles in
// which a broadcast dim has extent 1 and the TIU repeats it. A one-element
// constant operand becomes the instruction's scalar.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

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

LogicalResult binaryCodegen(CodegenContext &ctx, BinaryOp kind, bool relu) {
  Operation *op = ctx.op();
  auto dtype = floatComputeType(ctx);
  if (failed(dtype))
    return failure();
  auto a = getTensor(ctx, op->getOperand(0)),
       b = getTensor(ctx, op->getOperand(1)),
       out = getTensor(ctx, op->getResult(0));
  if (failed(a) || failed(b) || failed(out))
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
  if (a->numElements() == n && b->numElements() == n)
    return streamFlat(ctx, n, out->addr, {a->addr, b->addr}, *dtype, 0,
                      [&](StreamTile &t) {
                        t.emit(makeBinary(kind, t.out, t.ins[0], t.ins[1],
                                          relu));
                      });

  SmallVector<BDim> dims = coalesceBinary(out->shape, a->shape, b->shape);
  if (dims.size() > 4)
    return ctx.error() << "codegen cannot broadcast "
                       << op->getOperand(0).getType() << " with "
                       << op->getOperand(1).getType()
                       << " (more than 4 dims after merging)";
  // Place the coalesced dims as [N, C, H, W], channels on lanes.
  static const int kSlots[5][4] = {
      {}, {1}, {1, 3}, {0, 1, 3}, {0, 1, 2, 3}};
  std::array<int64_t, 4> shape{1, 1, 1, 1}, os{0, 0, 0, 0};
  StreamInput ia{a->addr, {1, 1, 1, 1}, {0, 0, 0, 0}},
      ib{b->addr, {1, 1, 1, 1}, {0, 0, 0, 0}};
  for (size_t i = 0; i < dims.size(); ++i) {
    int s = kSlots[dims.size()][i];
    shape[s] = dims[i].size;
    os[s] = dims[i].out;
    ia.shape[s] = dims[i].a ? dims[i].size : 1;
    ia.strides[s] = dims[i].a;
    ib.shape[s] = dims[i].b ? dims[i].size : 1;
    ib.strides[s] = dims[i].b;
  }
  return streamElementwise(ctx, shape, out->addr, os, {ia, ib}, *dtype, 0,
                           [&](StreamTile &t) {
                             t.emit(makeBinary(kind, t.out, t.ins[0],
                                               t.ins[1], relu));
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
  LogicalResult codegenLocal(Operation *op, CodegenContext &,
                             LocalOperands &t) const {
    t.emit(makeBinary(Kind, t.result.lmem, t.operands[0].lmem,
                      t.operands[1].lmem, cast<OpTy>(op).getDoRelu()));
    return success();
  }
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

struct CastModel
    : public CodegenInterface::ExternalModel<CastModel, tpu::CastOp> {
  LogicalResult codegen(Operation *op, CodegenContext &ctx) const {
    auto dtype = floatComputeType(ctx);
    auto in = getTensor(ctx, op->getOperand(0)),
         out = getTensor(ctx, op->getResult(0));
    if (failed(dtype) || failed(in) || failed(out))
      return failure();
    auto kind = parseCastKind(cast<tpu::CastOp>(op).getTo());
    // Values stay in the float dtype: convert to the target format and back.
    DType via = DType::Invalid;
    RoundMode round = RoundMode::TowardZero;
    switch (*kind) {
    case CastKind::F32:
      break;
    case CastKind::F16:
      via = DType::F16, round = RoundMode::HalfToEven;
      break;
    case CastKind::BF16:
      via = DType::BF16, round = RoundMode::HalfToEven;
      break;
    case CastKind::I32:
      via = DType::INT32;
      break;
    case CastKind::I8:
      via = DType::INT8;
      break;
    case CastKind::UI8:
      via = DType::UINT8;
      break;
    case CastKind::Bool:
      via = DType::INT8, round = RoundMode::Up;
      break;
    }
    return streamFlat(
        ctx, out->numElements(), out->addr, {in->addr}, *dtype, 1,
        [&](StreamTile &t) {
          if (via == DType::Invalid) {
            t.emit(makeBinaryScalar(BinaryOp::Mul, t.out, t.ins[0], 1.0));
            return;
          }
          Operand src = t.ins[0];
          if (*kind == CastKind::Bool) {
            // x != 0  ==  ceil(min(|x|, 1)) for every non-NaN x.
            t.emit(makeActive(ActOp::Abs, t.temps[0], src));
            t.emit(makeBinaryScalar(BinaryOp::Min, t.temps[0], t.temps[0],
                                    1.0));
            src = t.temps[0];
          }
          Operand mid = t.temps[0];
          mid.dtype = via;
          t.emit(makeCast(mid, src, round));
          t.emit(makeCast(t.out, mid));
        });
  }
};

} // namespace

void attachElementwiseModels(MLIRContext *ctx) {
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
