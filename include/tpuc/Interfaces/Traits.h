#ifndef TPUC_INTERFACES_TRAITS_H
#define TPUC_INTERFACES_TRAITS_H
#include "mlir/IR/OpDefinition.h"

namespace tpuc {
/// Fails when `op` carries a discardable attribute without a dialect prefix:
/// in Top and Tpu that is a misspelled attribute (e.g. `relu_limt`) that the
/// op would otherwise silently ignore.
mlir::LogicalResult verifyKnownAttributes(mlir::Operation *op);

namespace traits {
template <typename ConcreteType>
class KnownAttributes
    : public mlir::OpTrait::TraitBase<ConcreteType, KnownAttributes> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyKnownAttributes(op);
  }
};
} // namespace traits
} // namespace tpuc
#endif
