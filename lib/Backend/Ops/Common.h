//===- Common.h - Helpers shared by the op code generators ------*- C++ -*-===//
#ifndef TPUC_LIB_BACKEND_OPS_COMMON_H
#define TPUC_LIB_BACKEND_OPS_COMMON_H
#include "tpuc/Backend/Codegen.h"
#include "tpuc/Backend/CodegenInterface.h"
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuUtils.h"
#include "tpuc/Interpreter/Kernels.h"
#include "tpuc/Support/OpHelpers.h"

namespace tpuc {
namespace backend {

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// A placed tensor operand: DDR address, shape and dtype.
struct Tensor {
  uint64_t addr = 0;
  llvm::SmallVector<int64_t, 6> shape;
  chip::DType dtype = chip::DType::Invalid;
  int64_t numElements() const { return tpuc::numElements(shape); }
};

/// The tensor behind `v`, or an op error when it is not placed in DDR or
/// its element type is not `want` (the op's compute dtype).
mlir::FailureOr<Tensor> getTensor(CodegenContext &ctx, mlir::Value v);
/// `v`'s shape and dtype at DDR address `addr` (a value a layer group keeps
/// in local memory has no address of its own).
Tensor tensorAt(mlir::Value v, uint64_t addr);

/// Fails unless every tensor operand and the result share one float dtype;
/// returns it. `skip` lists operand indices exempt from the check (indices).
mlir::FailureOr<chip::DType>
floatComputeType(CodegenContext &ctx, llvm::ArrayRef<unsigned> skip = {});
/// The same for ops that only move data: any one dtype (INT8 included).
mlir::FailureOr<chip::DType>
storageType(CodegenContext &ctx, llvm::ArrayRef<unsigned> skip = {});

/// Input rows [lo, hi) a sliding window (kernel k, stride s, dilation d,
/// top pad pt) over H rows reads for output rows [outLo, outHi), and the
/// pads that slice sees at the image's top and bottom edges.
struct WindowRows {
  int64_t lo, hi, padTop, padBottom;
};
WindowRows windowRows(int64_t outLo, int64_t outHi, int64_t H, int64_t k,
                      int64_t s, int64_t d, int64_t pt);

/// Whether the op's result is an INT8 quantized tensor.
bool isQuantizedOp(mlir::Operation *op);

/// The LMEM view [batch, rows, 1, cols] of a tensor [..., rows, cols] in a
/// layer group (rows on lanes, the matmul instruction's layout); empty for
/// rank below 2.
inline llvm::SmallVector<int64_t, 4> matrixView(llvm::ArrayRef<int64_t> s) {
  if (s.size() < 2)
    return {};
  return {numElements(s.drop_back(2)), s[s.size() - 2], 1, s.back()};
}

/// Whether 4-D layouts `a` and `b` hold a dense tensor in the same bytes of
/// each lane: as many images and channels, as many elements per channel.
inline bool sameLaneBytes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  return a.size() == 4 && b.size() == 4 && a[0] == b[0] && a[1] == b[1] &&
         a[2] * a[3] == b[2] * b[3];
}

/// The dtype an op keeps its intermediate values in LMEM when `io` is its
/// float dtype in DDR: F16/BF16 widen to F32 so results round once, as the
/// Tpu interpreter's do (GDMA loads and stores convert).
inline chip::DType wideFloat(chip::DType io) {
  return io == chip::DType::F16 || io == chip::DType::BF16 ? chip::DType::F32
                                                           : io;
}

/// Element types of a multiply-accumulate op's operands: what its DDR
/// operands hold (input, weight, bias, result) and what its partial sums
/// accumulate in LMEM. F32: all F32. F16/BF16: F32 accumulator when the
/// sum spans several instructions. INT8: INT8 x INT8 into INT32 (bias
/// INT32), then the requantization epilogue (Requant) gives the result.
struct MacTypes {
  chip::DType in = chip::DType::Invalid, weight = chip::DType::Invalid,
              bias = chip::DType::Invalid, acc = chip::DType::Invalid,
              out = chip::DType::Invalid;
  bool quantized() const { return acc == chip::DType::INT32; }
};
/// The MacTypes of the current op (operand 0 the input, then `weight` and
/// `bias`, which may be none). Float ops get acc = out; one that sums over
/// several instructions widens it (wideFloat).
mlir::FailureOr<MacTypes> macTypes(CodegenContext &ctx, mlir::Value weight,
                                   mlir::Value bias);
/// The same for `op`, which need not be the current op.
mlir::FailureOr<MacTypes> macTypes(CodegenContext &ctx, mlir::Operation *op,
                                   mlir::Value weight, mlir::Value bias);

/// The INT8 requantization epilogue every quantized op ends with
/// (QuantParams.h): out = sat(zp + round(acc * multiplier / 2^shift)),
/// per tensor, or per channel from a [1, C, 1, 2] INT32 table in LMEM.
struct Requant {
  int32_t multiplier = 1;
  int shift = 0;
  int32_t zp = 0;
};
uint32_t emitRequant(llvm::function_ref<uint32_t(const chip::Instruction &)> emit,
                     const chip::Operand &out, const chip::Operand &acc,
                     const Requant &rq,
                     const chip::Operand *table = nullptr);
/// The epilogue of a quantized Conv/MatMul from its `quant` operand (an
/// INT32 [rows, 2] weight of (multiplier, shift)): one row is a per-tensor
/// requant, more are a per-channel table at DDR address `table`.
struct MacEpilogue {
  Requant rq;
  std::optional<uint64_t> table;
};
mlir::FailureOr<MacEpilogue> macEpilogue(CodegenContext &ctx, mlir::Value quant,
                                         const MacTypes &types);
mlir::FailureOr<MacEpilogue> macEpilogue(CodegenContext &ctx,
                                         mlir::Operation *op, mlir::Value quant,
                                         const MacTypes &types);
/// Ends a MAC op's output tile: a quantized accumulator `acc` (in accBuf)
/// is requantized into the INT8 tile qBuf (per channel by the table in
/// tableBuf, if any) and that is stored; otherwise `acc` itself is (the
/// GDMA narrows an F32 accumulator to `dst`'s dtype). `beforeStore`, if
/// set, computes in place on the tile stored (its buffer and view) first.
void storeMacResult(
    CodegenContext &ctx, const MacTypes &types, const MacEpilogue &ep,
    const chip::Operand &dst, LBuf &accBuf, const chip::Operand &acc,
    LBuf *qBuf, LBuf *tableBuf = nullptr,
    llvm::function_ref<void(LBuf &, const chip::Operand &)> beforeStore = {});
/// dst (INT32) = (src - zp) * m, exactly: the rescaled operand of INT8
/// Add/Sub/Mul/AvgPool/Requant.
void emitRescale(llvm::function_ref<uint32_t(const chip::Instruction &)> emit,
                 const chip::Operand &dst, const chip::Operand &src,
                 int32_t zp, int32_t m);
/// The result's zero point.
int32_t resultZeroPoint(mlir::Operation *op);
/// The zero point of the op's first operand (0 unless it is quantized): the
/// value an INT8 conv's padding holds.
int32_t inputZeroPoint(mlir::Operation *op);

/// Emits `op`'s activation (tpu.Active semantics) from `in` to `out` through
/// `emit` (a TIU instruction on the tile's buffers); `tmp` is scratch of the
/// same shape, used only by pow (activeNeedsTemp).
bool activeNeedsTemp(mlir::Operation *op);
mlir::LogicalResult emitActive(
    llvm::function_ref<uint32_t(const chip::Instruction &)> emit,
    mlir::Operation *op,
                               const chip::Operand &out,
                               const chip::Operand &in,
                               const chip::Operand &tmp);

/// Per-file registration of external models (called from the extension).
void attachElementwiseModels(mlir::MLIRContext *ctx);
void attachConvModels(mlir::MLIRContext *ctx);
void attachMatMulModels(mlir::MLIRContext *ctx);
void attachPoolModels(mlir::MLIRContext *ctx);
void attachReduceModels(mlir::MLIRContext *ctx);
void attachNormModels(mlir::MLIRContext *ctx);
void attachDataMovementModels(mlir::MLIRContext *ctx);
void attachDeconvModels(mlir::MLIRContext *ctx);
void attachInterpModels(mlir::MLIRContext *ctx);

/// Iterates a list of steps whose loads are keyed: a step reloads buffer
/// group g only when its key differs from the previous step's, rotating
/// between `slots` buffers. Loads for step s+1 are emitted before the
/// compute of step s so the GDMA fills one buffer while the TIU works on
/// the other; the LBuf bookkeeping in CodegenContext supplies the waits.
struct Pipeline {
  struct Group {
    llvm::SmallVector<LBuf, 2> slots;
    int64_t lastKey = -1;
    int version = -1;
    LBuf &current() { return slots[version % slots.size()]; }
  };
  llvm::SmallVector<Group, 6> groups;

  /// Adds a buffer group with `numSlots` buffers of `bytes` per lane; with
  /// `apartFrom` (an earlier group read by the same TIU instructions) they
  /// start in other LMEM banks than that group's buffers, as long as
  /// `keepFree` bytes per lane stay free for the groups added after it.
  mlir::LogicalResult addGroup(CodegenContext &ctx, uint64_t bytes,
                               unsigned numSlots, int apartFrom = -1,
                               uint64_t keepFree = 0);
  /// What `numSlots` buffers of `bytes` per lane take at most, alignment
  /// included (the `keepFree` of the groups still to come).
  static uint64_t footprint(uint64_t bytes, unsigned numSlots) {
    return numSlots * (bytes + 64);
  }
  /// Returns the buffer for `key` in group g, and whether it must be loaded.
  std::pair<LBuf *, bool> acquire(unsigned g, int64_t key) {
    Group &gr = groups[g];
    if (key == gr.lastKey)
      return {&gr.current(), false};
    gr.lastKey = key;
    ++gr.version;
    return {&gr.current(), true};
  }
};

} // namespace backend
} // namespace tpuc
#endif
