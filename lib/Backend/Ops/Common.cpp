//===- Common.cpp - Helpers shared by the op code generators --------------===//
#include "Common.h"
#include <cmath>

using namespace mlir;
using namespace tpuc::chip;

namespace tpuc {
namespace backend {

FailureOr<Tensor> getTensor(CodegenContext &ctx, Value v) {
  auto addr = ddrAddr(v);
  if (!addr)
    return ctx.error() << "operand has no DDR address (run tpu-assign-address)";
  Tensor t;
  t.addr = *addr;
  auto s = getShape(v);
  t.shape.assign(s.begin(), s.end());
  t.dtype = chipDType(v.getType());
  return t;
}

FailureOr<DType> floatComputeType(CodegenContext &ctx, ArrayRef<unsigned> skip) {
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
  if (!isFloat(t)) {
    ctx.error() << "codegen supports float tensors only (F32 mode), got "
                << op->getResult(0).getType();
    return failure();
  }
  return t;
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
                                 unsigned numSlots) {
  Group g;
  for (unsigned i = 0; i < numSlots; ++i) {
    auto b = ctx.alloc(bytes);
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
