//===- CModel.cpp - Functional and timing simulation ----------------------===//
//
// Execution model: each engine executes its stream in order, one
// instruction at a time. An instruction starts at max(engine free, end of
// the instruction it waits for). It reads its operands at its start cycle
// (computing the full result into a pending buffer) and its result is
// written to memory at its end cycle. Pending results are committed before
// any instruction that starts at or after their end cycle reads memory, so
// the data a consumer sees depends on the synchronisation exactly as on
// hardware with in-order engines.
//
//===----------------------------------------------------------------------===//
#include "tpuc/Chip/CModel.h"
#include "Execute.h"
#include "tpuc/Chip/Float16.h"
#include "tpuc/Chip/Json.h"
#include "tpuc/Chip/Log.h"
#include "tpuc/Chip/QuantMath.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace tpuc {
namespace chip {

struct CModel::Pending {
  const Instruction *inst;
  size_t index; // in its stream
  std::vector<uint8_t> data; // dense NCHW elements of dst.dtype
  bool inPlace = false;      // executes at commit, into its destination
  Engine engine;
  uint32_t id;
  uint64_t end;
  uint64_t seq;
};

namespace {

inline uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/// Channel slots the busiest lane holds: the TIU processes lanes in
/// parallel, so this is the number of sequential channel passes.
inline uint64_t laneRows(const Operand &o, const Target &t) {
  return ceilDiv(uint64_t(o.start_lane) + o.shape[1], t.lanes);
}
inline uint64_t perChannel(const Operand &o) {
  return uint64_t(o.shape[0]) * o.shape[2] * o.shape[3];
}

bool isSfu(ActOp a) {
  switch (a) {
  case ActOp::Relu:
  case ActOp::LeakyRelu:
  case ActOp::Abs:
  case ActOp::Neg:
  case ActOp::Square:
  case ActOp::Clip:
  case ActOp::HardSigmoid:
    return false;
  default:
    return true;
  }
}

/// Bytes the DDR side really transfers: contiguous runs are rounded up to
/// whole bursts, so strided access costs more than dense access.
uint64_t ddrEffectiveBytes(const Operand &o, uint64_t elems, uint32_t burst) {
  uint64_t es = dtypeSize(o.dtype);
  uint64_t run = 1;
  if (o.stride[3] == 1) {
    run = o.shape[3];
    if (int64_t(o.stride[2]) == int64_t(run)) {
      run *= o.shape[2];
      if (int64_t(o.stride[1]) == int64_t(run)) {
        run *= o.shape[1];
        if (int64_t(o.stride[0]) == int64_t(run))
          run *= o.shape[0];
      }
    }
  }
  uint64_t runs = ceilDiv(elems, run);
  return runs * ceilDiv(run * es, burst) * burst;
}

} // namespace

uint64_t instructionCycles(const Instruction &inst, const Target &t,
                           uint64_t *work, bool *bank_conflict) {
  const Operand &d = inst.dst, &a = inst.src[0], &b = inst.src[1];
  if (bank_conflict)
    *bank_conflict = false;
  if (inst.op == Opcode::DmaGather) {
    // As dma_move, plus reading the indices. Gathered source rows are
    // contiguous only inside the gather axis: a zero stride there keeps
    // the burst runs from merging across it.
    uint64_t elems = d.numElements(), es = dtypeSize(d.dtype);
    Operand rows = a;
    for (int k = 0; k < 4; ++k)
      rows.shape[k] = d.shape[k];
    rows.stride[inst.iparam[gather_param::Axis] & 3] = 0;
    uint64_t bytes = elems * es, idxBytes = b.numElements() * dtypeSize(b.dtype);
    uint64_t eff = std::max(bytes, ddrEffectiveBytes(rows, elems, t.ddr_burst_bytes));
    if (d.space == Space::DDR)
      eff = std::max(eff, ddrEffectiveBytes(d, elems, t.ddr_burst_bytes));
    eff += std::max(idxBytes, ddrEffectiveBytes(b, b.numElements(), t.ddr_burst_bytes));
    if (work)
      *work = bytes + idxBytes;
    return t.gdma_issue_cycles + t.ddr_latency_cycles +
           static_cast<uint64_t>(std::ceil(double(eff) / t.ddr_bytes_per_cycle));
  }
  if (inst.engine == Engine::GDMA) {
    uint64_t elems = d.numElements();
    bool ddr = d.space == Space::DDR || (a.valid() && a.space == Space::DDR);
    uint64_t es = dtypeSize(d.dtype);
    if (a.valid())
      es = std::max<uint64_t>(es, dtypeSize(a.dtype));
    uint64_t bytes = elems * es;
    uint64_t eff = bytes;
    if (d.space == Space::DDR)
      eff = std::max(eff, ddrEffectiveBytes(d, elems, t.ddr_burst_bytes));
    if (a.valid() && a.space == Space::DDR)
      eff = std::max(eff, ddrEffectiveBytes(a, a.numElements(), t.ddr_burst_bytes));
    double bw = ddr ? t.ddr_bytes_per_cycle : t.gdma_lmem_bytes_per_cycle;
    if (work)
      *work = bytes;
    return t.gdma_issue_cycles + (ddr ? t.ddr_latency_cycles : 0) +
           static_cast<uint64_t>(std::ceil(double(eff) / bw));
  }

  uint64_t w = 0, eu = 1;
  double factor = 1.0;
  auto minEu = [&](std::initializer_list<const Operand *> ops) {
    uint64_t e = UINT64_MAX;
    for (const Operand *o : ops)
      if (o->valid())
        e = std::min<uint64_t>(e, t.euFor(o->dtype));
    return e;
  };
  uint64_t cycles_work = 0;
  switch (inst.op) {
  case Opcode::Conv: {
    uint64_t icg = a.shape[1] / std::max(1, inst.iparam[conv_param::Groups]);
    uint64_t per = perChannel(d) * icg * b.shape[2] * b.shape[3];
    w = per * d.shape[1];
    eu = t.euFor(a.dtype);
    cycles_work = laneRows(d, t) * per;
    break;
  }
  case Opcode::MatMul: {
    uint64_t per = uint64_t(d.shape[0]) * d.shape[3] * a.shape[3];
    w = per * d.shape[1];
    eu = t.euFor(a.dtype);
    cycles_work = laneRows(d, t) * per;
    break;
  }
  case Opcode::Pool: {
    uint64_t per = perChannel(d) * inst.iparam[pool_param::KH] * inst.iparam[pool_param::KW];
    w = per * d.shape[1];
    eu = t.euFor(a.dtype);
    cycles_work = laneRows(d, t) * per;
    break;
  }
  case Opcode::Reduce:
    w = a.numElements();
    eu = t.euFor(a.dtype);
    cycles_work = laneRows(a, t) * perChannel(a);
    if (inst.iparam[0] == 1) // cross-lane reduction tree
      cycles_work += t.lanes;
    break;
  default: // elementwise family
    w = d.numElements();
    eu = minEu({&d, &a, &b});
    cycles_work = laneRows(d, t) * perChannel(d);
    if (inst.op == Opcode::Active && isSfu(static_cast<ActOp>(inst.sub_op)))
      factor = t.tiu_sfu_factor;
    if (inst.op == Opcode::Binary && inst.sub_op == uint8_t(BinaryOp::Div))
      factor = t.tiu_div_factor;
    break;
  }
  double compute = std::ceil(double(cycles_work) / double(eu) * factor);
  // Two sources starting in the same LMEM bank are read through one port.
  if (a.valid() && b.valid() && a.space == Space::LMEM && b.space == Space::LMEM &&
      a.addr != b.addr && a.addr / t.bankBytes() == b.addr / t.bankBytes()) {
    compute = std::ceil(compute * (1.0 + t.bank_conflict_pct / 100.0));
    if (bank_conflict)
      *bank_conflict = true;
  }
  if (work)
    *work = w;
  return t.tiu_issue_cycles + std::max<uint64_t>(1, static_cast<uint64_t>(compute));
}

uint64_t gdmaOverlappedCycles(const Instruction &inst, const Target &t) {
  if (inst.engine != Engine::GDMA)
    return 0;
  bool ddr = inst.op == Opcode::DmaGather || inst.dst.space == Space::DDR ||
             (inst.src[0].valid() && inst.src[0].space == Space::DDR);
  return ddr ? t.ddr_latency_cycles : 0;
}

namespace {

/// Bytes [lo, hi) an operand touches: DDR addresses, or per-lane LMEM
/// offsets (the same range in every lane, a conservative superset).
struct ByteRange {
  Space space = Space::None;
  uint64_t lo = 0, hi = 0;
};

ByteRange byteRange(const Operand &o, uint32_t lanes) {
  ByteRange r;
  if (!o.valid() || o.numElements() == 0)
    return r;
  uint64_t extent[4] = {o.shape[0], o.shape[1], o.shape[2], o.shape[3]};
  if (o.space == Space::LMEM) // channels advance a slot every `lanes`
    extent[1] = (o.start_lane + extent[1] - 1) / lanes + 1;
  int64_t lo = 0, hi = 0;
  for (int k = 0; k < 4; ++k) {
    int64_t span = int64_t(extent[k] - 1) * o.stride[k];
    (span < 0 ? lo : hi) += span;
  }
  int64_t es = int64_t(dtypeSize(o.dtype));
  r.space = o.space;
  r.lo = uint64_t(int64_t(o.addr) + lo * es);
  r.hi = uint64_t(int64_t(o.addr) + (hi + 1) * es);
  return r;
}

bool overlaps(const ByteRange &a, const ByteRange &b) {
  return a.space != Space::None && a.space == b.space && a.lo < b.hi &&
         b.lo < a.hi;
}

/// Whether GDMA request `later` reads what `earlier` writes. (Writes to
/// the same bytes need no wait: requests complete in order.)
bool gdmaHazard(const Instruction &earlier, const Instruction &later,
                uint32_t lanes) {
  ByteRange w = byteRange(earlier.dst, lanes);
  for (const Operand &s : later.src)
    if (overlaps(w, byteRange(s, lanes)))
      return true;
  return false;
}

} // namespace

// --- CModel ---------------------------------------------------------------------

void MemoryRelease::operator()(uint8_t *p) const {
#ifdef __linux__
  if (mapped) {
    munmap(p, mapped);
    return;
  }
#endif
  std::free(p);
}

CModel::Memory CModel::allocateZeroed(uint64_t bytes) {
#ifdef __linux__
  // Large memories in transparent huge pages where the kernel offers them
  // on request: the kernels walk the 64 lanes of local memory, 256 KiB
  // apart, and weights across DDR, which in 4 KiB pages misses the TLB on
  // most accesses.
  constexpr uint64_t kHuge = uint64_t(2) << 20;
  if (bytes >= kHuge) {
    const uint64_t size = (bytes + kHuge - 1) / kHuge * kHuge;
    void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
      madvise(p, size, MADV_HUGEPAGE);
      return Memory(static_cast<uint8_t *>(p), MemoryRelease{size});
    }
  }
#endif
  return Memory(static_cast<uint8_t *>(std::calloc(std::max<uint64_t>(bytes, 1), 1)), MemoryRelease{});
}

Status CModel::init(const Target &t, uint64_t ddr_bytes) {
  TPUC_RETURN_IF_ERROR(t.validate());
  target_ = t;
  if (ddr_bytes > t.ddr_bytes)
    return Status::error("requested DDR size " + std::to_string(ddr_bytes) +
                         " exceeds the target's DDR (" + std::to_string(t.ddr_bytes) + " bytes)");
  ddr_ = allocateZeroed(ddr_bytes);
  lmem_ = allocateZeroed(t.lmemTotalBytes());
  if (!ddr_ || !lmem_)
    return Status::error("cannot allocate simulated " + std::string(!ddr_ ? "DDR (" : "local memory (") +
                         std::to_string(!ddr_ ? ddr_bytes : t.lmemTotalBytes()) + " bytes)");
  ddr_size_ = ddr_bytes;
  return Status::OK();
}

Status CModel::writeDdr(uint64_t addr, const void *data, uint64_t n) {
  if (addr > ddr_size_ || n > ddr_size_ - addr)
    return Status::error("DDR write [" + std::to_string(addr) + ", +" + std::to_string(n) +
                         ") exceeds DDR size " + std::to_string(ddr_size_));
  if (n)
    std::memcpy(ddr_.get() + addr, data, n);
  return Status::OK();
}

Status CModel::readDdr(uint64_t addr, void *data, uint64_t n) const {
  if (addr > ddr_size_ || n > ddr_size_ - addr)
    return Status::error("DDR read [" + std::to_string(addr) + ", +" + std::to_string(n) +
                         ") exceeds DDR size " + std::to_string(ddr_size_));
  if (n)
    std::memcpy(data, ddr_.get() + addr, n);
  return Status::OK();
}

Status CModel::compute(const Instruction &inst, Pending &p) {
  p.inPlace = false;
  if (!spare_.empty()) {
    p.data = std::move(spare_.back());
    spare_.pop_back();
  }
  TPUC_RETURN_IF_ERROR(executeInstruction(inst, memView(), p.data));
  if (!fault_.empty() && !p.data.empty() &&
      (fault_ == opcodeName(inst.op) || fault_ == instructionName(inst)))
    p.data.back() ^= 0x40; // the last element's top byte: sign/exponent or a large int step
  return Status::OK();
}

Status CModel::commit(Pending &p) {
  if (p.inPlace)
    return executeInPlace(*p.inst, memView());
  storeDense(memView(), p.inst->dst, p.data.data());
  spare_.push_back(std::move(p.data));
  return Status::OK();
}

namespace {

/// Elementwise kernels read each row of their sources before they write
/// the same row of the result, so a source may be the destination itself.
bool elementwise(const Instruction &inst) {
  return inst.op == Opcode::Binary || inst.op == Opcode::Active ||
         (inst.op == Opcode::Cast && inst.src[0].dtype != inst.dst.dtype &&
          dtypeSize(inst.src[0].dtype) == dtypeSize(inst.dst.dtype));
}

/// Whether two operands address the same elements in the same order.
bool sameElements(const Operand &a, const Operand &b) {
  if (a.space != b.space || a.addr != b.addr || a.start_lane != b.start_lane ||
      dtypeSize(a.dtype) != dtypeSize(b.dtype))
    return false;
  for (int k = 0; k < 4; ++k)
    if (a.shape[k] != b.shape[k] || (a.shape[k] > 1 && a.stride[k] != b.stride[k]))
      return false;
  return true;
}

/// Whether `inst` reads bytes in `w`.
bool readsFrom(const Instruction &inst, const ByteRange &w, uint32_t lanes) {
  for (const Operand &s : inst.src)
    if (overlaps(w, byteRange(s, lanes)))
      return true;
  return false;
}

} // namespace

bool CModel::mayRunInPlace(const Instruction &inst, uint64_t end,
                           const std::vector<Pending> &pending) const {
  if (!fault_.empty() || !runsInPlace(inst))
    return false;
  const uint32_t lanes = target_.lanes;
  const ByteRange dst = byteRange(inst.dst, lanes);
  for (const Operand &s : inst.src)
    if (overlaps(dst, byteRange(s, lanes)) && !(elementwise(inst) && sameElements(s, inst.dst)))
      return false;
  // Results committed before this one's end must not change what it reads.
  for (const Pending &q : pending)
    if (q.end <= end && readsFrom(inst, byteRange(q.inst->dst, lanes), lanes))
      return false;
  return true;
}

MemView CModel::memView() const {
  return MemView{ddr_.get(), lmem_.get(), target_.lmem_bytes_per_lane, target_.lanes};
}

Status CModel::run(const std::vector<Instruction> &tiu,
                   const std::vector<Instruction> &gdma, RunStats &stats,
                   const CommitHook &hook, const std::vector<DdrRegion> *regions) {
  if (!timingOnly_ && (!ddr_ || !lmem_))
    return Status::error("cmodel is not initialised");
  std::vector<DdrRegion> all = {{0, ddr_size_, "DDR"}};
  const std::vector<DdrRegion> &reg = regions ? *regions : all;
  TPUC_RETURN_IF_ERROR(validateStreams(tiu, gdma));
  for (size_t k = 0; k < tiu.size(); ++k)
    TPUC_RETURN_IF_ERROR(validateInstruction(tiu[k], k, target_, reg));
  for (size_t k = 0; k < gdma.size(); ++k)
    TPUC_RETURN_IF_ERROR(validateInstruction(gdma[k], k, target_, reg));

  const char *fault = std::getenv("TPUC_CMODEL_FAULT");
  fault_ = fault ? fault : "";
  stats = RunStats();
  stats.clock_mhz = target_.clock_mhz;
  std::vector<uint64_t> tiuEnd(tiu.size()), gdmaEnd(gdma.size());
  size_t ti = 0, gi = 0;
  uint64_t tFree = 0, gFree = 0, seq = 0;
  // GDMA requests in flight: gFree is when the engine can issue the next
  // one, gDone when the last issued one completes (completion is in order).
  const size_t depth = std::max<uint32_t>(1, target_.gdma_queue_depth);
  uint64_t gDone = 0;
  std::vector<Pending> pending;

  auto failure = [&](const Instruction &inst, size_t index, const Status &st) {
    return Status::error(describeInstruction(inst, index) + ": " + st.message());
  };
  auto commitUntil = [&](uint64_t cycle) -> Status {
    while (!timingOnly_) {
      size_t best = pending.size();
      for (size_t k = 0; k < pending.size(); ++k)
        if (pending[k].end <= cycle &&
            (best == pending.size() || pending[k].end < pending[best].end ||
             (pending[k].end == pending[best].end && pending[k].seq < pending[best].seq)))
          best = k;
      if (best == pending.size())
        return Status::OK();
      Status st = commit(pending[best]);
      if (!st.ok())
        return failure(*pending[best].inst, pending[best].index, st);
      Engine e = pending[best].engine;
      uint32_t id = pending[best].id;
      pending.erase(pending.begin() + long(best));
      if (hook)
        hook(e, id);
    }
    return Status::OK();
  };

  const uint64_t kNever = UINT64_MAX;
  while (ti < tiu.size() || gi < gdma.size()) {
    uint64_t tStart = kNever, gStart = kNever;
    if (ti < tiu.size()) {
      uint32_t w = tiu[ti].wait_id;
      if (w == 0)
        tStart = tFree;
      else if (w <= gi)
        tStart = std::max(tFree, gdmaEnd[w - 1]);
    }
    if (gi < gdma.size()) {
      uint32_t w = gdma[gi].wait_id;
      if (w == 0)
        gStart = gFree;
      else if (w <= ti)
        gStart = std::max(gFree, tiuEnd[w - 1]);
      if (gStart != kNever) {
        // A free slot in the request queue, and no outstanding request
        // writing what this one reads (ends are in order: the newest
        // conflicting one is the last to finish).
        if (gi >= depth)
          gStart = std::max(gStart, gdmaEnd[gi - depth]);
        for (size_t j = gi; j-- > (gi >= depth ? gi - depth : 0);)
          if (gdmaEnd[j] > gStart &&
              gdmaHazard(gdma[j], gdma[gi], target_.lanes)) {
            gStart = gdmaEnd[j];
            break;
          }
      }
    }
    if (tStart == kNever && gStart == kNever) {
      std::string msg = "deadlock: ";
      if (ti < tiu.size())
        msg += "TIU instruction #" + std::to_string(ti) + " waits for GDMA id " +
               std::to_string(tiu[ti].wait_id);
      if (gi < gdma.size())
        msg += std::string(ti < tiu.size() ? " while " : "") + "GDMA instruction #" +
               std::to_string(gi) + " waits for TIU id " + std::to_string(gdma[gi].wait_id);
      return Status::error(msg + ", which can never complete first");
    }
    bool pickTiu = tStart <= gStart && tStart != kNever;
    const Instruction &inst = pickTiu ? tiu[ti] : gdma[gi];
    size_t index = pickTiu ? ti : gi;
    uint64_t start = pickTiu ? tStart : gStart;
    TPUC_RETURN_IF_ERROR(commitUntil(start));

    uint64_t work = 0;
    bool conflict = false;
    uint64_t cost = instructionCycles(inst, target_, &work, &conflict);
    uint64_t end = start + cost;
    if (!pickTiu) {
      end = std::max(end, gDone);
      gDone = end;
    }
    // Instructions that run in place at their end read their sources then:
    // one whose sources this instruction overwrites before that computes
    // its result now, while they are as at its start.
    const ByteRange written = byteRange(inst.dst, target_.lanes);
    for (Pending &q : pending)
      if (q.inPlace && end < q.end && readsFrom(*q.inst, written, target_.lanes)) {
        Status st = compute(*q.inst, q);
        if (!st.ok())
          return failure(*q.inst, q.index, st);
      }
    if (!timingOnly_) {
      Pending p;
      p.inst = &inst;
      p.index = index;
      const bool inPlace = mayRunInPlace(inst, end, pending);
      Status st = inPlace ? checkData(inst, memView()) : compute(inst, p);
      if (!st.ok())
        return failure(inst, index, st);
      p.inPlace = inPlace;
      p.engine = inst.engine;
      p.id = inst.id;
      p.end = end;
      p.seq = seq++;
      pending.push_back(std::move(p));
    }

    InstRecord rec{inst.engine, inst.id, instructionName(inst), start, end, work, conflict};
    stats.records.push_back(rec);
    stats.total_cycles = std::max(stats.total_cycles, end);
    if (conflict)
      ++stats.bank_conflicts;
    if (pickTiu) {
      tiuEnd[ti++] = end;
      tFree = end;
      stats.tiu_busy_cycles += cost;
      ++stats.tiu_instructions;
      if (inst.op == Opcode::Conv || inst.op == Opcode::MatMul)
        stats.macs += work;
    } else {
      uint64_t busy = cost - gdmaOverlappedCycles(inst, target_);
      gdmaEnd[gi++] = end;
      gFree = start + busy;
      stats.gdma_busy_cycles += busy;
      ++stats.gdma_instructions;
      stats.gdma_bytes += work;
    }
  }
  TPUC_RETURN_IF_ERROR(commitUntil(kNever));
  if (logEnabled(LogLevel::Debug))
    log(LogLevel::Debug, "cmodel run: " + std::to_string(stats.total_cycles) + " cycles, " +
                             std::to_string(stats.tiu_instructions) + " TIU / " +
                             std::to_string(stats.gdma_instructions) + " GDMA instructions");
  return Status::OK();
}

Status CModel::time(const Target &t, const std::vector<Instruction> &tiu,
                    const std::vector<Instruction> &gdma,
                    const std::vector<DdrRegion> &regions, RunStats &stats) {
  CModel m;
  m.target_ = t;
  m.timingOnly_ = true;
  return m.run(tiu, gdma, stats, CommitHook(), &regions);
}

// --- Trace ----------------------------------------------------------------------

std::string traceJson(const RunStats &stats, const std::string &title) {
  std::ostringstream os;
  double mhz = stats.clock_mhz > 0 ? stats.clock_mhz : 1.0;
  os << "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"title\": " << jsonQuote(title)
     << ", \"total_cycles\": " << stats.total_cycles << ", \"clock_mhz\": " << mhz
     << "}, \"traceEvents\": [\n";
  os << "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": {\"name\": "
     << jsonQuote(title) << "}},\n";
  os << "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": 0, \"args\": {\"name\": \"TIU\"}},\n";
  os << "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": 1, \"args\": {\"name\": \"GDMA\"}}";
  char buf[96];
  for (const InstRecord &r : stats.records) {
    os << ",\n{\"name\": " << jsonQuote(r.name) << ", \"cat\": \"" << engineName(r.engine)
       << "\", \"ph\": \"X\", \"pid\": 0, \"tid\": " << (r.engine == Engine::TIU ? 0 : 1);
    std::snprintf(buf, sizeof(buf), ", \"ts\": %.6f, \"dur\": %.6f", double(r.start) / mhz,
                  double(r.end - r.start) / mhz);
    os << buf << ", \"args\": {\"id\": " << r.id << ", \"start_cycle\": " << r.start
       << ", \"cycles\": " << (r.end - r.start) << ", \"work\": " << r.work
       << ", \"bank_conflict\": " << (r.bank_conflict ? "true" : "false") << "}}";
  }
  os << "\n]}\n";
  return os.str();
}

Status writeTrace(const RunStats &stats, const std::string &title, const std::string &path) {
  std::ofstream f(path, std::ios::binary);
  if (!f)
    return Status::error("cannot open trace file '" + path + "' for writing");
  std::string s = traceJson(stats, title);
  f.write(s.data(), std::streamsize(s.size()));
  if (!f)
    return Status::error("failed writing trace file '" + path + "'");
  return Status::OK();
}

} // namespace chip
} // namespace tpuc
