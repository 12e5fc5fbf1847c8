//===- AssignAddress.cpp - DDR layout of weights and activations ----------===//
//
// Weights are packed back to back (aligned) from address 0. Activations get a
// linear scan over the entry function: each buffer (a tensor plus the
// tensors aliasing it) lives from its definition to its last use, and a new
// buffer takes the lowest aligned gap among the buffers still alive when it
// is defined. Inputs and outputs live for the whole program. Operands of a
// Concat along its outermost non-unit dim are placed inside its result, and
// so are layer-group results interleaved by a Concat, in strided blocks.
// Values a layer group keeps in local memory get no DDR.
//
//===----------------------------------------------------------------------===//
#include "tpuc/Backend/Codegen.h"
#include "tpuc/Backend/CodegenInterface.h"
#include "tpuc/Backend/LayerGroup.h"
#include "tpuc/Backend/Passes.h"
#include "tpuc/Backend/Target.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include <functional>

namespace tpuc {
namespace backend {
#define GEN_PASS_DEF_ASSIGNADDRESS
#include "tpuc/Backend/Passes.h.inc"
} // namespace backend
} // namespace tpuc

using namespace mlir;
using namespace tpuc;
using namespace tpuc::backend;

namespace {

/// Whether group `g`'s plan holds member `m`'s result in its own NCHW
/// shape (tensors of a plan that fails are not placed in blocks).
bool heldAsNchw(tpu::GroupOp g, Operation *m, const chip::Target &target) {
  SmallVector<Operation *> ops = g.getMembers();
  auto plan = planLayerGroup(ops, target, g.getNSlices(), g.getHSlices(),
                             g.getRowChunk());
  if (failed(plan))
    return false;
  auto k = llvm::find(ops, m) - ops.begin();
  if (k >= int64_t(ops.size()))
    return false;
  return plan->holdsNchw(plan->buffers[plan->results[size_t(k)]],
                         getShape(m->getResult(0)));
}

uint64_t alignTo(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/// A buffer of the activation region and the ops sharing it.
struct Buffer {
  int64_t start, end; // op indices, inclusive
  uint64_t bytes;
  uint64_t offset = 0;
  SmallVector<Operation *, 2> holders; // ops whose result lives here
  SmallVector<uint64_t, 2> within;     // their byte offsets in the buffer
};

struct AssignAddressPass
    : public tpuc::backend::impl::AssignAddressBase<AssignAddressPass> {
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
    if (alignment < 1 || (alignment & (alignment - 1))) {
      module.emitError() << "alignment must be a power of two, got "
                         << alignment;
      return signalPassFailure();
    }
    func::FuncOp func = *entry;
    if (!func) {
      module.emitError() << "module has no 'main' function";
      return signalPassFailure();
    }
    Block &body = func.getBody().front();
    MLIRContext *ctx = module.getContext();
    auto i64 = IntegerType::get(ctx, 64);
    const uint64_t align = uint64_t(alignment);

    // Op positions, the members of a layer group (tpu.Group) in place of
    // the group; the terminator is last, "forever" is past it.
    // Each group's members, listed once: the scan below asks for them per op.
    SmallVector<Operation *> order;
    DenseMap<Operation *, SmallVector<Operation *>> members;
    for (Operation &op : body) {
      if (auto g = dyn_cast<tpu::GroupOp>(op)) {
        members[g] = g.getMembers();
        llvm::append_range(order, members[g]);
      } else {
        order.push_back(&op);
      }
    }
    auto membersOf = [&](Operation *g) -> ArrayRef<Operation *> {
      return members.find(g)->second;
    };
    DenseMap<Operation *, int64_t> index;
    int64_t pos = 0;
    for (Operation *op : order)
      index[op] = pos++;
    const int64_t forever = pos;
    // A group run as a loop (sliced along N or H, chunked by rows, or a
    // matmul storing its epilogue's tiles; the plan tpu-layer-group
    // recorded) stores one slice's results before it
    // loads the next slice's inputs: its inputs are read and its stored
    // results written from its first op to its last, so the two keep apart.
    // A group of whole tensors loads all its inputs before any store, so
    // each of its ops' values lives as the op's own would.
    DenseMap<Operation *, std::pair<int64_t, int64_t>> span;
    auto loopedGroupOf = [&](Operation *op) -> Operation * {
      auto g = dyn_cast_or_null<tpu::GroupOp>(op->getParentOp());
      return g && span.count(g) ? g.getOperation() : nullptr;
    };
    for (auto g : body.getOps<tpu::GroupOp>())
      if (g.getNSlices() > 1 || g.getHSlices() > 1 || g.getRowChunk() > 0 ||
          g.getTileEpilogue())
        span[g] = {index[membersOf(g).front()], index[membersOf(g).back()]};
    auto isYielded = [](Value v) {
      return llvm::any_of(v.getUsers(),
                          [](Operation *u) { return isa<tpu::YieldOp>(u); });
    };
    auto defIndex = [&](Operation *op) {
      Operation *g = loopedGroupOf(op);
      return g && isYielded(op->getResult(0)) ? span[g].first : index[op];
    };
    std::function<int64_t(Value)> lastUse = [&](Value v) {
      int64_t last = v.getDefiningOp() ? index[v.getDefiningOp()] : 0;
      // A value a group stores is named in the bmodel as valid after the
      // group's last store (the runtime dumps it then): it keeps its DDR
      // to the group's end.
      if (auto g = v.getDefiningOp()
                       ? dyn_cast<tpu::GroupOp>(v.getDefiningOp()->getParentOp())
                       : nullptr)
        last = std::max(last, index[membersOf(g).back()]);
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        // A value a group yields is used where the group's result is.
        if (auto y = dyn_cast<tpu::YieldOp>(user)) {
          Value result = y->getParentOp()->getResult(use.getOperandNumber());
          last = std::max(last, lastUse(result));
          continue;
        }
        auto it = index.find(user);
        Operation *top = body.findAncestorOpInBlock(*user);
        int64_t u = it != index.end() ? it->second : top ? index[top] : forever;
        Operation *g = loopedGroupOf(user);
        if (g && (!v.getDefiningOp() || v.getDefiningOp()->getParentOp() != g))
          u = span[g].second;
        if (top && top->hasTrait<OpTrait::IsTerminator>())
          u = forever;
        last = std::max(last, u);
      }
      return last;
    };

    // Weights used by Tpu ops, packed in program order.
    uint64_t weightSize = 0;
    bool failedAny = false;
    auto bytesOf = [&](Operation *op) -> std::optional<uint64_t> {
      Value v = op->getResult(0);
      auto type = dyn_cast<RankedTensorType>(v.getType());
      chip::DType t = type ? chipDType(type) : chip::DType::Invalid;
      if (t == chip::DType::Invalid) {
        op->emitOpError() << "result type " << v.getType()
                          << " has no chip layout";
        failedAny = true;
        return std::nullopt;
      }
      return uint64_t(numElements(type.getShape())) * chip::dtypeSize(t);
    };

    SmallVector<Buffer> buffers;
    DenseMap<Operation *, unsigned> bufferOf;
    auto within = [&](Operation *op) {
      Buffer &b = buffers[bufferOf[op]];
      return b.within[llvm::find(b.holders, op) - b.holders.begin()];
    };
    for (Operation *opp : order) {
      Operation &op = *opp;
      if (op.hasTrait<OpTrait::IsTerminator>())
        continue;
      if (op.getNumResults() != 1 || isNone(op.getResult(0)))
        continue;
      // A value a layer group keeps in local memory never reaches DDR; one
      // it stores (yielded, or reloaded transposed) or views in place does.
      if (layerGroup && isa<tpu::GroupOp>(op.getParentOp()) &&
          !isStoredInGroup(&op, membersOf(op.getParentOp())) &&
          !(isa<CodegenInterface>(op) &&
            cast<CodegenInterface>(op).aliasedOperand() >= 0))
        continue;
      if (isa<top::WeightOp>(op)) {
        bool usedByTpu = llvm::any_of(op.getUsers(), [](Operation *u) {
          return isa<tpu::TpuDialect>(u->getDialect());
        });
        if (!usedByTpu)
          continue;
        auto bytes = bytesOf(&op);
        if (!bytes)
          continue;
        weightSize = alignTo(weightSize, align);
        op.setAttr(kAddrAttr, IntegerAttr::get(i64, weightSize));
        weightSize += *bytes;
        continue;
      }
      bool isInput = isa<top::InputOp>(op);
      if (!isInput && !isa<tpu::TpuDialect>(op.getDialect())) {
        op.emitOpError() << "cannot be placed in DDR: only top.Input, "
                            "top.Weight, top.None and Tpu ops may appear in "
                            "a Tpu module";
        failedAny = true;
        continue;
      }
      auto bytes = bytesOf(&op);
      if (!bytes)
        continue;
      // An aliasing op shares its operand's buffer (or weight).
      if (auto cg = dyn_cast<CodegenInterface>(op)) {
        int a = cg.aliasedOperand();
        if (a >= 0) {
          Operation *src =
              tpu::lookThroughGroup(op.getOperand(a)).getDefiningOp();
          int64_t byteOffset = cg.aliasedByteOffset();
          if (src && isa<top::WeightOp>(src) && byteOffset == 0) {
            op.setAttr(kAddrAttr, src->getAttr(kAddrAttr));
            continue;
          }
          if (src && bufferOf.count(src)) {
            Buffer &b = buffers[bufferOf[src]];
            b.end = std::max(b.end, lastUse(op.getResult(0)));
            b.holders.push_back(&op);
            b.within.push_back(within(src) + byteOffset);
            bufferOf[&op] = bufferOf[src];
            continue;
          }
        }
      }
      Buffer b;
      b.start = isInput ? -1 : defIndex(&op);
      b.end = isInput ? forever : lastUse(op.getResult(0));
      b.bytes = alignTo(std::max<uint64_t>(*bytes, 1), align);
      b.holders.push_back(&op);
      b.within.push_back(0);
      bufferOf[&op] = buffers.size();
      buffers.push_back(b);
    }
    if (failedAny)
      return signalPassFailure();

    // Concat in place: an operand that is a contiguous range of a Concat's
    // result (all dims before the axis are 1) has its buffer placed at that
    // range, so the Concat copies nothing. The Concat's buffer then lives
    // as long as any of its operands. A buffer sits in at most one other;
    // inputs and outputs keep their own.
    SmallVector<int> parent(buffers.size(), -1);
    SmallVector<uint64_t> inParent(buffers.size(), 0);
    // [block, stride] in elements of a buffer placed in strided blocks.
    DenseMap<unsigned, std::pair<int64_t, int64_t>> blocks;
    // A Concat with dims before its axis (ShuffleNet's channel interleave,
    // [N, m, g, H, W] on axis 2) takes each operand in blocks of
    // `operand[axis] * inner` elements, `result[axis] * inner` apart. Only a
    // layer group's stores and ops whose own code writes strided blocks
    // (writesBlocks) can write such a layout, so an operand goes in place
    // only when it is such an op's result (or a view of one) that nothing
    // but the Concat reads, and its blocks are whole planes or whole images
    // of a group's NCHW result, or runs of an op's trailing dims.
    auto stridable = [&](Operation *src, tpu::ConcatOp concat, int64_t block) {
      Buffer &o = buffers[bufferOf[src]];
      Operation *m = o.holders.front();
      auto g = dyn_cast_or_null<tpu::GroupOp>(m->getParentOp());
      auto cg = dyn_cast<CodegenInterface>(m);
      const bool own = !g && cg && cg.writesBlocks();
      if ((!own && (!g || g.getRowChunk() != 0)) || m->getNumResults() != 1)
        return false;
      auto ms = getShape(m->getResult(0));
      if (own ? !blockDims(ms, block)
              : ms.size() != 4 || (block != ms[2] * ms[3] &&
                                   block != ms[1] * ms[2] * ms[3]))
        return false;
      // A group stores it as it holds it: in NCHW only (not as the matrix
      // view a Concat along the last axis in a group would read).
      if (!own && !heldAsNchw(g, m, target))
        return false;
      auto readOnlyBy = [&](Value v) {
        return llvm::all_of(v.getUsers(), [&](Operation *u) {
          return u == concat.getOperation() || llvm::is_contained(o.holders, u);
        });
      };
      for (Operation *h : o.holders) {
        if (h != m || own) {
          if (!readOnlyBy(h->getResult(0)))
            return false;
          continue;
        }
        for (OpOperand &use : m->getResult(0).getUses()) {
          auto y = dyn_cast<tpu::YieldOp>(use.getOwner());
          if (!y || !readOnlyBy(g->getResult(use.getOperandNumber())))
            return false;
        }
      }
      return true;
    };
    auto placeable = [&](tpu::ConcatOp concat) {
      return concat->getParentOp() == func.getOperation() &&
             !concat.getDoRelu() && bufferOf.count(concat) &&
             buffers[bufferOf[concat]].holders.front() == concat.getOperation();
    };
    // A Concat whose operands start another Concat's operands (DenseNet
    // concatenates every earlier feature map again in each layer) is that
    // Concat's leading range: it sits at the start of the last Concat of
    // such a chain (its host), which holds the operands of all of them, so
    // none of the chain copies what another already placed.
    DenseMap<Operation *, tpu::ConcatOp> host;
    {
      SmallVector<tpu::ConcatOp> later; // in reverse program order
      for (Operation *op : llvm::reverse(order)) {
        auto concat = dyn_cast<tpu::ConcatOp>(op);
        if (!concat || !placeable(concat) ||
            numElements(cast<RankedTensorType>(concat.getType())
                            .getShape()
                            .take_front(concat.getAxis())) != 1)
          continue;
        auto ins = concat.getInputs();
        for (tpu::ConcatOp q : later) {
          auto qins = q.getInputs();
          if (q.getAxis() != concat.getAxis() || qins.size() <= ins.size() ||
              chipDType(q.getType()) != chipDType(concat.getType()) ||
              !std::equal(ins.begin(), ins.end(), qins.begin()))
            continue;
          host[concat] = host.count(q) ? host[q] : q;
          break;
        }
        later.push_back(concat);
      }
    }
    for (Operation *op : order) {
      auto concat = dyn_cast<tpu::ConcatOp>(op);
      if (!concat || !placeable(concat))
        continue;
      unsigned cb = bufferOf[concat];
      if (auto it = host.find(op); it != host.end()) {
        unsigned hb = bufferOf[it->second];
        Buffer &b = buffers[cb];
        if (parent[cb] < 0 && parent[hb] < 0 && b.start >= 0 &&
            b.end < forever && within(op) == 0) {
          parent[cb] = hb;
          inParent[cb] = 0;
          buffers[hb].start = std::min(buffers[hb].start, b.start);
          buffers[hb].end = std::max(buffers[hb].end, b.end);
          continue; // its operands are placed with the host's
        }
      }
      auto outType = cast<RankedTensorType>(concat.getType());
      ArrayRef<int64_t> shape = outType.getShape();
      int64_t axis = concat.getAxis();
      const bool strided = numElements(shape.take_front(axis)) != 1;
      uint64_t es = chip::dtypeSize(chipDType(outType));
      const int64_t inner = numElements(shape.drop_front(axis + 1));
      uint64_t rowBytes = inner * es;
      uint64_t pos = 0;
      SmallVector<unsigned> taken;
      for (Value v : concat.getInputs()) {
        uint64_t offset = pos * rowBytes;
        pos += cast<RankedTensorType>(v.getType()).getShape()[axis];
        Operation *src = tpu::lookThroughGroup(v).getDefiningOp();
        if (!src || !bufferOf.count(src))
          continue;
        unsigned ob = bufferOf[src];
        Buffer &o = buffers[ob];
        auto bytes = bytesOf(src);
        const int64_t block =
            cast<RankedTensorType>(v.getType()).getShape()[axis] * inner;
        if (ob == cb || parent[ob] >= 0 || o.start < 0 || o.end >= forever ||
            within(src) != 0 || !bytes || alignTo(*bytes, align) != o.bytes ||
            (!strided && offset % align) || llvm::is_contained(taken, ob) ||
            chipDType(v.getType()) != chipDType(outType) ||
            (strided && !stridable(src, concat, block)))
          continue;
        if (strided)
          blocks[ob] = {block, shape[axis] * inner};
        taken.push_back(ob);
        parent[ob] = cb;
        inParent[ob] = offset;
        buffers[cb].start = std::min(buffers[cb].start, o.start);
        buffers[cb].end = std::max(buffers[cb].end, o.end);
      }
    }

    // Linear scan over the outermost buffers in order of definition.
    SmallVector<unsigned> roots;
    for (unsigned i = 0; i < buffers.size(); ++i)
      if (parent[i] < 0)
        roots.push_back(i);
    llvm::stable_sort(roots, [&](unsigned x, unsigned y) {
      return buffers[x].start < buffers[y].start;
    });
    uint64_t actSize = 0;
    SmallVector<unsigned> live;
    for (unsigned i : roots) {
      Buffer &b = buffers[i];
      llvm::erase_if(live, [&](unsigned k) { return buffers[k].end < b.start; });
      llvm::sort(live, [&](unsigned x, unsigned y) {
        return buffers[x].offset < buffers[y].offset;
      });
      uint64_t offset = 0;
      for (unsigned k : live) {
        if (buffers[k].offset >= offset + b.bytes)
          break;
        offset = std::max(offset, buffers[k].offset + buffers[k].bytes);
      }
      b.offset = offset;
      actSize = std::max(actSize, offset + b.bytes);
      live.push_back(i);
    }

    uint64_t weightRegion = alignTo(weightSize, align);
    uint64_t actAddr = std::max<uint64_t>(4096, alignTo(weightRegion, 4096));
    actSize = std::max<uint64_t>(actSize, align);
    if (actAddr + actSize > target.ddr_bytes) {
      module.emitError() << "network needs " << actAddr + actSize
                         << " bytes of DDR (weights " << weightRegion
                         << ", activations " << actSize << "), chip '"
                         << target.name << "' has " << target.ddr_bytes;
      return signalPassFailure();
    }
    std::function<uint64_t(unsigned)> offsetOf = [&](unsigned i) {
      return parent[i] < 0 ? buffers[i].offset
                           : offsetOf(parent[i]) + inParent[i];
    };
    for (unsigned i = 0; i < buffers.size(); ++i)
      for (auto [op, off] : llvm::zip(buffers[i].holders, buffers[i].within)) {
        op->setAttr(kAddrAttr,
                    IntegerAttr::get(i64, actAddr + offsetOf(i) + off));
        if (auto it = blocks.find(i); it != blocks.end())
          op->setAttr(kBlockStrideAttr,
                      ArrayAttr::get(ctx, {IntegerAttr::get(i64, it->second.first),
                                           IntegerAttr::get(i64, it->second.second)}));
      }
    module->setAttr(kWeightSizeAttr, IntegerAttr::get(i64, weightRegion));
    module->setAttr(kActAddrAttr, IntegerAttr::get(i64, actAddr));
    module->setAttr(kActSizeAttr, IntegerAttr::get(i64, actSize));
  }
};

} // namespace
