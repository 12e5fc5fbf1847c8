//===- Hazard.cpp - Proving the two instruction streams race-free ---------===//
//
// TIU and GDMA run concurrently; the only ordering between them is program
// order within an engine and wait ids across engines (see ISA.h). Two
// instructions of different engines are ordered when one is known complete
// before the other starts. Because each engine is in order, what TIU
// instruction a knows about GDMA is the prefix maximum of the TIU wait ids up
// to a (and symmetrically), so
//   TIU a before GDMA b  <=>  waitsSeenByGdma[b] >= a
//   GDMA b before TIU a  <=>  waitsSeenByTiu[a] >= b.
// For a fixed a the GDMA instructions unordered with it form one window
// (waitsSeenByTiu[a], last b with waitsSeenByGdma[b] < a], and both ends only
// move forward as a grows: one sweep visits every unordered pair once.
// Every such pair whose memory footprints overlap with at least one write is
// a race: its outcome depends on timing.
//
//===----------------------------------------------------------------------===//
#include "tpuc/Chip/ISA.h"

#include <algorithm>

namespace tpuc {
namespace chip {
namespace {

struct Access {
  Space space;
  int64_t lo, hi;           // DDR bytes, or per-lane LMEM offsets
  uint32_t laneLo, laneHi;  // LMEM lanes [laneLo, laneHi)
  bool write;
  const char *field;
};

struct Footprint {
  Access acc[4];
  int n = 0;
};

Footprint footprintOf(const Instruction &inst, const Target &t) {
  Footprint f;
  auto add = [&](const Operand &o, bool write, const char *field) {
    if (!o.valid())
      return;
    Extent e;
    if (!operandExtent(o, t, e).ok())
      return; // rejected earlier by validateInstruction
    uint32_t lo = 0, hi = t.lanes;
    if (o.space == Space::LMEM && uint64_t(o.start_lane) + o.shape[1] <= t.lanes) {
      lo = o.start_lane;
      hi = o.start_lane + o.shape[1];
    }
    f.acc[f.n++] = {o.space, e.lo, e.hi, lo, hi, write, field};
  };
  add(inst.dst, true, "dst");
  static const char *names[3] = {"src0", "src1", "src2"};
  for (int k = 0; k < 3; ++k)
    add(inst.src[k], false, names[k]);
  return f;
}

bool conflict(const Access &a, const Access &b) {
  if (a.space != b.space || !(a.write || b.write))
    return false;
  if (a.hi <= b.lo || b.hi <= a.lo)
    return false;
  return a.space != Space::LMEM || (a.laneLo < b.laneHi && b.laneLo < a.laneHi);
}

std::string describe(const Instruction &i, size_t index) {
  return std::string(engineName(i.engine)) + " instruction #" + std::to_string(index) +
         " (id " + std::to_string(i.id) + ", " + instructionName(i) + ")";
}

std::string range(const Access &a) {
  std::string s = a.space == Space::LMEM ? "LMEM" : "DDR";
  s += " bytes [" + std::to_string(a.lo) + ", " + std::to_string(a.hi) + ")";
  if (a.space == Space::LMEM)
    s += " of lanes [" + std::to_string(a.laneLo) + ", " + std::to_string(a.laneHi) + ")";
  return s;
}

} // namespace

Status checkHazards(const std::vector<Instruction> &tiu,
                    const std::vector<Instruction> &gdma, const Target &t,
                    uint64_t maxPairs) {
  size_t T = tiu.size(), G = gdma.size();
  // seenByTiu[a]: GDMA ids known complete when TIU a (1-based) starts.
  std::vector<uint32_t> seenByTiu(T + 1, 0), seenByGdma(G + 1, 0);
  for (size_t a = 1; a <= T; ++a)
    seenByTiu[a] = std::max(seenByTiu[a - 1], tiu[a - 1].wait_id);
  for (size_t b = 1; b <= G; ++b)
    seenByGdma[b] = std::max(seenByGdma[b - 1], gdma[b - 1].wait_id);
  // A cycle of waits needs a TIU instruction whose awaited GDMA instruction
  // itself (or an earlier one) awaits that TIU instruction or a later one.
  for (size_t a = 1; a <= T; ++a) {
    uint32_t g = tiu[a - 1].wait_id;
    if (g && seenByGdma[g] >= a)
      return Status::error("deadlock: " + describe(tiu[a - 1], a - 1) +
                           " waits for GDMA id " + std::to_string(g) +
                           ", which cannot start before TIU id " +
                           std::to_string(seenByGdma[g]) + " completes");
  }

  std::vector<Footprint> tf(T), gf(G);
  for (size_t k = 0; k < T; ++k)
    tf[k] = footprintOf(tiu[k], t);
  for (size_t k = 0; k < G; ++k)
    gf[k] = footprintOf(gdma[k], t);

  uint64_t pairs = 0;
  size_t hi = 0; // GDMA ids 1..hi have seenByGdma < a
  for (size_t a = 1; a <= T; ++a) {
    while (hi < G && seenByGdma[hi + 1] < a)
      ++hi;
    for (size_t b = seenByTiu[a] + 1; b <= hi; ++b) {
      if (++pairs > maxPairs)
        return Status::error("synchronisation too sparse to verify: over " +
                             std::to_string(maxPairs) +
                             " TIU/GDMA instruction pairs may run concurrently");
      const Footprint &x = tf[a - 1], &y = gf[b - 1];
      for (int i = 0; i < x.n; ++i)
        for (int j = 0; j < y.n; ++j)
          if (conflict(x.acc[i], y.acc[j])) {
            const Access &w = x.acc[i].write ? x.acc[i] : y.acc[j];
            const Access &r = x.acc[i].write ? y.acc[j] : x.acc[i];
            bool tiuWrites = x.acc[i].write;
            const char *kind = w.write && r.write ? "also writes" : "reads";
            return Status::error(
                "race: " + describe(tiuWrites ? tiu[a - 1] : gdma[b - 1],
                                    tiuWrites ? a - 1 : b - 1) +
                " writes " + range(w) + " (" + w.field + ") which " +
                describe(tiuWrites ? gdma[b - 1] : tiu[a - 1], tiuWrites ? b - 1 : a - 1) +
                " " + kind + " (" + r.field + "), and no wait orders the two");
          }
    }
  }
  return Status::OK();
}

} // namespace chip
} // namespace tpuc
