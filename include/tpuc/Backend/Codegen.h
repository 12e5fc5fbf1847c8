//===- Codegen.h - State and helpers shared by op code generators -*- C++ -*-===//
//
// A CodegenContext holds the two instruction streams of the network being
// built and hands each Tpu op the whole local memory while it runs. Ops
// describe LMEM buffers as LBufs; the context derives every wait_id from the
// last instruction of each engine that touched a buffer, so double-buffered
// loops need no hand-written synchronisation:
//   * a GDMA write into a buffer waits for the last TIU instruction using it,
//   * a TIU instruction waits for the last GDMA touching any of its buffers,
//   * a store waits for the TIU instruction that produced the data.
// Buffers start fenced on everything the previous op emitted, so ops never
// race on LMEM. DDR needs no waits: the GDMA engine runs in program order.
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_BACKEND_CODEGEN_H
#define TPUC_BACKEND_CODEGEN_H
#include "tpuc/Backend/CodegenInterface.h"
#include "tpuc/Chip/ISA.h"
#include "tpuc/Chip/Target.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallVector.h"
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace tpuc {
namespace backend {

/// Attributes written by tpu-assign-address.
constexpr llvm::StringLiteral kAddrAttr = "ddr.addr";
constexpr llvm::StringLiteral kWeightSizeAttr = "tpu.weight_size";
constexpr llvm::StringLiteral kActAddrAttr = "tpu.activation_addr";
constexpr llvm::StringLiteral kActSizeAttr = "tpu.activation_size";

/// Address recorded on the op defining `v` (or on the top.Input consuming a
/// block argument), if any.
std::optional<uint64_t> ddrAddr(mlir::Value v);
/// Chip dtype of a tensor's element type (Invalid when the chip has none).
chip::DType chipDType(mlir::Type type);

/// A local-memory buffer: per-lane byte range and the last instruction of
/// each engine that touched it.
struct LBuf {
  uint64_t addr = 0, bytes = 0;
  uint32_t tiu = 0, gdma = 0;
};

/// A strided N-d view of DDR (element strides).
struct DdrView {
  uint64_t addr = 0;
  chip::DType dtype = chip::DType::F32;
  llvm::SmallVector<int64_t, 6> shape, strides;

  static DdrView dense(uint64_t addr, llvm::ArrayRef<int64_t> shape,
                       chip::DType t);
  int64_t numElements() const;
};

/// A 4-D DDR operand with explicit strides.
chip::Operand ddrOperand(uint64_t addr, std::array<int64_t, 4> shape,
                         std::array<int64_t, 4> strides, chip::DType t);
/// Dense row-major strides of a shape.
llvm::SmallVector<int64_t, 6> denseStrides(llvm::ArrayRef<int64_t> shape);

class CodegenContext {
public:
  CodegenContext(const chip::Target &target, std::vector<chip::DdrRegion> ddr)
      : target_(target), ddr_(std::move(ddr)) {}

  const chip::Target &target() const { return target_; }
  uint32_t lanes() const { return target_.lanes; }
  uint64_t laneBytes() const { return target_.lmem_bytes_per_lane; }

  /// Starts code for `op`: frees all LMEM and fences on earlier work.
  void beginOp(mlir::Operation *op);
  /// Checks the instructions emitted since beginOp; errors name the op.
  mlir::LogicalResult endOp();
  mlir::Operation *op() const { return op_; }
  mlir::InFlightDiagnostic error() { return op_->emitOpError(); }

  /// Frees all LMEM of the op; later buffers are fenced on everything
  /// emitted so far.
  void freeAll();
  /// Allocates `bytesPerLane` in every lane (aligned); nullopt when full.
  std::optional<LBuf> alloc(uint64_t bytesPerLane);
  uint64_t lmemFree() const;
  /// Bytes per lane an LMEM tensor of this shape occupies.
  uint64_t lmemBytes(std::array<int64_t, 4> shape, chip::DType t) const;

  /// GDMA from any operand into LMEM buffer `dst`.
  uint32_t load(LBuf &dst, const chip::Operand &to, const chip::Operand &from);
  /// GDMA from LMEM buffer `src` to DDR.
  uint32_t store(const chip::Operand &to, LBuf &src,
                 const chip::Operand &from);
  /// A TIU instruction reading/writing `bufs`.
  uint32_t tiu(const chip::Instruction &inst,
               llvm::ArrayRef<LBuf *> bufs);
  /// A GDMA instruction touching DDR only.
  uint32_t gdmaDdr(const chip::Instruction &inst);

  /// DDR-to-DDR copy of views of any rank (equal shapes; a source dim of 1
  /// broadcasts), coalescing dims and looping over dims beyond four.
  mlir::LogicalResult copy(const DdrView &dst, const DdrView &src);
  /// Fills a DDR view with a constant.
  mlir::LogicalResult fill(const DdrView &dst, double value);

  /// Compile-time data of a constant operand (a top.Weight), row-major.
  mlir::FailureOr<std::vector<float>> constant(mlir::Value v);

  chip::StreamBuilder &streams() { return builder_; }
  int64_t macs = 0;

private:
  const chip::Target &target_;
  std::vector<chip::DdrRegion> ddr_;
  chip::StreamBuilder builder_;
  mlir::Operation *op_ = nullptr;
  uint64_t lmemUsed_ = 0;
  uint32_t fenceTiu_ = 0, fenceGdma_ = 0;
  size_t firstTiu_ = 0, firstGdma_ = 0;
};

//===----------------------------------------------------------------------===//
// Tiling
//===----------------------------------------------------------------------===//

/// One tile of a 4-D [N, C, H, W] iteration space.
struct Tile {
  std::array<int64_t, 4> off, size;
};

/// Splits `shape` into tiles whose LMEM footprint (channels across lanes)
/// is at most `maxPerLane` elements per lane, keeping W, then H, then N
/// whole when possible and stacking channels per lane when all else fits.
llvm::SmallVector<Tile> tile4D(std::array<int64_t, 4> shape,
                               int64_t maxPerLane, uint32_t lanes);

/// A DDR input of a streamed elementwise computation: 4-D strides into the
/// tensor; a dim of extent 1 broadcasts over the iteration space.
struct StreamInput {
  uint64_t addr;
  std::array<int64_t, 4> shape, strides;
};

/// The LMEM operands of one tile handed to a streamed computation.
struct StreamTile {
  chip::Operand out;
  llvm::SmallVector<chip::Operand, 4> ins, temps;
  llvm::SmallVector<LBuf *, 8> bufs;
  CodegenContext *ctx;
  /// Emits a TIU instruction touching every buffer of the tile.
  uint32_t emit(const chip::Instruction &inst) { return ctx->tiu(inst, bufs); }
};

/// Streams a 4-D elementwise computation through LMEM: tiles the output
/// `shape`, loads each input tile (inputs invariant over all tiles once),
/// calls `compute` and stores the result, double-buffering loads against
/// compute. `numTemps` scratch buffers of the tile's shape are provided.
/// Streaming owns the whole LMEM: it frees every earlier buffer.
mlir::LogicalResult
streamElementwise(CodegenContext &ctx, std::array<int64_t, 4> shape,
                  uint64_t outAddr, std::array<int64_t, 4> outStrides,
                  llvm::ArrayRef<StreamInput> ins, chip::DType dtype,
                  unsigned numTemps,
                  llvm::function_ref<void(StreamTile &)> compute);

/// The same for dense tensors of `elements` values with identical layout:
/// the data is viewed as [1, lanes, 1, W] rows (plus a tail).
mlir::LogicalResult
streamFlat(CodegenContext &ctx, int64_t elements, uint64_t outAddr,
           llvm::ArrayRef<uint64_t> inAddrs, chip::DType dtype,
           unsigned numTemps, llvm::function_ref<void(StreamTile &)> compute);

} // namespace backend
} // namespace tpuc
#endif
