//===- Context.cpp - Codegen state, synchronisation and tiling ------------===//
#include "tpuc/Backend/Codegen.h"
#include "tpuc/Chip/CModel.h"
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include <algorithm>
#include <cstring>
#include <cassert>
#include <tuple>

using namespace mlir;
using namespace tpuc::chip;

namespace tpuc {
namespace backend {

static constexpr uint64_t kLmemAlign = 64;

Value markDataMovement(Value weight) {
  weight.getDefiningOp()->setAttr(kDataMovementAttr,
                                  UnitAttr::get(weight.getContext()));
  return weight;
}

Value identityRows(OpBuilder &b, Operation *anchor, const std::string &name,
                   RankedTensorType type, int64_t W, int64_t at) {
  SmallVector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  const int64_t R = shape[shape.size() - 2];
  shape.back() = W;
  std::vector<float> data(size_t(R * W), 0.0f);
  for (int64_t i = 0; i < W; ++i)
    data[size_t((at + i) * W + i)] = 1.0f;
  return markDataMovement(top::WeightOp::createWithData(
      b, anchor, name, RankedTensorType::get(shape, type.getElementType()),
      std::move(data)));
}

bool countsModelMacs(Operation *op) {
  if (op->hasAttr(kRecomputedAttr))
    return false;
  return llvm::none_of(op->getOperands(), [](Value v) {
    auto w = v.getDefiningOp<top::WeightOp>();
    return w && w->hasAttr(kDataMovementAttr);
  });
}

int64_t modelMacs(Operation *op) {
  if (!countsModelMacs(op))
    return 0;
  if (auto m = op->getAttrOfType<IntegerAttr>(kModelMacsAttr))
    return m.getInt();
  auto cg = dyn_cast<CodegenInterface>(op);
  return cg ? cg.getMacs() : 0;
}

std::optional<uint64_t> ddrAddr(Value v) {
  // A layer group's result is the member value it yields.
  v = tpu::lookThroughGroup(v);
  Operation *def = v.getDefiningOp();
  if (!def) {
    // A block argument is placed through the top.Input that names it.
    for (Operation *user : v.getUsers())
      if (isa<top::InputOp>(user))
        return ddrAddr(user->getResult(0));
    return std::nullopt;
  }
  if (auto a = def->getAttrOfType<IntegerAttr>(kAddrAttr))
    return uint64_t(a.getInt());
  return std::nullopt;
}

std::optional<std::pair<int64_t, int64_t>> ddrBlockStride(Value v) {
  if (!v)
    return std::nullopt;
  Operation *def = tpu::lookThroughGroup(v).getDefiningOp();
  auto a = def ? def->getAttrOfType<ArrayAttr>(kBlockStrideAttr) : nullptr;
  if (!a || a.size() != 2)
    return std::nullopt;
  return std::make_pair(cast<IntegerAttr>(a[0]).getInt(),
                        cast<IntegerAttr>(a[1]).getInt());
}

std::optional<Operand> withBlockStride(Operand o, std::array<int64_t, 4> shape,
                                       std::pair<int64_t, int64_t> bs) {
  auto [block, stride] = bs;
  if (block == shape[2] * shape[3]) {
    o.stride[1] = int32_t(stride);
    o.stride[0] = int32_t(stride * shape[1]);
  } else if (block == shape[1] * shape[2] * shape[3]) {
    o.stride[0] = int32_t(stride);
  } else {
    return std::nullopt;
  }
  return o;
}

DType chipDType(Type type) {
  if (auto t = dyn_cast<ShapedType>(type))
    type = t.getElementType();
  if (auto q = dyn_cast<quant::QuantizedType>(type))
    type = q.getStorageType();
  if (type.isF32())
    return DType::F32;
  if (type.isF16())
    return DType::F16;
  if (type.isBF16())
    return DType::BF16;
  if (type.isInteger(32))
    return DType::INT32;
  if (type.isInteger(8))
    return type.isUnsignedInteger() ? DType::UINT8 : DType::INT8;
  return DType::Invalid;
}

SmallVector<int64_t, 6> denseStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t, 6> s(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

DdrView DdrView::dense(uint64_t addr, ArrayRef<int64_t> shape, DType t) {
  DdrView v;
  v.addr = addr;
  v.dtype = t;
  v.shape.assign(shape.begin(), shape.end());
  v.strides = denseStrides(shape);
  return v;
}

int64_t DdrView::numElements() const { return tpuc::numElements(shape); }

Operand ddrOperand(uint64_t addr, std::array<int64_t, 4> shape,
                   std::array<int64_t, 4> strides, DType t) {
  Operand o = ddrTensor(addr, shape[0], shape[1], shape[2], shape[3], t);
  for (int d = 0; d < 4; ++d)
    o.stride[d] = int32_t(strides[d]);
  return o;
}

//===----------------------------------------------------------------------===//
// Per-op state and synchronisation
//===----------------------------------------------------------------------===//

static uint64_t alignUp(uint64_t v) {
  return (v + kLmemAlign - 1) / kLmemAlign * kLmemAlign;
}

/// Byte range [lo, hi) of DDR an operand touches.
static std::pair<uint64_t, uint64_t> ddrRange(const Operand &o) {
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < 4; ++d) {
    int64_t span = int64_t(o.shape[d] - 1) * o.stride[d];
    (span < 0 ? lo : hi) += span;
  }
  int64_t es = dtypeSize(o.dtype);
  return {uint64_t(int64_t(o.addr) + lo * es),
          uint64_t(int64_t(o.addr) + (hi + 1) * es)};
}

/// The DDR byte runs [lo, hi) of an operand, sorted and merged; nullopt
/// when there are too many to list (callers then use the hull).
static std::optional<std::vector<std::pair<uint64_t, uint64_t>>>
ddrRuns(const Operand &o) {
  const int64_t es = dtypeSize(o.dtype);
  // Dims [outer, 4) that are dense form one run of `len` elements; the
  // dims before them list the runs.
  int outer = 4;
  int64_t len = 1;
  while (outer > 0 && o.stride[outer - 1] == len) {
    --outer;
    len *= o.shape[outer];
  }
  uint64_t count = 1;
  for (int d = 0; d < outer; ++d)
    count *= o.shape[d];
  if (count > 4096)
    return std::nullopt;
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  std::array<uint32_t, 4> idx{0, 0, 0, 0};
  for (uint64_t k = 0; k < count; ++k) {
    int64_t off = 0;
    for (int d = 0; d < outer; ++d)
      off += int64_t(idx[d]) * o.stride[d];
    uint64_t lo = uint64_t(int64_t(o.addr) + off * es);
    runs.push_back({lo, lo + uint64_t(len * es)});
    for (int d = outer - 1; d >= 0; --d) {
      if (++idx[d] < o.shape[d])
        break;
      idx[d] = 0;
    }
  }
  llvm::sort(runs);
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  for (auto r : runs)
    if (!merged.empty() && r.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, r.second);
    else
      merged.push_back(r);
  return merged;
}

/// Whether two DDR operands share a byte (exactly when their runs can be
/// listed, else by their hulls).
static bool ddrOverlap(const Operand &a, const Operand &b) {
  auto [alo, ahi] = ddrRange(a);
  auto [blo, bhi] = ddrRange(b);
  if (ahi <= blo || bhi <= alo)
    return false;
  auto ra = ddrRuns(a), rb = ddrRuns(b);
  if (!ra || !rb)
    return true;
  for (size_t i = 0, j = 0; i < ra->size() && j < rb->size();) {
    if ((*ra)[i].second <= (*rb)[j].first)
      ++i;
    else if ((*rb)[j].second <= (*ra)[i].first)
      ++j;
    else
      return true;
  }
  return false;
}

CodegenContext::CodegenContext(const Target &target,
                               std::vector<DdrRegion> ddr)
    : target_(target), ddr_(std::move(ddr)) {
  size_t granules = (target_.lmem_bytes_per_lane + kLmemAlign - 1) / kLmemAlign;
  granTiu_.assign(granules, 0);
  granGdma_.assign(granules, 0);
}

void CodegenContext::beginOp(Operation *op) {
  op_ = op;
  forwardReads_.clear();
  fold();
  topDown_ = !topDown_;
  lmemUsed_ = 0;
  lmemLow_ = laneBytes();
  storeRanges_.clear();
  flushed_.clear();
  firstTiu_ = builder_.tiuStream().size();
  firstGdma_ = builder_.gdmaStream().size();
  prefetchBudget_ = 0;
  ownGdma_ = 0;
  flushedIds_.clear();
  countedGdma_ = firstGdma_;
}

void CodegenContext::beginPrefetch(uint64_t reserve,
                                   std::vector<PrefetchLoad> loads) {
  assert(reserve % kLmemAlign == 0 && reserve < target_.lmem_bytes_per_lane);
  prefetchReserve_ = reserve;
  prefetch_ = std::move(loads);
}

static Operand dimRange(Operand o, int d, uint32_t c0, uint32_t c1,
                        uint32_t lanes);

/// Parts of a prefetch tile's load, each holding the GDMA about a DDR
/// latency (so that one fits the short idle times between an op's
/// requests): whole lane rows of channels, else rows, else columns.
static SmallVector<std::pair<Operand, Operand>, 4>
prefetchParts(const PrefetchLoad &p, const chip::Target &t) {
  const uint64_t chunk =
      std::max<uint64_t>(1, uint64_t(t.ddr_latency_cycles * t.ddr_bytes_per_cycle));
  const uint64_t bytes = uint64_t(p.from.numElements()) * dtypeSize(p.from.dtype);
  SmallVector<std::pair<Operand, Operand>, 4> parts;
  const uint32_t lanes = t.lanes;
  for (int d : {1, 0, 2, 3}) {
    // Channel cuts at whole lane slots keep each part's start lane.
    const uint32_t unit = d == 1 ? lanes : 1;
    const uint32_t n = p.to.shape[d];
    const uint32_t steps = n / unit;
    if (bytes <= chunk || steps < 2 || n % unit)
      continue;
    const uint32_t k = uint32_t(std::min<uint64_t>(steps, (bytes + chunk - 1) / chunk));
    for (uint32_t i = 0; i < k; ++i) {
      const uint32_t c0 = steps * i / k * unit, c1 = steps * (i + 1) / k * unit;
      parts.push_back({dimRange(p.to, d, c0, c1, lanes),
                       dimRange(p.from, d, c0, c1, lanes)});
    }
    return parts;
  }
  parts.push_back({p.to, p.from});
  return parts;
}

void CodegenContext::dropUnissuedPrefetch(size_t unit) {
  // A tile partly loaded has its other parts loaded now.
  for (PrefetchLoad &p : prefetch_)
    if (!p.gdma && p.parts && p.unit <= unit) {
      const auto parts = prefetchParts(p, target_);
      while (!p.gdma)
        issuePrefetchPart(p, parts);
    }
  llvm::erase_if(prefetch_, [&](const PrefetchLoad &p) {
    return !p.gdma && p.unit <= unit;
  });
}

void CodegenContext::endPrefetch() {
  aliases_.clear();
  prefetch_.clear();
  prefetchIds_.clear();
  prefetchReserve_ = 0;
  prefetchIdle_.clear();
}

void CodegenContext::issuePrefetchPart(
    PrefetchLoad &p, ArrayRef<std::pair<Operand, Operand>> parts) {
  const auto &[to, from] = parts[p.parts];
  Extent e;
  (void)operandExtent(to, target_, e);
  // The previous op's held-back stores may still read the reserved LMEM.
  if (overlapsDeferred(uint64_t(e.lo), uint64_t(e.hi)))
    flushStores();
  LBuf dst = part(uint64_t(e.lo), uint64_t(e.hi - e.lo));
  const uint32_t id = emitGdma(makeDmaMove(to, from), dst.tiu);
  dst.gdma = id;
  touch(dst);
  prefetchIds_.insert(id);
  countedGdma_ = builder_.gdmaStream().size();
  if (++p.parts == parts.size())
    p.gdma = id;
}

void CodegenContext::pumpPrefetch() {
  auto next = llvm::find_if(prefetch_,
                            [](const PrefetchLoad &p) { return !p.gdma; });
  if (next == prefetch_.end())
    return;
  // The idle GDMA time after each of the op's own requests so far (in its
  // schedule on its own), less the prefetch loads already put in it.
  const auto &gdma = builder_.gdmaStream();
  for (; countedGdma_ < gdma.size(); ++countedGdma_)
    if (!prefetchIds_.contains(gdma[countedGdma_].id) &&
        !flushedIds_.contains(gdma[countedGdma_].id) &&
        ownGdma_ < prefetchGaps_.size())
      prefetchBudget_ += prefetchGaps_[ownGdma_++];
  // The idle GDMA time during the TIU instructions so far (setPrefetchIdle).
  const auto &tiu = builder_.tiuStream();
  for (; countedTiu_ < tiu.size(); ++countedTiu_)
    if (countedTiu_ < prefetchIdle_.size())
      prefetchBudget_ += prefetchIdle_[countedTiu_];
  for (; next != prefetch_.end(); ++next) {
    const auto parts = prefetchParts(*next, target_);
    while (!next->gdma) {
      Instruction inst =
          makeDmaMove(parts[next->parts].first, parts[next->parts].second);
      const double held = double(instructionCycles(inst, target_) -
                                 gdmaOverlappedCycles(inst, target_));
      if (held > prefetchBudget_)
        return;
      issuePrefetchPart(*next, parts);
      prefetchBudget_ -= held;
    }
  }
}

PrefetchLoad *CodegenContext::prefetched(const Operand &to,
                                         const Operand &from) {
  auto same = [](const Operand &a, const Operand &b, bool addr) {
    return (!addr || a.addr == b.addr) && a.space == b.space &&
           a.dtype == b.dtype && a.start_lane == b.start_lane &&
           std::equal(a.shape, a.shape + 4, b.shape) &&
           std::equal(a.stride, a.stride + 4, b.stride);
  };
  for (PrefetchLoad &p : prefetch_)
    if (p.gdma && !p.used && same(p.from, from, true) && same(p.to, to, false))
      return &p;
  return nullptr;
}

void CodegenContext::freeAll() {
  fold();
  lmemUsed_ = 0;
  lmemLow_ = laneBytes();
}

void CodegenContext::touch(const LBuf &b) {
  for (Region &r : touched_)
    if (r.lo == b.addr && r.hi == b.addr + b.bytes) {
      r.tiu = std::max(r.tiu, b.tiu);
      r.gdma = std::max(r.gdma, b.gdma);
      return;
    }
  touched_.push_back({b.addr, b.addr + b.bytes, b.tiu, b.gdma});
}

void CodegenContext::fold() {
  for (const Region &r : touched_)
    for (uint64_t g = r.lo / kLmemAlign; g * kLmemAlign < r.hi; ++g) {
      granTiu_[g] = std::max(granTiu_[g], r.tiu);
      granGdma_[g] = std::max(granGdma_[g], r.gdma);
    }
  touched_.clear();
}

bool CodegenContext::overlapsDeferred(uint64_t lo, uint64_t hi) const {
  return llvm::any_of(deferred_, [&](const Deferred &d) {
    return lo < d.hi && d.lo < hi;
  });
}

void CodegenContext::flushStores() {
  if (deferred_.empty())
    return;
  for (Deferred &d : deferred_) {
    flushed_.push_back({d.lo, d.hi});
    uint32_t id = builder_.gdma(d.inst, d.inst.wait_id);
    flushedIds_.insert(id);
    for (uint64_t g = d.lo / kLmemAlign; g * kLmemAlign < d.hi; ++g)
      granGdma_[g] = std::max(granGdma_[g], id);
  }
  deferred_.clear();
  for (auto &done : waiting_)
    done(builder_.lastGdmaId());
  waiting_.clear();
}

void CodegenContext::whenStored(llvm::unique_function<void(uint32_t)> done) {
  if (deferred_.empty())
    done(builder_.lastGdmaId());
  else
    waiting_.push_back(std::move(done));
}

LogicalResult CodegenContext::endOp() {
  // Validating here, not only in the bmodel writer, lets errors name the op.
  auto check = [&](std::vector<Instruction> &s, size_t first) {
    for (size_t k = first; k < s.size(); ++k) {
      Status st = validateInstruction(s[k], k, target_, ddr_);
      if (!st.ok()) {
        error() << "generated an invalid instruction: " << st.message();
        return failure();
      }
    }
    return success();
  };
  if (failed(check(builder_.tiuStream(), firstTiu_)) ||
      failed(check(builder_.gdmaStream(), firstGdma_)))
    return failure();
  fold();
  // Hold back the trailing stores no TIU instruction waits for; their ids
  // change when they are emitted again.
  std::vector<Instruction> &tiu = builder_.tiuStream(),
                           &gdma = builder_.gdmaStream();
  uint32_t waited = 0;
  for (size_t k = firstTiu_; k < tiu.size(); ++k)
    waited = std::max(waited, tiu[k].wait_id);
  size_t first = gdma.size();
  while (first > firstGdma_ && gdma[first - 1].id > waited &&
         llvm::any_of(storeRanges_, [&](const auto &s) {
           return s.first == gdma[first - 1].id;
         }))
    --first;
  if (first == gdma.size())
    return success();
  // The op's stores flushed its predecessor's held-back ones.
  assert(deferred_.empty());
  std::vector<Deferred> held;
  for (size_t k = first; k < gdma.size(); ++k) {
    const Instruction &inst = gdma[k];
    Deferred d;
    d.inst = inst;
    for (const auto &s : storeRanges_)
      if (s.first == inst.id)
        d.lo = s.second.lo, d.hi = s.second.hi;
    held.push_back(d);
  }
  gdma.resize(first);
  deferred_ = std::move(held);
  return success();
}

std::optional<LBuf> CodegenContext::alloc(uint64_t bytesPerLane) {
  if (bytesPerLane == 0)
    return std::nullopt;
  uint64_t start;
  if (topDown_) {
    if (bytesPerLane > lmemLow_)
      return std::nullopt;
    start = (lmemLow_ - bytesPerLane) / kLmemAlign * kLmemAlign;
    lmemLow_ = start;
  } else {
    start = alignUp(lmemUsed_);
    if (start + bytesPerLane > laneBytes())
      return std::nullopt;
    lmemUsed_ = start + bytesPerLane;
  }
  // A buffer over the LMEM a held-back store reads waits for that store
  // only when first written (load, fillLocal, tiu flush then).
  return part(start, bytesPerLane);
}

LBuf CodegenContext::part(uint64_t addr, uint64_t bytesPerLane) const {
  LBuf b;
  b.addr = addr;
  b.bytes = bytesPerLane;
  for (uint64_t g = addr / kLmemAlign; g * kLmemAlign < addr + bytesPerLane;
       ++g) {
    b.tiu = std::max(b.tiu, granTiu_[g]);
    b.gdma = std::max(b.gdma, granGdma_[g]);
  }
  return b;
}

std::optional<LBuf> CodegenContext::allocApart(uint64_t bytesPerLane,
                                               ArrayRef<uint64_t> apart,
                                               uint64_t keepFree) {
  const uint64_t bank = target_.bankBytes();
  const uint64_t used = lmemUsed_, low = lmemLow_;
  for (uint32_t skip = 0; bank && skip < target_.lmem_banks; ++skip) {
    uint64_t start;
    if (topDown_) {
      if (bytesPerLane > lmemLow_)
        break;
      start = (lmemLow_ - bytesPerLane) / kLmemAlign * kLmemAlign;
    } else {
      start = alignUp(lmemUsed_);
    }
    // A later skip only leaves less room.
    if (topDown_ ? start < keepFree
                 : start + bytesPerLane + keepFree > laneBytes())
      break;
    if (llvm::none_of(apart, [&](uint64_t a) { return a / bank == start / bank; }))
      if (auto b = alloc(bytesPerLane))
        return b;
    // Leave the rest of this bank unused.
    if (topDown_)
      lmemLow_ = start / bank * bank;
    else
      lmemUsed_ = (start / bank + 1) * bank;
  }
  lmemUsed_ = used;
  lmemLow_ = low;
  return alloc(bytesPerLane);
}

uint64_t CodegenContext::lmemFree() const {
  if (topDown_)
    return lmemLow_ / kLmemAlign * kLmemAlign;
  uint64_t start = alignUp(lmemUsed_);
  return start >= laneBytes() ? 0 : laneBytes() - start;
}

uint64_t CodegenContext::allocStart(uint64_t bytesPerLane,
                                    uint64_t gap) const {
  if (topDown_) {
    uint64_t low = gap ? (lmemLow_ - gap) / kLmemAlign * kLmemAlign : lmemLow_;
    return (low - bytesPerLane) / kLmemAlign * kLmemAlign;
  }
  uint64_t start = alignUp(lmemUsed_);
  return gap ? alignUp(start + gap) : start;
}

uint64_t CodegenContext::lmemBytes(std::array<int64_t, 4> s, DType t) const {
  return lmemBytesPerLane(s[0], s[1], s[2], s[3], t, 0, lanes());
}

bool CodegenContext::loadWaitsForDeferred(const LBuf &dst,
                                          const Operand &from) const {
  // A load may pass the held-back stores when it neither reads what they
  // write nor overwrites what they read.
  if (deferred_.empty())
    return false;
  return from.space != Space::DDR ||
         overlapsDeferred(dst.addr, dst.addr + dst.bytes) ||
         llvm::any_of(deferred_, [&](const Deferred &d) {
           return ddrOverlap(from, d.inst.dst);
         });
}

uint32_t CodegenContext::deferredTiuWait() const {
  uint32_t w = UINT32_MAX;
  for (const Deferred &d : deferred_)
    w = std::min(w, d.inst.wait_id);
  return w;
}

Operand lmemChannels(Operand o, uint32_t c0, uint32_t n, uint32_t lanes) {
  const uint32_t c = c0 + o.start_lane;
  o.addr += uint64_t(c / lanes) * uint64_t(o.stride[1]) * dtypeSize(o.dtype);
  o.start_lane = uint16_t(c % lanes);
  o.shape[1] = n;
  return o;
}

/// Indices [c0, c1) of dim `d` (channels or rows) of a load's LMEM
/// destination or DDR source.
static Operand dimRange(Operand o, int d, uint32_t c0, uint32_t c1,
                        uint32_t lanes) {
  if (o.space == Space::LMEM && d == 1)
    return lmemChannels(o, c0, c1 - c0, lanes);
  const int64_t es = int64_t(dtypeSize(o.dtype));
  o.addr = uint64_t(int64_t(o.addr) + int64_t(c0) * o.stride[d] * es);
  o.shape[d] = c1 - c0;
  return o;
}

uint32_t CodegenContext::load(LBuf &dst, const Operand &to,
                              const Operand &from) {
  pumpPrefetch();
  dropAliases(to, false);
  // A weight tile prefetched into the reserved LMEM is read from there: the
  // TIU instructions reading `to` read it at the prefetch's address.
  if (PrefetchLoad *p = prefetched(to, from)) {
    p->used = true;
    Extent e;
    (void)operandExtent(to, target_, e);
    aliases_.push_back({uint64_t(e.lo), uint64_t(e.hi),
                        int64_t(p->to.addr) - int64_t(to.addr), p->gdma, to,
                        p->to});
    return p->gdma;
  }
  // A tensor stored from LMEM, its bytes still there, is copied within LMEM
  // rather than read back from DDR.
  if (std::optional<ForwardCopy> copy = forwardFor(to, from)) {
    // Held-back stores of those bytes go now all the same: their buffer
    // is free once they are done, and they would otherwise wait until
    // its next writer needs them.
    if (loadWaitsForDeferred(dst, from))
      flushStores();
    if (copy->moves.empty()) {
      // In place: readers wait for the GDMA that wrote the bytes, if one
      // did (TIU instructions did before, in order); writers for the store
      // reading them since.
      const uint32_t last = part(dst.addr, dst.bytes).gdma;
      const bool touchedNow = llvm::any_of(touched_, [&](const Region &r) {
        return r.lo < dst.addr + dst.bytes && dst.addr < r.hi && r.gdma > last;
      });
      const auto &gdma = builder_.gdmaStream();
      const bool stored = last && last <= gdma.size() &&
                          gdma[last - 1].id == last &&
                          gdma[last - 1].dst.space == Space::DDR;
      if (stored && !touchedNow) {
        dst.gdma = dst.storeId = last;
        dst.writtenBy = copy->gdma;
        touch(dst);
        return 0;
      }
    } else {
      uint32_t id = 0;
      for (const auto &[into, of] : copy->moves)
        id = emitGdma(makeDmaMove(into, of), std::max(dst.tiu, copy->tiu));
      dst.gdma = id;
      touch(dst);
      LBuf src = part(copy->lo, copy->hi - copy->lo);
      src.gdma = id;
      touch(src);
      // This op's buffers over those bytes, allocated before the copy, do
      // not know it reads them: their writers wait for it (tiu).
      forwardReads_.push_back({copy->lo, copy->hi, 0, id});
      return id;
    }
  }
  if (loadWaitsForDeferred(dst, from)) {
    // A load of which only some channels (or rows) were written by the
    // held-back stores (the previous op's last output tiles) loads the
    // others first: they move while that op's last tile computes, and only
    // the rest waits for its stores.
    const bool splittable =
        from.space == Space::DDR && to.space == Space::LMEM &&
        std::equal(to.shape, to.shape + 4, from.shape) &&
        !overlapsDeferred(dst.addr, dst.addr + dst.bytes);
    for (int d : {1, 2}) {
      const uint32_t C = from.shape[d];
      if (!splittable || C < 2)
        continue;
      auto clear = [&](uint32_t c0, uint32_t c1) {
        return !loadWaitsForDeferred(dst, dimRange(from, d, c0, c1, lanes()));
      };
      // The longest prefix and suffix clear of them.
      uint32_t lo = 0, hi = C;
      while (lo < hi) {
        uint32_t mid = (lo + hi + 1) / 2;
        if (clear(0, mid))
          lo = mid;
        else
          hi = mid - 1;
      }
      // Channel cuts at whole lane slots keep each part's start lane that
      // of the tile (the lane every channel's data is read from).
      const uint32_t L = d == 1 ? lanes() : 1;
      const uint32_t pre = lo / L * L;
      lo = pre, hi = C;
      while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (clear(mid, C))
          hi = mid;
        else
          lo = mid + 1;
      }
      const uint32_t suf = std::max(std::min(C, (lo + L - 1) / L * L), pre);
      // Worth a request of its own only when the early part moves at
      // least what the DDR moves during one request's latency.
      const uint64_t early = uint64_t(from.numElements()) / C * (pre + C - suf) *
                             dtypeSize(from.dtype);
      if ((pre == 0 && suf == C) ||
          double(early) < target_.ddr_latency_cycles * target_.ddr_bytes_per_cycle)
        continue;
      auto part = [&](uint32_t c0, uint32_t c1) {
        return emitGdma(makeDmaMove(dimRange(to, d, c0, c1, lanes()),
                                         dimRange(from, d, c0, c1, lanes())),
                             dst.tiu);
      };
      uint32_t id = 0;
      if (pre > 0)
        id = part(0, pre);
      if (suf < C && suf > pre)
        id = part(suf, C);
      if (suf > pre) {
        flushStores();
        id = part(pre, suf);
      }
      dst.gdma = id;
      touch(dst);
      return id;
    }
    flushStores();
  }
  uint32_t id = emitGdma(makeDmaMove(to, from), dst.tiu);
  dst.gdma = id;
  touch(dst);
  return id;
}

uint32_t CodegenContext::moveLocal(LBuf &dst, const Operand &to, LBuf &src,
                                   const Operand &from) {
  dropAliases(from, true);
  dropAliases(to, false);
  if (overlapsDeferred(dst.addr, dst.addr + dst.bytes))
    flushStores();
  uint32_t id = emitGdma(makeDmaMove(to, from), std::max(dst.tiu, src.tiu));
  dst.gdma = src.gdma = id;
  touch(dst);
  touch(src);
  return id;
}

uint32_t CodegenContext::gatherLocal(LBuf &dst, const Operand &to,
                                     const Operand &table,
                                     const Operand &index, int axis) {
  dropAliases(to, false);
  if (overlapsDeferred(dst.addr, dst.addr + dst.bytes) ||
      llvm::any_of(deferred_, [&](const Deferred &d) {
        return ddrOverlap(table, d.inst.dst) || ddrOverlap(index, d.inst.dst);
      }))
    flushStores();
  uint32_t id =
      emitGdma(makeDmaGather(to, table, index, axis), dst.tiu);
  dst.gdma = id;
  touch(dst);
  return id;
}

uint32_t CodegenContext::fillLocal(LBuf &dst, const Operand &to,
                                   double value) {
  dropAliases(to, false);
  if (overlapsDeferred(dst.addr, dst.addr + dst.bytes))
    flushStores();
  uint32_t id = emitGdma(makeDmaFill(to, value), dst.tiu);
  dst.gdma = id;
  touch(dst);
  return id;
}

uint32_t CodegenContext::store(const Operand &to, LBuf &src,
                               const Operand &from) {
  pumpPrefetch();
  dropAliases(from, true);
  flushStores();
  uint32_t id = emitGdma(makeDmaMove(to, from), src.tiu);
  src.writtenBy = src.storeId && src.gdma == src.storeId ? src.writtenBy
                                                         : src.gdma;
  Extent e;
  if (to.space == Space::DDR && from.space == Space::LMEM &&
      operandExtent(from, target_, e).ok())
    forwards_.push_back(
        {to, from, uint64_t(e.lo), uint64_t(e.hi), src.tiu, src.writtenBy});
  src.gdma = src.storeId = id;
  touch(src);
  storeRanges_.push_back({id, {src.addr, src.addr + src.bytes, 0, 0}});
  return id;
}

/// Whether the per-lane bytes `inst` writes may overlap [lo, hi): its
/// destination's span from its address over every dim (all channels in
/// each lane, an overestimate).
static bool mayWrite(const Instruction &inst, uint64_t lo, uint64_t hi) {
  const Operand &d = inst.dst;
  if (!d.valid() || d.space != Space::LMEM)
    return false;
  int64_t last = 0;
  for (int k = 0; k < 4; ++k) {
    if (d.stride[k] < 0)
      return true;
    last += int64_t(d.shape[k] ? d.shape[k] - 1 : 0) * d.stride[k];
  }
  uint64_t end = d.addr + uint64_t(last + 1) * dtypeSize(d.dtype);
  return d.addr < hi && lo < end;
}

void CodegenContext::dropAliases(const Operand &o, bool materialize) {
  if (aliases_.empty() || o.space != Space::LMEM)
    return;
  Extent e;
  if (!operandExtent(o, target_, e).ok())
    return;
  std::vector<Alias> kept, dropped;
  for (Alias &a : aliases_)
    (uint64_t(e.hi) <= a.lo || a.hi <= uint64_t(e.lo) ? kept : dropped)
        .push_back(a);
  aliases_ = std::move(kept);
  for (Alias &a : dropped)
    if (materialize) {
      LBuf dst = part(a.lo, a.hi - a.lo);
      LBuf src = part(uint64_t(int64_t(a.lo) + a.delta), a.hi - a.lo);
      moveLocal(dst, a.to, src, a.at);
    }
}

void CodegenContext::readThroughAliases(Operand &o, uint32_t &wait) {
  if (aliases_.empty() || o.space != Space::LMEM)
    return;
  Extent e;
  if (!operandExtent(o, target_, e).ok())
    return;
  const uint64_t lo = uint64_t(e.lo), hi = uint64_t(e.hi);
  SmallVector<const Alias *, 4> over;
  for (const Alias &a : aliases_)
    if (lo < a.hi && a.lo < hi)
      over.push_back(&a);
  if (over.empty())
    return;
  llvm::sort(over, [](const Alias *a, const Alias *b) { return a->lo < b->lo; });
  uint64_t at = lo;
  bool whole = true;
  for (const Alias *a : over) {
    whole &= a->lo <= at && a->delta == over.front()->delta;
    at = std::max(at, a->hi);
  }
  if (whole && at >= hi) {
    uint32_t id = 0;
    for (const Alias *a : over)
      id = std::max(id, a->gdma);
    wait = std::max(wait, id);
    o.addr = uint64_t(int64_t(o.addr) + over.front()->delta);
    aliasReads_.push_back(part(uint64_t(int64_t(lo) + over.front()->delta), hi - lo));
    return;
  }
  const size_t before = builder_.gdmaStream().size();
  dropAliases(o, true);
  if (builder_.gdmaStream().size() > before)
    wait = std::max(wait, builder_.lastGdmaId());
}

uint32_t CodegenContext::tiu(const Instruction &original,
                             ArrayRef<LBuf *> bufs) {
  uint32_t wait = 0;
  // Sources the prefetch holds are read where it put them.
  Instruction inst = original;
  // A destination over aliased bytes gets them moved into place first
  // (it may write only part of them), after which it writes.
  const size_t moves = builder_.gdmaStream().size();
  dropAliases(inst.dst, true);
  if (builder_.gdmaStream().size() > moves)
    wait = builder_.lastGdmaId();
  for (Operand &src : inst.src)
    readThroughAliases(src, wait);
  for (LBuf *b : bufs) {
    // Held-back stores reading this buffer's old data are emitted now;
    // those emitted since it was allocated are waited for.
    uint64_t lo = b->addr, hi = b->addr + b->bytes;
    if (overlapsDeferred(lo, hi))
      flushStores();
    if (llvm::any_of(flushed_,
                     [&](auto r) { return lo < r.second && r.first < hi; }))
      for (uint64_t g = lo / kLmemAlign; g * kLmemAlign < hi; ++g)
        b->gdma = std::max(b->gdma, granGdma_[g]);
    const bool stored = b->storeId && b->gdma == b->storeId;
    wait = std::max(wait, stored && !mayWrite(inst, lo, hi) ? b->writtenBy
                                                             : b->gdma);
  }
  for (const Region &r : forwardReads_)
    if (mayWrite(inst, r.lo, r.hi))
      wait = std::max(wait, r.gdma);
  uint32_t id = builder_.tiu(inst, wait);
  llvm::erase_if(forwards_, [&](const Forward &f) {
    return mayWrite(inst, f.lo, f.hi);
  });
  for (LBuf *b : bufs) {
    b->tiu = id;
    touch(*b);
  }
  for (LBuf &r : aliasReads_) {
    r.tiu = id;
    touch(r);
  }
  aliasReads_.clear();
  pumpPrefetch();
  return id;
}

uint32_t CodegenContext::gdmaDdr(const Instruction &inst) {
  flushStores();
  return emitGdma(inst, 0);
}

uint32_t CodegenContext::emitGdma(const Instruction &inst, uint32_t wait) {
  Extent e;
  if (inst.dst.space == Space::DDR)
    clobberForwards(inst.dst);
  else if (operandExtent(inst.dst, target_, e).ok())
    clobberForwards(uint64_t(e.lo), uint64_t(e.hi));
  else
    forwards_.clear();
  return builder_.gdma(inst, wait);
}

void CodegenContext::clobberForwards(uint64_t lo, uint64_t hi) {
  llvm::erase_if(forwards_, [&](const Forward &f) {
    return lo < f.hi && f.lo < hi;
  });
}

void CodegenContext::clobberForwards(const Operand &ddr) {
  llvm::erase_if(forwards_,
                 [&](const Forward &f) { return ddrOverlap(ddr, f.ddr); });
}

std::optional<CodegenContext::ForwardCopy>
CodegenContext::forwardFor(const Operand &to, const Operand &from) const {
  if (from.space != Space::DDR || to.space != Space::LMEM)
    return std::nullopt;
  Extent te;
  if (!operandExtent(to, target_, te).ok())
    return std::nullopt;
  const uint64_t es = dtypeSize(from.dtype);
  auto same = [](const Operand &a, const Operand &b, int from) {
    for (int d = from; d < 4; ++d)
      if (a.shape[d] != b.shape[d] || a.stride[d] != b.stride[d])
        return false;
    return a.dtype == b.dtype;
  };
  for (const Forward &f : llvm::reverse(forwards_)) {
    ForwardCopy c;
    c.tiu = f.tiu;
    c.gdma = f.gdma;
    c.lo = f.lo, c.hi = f.hi;
    const bool sameView = f.ddr.addr == from.addr && same(f.ddr, from, 0) &&
                          same(f.lmem, to, 0) &&
                          f.lmem.start_lane == to.start_lane;
    // Loaded where it was stored from, in the same layout: no copy.
    if (sameView && f.lmem.addr == to.addr)
      return c;
    // Stored from LMEM apart from `to`.
    if (uint64_t(te.lo) < f.hi && f.lo < uint64_t(te.hi))
      continue;
    // The same view in the same layout: one copy.
    if (sameView) {
      c.moves.push_back({to, f.lmem});
      return c;
    }
    // Copies across lanes take tensors of one slot of the lanes each (the
    // bmodel verifier tells a part of one at another start lane from a
    // misplaced read only then).
    auto oneSlot = [&](const Operand &o) {
      return o.start_lane + o.shape[1] <= lanes();
    };
    if (!oneSlot(f.lmem) || !oneSlot(to))
      continue;
    // Each image of the load a run of the stored image's channels (a
    // reshape of channels into images): one copy per image, across lanes.
    const uint64_t cstride = uint64_t(f.ddr.stride[1]) * es;
    if (f.ddr.shape[0] == 1 && f.lmem.shape[0] == 1 && same(f.ddr, from, 2) &&
        f.ddr.stride[1] == from.stride[1] && cstride) {
      for (uint32_t n = 0; n < from.shape[0]; ++n) {
        const int64_t off = int64_t(from.addr) +
                            int64_t(n) * from.stride[0] * int64_t(es) -
                            int64_t(f.ddr.addr);
        if (off < 0 || uint64_t(off) % cstride ||
            uint64_t(off) / cstride + from.shape[1] > f.ddr.shape[1])
          break;
        const uint32_t c0 = uint32_t(uint64_t(off) / cstride);
        c.moves.push_back({dimRange(to, 0, n, n + 1, lanes()),
                           lmemChannels(f.lmem, c0, from.shape[1], lanes())});
      }
      if (c.moves.size() == from.shape[0])
        return c;
    }
    c.moves.clear();
    // Each image of the store a run of the load's channels (images
    // reshaped into channels): one copy per stored image, across lanes.
    if (from.shape[0] != 1 || !same(f.ddr, from, 2) ||
        f.ddr.stride[1] != from.stride[1] || f.ddr.addr != from.addr ||
        f.ddr.stride[0] != int64_t(f.ddr.shape[1]) * f.ddr.stride[1] ||
        f.ddr.shape[0] * f.ddr.shape[1] != from.shape[1])
      continue;
    for (uint32_t n = 0; n < f.ddr.shape[0]; ++n) {
      Operand src = dimRange(f.lmem, 0, n, n + 1, lanes());
      Operand dst = lmemChannels(to, n * f.ddr.shape[1], f.ddr.shape[1], lanes());
      c.moves.push_back({dst, src});
    }
    return c;
  }
  return std::nullopt;
}

namespace {
struct Dim {
  int64_t size, dst, src;
};

/// Drops unit dims and merges dims that are contiguous in both views.
SmallVector<Dim> coalesce(ArrayRef<Dim> dims) {
  SmallVector<Dim> out;
  for (const Dim &d : dims) {
    if (d.size == 1)
      continue;
    if (!out.empty() && out.back().dst == d.dst * d.size &&
        out.back().src == d.src * d.size) {
      out.back().size *= d.size;
      out.back().dst = d.dst;
      out.back().src = d.src;
      continue;
    }
    out.push_back(d);
  }
  return out;
}
} // namespace

/// Emits one GDMA per 4-D piece of `dims`; `src` < 0 means a fill.
static void emitPieces(CodegenContext &ctx, ArrayRef<Dim> dims, uint64_t dst,
                       int64_t src, DType t, double value) {
  bool small = dims.size() <= 4 &&
               llvm::all_of(dims, [](const Dim &d) {
                 return d.size <= int64_t(kMaxDim);
               });
  int64_t es = dtypeSize(t);
  if (small) {
    std::array<int64_t, 4> shape{1, 1, 1, 1}, ds{0, 0, 0, 1}, ss{0, 0, 0, 1},
        sshape{1, 1, 1, 1};
    size_t pad = 4 - dims.size();
    for (size_t i = 0; i < dims.size(); ++i) {
      shape[pad + i] = dims[i].size;
      ds[pad + i] = dims[i].dst;
      ss[pad + i] = dims[i].src;
      sshape[pad + i] = dims[i].src == 0 ? 1 : dims[i].size;
    }
    Operand d = ddrOperand(dst, shape, ds, t);
    if (src < 0)
      ctx.gdmaDdr(makeDmaFill(d, value));
    else
      ctx.gdmaDdr(makeDmaMove(d, ddrOperand(uint64_t(src), sshape, ss, t)));
    return;
  }
  const Dim &d0 = dims.front();
  if (d0.size > int64_t(kMaxDim)) {
    for (int64_t b = 0; b < d0.size; b += kMaxDim) {
      SmallVector<Dim> rest(dims.begin(), dims.end());
      rest.front().size = std::min<int64_t>(kMaxDim, d0.size - b);
      emitPieces(ctx, rest, dst + b * d0.dst * es,
                 src < 0 ? src : src + b * d0.src * es, t, value);
    }
    return;
  }
  for (int64_t i = 0; i < d0.size; ++i)
    emitPieces(ctx, dims.drop_front(), dst + i * d0.dst * es,
               src < 0 ? src : src + i * d0.src * es, t, value);
}

LogicalResult CodegenContext::copy(const DdrView &dst, const DdrView &src) {
  if (dst.shape.size() != src.shape.size())
    return error() << "internal: copy between views of different rank";
  SmallVector<Dim> dims;
  for (size_t i = 0; i < dst.shape.size(); ++i) {
    if (src.shape[i] != dst.shape[i] && src.shape[i] != 1)
      return error() << "internal: copy source does not broadcast";
    dims.push_back({dst.shape[i], dst.strides[i],
                    src.shape[i] == 1 ? 0 : src.strides[i]});
  }
  if (dst.numElements() == 0)
    return success();
  emitPieces(*this, coalesce(dims), dst.addr, int64_t(src.addr), dst.dtype,
             0.0);
  return success();
}

LogicalResult CodegenContext::fill(const DdrView &dst, double value) {
  SmallVector<Dim> dims;
  for (size_t i = 0; i < dst.shape.size(); ++i)
    dims.push_back({dst.shape[i], dst.strides[i], 0});
  if (dst.numElements() == 0)
    return success();
  emitPieces(*this, coalesce(dims), dst.addr, -1, dst.dtype, value);
  return success();
}

FailureOr<std::vector<float>> CodegenContext::constant(Value v) {
  auto w = v.getDefiningOp<top::WeightOp>();
  if (!w)
    return error() << "needs a constant (top.Weight) operand here";
  auto data = w.read();
  if (failed(data))
    return failure();
  return **data;
}

FailureOr<std::vector<int64_t>> CodegenContext::intConstant(Value v) {
  auto w = v.getDefiningOp<top::WeightOp>();
  if (!w)
    return error() << "needs a constant (top.Weight) operand here";
  auto data = w.readTyped();
  if (failed(data))
    return failure();
  const NpyArray &a = **data;
  std::vector<int64_t> out(a.numElements());
  auto each = [&](auto tag) {
    using T = decltype(tag);
    for (size_t i = 0; i < out.size(); ++i) {
      T x;
      std::memcpy(&x, a.data.data() + i * sizeof(T), sizeof(T));
      out[i] = int64_t(x);
    }
  };
  if (a.descr == "<i4")
    each(int32_t());
  else if (a.descr == "<i8")
    each(int64_t());
  else if (a.descr == "|i1")
    each(int8_t());
  else if (a.descr == "|u1")
    each(uint8_t());
  else
    return error() << "needs an integer constant, got numpy dtype '" << a.descr
                   << "'";
  return out;
}

//===----------------------------------------------------------------------===//
// Tiling and streaming
//===----------------------------------------------------------------------===//

static std::array<int64_t, 4> denseStrides4(std::array<int64_t, 4> s) {
  return {s[1] * s[2] * s[3], s[2] * s[3], s[3], 1};
}

SmallVector<Tile> tile4D(std::array<int64_t, 4> s, int64_t maxPerLane,
                         uint32_t lanes) {
  maxPerLane = std::max<int64_t>(maxPerLane, 1);
  int64_t tw = std::min(s[3], maxPerLane);
  int64_t th = std::min(s[2], std::max<int64_t>(1, maxPerLane / tw));
  if (tw < s[3])
    th = 1;
  int64_t tn = std::min(s[0], std::max<int64_t>(1, maxPerLane / (tw * th)));
  if (th < s[2])
    tn = 1;
  int64_t per = 1;
  if (tn == s[0] && th == s[2] && tw == s[3])
    per = std::max<int64_t>(1, maxPerLane / (tn * th * tw));
  int64_t tc = std::min(s[1], per * int64_t(lanes));
  std::array<int64_t, 4> t{tn, tc, th, tw};
  SmallVector<Tile> tiles;
  for (int64_t n = 0; n < s[0]; n += tn)
    for (int64_t c = 0; c < s[1]; c += tc)
      for (int64_t h = 0; h < s[2]; h += th)
        for (int64_t w = 0; w < s[3]; w += tw) {
          Tile x;
          x.off = {n, c, h, w};
          std::array<int64_t, 4> o = x.off;
          for (int d = 0; d < 4; ++d)
            x.size[d] = std::min(t[d], s[d] - o[d]);
          tiles.push_back(x);
        }
  return tiles;
}

LogicalResult streamElementwise(CodegenContext &ctx,
                                std::array<int64_t, 4> shape, uint64_t outAddr,
                                std::array<int64_t, 4> outStrides,
                                ArrayRef<StreamInput> ins, DType dtype,
                                unsigned numTemps,
                                function_ref<void(StreamTile &)> compute,
                                const StreamOptions &opts) {
  if (llvm::any_of(shape, [](int64_t d) { return d == 0; }))
    return success();
  const int64_t es = dtypeSize(dtype);
  auto inType = [&](size_t k) {
    return k < opts.inTypes.size() && opts.inTypes[k] != DType::Invalid
               ? opts.inTypes[k]
               : dtype;
  };
  const DType tempType =
      opts.tempType == DType::Invalid ? dtype : opts.tempType;
  ctx.freeAll();
  SmallVector<LBuf> consts;
  for (const StreamConst &c : opts.consts) {
    auto b = ctx.alloc(ctx.lmemBytes(c.shape, c.dtype));
    if (!b)
      return ctx.error() << "local memory exhausted while tiling";
    ctx.load(*b, lmemTensor(b->addr, c.shape[0], c.shape[1], c.shape[2],
                            c.shape[3], c.dtype),
             ddrOperand(c.addr, c.shape, denseStrides4(c.shape), c.dtype));
    consts.push_back(*b);
  }
  // Double-buffered output and inputs; temporaries are TIU-only, so one copy.
  int64_t bytesPerElem = 2 * es + int64_t(numTemps) * dtypeSize(tempType);
  for (size_t k = 0; k < ins.size(); ++k)
    bytesPerElem += 2 * dtypeSize(inType(k));
  int64_t nbuf = 2 + 2 * int64_t(ins.size()) + numTemps;
  // Leave room for alignment padding between buffers.
  int64_t perLane =
      (int64_t(ctx.lmemFree()) - 64 * nbuf) / std::max<int64_t>(bytesPerElem, 1);
  if (perLane < 1)
    return ctx.error() << "local memory too small for an elementwise tile";
  SmallVector<Tile> tiles = tile4D(shape, perLane, ctx.lanes());

  auto inTile = [&](const StreamInput &in, const Tile &t, uint64_t &addr,
                    std::array<int64_t, 4> &size) {
    addr = in.addr;
    int64_t ies = dtypeSize(inType(&in - ins.data()));
    for (int d = 0; d < 4; ++d) {
      bool bcast = in.shape[d] == 1;
      size[d] = bcast ? 1 : t.size[d];
      if (!bcast)
        addr += t.off[d] * in.strides[d] * ies;
    }
  };
  // An input whose tile never changes is loaded once.
  SmallVector<bool> invariant;
  for (const StreamInput &in : ins) {
    uint64_t a0, a;
    std::array<int64_t, 4> s0, s;
    inTile(in, tiles.front(), a0, s0);
    bool same = true;
    for (const Tile &t : tiles) {
      inTile(in, t, a, s);
      same &= a == a0 && s == s0;
    }
    invariant.push_back(same);
  }

  auto allocFor = [&](std::array<int64_t, 4> s, DType t) {
    return ctx.alloc(ctx.lmemBytes(s, t));
  };
  std::array<int64_t, 4> full = tiles.front().size;
  SmallVector<std::array<LBuf, 2>> inBufs(ins.size());
  for (size_t k = 0; k < ins.size(); ++k) {
    uint64_t a;
    std::array<int64_t, 4> s;
    inTile(ins[k], tiles.front(), a, s);
    for (int slot = 0; slot < (invariant[k] ? 1 : 2); ++slot) {
      auto b = allocFor(s, inType(k));
      if (!b)
        return ctx.error() << "local memory exhausted while tiling";
      inBufs[k][slot] = *b;
    }
  }
  std::array<LBuf, 2> outBufs;
  SmallVector<LBuf> temps;
  for (int slot = 0; slot < 2; ++slot) {
    auto b = allocFor(full, dtype);
    if (!b)
      return ctx.error() << "local memory exhausted while tiling";
    outBufs[slot] = *b;
  }
  for (unsigned k = 0; k < numTemps; ++k) {
    auto b = allocFor(full, tempType);
    if (!b)
      return ctx.error() << "local memory exhausted while tiling";
    temps.push_back(*b);
  }

  auto lmem = [&](const LBuf &b, std::array<int64_t, 4> s, DType t) {
    return lmemTensor(b.addr, s[0], s[1], s[2], s[3], t);
  };
  auto loadTile = [&](size_t i) {
    for (size_t k = 0; k < ins.size(); ++k) {
      if (invariant[k] && i > 0)
        continue;
      uint64_t a;
      std::array<int64_t, 4> s;
      inTile(ins[k], tiles[i], a, s);
      LBuf &b = inBufs[k][invariant[k] ? 0 : i % 2];
      ctx.load(b, lmem(b, s, inType(k)),
               ddrOperand(a, s, ins[k].strides, inType(k)));
    }
  };
  loadTile(0);
  for (size_t i = 0; i < tiles.size(); ++i) {
    if (i + 1 < tiles.size())
      loadTile(i + 1);
    const Tile &t = tiles[i];
    StreamTile st;
    st.ctx = &ctx;
    LBuf &ob = outBufs[i % 2];
    st.out = lmem(ob, t.size, dtype);
    st.bufs.push_back(&ob);
    for (size_t k = 0; k < ins.size(); ++k) {
      uint64_t a;
      std::array<int64_t, 4> s;
      inTile(ins[k], t, a, s);
      LBuf &b = inBufs[k][invariant[k] ? 0 : i % 2];
      st.ins.push_back(lmem(b, s, inType(k)));
      st.bufs.push_back(&b);
    }
    for (LBuf &b : temps) {
      st.temps.push_back(lmem(b, t.size, tempType));
      st.bufs.push_back(&b);
    }
    for (size_t k = 0; k < consts.size(); ++k) {
      const StreamConst &c = opts.consts[k];
      st.consts.push_back(lmem(consts[k], c.shape, c.dtype));
      st.bufs.push_back(&consts[k]);
    }
    compute(st);
    uint64_t oa = outAddr;
    for (int d = 0; d < 4; ++d)
      oa += t.off[d] * outStrides[d] * es;
    ctx.store(ddrOperand(oa, t.size, outStrides, dtype), ob, st.out);
  }
  return success();
}

LogicalResult streamFlat(CodegenContext &ctx, int64_t elements,
                         uint64_t outAddr, ArrayRef<uint64_t> inAddrs,
                         DType dtype, unsigned numTemps,
                         function_ref<void(StreamTile &)> compute,
                         const StreamOptions &opts) {
  const int64_t lanes = ctx.lanes(), es = dtypeSize(dtype);
  auto run = [&](int64_t offset, int64_t rows, int64_t width) {
    std::array<int64_t, 4> shape{1, rows, 1, width},
        strides{rows * width, width, width, 1};
    SmallVector<StreamInput> ins;
    for (size_t k = 0; k < inAddrs.size(); ++k) {
      DType t = k < opts.inTypes.size() && opts.inTypes[k] != DType::Invalid
                    ? opts.inTypes[k]
                    : dtype;
      ins.push_back(
          {inAddrs[k] + uint64_t(offset * dtypeSize(t)), shape, strides});
    }
    return streamElementwise(ctx, shape, outAddr + uint64_t(offset * es),
                             strides, ins, dtype, numTemps, compute, opts);
  };
  if (elements < lanes)
    return run(0, elements, 1);
  int64_t width = elements / lanes, main = width * lanes;
  if (failed(run(0, lanes, width)))
    return failure();
  if (main < elements)
    return run(main, elements - main, 1);
  return success();
}

} // namespace backend
} // namespace tpuc
