//===- WeightPrefetch.cpp - Later ops' weights loaded early ---------------===//
#include "tpuc/Backend/WeightPrefetch.h"
#include "tpuc/Chip/CModel.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

using namespace mlir;
using namespace tpuc;
using namespace tpuc::backend;
using chip::Extent;
using chip::Instruction;
using chip::Operand;

/// Units looked ahead for a DDR-bound consumer.
static constexpr size_t kLookahead = 8;
/// A unit is DDR-bound when its GDMA time exceeds its TIU time by this.
static constexpr double kDdrBound = 1.1;
/// Units emitted before a plan's first host when it is timed.
static constexpr size_t kWarmup = 3;
/// Reserve sizes tried, in eighths of a lane.
static constexpr uint64_t kReserveEighths[] = {4, 3, 2, 1};
/// Reserve sizes tried for a network's whole weights, in eighths of a lane.
static constexpr uint64_t kResidentEighths[] = {1, 2, 4};
/// Emissions of a resident plan, each filling the idle time of the last.
static constexpr unsigned kResidentRuns = 4;

std::optional<double> WeightPrefetcher::cycles(CodegenContext &ctx) const {
  std::optional<chip::RunStats> stats = timed(ctx);
  return stats ? std::optional<double>(double(stats->total_cycles))
               : std::nullopt;
}

std::optional<chip::RunStats>
WeightPrefetcher::timed(CodegenContext &ctx) const {
  ctx.finish();
  chip::RunStats stats;
  if (!chip::CModel::time(target_, ctx.streams().tiuStream(),
                          ctx.streams().gdmaStream(), ddr_, stats)
           .ok())
    return std::nullopt;
  return stats;
}

double WeightPrefetcher::held(const Instruction &inst) const {
  return double(chip::instructionCycles(inst, target_) -
                chip::gdmaOverlappedCycles(inst, target_));
}

const WeightPrefetcher::DryRun *WeightPrefetcher::dryRun(size_t i,
                                                         uint64_t reserve) {
  auto key = std::make_pair(i, reserve);
  auto it = runs_.find(key);
  if (it != runs_.end())
    return it->second ? &*it->second : nullptr;
  std::optional<DryRun> run;
  CodegenContext ctx(target_, ddr_);
  ctx.beginPrefetch(reserve, {});
  // A unit that does not fit the smaller LMEM reports an error: not this
  // network's, so it is not shown.
  ScopedDiagnosticHandler quiet(units_[i]->getContext(),
                                [](Diagnostic &) { return success(); });
  std::optional<chip::RunStats> stats;
  if (succeeded(emit_(ctx, units_[i])) && (stats = timed(ctx))) {
    // Some codegen places buffers against the whole lane: a unit touching
    // the reserve would clobber the prefetched tiles.
    const uint64_t top = target_.lmem_bytes_per_lane - reserve;
    auto inReserve = [&](const Operand &o) {
      Extent e;
      return o.space == chip::Space::LMEM &&
             (!operandExtent(o, target_, e).ok() || uint64_t(e.hi) > top);
    };
    auto touches = [&](const std::vector<Instruction> &stream) {
      return llvm::any_of(stream, [&](const Instruction &inst) {
        return inReserve(inst.dst) || llvm::any_of(inst.src, inReserve);
      });
    };
    if (reserve && (touches(ctx.streams().tiuStream()) ||
                    touches(ctx.streams().gdmaStream()))) {
      runs_.emplace(key, std::nullopt);
      return nullptr;
    }
    DryRun r;
    r.cycles = double(stats->total_cycles);
    r.tiu = double(stats->tiu_busy_cycles);
    r.gdma = double(stats->gdma_busy_cycles);
    // The GDMA's idle time after each request: the engine is free from the
    // request's start plus the cycles it holds until the next one starts.
    const auto &gdma = ctx.streams().gdmaStream();
    std::vector<uint64_t> start(gdma.size());
    for (const chip::InstRecord &rec : stats->records)
      if (rec.engine == chip::Engine::GDMA)
        start[rec.id - 1] = rec.start;
    r.gdmaGaps.assign(gdma.size(), 0.0);
    for (size_t k = 0; k + 1 < gdma.size(); ++k)
      r.gdmaGaps[k] = std::max(
          0.0, double(start[k + 1]) - double(start[k]) - held(gdma[k]));
    for (const Instruction &inst : gdma) {
      const Operand &src = inst.src[0];
      Extent e;
      if (inst.op == chip::Opcode::DmaMove && src.space == chip::Space::DDR &&
          inst.dst.space == chip::Space::LMEM &&
          operandExtent(src, target_, e).ok() &&
          uint64_t(e.lo) >= weights_.first && uint64_t(e.hi) <= weights_.second)
        r.weightLoads.push_back({src, inst.dst});
    }
    run = std::move(r);
  }
  it = runs_.emplace(key, std::move(run)).first;
  return it->second ? &*it->second : nullptr;
}

bool WeightPrefetcher::place(
    size_t unit,
    llvm::ArrayRef<std::pair<chip::Operand, chip::Operand>> weightLoads,
    uint64_t &at, std::vector<PrefetchLoad> &loads) const {
  for (const auto &[from, to] : weightLoads) {
    Extent e;
    if (!operandExtent(to, target_, e).ok())
      return false;
    const uint64_t bytes = (uint64_t(e.hi - e.lo) + 63) / 64 * 64;
    if (at + bytes > target_.lmem_bytes_per_lane)
      return false;
    PrefetchLoad l;
    l.from = from;
    l.to = to;
    l.to.addr = to.addr - uint64_t(e.lo) + at;
    l.unit = unit;
    at += bytes;
    loads.push_back(l);
  }
  return true;
}

std::vector<PrefetchLoad> WeightPrefetcher::tilesFor(size_t consumer,
                                                    const DryRun &cons,
                                                    uint64_t reserve) const {
  // The consumer's last weight tiles, as many as the reserve holds: it
  // streams the others from DDR back to back, its loads one step ahead of
  // its compute, and computes these at the end while the DDR already
  // serves the next op. (Its first tiles would leave the DDR idle while
  // they compute.)
  auto bytes = [&](const Operand &to) {
    Extent e;
    return operandExtent(to, target_, e).ok() ? uint64_t(e.hi - e.lo) : reserve + 1;
  };
  size_t first = cons.weightLoads.size();
  for (uint64_t used = 0; first > 0;) {
    uint64_t b = (bytes(cons.weightLoads[first - 1].second) + 63) / 64 * 64;
    if (used + b > reserve)
      break;
    used += b;
    --first;
  }
  std::vector<PrefetchLoad> loads;
  uint64_t at = target_.lmem_bytes_per_lane - reserve;
  (void)place(consumer, llvm::ArrayRef(cons.weightLoads).drop_front(first), at,
              loads);
  return loads;
}

std::optional<PrefetchPlan> WeightPrefetcher::residentPlan(uint64_t reserve) {
  PrefetchPlan p;
  p.reserve = reserve;
  p.resident = true;
  uint64_t at = target_.lmem_bytes_per_lane - reserve;
  for (size_t i = 0; i < units_.size(); ++i) {
    const DryRun *r = dryRun(i, reserve);
    if (!r || !place(i, r->weightLoads, at, p.loads))
      return std::nullopt;
    if (!r->weightLoads.empty())
      p.consumer = i;
  }
  if (p.loads.empty())
    return std::nullopt;
  return p;
}

std::optional<double> WeightPrefetcher::residentRun(PrefetchPlan &p) {
  CodegenContext ctx(target_, ddr_);
  ScopedDiagnosticHandler quiet(units_[0]->getContext(),
                                [](Diagnostic &) { return success(); });
  const PrefetchPlan *active = nullptr;
  // Each unit's last TIU instruction: its output stores follow it.
  std::vector<size_t> lastTiu;
  for (size_t i = 0; i < units_.size(); ++i) {
    const size_t first = ctx.streams().tiuStream().size();
    if (failed(step(ctx, i, active, &p, 0)))
      return std::nullopt;
    if (ctx.streams().tiuStream().size() > first)
      lastTiu.push_back(ctx.streams().tiuStream().size() - 1);
  }
  std::optional<chip::RunStats> stats = timed(ctx);
  if (!stats)
    return std::nullopt;
  // The GDMA's busy spans, the prefetch's parts left out (the next run
  // places them anew): each request holds the engine from its start.
  const auto &gdma = ctx.streams().gdmaStream();
  const auto &tiu = ctx.streams().tiuStream();
  std::vector<uint64_t> gStart(gdma.size()), tStart(tiu.size());
  for (const chip::InstRecord &rec : stats->records)
    (rec.engine == chip::Engine::GDMA ? gStart : tStart)[rec.id - 1] =
        rec.start;
  const uint64_t top = target_.lmem_bytes_per_lane - p.reserve;
  std::vector<std::pair<double, double>> busy;
  for (size_t k = 0; k < gdma.size(); ++k) {
    Extent e;
    if (gdma[k].dst.space == chip::Space::LMEM &&
        operandExtent(gdma[k].dst, target_, e).ok() && uint64_t(e.lo) >= top)
      continue;
    double lo = double(gStart[k]), hi = lo + held(gdma[k]);
    if (!busy.empty() && lo <= busy.back().second)
      busy.back().second = std::max(busy.back().second, hi);
    else
      busy.push_back({lo, hi});
  }
  // Busy cycles before time x.
  std::vector<double> before(busy.size() + 1, 0.0);
  for (size_t k = 0; k < busy.size(); ++k)
    before[k + 1] = before[k] + busy[k].second - busy[k].first;
  auto busyBefore = [&](double x) {
    size_t k = std::upper_bound(busy.begin(), busy.end(), x,
                                [](double v, const auto &b) { return v < b.first; }) -
               busy.begin();
    return k == 0 ? 0.0 : before[k - 1] + std::min(x, busy[k - 1].second) - busy[k - 1].first;
  };
  // The idle GDMA time from each TIU instruction's start to the next's.
  p.idle.assign(tiu.size(), 0.0);
  for (size_t t = 0; t < tiu.size(); ++t) {
    const double a = double(tStart[t]),
                 b = t + 1 < tiu.size() ? double(tStart[t + 1])
                                        : double(stats->total_cycles);
    p.idle[t] = std::max(0.0, (b - a) - (busyBefore(b) - busyBefore(a)));
  }
  // Parts issued after a unit's last TIU instruction would queue ahead of
  // its output stores, which the next unit waits for.
  for (size_t t : lastTiu)
    p.idle[t] = 0;
  return double(stats->total_cycles);
}

bool WeightPrefetcher::planResident() {
  if (weights_.second <= weights_.first)
    return false;
  // The smallest reserve that holds them: the units keep the most LMEM.
  std::optional<PrefetchPlan> p;
  for (uint64_t eighths : kResidentEighths)
    if ((p = residentPlan(target_.lmem_bytes_per_lane * eighths / 8 / 64 * 64)))
      break;
  std::optional<double> without = p ? networkCycles(false) : std::nullopt;
  if (!without)
    return false;
  // The first run issues nothing (no idle time known): each unit loads its
  // own weights. Each next run fills the idle time the one before left.
  std::optional<double> best;
  std::vector<double> bestIdle;
  for (unsigned run = 0; run < kResidentRuns; ++run) {
    std::vector<double> idle = p->idle;
    std::optional<double> cycles = residentRun(*p);
    if (!cycles)
      return false;
    if (run > 0 && (!best || *cycles < *best)) {
      best = cycles;
      bestIdle = std::move(idle);
    }
  }
  if (!best || *best >= *without)
    return false;
  p->idle = std::move(bestIdle);
  p->gain = *without - *best;
  accepted_[0] = std::move(*p);
  return true;
}

LogicalResult WeightPrefetcher::step(CodegenContext &ctx, size_t i,
                                     const PrefetchPlan *&active,
                                     const PrefetchPlan *extra,
                                     size_t extraFirst) {
  if (!active) {
    auto it = accepted_.find(i);
    if (it != accepted_.end())
      active = &it->second;
    else if (extra && i == extraFirst)
      active = extra;
    if (active) {
      ctx.beginPrefetch(active->reserve, active->loads);
      if (active->resident)
        ctx.setPrefetchIdle(active->idle);
    }
  }
  if (active)
    ctx.dropUnissuedPrefetch(i);
  // A resident plan's loads go into the idle time it measured.
  if (active && active->consumer != i) {
    const DryRun *r = active->resident ? nullptr : dryRun(i, active->reserve);
    ctx.setPrefetchGaps(r ? r->gdmaGaps : std::vector<double>());
  }
  if (failed(emit_(ctx, units_[i])))
    return failure();
  if (active && active->consumer == i) {
    ctx.endPrefetch();
    active = nullptr;
  }
  return success();
}

std::optional<double> WeightPrefetcher::prefixCycles(size_t last,
                                                     const PrefetchPlan *extra,
                                                     size_t extraFirst) {
  CodegenContext ctx(target_, ddr_);
  ScopedDiagnosticHandler quiet(units_[0]->getContext(),
                                [](Diagnostic &) { return success(); });
  // From a few units before the plan's first: far enough back for the
  // overlap of the ops around it, near enough for the cost to stay linear
  // in the network's size. A prefetch under way there starts with it.
  size_t from = extraFirst > kWarmup ? extraFirst - kWarmup : 0;
  for (const auto &[start, p] : accepted_)
    if (start < from && p.consumer >= from)
      from = start;
  const PrefetchPlan *active = nullptr;
  for (size_t i = from; i <= last; ++i)
    if (failed(step(ctx, i, active, extra, extraFirst)))
      return std::nullopt;
  return cycles(ctx);
}

void WeightPrefetcher::plan(size_t first) {
  if (weights_.second <= weights_.first)
    return;
  auto ddrBound = [](const DryRun *r) {
    return r && !r->weightLoads.empty() && r->gdma > kDdrBound * r->tiu;
  };
  const DryRun *head = dryRun(first, 0);
  if (!head)
    return;
  // A DDR-bound op has no DDR time to give but to the op right after it.
  const size_t lookahead = ddrBound(head) ? 1 : kLookahead;
  const uint64_t lane = target_.lmem_bytes_per_lane;
  std::optional<PrefetchPlan> best;
  size_t bestStart = first;
  for (size_t consumer = first + 1;
       consumer < units_.size() && consumer <= first + lookahead; ++consumer) {
    // A DDR-bound consumer gains from the idle DDR time of several ops
    // before it; any other from its first weight tiles arriving during
    // the op before it, which its TIU would otherwise wait for.
    const DryRun *alone = dryRun(consumer, 0);
    if (!alone || alone->weightLoads.empty())
      continue;
    const size_t firstStart =
        ddrBound(alone) ? first : std::max(first, consumer - 1);
    // The prefix up to the unit after the consumer, which the consumer's
    // smaller LMEM may slow down too.
    const size_t last = std::min(consumer + 1, units_.size() - 1);
    // Without a prefetch, over the same units as with one from `start`.
    std::map<size_t, std::optional<double>> bases;
    auto base = [&](size_t start) {
      auto it = bases.find(start);
      if (it == bases.end())
        it = bases.emplace(start, prefixCycles(last, nullptr, start)).first;
      return it->second;
    };
    for (uint64_t eighths : kReserveEighths) {
      PrefetchPlan p;
      p.consumer = consumer;
      p.reserve = lane * eighths / 8 / 64 * 64;
      const DryRun *cons = dryRun(consumer, p.reserve);
      if (!cons)
        continue;
      p.loads = tilesFor(consumer, *cons, p.reserve);
      if (p.loads.empty())
        continue;
      // Starting later holds the reserve over fewer ops (a sliced group
      // whose chunks no longer alternate between two halves of the LMEM
      // can lose more than its idle DDR time gains).
      for (size_t start = firstStart; start < consumer; ++start) {
        std::optional<double> with = prefixCycles(last, &p, start),
                              without = base(start);
        if (with && without && (!best || *without - *with > best->gain)) {
          best = p;
          best->gain = *without - *with;
          bestStart = start;
        }
      }
    }
  }
  // Taken when it starts here and saves more than a few requests' latency;
  // a later start is planned when its first op comes.
  if (best && bestStart == first &&
      best->gain >= 4.0 * target_.ddr_latency_cycles)
    accepted_[first] = std::move(*best);
}

std::optional<double> WeightPrefetcher::networkCycles(bool prefetch) {
  CodegenContext ctx(target_, ddr_);
  ScopedDiagnosticHandler quiet(units_.front()->getContext(),
                                [](Diagnostic &) { return success(); });
  const PrefetchPlan *active = nullptr;
  for (size_t i = 0; i < units_.size(); ++i) {
    if (prefetch && !active)
      plan(i);
    if (failed(prefetch ? step(ctx, i, active, nullptr, 0)
                        : emit_(ctx, units_[i])))
      return std::nullopt;
  }
  return cycles(ctx);
}

void WeightPrefetcher::planNetwork() {
  if (units_.empty() || planResident())
    return;
  std::optional<double> with = networkCycles(true);
  if (accepted_.empty())
    return;
  // Each plan was timed over a window of units; the whole network has the
  // last word (a plan can shift the overlap of the ops after its window).
  std::optional<double> without = networkCycles(false);
  if (!with || !without || *with >= *without)
    accepted_.clear();
}

LogicalResult WeightPrefetcher::emit(CodegenContext &ctx, size_t i) {
  return step(ctx, i, active_, nullptr, 0);
}
