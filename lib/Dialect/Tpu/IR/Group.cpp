//===- Group.cpp - tpu.Group and tpu.Yield --------------------------------===//
//
// A layer group is a region: its body holds the member ops, which read the
// values defined before the group directly, and a tpu.Yield of the members'
// values used after it.
//
//===----------------------------------------------------------------------===//
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"

using namespace mlir;

namespace tpu {

SmallVector<Operation *> GroupOp::getMembers() {
  SmallVector<Operation *> ops;
  for (Operation &op : getBody().front().without_terminator())
    ops.push_back(&op);
  return ops;
}

Value GroupOp::getYielded(unsigned index) {
  return getBody().front().getTerminator()->getOperand(index);
}

Value lookThroughGroup(Value v) {
  if (auto g = v.getDefiningOp<GroupOp>())
    return g.getYielded(cast<OpResult>(v).getResultNumber());
  return v;
}

LogicalResult GroupOp::verify() {
  if (getNSlices() < 1)
    return emitOpError() << "n_slices must be at least 1, got "
                         << getNSlices();
  if (getHSlices() < 1)
    return emitOpError() << "h_slices must be at least 1, got "
                         << getHSlices();
  if (getRowChunk() < 0)
    return emitOpError() << "row_chunk must not be negative, got "
                         << getRowChunk();
  if (getHSlices() > 1 && getRowChunk() > 0)
    return emitOpError() << "cannot be sliced along H and chunked by rows";
  if (getNSlices() > 1 && getRowChunk() > 0)
    return emitOpError() << "cannot be sliced along N and chunked by rows";
  Block &body = getBody().front();
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError() << "body must end with tpu.Yield";
  if (yield.getNumOperands() != getNumResults())
    return emitOpError() << "yields " << yield.getNumOperands()
                         << " values but has " << getNumResults()
                         << " results";
  for (auto [i, v] : llvm::enumerate(yield.getOperands())) {
    if (v.getType() != getResult(i).getType())
      return emitOpError() << "result #" << i << " has type "
                           << getResult(i).getType()
                           << " but the body yields " << v.getType();
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != &body)
      return emitOpError() << "yields value #" << i
                           << " not computed in the group";
    // Each slice of the batch stores its share of every result.
    auto shape = cast<ShapedType>(v.getType()).getShape();
    if (getNSlices() > 1 &&
        (shape.empty() || shape[0] % getNSlices() != 0))
      return emitOpError() << "result #" << i << " of type " << v.getType()
                           << " has no batch that " << getNSlices()
                           << " slices along N divide";
  }
  if (body.without_terminator().empty())
    return emitOpError() << "has no ops";
  auto *members = getContext()
                      ->getLoadedDialect<TpuDialect>()
                      ->getRegisteredInterface<GroupMemberInterface>();
  for (Operation &op : body.without_terminator()) {
    if (isa<GroupOp>(op))
      return op.emitOpError() << "cannot be nested in another tpu.Group";
    if (!isa<TpuDialect>(op.getDialect()) || op.getNumResults() != 1)
      return op.emitOpError()
             << "cannot be in a tpu.Group: members are Tpu ops with one "
                "result";
    if (members && !members->canRunInGroup(&op))
      return op.emitOpError() << "cannot run inside a layer group";
    // Values used after the group leave it through the yield.
    for (Operation *user : op.getResult(0).getUsers())
      if (user->getBlock() != &body)
        return op.emitOpError()
               << "is used outside its tpu.Group without being yielded";
  }
  if (getTileEpilogue())
    return verifyTileEpilogue();
  return success();
}

/// A tile epilogue group is a tpu.MatMul or tpu.Conv (the head) and a chain
/// of ops, each reading the previous one's result (its only use) as its
/// first operand. A tpu.Conv head may follow a tpu.Conv prologue whose
/// result it reads (its only use) as its input; the chain is then optional.
LogicalResult GroupOp::verifyTileEpilogue() {
  if (getNSlices() > 1 || getHSlices() > 1 || getRowChunk() > 0)
    return emitOpError() << "a tile epilogue group is neither sliced nor "
                            "chunked";
  SmallVector<Operation *> ops = getMembers();
  auto onlyUse = [](Operation *user, Operation *def) {
    Value prev = def->getResult(0);
    return user->getNumOperands() != 0 && user->getOperand(0) == prev &&
           prev.hasOneUse();
  };
  const size_t head = ops.size() >= 2 && isa<ConvOp>(ops[0]) &&
                              isa<ConvOp>(ops[1]) && onlyUse(ops[1], ops[0])
                          ? 1
                          : 0;
  if (ops.size() < 2 || !isa<MatMulOp, ConvOp>(ops[head]))
    return emitOpError() << "a tile epilogue group starts with a tpu.MatMul "
                            "or tpu.Conv followed by at least one op, or a "
                            "tpu.Conv prologue and the tpu.Conv reading it";
  for (size_t k = head + 1; k < ops.size(); ++k)
    if (!onlyUse(ops[k], ops[k - 1]))
      return ops[k]->emitOpError()
             << "in a tile epilogue group must be the only user of the "
                "previous member's result, as its first operand";
  return success();
}

} // namespace tpu
