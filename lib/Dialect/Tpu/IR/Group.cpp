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

/// A tile epilogue group is a tpu.MatMul or tpu.Conv and a chain of ops,
/// each reading the previous one's result (its only use) as its first
/// operand.
LogicalResult GroupOp::verifyTileEpilogue() {
  if (getNSlices() > 1 || getHSlices() > 1 || getRowChunk() > 0)
    return emitOpError() << "a tile epilogue group is neither sliced nor "
                            "chunked";
  SmallVector<Operation *> ops = getMembers();
  if (ops.size() < 2 || !isa<MatMulOp, ConvOp>(ops.front()))
    return emitOpError() << "a tile epilogue group starts with a tpu.MatMul "
                            "or tpu.Conv followed by at least one op";
  for (size_t k = 1; k < ops.size(); ++k) {
    Value prev = ops[k - 1]->getResult(0);
    if (ops[k]->getNumOperands() == 0 || ops[k]->getOperand(0) != prev ||
        !prev.hasOneUse())
      return ops[k]->emitOpError()
             << "in a tile epilogue group must be the only user of the "
                "previous member's result, as its first operand";
  }
  return success();
}

} // namespace tpu
