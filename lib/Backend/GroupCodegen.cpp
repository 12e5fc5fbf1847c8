//===- GroupCodegen.cpp - Planning and emitting layer groups --------------===//
//
// Every tensor of a group is whole in LMEM in the canonical layout (or, in
// the rows view of elementwise groups, a chunk of rows per lane). Inputs
// and weights are loaded up front in order of first use, so the GDMA fills
// later ops' operands while the TIU computes earlier ones; results and
// scratch reuse the space of tensors that died (first fit over live ranges).
// A buffer placed over dead ones starts fenced on their last TIU and GDMA
// users, which orders reuse after the reads and stores of the old data.
// Groups too big for whole tensors are sliced along N (sliceBatch) and/or
// H (sliceRows), emitted as a loop (emitSliced): every buffer holds the
// images and rows of the current slice; the first slice computes a large
// filter's runs of output channels as they arrive (filterRuns).
//
//===----------------------------------------------------------------------===//
#include "tpuc/Backend/LayerGroup.h"
#include "tpuc/Backend/CodegenInterface.h"
#include "Ops/Common.h"
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Support/OpHelpers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <optional>

using namespace mlir;
using namespace tpuc::chip;
using Rows = tpuc::backend::GroupPlan::Rows;

namespace tpuc {
namespace backend {

static constexpr uint64_t kAlign = 64;

uint32_t LocalOperands::emit(const Instruction &inst) {
  SmallVector<LBuf *, 8> bufs;
  for (LocalTensor &t : operands)
    if (t.buf)
      bufs.push_back(t.buf);
  bufs.push_back(result.buf);
  for (LocalTensor &t : temps)
    bufs.push_back(t.buf);
  return ctx->tiu(inst, bufs);
}

static bool isTensor(Value v) { return isa<RankedTensorType>(v.getType()); }

/// The layout of an operand `in` that broadcasts dim by dim against a
/// result `out` held in its matrix view `view` ([batch, rows, 1, cols]):
/// rows and cols each whole or 1, the batch whole or 1 (an attention mask
/// built as a column of a row, [1, 1, L, 1] * [B, 1, 1, L]). The TIU
/// broadcasts its unit dims, across lanes too. Nothing for other shapes.
static std::optional<std::array<int64_t, 4>>
matrixBroadcast(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                const std::array<int64_t, 4> &view) {
  const size_t r = out.size();
  if (r < 2 || in.size() > r || view[2] != 1 ||
      view[0] != numElements(out.drop_back(2)) || view[1] != out[r - 2] ||
      view[3] != out[r - 1])
    return std::nullopt;
  SmallVector<int64_t> s(r - in.size(), 1);
  s.append(in.begin(), in.end());
  for (size_t d = 0; d < r; ++d)
    if (s[d] != 1 && s[d] != out[d])
      return std::nullopt;
  int64_t batch = numElements(ArrayRef<int64_t>(s).drop_back(2));
  if (batch != 1 && !llvm::equal(ArrayRef<int64_t>(s).drop_back(2),
                                 out.drop_back(2)))
    return std::nullopt;
  return std::array<int64_t, 4>{batch, s[r - 2], 1, s[r - 1]};
}

bool canJoinLayerGroup(Operation *op) {
  if (!isa<tpu::TpuDialect>(op->getDialect()) || op->getNumResults() != 1)
    return false;
  auto cg = dyn_cast<CodegenInterface>(op);
  if (!cg || !cg.supportsLocal() || !isTensor(op->getResult(0)))
    return false;
  // Tensors of other ranks are not NCHW: only elementwise ops, which work
  // in the rows view of planLayerGroup, can group them.
  size_t rank = getShape(op->getResult(0)).size();
  if (rank > 4 || (rank != 4 && !cg.localElementwise() &&
                   cg.localResultShape().empty()))
    return false;
  DType t = chipDType(op->getResult(0).getType());
  // A quantized op checks its own operand types (INT8 filters with INT32
  // biases and requant tables, or a cast's other type); float ops compute
  // in one dtype. Quantized ops of other ranks group in the rows view.
  bool quantized = !isFloat(t);
  if (quantized &&
      (!cg.localQuantized() || (rank != 4 && !cg.localRowwise() &&
                                cg.localResultShape().empty())))
    return false;
  bool ownTypes = quantized || cg.localQuantized();
  for (Value v : op->getOperands())
    if (!isNone(v) &&
        (!isTensor(v) || getShape(v).size() > 4 ||
         (!ownTypes && chipDType(v.getType()) != t)))
      return false;
  return true;
}

bool inDdrBeforeGroup(Value v, ArrayRef<Operation *> members) {
  Operation *def = v.getDefiningOp();
  if (!def || !llvm::is_contained(members, def))
    return true;
  auto cg = dyn_cast<CodegenInterface>(def);
  int a = cg ? cg.aliasedOperand() : -1;
  return a >= 0 && cg.aliasedByteOffset() == 0 &&
         inDdrBeforeGroup(def->getOperand(a), members);
}

bool isStoredInGroup(Operation *op, ArrayRef<Operation *> members) {
  Value r = op->getResult(0);
  return r.use_empty() || llvm::any_of(r.getUses(), [&](OpOperand &use) {
           Operation *u = use.getOwner();
           if (!llvm::is_contained(members, u))
             return true;
           auto cg = cast<CodegenInterface>(u);
           return use.getOperandNumber() == 0 && cg.localLoad() &&
                  !cg.localCompute() && !inDdrBeforeGroup(r, members);
         });
}

static Rows hull(Rows a, Rows b) {
  if (!b.size())
    return a;
  if (!a.size())
    return b;
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

/// The rows every buffer of `plan` holds in each of `slices` slices: going
/// backwards from the results no member uses (an equal share of their rows
/// per slice), each op computes the rows its users read, and reads the rows
/// its windows need (localInputRows). A stored result also covers the rows
/// earlier slices skipped, up to its last row in the last slice. Then sizes
/// the buffers for the most rows a slice holds.
/// With `carry`, a result whose rows in a slice start inside the previous
/// slice's (the halo of a window after it) keeps its buffer through the
/// loop: the slice copies those rows from the previous one and computes
/// only the rows after them, so ops before it compute fewer rows too.
static LogicalResult sliceRows(GroupPlan &plan, ArrayRef<Operation *> ops,
                               const llvm::SmallPtrSetImpl<Operation *> &members,
                               int64_t slices, bool carry) {
  const int n = int(ops.size());
  const size_t nb = plan.buffers.size();
  plan.slices = slices;
  plan.held.assign(slices, std::vector<Rows>(nb));
  plan.reads.assign(slices, std::vector<SmallVector<Rows, 4>>(n));
  plan.storedRows.assign(slices, std::vector<Rows>(n));
  plan.computed.assign(slices, std::vector<Rows>(n));
  plan.carried.assign(slices, std::vector<Rows>(n));
  for (GroupPlan::Buffer &b : plan.buffers)
    b.height = b.shape[2];
  // A view shares its operand's bytes: neither side's rows move.
  std::vector<bool> canCarry(n, carry);
  for (int k = 0; k < n; ++k) {
    int r = plan.results[k];
    if (plan.views[k] || plan.loaded[k] || plan.buffers[r].alias >= 0)
      canCarry[k] = false;
    for (const GroupPlan::Buffer &b : plan.buffers)
      if (b.alias == r)
        canCarry[k] = false;
  }
  std::vector<int64_t> storedEnd(nb, 0);
  for (int64_t s = 0; s < slices; ++s) {
    std::vector<Rows> &held = plan.held[s];
    for (int k = n - 1; k >= 0; --k) {
      Operation *op = ops[k];
      int r = plan.results[k];
      const int64_t h = plan.buffers[r].height;
      Rows rows = held[r];
      if (llvm::none_of(op->getResult(0).getUsers(),
                        [&](Operation *u) { return members.contains(u); }))
        rows = hull(rows, {s * h / slices, (s + 1) * h / slices});
      if (plan.stored[k]) {
        if (s == slices - 1)
          rows = hull(rows, {storedEnd[r], h});
        else if (rows.size())
          rows.lo = std::min(rows.lo, storedEnd[r]);
        plan.storedRows[s][k] = {std::max(rows.lo, storedEnd[r]), rows.hi};
        storedEnd[r] = std::max(storedEnd[r], rows.hi);
      }
      held[r] = rows;
      Rows &computed = plan.computed[s][k];
      computed = rows;
      if (s > 0 && canCarry[k]) {
        Rows prev = plan.held[s - 1][r];
        if (prev.size() && rows.lo >= prev.lo && rows.lo < prev.hi &&
            rows.hi >= prev.hi) {
          plan.carried[s][k] = {rows.lo, prev.hi};
          computed = {prev.hi, rows.hi};
        }
      }
      auto cg = cast<CodegenInterface>(op);
      SmallVector<Rows, 4> &reads = plan.reads[s][k];
      reads.resize(op->getNumOperands());
      for (auto [i, b] : llvm::enumerate(plan.operands[k])) {
        if (b < 0)
          continue;
        GroupPlan::Buffer &buf = plan.buffers[b];
        if (buf.kind == GroupPlan::Kind::Weight) {
          // Weights are whole in every slice: only those without rows
          // (filters, per-channel values) suit a slice of the result.
          if (cg.localElementwise() && buf.shape[2] != 1)
            return failure();
          reads[i] = {0, buf.shape[2]};
          continue;
        }
        int64_t lo = 0, hi = 0;
        if (computed.size() &&
            !cg.localInputRows(unsigned(i), computed.lo, computed.hi, lo, hi))
          return failure();
        reads[i] = {lo, hi};
        held[b] = hull(held[b], reads[i]);
      }
    }
  }
  // Inputs, weights and stored results live through the whole loop.
  for (size_t b = 0; b < nb; ++b) {
    GroupPlan::Buffer &buf = plan.buffers[b];
    if (buf.kind == GroupPlan::Kind::Temp || buf.kind == GroupPlan::Kind::Weight)
      continue;
    int64_t most = 1;
    for (int64_t s = 0; s < slices; ++s)
      most = std::max(most, plan.held[s][b].size());
    buf.shape[2] = most;
  }
  for (int k = 0; k < n; ++k) {
    for (int t : plan.temps[k])
      plan.buffers[t].shape[2] = plan.buffers[plan.results[k]].shape[2];
    GroupPlan::Buffer &res = plan.buffers[plan.results[k]];
    if (plan.stored[k])
      res.slots = 2, res.start = 0, res.end = n - 1;
    // A carried result lives through the loop. Its rows move to the top of
    // its buffer unless they overlap there; then slices alternate slots.
    for (int64_t s = 1; s < slices; ++s) {
      Rows c = plan.carried[s][k];
      if (!c.size())
        continue;
      res.start = 0, res.end = n - 1;
      if (c.lo - plan.held[s - 1][plan.results[k]].lo < c.size())
        res.slots = 2;
    }
  }
  for (GroupPlan::Buffer &b : plan.buffers) {
    if (b.kind == GroupPlan::Kind::Input)
      b.slots = 2;
    if (b.kind == GroupPlan::Kind::Input || b.kind == GroupPlan::Kind::Weight)
      b.start = 0, b.end = n - 1;
  }
  return success();
}

/// Whether a group holds its tensors in the rows view: groups of
/// elementwise ops on tensors that are not NCHW, and groups whose ops all
/// compute row by row (LayerNorm, Softmax along the last axis, casts and
/// elementwise ops between them) of any rank, which then also run as a
/// loop over chunks of rows when the whole tensors do not fit.
static bool useRowsView(ArrayRef<Operation *> ops, bool ownLayouts) {
  bool rowwise = llvm::all_of(ops, [](Operation *op) {
    return cast<CodegenInterface>(op).localRowwise();
  });
  if (getShape(ops[0]->getResult(0)).size() != 4)
    return !ownLayouts || rowwise;
  return ownLayouts && rowwise;
}

/// Cuts the input, result and temp buffers of an NCHW group to one of
/// `nSlices` equal slices of the batch. Every op computes each image on its
/// own, so only tensors of the whole batch qualify (a tensor broadcast
/// along N, or a weight with a batch an elementwise op reads, does not).
static LogicalResult sliceBatch(GroupPlan &plan, ArrayRef<Operation *> ops,
                                int64_t nSlices) {
  ArrayRef<int64_t> first = getShape(ops[0]->getResult(0));
  if (first.size() != 4 || first[0] % nSlices != 0)
    return failure();
  const int64_t n = first[0];
  for (auto [k, op] : llvm::enumerate(ops))
    for (int b : plan.operands[k])
      if (b >= 0 && plan.buffers[b].kind == GroupPlan::Kind::Weight &&
          cast<CodegenInterface>(op).localElementwise() &&
          plan.buffers[b].shape[0] != 1)
        return failure();
  for (GroupPlan::Buffer &b : plan.buffers) {
    if (b.kind == GroupPlan::Kind::Weight)
      continue;
    if (b.shape[0] != n ||
        (b.value && (getShape(b.value).size() != 4 ||
                     getShape(b.value)[0] != n)))
      return failure();
    b.shape[0] = n / nSlices;
  }
  plan.nSlices = nSlices;
  plan.batch = n;
  return success();
}

/// The matrix view [batch, rows, 1, cols] with its batch folded into the
/// rows.
static std::array<int64_t, 4> foldedShape(const std::array<int64_t, 4> &s) {
  return {1, s[0] * s[1], 1, s[3]};
}

/// Folds the batch of the matrix view into the rows, [batch, rows, 1, cols]
/// -> [1, batch * rows, 1, cols], in the tensors of the ops that allow it
/// (localFoldsBatch): a linear layer over a few rows of many batches (tokens
/// of windows) otherwise leaves most lanes idle. The row-major data is the
/// same, so loads and stores do not change. An operand either has its op's
/// batch or is shared by every row (batch 1; for a row-wise op, a row or a
/// scalar). A tensor one op reads folded and another not (an attention's
/// head split, a matmul with batched right operands) is held both ways, the
/// second buffer filled by GDMA moves across the lanes after the tensor is
/// computed (GroupPlan::refolds). The GDMA runs its requests in order,
/// behind the group's loads, so the folds are chosen by how soon the group
/// ends with them (a model of both engines): a group whose ops all fold
/// needs no move and always folds.
static void foldBatches(GroupPlan &plan, ArrayRef<Operation *> ops,
                        const Target &target,
                        function_ref<uint64_t(std::array<int64_t, 4>, DType)>
                            bytesOf) {
  auto &pb = plan.buffers;
  if (llvm::none_of(pb, [](const GroupPlan::Buffer &b) {
        return b.shape[0] > 1;
      }) ||
      llvm::any_of(pb, [](const GroupPlan::Buffer &b) {
        return b.shape[2] != 1;
      }))
    return;
  const int n = int(ops.size());
  // Ops that may fold.
  std::vector<bool> can(n, false), fold(n, false);
  for (auto [k, op] : llvm::enumerate(ops)) {
    auto cg = cast<CodegenInterface>(op);
    const auto &rs = pb[plan.results[k]].shape;
    if (plan.loaded[k] || plan.views[k] || rs[0] <= 1 || !cg.localFoldsBatch())
      continue;
    bool ok = true;
    for (int b : plan.operands[k]) {
      if (b < 0)
        continue;
      const auto &s = pb[b].shape;
      if (s[0] != rs[0] && (s[0] != 1 || (cg.localRowwise() && s[1] != 1)))
        ok = false;
    }
    if (!ok)
      continue;
    can[k] = fold[k] = true;
  }
  // Whether each buffer is held folded: a result as its op computes it (a
  // view as its operand), an input as its first reader reads it; and which
  // buffers each op reads in the other form.
  std::vector<int> producer(pb.size(), -1);
  for (int k = 0; k < n; ++k)
    producer[plan.results[k]] = k;
  auto states = [&](std::vector<bool> &folded) {
    folded.assign(pb.size(), false);
    std::vector<bool> seen(pb.size(), false);
    for (int k = 0; k < n; ++k) {
      for (int b : plan.operands[k])
        if (b >= 0 && !seen[b] && (pb[b].kind == GroupPlan::Kind::Input ||
                                   pb[b].kind == GroupPlan::Kind::Weight)) {
          seen[b] = true;
          folded[b] = fold[k] && pb[b].shape[0] > 1;
        }
      int r = plan.results[k];
      if (plan.views[k]) {
        int a = plan.operands[k][0];
        folded[r] = folded[a] && pb[r].shape == pb[a].shape;
      } else {
        folded[r] = fold[k];
      }
    }
  };
  // Operand reads in the other form: each needs a second buffer of its
  // tensor. A view of another shape reads its operand unfolded, but one of
  // its folded form (a block's tokens read as the rows of a matrix) folded.
  auto mismatched = [&](const std::vector<bool> &folded, int k, int b) {
    if (b < 0 || pb[b].shape[0] <= 1)
      return false;
    const auto &rs = pb[plan.results[k]].shape;
    bool want = plan.views[k] ? (folded[b] && rs == pb[b].shape) ||
                                    rs == foldedShape(pb[b].shape)
                              : fold[k];
    return want != folded[b];
  };
  // The moves of one tensor, an image at a time.
  const auto moveCycles = [&](int b) {
    const auto &s = pb[b].shape;
    return double(s[0]) *
           (target.gdma_issue_cycles +
            double(s[1] * s[3] * dtypeSize(pb[b].dtype)) /
                target.gdma_lmem_bytes_per_cycle);
  };
  // The GDMA runs its requests in order and completes them in order, so
  // the moves after an op would wait for every load of the group (issued
  // first) and the DDR latency of the stores before them: the loads of the
  // ops the TIU reaches well after the moves (GroupPlan::loadCuts) go
  // behind them.
  std::vector<double> loadOf(n, 0); // loads of the buffers op k reads first
  {
    std::vector<bool> seen(pb.size(), false);
    for (int k = 0; k < n; ++k)
      for (int b : plan.operands[k])
        if (b >= 0 && !seen[b] &&
            (pb[b].kind == GroupPlan::Kind::Input ||
             pb[b].kind == GroupPlan::Kind::Weight)) {
          seen[b] = true;
          loadOf[k] += target.gdma_issue_cycles +
                       double(numElements(pb[b].shape) * dtypeSize(pb[b].dtype)) /
                           target.ddr_bytes_per_cycle;
        }
  }
  auto tiuOf = [&](int k, const std::vector<bool> &folded) {
    if (plan.loaded[k] || plan.views[k])
      return 0.0;
    int r = plan.results[k];
    const auto &rs = pb[r].shape;
    int64_t work = cast<CodegenInterface>(ops[k]).getMacs();
    if (work == 0)
      work = numElements(rs);
    double held = double(folded[r] ? rs[0] * rs[1] : rs[1]);
    return target.tiu_issue_cycles +
           double(work) / double(target.euFor(pb[r].dtype)) /
               std::min(held, double(target.lanes));
  };
  const double lat = target.ddr_latency_cycles;
  std::vector<bool> folded;
  std::vector<int> cuts;
  // The group's end as the engines would run it: the TIU in the op order,
  // each op after its loads and the copies it reads; the GDMA in the
  // order of the program (loads, then after an op its moves and store).
  auto simulate = [&]() {
    states(folded);
    std::vector<SmallVector<int, 2>> at(n);
    std::vector<bool> listed(pb.size(), false);
    for (int k = 0; k < n; ++k)
      for (int b : plan.operands[k])
        // Inputs and weights load twice instead.
        if (mismatched(folded, k, b) && producer[b] >= 0 && !listed[b]) {
          listed[b] = true;
          at[producer[b]].push_back(b);
        }
    // An op reading part of an unfolded copy (a slice) would see part of
    // one image's move: the bmodel verifier refuses such a read.
    for (int k = 0; k < n; ++k)
      for (int b : plan.operands[k])
        if (mismatched(folded, k, b) && producer[b] >= 0 && folded[b] &&
            numElements(getShape(ops[k]->getResult(0))) <
                numElements(pb[b].shape))
          return std::numeric_limits<double>::infinity();
    std::vector<double> end(n);
    for (int k = 0; k < n; ++k)
      end[k] = (k ? end[k - 1] : 0) + tiuOf(k, folded);
    // Cut k: the ops whose loads go behind op k's moves, from the first op
    // starting two DDR latencies after it ends.
    cuts.assign(n, -1);
    int cut = 0;
    for (int k = 0; k < n; ++k)
      if (!at[k].empty()) {
        int j = std::max(cut, k + 2);
        while (j < n && end[j - 1] - end[k] < 2 * lat)
          ++j;
        cuts[k] = cut = std::min(j, n);
      }
    auto nextCut = [&](int k) {
      for (int j = k; j < n; ++j)
        if (cuts[j] >= 0)
          return cuts[j];
      return n;
    };
    double gdma = 0, done = 0, tiu = 0;
    std::vector<double> loaded(n, 0), copied(pb.size(), 0);
    int issued = 0;
    auto issue = [&](int to) {
      for (; issued < to; ++issued)
        if (loadOf[issued] > 0) {
          gdma += loadOf[issued];
          done = std::max(done, gdma + lat);
          loaded[issued] = done;
        }
    };
    issue(nextCut(0));
    for (int k = 0; k < n; ++k) {
      if (issued <= k) {
        gdma = std::max(gdma, tiu);
        issue(k + 1);
      }
      double start = std::max(tiu, loaded[k]);
      for (int b : plan.operands[k])
        if (mismatched(folded, k, b) && producer[b] >= 0)
          start = std::max(start, copied[b]);
      tiu = start + tiuOf(k, folded);
      for (int b : at[k]) {
        gdma = std::max(gdma, tiu) + moveCycles(b);
        done = std::max(done, gdma);
        copied[b] = done;
      }
      if (cuts[k] >= 0)
        issue(nextCut(k + 1));
      if (plan.stored[k]) {
        gdma = std::max(gdma, tiu) + target.gdma_issue_cycles +
               double(numElements(pb[plan.results[k]].shape) *
                      dtypeSize(pb[plan.results[k]].dtype)) /
                   target.ddr_bytes_per_cycle;
        done = std::max(done, gdma + lat);
      }
    }
    return std::max(tiu, done);
  };
  // A group whose ops all fold without a move folds (as fast at least);
  // else the folds are searched.
  states(folded);
  bool moves = false;
  for (int k = 0; k < n; ++k)
    for (int b : plan.operands[k])
      moves = moves || mismatched(folded, k, b);
  if (moves) {
    std::fill(fold.begin(), fold.end(), false);
    const double unfolded = simulate();
    // What folding saves on the group's end.
    auto total = [&]() { return unfolded - simulate(); };
    // Tried one op at a time, then a run of folding ops passing tensors
    // among themselves at a time (one op alone would trade one move for
    // another).
    auto root = [&](int b) {
      while (b >= 0 && producer[b] >= 0 && plan.views[producer[b]])
        b = plan.operands[producer[b]][0];
      return b;
    };
    std::vector<int> run(n);
    auto runs = [&] {
      for (int k = 0; k < n; ++k)
        run[k] = k;
      std::function<int(int)> find = [&](int k) {
        return run[k] == k ? k : run[k] = find(run[k]);
      };
      for (int k = 0; k < n; ++k)
        if (fold[k])
          for (int b : plan.operands[k]) {
            int p = b < 0 ? -1 : producer[root(b)];
            if (p >= 0 && fold[p])
              run[find(k)] = find(p);
          }
      for (int k = 0; k < n; ++k)
        run[k] = find(k);
    };
    auto polish = [&] {
      for (bool changed = true; changed;) {
        changed = false;
        double best = total();
        for (int k = 0; k < n; ++k) {
          if (!fold[k])
            continue;
          fold[k] = false;
          double t = total();
          if (t > best) {
            best = t;
            changed = true;
          } else {
            fold[k] = true;
          }
        }
        runs();
        for (int k = 0; k < n; ++k) {
          if (!fold[k] || run[k] != k)
            continue;
          std::vector<bool> before = fold;
          for (int j = 0; j < n; ++j)
            if (run[j] == k)
              fold[j] = false;
          double t = total();
          if (t > best) {
            best = t;
            changed = true;
          } else {
            fold = before;
          }
        }
      }
      return total();
    };
    // From every op that may fold folding, and from the best run of
    // consecutive ones (the moves after the first ops would wait for the
    // group's loads, later ones need not).
    fold = can;
    double best = polish();
    std::vector<bool> chosen = fold;
    if (n <= 128) {
      double bestRun = 0;
      std::vector<bool> runFold(n, false);
      for (int i = 0; i < n; ++i)
        for (int j = i + 1; j <= n && can[i]; ++j) {
          if (!can[j - 1])
            continue;
          for (int k = 0; k < n; ++k)
            fold[k] = can[k] && k >= i && k < j;
          double t = total();
          if (t > bestRun)
            bestRun = t, runFold = fold;
        }
      fold = runFold;
      if (bestRun > 0 && polish() > best)
        chosen = fold;
    }
    fold = chosen;
    if (llvm::none_of(fold, [](bool f) { return f; }) || total() <= 0)
      return;
    simulate();
    plan.loadCuts = cuts;
  }
  states(folded);
  // The second buffers: inputs and weights load twice; a result is copied
  // after the op computing it (its view's op for a view).
  std::map<int, int> other;
  const size_t planned = pb.size();
  plan.refolds.assign(n, {});
  for (int k = 0; k < n; ++k)
    for (int &b : plan.operands[k]) {
      if (!mismatched(folded, k, b))
        continue;
      auto it = other.find(b);
      if (it == other.end()) {
        GroupPlan::Buffer c = pb[b];
        c.alias = -1;
        if (c.kind == GroupPlan::Kind::Result)
          c.kind = GroupPlan::Kind::Temp;
        if (c.kind == GroupPlan::Kind::Temp) {
          c.value = Value();
          c.start = producer[b];
          plan.refolds[producer[b]].push_back({b, int(pb.size())});
        }
        folded.push_back(!folded[b]);
        pb.push_back(c);
        it = other.insert({b, int(pb.size()) - 1}).first;
      }
      // The source lives until its copy is made.
      pb[b].end = std::max(pb[b].end, pb[it->second].start);
      b = it->second;
      pb[b].end = std::max(pb[b].end, k);
      // A view reads the copy: it shares that space.
      if (plan.views[k])
        pb[plan.results[k]].alias = b;
    }
  for (auto [i, b] : llvm::enumerate(pb)) {
    if (b.shape[0] <= 1)
      continue;
    bool f = folded[i];
    if (b.kind == GroupPlan::Kind::Temp && i < planned) {
      // An op's temps follow its result.
      for (int k = 0; k < n; ++k)
        if (llvm::is_contained(plan.temps[k], int(i)))
          f = fold[k];
    }
    if (f)
      b.shape = foldedShape(b.shape);
    b.bytes = b.slots * bytesOf(b.shape, b.dtype);
  }
}

/// In a group of whole tensors the GDMA moves of an op moving elements
/// across the lanes (CodegenInterface::localGdmaMoves) would queue behind
/// every load the group issues up front, which its TIU work waits for:
/// the loads of the ops from the first one starting two DDR latencies
/// after it go behind its moves instead (GroupPlan::loadCuts), as after a
/// refold's.
static void cutLoadsAtLaneMoves(GroupPlan &plan, ArrayRef<Operation *> ops,
                                const Target &target) {
  const int n = int(ops.size());
  auto moves = [&](int k) {
    return !plan.views[k] && !plan.loaded[k] &&
           cast<CodegenInterface>(ops[k]).localGdmaMoves(target.lanes) > 0;
  };
  bool any = false;
  for (int k = 0; k < n; ++k)
    any = any || moves(k);
  if (!any)
    return;
  std::vector<double> end(n);
  for (int k = 0; k < n; ++k)
    end[k] = (k ? end[k - 1] : 0) +
             (plan.views[k] || plan.loaded[k]
                  ? 0
                  : estimateLocalTiuCycles(
                        ops[k], target,
                        plan.buffers[plan.results[k]].shape[1],
                        plan.lanes[k]));
  if (plan.loadCuts.empty())
    plan.loadCuts.assign(n, -1);
  int cut = 0;
  for (int k = 0; k < n; ++k) {
    if (plan.loadCuts[k] >= 0 || !moves(k)) {
      cut = std::max(cut, plan.loadCuts[k]);
      continue;
    }
    int j = std::max(cut, k + 2);
    while (j < n && end[j - 1] - end[k] < 2 * target.ddr_latency_cycles)
      ++j;
    plan.loadCuts[k] = cut = std::min(j, n);
  }
}

/// Copies the tensor `from` (in `fromBuf`) into `to` (in `toBuf`), one of
/// them held with its batch folded into the rows, [1, B R, 1, W], the other
/// not, [B, R, 1, W] (GroupPlan::refolds): a GDMA move per image, between
/// its R lanes in the folded form and the first R lanes.
static void emitRefold(CodegenContext &ctx, LBuf &toBuf, const Operand &to,
                       LBuf &fromBuf, const Operand &from) {
  const bool fromFolded = from.shape[0] == 1;
  const Operand &f = fromFolded ? from : to, &u = fromFolded ? to : from;
  const uint32_t lanes = uint32_t(ctx.lanes()), rows = u.shape[1];
  const uint64_t es = dtypeSize(u.dtype);
  for (uint32_t img = 0; img < u.shape[0]; ++img) {
    Operand fp = lmemChannels(f, img * rows, rows, lanes), up = u;
    up.shape[0] = 1;
    up.addr += uint64_t(img) * uint64_t(u.stride[0]) * es;
    if (fromFolded)
      ctx.moveLocal(toBuf, up, fromBuf, fp);
    else
      ctx.moveLocal(toBuf, fp, fromBuf, up);
  }
}

static FailureOr<GroupPlan> planBuffers(ArrayRef<Operation *> ops,
                                        const Target &target, int64_t chunk,
                                        int64_t slices, int64_t nSlices,
                                        bool carry);

/// Plans `ops`; rows-view groups hold `chunk` rows per lane of each tensor
/// (0: all of them); NCHW groups run as `nSlices` slices of the batch, each
/// as `slices` slices of rows. A lane move (GDMA moves between lanes) takes
/// an operand and a result of one slot of the lanes each: a move's part of
/// a tensor of several slots would not be where the bmodel verifier can
/// tell it from a misplaced read. Slices of rows carry their halos from
/// slice to slice where the carried results fit, else recompute them.
static FailureOr<GroupPlan> planChunk(ArrayRef<Operation *> ops,
                                      const Target &target, int64_t chunk,
                                      int64_t slices = 1,
                                      int64_t nSlices = 1) {
  auto plan = planBuffers(ops, target, chunk, slices, nSlices, true);
  if (failed(plan) && slices > 1)
    plan = planBuffers(ops, target, chunk, slices, nSlices, false);
  if (failed(plan))
    return failure();
  for (size_t k = 0; k < ops.size(); ++k) {
    if (plan->views[k] ||
        !cast<CodegenInterface>(ops[k]).localGdmaMoves(target.lanes))
      continue;
    auto oneSlot = [&](int b) {
      return b < 0 || plan->buffers[b].shape[1] <= int64_t(target.lanes);
    };
    if (!oneSlot(plan->results[k]) ||
        (!plan->operands[k].empty() && !oneSlot(plan->operands[k][0])))
      return failure();
  }
  return plan;
}

static FailureOr<GroupPlan> planBuffers(ArrayRef<Operation *> ops,
                                        const Target &target, int64_t chunk,
                                        int64_t slices, int64_t nSlices,
                                        bool carry) {
  GroupPlan plan;
  const int n = int(ops.size());
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  DenseMap<Value, int> byValue; // inputs and results
  std::map<std::pair<void *, std::array<int64_t, 4>>, int> weights;
  auto bytesOf = [&](std::array<int64_t, 4> s, DType t) {
    uint64_t b = lmemBytesPerLane(uint32_t(s[0]), uint32_t(s[1]),
                                  uint32_t(s[2]), uint32_t(s[3]), t, 0,
                                  target.lanes);
    return (b + kAlign - 1) / kAlign * kAlign;
  };
  auto add = [&](GroupPlan::Kind kind, Value v, std::array<int64_t, 4> s,
                 DType t, int start) {
    plan.buffers.push_back({kind, v, s, t, start, start, 0, bytesOf(s, t)});
    return int(plan.buffers.size()) - 1;
  };
  // A group of elementwise ops on tensors that are not NCHW views each
  // tensor as rows of the result's innermost dim W spread over the lanes,
  // [1, C, H, W]: same-size operands take that view, row-broadcast ones
  // (biases) [1, 1, 1, W], scalars [1, 1, 1, 1]; all results share a shape.
  ArrayRef<int64_t> rowsOf = getShape(ops[0]->getResult(0));
  std::optional<std::array<int64_t, 4>> rows;
  bool ownLayouts = llvm::any_of(ops, [](Operation *op) {
    return !cast<CodegenInterface>(op).localResultShape().empty();
  });
  if (useRowsView(ops, ownLayouts)) {
    if (numElements(rowsOf) == 0)
      return failure();
    int64_t w = rowsOf.empty() ? 1 : rowsOf.back();
    int64_t outer = w ? numElements(rowsOf) / w : 0, c = 1;
    for (int64_t d = std::min<int64_t>(outer, target.lanes); d > 1; --d)
      if (outer % d == 0) {
        c = d;
        break;
      }
    // Rows that split over few lanes lose more compute than the group
    // saves in DDR traffic; leave them to the ops' own streaming.
    if (2 * c <= std::min<int64_t>(outer, target.lanes))
      return failure();
    rows = {1, c, outer / c, w};
    plan.rows = (*rows)[2];
    plan.chunk = chunk ? chunk : plan.rows;
    (*rows)[2] = plan.chunk;
  }
  using Shape4 = std::array<int64_t, 4>;
  auto rowsView = [&](ArrayRef<int64_t> s) -> std::optional<Shape4> {
    int64_t e = numElements(s);
    if (e == numElements(rowsOf))
      return *rows;
    if (e == 1)
      return Shape4{1, 1, 1, 1};
    if (!s.empty() && e == s.back() && e == (*rows)[3])
      return Shape4{1, 1, 1, e};
    return std::nullopt;
  };
  // An op adding partial sums the GDMA moves (LaneSplit::moves) waits for
  // the requests queued before the moves. A whole-tensor group queues all
  // its loads before its compute; a sliced one, before slice s computes,
  // the stores of slice s - 1 and the loads of slice s + 1 (its weights
  // load once, ahead). So it moves them only when the TIU work up to its
  // partial sums (estimated at full lanes) outlasts those requests.
  std::vector<bool> movesFit(n, false);
  if (!rows && nSlices <= 1) {
    const bool whole = slices <= 1;
    double queued = 0, tiu = 0;
    auto request = [&](Value v) {
      queued += double(numElements(getShape(v)) *
                       dtypeSize(chipDType(v.getType()))) /
                    target.ddr_bytes_per_cycle +
                target.gdma_issue_cycles;
    };
    llvm::SmallPtrSet<void *, 16> seen;
    for (Operation *op : ops) {
      for (Value v : op->getOperands()) {
        Operation *def = v.getDefiningOp();
        if (isTensor(v) && !(def && members.contains(def)) &&
            (whole || !v.getDefiningOp<top::WeightOp>()) &&
            seen.insert(v.getAsOpaquePointer()).second)
          request(v);
      }
      if (!whole && isStoredInGroup(op, ops))
        request(op->getResult(0));
    }
    for (int k = 0; k < n; ++k) {
      auto cg = cast<CodegenInterface>(ops[k]);
      double own = estimateLocalTiuCycles(ops[k], target, 0, {});
      if (unsigned parts = cg.localLaneParts(target, true); parts > 1)
        movesFit[k] = tiu + own / parts >= queued;
      tiu += own;
    }
  }
  // Ops keeping their operand's bytes in order (Reshapes): a view of
  // them in any layout of as many elements.
  SmallVector<int> foldViews;
  auto keepsBytes = [](Operation *op) {
    auto cg = cast<CodegenInterface>(op);
    return op->getNumOperands() && cg.aliasedOperand() == 0 &&
           cg.aliasedByteOffset() == 0 &&
           numElements(getShape(op->getOperand(0))) ==
               numElements(getShape(op->getResult(0))) &&
           chipDType(op->getOperand(0).getType()) ==
               chipDType(op->getResult(0).getType());
  };
  // The layout the first member reading `v` (through such views) reads it
  // in; empty when none has one of its own.
  std::function<SmallVector<int64_t, 4>(Value)> memberLayout =
      [&](Value v) -> SmallVector<int64_t, 4> {
    for (OpOperand &use : v.getUses()) {
      Operation *u = use.getOwner();
      if (!members.contains(u))
        continue;
      if (use.getOperandNumber() == 0 && keepsBytes(u))
        return memberLayout(u->getResult(0));
      auto l = cast<CodegenInterface>(u).localShape(use.getOperandNumber());
      if (l.size() == 4 && numElements(l) == numElements(getShape(v)))
        return l;
      return {};
    }
    return {};
  };
  for (int k = 0; k < n; ++k) {
    Operation *op = ops[k];
    auto cg = cast<CodegenInterface>(op);
    Value res = op->getResult(0);
    DType t = chipDType(res.getType());
    if (rows && (!cg.localRowwise() || getShape(res) != rowsOf))
      return failure();
    SmallVector<int64_t, 4> resShape = cg.localResultShape();
    // An elementwise op among ops holding their own layouts computes in the layout of its first operand of
    // the result's size held already (else the matrix view [batch, rows,
    // 1, cols] those ops use); row-broadcast operands (biases) and scalars
    // broadcast against it.
    std::optional<std::array<int64_t, 4>> follow;
    if (!rows && resShape.empty() && cg.localElementwise() &&
        (getShape(res).size() != 4 || ownLayouts)) {
      for (Value v : op->getOperands()) {
        auto it = byValue.find(v);
        if (it != byValue.end() &&
            numElements(getShape(v)) == numElements(getShape(res))) {
          follow = plan.buffers[it->second].shape;
          break;
        }
      }
      ArrayRef<int64_t> rs = getShape(res);
      if (!follow && rs.size() >= 2)
        follow = {numElements(rs.drop_back(2)), rs[rs.size() - 2], 1,
                  rs.back()};
      if (!follow)
        return failure();
      resShape.assign(follow->begin(), follow->end());
    }
    if (resShape.empty())
      resShape.assign(getShape(res).begin(), getShape(res).end());
    // An op computing each row on its own (localFoldsBatch) whose first
    // operand the group holds with its batch folded into the rows already,
    // [1, B R, 1, W] (a batch of matrices made one, as a Swin block's
    // window reverse leaves them, read by its LayerNorm), computes folded:
    // its own layout would not be the operand's.
    bool folded = false;
    if (!rows && !follow && cg.localFoldsBatch() && resShape.size() == 4 &&
        resShape[0] > 1 && resShape[2] == 1 && op->getNumOperands()) {
      auto it = byValue.find(op->getOperand(0));
      SmallVector<int64_t, 4> want = cg.localShape(0);
      if (it != byValue.end() && want.size() == 4) {
        const auto &have = plan.buffers[it->second].shape;
        folded = have == std::array<int64_t, 4>{1, want[0] * want[1], 1,
                                                want[3]} &&
                 want[2] == 1 && want[0] == resShape[0];
      }
      if (folded)
        resShape = {1, resShape[0] * resShape[1], 1, resShape[3]};
    }
    if (!rows && (resShape.size() != 4 ||
                  numElements(resShape) != numElements(getShape(res))))
      return failure();
    SmallVector<int, 4> opnds;
    // An op the group loads from its operand's DDR buffer reads nothing in
    // LMEM. An operand the group does not compute is loaded up front; one
    // it computes is stored first (a round trip through DDR).
    Value first = op->getNumOperands() ? op->getOperand(0) : Value();
    bool outside = first && inDdrBeforeGroup(first, ops);
    // An op that only loads (a gather of a weight's rows) may read a
    // weight; others hold a weight operand as such.
    bool loads = cg.localLoad() && first &&
                 (!first.getDefiningOp<top::WeightOp>() || !cg.localCompute()) &&
                 (!cg.localCompute() || outside);
    if (!loads && !cg.localCompute())
      return failure();
    bool bounce = loads && !outside;
    plan.loaded.push_back(loads);
    // An op keeping its operand's bytes in order (a Reshape) views its
    // operand as the group holds it when that gives each lane its result's
    // bytes, in a layout other than the one it reads (a block's tokens
    // folded onto the lanes, then read as the rows of a matrix); an operand
    // the group loads and no member read before loads in its result's.
    bool heldAsIs = false;
    if (!rows && !follow && slices <= 1 && nSlices <= 1 && !loads &&
        keepsBytes(op)) {
      auto want = memberLayout(res);
      auto it = byValue.find(first);
      if (it != byValue.end()) {
        // Or of its folded form, which foldBatches then holds (else the
        // plan fails below), on one slot of the lanes: a refold's move of
        // an image across a slot's end would read as other lanes.
        const auto &held = plan.buffers[it->second].shape;
        auto viewable = [&](ArrayRef<int64_t> l) {
          return sameLaneBytes(held, l) ||
                 (held[0] > 1 && held[2] == 1 &&
                  held[0] * held[1] <= int64_t(target.lanes) &&
                  ArrayRef<int64_t>(foldedShape(held)) == l);
        };
        if (!want.empty() && viewable(want))
          resShape = want;
        heldAsIs = viewable(resShape);
        if (heldAsIs && !sameLaneBytes(held, resShape))
          foldViews.push_back(k);
      } else if (outside && !first.getDefiningOp<top::WeightOp>() &&
                 !want.empty()) {
        resShape = want, heldAsIs = true;
      }
    }
    for (OpOperand &o : op->getOpOperands()) {
      Value v = o.get();
      if (isNone(v) || loads) {
        opnds.push_back(-1);
        continue;
      }
      // An elementwise op's operand with a layout of its own (a lookup
      // table) keeps it in every view.
      SmallVector<int64_t, 4> ls;
      if ((follow || rows) && cg.localElementwise())
        ls = cg.localShape(o.getOperandNumber());
      if (!ls.empty()) {
      } else if (follow) {
        int64_t e = numElements(getShape(v));
        if (e == numElements(getShape(res)))
          ls.assign(follow->begin(), follow->end());
        else if (e == 1 || (e == (*follow)[3] && e == getShape(v).back()))
          ls = {1, 1, 1, e};
        else if (auto bb = batchBroadcast(getShape(v), getShape(res));
                 bb && cg.localBatchBroadcast() && (*follow)[2] == 1 &&
                 (*follow)[0] == bb->outer * bb->inner)
          ls = {bb->heldOuter ? bb->outer : bb->inner, (*follow)[1], 1,
                (*follow)[3]};
        else if (auto m = matrixBroadcast(getShape(v), getShape(res), *follow))
          ls.assign(m->begin(), m->end());
        else
          return failure();
      } else if (rows) {
        auto view = rowsView(getShape(v));
        if (!view)
          return failure();
        ls.assign(view->begin(), view->end());
      } else if (heldAsIs && o.getOperandNumber() == 0) {
        auto it = byValue.find(v);
        if (it != byValue.end())
          ls.assign(plan.buffers[it->second].shape.begin(),
                    plan.buffers[it->second].shape.end());
        else
          ls = resShape;
      } else {
        ls = cg.localShape(o.getOperandNumber());
        if (folded && ls.size() == 4 && ls[0] > 1) {
          if (o.getOperandNumber() != 0)
            return failure();
          ls = {1, ls[0] * ls[1], 1, ls[3]};
        }
      }
      if (ls.empty()) {
        auto s = getShape(v);
        ls.assign(4 - s.size(), 1);
        ls.append(s.begin(), s.end());
      }
      if (ls.size() != 4 ||
          (!rows && numElements(ls) != numElements(getShape(v))))
        return failure();
      std::array<int64_t, 4> s{ls[0], ls[1], ls[2], ls[3]};
      DType vt = chipDType(v.getType());
      int idx;
      if (v.getDefiningOp<top::WeightOp>()) {
        auto key = std::make_pair(v.getAsOpaquePointer(), s);
        auto it = weights.find(key);
        idx = it != weights.end()
                  ? it->second
                  : (weights[key] = add(GroupPlan::Kind::Weight, v, s, vt, 0));
      } else {
        auto it = byValue.find(v);
        if (it == byValue.end())
          it = byValue.insert({v, add(GroupPlan::Kind::Input, v, s, vt, 0)})
                   .first;
        idx = it->second;
        if (plan.buffers[idx].shape != s)
          return failure(); // users disagree on the layout
      }
      plan.buffers[idx].end = k;
      opnds.push_back(idx);
    }
    plan.operands.push_back(opnds);
    // A view of its operand's bytes in a group of whole tensors holds its
    // result in the operand's space (Buffer::alias): no copy.
    int viewed = opnds.empty() ? -1 : opnds[0];
    uint64_t viewOffset = 0;
    if (viewed >= 0 && plan.buffers[viewed].alias >= 0) {
      viewOffset = plan.buffers[viewed].aliasOffset;
      viewed = plan.buffers[viewed].alias;
    }
    std::optional<int64_t> run =
        !rows && slices <= 1 && nSlices <= 1 && !loads && viewed >= 0
            ? (heldAsIs ? std::optional<int64_t>(0) : cg.localView(target.lanes))
            : std::nullopt;
    if (run)
      viewOffset += uint64_t(*run) * dtypeSize(t);
    const bool view =
        run && plan.buffers[viewed].kind != GroupPlan::Kind::Weight &&
        plan.buffers[viewed].dtype == t &&
        viewOffset + bytesOf({resShape[0], resShape[1], resShape[2],
                              resShape[3]},
                             t) <=
            plan.buffers[viewed].bytes;
    if (heldAsIs && !view)
      return failure(); // its code reads the operand in its own layout
    plan.views.push_back(view);
    if (view) {
      int r = add(GroupPlan::Kind::Result, res,
                  {resShape[0], resShape[1], resShape[2], resShape[3]}, t, k);
      plan.buffers[r].alias = viewed;
      plan.buffers[r].aliasOffset = viewOffset;
      byValue[res] = r;
      plan.results.push_back(r);
      plan.temps.push_back({});
      plan.lanes.push_back({});
      plan.stored.push_back(isStoredInGroup(op, ops));
      continue;
    }
    std::array<int64_t, 4> rs;
    if (rows)
      rs = *rows;
    else
      llvm::copy(resShape, rs.begin());
    int r = add(GroupPlan::Kind::Result, res, rs, t, loads && !bounce ? 0 : k);
    byValue[res] = r;
    plan.results.push_back(r);
    SmallVector<int, 2> temps;
    LaneSplit split;
    if (movesFit[k])
      split = {cg.localLaneParts(target, true), true};
    if (split.parts < 2)
      split = {cg.localLaneParts(target, false), false};
    plan.lanes.push_back(split);
    const unsigned nTemps = cg.localTemps() + (split.parts > 1);
    for (unsigned i = 0; i < nTemps; ++i) {
      Type tt = i < cg.localTemps() ? cg.localTempType(i) : Type();
      temps.push_back(add(GroupPlan::Kind::Temp, Value(), plan.buffers[r].shape,
                          tt ? chipDType(tt) : t, k));
    }
    plan.temps.push_back(temps);
    plan.stored.push_back(isStoredInGroup(op, ops));
  }
  if (!rows && slices <= 1 && nSlices <= 1) {
    foldBatches(plan, ops, target, bytesOf);
    cutLoadsAtLaneMoves(plan, ops, target);
  }
  // A view of the folded form finds its operand folded, or reads a refold.
  for (int k : foldViews)
    if (!sameLaneBytes(plan.buffers[plan.operands[k][0]].shape,
                       plan.buffers[plan.results[k]].shape))
      return failure();
  if (nSlices > 1 && (rows || ownLayouts || llvm::is_contained(plan.loaded, true) ||
                      failed(sliceBatch(plan, ops, nSlices))))
    return failure();
  if (slices > 1 || nSlices > 1) {
    if (rows || llvm::is_contained(plan.loaded, true) ||
        failed(sliceRows(plan, ops, members, slices, carry)))
      return failure();
    for (GroupPlan::Buffer &b : plan.buffers)
      b.bytes = b.slots * bytesOf(b.shape, b.dtype);
  }
  if (rows)
    for (GroupPlan::Buffer &b : plan.buffers)
      b.chunked = b.kind == GroupPlan::Kind::Result ||
                  b.kind == GroupPlan::Kind::Temp ||
                  numElements(getShape(b.value)) == numElements(rowsOf);
  // First fit in order of start; buffers conflict when their live ranges meet.
  SmallVector<int> order;
  for (int i = 0; i < int(plan.buffers.size()); ++i)
    order.push_back(i);
  llvm::stable_sort(order, [&](int a, int b) {
    return plan.buffers[a].start < plan.buffers[b].start;
  });
  // The tensors one op reads (and writes) start in different LMEM banks
  // where the space allows, since a TIU instruction reading two sources
  // that start in one bank is slower.
  // The group's size is then a whole number of banks, so its base (either
  // end of LMEM) starts a bank.
  const uint64_t bank = target.bankBytes();
  std::vector<SmallVector<int, 8>> partners(plan.buffers.size());
  for (int k = 0; k < n; ++k) {
    SmallVector<int, 8> mine(plan.temps[k].begin(), plan.temps[k].end());
    mine.push_back(plan.results[k]);
    for (int i : plan.operands[k])
      if (i >= 0)
        mine.push_back(i);
    // A view's space is its alias's.
    for (int &i : mine)
      if (plan.buffers[i].alias >= 0)
        i = plan.buffers[i].alias;
    for (int a : mine)
      for (int b : mine)
        if (a != b)
          partners[a].push_back(b);
  }
  auto banksOf = [&](const GroupPlan::Buffer &b, uint64_t off) {
    SmallVector<uint64_t, 2> banks;
    for (int q = 0; q < b.slots; ++q)
      banks.push_back((off + uint64_t(q) * (b.bytes / b.slots)) / bank);
    return banks;
  };
  // The space of a buffer views alias lives as long as they do.
  auto syncAliases = [&] {
    for (GroupPlan::Buffer &b : plan.buffers)
      if (b.alias >= 0)
        plan.buffers[b.alias].end = std::max(plan.buffers[b.alias].end, b.end);
  };
  syncAliases();
  // A result an op may write over its dying operand (localInPlace) can
  // share that operand's buffer: tried when the group does not fit
  // otherwise (NCHW groups; rows-view chunks alternate their own halves).
  // Not with carried rows, which move the rows an op writes against those
  // it reads.
  std::vector<int> shares(plan.buffers.size(), -1);
  auto carries = [&](int j) {
    return llvm::any_of(plan.carried, [&](const std::vector<Rows> &c) {
      return c[j].size() > 0;
    });
  };
  const bool anyCarried = llvm::any_of(llvm::seq(0, n), carries);
  for (int k = 0; k < n && !rows && !anyCarried; ++k) {
    auto cg = cast<CodegenInterface>(ops[k]);
    GroupPlan::Buffer &r = plan.buffers[plan.results[k]];
    if (plan.loaded[k] || plan.views[k] || !plan.temps[k].empty() ||
        r.kind != GroupPlan::Kind::Result)
      continue;
    for (auto [i, b] : llvm::enumerate(plan.operands[k])) {
      if (b < 0)
        continue;
      const GroupPlan::Buffer &o = plan.buffers[b];
      bool storedResult = llvm::any_of(llvm::seq(0, k), [&](int j) {
        return plan.results[j] == b && plan.stored[j];
      });
      if (o.kind == GroupPlan::Kind::Weight || o.kind == GroupPlan::Kind::Temp ||
          storedResult || o.end != k || o.shape != r.shape ||
          o.dtype != r.dtype || o.slots != r.slots || o.bytes != r.bytes ||
          o.chunked != r.chunked || !cg.localInPlace(unsigned(i)) ||
          llvm::count(plan.operands[k], b) != 1)
        continue;
      shares[plan.results[k]] = b;
      break;
    }
  }
  auto place = [&](bool spreadBanks, bool inPlace = false) -> LogicalResult {
    syncAliases();
    plan.bytes = 0;
    SmallVector<int> placed;
    std::vector<bool> isPlaced(plan.buffers.size(), false);
    for (int i : order) {
      GroupPlan::Buffer &b = plan.buffers[i];
      if (b.alias >= 0)
        continue;
      SmallVector<std::pair<uint64_t, uint64_t>> busy;
      const int shared = inPlace && shares[i] >= 0 && isPlaced[shares[i]]
                             ? shares[i]
                             : -1;
      for (int j : placed) {
        const GroupPlan::Buffer &o = plan.buffers[j];
        if (j != shared && o.start <= b.end && b.start <= o.end)
          busy.push_back({o.offset, o.offset + o.bytes});
      }
      llvm::sort(busy);
      if (shared >= 0) {
        uint64_t at = plan.buffers[shared].offset;
        if (llvm::none_of(busy, [&](std::pair<uint64_t, uint64_t> r) {
              return at + b.bytes > r.first && at < r.second;
            })) {
          b.offset = at;
          plan.bytes = std::max(plan.bytes, at + b.bytes);
          placed.push_back(i);
          isPlaced[i] = true;
          continue;
        }
        busy.push_back({at, at + plan.buffers[shared].bytes});
        llvm::sort(busy);
      }
      SmallVector<uint64_t, 8> taken;
      if (spreadBanks)
        for (int j : partners[i])
          if (isPlaced[j])
            llvm::append_range(taken, banksOf(plan.buffers[j], plan.buffers[j].offset));
      auto clash = [&](uint64_t off) {
        return llvm::any_of(banksOf(b, off), [&](uint64_t k) {
          return llvm::is_contained(taken, k);
        });
      };
      uint64_t off = 0;
      for (bool moved = true; moved;) {
        moved = false;
        for (auto [lo, hi] : busy)
          if (off + b.bytes > lo && off < hi && hi > off)
            off = hi, moved = true;
        if (clash(off) && off + b.bytes <= target.lmem_bytes_per_lane)
          off = (off / bank + 1) * bank, moved = true;
      }
      b.offset = off;
      plan.bytes = std::max(plan.bytes, off + b.bytes);
      if (spreadBanks)
        plan.bytes = (plan.bytes + bank - 1) / bank * bank;
      if (plan.bytes > target.lmem_bytes_per_lane)
        return failure();
      placed.push_back(i);
      isPlaced[i] = true;
    }
    for (GroupPlan::Buffer &b : plan.buffers)
      if (b.alias >= 0)
        b.offset = plan.buffers[b.alias].offset + b.aliasOffset;
    return success();
  };
  // Where the space allows, a stored result of a whole-tensor group keeps
  // its buffer to the group's end: a later op writing over it would wait
  // for its store (the DDR latency) before it starts.
  if (slices <= 1 && !rows) {
    SmallVector<int64_t> ends;
    for (GroupPlan::Buffer &b : plan.buffers)
      ends.push_back(b.end);
    for (int k = 0; k < n; ++k)
      if (plan.stored[k])
        plan.buffers[plan.results[k]].end = n - 1;
    if (succeeded(place(true)))
      return plan;
    for (auto [b, e] : llvm::zip(plan.buffers, ends))
      b.end = e;
  }
  if (succeeded(place(true)) || succeeded(place(false)) ||
      succeeded(place(false, /*inPlace=*/true)))
    return plan;
  return failure();
}

/// Filters of at least this many bytes load in runs of output channels in
/// a whole-tensor group or the first slice of a sliced one (fewer bytes:
/// the run's DDR latency is not paid back), in at most this many runs.
static constexpr int64_t kSplitFilterBytes = 32 * 1024;
static constexpr int64_t kFilterRuns = 8;

/// A group whose whole tensors fit is sliced only when that is estimated to
/// take at most this fraction of its whole-tensor cycles.
static constexpr double kSliceGain = 0.85;

/// Most slices a sliced group is cut into.
static constexpr int64_t kMaxSlices = 64;

/// Fewest rows per lane a chunk of a rows-view group holds to alternate
/// between two halves: below, each chunk's fixed costs (its reloaded
/// broadcast operands, the issue of every instruction) outweigh the
/// overlap.
static constexpr int64_t kMinPingPongRows = 2;

/// Rows view: the most rows per lane that fit (bytes grow with rows); or,
/// when at least kMinPingPongRows fit twice, the most that do, so chunks
/// alternate between two halves of the space and each one's loads overlap
/// the previous one's compute (GroupPlan::pingPongHalf).
static FailureOr<GroupPlan> planRowChunks(ArrayRef<Operation *> ops,
                                          const Target &target) {
  const uint64_t lmem = target.lmem_bytes_per_lane;
  auto fits = [&](int64_t rows, bool twice) -> FailureOr<GroupPlan> {
    auto p = planChunk(ops, target, rows);
    if (succeeded(p) && twice && !p->pingPongHalf(lmem))
      return failure();
    return p;
  };
  auto most = [&](bool twice, int64_t lo) -> FailureOr<GroupPlan> {
    auto best = fits(lo, twice);
    if (failed(best))
      return failure();
    int64_t hi = best->rows; // lo fits, hi does not
    while (hi - lo > 1) {
      int64_t mid = (lo + hi) / 2;
      auto p = fits(mid, twice);
      if (succeeded(p))
        best = std::move(p), lo = mid;
      else
        hi = mid;
    }
    return best;
  };
  auto twice = most(true, kMinPingPongRows);
  return succeeded(twice) ? twice : most(false, 1);
}

FailureOr<GroupPlan> planLayerGroup(ArrayRef<Operation *> ops,
                                    const Target &target) {
  auto whole = planChunk(ops, target, 0);
  bool ownLayouts = llvm::any_of(ops, [](Operation *op) {
    return !cast<CodegenInterface>(op).localResultShape().empty();
  });
  ArrayRef<int64_t> first = getShape(ops[0]->getResult(0));
  if (first.size() != 4 || useRowsView(ops, ownLayouts))
    return succeeded(whole) ? whole : planRowChunks(ops, target);
  // Among the plans that fit, the one estimated fastest: whole tensors,
  // slices of the batch (no halo; they also pipeline a batch that fits
  // whole), and slices of rows of the whole batch or, for a slice of the
  // batch too big whole, of it. Plans without slices of rows are kept
  // unless those (which overlap the first load and the last store with
  // compute, at the cost of halos and more requests) are estimated
  // clearly faster (kSliceGain). The fewest rows a result has bounds the
  // slices along H.
  int64_t most = kMaxSlices;
  for (Operation *op : ops)
    if (getShape(op->getResult(0)).size() == 4)
      most = std::min(most, getShape(op->getResult(0))[2]);
  FailureOr<GroupPlan> best = failure();
  double bestCycles = 0;
  auto consider = [&](FailureOr<GroupPlan> p, double gain) {
    if (failed(p))
      return false;
    double c = gain * estimateGroupCycles(ops, *p, target);
    if (failed(best) || c < bestCycles)
      best = std::move(p), bestCycles = c;
    return true;
  };
  for (int64_t n = 1; n <= first[0]; ++n) {
    if (first[0] % n)
      continue;
    bool fits = n == 1 ? consider(std::move(whole), kSliceGain)
                       : consider(planChunk(ops, target, 0, 1, n), kSliceGain);
    if (fits && n != 1)
      continue;
    // Slices of rows within a part of the batch: tried for the whole batch
    // and single images only, which bounds the search.
    if (n != 1 && n != first[0])
      continue;
    for (int64_t s = 2; s <= most; ++s)
      consider(planChunk(ops, target, 0, s, n), 1.0);
  }
  return best;
}

FailureOr<GroupPlan> planLayerGroup(ArrayRef<Operation *> ops,
                                    const Target &target, int64_t nSlices,
                                    int64_t slices, int64_t chunk) {
  return planChunk(ops, target, chunk, slices, nSlices);
}

/// Whether `v` holds its data in DDR before `group` runs: defined before
/// it, or a view in place of such a value.
static bool readyBefore(Value v, Operation *group) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return true;
  if (def->getBlock() == group->getBlock() && def->isBeforeInBlock(group))
    return true;
  auto cg = dyn_cast<CodegenInterface>(def);
  int a = cg ? cg.aliasedOperand() : -1;
  if (a < 0 || def->getBlock() != group->getBlock())
    return false;
  auto at = ddrAddr(v), src = ddrAddr(def->getOperand(a));
  return at && src && *at == *src + uint64_t(cg.aliasedByteOffset()) &&
         readyBefore(def->getOperand(a), group);
}

/// The operands of the tpu.Concats `group`'s results are stored in place
/// into (through views in place) that are ready before the group: copying
/// them while the group computes takes the copies off the path from its
/// stores to the next op's loads. The Concat's DDR buffer holds the group's
/// result, so it is live, and these bytes free, from the group's start.
static SmallVector<OpOperand *> concatOperandsAhead(tpu::GroupOp group) {
  SmallVector<OpOperand *> ahead;
  Operation *g = group.getOperation();
  SmallVector<Value> work(g->getResults().begin(), g->getResults().end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    auto at = ddrAddr(v);
    if (!at)
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *u = use.getOwner();
      if (auto concat = dyn_cast<tpu::ConcatOp>(u)) {
        if (concat.getDoRelu() || u->getBlock() != g->getBlock() ||
            !ddrBlockStride(v))
          continue;
        for (OpOperand &other : u->getOpOperands())
          if (&other != &use && readyBefore(other.get(), g) &&
              !llvm::is_contained(ahead, &other))
            ahead.push_back(&other);
        continue;
      }
      auto cg = dyn_cast<CodegenInterface>(u);
      if (!cg || cg.aliasedOperand() != int(use.getOperandNumber()) ||
          cg.aliasedByteOffset() != 0 || u->getNumResults() != 1)
        continue;
      if (auto to = ddrAddr(u->getResult(0)); to && *to == *at)
        work.push_back(u->getResult(0));
    }
  }
  return ahead;
}

/// Copies the operands of concatOperandsAhead(group) now.
static LogicalResult copyAhead(CodegenContext &ctx,
                               ArrayRef<OpOperand *> ahead) {
  for (OpOperand *use : ahead) {
    if (failed(copyConcatOperand(ctx, *use)))
      return failure();
    ctx.copiedAhead.insert(use);
  }
  return success();
}

/// An op computing runs of its output channels on their own
/// (localChannelRuns) whose filter is large and first used by it loads the
/// filter in runs of whole lane slots, and computes each run once it is in:
/// the TIU starts after the first run, not the whole filter. Per op, the
/// runs of its output channels (empty: not split). In a sliced group only
/// the first slice computes in runs: later ones find the filter loaded.
static std::vector<SmallVector<std::pair<int64_t, int64_t>, 8>>
filterRuns(ArrayRef<Operation *> ops, const GroupPlan &plan, int64_t lanes) {
  const auto &pb = plan.buffers;
  std::vector<SmallVector<std::pair<int64_t, int64_t>, 8>> split(ops.size());
  std::vector<bool> seen(pb.size(), false);
  for (size_t k = 0; k < ops.size(); ++k) {
    const auto &opnds = plan.operands[k];
    int fi = opnds.size() > 1 ? opnds[1] : -1;
    bool first = fi >= 0 && !seen[fi];
    for (int i : opnds)
      if (i >= 0)
        seen[i] = true;
    if (plan.rows || !cast<CodegenInterface>(ops[k]).localChannelRuns() ||
        !first || pb[fi].kind != GroupPlan::Kind::Weight ||
        numElements(pb[fi].shape) * dtypeSize(pb[fi].dtype) < kSplitFilterBytes)
      continue;
    const int64_t oc = pb[fi].shape[1], slotsOc = (oc + lanes - 1) / lanes;
    if (slotsOc < 2)
      continue;
    const int64_t runs = std::min<int64_t>(slotsOc, kFilterRuns);
    const int64_t per = (slotsOc + runs - 1) / runs * lanes;
    for (int64_t c = 0; c < oc; c += per)
      split[k].push_back({c, std::min(per, oc - c)});
  }
  return split;
}

/// Channels [c, c + n) of an LMEM tensor (c a multiple of the lanes).
static Operand channelsOf(Operand o, int64_t c, int64_t n, int64_t lanes) {
  o.addr += uint64_t(c / lanes * o.stride[1]) * dtypeSize(o.dtype);
  o.shape[1] = uint32_t(n);
  return o;
}

/// Loads filter `from` into `buf` (held as `to`) in `runs` of output
/// channels, one LBuf per run in `runBufs`: `buf` is loaded once its last
/// run is. With `which`, only the runs it accepts (it may narrow the run's
/// fences), the others in a later call.
static void loadFilterRuns(CodegenContext &ctx, LBuf &buf, const Operand &to,
                           const Operand &from,
                           ArrayRef<std::pair<int64_t, int64_t>> runs,
                           SmallVectorImpl<LBuf> &runBufs,
                           function_ref<bool(size_t, LBuf &)> which = nullptr) {
  runBufs.resize(runs.size());
  for (auto [j, cn] : llvm::enumerate(runs)) {
    auto [c, n] = cn;
    Operand d = from;
    d.addr += uint64_t(c * d.stride[1]) * dtypeSize(d.dtype);
    d.shape[1] = uint32_t(n);
    LBuf run = buf;
    if (which && !which(j, run))
      continue;
    ctx.load(run, channelsOf(to, c, n, ctx.lanes()), d);
    runBufs[j] = run;
    buf.gdma = std::max(buf.gdma, run.gdma);
  }
}

/// Emits `op` one run of its output channels at a time, each waiting only
/// for its part (`runBufs`) of the filter (operand 1, whose whole buffer is
/// `filter`).
static LogicalResult emitChannelRuns(CodegenContext &ctx, Operation *op,
                                     const LocalOperands &lo,
                                     ArrayRef<std::pair<int64_t, int64_t>> runs,
                                     MutableArrayRef<LBuf> runBufs,
                                     LBuf &filter) {
  for (auto [j, cn] : llvm::enumerate(runs)) {
    auto [c, n] = cn;
    LocalOperands part = lo;
    part.operands[1] = {channelsOf(lo.operands[1].lmem, c, n, ctx.lanes()),
                        &runBufs[j]};
    if (part.operands.size() > 2 && part.operands[2].buf)
      part.operands[2].lmem =
          channelsOf(part.operands[2].lmem, c, n, ctx.lanes());
    part.result.lmem = channelsOf(lo.result.lmem, c, n, ctx.lanes());
    if (failed(cast<CodegenInterface>(op).codegenLocal(ctx, part)))
      return op->emitOpError() << "failed to generate code in a layer group";
    filter.tiu = std::max(filter.tiu, runBufs[j].tiu);
  }
  return success();
}

/// Emits a group sliced along N and/or H, a loop over the slices of the
/// batch and, within each, over the slices of rows: the next slice's inputs
/// load (into the other slot) before the current one computes, and its
/// stored results leave after its compute, so the GDMA queue holds the next
/// loads ahead of the stores waiting on the TIU.
static LogicalResult emitSliced(CodegenContext &ctx, ArrayRef<Operation *> ops,
                                const GroupPlan &plan, const LBuf &base,
                                ArrayRef<OpOperand *> ahead) {
  const auto &pb = plan.buffers;
  std::vector<std::array<LBuf, 2>> bufs(pb.size());
  std::vector<std::array<bool, 2>> made(pb.size(), {false, false});
  auto slotBytes = [&](int i) { return pb[i].bytes / pb[i].slots; };
  auto addrOf = [&](int i, int q) {
    return base.addr + pb[i].offset + uint64_t(q) * slotBytes(i);
  };
  // A buffer starts fenced on the earlier ops' instructions touching its
  // part of the group's space (not the whole of it: the first loads need
  // not wait for the previous op's last compute elsewhere) and on every
  // earlier buffer of the group it overlaps.
  auto make = [&](int i, int q) -> LBuf & {
    LBuf b = ctx.part(addrOf(i, q), slotBytes(i));
    for (size_t j = 0; j < pb.size(); ++j)
      for (int r = 0; r < pb[j].slots; ++r)
        if (made[j][r] && addrOf(int(j), r) < b.addr + b.bytes &&
            b.addr < addrOf(int(j), r) + slotBytes(int(j))) {
          b.tiu = std::max(b.tiu, bufs[j][r].tiu);
          b.gdma = std::max(b.gdma, bufs[j][r].gdma);
        }
    bufs[i][q] = b;
    made[i][q] = true;
    return bufs[i][q];
  };
  // Slice g is slice g % S of rows of the (g / S)th slice of the batch.
  const int64_t S = plan.slices, G = plan.nSlices * S;
  auto slot = [&](int i, int64_t g) { return int(g % pb[i].slots); };
  // `rows` of the buffer's tensor; the buffer holds rows `held`.
  auto lmem = [&](int i, int64_t g, Rows held, Rows rows) {
    const auto &sh = pb[i].shape;
    Operand o = lmemTensor(addrOf(i, slot(i, g)), uint32_t(sh[0]),
                           uint32_t(sh[1]), uint32_t(held.size()),
                           uint32_t(sh[3]), pb[i].dtype);
    o.addr += uint64_t((rows.lo - held.lo) * sh[3]) * dtypeSize(pb[i].dtype);
    o.shape[2] = uint32_t(rows.size());
    return o;
  };
  // `rows` of the images of slice g's part of the batch.
  auto ddr = [&](int i, uint64_t addr, int64_t g, Rows rows) {
    const auto &sh = pb[i].shape;
    const int64_t h = pb[i].height, w = sh[3], n0 = g / S * sh[0];
    Operand o = ddrOperand(addr + uint64_t(rows.lo * w) * dtypeSize(pb[i].dtype),
                           {sh[0], sh[1], rows.size(), w},
                           {sh[1] * h * w, h * w, w, 1}, pb[i].dtype);
    if (auto bs = ddrBlockStride(pb[i].value))
      o = *withBlockStride(o, {sh[0], sh[1], h, w}, *bs);
    o.addr += uint64_t(n0 * o.stride[0]) * dtypeSize(pb[i].dtype);
    return o;
  };
  auto heldRows = [&](int i, int64_t g) -> Rows {
    if (pb[i].kind == GroupPlan::Kind::Weight)
      return {0, pb[i].shape[2]};
    return plan.held[g % S][i];
  };
  // The first slice computes a split filter's runs as they arrive.
  std::vector<SmallVector<std::pair<int64_t, int64_t>, 8>> split =
      filterRuns(ops, plan, ctx.lanes());
  std::vector<SmallVector<LBuf, 8>> runBufs(ops.size());
  // Weights load in the first slice, in order of first use among inputs;
  // a split filter after its op's other operands, so its first run is all
  // the op waits for.
  // In the first slice, when an input waits for the previous op's
  // held-back stores, the weights (and runs of a split filter) whose LMEM
  // the previous op's last compute leaves alone go ahead of it: the GDMA
  // moves them while that op computes, instead of queueing them behind
  // those stores and the input while the TIU idles.
  auto inputsWait = [&]() {
    for (size_t i = 0; i < pb.size(); ++i) {
      if (pb[i].kind != GroupPlan::Kind::Input)
        continue;
      Rows rows = heldRows(int(i), 0);
      auto addr = ddrAddr(pb[i].value);
      if (rows.size() && addr &&
          ctx.loadWaitsForDeferred(ctx.part(addrOf(int(i), 0), slotBytes(int(i))),
                                   ddr(int(i), *addr, 0, rows)))
        return true;
    }
    return false;
  };
  uint32_t busyFrom = 0;
  auto freeOfLast = [&](uint64_t addr, uint64_t bytes) {
    return ctx.part(addr, bytes).tiu < busyFrom;
  };
  std::vector<SmallVector<bool, 8>> runLoaded(ops.size());
  auto loadSlice = [&](int64_t g) -> LogicalResult {
    std::vector<bool> loaded(pb.size(), false);
    auto isRuns = [&](size_t k, size_t j) { return j == 1 && !split[k].empty(); };
    // early: only the free weights and runs.
    auto loadOperand = [&](size_t k, size_t j, int i, bool early) -> LogicalResult {
      if (i < 0 || pb[i].kind == GroupPlan::Kind::Result ||
          pb[i].kind == GroupPlan::Kind::Temp || loaded[i] ||
          (pb[i].kind == GroupPlan::Kind::Weight && g > 0) ||
          (early && pb[i].kind != GroupPlan::Kind::Weight))
        return success();
      const bool runs = isRuns(k, j);
      if (early && !runs && !freeOfLast(addrOf(i, 0), slotBytes(i)))
        return success();
      Rows rows = heldRows(i, g);
      if (!rows.size()) {
        loaded[i] = true;
        return success();
      }
      auto addr = ddrAddr(pb[i].value);
      if (!addr)
        return ctx.error() << "group operand has no DDR address";
      LBuf &b = made[i][slot(i, g)] && g == 0 && runs ? bufs[i][slot(i, g)]
                                                       : make(i, slot(i, g));
      Operand to = lmem(i, g, rows, rows), from = ddr(i, *addr, g, rows);
      if (!runs) {
        loaded[i] = true;
        ctx.load(b, to, from);
        if (pb[i].kind == GroupPlan::Kind::Weight)
          cast<CodegenInterface>(ops[k]).codegenLocalWeightLayout(
              ctx, unsigned(j), b, to, plan.lanes[k]);
        return success();
      }
      // A run of whole lane slots is its own byte range of the filter.
      const uint64_t wholeTiu = ctx.part(b.addr, b.bytes).tiu;
      runLoaded[k].resize(split[k].size(), false);
      loadFilterRuns(ctx, b, to, from, split[k], runBufs[k],
                     [&](size_t r, LBuf &run) {
                       if (runLoaded[k][r])
                         return false;
                       Operand t = channelsOf(to, split[k][r].first,
                                              split[k][r].second, ctx.lanes());
                       LBuf own = ctx.part(
                           t.addr, ctx.lmemBytes({t.shape[0], t.shape[1],
                                                  t.shape[2], t.shape[3]},
                                                 t.dtype));
                       if (b.tiu <= wholeTiu)
                         run = own;
                       if (early && run.tiu >= busyFrom)
                         return false;
                       runLoaded[k][r] = true;
                       return true;
                     });
      loaded[i] = !early || llvm::all_of(runLoaded[k], [](bool l) { return l; });
      return success();
    };
    const bool early = g == 0 && inputsWait();
    busyFrom = ctx.deferredTiuWait();
    for (bool pass : {true, false}) {
      if (pass && !early)
        continue;
      for (auto [k, opnds] : llvm::enumerate(plan.operands))
        for (bool runs : {false, true})
          for (auto [j, i] : llvm::enumerate(opnds))
            if (isRuns(k, j) == runs && failed(loadOperand(k, j, i, pass)))
              return failure();
    }
    return success();
  };

  // Later slices read the inputs after earlier ones stored results: their
  // DDR buffers must be apart (tpu-assign-address after tpu-layer-group).
  auto ddrRange = [&](int i) {
    Value v = pb[i].value;
    uint64_t lo = ddrAddr(v).value_or(0), n = numElements(getShape(v));
    // A tensor placed in strided blocks spans to the end of its last one.
    if (auto bs = ddrBlockStride(v))
      n = (n / bs->first - 1) * bs->second + bs->first;
    return std::make_pair(lo, lo + n * dtypeSize(pb[i].dtype));
  };
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!plan.stored[k])
      continue;
    auto [rlo, rhi] = ddrRange(plan.results[k]);
    for (size_t i = 0; i < pb.size(); ++i) {
      if (pb[i].kind != GroupPlan::Kind::Input)
        continue;
      auto [ilo, ihi] = ddrRange(int(i));
      if (ilo < rhi && rlo < ihi)
        return ops[k]->emitOpError()
               << "is stored by a sliced layer group over the DDR buffer of "
                  "one of the group's inputs";
    }
  }

  // The copies ahead go behind the last slice's loads: the GDMA has no
  // other work while the TIU computes the last slices, whereas earlier they
  // would hold back the next slice's loads and stall the TIU.
  if (failed(loadSlice(0)) || (G == 1 && failed(copyAhead(ctx, ahead))))
    return failure();
  for (int64_t g = 0; g < G; ++g) {
    const int64_t s = g % S;
    // When this slice's results or scratch reuse the LMEM the previous
    // op's held-back stores read, those stores go before the next slice's
    // loads: the TIU would wait for them behind those loads.
    auto reusesHeld = [&](int i, int q) {
      return ctx.overlapsDeferred(addrOf(i, q), addrOf(i, q) + slotBytes(i));
    };
    bool reuse = false;
    for (size_t k = 0; k < ops.size() && !reuse && g + 1 < G; ++k) {
      int r = plan.results[k];
      reuse = (plan.held[s][r].size() && reusesHeld(r, slot(r, g))) ||
              llvm::any_of(plan.temps[k], [&](int i) { return reusesHeld(i, 0); });
    }
    if (reuse)
      ctx.flushStores();
    if (g + 1 < G && failed(loadSlice(g + 1)))
      return failure();
    if (g + 2 == G && failed(copyAhead(ctx, ahead)))
      return failure();
    for (size_t k = 0; k < ops.size(); ++k) {
      int r = plan.results[k];
      Rows held = plan.held[s][r], out = plan.computed[s][k],
           carried = plan.carried[s][k];
      if (!held.size())
        continue;
      LBuf &resBuf = make(r, slot(r, g));
      // The rows the previous slice computed move to the top of the
      // buffer (a TIU copy: it follows that slice's compute in order).
      if (carried.size()) {
        Operand from = lmem(r, g - 1, plan.held[(g - 1) % S][r], carried);
        ctx.tiu(makeCast(lmem(r, g, held, carried), from),
                {&bufs[r][slot(r, g - 1)], &resBuf});
      }
      if (!out.size())
        continue;
      LocalOperands lo;
      lo.ctx = &ctx;
      lo.lanes = plan.lanes[k];
      lo.rows = {{out.lo, out.hi}};
      for (auto [j, i] : llvm::enumerate(plan.operands[k]))
        lo.operands.push_back(
            i < 0 ? LocalTensor{}
                  : LocalTensor{lmem(i, g, heldRows(i, g), plan.reads[s][k][j]),
                                &bufs[i][slot(i, g)]});
      lo.result = {lmem(r, g, held, out), &resBuf};
      for (int i : plan.temps[k])
        lo.temps.push_back({lmem(i, g, {0, out.size()}, {0, out.size()}),
                            &make(i, 0)});
      if (g == 0 && !runBufs[k].empty()) {
        int fi = plan.operands[k][1];
        if (failed(emitChannelRuns(ctx, ops[k], lo, split[k], runBufs[k],
                                   bufs[fi][slot(fi, g)])))
          return failure();
        continue;
      }
      if (failed(cast<CodegenInterface>(ops[k]).codegenLocal(ctx, lo)))
        return ops[k]->emitOpError()
               << "failed to generate code in a layer group";
    }
    // Stores follow the slice's compute: a TIU instruction writing a buffer
    // would wait for a store reading it.
    for (size_t k = 0; k < ops.size(); ++k) {
      int r = plan.results[k];
      Rows out = plan.held[s][r], st = plan.storedRows[s][k];
      if (!plan.stored[k] || !st.size())
        continue;
      auto addr = ddrAddr(pb[r].value);
      if (!addr)
        return ops[k]->emitOpError() << "has no DDR address";
      ctx.store(ddr(r, *addr, g, st), bufs[r][slot(r, g)],
                lmem(r, g, out, st));
    }
  }
  return success();
}

LogicalResult emitLayerGroup(CodegenContext &ctx, tpu::GroupOp group) {
  SmallVector<Operation *> ops = group.getMembers();
  if (group.getTileEpilogue())
    return emitTileEpilogue(ctx, ops);
  auto plan = planLayerGroup(ops, ctx.target(), group.getNSlices(),
                             group.getHSlices(), group.getRowChunk());
  if (failed(plan))
    return ctx.error() << "starts a layer group of " << ops.size()
                       << " ops that does not fit local memory";
  // Chunks of rows alternate between two halves when twice the buffers
  // fit (and no op reloads a stored result, whose load must follow the
  // store); else one set of buffers serves every chunk in turn.
  uint64_t half = llvm::is_contained(plan->loaded, true)
                      ? 0
                      : plan->pingPongHalf(ctx.target().lmem_bytes_per_lane);
  std::optional<LBuf> base = half ? ctx.alloc(2 * half) : std::nullopt;
  if (!base)
    half = 0, base = ctx.alloc(plan->bytes);
  if (!base)
    return ctx.error() << "layer group needs " << plan->bytes
                       << " bytes per lane of local memory";
  // tpu-assign-address places only NCHW results in strided blocks.
  for (const auto &b : plan->buffers) {
    if (!b.value || !ddrBlockStride(b.value))
      continue;
    auto v = getShape(b.value);
    if (!plan->holdsNchw(b, v) ||
        !withBlockStride(Operand{}, {v[0], v[1], v[2], v[3]},
                         *ddrBlockStride(b.value)))
      return ctx.error() << "a layer group result placed in strided DDR blocks "
                            "is not stored in the NCHW layout";
  }
  // Copies into the Concats holding the group's results go after its
  // first loads, so those need not wait for them.
  SmallVector<OpOperand *> ahead = concatOperandsAhead(group);
  if (plan->looped())
    return emitSliced(ctx, ops, *plan, *base, ahead);
  const auto &pb = plan->buffers;
  std::vector<LBuf> bufs(pb.size()), otherBufs(pb.size());
  std::vector<bool> made(pb.size(), false), otherMade(pb.size(), false);
  int64_t parity = 0; // the half the current chunk's buffers are in
  // A buffer starts fenced as in emitSliced (in its half, on the users of
  // the chunk before the previous one).
  auto make = [&](int i) {
    LBuf b = ctx.part(base->addr + uint64_t(parity) * half + pb[i].offset,
                      pb[i].bytes);
    for (size_t j = 0; j < pb.size(); ++j)
      if (made[j] && pb[j].offset < pb[i].offset + pb[i].bytes &&
          pb[i].offset < pb[j].offset + pb[j].bytes) {
        b.tiu = std::max(b.tiu, bufs[j].tiu);
        b.gdma = std::max(b.gdma, bufs[j].gdma);
      }
    bufs[i] = b;
    made[i] = true;
  };
  // Rows of the current chunk per lane: [h0, h0 + hc).
  int64_t h0 = 0, hc = 0;
  auto shapeOf = [&](int i) {
    std::array<int64_t, 4> s = pb[i].shape;
    if (pb[i].chunked)
      s[2] = hc;
    return s;
  };
  auto lmem = [&](int i) {
    auto s = shapeOf(i);
    return lmemTensor(bufs[i].addr, uint32_t(s[0]), uint32_t(s[1]),
                      uint32_t(s[2]), uint32_t(s[3]), pb[i].dtype);
  };
  auto ddr = [&](int i, uint64_t addr) {
    auto s = shapeOf(i);
    if (!pb[i].chunked) {
      Operand o = ddrTensor(addr, uint32_t(s[0]), uint32_t(s[1]), uint32_t(s[2]),
                            uint32_t(s[3]), pb[i].dtype);
      if (auto bs = ddrBlockStride(pb[i].value))
        o = *withBlockStride(o, s, *bs);
      return o;
    }
    // A chunk is rows [h0, h0 + hc) of each lane's rows of the whole tensor.
    int64_t w = s[3], h = plan->rows;
    Operand o = ddrTensor(addr + uint64_t(h0 * w) * dtypeSize(pb[i].dtype),
                          uint32_t(s[0]), uint32_t(s[1]), uint32_t(hc),
                          uint32_t(w), pb[i].dtype);
    o.stride[0] = int32_t(s[1] * h * w);
    o.stride[1] = int32_t(h * w);
    o.stride[2] = int32_t(w);
    o.stride[3] = 1;
    return o;
  };

  std::vector<SmallVector<std::pair<int64_t, int64_t>, 8>> split =
      filterRuns(ops, *plan, ctx.lanes());
  // Per split op, the LBuf of each run of its filter.
  std::vector<SmallVector<LBuf, 8>> runBufs(ops.size());

  // Groups not in the rows view are one chunk. Each chunk reloads its
  // operands (broadcast ones are small) and fences on the previous one's
  // users of the same space.
  int64_t rows = plan->rows ? plan->rows : 1,
          chunk = plan->rows ? plan->chunk : 1;
  const int64_t nChunks = (rows + chunk - 1) / chunk;
  // Makes chunk c current: its rows and its half's buffers.
  auto useChunk = [&](int64_t c) {
    h0 = c * chunk;
    hc = std::min(chunk, rows - h0);
    if (half && c % 2 != parity) {
      std::swap(bufs, otherBufs);
      std::swap(made, otherMade);
      parity = c % 2;
    }
  };
  std::vector<bool> loaded;
  std::vector<SmallVector<uint32_t, 8>> partLoads;
  // Loads in order of first use; results the group loads (localLoad)
  // in their op's place; a weight its first user asks for in parts of
  // its columns (localColumnParts), or a split filter, loads part by part
  // after that op's other operands, so its first part is all the op
  // waits for.
  auto loadResult = [&](size_t k) -> LogicalResult {
    int r = plan->results[k];
    auto addr = ddrAddr(ops[k]->getOperand(0));
    if (!addr)
      return ctx.error() << "group operand has no DDR address";
    make(r);
    if (failed(cast<CodegenInterface>(ops[k]).codegenLocalLoad(
            ctx, bufs[r], lmem(r), *addr)))
      return ops[k]->emitOpError()
             << "failed to generate its load in a layer group";
    return success();
  };
  // Whether op k's loaded result comes from a member's stored one.
  auto bounces = [&](size_t k) {
    return !inDdrBeforeGroup(ops[k]->getOperand(0), ops);
  };
  // A reload of a result the group stores waits in the GDMA queue behind
  // every load issued before it: the loads of the ops after it issue
  // right after it, not all at the group's start.
  auto nextBounce = [&](size_t k) {
    while (k < ops.size() && !(plan->loaded[k] && bounces(k)))
      ++k;
    return k;
  };
  auto loadOps = [&](size_t from, size_t to) -> LogicalResult {
    for (size_t k = from; k < to; ++k) {
      if (plan->loaded[k] && !bounces(k) && failed(loadResult(k)))
        return failure();
      auto partsOf = [&](unsigned j, int i) -> unsigned {
        return plan->rows || pb[i].kind != GroupPlan::Kind::Weight
                   ? 1
                   : cast<CodegenInterface>(ops[k]).localColumnParts(j);
      };
      auto rowPartsOf = [&](unsigned j, int i) -> unsigned {
        return partsOf(j, i) > 1 || plan->rows ||
                       pb[i].kind != GroupPlan::Kind::Weight
                   ? 1
                   : cast<CodegenInterface>(ops[k]).localRowParts(
                         j, ctx.lanes());
      };
      // An op's whole weights load before its activations when smaller:
      // they depend on nothing, so they go while the previous group's
      // stores are in flight, and the activation loads, which wait for
      // those, stay last; a large filter would delay the first compute.
      auto bytesOf = [&](int i) {
        return numElements(pb[i].shape) * dtypeSize(pb[i].dtype);
      };
      int64_t weightBytes = 0, inputBytes = 0;
      for (int i : plan->operands[k])
        if (i >= 0 && !loaded[i] && pb[i].kind == GroupPlan::Kind::Weight)
          weightBytes += bytesOf(i);
        else if (i >= 0 && !loaded[i] && pb[i].kind == GroupPlan::Kind::Input)
          inputBytes += bytesOf(i);
      const bool weightsFirst = weightBytes <= inputBytes;
      // Whole operands before those loaded in parts; in each, weights or
      // activations first as chosen above.
      for (int pass = 0; pass < 4; ++pass) {
        const bool inParts = pass >= 2;
        const bool weights = (pass % 2 == 0) == weightsFirst;
        for (auto [j, i] : llvm::enumerate(plan->operands[k])) {
          if (i < 0 || pb[i].kind == GroupPlan::Kind::Result ||
              pb[i].kind == GroupPlan::Kind::Temp || loaded[i])
            continue;
          unsigned parts = partsOf(j, i), rowParts = rowPartsOf(j, i);
          bool inRuns = !split[k].empty() && j == 1;
          if (rowParts > 1 && !inRuns)
            parts = rowParts;
          if ((parts > 1 || inRuns) != inParts ||
              (pb[i].kind == GroupPlan::Kind::Weight) != weights)
            continue;
          auto addr = ddrAddr(pb[i].value);
          if (!addr)
            return ctx.error() << "group operand has no DDR address";
          if (partLoads[i].empty())
            make(i);
          loaded[i] = true;
          Operand to = lmem(i), from = ddr(i, *addr);
          if (inRuns) {
            loadFilterRuns(ctx, bufs[i], to, from, split[k], runBufs[k]);
            continue;
          }
          if (parts <= 1) {
            ctx.load(bufs[i], to, from);
            if (pb[i].kind == GroupPlan::Kind::Weight)
              cast<CodegenInterface>(ops[k]).codegenLocalWeightLayout(
                  ctx, unsigned(j), bufs[i], to, plan->lanes[k]);
            continue;
          }
          if (rowParts > 1) {
            // Part p is rows [p nr, (p + 1) nr) of the DDR tensor: whole
            // slots of the lanes, the part's bytes of the usual layout.
            const int64_t nr = to.shape[1] / rowParts;
            const uint64_t partBytes = ctx.lmemBytes(
                {to.shape[0], nr, to.shape[2], to.shape[3]}, to.dtype);
            for (unsigned p = unsigned(partLoads[i].size()); p < rowParts;
                 ++p) {
              Operand t = lmemTensor(to.addr + p * partBytes, to.shape[0],
                                     uint32_t(nr), to.shape[2], to.shape[3],
                                     to.dtype),
                      f = from;
              f.addr += uint64_t(p * nr * f.stride[1]) * dtypeSize(f.dtype);
              f.shape[1] = uint32_t(nr);
              partLoads[i].push_back(ctx.load(bufs[i], t, f));
            }
            continue;
          }
          // Part p is columns [p nc, (p + 1) nc) of the DDR tensor, held
          // dense in LMEM after the parts before it (see LocalTensor).
          int64_t w = to.shape[3], nc = w / parts;
          uint64_t partBytes = ctx.lmemBytes(
              {to.shape[0], to.shape[1], to.shape[2], nc}, to.dtype);
          for (unsigned p = unsigned(partLoads[i].size()); p < parts; ++p) {
            Operand t = lmemTensor(to.addr + p * partBytes, to.shape[0],
                                   to.shape[1], to.shape[2], uint32_t(nc),
                                   to.dtype),
                    f = from;
            f.addr += uint64_t(p * nc) * dtypeSize(f.dtype);
            f.shape[3] = uint32_t(nc);
            partLoads[i].push_back(ctx.load(bufs[i], t, f));
          }
        }
      }
    }
    return success();
  };
  // With refolds (GroupPlan::loadCuts), the loads go in runs: those of
  // ops [issued, allowed) may go now, the next ones behind the next
  // refold's moves; an op about to compute gets its loads regardless.
  const bool cutLoads = !plan->loadCuts.empty();
  size_t issued = 0, allowed = ops.size();
  auto cutFrom = [&](size_t k) {
    for (size_t j = k; j < ops.size(); ++j)
      if (plan->loadCuts[j] >= 0)
        return size_t(plan->loadCuts[j]);
    return ops.size();
  };
  auto pump = [&]() -> LogicalResult {
    size_t end = std::min(allowed, nextBounce(issued));
    if (end > issued && failed(loadOps(issued, end)))
      return failure();
    issued = std::max(issued, end);
    return success();
  };
  // Whether an input of the ops before `end` waits in the GDMA queue for
  // the previous op's held-back stores.
  auto firstInputWaits = [&](size_t end) {
    for (size_t k = 0; k < end; ++k)
      for (int i : plan->operands[k])
        if (i >= 0 && pb[i].kind == GroupPlan::Kind::Input) {
          auto addr = ddrAddr(pb[i].value);
          if (addr && ctx.loadWaitsForDeferred(LBuf(), ddr(i, *addr)))
            return true;
        }
    return false;
  };
  // A group's first activation load may wait in the GDMA queue for the
  // stores of the group before (a reload of its result), leaving the DDR
  // idle for their latency: the first part of the first weight loaded in
  // parts goes before it then.
  auto preloadPart = [&]() -> LogicalResult {
    const size_t end = nextBounce(0);
    if (!firstInputWaits(end))
      return success();
    for (size_t k = 0; k < end; ++k) {
      auto cg = cast<CodegenInterface>(ops[k]);
      for (auto [j, i] : llvm::enumerate(plan->operands[k])) {
        if (i < 0 || pb[i].kind != GroupPlan::Kind::Weight ||
            (!split[k].empty() && j == 1))
          continue;
        const unsigned cols = cg.localColumnParts(unsigned(j));
        const unsigned rowParts =
            cols > 1 ? 1 : cg.localRowParts(unsigned(j), ctx.lanes());
        if (cols <= 1 && rowParts <= 1)
          continue;
        auto addr = ddrAddr(pb[i].value);
        if (!addr)
          return ctx.error() << "group operand has no DDR address";
        make(i);
        Operand to = lmem(i), from = ddr(i, *addr), t = to, f = from;
        if (rowParts > 1) {
          const int64_t nr = to.shape[1] / rowParts;
          t = lmemTensor(to.addr, to.shape[0], uint32_t(nr), to.shape[2],
                         to.shape[3], to.dtype);
          f.shape[1] = uint32_t(nr);
        } else {
          const int64_t nc = to.shape[3] / cols;
          t = lmemTensor(to.addr, to.shape[0], to.shape[1], to.shape[2],
                         uint32_t(nc), to.dtype);
          f.shape[3] = uint32_t(nc);
        }
        partLoads[i].push_back(ctx.load(bufs[i], t, f));
        return success();
      }
    }
    return success();
  };
  // Likewise whole weights (in order of first use, not those loaded in
  // parts or runs) load ahead of such an input, as many as the DDR moves
  // in one latency: the input's reload starts only once the stores have
  // landed, and more would hold the stores back. Only weights whose LMEM
  // neither the stores nor the TIU work they wait for touch go: a load
  // fenced on later compute would hold the GDMA queue behind it.
  auto preloadWeights = [&]() -> LogicalResult {
    const size_t end = nextBounce(0);
    if (!firstInputWaits(end))
      return success();
    const Target &t = ctx.target();
    double budget = t.ddr_latency_cycles * t.ddr_bytes_per_cycle;
    const uint32_t fence = ctx.deferredTiuWait();
    for (size_t k = 0; k < end; ++k) {
      auto cg = cast<CodegenInterface>(ops[k]);
      for (auto [j, i] : llvm::enumerate(plan->operands[k])) {
        if (i < 0 || pb[i].kind != GroupPlan::Kind::Weight || loaded[i] ||
            !partLoads[i].empty() || (!split[k].empty() && j == 1) ||
            cg.localColumnParts(unsigned(j)) > 1 ||
            cg.localRowParts(unsigned(j), ctx.lanes()) > 1)
          continue;
        const double bytes =
            double(numElements(pb[i].shape) * dtypeSize(pb[i].dtype));
        if (bytes > budget)
          return success();
        auto addr = ddrAddr(pb[i].value);
        if (!addr)
          return ctx.error() << "group operand has no DDR address";
        make(i);
        if (bufs[i].tiu > fence ||
            ctx.overlapsDeferred(bufs[i].addr, bufs[i].addr + bufs[i].bytes))
          continue;
        Operand to = lmem(i);
        ctx.load(bufs[i], to, ddr(i, *addr));
        cg.codegenLocalWeightLayout(ctx, unsigned(j), bufs[i], to,
                                    plan->lanes[k]);
        loaded[i] = true;
        budget -= bytes;
      }
    }
    return success();
  };
  auto loadChunk = [&](int64_t c) -> LogicalResult {
    useChunk(c);
    loaded.assign(pb.size(), false);
    partLoads.assign(pb.size(), {});
    issued = 0;
    allowed = cutLoads ? cutFrom(0) : ops.size();
    if (c == 0 && !plan->rows &&
        (failed(preloadPart()) || failed(preloadWeights())))
      return failure();
    if (failed(pump()))
      return failure();
    return c == 0 ? copyAhead(ctx, ahead) : success();
  };
  // Computes chunk c (loaded) and stores its results.
  auto computeChunk = [&](int64_t c) -> LogicalResult {
    useChunk(c);
    // DDR addresses of the results stored so far.
    llvm::DenseSet<uint64_t> storedAt;
    for (size_t k = 0; k < ops.size(); ++k) {
      // A view takes over its space's state (the instructions it waits
      // for); later writers of the space wait for its readers too.
      if (plan->views[k]) {
        int r = plan->results[k];
        bufs[r] = bufs[pb[r].alias];
        if (pb[r].aliasOffset) {
          bufs[r].addr += pb[r].aliasOffset;
          bufs[r].bytes = pb[r].bytes;
        }
        made[r] = true;
      }
      LocalOperands lo;
      lo.ctx = &ctx;
      lo.lanes = plan->lanes[k];
      for (int i : plan->operands[k])
        lo.operands.push_back(i < 0 ? LocalTensor{}
                                    : LocalTensor{lmem(i), &bufs[i],
                                                  partLoads[i]});
      int r = plan->results[k];
      // After the store of the operand (the GDMA keeps DDR reads after
      // the writes they depend on).
      const bool bounce = plan->loaded[k] && bounces(k);
      if (cutLoads && !bounce && issued <= k) {
        allowed = std::max(allowed, k + 1);
        if (failed(pump()))
          return failure();
      }
      if (bounce) {
        if (failed(loadResult(k)))
          return failure();
        issued = std::max(issued, k + 1);
        if (failed(pump()))
          return failure();
      }
      if (!plan->loaded[k] && !plan->views[k]) {
        make(r);
        lo.result = {lmem(r), &bufs[r]};
        for (int i : plan->temps[k]) {
          make(i);
          lo.temps.push_back({lmem(i), &bufs[i]});
        }
      }
      if (!plan->loaded[k] && !split[k].empty() && !runBufs[k].empty()) {
        if (failed(emitChannelRuns(ctx, ops[k], lo, split[k], runBufs[k],
                                   bufs[plan->operands[k][1]])))
          return failure();
      } else if (!plan->loaded[k] && !plan->views[k] &&
                 failed(cast<CodegenInterface>(ops[k]).codegenLocal(ctx, lo)))
        return ops[k]->emitOpError()
               << "failed to generate code in a layer group";
      if (k < plan->refolds.size())
        for (auto [from, to] : plan->refolds[k]) {
          make(to);
          emitRefold(ctx, bufs[to], lmem(to), bufs[from], lmem(from));
        }
      if (cutLoads && plan->loadCuts[k] >= 0) {
        allowed = std::max(allowed, cutFrom(k + 1));
        if (failed(pump()))
          return failure();
      }
      if (!plan->stored[k])
        continue;
      auto addr = ddrAddr(pb[r].value);
      if (!addr)
        return ops[k]->emitOpError() << "has no DDR address";
      // A view placed in DDR where its space's bytes are already (an input,
      // or a result stored there) is not stored again: the second write
      // of the same bytes would race the first.
      if (plan->views[k]) {
        int a = pb[r].alias;
        if (storedAt.contains(*addr) ||
            (pb[a].kind == GroupPlan::Kind::Input &&
             ddrAddr(pb[a].value) == addr))
          continue;
        // A run of its operand's bytes placed in DDR inside the operand
        // (a Slice of whole images), whose bytes are there already.
        auto cgk = cast<CodegenInterface>(ops[k]);
        Value src = ops[k]->getOperand(0);
        auto at = ddrAddr(src);
        if (pb[r].aliasOffset && cgk.aliasedOperand() == 0 && at &&
            *at + uint64_t(cgk.aliasedByteOffset()) == *addr &&
            (storedAt.contains(*at) || inDdrBeforeGroup(src, ops)))
          continue;
      }
      storedAt.insert(*addr);
      ctx.store(ddr(r, *addr), bufs[r], lmem(r));
    }
    return success();
  };
  // With two halves, chunk c + 1 loads before chunk c computes: the GDMA
  // runs its requests in order, so they would otherwise queue behind
  // chunk c's stores.
  for (int64_t c = 0; c < nChunks; ++c)
    if (((!half || c == 0) && failed(loadChunk(c))) ||
        (half && c + 1 < nChunks && failed(loadChunk(c + 1))) ||
        failed(computeChunk(c)))
      return failure();
  return success();
}

} // namespace backend
} // namespace tpuc
