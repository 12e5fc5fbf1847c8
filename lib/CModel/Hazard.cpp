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
#include "ByteRuns.h"

#include <algorithm>
#include <array>

namespace tpuc {
namespace chip {
namespace {

struct Access {
  Space space;
  int64_t lo, hi;           // DDR bytes, or per-lane LMEM offsets
  uint32_t laneLo, laneHi;  // LMEM lanes [laneLo, laneHi)
  bool write;
  const char *field;
  const Operand *op;
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
    f.acc[f.n++] = {o.space, e.lo, e.hi, lo, hi, write, field, &o};
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

std::string range(const Access &a) {
  std::string s = a.space == Space::LMEM ? "LMEM" : "DDR";
  s += " bytes [" + std::to_string(a.lo) + ", " + std::to_string(a.hi) + ")";
  if (a.space == Space::LMEM)
    s += " of lanes [" + std::to_string(a.laneLo) + ", " + std::to_string(a.laneHi) + ")";
  return s;
}

/// Byte runs [lo, hi) per lane (lane 0 for DDR) an operand touches, sorted
/// and merged; false when there are more than `limit` element runs.
bool byteRuns(const Operand &o, const Target &t, size_t limit,
              std::vector<std::array<int64_t, 3>> &out) {
  out.clear();
  uint64_t perRow = o.stride[3] == 1 || o.shape[3] == 1 ? 1 : o.shape[3];
  if (uint64_t(o.shape[0]) * o.shape[1] * o.shape[2] * perRow > limit)
    return false;
  forEachByteRun(o, t.lanes, [&](uint32_t lane, int64_t lo, int64_t hi) {
    out.push_back({int64_t(lane), lo, hi});
    return true;
  });
  std::sort(out.begin(), out.end());
  size_t k = 0;
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i][0] == out[k][0] && out[i][1] <= out[k][2])
      out[k][2] = std::max(out[k][2], out[i][2]);
    else
      out[++k] = out[i];
  if (!out.empty())
    out.resize(k + 1);
  return true;
}

/// Whether two operands share a byte: their bounding footprints first, then
/// their exact byte runs (strided views may interleave without sharing).
/// Views too fragmented to enumerate count as overlapping.
bool bytesOverlap(const Access &a, const Access &b, const Target &t) {
  const Operand &oa = *a.op, &ob = *b.op;
  Access wa = a, wb = b;
  wa.write = wb.write = true;
  if (!conflict(wa, wb))
    return false;
  constexpr size_t kLimit = size_t(1) << 20;
  std::vector<std::array<int64_t, 3>> ra, rb;
  if (!byteRuns(oa, t, kLimit, ra) || !byteRuns(ob, t, kLimit, rb))
    return true;
  size_t i = 0, j = 0;
  while (i < ra.size() && j < rb.size()) {
    const auto &x = ra[i], &y = rb[j];
    if (x[0] == y[0] && x[1] < y[2] && y[1] < x[2])
      return true;
    if (x[0] < y[0] || (x[0] == y[0] && x[2] <= y[2]))
      ++i;
    else
      ++j;
  }
  return false;
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
      return Status::error("deadlock: " + describeInstruction(tiu[a - 1], a - 1) +
                           " waits for GDMA id " + std::to_string(g) +
                           ", which cannot start before TIU id " +
                           std::to_string(seenByGdma[g]) + " completes");
  }

  std::vector<Footprint> tf(T), gf(G);
  for (size_t k = 0; k < T; ++k)
    tf[k] = footprintOf(tiu[k], t);
  for (size_t k = 0; k < G; ++k)
    gf[k] = footprintOf(gdma[k], t);

  // GDMA requests complete in order but up to queue_depth are in flight;
  // GDMA a is known complete when b starts if b is queue_depth or more
  // requests later, if a TIU instruction b waits for (transitively) waited
  // for a, or if a request c in (a, b] read bytes a writes (c stalls until
  // a completes, and b issues after c). Two writes of the same bytes that
  // may be in flight together are refused: their order is not proven.
  {
    const size_t Q = std::max<uint32_t>(1, t.gdma_queue_depth);
    uint32_t rawDone = 0; // prefix max of the RAW stalls
    for (size_t b = 1; b <= G; ++b) {
      size_t done = std::max<size_t>(b > Q ? b - Q : 0,
                                     std::max<size_t>(seenByTiu[seenByGdma[b]], rawDone));
      const Instruction &ib = gdma[b - 1];
      const Footprint &fb = gf[b - 1];
      for (size_t a = b - 1; a > done; --a) {
        const Footprint &fa = gf[a - 1];
        if (fa.n == 0 || !fa.acc[0].write)
          continue;
        for (int j = 1; j < fb.n; ++j)
          if (bytesOverlap(fa.acc[0], fb.acc[j], t)) {
            rawDone = std::max<uint32_t>(rawDone, uint32_t(a));
            break;
          }
        if (rawDone >= a)
          break;
      }
      done = std::max<size_t>(done, rawDone);
      if (fb.n == 0 || !fb.acc[0].write)
        continue;
      for (size_t a = b - 1; a > done; --a) {
        const Footprint &fa = gf[a - 1];
        if (fa.n && fa.acc[0].write &&
            bytesOverlap(fa.acc[0], fb.acc[0], t))
          return Status::error(
              "in-flight writes overlap: " + describeInstruction(gdma[a - 1], a - 1) + " writes " +
              range(fa.acc[0]) + " (dst) and " + describeInstruction(ib, b - 1) +
              " writes " + range(fb.acc[0]) +
              " (dst) while the first may still be in flight: no wait, queue slot or read orders the two");
      }
    }
  }

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
          if (conflict(x.acc[i], y.acc[j]) &&
              bytesOverlap(x.acc[i], y.acc[j], t)) {
            const Access &w = x.acc[i].write ? x.acc[i] : y.acc[j];
            const Access &r = x.acc[i].write ? y.acc[j] : x.acc[i];
            bool tiuWrites = x.acc[i].write;
            const char *kind = w.write && r.write ? "also writes" : "reads";
            return Status::error(
                "race: " + describeInstruction(tiuWrites ? tiu[a - 1] : gdma[b - 1],
                                    tiuWrites ? a - 1 : b - 1) +
                " writes " + range(w) + " (" + w.field + ") which " +
                describeInstruction(tiuWrites ? gdma[b - 1] : tiu[a - 1], tiuWrites ? b - 1 : a - 1) +
                " " + kind + " (" + r.field + "), and no wait orders the two");
          }
    }
  }
  return Status::OK();
}

} // namespace chip
} // namespace tpuc
