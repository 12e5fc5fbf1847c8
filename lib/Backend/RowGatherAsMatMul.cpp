//===- RowGatherAsMatMul.cpp - Row gathers as matmuls by a 0/1 matrix -----===//
//
// A chain of Reshapes, Permutes, Slices and Concats whose result Y, read
// as rows of X's last dim C, takes each row from one row of its single
// source X [R, C] (a shifted-window transformer's cyclic shift and window
// partition, and their inverses) becomes Y = P x X by a constant 0/1
// matrix P [R', R] with one 1 per row. In a layer group X is held with its
// rows on the lanes, and moving rows across the lanes is what no local
// instruction but the matmul does: the chain would otherwise store X and
// load it back reordered, a DDR round trip between two groups. Exact: each
// result element is one product by 1 plus products by 0.
//
//===----------------------------------------------------------------------===//
#include "tpuc/Backend/Codegen.h"
#include "tpuc/Backend/CodegenInterface.h"
#include "tpuc/Backend/Passes.h"
#include "tpuc/Backend/Target.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"
#include <cmath>

namespace tpuc {
namespace backend {
#define GEN_PASS_DEF_ROWGATHERASMATMUL
#include "tpuc/Backend/Passes.h.inc"
} // namespace backend
} // namespace tpuc

using namespace mlir;
using namespace tpuc;
using namespace tpuc::backend;

namespace {

/// Elements beyond which a chain's element map is not computed.
constexpr int64_t kMaxElements = int64_t(1) << 16;

bool isMove(Operation *op) {
  return op && isa<tpu::ReshapeOp, tpu::PermuteOp, tpu::SliceOp,
                   tpu::ConcatOp>(op) &&
         !(isa<tpu::ConcatOp>(op) && cast<tpu::ConcatOp>(op).getDoRelu());
}

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    s[i - 1] = s[i] * shape[i];
  return s;
}

/// Result of the move `op` on operands holding source element indices.
std::optional<std::vector<int64_t>>
applyMove(Operation *op, ArrayRef<const std::vector<int64_t> *> in) {
  ArrayRef<int64_t> out = getShape(op->getResult(0));
  const int64_t n = numElements(out);
  std::vector<int64_t> r(size_t(n), 0);
  auto coords = [&](int64_t f, SmallVector<int64_t> &c) {
    for (size_t d = out.size(); d-- > 0;) {
      c[d] = f % out[d];
      f /= out[d];
    }
  };
  SmallVector<int64_t> c(out.size());
  if (isa<tpu::ReshapeOp>(op))
    return *in[0];
  if (auto p = dyn_cast<tpu::PermuteOp>(op)) {
    auto order = getI64s(p.getOrder());
    auto st = stridesOf(getShape(p.getInput()));
    for (int64_t f = 0; f < n; ++f) {
      coords(f, c);
      int64_t g = 0;
      for (size_t d = 0; d < c.size(); ++d)
        g += c[d] * st[order[d]];
      r[size_t(f)] = (*in[0])[size_t(g)];
    }
    return r;
  }
  if (auto s = dyn_cast<tpu::SliceOp>(op)) {
    auto off = getI64s(s.getOffsets()), step = getI64s(s.getSteps());
    auto st = stridesOf(getShape(s.getInput()));
    if (off.size() != c.size() || step.size() != c.size())
      return std::nullopt;
    for (int64_t f = 0; f < n; ++f) {
      coords(f, c);
      int64_t g = 0;
      for (size_t d = 0; d < c.size(); ++d)
        g += (off[d] + c[d] * step[d]) * st[d];
      r[size_t(f)] = (*in[0])[size_t(g)];
    }
    return r;
  }
  auto cat = cast<tpu::ConcatOp>(op);
  const int64_t axis = cat.getAxis();
  for (int64_t f = 0; f < n; ++f) {
    coords(f, c);
    int64_t k = c[axis];
    for (auto [i, v] : llvm::enumerate(cat.getInputs())) {
      ArrayRef<int64_t> s = getShape(v);
      if (k < s[axis]) {
        SmallVector<int64_t> ci = c;
        ci[axis] = k;
        int64_t g = 0;
        auto st = stridesOf(s);
        for (size_t d = 0; d < ci.size(); ++d)
          g += ci[d] * st[d];
        r[size_t(f)] = (*in[i])[size_t(g)];
        break;
      }
      k -= s[axis];
    }
  }
  return r;
}

/// A chain of moves ending at `sink`: its ops in program order and its
/// single source.
struct Chain {
  SmallVector<Operation *> ops;
  Value source;
};

/// The moves `sink` is computed by from one source, each of whose results
/// is used only inside the chain; nothing when the leaves differ.
std::optional<Chain> chainOf(Operation *sink) {
  llvm::SetVector<Operation *> ops;
  ops.insert(sink);
  Value source;
  for (size_t i = 0; i < ops.size(); ++i)
    for (Value v : ops[i]->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (isMove(def) && def->getBlock() == sink->getBlock() &&
          llvm::all_of(def->getUsers(),
                       [&](Operation *u) { return ops.contains(u); })) {
        ops.insert(def);
        continue;
      }
      if (source && source != v)
        return std::nullopt;
      source = v;
    }
  if (!source || source.getDefiningOp<top::WeightOp>())
    return std::nullopt;
  Chain c{SmallVector<Operation *>(ops.begin(), ops.end()), source};
  llvm::sort(c.ops, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  return c;
}

/// For each row of `sink`'s result (rows of the source's last dim), the
/// source row it is; nothing when some row is not a whole source row.
std::optional<std::vector<int64_t>> rowMap(const Chain &chain,
                                           Operation *sink) {
  ArrayRef<int64_t> src = getShape(chain.source);
  const int64_t C = src.back(), total = numElements(src);
  ArrayRef<int64_t> out = getShape(sink->getResult(0));
  const int64_t n = numElements(out);
  if (src.size() < 2 || total > kMaxElements || out.back() != C)
    return std::nullopt;
  llvm::DenseMap<Operation *, std::vector<int64_t>> values;
  std::vector<int64_t> iota(static_cast<size_t>(total));
  for (int64_t i = 0; i < total; ++i)
    iota[size_t(i)] = i;
  for (Operation *op : chain.ops) {
    SmallVector<const std::vector<int64_t> *> in;
    for (Value v : op->getOperands())
      in.push_back(v == chain.source ? &iota
                                     : &values[v.getDefiningOp()]);
    auto r = applyMove(op, in);
    if (!r)
      return std::nullopt;
    values[op] = std::move(*r);
  }
  const std::vector<int64_t> &v = values[sink];
  std::vector<int64_t> rows(size_t(n / C));
  for (int64_t r = 0; r < n / C; ++r) {
    int64_t first = v[size_t(r * C)];
    if (first % C)
      return std::nullopt;
    for (int64_t j = 1; j < C; ++j)
      if (v[size_t(r * C + j)] != first + j)
        return std::nullopt;
    rows[size_t(r)] = first / C;
  }
  return rows;
}

/// Whether some move of `chain` cannot compute its result in a group from
/// its operand held there (its elements change lanes), so the group would
/// take its input through DDR.
bool leavesLanes(const Chain &chain, unsigned lanes) {
  return llvm::any_of(chain.ops, [&](Operation *op) {
    auto cg = dyn_cast<CodegenInterface>(op);
    return cg && cg.aliasedOperand() < 0 &&
           (!cg.supportsLocal() || !cg.localCompute() ||
            cg.localGdmaMoves(lanes) > 0);
  });
}

struct RowGatherAsMatMulPass
    : public tpuc::backend::impl::RowGatherAsMatMulBase<RowGatherAsMatMulPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerCodegenExternalModels(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    chip::Target target;
    FailureOr<func::FuncOp> entry = loadChipAndEntry(module, chip, target);
    if (failed(entry))
      return signalPassFailure();
    // The matrix is a weight of the module's weight file.
    if (!module->hasAttr(kWeightFileAttr))
      return;
    // Sinks: moves whose result leaves the moves (or is returned).
    SmallVector<Operation *> sinks;
    module.walk([&](Operation *op) {
      if (isMove(op) &&
          (op->use_empty() || llvm::any_of(op->getUsers(), [&](Operation *u) {
             return !isMove(u) || u->getBlock() != op->getBlock();
           })))
        sinks.push_back(op);
    });
    for (Operation *sink : sinks)
      rewrite(sink, target);
  }

  void rewrite(Operation *sink, const chip::Target &t) {
    auto chain = chainOf(sink);
    if (!chain || !leavesLanes(*chain, t.lanes))
      return;
    auto type = cast<RankedTensorType>(sink->getResult(0).getType());
    auto srcType = cast<RankedTensorType>(chain->source.getType());
    if (chipDType(type) != chip::DType::F32 ||
        chipDType(srcType) != chip::DType::F32 ||
        llvm::any_of(chain->ops, [](Operation *op) {
          return chipDType(op->getResult(0).getType()) != chip::DType::F32;
        }))
      return;
    auto rows = rowMap(*chain, sink);
    if (!rows)
      return;
    ArrayRef<int64_t> src = getShape(chain->source), out = type.getShape();
    const int64_t C = src.back(), R = numElements(src) / C,
                  Rout = int64_t(rows->size());
    // A batch of matrices [B, N, C] (attention's windows, which its users
    // read batch by batch) is the matmul's result as it is, its batches
    // on the same lanes; others are the rows [R', C] (all on the lanes,
    // as groups hold an image's tokens) and a Reshape.
    const bool own = out.back() == C && out.size() == 3;
    // Cheaper than the round trip it saves: the matrix's load and the
    // matmul's TIU work against X stored and read back.
    const double bw = t.ddr_bytes_per_cycle, es = 4;
    const double rowsOnLanes = own ? double(out[out.size() - 2]) : double(Rout);
    const double batches = double(Rout) / rowsOnLanes;
    const double tiu =
        batches * std::ceil(rowsOnLanes / double(t.lanes)) * double(R * C) /
            double(t.euFor(chip::DType::F32)) +
        t.tiu_issue_cycles;
    const double matmul = double(Rout * R) * es / bw + t.gdma_issue_cycles + tiu;
    const double trip = 2 * (double(R * C) * es / bw + t.ddr_latency_cycles +
                             t.gdma_issue_cycles);
    if (matmul >= trip)
      return;

    OpBuilder b(sink);
    const std::string name = tpuc::getOpName(sink);
    Value x = chain->source;
    if (src.size() != 2)
      x = b.create<tpu::ReshapeOp>(
          NameLoc::get(b.getStringAttr(name + "_gather_rows_in")),
          RankedTensorType::get({R, C}, srcType.getElementType()), x);
    SmallVector<int64_t> pShape;
    if (own)
      pShape.assign(out.begin(), out.end() - 1);
    else
      pShape.push_back(Rout);
    pShape.push_back(R);
    std::vector<float> data(size_t(Rout * R), 0.0f);
    for (int64_t r = 0; r < Rout; ++r)
      data[size_t(r * R + (*rows)[size_t(r)])] = 1.0f;
    Value p = markDataMovement(top::WeightOp::createWithData(
        b, sink, name + "_gather_rows",
        RankedTensorType::get(pShape, type.getElementType()), std::move(data)));
    Value none = b.create<top::NoneOp>(sink->getLoc(), b.getNoneType());
    SmallVector<int64_t> mmShape(pShape.begin(), pShape.end() - 1);
    mmShape.push_back(C);
    auto mmType = RankedTensorType::get(mmShape, type.getElementType());
    Value y = b.create<tpu::MatMulOp>(
        own ? sink->getLoc()
            : NameLoc::get(b.getStringAttr(name + "_gather_rows_out")),
        mmType, p, x, none, Value(), /*do_relu=*/false,
        /*right_transpose=*/false);
    if (!own)
      y = b.create<tpu::ReshapeOp>(sink->getLoc(), type, y);
    sink->getResult(0).replaceAllUsesWith(y);
    for (Operation *op : llvm::reverse(chain->ops))
      op->erase();
  }
};

} // namespace
