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
  uint8_t *at(const Operand &o, uint64_t n, uint64_t c, uint64_t h, uint64_t w) const {
    int64_t es = int64_t(dtypeSize(o.dtype));
    return plane(o, n, c) + (int64_t(h) * o.stride[2] + int64_t(w) * o.stride[3]) * es;
  }
};

/// Computes `inst` into `out`: dense NCHW elements of inst.dst.dtype.
Status executeInstruction(const Instruction &inst, const MemView &m,
                          std::vector<uint8_t> &out);

/// Whether `inst` may run at its end cycle straight into its destination
/// instead of through a result buffer: a same-type load from DDR into local
/// memory. Between its start and its end only TIU results commit, and TIU
/// writes local memory only, so the DDR it reads is the same at both times.
bool movesDirectly(const Instruction &inst);
/// Executes such a move from source to destination.
void moveDirect(const MemView &m, const Instruction &inst);

/// Writes the dense NCHW elements `data` into the strided operand `dst`.
void storeDense(const MemView &m, const Operand &dst, const uint8_t *data);

} // namespace chip
} // namespace tpuc

#endif
