//===- Execute.h - Functional execution of one instruction ------*- C++ -*-===//
//
// The functional half of the cmodel: one function per opcode reads its
// operands in place from simulated DDR / local memory through strided views
// and writes the dense NCHW result the timing model commits at the
// instruction's end cycle. Kernels work on rows of one element type at a
// time (converted in small row buffers) so their inner loops vectorise;
// convolutions and matmuls run as GEMMs on OpenBLAS, integer ones exactly
// (see gemmExact).
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_LIB_CMODEL_EXECUTE_H
#define TPUC_LIB_CMODEL_EXECUTE_H

#include "tpuc/Chip/ISA.h"
#include "tpuc/Chip/Status.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tpuc {
namespace chip {

/// Byte addresses of the elements of validated operands.
struct MemView {
  uint8_t *ddr;
  uint8_t *lmem;
  uint64_t lane_bytes;
  uint32_t lanes;

  /// Element (n, c, 0, 0): rows of one (n, c) plane then follow the h and w
  /// strides, which are the same in DDR and in a lane.
  uint8_t *plane(const Operand &o, uint64_t n, uint64_t c) const {
    int64_t es = int64_t(dtypeSize(o.dtype));
    if (o.space == Space::DDR)
      return ddr + o.addr + (int64_t(n) * o.stride[0] + int64_t(c) * o.stride[1]) * es;
    uint64_t lc = o.start_lane + c;
    return lmem + (lc % lanes) * lane_bytes + o.addr +
           (int64_t(n) * o.stride[0] + int64_t(lc / lanes) * o.stride[1]) * es;
  }
  /// Byte pitch from channel c's plane to channel c + 1's, and how many
  /// channels from c keep it: the rest of the operand in DDR, the rest of
  /// c's row of lanes in local memory.
  uint64_t channelRun(const Operand &o, uint64_t c, int64_t &pitch) const {
    if (o.space == Space::DDR) {
      pitch = int64_t(o.stride[1]) * int64_t(dtypeSize(o.dtype));
      return o.shape[1] - c;
    }
    pitch = int64_t(lane_bytes);
    return std::min<uint64_t>(o.shape[1] - c, lanes - (o.start_lane + c) % lanes);
  }
  uint8_t *at(const Operand &o, uint64_t n, uint64_t c, uint64_t h, uint64_t w) const {
    int64_t es = int64_t(dtypeSize(o.dtype));
    return plane(o, n, c) + (int64_t(h) * o.stride[2] + int64_t(w) * o.stride[3]) * es;
  }
};

/// Computes `inst` into `out`: dense NCHW elements of inst.dst.dtype.
Status executeInstruction(const Instruction &inst, const MemView &m,
                          std::vector<uint8_t> &out);

/// Whether the kernel of `inst` can write its destination in place (the
/// caller checks that no source overlaps it): every opcode but gathers,
/// for destinations whose (n, c) planes are dense (any layout for moves
/// that keep the element type).
bool runsInPlace(const Instruction &inst);
/// The checks of `inst` that depend on operand data (per-channel requant
/// shifts), for an instruction executed in place later.
Status checkData(const Instruction &inst, const MemView &m);
/// Computes `inst` straight into its destination.
Status executeInPlace(const Instruction &inst, const MemView &m);

/// Writes the dense NCHW elements `data` into the strided operand `dst`.
void storeDense(const MemView &m, const Operand &dst, const uint8_t *data);

} // namespace chip
} // namespace tpuc

#endif
