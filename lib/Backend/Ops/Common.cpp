//===- Common.cpp - Helpers shared by the op code generators --------------===//
#include "Common.h"
#include "tpuc/Dialect/Tpu/IR/QuantParams.h"
#include <cmath>

using namespace mlir;
using namespace tpuc::chip;

namespace tpuc {
namespace backend {

FailureOr<Tensor> getTensor(CodegenContext &ctx, Value v) {
  auto addr = ddrAddr(v);
  if (!addr)
    return ctx.error() << "operand has no DDR address (run tpu-assign-address)";
  return tensorAt(v, *addr);
}

Tensor tensorAt(Value v, uint64_t addr) {
  Tensor t;
  t.addr = addr;
  auto s = getShape(v);
  t.shape.assign(s.begin(), s.end());
  t.dtype = chipDType(v.getType());
  return t;
}

FailureOr<DType> floatComputeType(CodegenContext &ctx, ArrayRef<unsigned> skip) {
  auto t = storageType(ctx, skip);
  if (succeeded(t) && !isFloat(*t)) {
    ctx.error() << "codegen supports float tensors only here, got "
                << ctx.op()->getResult(0).getType();
    return failure();
  }
  return t;
}

FailureOr<DType> storageType(CodegenContext &ctx, ArrayRef<unsigned> skip) {
  Operation *op = ctx.op();
  DType t = chipDType(op->getResult(0).getType());
  for (OpOperand &o : op->getOpOperands()) {
    if (isNone(o.get()) || llvm::is_contained(skip, o.getOperandNumber()))
      continue;
    if (chipDType(o.get().getType()) != t) {
      ctx.error() << "codegen needs operands and result of one element type, "
                  << "got " << o.get().getType() << " and "
                  << op->getResult(0).getType();
      return failure();
    }
  }
  if (t == DType::Invalid) {
    ctx.error() << "codegen has no chip dtype for " << op->getResult(0).getType();
    return failure();
  }
  return t;
}

WindowRows windowRows(int64_t outLo, int64_t outHi, int64_t H, int64_t k,
                      int64_t s, int64_t d, int64_t pt) {
  int64_t start = outLo * s - pt, end = (outHi - 1) * s - pt + d * (k - 1) + 1;
  return {std::max<int64_t>(start, 0), std::min(end, H),
          std::max<int64_t>(0, -start), std::max<int64_t>(0, end - H)};
}

bool elementwiseInputRows(Operation *op, unsigned index, int64_t lo,
                          int64_t hi, int64_t &inLo, int64_t &inHi) {
  auto out = getShape(op->getResult(0));
  auto in = getShape(op->getOperand(index));
  if (!cast<CodegenInterface>(op).localElementwise() || out.size() != 4 ||
      in.size() > 4)
    return false;
  int64_t h = in.size() >= 2 ? in[in.size() - 2] : 1;
  if (h == out[2])
    inLo = lo, inHi = hi;
  else if (h == 1)
    inLo = 0, inHi = 1;
  else
    return false;
  return true;
}

std::optional<BatchBroadcast> batchBroadcast(ArrayRef<int64_t> in,
                                             ArrayRef<int64_t> out) {
  const size_t r = out.size();
  if (r < 3 || in.size() > r || in.size() < 2 ||
      in.take_back(2) != out.take_back(2))
    return std::nullopt;
  SmallVector<int64_t> lead(r - 2 - (in.size() - 2), 1);
  lead.append(in.begin(), in.end() - 2);
  ArrayRef<int64_t> outLead = out.drop_back(2);
  // Split k: dims before k held (equal) and broadcast after it, or the
  // reverse; the first that fits (k = 0: broadcast over every batch).
  for (bool heldOuter : {true, false})
    for (size_t k = 0; k <= lead.size(); ++k) {
      bool fits = true;
      for (size_t i = 0; i < lead.size() && fits; ++i) {
        bool held = (i < k) == heldOuter;
        fits = held ? lead[i] == outLead[i] : lead[i] == 1;
      }
      int64_t outer = numElements(outLead.take_front(k)),
              inner = numElements(outLead.drop_front(k));
      if (fits && (heldOuter ? outer : inner) < outer * inner)
        return BatchBroadcast{outer, inner, heldOuter};
    }
  return std::nullopt;
}

bool isQuantizedOp(Operation *op) {
  return op->getNumResults() == 1 && tpu::isQuantized(op->getResult(0).getType());
}

int32_t resultZeroPoint(Operation *op) {
  return tpu::qparams(op->getResult(0).getType()).zp;
}

int32_t inputZeroPoint(Operation *op) {
  return tpu::qparams(op->getOperand(0).getType()).zp;
}

FailureOr<MacTypes> macTypes(CodegenContext &ctx, Value weight, Value bias) {
  return macTypes(ctx, ctx.op(), weight, bias);
}

FailureOr<MacTypes> macTypes(CodegenContext &ctx, Operation *op, Value weight,
                             Value bias) {
  MacTypes t;
  t.in = chipDType(op->getOperand(0).getType());
  t.weight = chipDType(weight.getType());
  t.out = chipDType(op->getResult(0).getType());
  t.bias = isNone(bias) ? t.out : chipDType(bias.getType());
  if (isQuantizedOp(op)) {
    t.acc = DType::INT32;
    if (t.in == DType::INT8 && t.weight == DType::INT8 &&
        t.bias == DType::INT32 && t.out == DType::INT8)
      return t;
    if (isNone(bias) && t.in == DType::INT8 && t.weight == DType::INT8 &&
        t.out == DType::INT8) {
      t.bias = DType::INT32;
      return t;
    }
  } else {
    t.acc = t.out;
    if (isFloat(t.out) && t.in == t.out && t.weight == t.out &&
        t.bias == t.out)
      return t;
  }
  op->emitOpError() << "codegen supports float operands of the result's type or "
              << "INT8 x INT8 (+ INT32 bias) -> INT8, got " << op->getOperand(0).getType()
              << ", " << weight.getType() << ", " << bias.getType() << " -> "
              << op->getResult(0).getType();
  return failure();
}

void storeMacResult(CodegenContext &ctx, const MacTypes &types,
                    const MacEpilogue &ep, const Operand &dst, LBuf &accBuf,
                    const Operand &acc, LBuf *qBuf, LBuf *tableBuf,
                    function_ref<void(LBuf &, const Operand &)> beforeStore) {
  if (!types.quantized()) {
    if (beforeStore)
      beforeStore(accBuf, acc);
    ctx.store(dst, accBuf, acc);
    return;
  }
  // Dense, whatever view of its buffer the accumulator is.
  Operand q = lmemTensor(qBuf->addr, acc.shape[0], acc.shape[1], acc.shape[2],
                         acc.shape[3], types.out);
  Operand table;
  if (tableBuf)
    table = lmemTensor(tableBuf->addr, 1, acc.shape[1], 1, 2, DType::INT32);
  SmallVector<LBuf *, 3> bufs{&accBuf, qBuf};
  if (tableBuf)
    bufs.push_back(tableBuf);
  emitRequant([&](const Instruction &i) { return ctx.tiu(i, bufs); }, q, acc,
              ep.rq, tableBuf ? &table : nullptr);
  if (beforeStore)
    beforeStore(*qBuf, q);
  ctx.store(dst, *qBuf, q);
}

uint32_t emitRequant(function_ref<uint32_t(const Instruction &)> emit,
                     const Operand &out, const Operand &acc, const Requant &rq,
                     const Operand *table) {
  if (table)
    return emit(makeRequantPerChannel(out, acc, *table, rq.zp, tpu::kQuantRound));
  return emit(makeRequant(out, acc, rq.multiplier, rq.shift, rq.zp,
                          tpu::kQuantRound));
}

FailureOr<MacEpilogue> macEpilogue(CodegenContext &ctx, Value quant,
                                   const MacTypes &types) {
  return macEpilogue(ctx, ctx.op(), quant, types);
}

FailureOr<MacEpilogue> macEpilogue(CodegenContext &ctx, Operation *op,
                                   Value quant, const MacTypes &types) {
  MacEpilogue e;
  if (!types.quantized())
    return e;
  if (!quant)
    return op->emitOpError() << "an INT8 result needs the `quant` operand";
  e.rq.zp = resultZeroPoint(op);
  auto shape = getShape(quant);
  if (shape.size() != 2 || shape[1] != 2)
    return ctx.error() << "quant operand must be [rows, 2], got "
                       << quant.getType();
  if (shape[0] > 1) {
    auto t = getTensor(ctx, quant);
    if (failed(t))
      return failure();
    if (t->dtype != DType::INT32)
      return ctx.error() << "quant operand must be i32, got " << quant.getType();
    e.table = t->addr;
    return e;
  }
  auto v = ctx.intConstant(quant);
  if (failed(v))
    return failure();
  e.rq.multiplier = int32_t((*v)[0]);
  e.rq.shift = int((*v)[1]);
  if (e.rq.shift < -31 || e.rq.shift > 62)
    return ctx.error() << "requant shift " << e.rq.shift
                       << " is outside the chip's [-31, 62]";
  return e;
}

void emitRescale(function_ref<uint32_t(const Instruction &)> emit,
                 const Operand &dst, const Operand &src, int32_t zp,
                 int32_t m) {
  // The sub also widens INT8 to INT32 when there is no zero point.
  if (zp != 0 || m == 1)
    emit(makeBinaryScalar(BinaryOp::Sub, dst, src, zp));
  if (m != 1)
    emit(makeBinaryScalar(BinaryOp::Mul, dst, zp != 0 ? dst : src, m));
}

bool activeNeedsTemp(Operation *op) {
  auto active = cast<tpu::ActiveOp>(op);
  auto mode = *tpu::parseActiveMode(active.getMode());
  return mode == tpu::ActiveMode::Pow || mode == tpu::ActiveMode::HardSwish;
}

LogicalResult emitActive(function_ref<uint32_t(const Instruction &)> emit,
                         Operation *op, const Operand &out, const Operand &in,
                         const Operand &tmp) {
  auto active = cast<tpu::ActiveOp>(op);
  auto act = [&](ActOp a, const Operand &dst, const Operand &src,
                 float alpha = 0.f, float beta = 0.f) {
    emit(makeActive(a, dst, src, alpha, beta));
  };

  switch (*tpu::parseActiveMode(active.getMode())) {
  case tpu::ActiveMode::Relu:
    if (auto hi = active.getMaxAttr())
      act(ActOp::Clip, out, in, 0.f, float(hi.getValueAsDouble()));
    else
      act(ActOp::Relu, out, in);
    return success();
  case tpu::ActiveMode::Clip:
    act(ActOp::Clip, out, in, float(active.getMinAttr().getValueAsDouble()),
        float(active.getMaxAttr().getValueAsDouble()));
    return success();
  case tpu::ActiveMode::Sigmoid:
    act(ActOp::Sigmoid, out, in);
    return success();
  case tpu::ActiveMode::Tanh:
    act(ActOp::Tanh, out, in);
    return success();
  case tpu::ActiveMode::Gelu:
    act(ActOp::Gelu, out, in);
    return success();
  case tpu::ActiveMode::GeluTanh:
    act(ActOp::GeluTanh, out, in);
    return success();
  case tpu::ActiveMode::Silu:
    act(ActOp::Silu, out, in);
    return success();
  case tpu::ActiveMode::Erf:
    act(ActOp::Erf, out, in);
    return success();
  case tpu::ActiveMode::Abs:
    act(ActOp::Abs, out, in);
    return success();
  case tpu::ActiveMode::Exp:
    act(ActOp::Exp, out, in);
    return success();
  case tpu::ActiveMode::Log:
    act(ActOp::Log, out, in);
    return success();
  case tpu::ActiveMode::Sqrt:
    act(ActOp::Sqrt, out, in);
    return success();
  case tpu::ActiveMode::Rsqrt:
    act(ActOp::Rsqrt, out, in);
    return success();
  case tpu::ActiveMode::LeakyRelu:
    act(ActOp::LeakyRelu, out, in,
        float(active.getAlphaAttr().getValueAsDouble()));
    return success();
  case tpu::ActiveMode::HardSigmoid:
    act(ActOp::HardSigmoid, out, in,
        float(active.getAlphaAttr().getValueAsDouble()),
        float(active.getBetaAttr().getValueAsDouble()));
    return success();
  case tpu::ActiveMode::HardSwish:
    // x * hard_sigmoid(x): `in` is still needed, so the gate goes to `tmp`.
    act(ActOp::HardSigmoid, tmp, in, kHardSwishAlpha, kHardSwishBeta);
    emit(makeBinary(BinaryOp::Mul, out, in, tmp));
    return success();
  case tpu::ActiveMode::Pow: {
    double e = active.getExponentAttr().getValueAsDouble();
    if (e == 1.0) {
      emit(makeBinaryScalar(BinaryOp::Mul, out, in, 1.0));
    } else if (e == 2.0) {
      act(ActOp::Square, out, in);
    } else if (e == 0.5) {
      act(ActOp::Sqrt, out, in);
    } else if (e == -0.5) {
      act(ActOp::Rsqrt, out, in);
    } else if (e == -1.0) {
      act(ActOp::Reciprocal, out, in);
    } else if (e == std::trunc(e) && std::fabs(e) <= 16 && e != 0) {
      // Square-and-multiply: `tmp` holds x^(2^k), `out` the product.
      int64_t n = int64_t(std::fabs(e));
      bool have = false;
      emit(makeBinaryScalar(BinaryOp::Mul, tmp, in, 1.0));
      while (n) {
        if (n & 1) {
          if (have)
            emit(makeBinary(BinaryOp::Mul, out, out, tmp));
          else
            emit(makeBinaryScalar(BinaryOp::Mul, out, tmp, 1.0));
          have = true;
        }
        n >>= 1;
        if (n)
          act(ActOp::Square, tmp, tmp);
      }
      if (e < 0)
        act(ActOp::Reciprocal, out, out);
    } else if (e == 0) {
      // x^0 is 1 even for NaN, which no float instruction produces.
      return op->emitOpError()
             << "pow with exponent 0 is not supported by the codegen";
    } else {
      // x^e = exp(e * log x): NaN for x < 0 like pow with a fractional e.
      act(ActOp::Log, tmp, in);
      emit(makeBinaryScalar(BinaryOp::Mul, tmp, tmp, e));
      act(ActOp::Exp, out, tmp);
    }
    return success();
  }
  }
  return op->emitOpError() << "unknown activation mode";
}

LogicalResult Pipeline::addGroup(CodegenContext &ctx, uint64_t bytes,
                                 unsigned numSlots, int apartFrom,
                                 uint64_t keepFree) {
  Group g;
  SmallVector<uint64_t, 2> apart;
  if (apartFrom >= 0)
    for (const LBuf &b : groups[apartFrom].slots)
      apart.push_back(b.addr);
  for (unsigned i = 0; i < numSlots; ++i) {
    // The group's own later slots stay free too.
    uint64_t later = keepFree + footprint(bytes, numSlots - i - 1);
    auto b = apart.empty() ? ctx.alloc(bytes) : ctx.allocApart(bytes, apart, later);
    if (!b)
      return ctx.error() << "local memory exhausted (needs " << bytes
                         << " more bytes per lane)";
    g.slots.push_back(*b);
  }
  groups.push_back(g);
  return success();
}

} // namespace backend
} // namespace tpuc
