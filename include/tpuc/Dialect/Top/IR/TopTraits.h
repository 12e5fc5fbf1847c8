#ifndef TPUC_DIALECT_TOP_IR_TOPTRAITS_H
#define TPUC_DIALECT_TOP_IR_TOPTRAITS_H
#include "mlir/IR/OpDefinition.h"

namespace top {
/// When every operand and result of `op` is ranked (or none), its result
/// shapes must be the ones its ShapeInterface infers.
mlir::LogicalResult verifyShapeConsistent(mlir::Operation *op);

namespace OpTrait {
/// Makes a fully ranked Top op self-consistent, so that passes and the
/// interpreter can trust its types. It hooks the region-verification stage
/// only because that stage runs after the op's own verifier: shape inference
/// may rely on the attributes the verifier checked.
template <typename ConcreteType>
class ShapeConsistent
    : public mlir::OpTrait::TraitBase<ConcreteType, ShapeConsistent> {
public:
  static mlir::LogicalResult verifyRegionTrait(mlir::Operation *op) {
    return verifyShapeConsistent(op);
  }
};
} // namespace OpTrait
} // namespace top
#endif
