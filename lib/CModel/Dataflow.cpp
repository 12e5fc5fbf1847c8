//===- Dataflow.cpp - Def-use of local memory, byte by byte ---------------===//
//
// The hazard check proves every conflicting pair ordered; this one proves
// what each read sees. Once the streams are race-free, every linear order
// of the two streams consistent with program order and the waits gives
// each byte the same last writer at each read, so one such order is
// walked with a shadow of local memory holding, per byte, the write that
// put it there. Each local-memory read is then checked against the writes
// it sees:
//   * defined: every byte was written earlier in the program;
//   * placement: the read is lane-consistent with the write: the reader's
//     start lane is its writer's, or the reader assembles its channels
//     from parts each written on its own lanes: both hold at most one
//     channel per lane and the writer's lanes lie within the reader's, so
//     the writer's channel c is the reader's channel c + (writer's start
//     lane - reader's) (a grouped conv's filter whose parts the GDMA moved
//     onto their lanes). A TIU instruction may also compute on some of
//     a tensor's lanes in place (source and destination on the same lanes,
//     within the writer's), and an LMEM-to-LMEM move may pick a whole
//     part of them (its source within the writer's lanes, a multiple of
//     its channels into them). A read shifted against its writer (their lanes
//     overlapping without nesting), a read of part of the lanes its writer
//     wrote from another start lane, or one wrapping around the lanes is a
//     misplaced channel and rejected;
//   * view: the reader's byte range contains the writer's or lies inside
//     it, so a read never sees the edge of a write that strayed from its
//     buffer (a shifted or reversed view) nor the stale tail behind it;
//     or both are parts of one layout (sameRowsLayout);
//   * dtype: bytes are read as the element type they were written as.
//
//===----------------------------------------------------------------------===//
#include "ByteRuns.h"

#include <algorithm>
#include <numeric>

namespace tpuc {
namespace chip {
namespace {

struct Write {
  const Instruction *inst;
  size_t index;
  const Operand *op;
  Extent e;
};

/// Whether `a` and `b` are parts of one tensor layout: the same start
/// lane, width and strides, a whole number of rows apart (a lane slot of
/// channels being a whole number of rows). A buffer whose rows are written
/// in parts (a slice's halo rows copied from the previous slice, the
/// others computed, perhaps in runs of channels) is read across them; each
/// byte means the same element in both views, up to that offset.
bool sameRowsLayout(const Operand &a, const Operand &b) {
  const int64_t row = int64_t(a.stride[2]) * int64_t(dtypeSize(a.dtype));
  const int64_t apart = int64_t(a.addr) - int64_t(b.addr);
  return a.dtype == b.dtype && a.start_lane == b.start_lane &&
         a.shape[3] == b.shape[3] && row > 0 && a.stride[1] % a.stride[2] == 0 &&
         std::equal(std::begin(a.stride), std::end(a.stride), std::begin(b.stride)) &&
         apart % row == 0;
}

bool readsDst(const Instruction &i) {
  return (i.op == Opcode::Conv || i.op == Opcode::MatMul) && (i.flags & kFlagAccumulate);
}

} // namespace

Status checkDataflow(const std::vector<Instruction> &tiu,
                     const std::vector<Instruction> &gdma, const Target &t) {
  // Per-lane bytes in use: the shadow covers no more than the program uses.
  // The shadow holds one cell per g bytes, g the largest size dividing
  // every element's offset (4 in an F32 program).
  int64_t laneBytes = 0, g = 4;
  auto grow = [&](const Operand &o) {
    Extent e;
    if (o.space == Space::LMEM && operandExtent(o, t, e).ok()) {
      laneBytes = std::max(laneBytes, e.hi);
      g = std::gcd(g, std::gcd(int64_t(o.addr), int64_t(dtypeSize(o.dtype))));
    }
  };
  for (const auto *s : {&tiu, &gdma})
    for (const Instruction &i : *s) {
      grow(i.dst);
      for (const Operand &o : i.src)
        grow(o);
    }
  laneBytes = std::min<int64_t>(laneBytes, int64_t(t.lmem_bytes_per_lane));
  if (laneBytes <= 0)
    return Status::OK();
  const int64_t laneCells = (laneBytes + g - 1) / g;
  std::vector<uint32_t> shadow(size_t(laneCells) * t.lanes, 0); // 0: undefined
  std::vector<Write> writes(1);

  auto checkRead = [&](const Instruction &inst, size_t index, const Operand &r,
                       const char *field) -> Status {
    Extent re;
    if (!operandExtent(r, t, re).ok())
      return Status::OK(); // rejected by validateInstruction
    auto who = [&] { return describeInstruction(inst, index) + " " + field; };
    const int64_t es = int64_t(dtypeSize(r.dtype));
    Status st;
    uint32_t seen = UINT32_MAX;
    forEachByteRun(r, t.lanes, [&](uint32_t lane, int64_t lo, int64_t hi) {
      const uint32_t *row = shadow.data() + size_t(lane) * size_t(laneCells);
      // The first byte of each element names its writer (a write stores
      // whole elements, and a writer of another dtype fails below).
      for (int64_t b = std::max<int64_t>(lo, 0); b < std::min(hi, laneBytes); b += es) {
        uint32_t w = row[b / g];
        if (w == seen)
          continue;
        seen = w;
        auto at = [&] {
          return " (lane " + std::to_string(lane) + ", byte " + std::to_string(b) + ")";
        };
        if (w == 0) {
          st = Status::error("undefined read: " + who() + " reads LMEM" + at() +
                             " which no earlier instruction wrote");
          return false;
        }
        const Write &wr = writes[w];
        auto by = [&] { return describeInstruction(*wr.inst, wr.index) + " dst"; };
        // Lanes [lo, hi) of an operand holding one channel per lane.
        auto onePass = [&](const Operand &o) {
          return uint64_t(o.start_lane) + o.shape[1] <= t.lanes;
        };
        const Operand &wo = *wr.op;
        bool assembled = onePass(r) && onePass(wo) && wo.start_lane > r.start_lane &&
                         wo.start_lane + wo.shape[1] <= r.start_lane + r.shape[1];
        // A TIU instruction computing on some of the lanes in place: its
        // destination on the source's lanes, within those written.
        bool inLanes = onePass(r) && onePass(wo) && &r != &inst.dst &&
                       inst.dst.space == Space::LMEM &&
                       inst.dst.start_lane == r.start_lane &&
                       inst.dst.shape[1] == r.shape[1] && engineOf(inst.op) == Engine::TIU &&
                       wo.start_lane < r.start_lane &&
                       r.start_lane + r.shape[1] <= wo.start_lane + wo.shape[1];
        // A GDMA move into local memory picking some of the channels
        // written, on their own lanes, to place them on others (a batch
        // unfolded, a conv's upper partial sums moved onto the lower lanes,
        // runs of rows moving lanes): its source lies within the write.
        bool picked = onePass(r) && onePass(wo) && &r != &inst.dst &&
                      engineOf(inst.op) == Engine::GDMA &&
                      inst.dst.space == Space::LMEM && wo.start_lane < r.start_lane &&
                      r.start_lane + r.shape[1] <= wo.start_lane + wo.shape[1];
        if (wo.start_lane != r.start_lane && !assembled && !inLanes && !picked) {
          st = Status::error("lane placement: " + who() + " reads from start lane " +
                             std::to_string(r.start_lane) + " data " + by() +
                             " wrote from start lane " + std::to_string(wr.op->start_lane) + at());
          return false;
        }
        if (wr.op->dtype != r.dtype) {
          st = Status::error("dtype: " + who() + " reads as " + dtypeName(r.dtype) + " bytes " +
                             by() + " wrote as " + dtypeName(wr.op->dtype) + at());
          return false;
        }
        bool inside = re.lo >= wr.e.lo && re.hi <= wr.e.hi;
        bool around = wr.e.lo >= re.lo && wr.e.hi <= re.hi;
        if (!inside && !around && !sameRowsLayout(r, wo)) {
          st = Status::error("view mismatch: " + who() + " reads LMEM bytes [" +
                             std::to_string(re.lo) + ", " + std::to_string(re.hi) + ") and " +
                             by() + " wrote [" + std::to_string(wr.e.lo) + ", " +
                             std::to_string(wr.e.hi) +
                             "): the read sees part of a write it neither holds nor lies in" + at());
          return false;
        }
      }
      return true;
    });
    return st;
  };

  auto step = [&](const Instruction &inst, size_t index) -> Status {
    static const char *names[3] = {"src0", "src1", "src2"};
    for (int k = 0; k < 3; ++k)
      if (inst.src[k].space == Space::LMEM)
        TPUC_RETURN_IF_ERROR(checkRead(inst, index, inst.src[k], names[k]));
    if (inst.dst.space != Space::LMEM)
      return Status::OK();
    if (readsDst(inst))
      TPUC_RETURN_IF_ERROR(checkRead(inst, index, inst.dst, "dst (accumulated)"));
    Write w{&inst, index, &inst.dst, {}};
    if (!operandExtent(inst.dst, t, w.e).ok())
      return Status::OK();
    if (writes.size() == UINT32_MAX)
      return Status::error("too many local-memory writes to verify");
    uint32_t tag = uint32_t(writes.size());
    writes.push_back(w);
    forEachByteRun(inst.dst, t.lanes, [&](uint32_t lane, int64_t lo, int64_t hi) {
      uint32_t *row = shadow.data() + size_t(lane) * size_t(laneCells);
      std::fill(row + std::max<int64_t>(lo, 0) / g, row + (std::min(hi, laneBytes) + g - 1) / g,
                tag);
      return true;
    });
    return Status::OK();
  };

  // One linear order: TIU whenever its wait is met, else GDMA (the hazard
  // check has excluded deadlocks).
  size_t ti = 0, gi = 0;
  while (ti < tiu.size() || gi < gdma.size()) {
    if (ti < tiu.size() && tiu[ti].wait_id <= gi) {
      TPUC_RETURN_IF_ERROR(step(tiu[ti], ti));
      ++ti;
    } else if (gi < gdma.size() && gdma[gi].wait_id <= ti) {
      TPUC_RETURN_IF_ERROR(step(gdma[gi], gi));
      ++gi;
    } else {
      return Status::error("deadlock while ordering the streams");
    }
  }
  return Status::OK();
}

} // namespace chip
} // namespace tpuc
