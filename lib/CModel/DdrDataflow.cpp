//===- DdrDataflow.cpp - Def-use of DDR activation memory ------------------===//
//
// Only the GDMA touches DDR, so its program order is the order of every DDR
// access and one walk of the stream sees, at each read, the last writer of
// each byte. The activation region is shadowed by an interval map from
// byte runs to their writer (an input, defined at start, or a GDMA store):
// DDR tensors are large and written in long rows, so intervals stay few
// where a per-byte shadow would cost the size of the region.
//
//   * defined: every activation byte a GDMA reads was written earlier;
//   * dtype: bytes are read as the element type they were stored as;
//   * outputs: every byte of every output is written, last by a store
//     lying inside the output (a store moved off its output leaves the
//     output's edge to the tensor that used the buffer before).
//
// Two rules of the local-memory check do not carry over. A DDR read may
// straddle stores: layer groups store a tensor in tiles of H and the next
// group loads other tiles with halo rows. And stores may overwrite bytes
// nothing read: a fill under a padded or gathered tensor, the overlapping
// windows of a max-pool backward, recurrent state rows.
//
//===----------------------------------------------------------------------===//
#include "ByteRuns.h"

#include "tpuc/Chip/BModel.h"

#include <map>

namespace tpuc {
namespace chip {
namespace {

struct Writer {
  long index; // GDMA index, -1 for a network input
  DType dtype;
  Extent e;
  const std::string *input;
};

struct Cell {
  int64_t hi;
  uint32_t writer;
};

class Shadow {
public:
  /// [lo, hi) now holds `writer`'s bytes; a run continuing the writer's
  /// previous one extends its cell.
  void assign(int64_t lo, int64_t hi, uint32_t writer) {
    cut(lo);
    cut(hi);
    auto it = cells_.lower_bound(lo);
    while (it != cells_.end() && it->first < hi)
      it = cells_.erase(it);
    if (it != cells_.begin() && std::prev(it)->second.hi == lo &&
        std::prev(it)->second.writer == writer)
      std::prev(it)->second.hi = hi;
    else
      cells_.emplace(lo, Cell{hi, writer});
  }
  /// The first cell ending after `at`, without splitting.
  std::map<int64_t, Cell>::iterator from(int64_t at) {
    auto it = cells_.upper_bound(at);
    if (it != cells_.begin() && std::prev(it)->second.hi > at)
      --it;
    return it;
  }
  std::map<int64_t, Cell> &cells() { return cells_; }

private:
  void cut(int64_t at) {
    auto it = cells_.upper_bound(at);
    if (it == cells_.begin())
      return;
    --it;
    if (it->first < at && it->second.hi > at) {
      Cell right = it->second;
      it->second.hi = at;
      cells_.emplace(at, right);
    }
  }
  std::map<int64_t, Cell> cells_;
};

std::string range(const Extent &e) {
  return "[" + std::to_string(e.lo) + ", " + std::to_string(e.hi) + ")";
}

} // namespace

Status checkDdrDataflow(const Network &n, const DdrPlan &plan) {
  const int64_t actLo = int64_t(plan.activation_addr),
                actHi = int64_t(plan.activation_addr + plan.activation_size);
  Target any; // DDR extents do not depend on the target
  Shadow shadow;
  auto &cells = shadow.cells();
  std::vector<Writer> writers;
  for (const TensorInfo &t : n.inputs) {
    Extent e{int64_t(t.ddr_addr), int64_t(t.ddr_addr + t.byteSize())};
    writers.push_back({-1, t.dtype, e, &t.name});
    shadow.assign(e.lo, e.hi, uint32_t(writers.size() - 1));
  }
  auto by = [&](const Writer &w) {
    return w.index < 0 ? "input '" + *w.input + "'"
                       : describeInstruction(n.gdma[size_t(w.index)], size_t(w.index)) + " dst";
  };

  auto read = [&](const Instruction &inst, long k, const Operand &o,
                  const char *field) -> Status {
    Status st;
    forEachByteRun(o, 1, [&](uint32_t, int64_t lo, int64_t hi) {
      lo = std::max(lo, actLo);
      hi = std::min(hi, actHi);
      if (lo >= hi)
        return true;
      auto who = [&] { return describeInstruction(inst, size_t(k)) + " " + field; };
      int64_t at = lo;
      for (auto it = shadow.from(lo); it != cells.end() && it->first < hi; ++it) {
        if (it->first > at)
          break;
        const Writer &w = writers[it->second.writer];
        if (w.dtype != o.dtype) {
          st = Status::error("dtype: " + who() + " reads DDR as " + dtypeName(o.dtype) +
                             " bytes " + by(w) + " wrote as " + dtypeName(w.dtype) +
                             " (byte " + std::to_string(std::max(it->first, lo)) + ")");
          return false;
        }
        at = it->second.hi;
      }
      if (at < hi) {
        st = Status::error("undefined read: " + who() + " reads DDR byte " +
                           std::to_string(at) + " which no earlier instruction wrote");
        return false;
      }
      return true;
    });
    return st;
  };

  auto write = [&](const Instruction &inst, long k) {
    Writer self{k, inst.dst.dtype, {}, nullptr};
    if (!operandExtent(inst.dst, any, self.e).ok())
      return;
    writers.push_back(self);
    const uint32_t tag = uint32_t(writers.size() - 1);
    forEachByteRun(inst.dst, 1, [&](uint32_t, int64_t lo, int64_t hi) {
      lo = std::max(lo, actLo);
      hi = std::min(hi, actHi);
      if (lo >= hi)
        return true;
      shadow.assign(lo, hi, tag);
      return true;
    });
  };

  // Weight loads (most runs of a program) are skipped whole.
  auto active = [&](const Operand &o) {
    Extent e;
    return o.space == Space::DDR && operandExtent(o, any, e).ok() && e.lo < actHi &&
           e.hi > actLo;
  };
  static const char *names[3] = {"src0", "src1", "src2"};
  for (size_t k = 0; k < n.gdma.size(); ++k) {
    const Instruction &i = n.gdma[k];
    for (int s = 0; s < 3; ++s)
      if (active(i.src[s]))
        TPUC_RETURN_IF_ERROR(read(i, long(k), i.src[s], names[s]));
    if (active(i.dst))
      write(i, long(k));
  }

  for (const TensorInfo &t : n.outputs) {
    int64_t lo = int64_t(t.ddr_addr), hi = int64_t(t.ddr_addr + t.byteSize()), at = lo;
    for (auto it = shadow.from(lo); it != cells.end() && it->first < hi; ++it) {
      if (it->first > at)
        break;
      const Writer &w = writers[it->second.writer];
      if (w.index >= 0 && (w.e.lo < lo || w.e.hi > hi))
        return Status::error("view mismatch: output '" + t.name + "' (DDR " +
                             range({lo, hi}) + ") holds bytes [" +
                             std::to_string(std::max(it->first, lo)) + ", " +
                             std::to_string(std::min(it->second.hi, hi)) + ") last written by " +
                             by(w) + " to " + range(w.e) + ", which strays outside it");
      at = it->second.hi;
    }
    if (at < hi)
      return Status::error("unwritten output: no instruction writes byte " + std::to_string(at) +
                           " of output '" + t.name + "' (DDR " + range({lo, hi}) + ")");
  }
  return Status::OK();
}

} // namespace chip
} // namespace tpuc
