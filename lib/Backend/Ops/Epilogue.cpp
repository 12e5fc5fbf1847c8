//===- Epilogue.cpp - Ops applied to a MAC op's output tiles --------------===//
//
// See Epilogue.h.
//
//===----------------------------------------------------------------------===//
#include "Epilogue.h"
#include "tpuc/Backend/LayerGroup.h"

using namespace mlir;
using namespace tpuc::chip;

namespace tpuc {
namespace backend {

/// The element type of scratch tensor `index` of `op` (null: the result's).
static DType tempDType(Operation *op, unsigned index) {
  Type t = cast<CodegenInterface>(op).localTempType(index);
  return chipDType(t ? t : op->getResult(0).getType());
}

bool isResidualOperand(Operation *op, unsigned index) {
  Value v = op->getOperand(index);
  return !isNone(v) && !v.getDefiningOp<top::WeightOp>() &&
         getShape(v) == getShape(op->getResult(0)) &&
         chipDType(v.getType()) == chipDType(op->getResult(0).getType());
}

bool isElementwiseEpilogue(Operation *head, ArrayRef<Operation *> epilogue,
                           bool allowResiduals) {
  if (epilogue.empty())
    return false;
  Type resultType = head->getResult(0).getType();
  Operation *prevOp = head;
  for (Operation *op : epilogue) {
    auto cg = dyn_cast<CodegenInterface>(op);
    Value prev = prevOp->getResult(0);
    prevOp = op;
    // Elementwise in place on the tile: same shape and element type.
    if (!cg || !canJoinLayerGroup(op) || !cg.localElementwise() ||
        (!allowResiduals && cg.localTemps() != 0) ||
        op->getNumOperands() == 0 || op->getOperand(0) != prev ||
        !prev.hasOneUse() || getShape(op->getResult(0)) != getShape(prev) ||
        chipDType(op->getResult(0).getType()) != chipDType(resultType))
      return false;
    for (unsigned i = 1; i < op->getNumOperands(); ++i) {
      Value v = op->getOperand(i);
      if (isNone(v) || (allowResiduals && isResidualOperand(op, i)))
        continue;
      SmallVector<int64_t, 4> shape = cg.localShape(i);
      if (!v.getDefiningOp<top::WeightOp>() || shape.size() != 4 ||
          numElements(shape) != numElements(getShape(v)))
        return false;
    }
  }
  return true;
}

LogicalResult TileEpilogue::init(CodegenContext &ctx,
                                 ArrayRef<Operation *> epilogue) {
  auto out = ddrAddr(epilogue.back()->getResult(0));
  if (!out)
    return epilogue.back()->emitOpError() << "has no DDR address";
  ops.assign(epilogue.begin(), epilogue.end());
  outAddr = *out;
  return success();
}

LogicalResult TileEpilogue::load(CodegenContext &ctx) {
  for (auto [k, op] : llvm::enumerate(ops)) {
    auto cg = cast<CodegenInterface>(op);
    temps = std::max(temps, cg.localTemps());
    for (unsigned i = 0; i < cg.localTemps(); ++i)
      tempBytes = std::max<int64_t>(tempBytes, dtypeSize(tempDType(op, i)));
    auto &w = weights.emplace_back();
    for (unsigned i = 1; i < op->getNumOperands(); ++i) {
      Value v = op->getOperand(i);
      if (isNone(v)) {
        w.push_back({});
        continue;
      }
      auto t = getTensor(ctx, v);
      if (failed(t))
        return failure();
      if (isResidualOperand(op, i)) {
        residualSlots.push_back({k, i});
        residuals.push_back(*t);
        w.push_back({});
        continue;
      }
      SmallVector<int64_t, 4> shape = cg.localShape(i);
      if (shape.size() != 4 || numElements(shape) != t->numElements())
        return ctx.error() << "epilogue operand #" << i << " of "
                           << op->getName() << " has no local layout";
      std::array<int64_t, 4> s4{shape[0], shape[1], shape[2], shape[3]};
      auto buf = ctx.alloc(ctx.lmemBytes(s4, t->dtype));
      if (!buf)
        return ctx.error() << "epilogue operands do not fit local memory";
      LBuf &b = bufs.emplace_back(*buf);
      Operand lm = lmemTensor(b.addr, s4[0], s4[1], s4[2], s4[3], t->dtype);
      ctx.load(b, lm,
               ddrTensor(t->addr, uint32_t(s4[0]), uint32_t(s4[1]),
                         uint32_t(s4[2]), uint32_t(s4[3]), t->dtype));
      w.push_back({lm, &b});
    }
  }
  return success();
}

int64_t TileEpilogue::bytesPerElement(unsigned slots) const {
  int64_t b = temps * tempBytes;
  for (const Tensor &t : residuals)
    b += slots * dtypeSize(t.dtype);
  return b;
}

void TileEpilogue::apply(CodegenContext &ctx, LBuf &buf, const Operand &tile,
                         ArrayRef<LocalTensor> residualTiles,
                         ArrayRef<LBuf *> tempBufs) {
  size_t r = 0;
  for (auto [k, op] : llvm::enumerate(ops)) {
    auto cg = cast<CodegenInterface>(op);
    LocalOperands lo;
    lo.ctx = &ctx;
    lo.operands.push_back({tile, &buf});
    lo.operands.append(weights[k].begin(), weights[k].end());
    for (; r < residualSlots.size() && residualSlots[r].first == k; ++r)
      lo.operands[residualSlots[r].second] = residualTiles[r];
    for (unsigned i = 0; i < cg.localTemps(); ++i) {
      Operand t = lmemTensor(tempBufs[i]->addr, tile.shape[0], tile.shape[1],
                             tile.shape[2], tile.shape[3], tempDType(op, i));
      lo.temps.push_back({t, tempBufs[i]});
    }
    lo.result = {tile, &buf};
    if (failed(cg.codegenLocal(ctx, lo)))
      broken = true;
  }
}

bool hasTilePrologue(ArrayRef<Operation *> ops) {
  auto cg = ops.size() < 2 ? nullptr : dyn_cast<CodegenInterface>(ops[1]);
  return cg && canJoinLayerGroup(ops[0]) && canJoinLayerGroup(ops[1]) &&
         cg.takesTilePrologue(ops[0]);
}

bool isTileEpilogue(ArrayRef<Operation *> ops) {
  const size_t h = hasTilePrologue(ops) ? 1 : 0;
  auto cg = ops.size() < 2 ? nullptr : dyn_cast<CodegenInterface>(ops[h]);
  if (!cg || !canJoinLayerGroup(ops[h]))
    return false;
  ArrayRef<Operation *> epilogue = ops.drop_front(h + 1);
  return epilogue.empty() ? h == 1 : cg.takesTileEpilogue(epilogue);
}

LogicalResult emitTileEpilogue(CodegenContext &ctx, ArrayRef<Operation *> ops) {
  if (!isTileEpilogue(ops))
    return ctx.error() << "does not start a tile epilogue group";
  const size_t h = hasTilePrologue(ops) ? 1 : 0;
  return cast<CodegenInterface>(ops[h]).codegenTileEpilogue(
      ctx, h ? ops[0] : nullptr, ops.drop_front(h + 1));
}

} // namespace backend
} // namespace tpuc
