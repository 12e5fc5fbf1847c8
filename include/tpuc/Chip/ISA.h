//===- ISA.h - Instruction set of the tpuc chip -----------------*- C++ -*-===//
//
// Two engines run concurrently: GDMA (tensor moves) and TIU (compute). Every
// instruction is a fixed-size little-endian record of kInstBytes bytes
// (layout in docs/isa.md). Synchronisation follows the id scheme: an
// instruction's `id` is its 1-based position in its own engine's stream and
// `wait_id` names the instruction of the OTHER engine that must have
// completed before it may start (0 = no wait). Within one engine
// instructions execute in order.
//
// Tensor operands are 4-D [N, C, H, W] descriptors with element strides.
// DDR operands address  addr + (n*sN + c*sC + h*sH + w*sW) * esize.
// LMEM operands place channel c in lane (start_lane + c) % lanes at
//   addr + (n*sN + ((start_lane + c) / lanes)*sC + h*sH + w*sW) * esize
// inside that lane's local memory.
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_CHIP_ISA_H
#define TPUC_CHIP_ISA_H

#include "tpuc/Chip/DType.h"
#include "tpuc/Chip/QuantMath.h"
#include "tpuc/Chip/Status.h"
#include "tpuc/Chip/Target.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tpuc {
namespace chip {

constexpr uint32_t kIsaVersion = 1;
constexpr size_t kOperandBytes = 48;
constexpr size_t kInstBytes = 16 + 4 * kOperandBytes + 12 * 4 + 4 * 4; // 272
constexpr int kNumIParams = 12;
constexpr int kNumFParams = 4;
/// Largest accepted extent of one dimension and total elements of one operand.
constexpr uint32_t kMaxDim = 1u << 24;
constexpr uint64_t kMaxElements = 1ull << 30;
/// Largest accepted inner-loop work of one instruction (MACs of a conv or
/// matmul, window cells of a pool), far above any layer the compiler emits,
/// so a mutated window or shape cannot make the simulator hang.
constexpr uint64_t kMaxWork = 1ull << 32;

enum class Engine : uint8_t { TIU = 0, GDMA = 1 };
enum class Space : uint8_t { None = 0, DDR = 1, LMEM = 2 };

// Values are part of the binary encoding: never renumber.
enum class Opcode : uint8_t {
  DmaMove = 1,   // GDMA: dst <- convert(src), src may broadcast dims of 1
  DmaFill = 2,   // GDMA: dst <- constant
  DmaGather = 3, // GDMA: dst <- src0 slices along an axis, picked by src1
  Conv = 16,     // TIU: 2-D convolution (groups, dilation, pads)
  MatMul = 17,   // TIU: batched matmul, optional bias / accumulate
  Binary = 18,   // TIU: elementwise a (op) b with broadcast, or a (op) scalar
  Pool = 19,     // TIU: max / average pooling
  Reduce = 20,   // TIU: sum / mean / max / min along one axis
  Active = 21,   // TIU: activation function (SFU)
  Lut = 22,      // TIU: 256-entry table lookup indexed by an 8-bit tensor
  Cast = 23,     // TIU: dtype conversion with rounding and saturation
  Requant = 24   // TIU: INT32 -> INT8/UINT8 by multiplier, shift, zero point
};

enum class BinaryOp : uint8_t { Add = 0, Sub = 1, Mul = 2, Div = 3, Max = 4, Min = 5 };
enum class PoolMode : uint8_t { Max = 0, Avg = 1 };
enum class ReduceMode : uint8_t { Sum = 0, Mean = 1, Max = 2, Min = 3 };
enum class ActOp : uint8_t {
  Relu = 0,
  LeakyRelu = 1, // alpha = fparam[0]
  Sigmoid = 2,
  Tanh = 3,
  Gelu = 4, // exact erf form
  Silu = 5,
  Exp = 6,
  Log = 7,
  Sqrt = 8,
  Rsqrt = 9,
  Erf = 10,
  Abs = 11,
  Neg = 12,
  Reciprocal = 13,
  Square = 14,
  Clip = 15,        // clamp to [fparam[0], fparam[1]]
  HardSigmoid = 16, // clamp(alpha*x + beta, 0, 1)
  Softplus = 17,
  GeluTanh = 18, // tanh approximation
};
constexpr uint8_t kNumBinaryOps = 6, kNumPoolModes = 2, kNumReduceModes = 4,
                  kNumActOps = 19;

// Instruction flag bits.
enum : uint8_t {
  kFlagBias = 1u << 0,        // Conv / MatMul: src2 is a bias
  kFlagAccumulate = 1u << 1,  // Conv / MatMul: dst += result
  kFlagRelu = 1u << 2,        // Conv / MatMul / Binary: fused relu
  kFlagScalar = 1u << 3,      // Binary: second operand is a scalar
  kFlagScalarFirst = 1u << 4, // Binary scalar: scalar (op) a
  kFlagCountPad = 1u << 5,    // Pool avg: padded cells count in divisor
  kFlagPerChannel = 1u << 6,  // Requant: src1 holds per-channel (mult, shift)
  kFlagRightTrans = 1u << 7,  // MatMul: src1 is [B,N,1,K], out = left x src1^T
};

struct Operand {
  uint64_t addr = 0;
  uint32_t shape[4] = {0, 0, 0, 0};
  int32_t stride[4] = {0, 0, 0, 0}; // in elements
  Space space = Space::None;
  DType dtype = DType::Invalid;
  uint16_t start_lane = 0;

  bool valid() const { return space != Space::None; }
  uint64_t numElements() const {
    return uint64_t(shape[0]) * shape[1] * shape[2] * shape[3];
  }
  std::string str() const;
};

/// DDR operand with dense row-major NCHW strides unless given.
Operand ddrTensor(uint64_t addr, uint32_t n, uint32_t c, uint32_t h,
                  uint32_t w, DType t);
/// LMEM operand in the canonical compact layout: each lane stores its
/// channels back to back; per channel the [N][H][W] block is dense
/// (sW=1, sH=W, sN=H*W, sC=N*H*W per channel-in-lane step), unless the
/// caller overrides strides afterwards.
Operand lmemTensor(uint64_t addr, uint32_t n, uint32_t c, uint32_t h,
                   uint32_t w, DType t, uint16_t start_lane = 0);
/// Bytes one lane needs for lmemTensor() with the same arguments.
uint64_t lmemBytesPerLane(uint32_t n, uint32_t c, uint32_t h, uint32_t w,
                          DType t, uint16_t start_lane, uint32_t lanes);

struct Instruction {
  Opcode op = Opcode::DmaMove;
  Engine engine = Engine::GDMA;
  uint8_t sub_op = 0; // BinaryOp / PoolMode / ReduceMode / ActOp
  uint8_t flags = 0;
  uint32_t id = 0;      // 1-based position in its engine's stream
  uint32_t wait_id = 0; // other engine's id that must complete first
  Operand dst;
  Operand src[3];
  int32_t iparam[kNumIParams] = {};
  float fparam[kNumFParams] = {};
};

Engine engineOf(Opcode op);
bool isValidOpcode(uint8_t v);
const char *opcodeName(Opcode op);
const char *engineName(Engine e);
std::string instructionName(const Instruction &inst); // e.g. "binary.add"
/// Names instruction `index` of its engine's stream in messages, e.g.
/// "TIU instruction #3 (id 4, binary.add)".
std::string describeInstruction(const Instruction &inst, size_t index);

// --- Parameter slots (iparam indices) ---------------------------------------
namespace conv_param {
enum { StrideH, StrideW, DilH, DilW, PadTop, PadBottom, PadLeft, PadRight, Groups, PadValue };
}
namespace pool_param {
enum { KH, KW, StrideH, StrideW, PadTop, PadBottom, PadLeft, PadRight, Round };
}
namespace requant_param {
enum { Multiplier, Shift, ZeroPoint, Round };
}
namespace gather_param {
enum { Axis };
}

// --- Builders: one per instruction kind -------------------------------------
// These fill opcode, engine, operands and parameters; ids are assigned by
// StreamBuilder (or by hand).
struct ConvParams {
  int stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int groups = 1;
  /// The value padded cells hold, for 8-bit integer inputs (an asymmetric
  /// input's zero point); float inputs pad with 0.
  int pad_value = 0;
  bool relu = false;
  /// dst += result (partial sums over input-channel slices).
  bool accumulate = false;
};
struct PoolParams {
  int kh = 1, kw = 1, stride_h = 1, stride_w = 1;
  int pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  bool count_include_pad = false;
  RoundMode round = RoundMode::HalfAwayFromZero; // integer average
};

/// out[N,OC,OH,OW] (+)= conv(in[N,IC,H,W], weight[IC/groups, OC, KH, KW]) + bias[1,OC,1,1]
Instruction makeConv(const Operand &out, const Operand &in,
                     const Operand &weight, const Operand &bias,
                     const ConvParams &p);
/// out[B,M,1,N] (+)= left[B,M,1,K] x right[B,K,1,N] + bias[1,1,1,N]; with
/// `right_trans` right is [B,N,1,K] and out[m,n] = sum_k left[m,k] right[n,k].
Instruction makeMatMul(const Operand &out, const Operand &left,
                       const Operand &right, const Operand &bias,
                       bool accumulate = false, bool relu = false,
                       bool right_trans = false);
Instruction makeBinary(BinaryOp op, const Operand &out, const Operand &a,
                       const Operand &b, bool relu = false);
Instruction makeBinaryScalar(BinaryOp op, const Operand &out,
                             const Operand &a, double scalar,
                             bool scalar_first = false);
Instruction makePool(PoolMode mode, const Operand &out, const Operand &in,
                     const PoolParams &p);
Instruction makeReduce(ReduceMode mode, const Operand &out, const Operand &in,
                       int axis,
                       RoundMode round = RoundMode::HalfAwayFromZero);
Instruction makeActive(ActOp op, const Operand &out, const Operand &in,
                       float alpha = 0.f, float beta = 0.f);
Instruction makeLut(const Operand &out, const Operand &index,
                    const Operand &table);
Instruction makeCast(const Operand &out, const Operand &in,
                     RoundMode round = RoundMode::HalfToEven);
Instruction makeRequant(const Operand &out, const Operand &in,
                        int32_t multiplier, int32_t shift, int32_t zero_point,
                        RoundMode round = RoundMode::HalfAwayFromZero);
/// Per-channel variant: params is INT32 [1, C, 1, 2] holding (multiplier,
/// shift) per output channel.
Instruction makeRequantPerChannel(const Operand &out, const Operand &in,
                                  const Operand &params, int32_t zero_point,
                                  RoundMode round = RoundMode::HalfAwayFromZero);
Instruction makeDmaMove(const Operand &dst, const Operand &src,
                        RoundMode round = RoundMode::HalfToEven);
Instruction makeDmaFill(const Operand &dst, double value);
/// dst[.., i, ..] = src[.., index[i], ..] along `axis` (0..3): src (DDR) and
/// dst (DDR or LMEM) agree on every other dim and share a dtype; index (DDR,
/// F32 with integral values or INT32) holds dst.shape[axis] elements read in
/// NCHW order. An index in [-dim, 0) counts from the end; anything else
/// outside [0, dim), or a non-integral F32, is a runtime error.
Instruction makeDmaGather(const Operand &dst, const Operand &src,
                          const Operand &index, int axis);

/// Assigns ids and waits while a backend emits the two streams.
///   uint32_t g = b.gdma(makeDmaMove(...));          // returns GDMA id
///   uint32_t t = b.tiu(makeConv(...), /*wait=*/g);  // waits for load g
///   b.gdma(makeDmaMove(store...), /*wait=*/t);      // store after compute
class StreamBuilder {
public:
  uint32_t tiu(Instruction inst, uint32_t wait_gdma_id = 0);
  uint32_t gdma(Instruction inst, uint32_t wait_tiu_id = 0);
  uint32_t lastTiuId() const { return static_cast<uint32_t>(tiu_.size()); }
  uint32_t lastGdmaId() const { return static_cast<uint32_t>(gdma_.size()); }
  std::vector<Instruction> &tiuStream() { return tiu_; }
  std::vector<Instruction> &gdmaStream() { return gdma_; }

private:
  std::vector<Instruction> tiu_, gdma_;
};

// --- Encoding ---------------------------------------------------------------
void encodeInstruction(const Instruction &inst, uint8_t *out /*kInstBytes*/);
/// Decodes and checks enum fields; does not check semantics or addresses.
Status decodeInstruction(const uint8_t *in /*kInstBytes*/, Instruction &out);

// --- Validation -------------------------------------------------------------
/// Byte range an operand touches: DDR [lo, hi) or, for LMEM, the per-lane
/// offset range [lo, hi).
struct Extent {
  int64_t lo = 0, hi = 0;
};
Status operandExtent(const Operand &o, const Target &t, Extent &out);

/// Memory the instruction may touch in DDR (a list of allowed regions).
struct DdrRegion {
  uint64_t begin, end;
  const char *name;
};

/// Checks shapes, dtypes, parameters and every operand address (DDR against
/// the regions, LMEM against the lane size). `index` is the position in its
/// stream, used only for the message, e.g.
///   "TIU instruction #3 (id 4, conv): src0.addr: LMEM range [...] exceeds ..."
Status validateInstruction(const Instruction &inst, size_t index,
                           const Target &t,
                           const std::vector<DdrRegion> &ddr);

/// Ids, waits and engine fields of both streams (see the scheme above).
Status validateStreams(const std::vector<Instruction> &tiu,
                       const std::vector<Instruction> &gdma);

/// Proves the streams race-free: every pair of TIU and GDMA instructions
/// whose memory footprints overlap, one of them writing, is ordered by wait
/// ids (transitively, through program order), and no wait can deadlock.
/// Errors name both instructions. Gives up with an error beyond `maxPairs`
/// concurrently runnable pairs, so the check's own work stays bounded.
Status checkHazards(const std::vector<Instruction> &tiu,
                    const std::vector<Instruction> &gdma, const Target &t,
                    uint64_t maxPairs = uint64_t(1) << 26);

/// Def-use of local memory on race-free streams (run after checkHazards):
/// every local-memory read sees bytes written earlier, with its writer's
/// start lane and dtype, in a byte range holding or lying inside the
/// writer's. Errors name the reading and the writing instruction.
Status checkDataflow(const std::vector<Instruction> &tiu,
                     const std::vector<Instruction> &gdma, const Target &t);

} // namespace chip
} // namespace tpuc

#endif
