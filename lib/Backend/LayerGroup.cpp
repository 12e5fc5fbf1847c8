//===- LayerGroup.cpp - Partition the network into layer groups -----------===//
//
// Each function's ops that can run LMEM-resident form chains of
// consecutive ops (an op that cannot join ends one). Each chain is split
// into runs by dynamic programming over the cost model: the least estimated
// cycles of its first j ops is, over the last run [i, j), that of its first
// i ops plus the run's (an op on its own, or a group planLayerGroup places,
// whole or in slices of rows). Runs of two or more ops become groups (a
// single op gains nothing over its own tiled codegen): their ops move into
// the region of a tpu.Group, which yields the values used after it and
// records the plan chosen (slices along N and H, chunk of rows). A run of
// a MatMul or Conv and the elementwise ops on its result may instead become
// a tile epilogue group (isTileEpilogue), costed as that op's own tiled
// code (with the residual tiles it loads) plus the epilogue's TIU work,
// which is how a matmul or conv too big for a group of whole tensors keeps
// its result out of DDR.
//
// Cost model. On its own an op streams its tiles, overlapping DDR traffic
// with compute: max(TIU cycles, DDR bytes / bandwidth) plus the latency of
// its first load and last store. A group saves the DDR round trips of its
// inner tensors but computes whole tensors: its GDMA loads every input and
// weight up front in order of first use, each op starts once its operands
// are in and the previous op is done, and stored results leave after their
// op. A group whose weights take long to load before the TIU can start (a
// large filter on a small chip) is slower than the ops' own pipelines and is
// not formed. A group sliced along N or H pipelines its slices
// (slicedCycles): the weights and the first slice's images and rows load
// up front, then each slice's loads overlap the previous slice's compute
// and its stores the next's; the TIU work of each op grows with the halo
// rows it recomputes (slices along N have none; results that carry their
// halos from slice to slice recompute none).
//
//===----------------------------------------------------------------------===//
#include "tpuc/Backend/CodegenInterface.h"
#include "tpuc/Backend/LayerGroup.h"
#include "tpuc/Backend/Passes.h"
#include "tpuc/Backend/Target.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <algorithm>
#include <cmath>

namespace tpuc {
namespace backend {
#define GEN_PASS_DEF_LAYERGROUP
#include "tpuc/Backend/Passes.h.inc"
} // namespace backend
} // namespace tpuc

using namespace mlir;
using namespace tpuc;
using namespace tpuc::backend;
using namespace tpuc::chip;

namespace {

uint64_t tensorBytes(Value v) {
  if (isNone(v) || !isa<ShapedType>(v.getType()))
    return 0;
  return uint64_t(numElements(getShape(v))) * dtypeSize(chipDType(v.getType()));
}

/// TIU cycles of `op` on whole tensors: MACs (or result elements) over the
/// lanes its channels occupy (in a group, `held` > 0: the channels of the
/// layout the group holds its result in, spread over idle lanes as `split`
/// says) and the dtype's execution units.
double tiuCycles(Operation *op, const Target &t, int64_t held = 0,
                 LaneSplit split = {}) {
  auto cg = cast<CodegenInterface>(op);
  Value res = op->getResult(0);
  auto shape = getShape(res);
  const bool inGroup = held > 0;
  // Work the op counts per lane itself (it reads across the lanes).
  if (int64_t laneWork = inGroup ? cg.localLaneWork(t.lanes) : 0)
    return double(laneWork) /
               double(t.euFor(chipDType(op->getOperand(0).getType()))) +
           t.tiu_issue_cycles;
  int64_t work = cg.getMacs();
  if (work == 0)
    work = numElements(shape);
  int64_t c = inGroup ? held : shape.size() == 4 ? shape[1] : t.lanes;
  // A conv spreading its work over idle lanes: `parts` times the lanes,
  // plus the passes adding its partial sums.
  const int64_t parts = inGroup ? split.parts : 1;
  double sums = 0;
  if (parts > 1) {
    const double plane = double(numElements(shape)) / double(c),
                 eu = t.euFor(DType::F32);
    if (split.moves) {
      // An add per halving of the partial sums, then the bias: one pass
      // over the result each; the adds wait for the moves of the upper
      // halves (parts - 1 partial sums in all).
      int64_t passes = 1;
      for (int64_t m = parts; m > 1; m = (m + 1) / 2)
        ++passes;
      sums = double(passes) * (plane / eu + t.tiu_issue_cycles) +
             double(parts - 1) * double(c) * plane * dtypeSize(DType::F32) /
                 t.gdma_lmem_bytes_per_cycle +
             double(passes - 1) * t.gdma_issue_cycles;
    } else {
      // The 1x1 conv adding the partial sums: parts MACs per output.
      sums = double(parts) * plane / eu + t.tiu_issue_cycles;
    }
    c *= parts;
  }
  double lanes = double(c) / double((c + t.lanes - 1) / t.lanes);
  DType dt = chipDType(op->getOperand(0).getType());
  if (!isFloat(dt) && dt != DType::INT8)
    dt = chipDType(res.getType());
  // Quantized ops add a requant (or rescale) pass over the result.
  double extra = isFloat(chipDType(res.getType())) ? 0 : 2 * numElements(shape);
  return (double(work) + extra) / lanes / double(t.euFor(dt)) + t.tiu_issue_cycles + sums;
}

/// Share of the shorter of compute and DDR traffic an op's own pipeline
/// fails to hide.
constexpr double kSoloOverlapLoss = 0.5;

/// Cycles of `op` with its own tiled codegen (none for a view of its
/// operand's buffer, as a Reshape), moving `extraBytes` more (the residual
/// tiles of a tile epilogue).
double soloCycles(Operation *op, const Target &t, uint64_t extraBytes = 0) {
  if (cast<CodegenInterface>(op).aliasedOperand() >= 0)
    return 0;
  uint64_t bytes = tensorBytes(op->getResult(0)) + extraBytes;
  for (Value v : op->getOperands())
    bytes += tensorBytes(v);
  double ddr = double(bytes) / t.ddr_bytes_per_cycle, tiu = tiuCycles(op, t);
  // Tiles overlap imperfectly: the first load and the last store are not
  // hidden, and tiles small enough to double-buffer cost per-tile overhead.
  return std::max(tiu, ddr) + kSoloOverlapLoss * std::min(tiu, ddr) +
         2.0 * (t.ddr_latency_cycles + t.gdma_issue_cycles);
}

/// Cycles of `ops` as one group of whole tensors (see the file comment);
/// the plan's views (GroupPlan::views) compute nothing.
double groupCycles(ArrayRef<Operation *> ops, const GroupPlan &plan,
                   const Target &t) {
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  llvm::SmallPtrSet<void *, 16> loaded;
  const double bw = t.ddr_bytes_per_cycle,
               fixed = t.ddr_latency_cycles + t.gdma_issue_cycles;
  double gdma = 0, tiu = 0;
  std::vector<double> ready(ops.size());
  // A result the group loads (localLoad) costs its own moves, which may
  // read short runs of whole bursts.
  auto loadCycles = [&](Operation *op) {
    auto cg = cast<CodegenInterface>(op);
    double c = cg.localLoad() ? cg.localLoadCycles(t) : 0;
    return c > 0 ? c : fixed + tensorBytes(op->getResult(0)) / bw;
  };
  for (size_t k = 0; k < ops.size(); ++k) {
    auto cg = cast<CodegenInterface>(ops[k]);
    Value first = ops[k]->getNumOperands() ? ops[k]->getOperand(0) : Value();
    if (cg.localLoad() && first && inDdrBeforeGroup(first, ops) &&
        (!first.getDefiningOp<top::WeightOp>() || !cg.localCompute())) {
      gdma += loadCycles(ops[k]) - t.ddr_latency_cycles;
      ready[k] = gdma + t.ddr_latency_cycles;
      continue;
    }
    for (Value v : ops[k]->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (tensorBytes(v) == 0 || (def && members.contains(def)) ||
          !loaded.insert(v.getAsOpaquePointer()).second)
        continue;
      gdma += tensorBytes(v) / bw + t.gdma_issue_cycles;
    }
    ready[k] = gdma + t.ddr_latency_cycles;
  }
  // Moves from local memory to local memory queue behind every load.
  const double loads = gdma;
  double end = 0;
  for (size_t k = 0; k < ops.size(); ++k) {
    // A result loaded from a member's stored one waits for the round trip.
    auto cg = cast<CodegenInterface>(ops[k]);
    const unsigned moves = plan.views[k] ? 0 : cg.localGdmaMoves(t.lanes);
    if (moves) {
      gdma = std::max(gdma, std::max(loads, std::max(tiu, ready[k]))) +
             moves * t.gdma_issue_cycles +
             double(tensorBytes(ops[k]->getResult(0))) /
                 t.gdma_lmem_bytes_per_cycle;
      tiu = std::max(tiu, gdma);
    }
    Value first = ops[k]->getNumOperands() ? ops[k]->getOperand(0) : Value();
    if (cg.localLoad() && !cg.localCompute() && first &&
        !inDdrBeforeGroup(first, ops))
      tiu += fixed + tensorBytes(first) / bw + loadCycles(ops[k]);
    if (!moves)
      tiu = std::max(tiu, ready[k]) +
            (plan.views[k] ? 0
                           : tiuCycles(ops[k], t,
                                       plan.buffers[plan.results[k]].shape[1],
                                       plan.lanes[k]));
    // The moves of a tensor between its batch folded and not, an image at
    // a time, follow the op.
    if (k < plan.refolds.size())
      for (auto [from, to] : plan.refolds[k]) {
        const auto &u = plan.buffers[from].shape[0] > 1 ? plan.buffers[from].shape
                                                        : plan.buffers[to].shape;
        gdma = std::max(gdma, tiu) +
               double(u[0]) * (t.gdma_issue_cycles +
                               double(u[1] * u[3] * dtypeSize(plan.buffers[to].dtype)) /
                                   t.gdma_lmem_bytes_per_cycle);
      }
    Value res = ops[k]->getResult(0);
    if (llvm::any_of(res.getUsers(),
                     [&](Operation *u) { return !members.contains(u); }) ||
        res.use_empty()) {
      gdma = std::max(gdma, tiu) + tensorBytes(res) / bw;
      end = std::max(end, gdma + fixed);
    }
  }
  return std::max(end, tiu);
}

/// Cycles of a group sliced along H: the first slice waits for the weights
/// (and its rows of the inputs); then the GDMA loads slice s + 1 once the
/// TIU is done with its slot (slice s - 1), while the TIU computes slice s,
/// whose stores follow it. Each op's TIU cycles scale with the rows it
/// computes, halos included.
double slicedCycles(ArrayRef<Operation *> ops, const GroupPlan &plan,
                    const Target &t) {
  const double bw = t.ddr_bytes_per_cycle,
               fixed = t.ddr_latency_cycles + t.gdma_issue_cycles;
  const auto &pb = plan.buffers;
  // A slice of rows moves one run of rows x W per (n, c) plane, in whole
  // DDR bursts.
  auto moveCycles = [&](int i, int64_t rows) {
    const auto &sh = pb[i].shape;
    double run = double(rows * sh[3] * dtypeSize(pb[i].dtype));
    double burst = std::max<double>(1, t.ddr_burst_bytes);
    double bytes = rows == pb[i].height
                       ? double(sh[0] * sh[1]) * run
                       : double(sh[0] * sh[1]) * std::ceil(run / burst) * burst;
    return bytes / bw + t.gdma_issue_cycles;
  };
  // Slice g is slice g % S of rows of a slice of the batch: the same
  // moves, and the share `part` of each op's TIU work, for every such part.
  const int64_t S = plan.slices, G = plan.nSlices * S;
  const double part = 1.0 / double(plan.nSlices);
  std::vector<double> load(S, 0), store(S, 0), tiu(S, 0);
  double weights = 0;
  for (size_t i = 0; i < pb.size(); ++i)
    if (pb[i].kind == GroupPlan::Kind::Weight)
      weights += tensorBytes(pb[i].value) / bw + t.gdma_issue_cycles;
  for (int64_t s = 0; s < S; ++s) {
    for (size_t i = 0; i < pb.size(); ++i)
      if (pb[i].kind == GroupPlan::Kind::Input && plan.held[s][i].size())
        load[s] += moveCycles(int(i), plan.held[s][i].size());
    for (size_t k = 0; k < ops.size(); ++k) {
      int r = plan.results[k];
      // Carried halo rows cost a copy, not their compute.
      double frac = double(plan.computed[s][k].size()) / double(pb[r].height);
      if (plan.carried[s][k].size())
        tiu[s] += t.tiu_issue_cycles;
      if (frac > 0)
        tiu[s] += (tiuCycles(ops[k], t, pb[r].shape[1], plan.lanes[k]) -
                   t.tiu_issue_cycles) * frac *
                      part +
                  t.tiu_issue_cycles;
      if (plan.stored[k] && plan.storedRows[s][k].size())
        store[s] += moveCycles(r, plan.storedRows[s][k].size());
    }
  }
  double gdma = weights + load[0], end = 0;
  std::vector<double> done(G, 0);
  double ready = gdma + t.ddr_latency_cycles;
  for (int64_t g = 0; g < G; ++g) {
    double next = 0;
    if (g + 1 < G) {
      gdma = std::max(gdma, g > 0 ? done[g - 1] : 0.0) + load[(g + 1) % S];
      next = gdma + t.ddr_latency_cycles;
    }
    done[g] = std::max(g > 0 ? done[g - 1] : 0.0, ready) + tiu[g % S];
    gdma = std::max(gdma, done[g]) + store[g % S];
    end = std::max(end, gdma + fixed);
    ready = next;
  }
  return std::max(end, done[G - 1]);
}

/// Cycles of a fused matmul pair: every weight and the input read once,
/// the result stored once, under the TIU work of both matmuls and the chain
/// between them; the first chunk's loads and the final store show.
double fusedPairCycles(ArrayRef<Operation *> ops, int64_t chunk,
                       const Target &t) {
  const double bw = t.ddr_bytes_per_cycle,
               fixed = t.ddr_latency_cycles + t.gdma_issue_cycles;
  const int64_t chunks = getShape(ops.front()->getOperand(1))[1] / chunk;
  double bytes = double(tensorBytes(ops.back()->getResult(0))), tiu = 0;
  for (Operation *op : ops) {
    for (Value v : op->getOperands())
      if (v.getDefiningOp<top::WeightOp>() || op == ops.front())
        bytes += double(tensorBytes(v));
    tiu += tiuCycles(op, t) + double(chunks - 1) * t.tiu_issue_cycles;
  }
  double first = (double(tensorBytes(ops.front()->getOperand(0))) +
                  double(tensorBytes(ops.back()->getOperand(1))) / chunks +
                  double(tensorBytes(ops.front()->getOperand(1))) / chunks) /
                 bw;
  double last = double(tensorBytes(ops.back()->getResult(0))) / bw;
  return std::max(tiu, bytes / bw) + first + last + 2 * fixed;
}

/// Cycles of a tile epilogue group: the first op's own tiled code, which
/// also loads the epilogue's residual tiles, plus the TIU work of the ops
/// applied to its tiles (counted as not hidden).
double epilogueCycles(ArrayRef<Operation *> ops, const Target &t) {
  if (int64_t chunk = fusedPairChunk(ops, t))
    return fusedPairCycles(ops, chunk, t);
  // A prologue adds its TIU work on the head's input tiles.
  const size_t h = hasTilePrologue(ops) ? 1 : 0;
  uint64_t residualBytes = 0;
  for (Operation *op : ops.drop_front(h + 1))
    for (Value v : op->getOperands().drop_front())
      if (!v.getDefiningOp<top::WeightOp>())
        residualBytes += tensorBytes(v);
  double c = soloCycles(ops[h], t, residualBytes);
  for (auto [k, op] : llvm::enumerate(ops))
    if (k != h)
      c += tiuCycles(op, t);
  return c;
}

} // namespace

double tpuc::backend::estimateLocalTiuCycles(Operation *op,
                                             const Target &target,
                                             int64_t held, LaneSplit lanes) {
  return tiuCycles(op, target, held, lanes);
}

double tpuc::backend::estimateGroupCycles(ArrayRef<Operation *> ops,
                                          const GroupPlan &plan,
                                          const Target &target) {
  return plan.looped() ? slicedCycles(ops, plan, target)
                       : groupCycles(ops, plan, target);
}

void tpuc::backend::printGroupPlan(raw_ostream &os, ArrayRef<Operation *> ops,
                                   const GroupPlan &plan) {
  static const char *kKinds[] = {"input", "weight", "result", "temp"};
  os << ops.size() << " ops, " << plan.bytes << " bytes per lane";
  if (plan.nSlices > 1)
    os << ", " << plan.nSlices << " slices along N (" << plan.batch / plan.nSlices
       << " of " << plan.batch << " images each)";
  if (plan.slices > 1)
    os << ", " << plan.slices << " slices along H";
  if (plan.rows && plan.chunk < plan.rows)
    os << ", chunks of " << plan.chunk << " of " << plan.rows
       << " rows per lane";
  // Each buffer is named by its tensor, a temp by the op it serves.
  std::vector<std::string> names(plan.buffers.size());
  std::vector<bool> stored(plan.buffers.size(), false);
  std::vector<int> producer(plan.buffers.size(), -1);
  for (size_t k = 0; k < ops.size(); ++k) {
    for (int t : plan.temps[k])
      names[t] = "temp of " + getOpName(ops[k]);
    stored[plan.results[k]] = plan.stored[k];
    producer[plan.results[k]] = int(k);
  }
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (Value v = plan.buffers[i].value)
      names[i] = v.getDefiningOp() ? getOpName(v.getDefiningOp())
                                   : std::string("argument");
  for (const auto &pairs : plan.refolds)
    for (auto [from, to] : pairs)
      names[to] = "refold of " + names[from];
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const GroupPlan::Buffer &b = plan.buffers[i];
    os << "\n  " << kKinds[int(b.kind)] << " '" << names[i] << "' ["
       << b.shape[0] << ", " << b.shape[1] << ", " << b.shape[2] << ", "
       << b.shape[3] << "] " << dtypeName(b.dtype) << " at " << b.offset
       << " (" << b.bytes << " bytes";
    if (b.slots > 1)
      os << " in " << b.slots << " slots";
    os << "), ops " << b.start << "-" << b.end;
    if (stored[i])
      os << ", stored";
    if (b.alias >= 0)
      os << ", view of '" << names[b.alias] << "'";
    if (plan.looped() && (b.kind == GroupPlan::Kind::Input ||
                            b.kind == GroupPlan::Kind::Result)) {
      os << ", rows";
      for (int64_t s = 0; s < plan.slices; ++s) {
        GroupPlan::Rows r = plan.held[s][i];
        os << (s ? " | " : " ") << r.lo << "-" << r.hi;
        if (producer[i] >= 0 && plan.carried[s][producer[i]].size())
          os << " (" << plan.carried[s][producer[i]].size() << " carried)";
      }
    }
  }
}

namespace {

struct LayerGroupPass
    : public tpuc::backend::impl::LayerGroupBase<LayerGroupPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerCodegenExternalModels(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    chip::Target target;
    if (failed(loadChip(module, chip, target)))
      return signalPassFailure();
    // Each function is partitioned on its own, not only the entry: a test
    // file or a module of several functions groups them all.
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        groupBlock(func.getBody().front(), target);
  }

  void groupBlock(Block &block, const Target &target) {
    // Groups of an earlier run dissolve: the partition starts afresh.
    for (auto g : llvm::make_early_inc_range(block.getOps<tpu::GroupOp>()))
      dissolve(g);
    sinkViews(block, target);
    // Chains of consecutive ops that can join groups; other ops end them.
    SmallVector<SmallVector<Operation *>> chains(1);
    for (Operation &op : block.without_terminator()) {
      if (!isa<tpu::TpuDialect>(op.getDialect()))
        continue;
      if (canJoinLayerGroup(&op))
        chains.back().push_back(&op);
      else if (!chains.back().empty())
        chains.emplace_back();
    }
    for (ArrayRef<Operation *> chain : chains)
      partition(chain, target);
    if (printPlan)
      for (auto g : block.getOps<tpu::GroupOp>()) {
        SmallVector<Operation *> ops = g.getMembers();
        if (g.getTileEpilogue()) {
          int64_t chunk = fusedPairChunk(ops, target);
          auto remark = g.emitRemark();
          remark << "layer group plan: " << ops.size() << " ops, ";
          if (chunk)
            remark << "a fused matmul pair in chunks of " << chunk
                   << " hidden columns";
          else if (hasTilePrologue(ops))
            remark << "the second one's tiled code with the first applied "
                      "to each input tile"
                   << (ops.size() > 2 ? " and the rest to each output tile"
                                      : "");
          else
            remark << "the first one's tiled code with the rest "
                      "applied to each output tile";
          remark << "\n  estimated " << int64_t(epilogueCycles(ops, target))
                 << " cycles";
          continue;
        }
        auto plan = planLayerGroup(ops, target, g.getNSlices(),
                                   g.getHSlices(), g.getRowChunk());
        std::string text;
        llvm::raw_string_ostream os(text);
        if (succeeded(plan)) {
          printGroupPlan(os, ops, *plan);
          if (plan->pingPongHalf(target.lmem_bytes_per_lane))
            os << "\n  chunks alternate between two halves of "
               << plan->pingPongHalf(target.lmem_bytes_per_lane)
               << " bytes per lane";
          os << "\n  estimated "
             << int64_t(estimateGroupCycles(ops, *plan, target)) << " cycles";
        }
        g.emitRemark() << "layer group plan: " << text;
      }
  }

  /// Moves each Reshape and Permute of the result of an op too big for any
  /// group (which runs on its own, so the view gains nothing next to it)
  /// down to just before its first user, whose run it can then join:
  /// attention's head split of Q sits before the K and V projections in
  /// program order, apart from the scores' group that can take it.
  static void sinkViews(Block &block, const Target &target) {
    SmallVector<Operation *> views;
    for (Operation &op : block.without_terminator())
      if (isa<tpu::ReshapeOp, tpu::PermuteOp>(op))
        views.push_back(&op);
    for (Operation *op : llvm::reverse(views)) {
      Operation *root = op;
      while (root && isa<tpu::ReshapeOp, tpu::PermuteOp>(root))
        root = root->getOperand(0).getDefiningOp();
      if (!root || !isa<tpu::TpuDialect>(root->getDialect()) ||
          !canJoinLayerGroup(root) ||
          succeeded(planLayerGroup(ArrayRef<Operation *>{root}, target)))
        continue;
      Operation *first = nullptr;
      for (Operation *user : op->getUsers())
        if (user->getBlock() == &block &&
            (!first || user->isBeforeInBlock(first)))
          first = user;
      if (first && !first->hasTrait<OpTrait::IsTerminator>() &&
          first != op->getNextNode())
        op->moveBefore(first);
    }
  }

  /// Moves the members of `group` back before it.
  static void dissolve(tpu::GroupOp group) {
    for (Operation *op : group.getMembers())
      op->moveBefore(group);
    for (OpResult r : group->getResults())
      r.replaceAllUsesWith(group.getYielded(r.getResultNumber()));
    group.erase();
  }

  /// Moves `ops` (consecutive among the Tpu ops) into a new tpu.Group
  /// placed where the last of them was, which yields their results used
  /// after it. Ops in between that are not Tpu ops (weights) stay before
  /// it, so every value the members read is defined before the group.
  static void formGroup(ArrayRef<Operation *> ops, int64_t nSlices,
                        int64_t slices, int64_t chunk, bool epilogue) {
    llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
    SmallVector<Value> yielded;
    SmallVector<Type> types;
    SmallVector<Location> locs;
    for (Operation *op : ops) {
      locs.push_back(op->getLoc());
      for (Value r : op->getResults())
        if (llvm::any_of(r.getUsers(),
                         [&](Operation *u) { return !members.contains(u); }))
          yielded.push_back(r), types.push_back(r.getType());
    }
    OpBuilder b(ops.back());
    auto group = b.create<tpu::GroupOp>(b.getFusedLoc(locs), types, nSlices,
                                        slices, chunk, epilogue);
    Block *body = new Block();
    group.getBody().push_back(body);
    for (Operation *op : ops)
      op->moveBefore(body, body->end());
    OpBuilder::atBlockEnd(body).create<tpu::YieldOp>(group.getLoc(), yielded);
    for (auto [v, r] : llvm::zip(yielded, group->getResults()))
      v.replaceUsesWithIf(r, [&](OpOperand &use) {
        return use.getOwner()->getBlock() != body;
      });
  }

  static bool canTrailEpilogue(Operation *op) {
    auto cg = dyn_cast<CodegenInterface>(op);
    return cg && cg.localElementwise();
  }

  /// Splits `chain` into the runs of least estimated cycles (each op on its
  /// own, or a group that planLayerGroup places) and forms the groups.
  void partition(ArrayRef<Operation *> chain, const Target &target) {
    const size_t m = chain.size();
    // best[j]: least cycles of chain[0, j), whose last run starts at from[j].
    std::vector<double> best(m + 1, 0);
    std::vector<size_t> from(m + 1, 0);
    std::vector<int64_t> nSlices(m + 1, 1), slices(m + 1, 1),
        chunks(m + 1, 0);
    std::vector<bool> epilogue(m + 1, false);
    for (size_t j = 1; j <= m; ++j) {
      best[j] = best[j - 1] + soloCycles(chain[j - 1], target);
      from[j] = j - 1;
      bool fits = true;
      for (size_t i = j - 1; i-- > 0;) {
        if (maxOps > 0 && int64_t(j - i) > maxOps)
          break;
        ArrayRef<Operation *> run = chain.slice(i, j - i);
        // A matmul or conv whose tiles take the ops after it as an
        // epilogue; a pair of matmuls fuses in chunks only when it cannot
        // run whole, and a conv takes a prologue only when the two cannot
        // (the estimates of the two kinds of plan rank them poorly).
        if (isTileEpilogue(run) &&
            (!isa<tpu::MatMulOp>(run.back()) ||
             (fusedPairChunk(run, target) &&
              failed(planLayerGroup(run, target)))) &&
            (!hasTilePrologue(run) ||
             failed(planLayerGroup(run.take_front(2), target)))) {
          double c = best[i] + epilogueCycles(run, target);
          if (c < best[j])
            best[j] = c, from[j] = i, slices[j] = 1, chunks[j] = 0,
            epilogue[j] = true;
        }
        // Once a run does not fit, longer ones ending here do not either;
        // they may still be tile epilogue groups while each op they add
        // can trail a head as an elementwise epilogue op.
        if (!fits) {
          if (!canTrailEpilogue(run[0]))
            break;
          continue;
        }
        auto plan = planLayerGroup(run, target);
        if (failed(plan)) {
          fits = false;
          if (!canTrailEpilogue(run[0]))
            break;
          continue;
        }
        // A group that only loads results and stores them back moves the
        // data through LMEM: the ops' own DDR-to-DDR copies pay the DDR
        // latency once, not twice.
        if (llvm::all_of(plan->loaded, [](bool l) { return l; }) &&
            llvm::all_of(plan->stored, [](bool s) { return s; }))
          continue;
        double c = best[i] + estimateGroupCycles(run, *plan, target);
        if (c < best[j])
          best[j] = c, from[j] = i, nSlices[j] = plan->nSlices,
          slices[j] = plan->slices,
          chunks[j] = plan->chunk < plan->rows ? plan->chunk : 0,
          epilogue[j] = false;
      }
    }
    SmallVector<std::pair<size_t, size_t>> groups;
    for (size_t j = m; j > 0; j = from[j])
      if (j - from[j] >= 2)
        groups.push_back({from[j], j});
    for (auto [i, j] : llvm::reverse(groups))
      formGroup(chain.slice(i, j - i), nSlices[j], slices[j], chunks[j],
                epilogue[j]);
  }
};

} // namespace
