#ifndef TPUC_DIALECT_TPU_IR_TPUDIALECT_H
#define TPUC_DIALECT_TPU_IR_TPUDIALECT_H
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "tpuc/Interfaces/InferenceInterface.h"
#include "tpuc/Interfaces/Traits.h"

#include "tpuc/Dialect/Tpu/IR/TpuOpsDialect.h.inc"
#include "tpuc/Dialect/Tpu/IR/TpuEnums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "tpuc/Dialect/Tpu/IR/TpuAttrs.h.inc"

#define GET_OP_CLASSES
#include "tpuc/Dialect/Tpu/IR/TpuOps.h.inc"

namespace tpu {

/// Which ops may run inside a tpu.Group. The backend, which knows each op's
/// local codegen, registers it on the dialect; without it the verifier of
/// tpu.Group checks the group's structure only.
class GroupMemberInterface
    : public mlir::DialectInterface::Base<GroupMemberInterface> {
public:
  GroupMemberInterface(mlir::Dialect *dialect) : Base(dialect) {}
  virtual bool canRunInGroup(mlir::Operation *op) const = 0;
};

/// The value a use outside a group sees: the body value a tpu.Group result
/// yields, else `v` itself.
mlir::Value lookThroughGroup(mlir::Value v);

} // namespace tpu
#endif
