//===- ByteRuns.h - The bytes an operand touches, run by run ----*- C++ -*-===//
#ifndef TPUC_CMODEL_BYTERUNS_H
#define TPUC_CMODEL_BYTERUNS_H

#include "tpuc/Chip/ISA.h"

namespace tpuc {
namespace chip {

/// Calls f(lane, lo, hi) for each contiguous byte run of an operand: per
/// lane offsets for LMEM, lane 0 and DDR addresses otherwise. A unit-stride
/// W dim is one run, any other one run per element. Stops when f returns
/// false.
template <typename F>
void forEachByteRun(const Operand &o, uint32_t lanes, F &&f) {
  int64_t es = int64_t(dtypeSize(o.dtype));
  bool lmem = o.space == Space::LMEM;
  bool rowRun = o.stride[3] == 1 || o.shape[3] == 1;
  for (uint32_t n = 0; n < o.shape[0]; ++n)
    for (uint32_t c = 0; c < o.shape[1]; ++c) {
      uint32_t lane = lmem ? (o.start_lane + c) % lanes : 0;
      int64_t step = lmem ? (o.start_lane + c) / lanes : c;
      for (uint32_t h = 0; h < o.shape[2]; ++h) {
        int64_t base = int64_t(o.addr) + (n * int64_t(o.stride[0]) + step * o.stride[1] +
                                          h * int64_t(o.stride[2])) * es;
        if (rowRun) {
          if (!f(lane, base, base + int64_t(o.shape[3]) * es))
            return;
          continue;
        }
        for (uint32_t w = 0; w < o.shape[3]; ++w) {
          int64_t a = base + w * int64_t(o.stride[3]) * es;
          if (!f(lane, a, a + es))
            return;
        }
      }
    }
}

} // namespace chip
} // namespace tpuc

#endif
