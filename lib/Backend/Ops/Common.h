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

/// Fails unless every tensor operand and the result share one float dtype;
/// returns it. `skip` lists operand indices exempt from the check (indices).
mlir::FailureOr<chip::DType>
floatComputeType(CodegenContext &ctx, llvm::ArrayRef<unsigned> skip = {});

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

  /// Adds a buffer group with `numSlots` buffers of `bytes` per lane.
  mlir::LogicalResult addGroup(CodegenContext &ctx, uint64_t bytes,
                               unsigned numSlots);
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
